//! The calls read by eBPF into one BPF ring buffer: programs on the `sys_enter` and
//! `sys_exit` raw tracepoints (`rawtp.rs`) keep the watched calls of the recorded program's
//! tasks — the entry's time and arguments wait in the task's map entry — and write each at
//! its exit as one compact record (its times, task, call, arguments and result). Whose tasks
//! they are is a map of thread ids that programs on `sched_process_fork`, `_exec` and
//! `_exit` keep:
//! the program's first task is put in before it runs, armed at its exec (as perf's
//! `enable_on_exec` is), every task a tracked task starts joins it as it is made, and each
//! leaves as it ends. The same programs count every call the tracked tasks make.
//!
//! It is the capture perf's samples of those tracepoints make (`perf.rs`), at a fraction of
//! the cost to the program: a perf sample is written through perf's output path (about
//! 0.8 µs a record on this project's VM), a ring record is one copy into a shared buffer that
//! wakes no one; the reader polls it. perf's events stay for what only they give: the tasks'
//! forks, exits, execs and context switches, and the rings the path probes' records go into.

use std::io;
use std::os::fd::OwnedFd;
use std::sync::{Arc, Mutex};

use super::bpf::{Load, NoProbes, SYS_ENTER, SYS_EXIT};
use super::bpf_asm::*;
use super::btf::Btf;
use super::calls::Call;
use super::perf::Raw;
use super::rawtp::{ENTER_NR, EXIT_RET, Regs, word};
use super::sys::{self, BpfInsn};

const MAP_HASH: u32 = 1;
const MAP_ARRAY: u32 = 2;
const MAP_PERCPU_ARRAY: u32 = 6;
const MAP_RINGBUF: u32 = 27;
/// A hash map's entries allocated as they are added.
const NO_PREALLOC: u32 = 1;
/// bpf_ringbuf_output's flag: no wake-up for this record (the reader polls).
const RB_NO_WAKEUP: i32 = 1;
/// The most tasks of the program alive at once (`IOGAUGE_RECORD_TASKS` sets fewer, for tests):
/// a task started past them is not followed, and counted.
const TASKS: u32 = 1 << 16;
const TASKS_ENV: &str = "IOGAUGE_RECORD_TASKS";
/// The ring's size, bytes: the largest the kernel grants of these, halved while it refuses.
const RING_BYTES: [u32; 5] = [64 << 20, 32 << 20, 16 << 20, 8 << 20, 4 << 20];
/// The counters' keys: every call of the tracked tasks, records the full ring refused,
/// tasks a tracked task started that the full map could not take, and watched calls a task
/// ended in (entered, never exited: exit_group, or a task killed in its call).
const COUNT_CALLS: i32 = 0;
const COUNT_LOST: i32 = 1;
const COUNT_UNTRACKED: i32 = 2;
const COUNT_UNFINISHED: i32 = 3;
const COUNTERS: u32 = 4;

/// A record, one a call, written at its exit: its entry's time (8), pid and tid (8), kind
/// (4), call number (4), the six arguments (48), then its exit's time (8) and result (8).
/// One record rather than one at each end halves the ring's writes, the larger part of what
/// a recorded call costs the program past the tracepoint itself (docs/trace.md).
const KIND_CALL: i32 = 3;
const CALL_BYTES: i32 = 88;
/// A tracked task's value in the map: its state (4: waiting for its exec, or recorded), the
/// watched call it is in (4: its number, or NOT_IN_CALL), and that call's entry time (8)
/// and six arguments (48), kept until its exit writes the record.
const ARMED: i32 = 0;
const RECORDED: i32 = 1;
const TASK_BYTES: u32 = 64;
const IN_CALL: i32 = 4;
const ENTERED: i32 = 8;
const ARGS: i32 = 16;
/// (Positive: the programs compare it as a zero-extended 64-bit word.)
const NOT_IN_CALL: i32 = i32::MAX;

/// The maps the programs share; the programs themselves run with [`super::bpf::PathProbes`]'s.
pub struct CallProbes {
    tasks: OwnedFd,
    counters: OwnedFd,
    /// The ring, mapped once for every recording these programs serve (the calibration's
    /// five and the program's): mapping its 64 MiB twice over, and unmapping it, cost about
    /// 10 ms a recording on this project's VM.
    ring: Arc<Mutex<sys::BpfRing>>,
    /// Possible CPUs: the per-CPU counters' values.
    possible: usize,
}

