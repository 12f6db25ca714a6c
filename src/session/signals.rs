//! Signals: a clean stop (Ctrl-C, SIGTERM, SIGHUP, SIGQUIT; a Windows console's control
//! events), the status line on SIGUSR1, and the exit code a stopped run earns. The platform
//! installs the handlers; what a stop means is decided here.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use iogauge::files::ownership;
use iogauge::platform::{StopFlags, StopHandling};

/// Ctrl-C, SIGTERM, SIGHUP (a dropped ssh session), SIGQUIT, and on Windows a console's
/// Ctrl-C, Ctrl-Break, closing or log-off. Until a run begins to prepare its files there is
/// nothing to clean up, and any of them ends iogauge at once with 128+n; from then on the
/// first one sets the interrupt flag (the run stops, reports what it measured and removes what
/// it created, then exits with 128+n) and a second exits at once, removing first the files the
/// run created (`ownership::watch`). SIGUSR1 prints the running group's figures so far to
/// stderr and the run goes on (fio's SIGUSR1).
pub(crate) fn signals() -> &'static StopFlags {
    static SIGNALS: OnceLock<StopFlags> = OnceLock::new();
    SIGNALS.get_or_init(|| {
        let s = StopFlags::default();
        s.idle.store(true, Ordering::SeqCst);
        // Ctrl-C at mpirun (OpenMPI): each rank gets SIGCONT at once, SIGTERM a second later
        // and SIGKILL a second after that. A rank is in its own process group, so no terminal
        // stops and resumes it, and mpirun forwards no job control unless told to: under a
        // launch, SIGCONT is the first word of that sequence, and stopping there leaves two
        // seconds, not one, to report and remove what the run created.
        #[cfg(feature = "mpi")]
        let on_continue = iogauge::studies::scaleout::launched(&|k| std::env::var(k).ok())
            .is_some_and(|l| l.size > 1)
            && std::env::var("OMPI_MCA_orte_forward_job_control").is_err();
        #[cfg(not(feature = "mpi"))]
        let on_continue = false;
        let how = StopHandling {
            on_continue,
            on_second: ownership::remove_watched,
        };
        iogauge::platform::signals::watch(&s, how);
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
