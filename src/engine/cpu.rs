//! fio's `cpuio` engine: no I/O, only CPU. Each "I/O" burns one cycle of the CPU (spinning
//! for `cpuchunks` µs, or with `cpumode=qsort` sorting 256 Ki integers four ways, fio's
//! stress) and then sleeps so the busy share is `cpuload` %: the sleep is the cycle's busy time
//! × (100 − load) / load, measured per cycle as fio adjusts it. Used beside I/O jobs, it
//! shows what storage does when the CPUs are busy with other work.

use std::io;
use std::time::{Duration, Instant};

use super::{Engine, FlushCall, IoUnit, Queued};

/// How a cycle burns the CPU (fio's `cpumode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CpuMode {
    /// Spin for `cpuchunks` µs.
    #[default]
    Noop,
    /// Sort 256 Ki integers ascending, descending, by byte, descending again.
    Qsort,
}

/// The engine's options: the busy share, the spin length and the mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CpuLoad {
    /// Percent of each cycle spent burning, 1 to 100.
    pub load: u32,
    /// µs of spinning per cycle (noop).
    pub chunk_us: u32,
    pub mode: CpuMode,
}

/// fio's qsort stress size: 256 Ki 32-bit integers.
const QSORT_LEN: usize = 256 << 10;

pub struct Cpu {
    cfg: CpuLoad,
    data: Vec<i32>,
}

impl Cpu {
    pub fn new(cfg: CpuLoad) -> Cpu {
        let data = match cfg.mode {
            CpuMode::Noop => Vec::new(),
            CpuMode::Qsort => {
                // fio's multiply-with-carry generator and seeds: the same data to sort.
                let (mut w, mut z) = (521_288_629u32, 362_436_069u32);
                (0..QSORT_LEN)
                    .map(|_| {
                        z = 36969u32.wrapping_mul(z & 65535).wrapping_add(z >> 16);
                        w = 18000u32.wrapping_mul(w & 65535).wrapping_add(w >> 16);
                        (z << 16).wrapping_add(w) as i32
                    })
                    .collect()
            }
        };
        Cpu { cfg, data }
    }

    /// One cycle's burn; returns how long it took.
    fn burn(&mut self) -> Duration {
        let start = Instant::now();
        match self.cfg.mode {
            CpuMode::Noop => {
                let until = start + Duration::from_micros(u64::from(self.cfg.chunk_us));
                while Instant::now() < until {
                    std::hint::spin_loop();
                }
            }
            CpuMode::Qsort => {
                self.data.sort_unstable();
                self.data.sort_unstable_by(|a, b| b.cmp(a));
                // By byte, as fio's third pass reorders the integers' bytes.
                let bytes: &mut [u8] = bytemuck_bytes(&mut self.data);
                bytes.sort_unstable();
                self.data.sort_unstable_by(|a, b| b.cmp(a));
            }
        }
        start.elapsed()
    }
}

/// The integers' bytes, to sort them by byte.
fn bytemuck_bytes(v: &mut [i32]) -> &mut [u8] {
    let len = std::mem::size_of_val(v);
    // SAFETY: i32 has no padding and every byte pattern is a valid u8; the slice borrows `v`
    // for its lifetime, so nothing else can see the integers meanwhile.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), len) }
}

impl Engine for Cpu {
    fn queue(&mut self, _: u32, u: &mut IoUnit) -> Queued {
        let busy = self.burn();
        let load = self.cfg.load.clamp(1, 100);
        let idle = busy * (100 - load) / load;
        if !idle.is_zero() {
            std::thread::sleep(idle);
        }
        Queued::Done(Ok(u.len() - u.done))
    }

    fn flush(&mut self, _: usize, _: FlushCall) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Dir;

    fn cycle(e: &mut Cpu) -> Duration {
        let mut u = IoUnit::new(4096, 1);
        (u.dir, u.file, u.offset, u.done) = (Dir::Read, 0, 0, 0);
        u.set_len(4096);
        let t = Instant::now();
        match e.queue(0, &mut u) {
            Queued::Done(Ok(4096)) => {}
            other => panic!("{other:?}"),
        }
        t.elapsed()
    }

    #[test]
    fn a_cycle_burns_its_chunk_then_sleeps_for_the_load() {
        // 50%: 20 ms of spinning, then about as long asleep.
        let mut e = Cpu::new(CpuLoad {
            load: 50,
            chunk_us: 20_000,
            mode: CpuMode::Noop,
        });
        let cpu0 = crate::stats::CpuUsage::thread();
        let wall = cycle(&mut e);
        let cpu = crate::stats::CpuUsage::thread().since(&cpu0);
        let busy = cpu.user + cpu.system;
        assert!(wall >= Duration::from_millis(39), "{wall:?}");
        // The spin is 20 ms of wall time, as fio's: on a machine the other tests load, the
        // thread gets less CPU than that in it, never more.
        assert!(
            busy >= Duration::from_millis(5) && busy < Duration::from_millis(30),
            "{busy:?}"
        );
    }

    #[test]
    fn qsort_sorts_fio_s_data() {
        let mut e = Cpu::new(CpuLoad {
            load: 100,
            chunk_us: 0,
            mode: CpuMode::Qsort,
        });
        assert_eq!(e.data.len(), QSORT_LEN);
        assert!(e.data.windows(2).any(|w| w[0] != w[1]), "random data");
        cycle(&mut e);
        assert!(
            e.data.windows(2).all(|w| w[0] >= w[1]),
            "the last pass sorts descending"
        );
    }
}