/// The environment variable that keeps the calls as perf samples (the fallback path, for
/// tests and comparison).
pub const SAMPLES_ENV: &str = "IOGAUGE_RECORD_SAMPLES";

/// What the call programs do after a watched call's record (with R6 the tracepoint's
/// context; at exit, R8 the call's number): at entry, and at exit.
pub(super) type Then<'a> = (&'a dyn Fn(&mut Asm), &'a dyn Fn(&mut Asm));

/// Loads the programs (`load` takes a raw tracepoint and a program), each call program
/// followed by `then`'s code, or says why the calls are read as perf samples instead.
pub(super) fn load(load: &mut Load, regs: &Regs, then: Then) -> Result<CallProbes, NoProbes> {
    if std::env::var_os(SAMPLES_ENV).is_some_and(|v| v == "1") {
        return Err(NoProbes(format!("{SAMPLES_ENV}=1")));
    }
    if !in_first_pid_namespace() {
        return Err(NoProbes(
            "iogauge runs in a PID namespace of its own, and the programs see the kernel's \
             task ids"
                .into(),
        ));
    }
    let e = |what: &'static str| move |err: io::Error| NoProbes(format!("{what}: {err}"));
    // sched_process_fork(parent, child): the child's thread id is read from its task.
    let btf = Btf::kernel()?;
    let child_pid = btf.operand("task_struct", "pid")?;
    if btf.tracepoint_args("sched_process_fork")? != 2 {
        return Err(NoProbes(
            "sched_process_fork does not pass (parent, child) here".into(),
        ));
    }
    let most = std::env::var(TASKS_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<u32>().ok())
        .map_or(TASKS, |n| n.clamp(1, TASKS));
    let tasks = sys::bpf_map_shaped(MAP_HASH, 4, TASK_BYTES, most, NO_PREALLOC)
        .map_err(e("an eBPF map"))?;
    let counters = sys::bpf_map(MAP_PERCPU_ARRAY, 8, COUNTERS).map_err(e("an eBPF map"))?;
    let top = Call::numbers().max().unwrap_or(0).max(0) as i32;
    let watched = sys::bpf_map(MAP_ARRAY, 4, top as u32 + 1).map_err(e("an eBPF map"))?;
    for n in Call::numbers() {
        sys::bpf_map_set(&watched, n as u32, 1).map_err(e("an eBPF map entry"))?;
    }
    let mut ring = Err(io::Error::other("no size tried"));
    for bytes in RING_BYTES {
        ring = sys::bpf_map_shaped(MAP_RINGBUF, 0, 0, bytes, 0).map(|fd| (fd, bytes as usize));
        if ring.is_ok() {
            break;
        }
    }
    let (ring, ring_bytes) = ring.map_err(e("an eBPF ring buffer"))?;
    let mapped = sys::BpfRing::map(&ring, ring_bytes).map_err(e("mapping the eBPF ring buffer"))?;
    let maps = Maps {
        tasks: &tasks,
        counters: &counters,
        watched: &watched,
        ring: &ring,
        top,
    };
    load(SYS_ENTER, call_program(&maps, regs, true, then.0))?;
    load(SYS_EXIT, call_program(&maps, regs, false, then.1))?;
    load(c"sched_process_fork", fork_program(&maps, child_pid))?;
    load(c"sched_process_exec", exec_program(&tasks))?;
    load(c"sched_process_exit", exit_program(&maps))?;
    Ok(CallProbes {
        tasks,
        counters,
        ring: Arc::new(Mutex::new(mapped)),
        possible: possible_cpus(),
    })
}

/// Whether this process sees the kernel's own task ids (the programs' ids, and the tasks
/// map's): its PID namespace is the first one (the kernel's PROC_PID_INIT_INO).
fn in_first_pid_namespace() -> bool {
    const PID_INIT_INO: u64 = 0xEFFF_FFFC;
    std::fs::metadata("/proc/self/ns/pid")
        .is_ok_and(|m| std::os::unix::fs::MetadataExt::ino(&m) == PID_INIT_INO)
}

fn possible_cpus() -> usize {
    std::fs::read_to_string("/sys/devices/system/cpu/possible")
        .ok()
        .and_then(|t| {
            let last = t.trim().rsplit([',', '-']).next()?.parse::<usize>().ok()?;
            Some(last + 1)
        })
        .unwrap_or(1)
}

