//! Signals: a clean stop (Ctrl-C, SIGTERM, SIGHUP, SIGQUIT), the status line on SIGUSR1, and
//! the exit code a stopped run earns.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use iogauge::files::ownership;

/// Ctrl-C, SIGTERM, SIGHUP (a dropped ssh session) and SIGQUIT. Until a run begins to prepare
/// its files there is nothing to clean up, and any of them ends iogauge at once with 128+n;
/// from then on the first one sets the interrupt flag (the run stops, reports what it
/// measured and removes what it created, then exits with 128+n) and a second exits at once,
/// removing first the files the run created (`ownership::watch`). SIGUSR1 prints the running
/// group's figures so far to stderr and the run goes on (fio's SIGUSR1).
pub(crate) struct Signals {
    /// Set by the first signal during a run.
    pub(crate) interrupt: Arc<AtomicBool>,
    /// Set by a signal during a run, and by nothing else (`interrupt` is also how a
    /// scale-out run stops a rank for the others).
    pub(crate) signalled: Arc<AtomicBool>,
    /// No run has begun: a signal exits at once.
    pub(crate) idle: Arc<AtomicBool>,
    /// The number of the last stopping signal (0: none).
    pub(crate) which: Arc<std::sync::atomic::AtomicUsize>,
    /// SIGUSR1 came: print the figures so far.
    pub(crate) status: Arc<AtomicBool>,
}

/// The signals that stop a run cleanly.
pub(crate) const STOPPING: [i32; 4] = [
    signal_hook::consts::SIGINT,
    signal_hook::consts::SIGTERM,
    signal_hook::consts::SIGHUP,
    signal_hook::consts::SIGQUIT,
];

pub(crate) fn signals() -> &'static Signals {
    static SIGNALS: OnceLock<Signals> = OnceLock::new();
    SIGNALS.get_or_init(|| {
        let s = Signals {
            interrupt: Arc::new(AtomicBool::new(false)),
            signalled: Arc::new(AtomicBool::new(false)),
            idle: Arc::new(AtomicBool::new(true)),
            which: Arc::new(std::sync::atomic::AtomicUsize::new(0)),
            status: Arc::new(AtomicBool::new(false)),
        };
        for sig in STOPPING {
            // Exit at once while idle; otherwise interrupt, in the handler itself.
            let _ = signal_hook::flag::register_conditional_shutdown(
                sig,
                128 + sig,
                Arc::clone(&s.idle),
            );
            let _ = signal_hook::flag::register_usize(sig, Arc::clone(&s.which), sig as usize);
            let _ = signal_hook::flag::register(sig, Arc::clone(&s.interrupt));
            let _ = signal_hook::flag::register(sig, Arc::clone(&s.signalled));
        }
        let _ = signal_hook::flag::register(signal_hook::consts::SIGUSR1, Arc::clone(&s.status));
        // Ctrl-C at mpirun (OpenMPI): each rank gets SIGCONT at once, SIGTERM a second later
        // and SIGKILL a second after that. A rank is in its own process group, so no terminal
        // stops and resumes it, and mpirun forwards no job control unless told to: under a
        // launch, SIGCONT is the first word of that sequence, and stopping there leaves two
        // seconds, not one, to report and remove what the run created.
        #[cfg(feature = "mpi")]
        if iogauge::studies::scaleout::launched(&|k| std::env::var(k).ok())
            .is_some_and(|l| l.size > 1)
            && std::env::var("OMPI_MCA_orte_forward_job_control").is_err()
        {
            let _ =
                signal_hook::flag::register(signal_hook::consts::SIGCONT, Arc::clone(&s.interrupt));
            let _ =
                signal_hook::flag::register(signal_hook::consts::SIGCONT, Arc::clone(&s.signalled));
        }
        // A second signal during a run: remove what the run created, then exit at once (the
        // run's own clean-up may be what is stuck). Signals that arrive together may count
        // once; then the run's clean-up handles them.
        if let Ok(mut it) = signal_hook::iterator::Signals::new(STOPPING) {
            let idle = Arc::clone(&s.idle);
            let _ = std::thread::Builder::new()
                .name("iogauge-signals".into())
                .spawn(move || {
                    let mut seen = 0;
                    for sig in it.forever() {
                        if idle.load(Ordering::SeqCst) {
                            continue;
                        }
                        seen += 1;
                        if seen >= 2 {
                            ownership::remove_watched();
                            signal_hook::low_level::exit(128 + sig);
                        }
                    }
                });
        }
        s
    })
}

/// The exit code of a run that was stopped: 128 + the signal that stopped it (130 for Ctrl-C,
/// 129 for SIGHUP, 143 for SIGTERM), 141 when its output pipe closed, 130 when another rank
/// of a scale-out run stopped it.
pub(crate) fn interrupted_code() -> u8 {
    if iogauge::out::pipe_closed() {
        return 141;
    }
    match signals().which.load(Ordering::SeqCst) {
        0 => 130,
        n => (128 + n).min(255) as u8,
    }
}

/// The interrupt flag of the run about to begin: signals stop it from now on instead of
/// ending iogauge.
pub(crate) fn interrupt_flag() -> Arc<AtomicBool> {
    let s = signals();
    s.idle.store(false, Ordering::SeqCst);
    Arc::clone(&s.interrupt)
}

/// Whether Ctrl-C or SIGTERM came during a run.
#[cfg(feature = "mpi")]
pub(crate) fn signalled() -> bool {
    signals().signalled.load(Ordering::SeqCst)
}
