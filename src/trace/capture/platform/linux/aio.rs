//! Linux native AIO seen in the kernel: io_submit's iocbs and io_getevents' events live in the
//! program's memory, which a system call trace does not show. eBPF programs on the
//! `sys_enter` and `sys_exit` raw tracepoints copy them as these calls run — the iocbs (up to
//! [`MAX_IOS`] per call) as io_submit starts, the events io_getevents filled as it returns
//! (the events array's address is kept per thread between the call's start and end) — and
//! send them out as the path probes' records go (`bpf.rs`), so the decoder can turn each
//! submitted I/O into a trace event: its file, offset, length and operation from the iocb,
//! its issue time the submission's, its completion the return of the io_getevents that
//! reaped it, with the result the kernel gave.

use std::os::fd::OwnedFd;

use super::bpf::{Load, NoProbes, SYS_ENTER, SYS_EXIT, u32_in, u64_in};
use super::bpf_asm::*;
use super::calls::Call;
use super::rawtp::{ENTER_NR, EXIT_RET, Regs};
use super::sys;

/// The most I/Os one io_submit or io_getevents record carries; the rest of a larger call
/// are counted as unseen.
pub const MAX_IOS: i32 = 256;
/// A submit record: header, then per I/O the iocb's address (8 bytes) and the iocb (64).
const SUBMIT_IO: i32 = 72;
/// A record's header: tag, kind, count (u32), the context (u64).
const HEAD: i32 = 16;
/// The bytes of the scratch value these programs need.
pub const SCRATCH: u32 = (HEAD + MAX_IOS * SUBMIT_IO) as u32;
const KIND_SUBMIT: u8 = 3;
const KIND_REAPED: u8 = 4;

const MAP_HASH: u32 = 1;

/// What a program reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    /// io_submit's iocbs as it started: (the iocb's address, the iocb).
    Submit {
        t: u64,
        tid: u32,
        ios: Vec<(u64, Iocb)>,
    },
    /// io_getevents' events as it returned: (the iocb's address, the result).
    Reaped {
        t: u64,
        tid: u32,
        events: Vec<(u64, i64)>,
    },
    /// An io_uring request as the kernel prepared it, in the submitting task (`uring.rs`).
    UringSubmit {
        t: u64,
        tid: u32,
        r: super::uring::Request,
    },
    /// An io_uring request completed (in whatever task or interrupt completed it).
    UringDone { t: u64, req: u64, res: i32 },
    /// Descriptors registered with a ring, as io_uring_register started (`uring.rs`).
    UringFiles {
        t: u64,
        tid: u32,
        f: super::uring::Files,
    },
    /// The ring an io_uring_register call was about, as it ended.
    UringRing { t: u64, tid: u32, ring: u64 },
}

impl Seen {
    pub fn time(&self) -> u64 {
        match self {
            Seen::Submit { t, .. }
            | Seen::Reaped { t, .. }
            | Seen::UringSubmit { t, .. }
            | Seen::UringFiles { t, .. }
            | Seen::UringRing { t, .. }
            | Seen::UringDone { t, .. } => *t,
        }
    }
    pub fn tid(&self) -> u32 {
        match self {
            Seen::Submit { tid, .. }
            | Seen::Reaped { tid, .. }
            | Seen::UringSubmit { tid, .. }
            | Seen::UringFiles { tid, .. }
            | Seen::UringRing { tid, .. } => *tid,
            Seen::UringDone { .. } => 0,
        }
    }
}

/// The fields of an iocb a trace needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Iocb {
    pub opcode: u16,
    pub fd: u32,
    pub nbytes: u64,
    pub offset: i64,
    pub rw_flags: u32,
}

