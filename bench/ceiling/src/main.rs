//! The ceiling: minimal loops that make the same system calls as a benchmark case and measure
//! nothing but the count, so a tool's figure can be given as a fraction of what the machine
//! does with no tool at all. Each prints `ops_per_s bytes_per_s` on one line.
//!
//! ceiling pread FILE BS SECONDS [direct] [seq]   random aligned preads, one at a time
//!                                        (direct: O_DIRECT, also for uring; seq: in order,
//!                                        wrapping at the end)
//! ceiling uring FILE BS DEPTH SECONDS [fixed] [timed]   random reads through io_uring at
//!                                        DEPTH (fixed: registered file and buffers; timed: a
//!                                        clock read at each submission and completion and a
//!                                        histogram increment, a tool's least per-I/O
//!                                        measurement, to tell its cost from the rest)
//! ceiling memcpy BYTES SECONDS           copy BYTES at a time from a 256 MiB buffer into one
//!                                        reused buffer (a cached read's copy)
//! ceiling offsets SECONDS                draw random offsets only (the null engine's floor)

use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::time::{Duration, Instant};

struct Rng(u64);

impl Rng {
    #[inline]
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

fn aligned(len: usize) -> Vec<u8> {
    // Over-allocate and use a page-aligned window (O_DIRECT-safe, like a tool's buffers).
    vec![0u8; len + 4096]
}

fn window(v: &mut [u8], len: usize) -> &mut [u8] {
    let off = (4096 - (v.as_ptr() as usize % 4096)) % 4096;
    &mut v[off..off + len]
}

fn arg<T: std::str::FromStr>(a: &[String], i: usize, what: &str) -> T {
    a.get(i)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("argument {i}: expected {what}"))
}

fn report(ops: u64, bytes: u64, t: Duration) {
    let s = t.as_secs_f64();
    println!("{:.1} {:.1}", ops as f64 / s, bytes as f64 / s);
}

/// Opens the file to read, with O_DIRECT when `direct` (the device, not the page cache).
fn open(path: &str, direct: bool) -> File {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(if direct { libc::O_DIRECT } else { 0 })
        .open(path)
        .expect("open")
}

fn pread(a: &[String]) {
    let f = open(&a[2], a[5..].iter().any(|s| s == "direct"));
    let seq = a[5..].iter().any(|s| s == "seq");
    let bs: usize = arg(a, 3, "block size");
    let secs: f64 = arg(a, 4, "seconds");
    let blocks = f.metadata().expect("stat").len() / bs as u64;
    let mut buf = aligned(bs);
    let b = window(&mut buf, bs);
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (start, until) = (Instant::now(), Duration::from_secs_f64(secs));
    let mut ops = 0u64;
    let mut at = 0u64;
    loop {
        for _ in 0..256 {
            let off = if seq {
                at = (at + 1) % blocks;
                at * bs as u64
            } else {
                (rng.next() % blocks) * bs as u64
            };
            f.read_exact_at(b, off).expect("pread");
        }
        ops += 256;
        if start.elapsed() >= until {
            break;
        }
    }
    report(ops, ops * bs as u64, start.elapsed());
}

