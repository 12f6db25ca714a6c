//! unlink_each_loop: before each loop after the first, once nothing is in flight, the job's
//! files are removed and created afresh (`files::renew`), the engine's descriptors pointed at
//! the new files. A loop is the workload's bytes divided by `loops`: the boundary is found
//! from what the workload has left, one comparison per I/O for such a job only.

use crate::platform::fd::OwnedFd;

use super::{Halt, Loop};
use crate::engine::Engine;
use crate::plan::JobSpec;
use crate::plan::workload::Workload;
use crate::stats::JobError;

pub(super) struct Renew {
    /// Bytes per loop.
    per_loop: u64,
    /// The workload's bytes left when the next loop starts (0: no loop after this one).
    next_at: u64,
    /// What the workload had left at the last draw (a jump up: a new workload, the ramp's
    /// or the measured one after it, whose loops start over).
    last: u64,
    /// The files made so far, the newest per file, for the run to take over.
    pub(super) made: Vec<(usize, OwnedFd)>,
}

impl Renew {
    /// For a job with unlink_each_loop (size-bounded, loops > 1: resolution sees to it).
    pub(super) fn for_job(job: &JobSpec, wl: &Workload) -> Option<Box<Renew>> {
        let total = wl.remaining().filter(|_| job.unlink_each_loop)?;
        let per_loop = total / u64::from(job.timing.loops.max(1));
        (per_loop > 0).then(|| {
            Box::new(Renew {
                per_loop,
                next_at: total - per_loop,
                last: total,
                made: Vec::new(),
            })
        })
    }

    /// Whether the next I/O, with `remaining` bytes left before it, starts a new loop.
    #[inline]
    pub(super) fn crossed(&mut self, remaining: Option<u64>) -> bool {
        let Some(r) = remaining else { return false };
        if r > self.last {
            self.next_at = r.saturating_sub(self.per_loop);
        }
        self.last = r;
        if self.next_at == 0 || r > self.next_at {
            return false;
        }
        self.next_at = self.next_at.saturating_sub(self.per_loop);
        true
    }
}

impl<E: Engine> Loop<'_, '_, E> {
    /// Renews every file of the job (nothing is in flight); an error ends the job.
    #[cold]
    pub(super) fn renew_files(&mut self) {
        self.renew_due = false;
        // Stopping (its time is up, or the run's): no loop follows to write new files.
        if self.halt != Halt::No {
            return;
        }
        let Some(r) = self.renew.as_deref_mut() else {
            return;
        };
        for (f, path) in self.w.paths.iter().enumerate() {
            let made = match self.engine.descriptor(f) {
                Some(fd) => crate::files::renew::recreate(path, fd),
                None => Err(std::io::Error::other(
                    "the engine holds no plain descriptor to point at a new file",
                )),
            };
            match made {
                Ok((fd, _)) => {
                    r.made.retain(|(i, _)| *i != f);
                    r.made.push((f, fd));
                    self.flush.dirty[f] = None;
                }
                Err(e) => {
                    self.error = Some(JobError {
                        file: Some(path.clone()),
                        offset: None,
                        direction: Some("unlink_each_loop".into()),
                        errno: crate::engine::errno(&e),
                        message: format!("cannot remove and create the file afresh: {e}"),
                    });
                    self.halt = Halt::Abort;
                    self.w.stop_others();
                    return;
                }
            }
        }
    }
}