/// A record of these programs (after the tag, checked by the caller); None: not one.
pub fn parse(t: u64, tid: u32, raw: &[u8]) -> Option<Seen> {
    let (u64_at, u32_at) = (|at| u64_in(raw, at), |at| u32_in(raw, at));
    let n = u32_at(4)?.min(MAX_IOS as u32) as usize;
    match *raw.get(2)? {
        KIND_SUBMIT => {
            let mut ios = Vec::with_capacity(n);
            for j in 0..n {
                let at = (HEAD + SUBMIT_IO * j as i32) as usize;
                let (addr, cb) = (u64_at(at)?, at + 8);
                let u16_at = |o: usize| raw.get(o..o + 2).map(|b| u16::from_ne_bytes([b[0], b[1]]));
                ios.push((
                    addr,
                    Iocb {
                        rw_flags: u32_at(cb + 12)?,
                        opcode: u16_at(cb + 16)?,
                        fd: u32_at(cb + 20)?,
                        nbytes: u64_at(cb + 32)?,
                        offset: u64_at(cb + 40)? as i64,
                    },
                ));
            }
            Some(Seen::Submit { t, tid, ios })
        }
        KIND_REAPED => {
            let mut events = Vec::with_capacity(n);
            for j in 0..n {
                let at = HEAD as usize + 32 * j;
                events.push((u64_at(at + 8)?, u64_at(at + 16)? as i64));
            }
            Some(Seen::Reaped { t, tid, events })
        }
        _ => super::uring::parse(t, tid, raw),
    }
}

/// The calls that reap (io_pgetevents where the kernel has it).
const GETEVENTS: [Call; 2] = [Call::IoGetevents, Call::IoPgetevents];

/// The map the programs keep each reaping thread's events array in, until its call ends.
pub fn pending() -> Result<OwnedFd, NoProbes> {
    sys::bpf_map(MAP_HASH, 8, 4096).map_err(|e| NoProbes(format!("an eBPF map: {e}")))
}

/// Loads the programs as programs of their own (`load` takes a raw tracepoint and a program,
/// and attaches it with the others), for every task's calls: where the call ring's programs
/// do not carry their code ([`enter_code`], [`exit_code`]).
pub fn load(
    load: &mut Load,
    regs: &Regs,
    scratch: &OwnedFd,
    pending: &OwnedFd,
    out: &OwnedFd,
) -> Result<(), NoProbes> {
    load(
        SYS_ENTER,
        program(|a| enter_code(a, regs, scratch, pending, out)),
    )?;
    load(
        SYS_EXIT,
        program(|a| exit_code(a, regs, scratch, pending, out)),
    )?;
    Ok(())
}

/// R8 = min(R8, MAX_IOS); to `out` when R8 ≤ 0.
fn clamp_count(a: &mut Asm, out: &str) {
    let counted = format!("aio_counted{}", a.len());
    a.jump_if(JSLE, R8, 0, out)
        .jump_if(JSLE, R8, MAX_IOS, &counted)
        .movi(R8, MAX_IOS)
        .label(&counted);
}

/// R7 = the CPU's scratch value (to `out` when the lookup fails); its header written.
fn scratch_head(a: &mut Asm, scratch: &OwnedFd, kind: u8, out: &str) {
    a.sti(W::Wd, FP, -8, 0).mov(R2, FP).addi(R2, -8);
    a.map(R1, scratch)
        .call(HELPER_MAP_LOOKUP)
        .jump_if(JEQ, R0, 0, out);
    a.mov(R7, R0)
        .sti(W::H, R7, 0, i32::from(super::bpf::TAG))
        .sti(W::B, R7, 2, i32::from(kind))
        .sti(W::B, R7, 3, 0)
        .st(W::Wd, R7, 4, R8)
        .sti(W::Dw, R7, 8, 0);
}

/// Sends R7's first `HEAD + R8 * size` bytes out.
fn emit(a: &mut Asm, out: &OwnedFd, size: i32) {
    a.mov(R5, R8).op(0x27, R5, 0, 0, size).addi(R5, HEAD);
    a.mov(R1, R6).map(R2, out).movi32(R3, -1).mov(R4, R7);
    a.call(HELPER_PERF_EVENT_OUTPUT);
}

