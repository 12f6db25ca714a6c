//! Signals one task of the program sent another, from its kill, tkill, tgkill and sigqueue
//! calls: kept as tells (`Footer::signals`), which `trace::anchor::ends` follows.

use super::{Call, Done, State};
use crate::trace::recording::Wake;

impl State {
    /// A signal sent (kill, tkill, tgkill, sigqueue), kept as a tell at the call's end: to a
    /// process or a thread by its id — not to a process group or every process (no one task),
    /// not to the sender's own thread or process (a fault's, SIGPIPE, `raise`), not SIGCHLD
    /// nor 0 (a look for the process), and only where it was sent.
    pub(super) fn signal(&mut self, d: &Done) {
        let (target, sig, process) = match d.call {
            Call::Kill | Call::SigQueue => (d.a[0] as i32, d.a[1] as i32, true),
            Call::Tkill => (d.a[0] as i32, d.a[1] as i32, false),
            _ => (d.a[1] as i32, d.a[2] as i32, false),
        };
        let own = target as u32 == d.tid || (process && target as u32 == d.pid);
        if d.ret != 0 || target <= 0 || sig == 0 || sig == libc::SIGCHLD || own {
            return;
        }
        self.out.signals.push(Wake {
            t: (d.t + d.dur).saturating_sub(self.t0),
            tid: target as u32,
            by: d.tid,
            asleep_ns: 0,
        });
    }

    /// Once the walk knows the program's tasks: only the signals to them (one to another
    /// program tells the trace nothing), in time order.
    pub(super) fn signals_to_known_tasks(&mut self) {
        let known: std::collections::HashSet<u32> =
            self.out.threads.iter().map(|t| t.tid).collect();
        self.out.signals.retain(|w| known.contains(&w.tid));
        self.out.signals.sort_by_key(|w| w.t);
    }
}