struct Maps<'a> {
    tasks: &'a OwnedFd,
    counters: &'a OwnedFd,
    watched: &'a OwnedFd,
    ring: &'a OwnedFd,
    /// The highest watched call number.
    top: i32,
}

/// R7 = pid and tid; the thread id at fp-4, its address in R2 (the tasks map's key).
fn this_task(a: &mut Asm) {
    a.call(HELPER_GET_CURRENT_PID_TGID).mov(R7, R0);
    a.st(W::Wd, FP, -4, R7).mov(R2, FP).addi(R2, -4);
}

/// R0 = the task's value in the map; to "out" when it has none.
fn task_entry(a: &mut Asm, tasks: &OwnedFd) {
    this_task(a);
    a.map(R1, tasks)
        .call(HELPER_MAP_LOOKUP)
        .jump_if(JEQ, R0, 0, "out");
}

/// R7 = pid and tid; to "out" unless the task is in the map and recorded.
fn recorded_task(a: &mut Asm, tasks: &OwnedFd) {
    task_entry(a, tasks);
    a.ld(W::Wd, R1, R0, 0).jump_if(JNE, R1, RECORDED, "out");
}

/// Adds one to this CPU's counter `key`.
fn count(a: &mut Asm, counters: &OwnedFd, key: i32, done: &str) {
    a.sti(W::Wd, FP, -8, key).mov(R2, FP).addi(R2, -8);
    a.map(R1, counters)
        .call(HELPER_MAP_LOOKUP)
        .jump_if(JEQ, R0, 0, done);
    a.ld(W::Dw, R1, R0, 0).addi(R1, 1).st(W::Dw, R0, 0, R1);
    a.label(done);
}

/// The program on `sys_enter` (`enter`) or `sys_exit`, for a tracked task. At entry: the
/// call counted, and if it is watched, its number, time and arguments kept in the task's
/// value, then `then`'s code (the path probes'). At exit: if the task is in a watched call
/// of that number, the call's record written to the ring, then `then`'s code.
fn call_program(m: &Maps, regs: &Regs, enter: bool, then: &dyn Fn(&mut Asm)) -> Vec<BpfInsn> {
    let mut a = Asm::default();
    a.mov(R6, R1);
    recorded_task(&mut a, m.tasks);
    a.mov(R9, R0);
    if enter {
        a.ld(W::Dw, R8, R6, ENTER_NR);
        count(&mut a, m.counters, COUNT_CALLS, "counted");
        a.jump_if(JSLT, R8, 0, "out")
            .jump_if(JSGT, R8, m.top, "out");
        a.st(W::Wd, FP, -8, R8).mov(R2, FP).addi(R2, -8);
        a.map(R1, m.watched)
            .call(HELPER_MAP_LOOKUP)
            .jump_if(JEQ, R0, 0, "out");
        a.ld(W::Wd, R1, R0, 0).jump_if(JEQ, R1, 0, "out");
        a.call(HELPER_KTIME_GET_NS).st(W::Dw, R9, ENTERED, R0);
        regs.read_args(&mut a);
        for i in 0..6 {
            regs.arg(&mut a, R1, i);
            a.st(W::Dw, R9, ARGS + 8 * i as i32, R1);
        }
        a.st(W::Wd, R9, IN_CALL, R8);
    } else {
        // The entry this exit ends: a watched call of the same number (else none was seen).
        // The number is read from the registers only for a task in a watched call.
        a.ld(W::Wd, R1, R9, IN_CALL)
            .jump_if(JEQ, R1, NOT_IN_CALL, "out");
        regs.nr(&mut a, R8);
        a.ld(W::Wd, R1, R9, IN_CALL)
            .jump_if_reg(JNE_REG, R1, R8, "out")
            .sti(W::Wd, R9, IN_CALL, NOT_IN_CALL);
        let at = -CALL_BYTES;
        a.ld(W::Dw, R1, R9, ENTERED).st(W::Dw, FP, at, R1);
        a.st(W::Dw, FP, at + 8, R7)
            .sti(W::Wd, FP, at + 16, KIND_CALL)
            .st(W::Wd, FP, at + 20, R8);
        for i in 0..6 {
            a.ld(W::Dw, R1, R9, ARGS + 8 * i)
                .st(W::Dw, FP, at + 24 + 8 * i, R1);
        }
        a.call(HELPER_KTIME_GET_NS).st(W::Dw, FP, at + 72, R0);
        a.ld(W::Dw, R1, R6, EXIT_RET).st(W::Dw, FP, at + 80, R1);
        a.map(R1, m.ring)
            .mov(R2, FP)
            .addi(R2, at)
            .movi(R3, CALL_BYTES)
            .movi(R4, RB_NO_WAKEUP)
            .call(HELPER_RINGBUF_OUTPUT)
            .jump_if(JEQ, R0, 0, "sent");
        count(&mut a, m.counters, COUNT_LOST, "lost");
        a.label("sent");
    }
    then(&mut a);
    a.label("out").movi(R0, 0).exit();
    a.finish()
}

