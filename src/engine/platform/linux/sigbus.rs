//! SIGBUS from a mapped file, turned into an I/O error. A page of a file mapping that cannot
//! be read (an I/O error under it, or the file truncated under the mapping) raises SIGBUS on
//! the thread that touched it, which would kill the process: no report, no files removed. The
//! mmap engine registers each mapping here; the handler, for an address in one, puts a page
//! of zeros over the faulting page (mmap MAP_FIXED, which is async-signal-safe), marks the
//! mapping faulted and returns, so the copy completes and the engine reports the I/O as
//! failed (EIO) and drops the mapping. An address in no registered mapping is not iogauge's
//! to handle: the handler puts the previous action back and returns, and the fault repeats
//! under it.

use std::sync::Once;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Mappings that can be registered at once (jobs × files mapped at a time).
const SLOTS: usize = 4096;

static STARTS: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];
static ENDS: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];
static FAULTED: [AtomicBool; SLOTS] = [const { AtomicBool::new(false) }; SLOTS];
static PAGE: AtomicUsize = AtomicUsize::new(4096);

/// The action SIGBUS had before iogauge's (a sigaction is plain data).
struct Previous(libc::sigaction);
// SAFETY: the sigaction is written once, before the handler can run, and only read after.
unsafe impl Sync for Previous {}
static PREVIOUS: OnceLock<Previous> = OnceLock::new();

/// A registered mapping: its slot, to ask whether it faulted and to unregister it.
#[derive(Debug)]
pub struct Registered(usize);

/// Registers the mapping `[start, start + len)`, installing the handler on first use; None when
/// every slot is taken (the mapping then goes unprotected: the caller refuses it).
pub fn register(start: usize, len: usize) -> Option<Registered> {
    install();
    for i in 0..SLOTS {
        if STARTS[i]
            .compare_exchange(0, start, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            FAULTED[i].store(false, Ordering::Release);
            ENDS[i].store(start + len, Ordering::Release);
            return Some(Registered(i));
        }
    }
    None
}

impl Registered {
    /// Whether a page of the mapping raised SIGBUS since the last ask.
    pub fn take_fault(&self) -> bool {
        FAULTED[self.0].swap(false, Ordering::AcqRel)
    }
}

impl Drop for Registered {
    /// Unregisters (the caller unmaps after: a range unmapped while still registered could be
    /// reused by another mapping before its slot is cleared).
    fn drop(&mut self) {
        ENDS[self.0].store(0, Ordering::Release);
        STARTS[self.0].store(0, Ordering::Release);
    }
}

fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: sysconf is a plain query.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if page > 0 {
            PAGE.store(page as usize, Ordering::Relaxed);
        }
        // SAFETY: a zeroed sigaction is a valid value to fill in; the handler has the
        // SA_SIGINFO signature, and the old action is stored before any fault can reach it
        // (no mapping is registered until this returns).
        unsafe {
            let mut act: libc::sigaction = std::mem::zeroed();
            act.sa_sigaction = on_sigbus as *const () as usize;
            act.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut act.sa_mask);
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut old) == 0 {
                let _ = PREVIOUS.set(Previous(old));
                libc::sigaction(libc::SIGBUS, &act, std::ptr::null_mut());
            }
        }
    });
}

extern "C" fn on_sigbus(_: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // SAFETY: the kernel hands a valid siginfo for SIGBUS, with the faulting address.
    let addr = unsafe { (*info).si_addr() } as usize;
    for i in 0..SLOTS {
        let start = STARTS[i].load(Ordering::Acquire);
        if start == 0 || addr < start || addr >= ENDS[i].load(Ordering::Acquire) {
            continue;
        }
        let page = addr & !(PAGE.load(Ordering::Relaxed) - 1);
        // SAFETY: the page lies in a mapping the engine made and registered and still
        // holds (it unregisters before it unmaps); replacing it with private zeros only
        // changes what that mapping's bytes read as, and the engine drops the mapping.
        let r = unsafe {
            libc::mmap(
                page as *mut libc::c_void,
                PAGE.load(Ordering::Relaxed),
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_FIXED | libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if r != libc::MAP_FAILED {
            FAULTED[i].store(true, Ordering::Release);
            return;
        }
    }
    // Not a registered mapping's: the previous action, and the fault repeats under it.
    if let Some(Previous(old)) = PREVIOUS.get() {
        // SAFETY: sigaction is async-signal-safe; `old` is the action read at install.
        unsafe { libc::sigaction(libc::SIGBUS, old, std::ptr::null_mut()) };
    }
}