fn uring(a: &[String]) {
    use io_uring::{IoUring, opcode, types};
    let f = open(&a[2], a[6..].iter().any(|s| s == "direct"));
    let bs: usize = arg(a, 3, "block size");
    let depth: usize = arg(a, 4, "depth");
    let secs: f64 = arg(a, 5, "seconds");
    let fixed = a[6..].iter().any(|s| s == "fixed");
    let timed = a[6..].iter().any(|s| s == "timed");
    let t0 = Instant::now();
    let mut issued = vec![0u64; depth];
    // Log-linear buckets (16 per power of two), as a latency histogram has.
    let mut hist = vec![0u64; 64 * 16];
    let blocks = f.metadata().expect("stat").len() / bs as u64;
    // The setup iogauge uses where the kernel has it (task work run at our own waits, one
    // issuer), else a plain ring: the ceiling is the best loop, not a naive one.
    let entries = (depth as u32).next_power_of_two();
    let mut ring = IoUring::builder()
        .setup_coop_taskrun()
        .setup_taskrun_flag()
        .setup_single_issuer()
        .setup_defer_taskrun()
        .build(entries)
        .or_else(|_| IoUring::new(entries))
        .expect("io_uring");
    let mut store: Vec<Vec<u8>> = (0..depth).map(|_| aligned(bs)).collect();
    let bufs: Vec<*mut u8> = store
        .iter_mut()
        .map(|v| window(v, bs).as_mut_ptr())
        .collect();
    if fixed {
        let iov: Vec<libc::iovec> = bufs
            .iter()
            .map(|&p| libc::iovec {
                iov_base: p.cast(),
                iov_len: bs,
            })
            .collect();
        unsafe { ring.submitter().register_buffers(&iov) }.expect("register buffers");
        ring.submitter()
            .register_files(&[f.as_raw_fd()])
            .expect("register files");
    }
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let push = |ring: &mut IoUring, slot: usize, rng: &mut Rng| {
        let off = (rng.next() % blocks) * bs as u64;
        let e = if fixed {
            opcode::ReadFixed::new(types::Fixed(0), bufs[slot], bs as u32, slot as u16)
                .offset(off)
                .build()
        } else {
            opcode::Read::new(types::Fd(f.as_raw_fd()), bufs[slot], bs as u32)
                .offset(off)
                .build()
        };
        unsafe { ring.submission().push(&e.user_data(slot as u64)) }.expect("sq full");
    };
    for slot in 0..depth {
        push(&mut ring, slot, &mut rng);
        if timed {
            issued[slot] = t0.elapsed().as_nanos() as u64;
        }
    }
    let (start, until) = (Instant::now(), Duration::from_secs_f64(secs));
    let mut ops = 0u64;
    let mut done = Vec::with_capacity(depth);
    loop {
        // One completion at a time, its refill submitted at once: the queue never runs below
        // DEPTH - 1. Taking every completion there is and submitting the refills together lets
        // a device's queue drain between submissions: on this VM's disk (4 KiB O_DIRECT,
        // depth 32) that loop made 115 k IOPS where this one makes 165 k, as iogauge (whose
        // default batches are fio's: submit 1, complete 1) does; on tmpfs the two are equal.
        // The wait comes only when no completion is there (with deferred task work, a submit
        // that finds work pending runs it and posts the completions).
        done.clear();
        loop {
            if let Some(c) = ring.completion().next() {
                assert!(c.result() == bs as i32, "read: {}", c.result());
                done.push(c.user_data() as usize);
                break;
            }
            ring.submit_and_wait(1).expect("wait");
        }
        ops += done.len() as u64;
        if timed {
            let now = t0.elapsed().as_nanos() as u64;
            for &slot in &done {
                let ns = now.saturating_sub(issued[slot]).max(1);
                let top = 63 - ns.leading_zeros() as usize;
                let sub = if top >= 4 {
                    (ns >> (top - 4)) as usize & 15
                } else {
                    0
                };
                hist[top * 16 + sub] += 1;
            }
        }
        for &slot in &done {
            push(&mut ring, slot, &mut rng);
            if timed {
                issued[slot] = t0.elapsed().as_nanos() as u64;
            }
        }
        ring.submit().expect("submit");
        if ops % 4096 < done.len() as u64 && start.elapsed() >= until {
            break;
        }
    }
    std::hint::black_box(&hist);
    report(ops, ops * bs as u64, start.elapsed());
    drop(store);
}

fn memcpy(a: &[String]) {
    // What a cached read costs at least: copying the file's pages (256 MiB, far larger than
    // the CPU's caches, as the page cache is) into one reused buffer of the read's size.
    let len: usize = arg(a, 2, "bytes");
    let secs: f64 = arg(a, 3, "seconds");
    let total = (256usize << 20) / len * len;
    let src = vec![1u8; total];
    let mut dst = vec![0u8; len];
    let (start, until) = (Instant::now(), Duration::from_secs_f64(secs));
    let (mut ops, mut at) = (0u64, 0usize);
    while start.elapsed() < until {
        dst.copy_from_slice(std::hint::black_box(&src[at..at + len]));
        std::hint::black_box(&mut dst);
        at = (at + len) % total;
        ops += 1;
    }
    report(ops, ops * len as u64, start.elapsed());
}

fn offsets(a: &[String]) {
    let secs: f64 = arg(a, 2, "seconds");
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (start, until) = (Instant::now(), Duration::from_secs_f64(secs));
    let (mut ops, mut sink) = (0u64, 0u64);
    loop {
        for _ in 0..4096 {
            sink ^= (rng.next() % (1 << 20)) * 4096;
        }
        ops += 4096;
        if start.elapsed() >= until {
            break;
        }
    }
    std::hint::black_box(sink);
    report(ops, ops * 4096, start.elapsed());
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    match a.get(1).map(String::as_str) {
        Some("pread") => pread(&a),
        Some("uring") => uring(&a),
        Some("memcpy") => memcpy(&a),
        Some("offsets") => offsets(&a),
        _ => {
            eprintln!("usage: ceiling pread|uring|memcpy|offsets …");
            std::process::exit(2);
        }
    }
}