/// On `sched_process_fork` (in the parent; its context: the parent's task and the child's):
/// a tracked task's new task joins, in its state; one the full map refuses is counted.
/// `child_pid` is the task's thread id's offset in its `task_struct`.
fn fork_program(m: &Maps, child_pid: i32) -> Vec<BpfInsn> {
    let mut a = Asm::default();
    a.mov(R6, R1);
    task_entry(&mut a, m.tasks);
    // The child's value at fp-64: the parent's state, in no call; its key below it.
    let at = -(TASK_BYTES as i32);
    a.mov(R9, R0);
    a.sti(W::Wd, FP, at - 4, 0)
        .mov(R1, FP)
        .addi(R1, at - 4)
        .movi(R2, 4)
        .ld(W::Dw, R3, R6, word(1))
        .addi(R3, child_pid);
    a.call(HELPER_PROBE_READ_KERNEL).jump_if(JNE, R0, 0, "out");
    for i in 0..TASK_BYTES as i32 / 8 {
        a.sti(W::Dw, FP, at + 8 * i, 0);
    }
    a.ld(W::Wd, R1, R9, 0).st(W::Wd, FP, at, R1);
    a.sti(W::Wd, FP, at + IN_CALL, NOT_IN_CALL);
    a.map(R1, m.tasks)
        .mov(R2, FP)
        .addi(R2, at - 4)
        .mov(R3, FP)
        .addi(R3, at)
        .movi(R4, 0)
        .call(HELPER_MAP_UPDATE)
        .jump_if(JEQ, R0, 0, "out");
    count(&mut a, m.counters, COUNT_UNTRACKED, "untracked");
    a.label("out").movi(R0, 0).exit();
    a.finish()
}

/// On `sched_process_exec`: an armed task is recorded from here on.
fn exec_program(tasks: &OwnedFd) -> Vec<BpfInsn> {
    let mut a = Asm::default();
    task_entry(&mut a, tasks);
    a.sti(W::Wd, R0, 0, RECORDED);
    a.label("out").movi(R0, 0).exit();
    a.finish()
}

/// On `sched_process_exit`: the task leaves the map (its thread id may be reused by anyone);
/// a watched call it was in, which will not exit, is counted.
fn exit_program(m: &Maps) -> Vec<BpfInsn> {
    let mut a = Asm::default();
    task_entry(&mut a, m.tasks);
    a.ld(W::Wd, R1, R0, IN_CALL)
        .jump_if(JEQ, R1, NOT_IN_CALL, "finished");
    count(&mut a, m.counters, COUNT_UNFINISHED, "unfinished");
    a.label("finished");
    this_task(&mut a);
    a.map(R1, m.tasks).call(HELPER_MAP_DELETE);
    a.label("out").movi(R0, 0).exit();
    a.finish()
}

impl CallProbes {
    /// Starts following `pid` (stopped before its exec): it joins the map armed, and the
    /// reader starts at the ring's present end.
    pub fn watch(&self, pid: i32) -> io::Result<CallReader> {
        lock(&self.ring).skip();
        let mut reader = CallReader {
            ring: Arc::clone(&self.ring),
            tasks: self.tasks.try_clone()?,
            counters: self.counters.try_clone()?,
            possible: self.possible,
            pid,
            start: [0; COUNTERS as usize],
        };
        reader.start =
            [COUNT_CALLS, COUNT_LOST, COUNT_UNTRACKED, COUNT_UNFINISHED].map(|k| reader.count(k));
        let mut value = [0u8; TASK_BYTES as usize];
        value[..4].copy_from_slice(&ARMED.to_ne_bytes());
        value[IN_CALL as usize..][..4].copy_from_slice(&NOT_IN_CALL.to_ne_bytes());
        sys::bpf_map_set_bytes(&self.tasks, pid as u32, &value)?;
        Ok(reader)
    }
}

