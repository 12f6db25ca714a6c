//! What the decoder's tests of native AIO and io_uring share: a process, its calls, and a
//! decode of them with its data file open.

use super::super::aio::Seen;
use super::super::perf::Raw;
use super::{Decoded, Inherited, decode};

/// The recorded process (and its main thread).
pub(super) const PID: u32 = 100;

/// System call `nr` of process PID's main thread, from `t` for `dur` ns.
pub(super) fn syscall(nr: i64, t: u64, dur: u64, args: [u64; 6], ret: i64) -> [Raw; 2] {
    [
        Raw::Enter {
            t,
            pid: PID,
            tid: PID,
            nr: nr as i32,
            args,
        },
        Raw::Exit {
            t: t + dur,
            tid: PID,
            nr: nr as i32,
            ret,
        },
    ]
}

/// Process PID's descriptor 5 at its start: /data/f (1 MiB), opened with `flags`.
pub(super) fn data_file(flags: i32) -> [Inherited; 1] {
    [Inherited {
        fd: 5,
        path: b"/data/f".to_vec(),
        kind: super::FileKind::Regular,
        size: 1 << 20,
        flags: flags as u64,
        pos: 0,
    }]
}

/// Decodes `raw` and the probes' records `aio` of process PID, whose descriptor 5 is
/// /data/f, opened O_DIRECT.
pub(super) fn decoded(raw: Vec<Raw>, aio: Vec<Seen>) -> Decoded {
    let inherited = data_file(libc::O_DIRECT);
    decode(
        raw,
        (Vec::new(), aio),
        PID,
        &inherited,
        (0, b"/".to_vec()),
        None,
    )
}
