//! The loop against mock engines: short transfers are resubmitted for exactly the rest,
//! synchronous and queued alike, and the counts stay exact.

use std::sync::{Arc, Mutex};

use super::*;
use crate::engine::Completion;
use crate::plan::{Origin, Section};

/// Every piece an engine moved: (offset, bytes).
type Pieces = Arc<Mutex<Vec<(u64, usize)>>>;

/// Moves at most `chunk` bytes per call, completing inline.
struct ShortSync {
    chunk: usize,
    pieces: Pieces,
}

impl Engine for ShortSync {
    fn queue(&mut self, _: u32, u: &mut IoUnit) -> Queued {
        let n = (u.len() - u.done).min(self.chunk);
        self.pieces.lock().unwrap().push((u.next_offset(), n));
        Queued::Done(Ok(n))
    }
    fn flush(&mut self, _: usize, _: crate::engine::FlushCall) -> io::Result<()> {
        Ok(())
    }
}

/// Queues; completes at most `chunk` bytes of each I/O, newest first.
struct ShortQueued {
    chunk: usize,
    pieces: Pieces,
    queued: Vec<(u32, usize)>,
    in_kernel: Vec<(u32, usize)>,
    max_in_kernel: Arc<Mutex<usize>>,
}

impl Engine for ShortQueued {
    const QUEUED: bool = true;
    fn queue(&mut self, slot: u32, u: &mut IoUnit) -> Queued {
        let n = (u.len() - u.done).min(self.chunk);
        self.pieces.lock().unwrap().push((u.next_offset(), n));
        self.queued.push((slot, n));
        Queued::Queued
    }
    fn commit(&mut self) -> io::Result<()> {
        self.in_kernel.append(&mut self.queued);
        let mut m = self.max_in_kernel.lock().unwrap();
        *m = (*m).max(self.in_kernel.len());
        Ok(())
    }
    fn reap(&mut self, min: usize, max: usize, out: &mut Vec<Completion>) -> io::Result<()> {
        assert!(
            min <= self.in_kernel.len(),
            "waits for more than is in flight"
        );
        for _ in 0..self.in_kernel.len().min(max) {
            let (slot, n) = self.in_kernel.pop().unwrap();
            out.push(Completion {
                slot,
                res: n as i32,
            });
        }
        Ok(())
    }
    fn flush(&mut self, _: usize, _: crate::engine::FlushCall) -> io::Result<()> {
        Ok(())
    }
}

fn job(pairs: &[(&str, &str)]) -> JobSpec {
    let mut s = Section::new("t");
    s.set("ioengine", "null", Origin::Cli);
    for (k, v) in pairs {
        s.set(k, v, Origin::Cli);
    }
    let mut j = crate::plan::resolve(&[s], false).unwrap().groups[0].jobs[0].clone();
    // As io_uring would resolve them (the null engine is synchronous).
    j.queue.depth = 8;
    (
        j.queue.batch_submit,
        j.queue.complete_min,
        j.queue.complete_max,
        j.queue.low,
    ) = (1, 1, 1, 8);
    j
}

fn run<E: Engine>(job: &JobSpec, engine: E) -> JobResult {
    let barrier = Barrier::new(1);
    let stop = AtomicBool::new(false);
    let progress = JobProgress::default();
    let finished = [AtomicBool::new(false)];
    let exits = [AtomicBool::new(false)];
    let w = Worker {
        handed: Vec::new(),
        job,
        paths: vec![],
        barrier: &barrier,
        stop: &stop,
        progress: &progress,
        clock: Clock::new(),
        finished: &finished,
        index: 0,
        wait_on: Vec::new(),
        peers: Vec::new(),
        exits: &exits,
        segment: 0,
        run_id: 1,
        job_id: 0,
        shared: Vec::new(),
        verify_barrier: None,
        verify_threads: 1,
        flow: None,
        steady: None,
        io_log_cap: crate::stats::MIN_IO_SAMPLES,
    };
    run_loop(w, engine)
}

/// The pieces tile [0, size) with no gap and no overlap.
fn assert_tiles(pieces: &Pieces, size: u64) {
    let mut p = pieces.lock().unwrap().clone();
    p.sort();
    let mut at = 0;
    for (off, n) in p {
        assert_eq!(off, at, "gap or overlap at {at}");
        at += n as u64;
    }
    assert_eq!(at, size);
}

#[test]
fn short_sync_transfers_are_resubmitted_for_the_rest() {
    let j = job(&[("rw", "randwrite"), ("bs", "64k"), ("size", "1m")]);
    let pieces = Pieces::default();
    // 64 KiB in calls of at most 5000 bytes: 14 calls per I/O, the last partial.
    let r = run(
        &j,
        ShortSync {
            chunk: 5000,
            pieces: pieces.clone(),
        },
    );
    assert!(r.error.is_none());
    let w = &r.stats.dirs[1];
    assert_eq!((w.ios, w.bytes, w.lat.count()), (16, 1 << 20, 16));
    assert_eq!(pieces.lock().unwrap().len(), 16 * 14);
    assert_tiles(&pieces, 1 << 20);
}

#[test]
fn short_queued_transfers_are_resubmitted_and_depth_is_respected() {
    let j = job(&[("rw", "randread"), ("bs", "16k"), ("size", "1m")]);
    let (pieces, max) = (Pieces::default(), Arc::new(Mutex::new(0)));
    let e = ShortQueued {
        chunk: 3000,
        pieces: pieces.clone(),
        queued: Vec::new(),
        in_kernel: Vec::new(),
        max_in_kernel: max.clone(),
    };
    let r = run(&j, e);
    assert!(r.error.is_none());
    let d = &r.stats.dirs[0];
    assert_eq!((d.ios, d.bytes), (64, 1 << 20));
    assert_eq!((d.slat.count(), d.clat.count()), (64, 64));
    assert_eq!(pieces.lock().unwrap().len(), 64 * 6);
    assert_tiles(&pieces, 1 << 20);
    assert_eq!(
        *max.lock().unwrap(),
        8,
        "iodepth=8 kept full, never exceeded"
    );
    // Every update pair reads, then writes back, the same block.
    let j = job(&[("rw", "update"), ("bs", "4k"), ("size", "256k")]);
    let pieces = Pieces::default();
    let e = ShortQueued {
        chunk: 4096,
        pieces: pieces.clone(),
        queued: Vec::new(),
        in_kernel: Vec::new(),
        max_in_kernel: max,
    };
    let r = run(&j, e);
    let [rd, wr, _] = &r.stats.dirs;
    assert_eq!((rd.ios, wr.ios), (64, 64));
    let mut offsets: Vec<u64> = pieces.lock().unwrap().iter().map(|p| p.0).collect();
    offsets.sort();
    offsets.dedup();
    assert_eq!(offsets.len(), 64, "each block read and written back, once");
}