/// Every call the program's tasks made, the records the full ring refused, the tasks they
/// started that the full map could not take (their calls are not in the trace), and the
/// watched calls they ended in.
pub struct Counted {
    pub syscalls: u64,
    pub lost: u64,
    pub untracked: u64,
    /// Watched calls entered and never exited (their tasks ended in them): not in the ring.
    pub unfinished: u64,
}

/// What one recording reads from the ring, and its counters.
pub struct CallReader {
    ring: Arc<Mutex<sys::BpfRing>>,
    tasks: OwnedFd,
    counters: OwnedFd,
    possible: usize,
    pid: i32,
    /// The counters when the recording started.
    start: [u64; COUNTERS as usize],
}

impl CallReader {
    /// The records the ring holds, as calls; returns the bytes taken.
    pub fn drain(&mut self, out: &mut Vec<Raw>) -> usize {
        lock(&self.ring).drain(|r| out.extend(parse(r)))
    }

    fn count(&self, key: i32) -> u64 {
        sys::bpf_map_per_cpu(&self.counters, key as u32, self.possible)
            .map_or(0, |v| v.iter().sum())
    }

    /// What the counters say of this recording.
    pub fn finish(self) -> Counted {
        let since = |key: i32| self.count(key).saturating_sub(self.start[key as usize]);
        Counted {
            syscalls: since(COUNT_CALLS),
            lost: since(COUNT_LOST),
            untracked: since(COUNT_UNTRACKED),
            unfinished: since(COUNT_UNFINISHED),
        }
    }
}

impl Drop for CallReader {
    /// The program's first task leaves the map, should it not have ended (a recording that
    /// failed before it ran): the programs stop following it.
    fn drop(&mut self) {
        sys::bpf_map_remove(&self.tasks, self.pid as u32);
    }
}

/// The ring, whose reader (one recording's at a time) may have panicked holding it: its
/// positions are the kernel's and the page's, never left half-written here.
fn lock(ring: &Mutex<sys::BpfRing>) -> std::sync::MutexGuard<'_, sys::BpfRing> {
    ring.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A ring record as the whole call (None: not a call's record).
fn parse(r: &[u8]) -> Option<Raw> {
    let u64_at = |at: usize| super::bpf::u64_in(r, at);
    let u32_at = |at: usize| super::bpf::u32_in(r, at);
    if u32_at(16)? as i32 != KIND_CALL {
        return None;
    }
    let (t, ids) = (u64_at(0)?, u64_at(8)?);
    let (pid, tid) = ((ids >> 32) as u32, ids as u32);
    let nr = u32_at(20)? as i32;
    let mut args = [0u64; 6];
    for (i, a) in args.iter_mut().enumerate() {
        *a = u64_at(24 + 8 * i)?;
    }
    Some(Raw::Call {
        t,
        exit: u64_at(72)?,
        pid,
        tid,
        nr,
        args,
        ret: u64_at(80)? as i64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(kind: i32, nr: i32, words: &[u64]) -> Vec<u8> {
        let mut r = Vec::new();
        r.extend_from_slice(&1234u64.to_ne_bytes());
        r.extend_from_slice(&((7u64 << 32) | 9).to_ne_bytes());
        r.extend_from_slice(&kind.to_ne_bytes());
        r.extend_from_slice(&nr.to_ne_bytes());
        for w in words {
            r.extend_from_slice(&w.to_ne_bytes());
        }
        r
    }

    #[test]
    fn a_record_reads_back_as_its_whole_call() {
        let args = [3, 4096, 512, 8192, 0, 0];
        let mut words = args.to_vec();
        words.extend([1234 + 560, (-5i64) as u64]);
        assert_eq!(
            parse(&record(KIND_CALL, 17, &words)),
            Some(Raw::Call {
                t: 1234,
                exit: 1794,
                pid: 7,
                tid: 9,
                nr: 17,
                args,
                ret: -5
            })
        );
        assert_eq!(CALL_BYTES as usize, record(KIND_CALL, 17, &words).len());
        // Cut short, or of another kind: nothing.
        assert_eq!(parse(&record(KIND_CALL, 17, &words[..7])), None);
        assert_eq!(parse(&record(1, 17, &words)), None);
        assert_eq!(parse(&[0; 8]), None);
    }
}