/// With R6 the `sys_enter` context: io_submit's iocbs ([`submit`]), io_getevents' events
/// array ([`getevents_enter`]); nothing for the other calls. Falls through at the end (R1–R5
/// and R7–R9 clobbered).
pub fn enter_code(a: &mut Asm, regs: &Regs, scratch: &OwnedFd, pending: &OwnedFd, out: &OwnedFd) {
    a.ld(W::Dw, R1, R6, ENTER_NR);
    a.jump_if(JEQ, R1, call_nr(Call::IoSubmit), "aio_submit");
    for call in GETEVENTS {
        a.jump_if(JEQ, R1, call_nr(call), "aio_getevents");
    }
    a.goto("aio_entered");
    a.label("aio_submit");
    regs.read_args(a);
    submit(a, regs, scratch, out, "aio_entered");
    a.goto("aio_entered");
    a.label("aio_getevents");
    regs.read_args(a);
    getevents_enter(a, regs, pending);
    a.label("aio_entered");
}

/// At io_submit's entry (its arguments read): the iocb addresses (argument 2) and the
/// iocbs, up to MAX_IOS of the count asked (argument 1), each read from the program's
/// memory (zeros where a read fails); to `done` when there are none.
fn submit(a: &mut Asm, regs: &Regs, scratch: &OwnedFd, out: &OwnedFd, done: &str) {
    regs.arg(a, R8, 1);
    clamp_count(a, done);
    regs.arg(a, R9, 2);
    scratch_head(a, scratch, KIND_SUBMIT, done);
    regs.arg(a, R1, 0);
    a.st(W::Dw, R7, 8, R1);
    for j in 0..MAX_IOS {
        let at = HEAD + SUBMIT_IO * j;
        a.jump_if(JLE, R8, j, "aio_emit");
        a.mov(R1, R7)
            .addi(R1, at)
            .movi(R2, 8)
            .mov(R3, R9)
            .addi(R3, 8 * j);
        a.call(HELPER_PROBE_READ_USER);
        a.mov(R1, R7)
            .addi(R1, at + 8)
            .movi(R2, 64)
            .ld(W::Dw, R3, R7, at);
        a.call(HELPER_PROBE_READ_USER);
    }
    a.label("aio_emit");
    emit(a, out, SUBMIT_IO);
}

/// At io_getevents' entry (its arguments read): the events array's address (argument 3),
/// kept for the thread.
fn getevents_enter(a: &mut Asm, regs: &Regs, pending: &OwnedFd) {
    a.call(HELPER_GET_CURRENT_PID_TGID).st(W::Wd, FP, -4, R0);
    regs.arg(a, R1, 3);
    a.st(W::Dw, FP, -16, R1);
    a.map(R1, pending)
        .mov(R2, FP)
        .addi(R2, -4)
        .mov(R3, FP)
        .addi(R3, -16)
        .movi(R4, 0)
        .call(HELPER_MAP_UPDATE);
}

/// With R6 the `sys_exit` context, for io_getevents': the events it filled (its result, up
/// to MAX_IOS), from the array its entry kept; nothing for the other calls. Falls through at
/// the end (R1–R5 and R7–R9 clobbered).
pub fn exit_code(a: &mut Asm, regs: &Regs, scratch: &OwnedFd, pending: &OwnedFd, out: &OwnedFd) {
    regs.nr(a, R1);
    for call in GETEVENTS {
        a.jump_if(JEQ, R1, call_nr(call), "aio_reaping");
    }
    a.goto("aio_reaped").label("aio_reaping");
    a.call(HELPER_GET_CURRENT_PID_TGID);
    a.st(W::Wd, FP, -4, R0).mov(R2, FP).addi(R2, -4);
    a.map(R1, pending)
        .call(HELPER_MAP_LOOKUP)
        .jump_if(JEQ, R0, 0, "aio_reaped");
    a.ld(W::Dw, R9, R0, 0).mov(R2, FP).addi(R2, -4);
    a.map(R1, pending).call(HELPER_MAP_DELETE);
    a.ld(W::Dw, R8, R6, EXIT_RET);
    clamp_count(a, "aio_reaped");
    scratch_head(a, scratch, KIND_REAPED, "aio_reaped");
    a.mov(R2, R8)
        .lshi(R2, 5)
        .mov(R1, R7)
        .addi(R1, HEAD)
        .mov(R3, R9);
    a.call(HELPER_PROBE_READ_USER);
    emit(a, out, 32);
    a.label("aio_reaped");
}
