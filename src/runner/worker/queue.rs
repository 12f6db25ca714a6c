//! The queued engines' side of the loop: handing the queued I/O to the kernel, reaping
//! completions as fio does, and the time at each depth (what was in the kernel, including
//! what a submission did itself, as buffered native AIO does).

use std::io;

use crate::engine::{Completion, Engine};

use super::{Halt, Loop, Next};

impl<E: Engine> Loop<'_, '_, E> {
    /// Takes whatever completions are ready, without waiting (queued engines, while paced).
    pub(super) fn poll(&mut self) {
        let mut cq = std::mem::take(&mut self.cq);
        if let Err(e) = self.engine.reap(0, self.in_kernel, &mut cq) {
            self.fail_ring(e);
        } else if !cq.is_empty() {
            self.take_completions(&mut cq);
        }
        self.cq = cq;
    }

    /// Accounts reaped completions (and queues again what must go again).
    pub(super) fn take_completions(&mut self, cq: &mut Vec<Completion>) {
        let now = self.clock.now();
        self.account_depth(now);
        if self.tl.measuring {
            self.stats.depth.reaped(cq.len());
        }
        self.in_kernel -= cq.len();
        for c in cq.drain(..) {
            let s = self.st[c.slot as usize];
            let res = if c.res < 0 {
                Err(io::Error::from_raw_os_error(-c.res))
            } else {
                Ok(c.res as usize)
            };
            if let Next::Again = self.complete(c.slot, res, s.t_sub, now) {
                self.issue(c.slot);
            }
        }
        if now >= self.tl.event {
            self.housekeeping(now);
        }
    }

    pub(super) fn commit(&mut self) {
        let before = if E::COMPLETES_IN_SUBMIT {
            Some(self.clock.now())
        } else {
            None
        };
        if let Err(e) = self.engine.commit() {
            self.fail_ring(e);
            return;
        }
        let now = self.clock.now();
        let n = self.pending.len();
        match before {
            // The submission may have done the I/O (native AIO on a buffered file): its time
            // counts at the depth it submitted, not the depth before it.
            Some(before) => {
                self.account_depth(before);
                self.in_kernel += n;
                self.account_depth(now);
            }
            None => {
                self.account_depth(now);
                self.in_kernel += n;
            }
        }
        for &slot in &self.pending {
            self.st[slot as usize].t_sub = now;
        }
        if self.tl.measuring {
            self.stats.depth.submitted(self.in_kernel, n);
        }
        self.pending.clear();
        if E::COMPLETES_IN_SUBMIT {
            // What the kernel finished inside the submission is reaped now, so the achieved
            // depth is the kernel's (1 for buffered native AIO), not the queue's.
            let mut cq = std::mem::take(&mut self.cq);
            self.engine.ready(&mut cq);
            if !cq.is_empty() {
                self.take_completions(&mut cq);
            }
            self.cq = cq;
        }
    }

    /// Adds the time since the last change at the current depth (queued engines).
    #[inline]
    pub(super) fn account_depth(&mut self, now: u64) {
        if self.tl.measuring {
            let ns = self.clock.ns(now.saturating_sub(self.tl.depth_since));
            self.stats.depth.add(self.in_kernel, ns);
        }
        self.tl.depth_since = now;
    }

    /// Reaps completions as fio does: only when no more can be queued (queue full, or as full
    /// as the latency target's depth allows, work done, stopping, a flush or a renewal due),
    /// at least one then, and on until `iodepth_low` is reached.
    pub(super) fn reap(&mut self) {
        let job = self.w.job;
        let mut cq = std::mem::take(&mut self.cq);
        let in_flight = self.slab.len() - self.free.len();
        let full = self.free.is_empty()
            || self.lat.as_ref().is_some_and(|s| s.holds(in_flight))
            || self.exhausted
            || self.halt != Halt::No
            || self.paused();
        if !full {
            self.cq = cq;
            return;
        }
        // iodepth_batch_complete_min=0: poll the completion queue without sleeping.
        let wait = job.queue.complete_min > 0;
        loop {
            let min = if wait {
                (job.queue.complete_min as usize).clamp(1, self.in_kernel)
            } else {
                0
            };
            if let Err(e) = self
                .engine
                .reap(min, job.queue.complete_max as usize, &mut cq)
            {
                self.fail_ring(e);
                break;
            }
            if cq.is_empty() {
                continue;
            }
            self.take_completions(&mut cq);
            if self.in_kernel <= job.queue.low as usize || self.in_kernel == 0 {
                break;
            }
        }
        self.cq = cq;
    }
}
