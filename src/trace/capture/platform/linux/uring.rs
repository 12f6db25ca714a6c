//! io_uring seen in the kernel: the submission queue lives in memory the kernel and the
//! program share, so a system call trace sees io_uring_enter, not the I/Os. The
//! `io_uring_submit_req` tracepoint fires for each request once the kernel has
//! prepared it (in the submitting task), with the request's address: an eBPF program reads
//! its descriptor, offset, length and flags there (offsets from the kernel's BTF: the
//! request's `cqe.fd`, and the `io_rw` or `io_sync` command laid over its start).
//! `io_uring:io_uring_complete` fires as each request completes, with its result: the true
//! completion time, wherever the program then reads it (it may never enter the kernel to).
//! A request on a registered file names an index into the ring's table, not a descriptor:
//! a third program, on `io_uring_register`'s entry, copies the descriptors a program
//! registers (or updates), so the decoder knows each index's file.

use std::ffi::CStr;
use std::os::fd::OwnedFd;

use super::bpf::{Load, NoProbes, SYS_ENTER};
use super::bpf::{u32_in, u64_in};
use super::bpf_asm::*;
use super::btf::Btf;
use super::calls::Call;
use super::rawtp::{ENTER_NR, Regs, word};
use super::sys::BpfInsn;

const KIND_SUBMIT: u8 = 5;
const KIND_DONE: u8 = 6;
const KIND_FILES: u8 = 7;
const KIND_RING: u8 = 8;
const RING_BYTES: i32 = 16;
/// A submit record's bytes (see `submit_program`) and a completion's.
const SUBMIT_BYTES: i32 = 56;
const DONE_BYTES: i32 = 32;
/// The most descriptors one registration record carries (the record is built on the eBPF
/// program's stack, 512 bytes in all).
const CHUNK: i32 = 64;
/// The most records one registration is copied into; the slots past their descriptors are
/// unknown.
const CHUNKS: i32 = 16;
/// The most descriptors of one registration the trace follows.
pub const MAX_FILES: i32 = CHUNK * CHUNKS;
/// A registration record: header, the call's argument struct (32 bytes), the descriptors.
const FILES_HEAD: i32 = 48;
const FILES_BYTES: i32 = FILES_HEAD + 4 * CHUNK;

/// io_uring's opcodes (include/uapi/linux/io_uring.h) a trace holds.
pub const OP_READV: u8 = 1;
pub const OP_WRITEV: u8 = 2;
pub const OP_FSYNC: u8 = 3;
pub const OP_READ_FIXED: u8 = 4;
pub const OP_WRITE_FIXED: u8 = 5;
pub const OP_READ: u8 = 22;
pub const OP_WRITE: u8 = 23;
/// `io_sync.flags`: fdatasync rather than fsync.
pub const FSYNC_DATASYNC: u32 = 1;
/// The request's descriptor is an index into the ring's registered files.
pub const REQ_F_FIXED_FILE: u32 = 1;
/// io_uring_register's opcodes for the file table (include/uapi/linux/io_uring.h).
pub const REGISTER_FILES: u32 = 2;
pub const UNREGISTER_FILES: u32 = 3;
pub const REGISTER_FILES_UPDATE: u32 = 6;
pub const REGISTER_FILES2: u32 = 13;
pub const REGISTER_FILES_UPDATE2: u32 = 14;
/// In io_uring_register's opcode: the ring is named by its registered index, not a descriptor.
pub const REGISTER_USE_REGISTERED_RING: u32 = 1 << 31;
/// `io_uring_rsrc_register.flags`: a table of empty slots, no descriptors given.
const RSRC_REGISTER_SPARSE: u32 = 1;
/// An update's descriptor that leaves its slot as it is.
pub const REGISTER_FILES_SKIP: i32 = -2;

/// Descriptors a program registered with a ring (or updated in its table).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Files {
    /// `REGISTER_FILES`…: the opcode without its flag bit.
    pub opcode: u32,
    /// The first slot they fill.
    pub offset: u32,
    /// How many slots the call names (`fds` holds the first `MAX_FILES`; empty for a sparse
    /// table).
    pub count: u32,
    /// Which of the call's descriptors `fds` starts at: a registration of more than `CHUNK`
    /// comes in records of `CHUNK`, one after another.
    pub first: u32,
    pub fds: Vec<i32>,
}

/// A request as it was submitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    pub ring: u64,
    pub req: u64,
    pub opcode: u8,
    pub fd: i32,
    pub len: u32,
    pub pos: i64,
    pub rw_flags: u32,
    pub req_flags: u32,
    pub sync_flags: u32,
}

/// Parses a record of these programs (after the tag): a submission or a completion.
pub fn parse(t: u64, tid: u32, raw: &[u8]) -> Option<super::aio::Seen> {
    let (u64_at, u32_at) = (|at| u64_in(raw, at), |at| u32_in(raw, at));
    match *raw.get(2)? {
        KIND_SUBMIT => Some(super::aio::Seen::UringSubmit {
            t,
            tid,
            r: Request {
                opcode: *raw.get(3)?,
                ring: u64_at(8)?,
                req: u64_at(16)?,
                fd: u32_at(24)? as i32,
                len: u32_at(28)?,
                pos: u64_at(32)? as i64,
                rw_flags: u32_at(40)?,
                req_flags: u32_at(44)?,
                sync_flags: u32_at(48)?,
            },
        }),
        KIND_DONE => Some(super::aio::Seen::UringDone {
            t,
            req: u64_at(16)?,
            res: u32_at(24)? as i32,
        }),
        KIND_FILES => parse_files(raw).map(|f| super::aio::Seen::UringFiles { t, tid, f }),
        KIND_RING => Some(super::aio::Seen::UringRing {
            t,
            tid,
            ring: u64_at(8)?,
        }),
        _ => None,
    }
}

/// A registration record: where its slots and descriptors are depends on the opcode (the
/// argument is the descriptors themselves, or a struct that points at them).
fn parse_files(raw: &[u8]) -> Option<Files> {
    let u32_at = |at| u32_in(raw, at);
    let (opcode, nr_args) = (u32_at(4)?, u32_at(12)?);
    let opcode = opcode & !REGISTER_USE_REGISTERED_RING;
    // The argument struct, copied at 16: io_uring_files_update {offset, resv, fds},
    // io_uring_rsrc_register {nr, flags, resv2, data, tags}, io_uring_rsrc_update2 {offset,
    // resv, data, tags, nr, resv2}.
    let (offset, count, sparse) = match opcode {
        REGISTER_FILES => (0, nr_args, false),
        REGISTER_FILES_UPDATE => (u32_at(16)?, nr_args, false),
        REGISTER_FILES2 => (0, u32_at(16)?, u32_at(20)? & RSRC_REGISTER_SPARSE != 0),
        REGISTER_FILES_UPDATE2 => (u32_at(16)?, u32_at(40)?, false),
        _ => return None,
    };
    let first = u32::from(*raw.get(3)?) * CHUNK as u32;
    let held = if sparse {
        0
    } else {
        count
            .min(MAX_FILES as u32)
            .saturating_sub(first)
            .min(CHUNK as u32)
    };
    let fds = (0..held as usize)
        .map(|i| u32_at(FILES_HEAD as usize + 4 * i).map(|v| v as i32))
        .collect::<Option<_>>()?;
    Some(Files {
        opcode,
        offset,
        count,
        first,
        fds,
    })
}

/// Where the programs read: the request's fields (offsets from the kernel's BTF), and where
/// io_uring_complete passes the result.
struct Layout {
    /// In the request.
    ring: i32,
    opcode: i32,
    fd: i32,
    pos: i32,
    len: i32,
    rw_flags: i32,
    req_flags: i32,
    sync_flags: i32,
    res: Res,
}

/// Where io_uring_complete's result is: its completion entry's field (newer kernels' tracepoint
/// passes `(ctx, req, cqe)`), or its fourth argument (older ones': `(ctx, req, user_data, res,
/// cflags, extra1, extra2)`).
enum Res {
    InCqe(i32),
    Argument,
}

/// The tracepoints the programs run on, with the number of arguments each must pass.
const SUBMIT_REQ: (&CStr, usize) = (c"io_uring_submit_req", 1);
const REGISTERED: (&CStr, usize) = (c"io_uring_register", 5);
const COMPLETE: &CStr = c"io_uring_complete";

fn layout() -> Result<Layout, NoProbes> {
    let btf = Btf::kernel()?;
    let o = |s: &str, f: &str| btf.operand(s, f);
    for (tp, args) in [SUBMIT_REQ, REGISTERED] {
        let name = tp.to_string_lossy();
        let n = btf.tracepoint_args(&name)?;
        if n != args {
            return Err(NoProbes(format!(
                "the io_uring tracepoint {name} passes {n} arguments, not the {args} this \
                 build reads"
            )));
        }
    }
    let res = match btf.tracepoint_args(&COMPLETE.to_string_lossy())? {
        3 => Res::InCqe(o("io_uring_cqe", "res")?),
        7 => Res::Argument,
        n => {
            return Err(NoProbes(format!(
                "the io_uring tracepoint io_uring_complete passes {n} arguments, not the 3 or 7 \
                 this build reads"
            )));
        }
    };
    Ok(Layout {
        ring: o("io_kiocb", "ctx")?,
        opcode: o("io_kiocb", "opcode")?,
        fd: o("io_kiocb", "cqe")? + o("io_cqe", "fd")?,
        // The command (io_rw, io_sync) is laid over the request's start.
        pos: o("io_rw", "kiocb")? + o("kiocb", "ki_pos")?,
        len: o("io_rw", "len")?,
        rw_flags: o("io_rw", "flags")?,
        req_flags: o("io_kiocb", "flags")?,
        sync_flags: o("io_sync", "flags")?,
        res,
    })
}

/// Loads the programs on io_uring's raw tracepoints (`load` takes a raw tracepoint and a
/// program, and attaches it with the others) and, with `files` (where the call ring's
/// programs do not carry it, [`files_code`]), the one on `sys_enter` for the registered
/// files; or says why not.
pub fn load(load: &mut Load, regs: &Regs, out: &OwnedFd, files: bool) -> Result<(), NoProbes> {
    let l = layout()?;
    load(SUBMIT_REQ.0, submit_program(&l, out))?;
    load(COMPLETE, done_program(&l, out))?;
    if files {
        load(SYS_ENTER, program(|a| files_code(a, regs, out)))?;
    }
    load(REGISTERED.0, registered_program(out))?;
    Ok(())
}

/// A record of `bytes` zeroed on the stack with its tag and `kind`; its offset from FP.
fn record(a: &mut Asm, bytes: i32, kind: u8) -> i32 {
    let base = -bytes;
    for at in (0..bytes).step_by(8) {
        a.sti(W::Dw, FP, base + at, 0);
    }
    a.sti(W::H, FP, base, i32::from(super::bpf::TAG))
        .sti(W::B, FP, base + 2, i32::from(kind));
    base
}

/// The record of `bytes` on the stack sent out.
fn send(a: &mut Asm, out: &OwnedFd, bytes: i32) {
    a.mov(R1, R6)
        .map(R2, out)
        .movi32(R3, -1)
        .mov(R4, FP)
        .addi(R4, -bytes);
    a.movi(R5, bytes).call(HELPER_PERF_EVENT_OUTPUT);
}

/// Reads `len` bytes at kernel address R9 + `off` into the stack at `to` (zeros where the
/// read fails).
fn read_req(a: &mut Asm, to: i32, off: i32, len: i32) {
    a.mov(R1, FP)
        .addi(R1, to)
        .movi(R2, len)
        .mov(R3, R9)
        .addi(R3, off);
    a.call(HELPER_PROBE_READ_KERNEL);
}

/// On io_uring_submit_req (its argument: the request): the record at fp-56 — tag, kind,
/// opcode; the ring (8), the request (16), its descriptor (24), length (28), offset (32), RWF
/// flags (40), request flags (44), sync flags (48).
fn submit_program(l: &Layout, out: &OwnedFd) -> Vec<BpfInsn> {
    program(|a| {
        let base = record(a, SUBMIT_BYTES, KIND_SUBMIT);
        a.ld(W::Dw, R9, R6, word(0)).st(W::Dw, FP, base + 16, R9);
        read_req(a, base + 3, l.opcode, 1);
        read_req(a, base + 8, l.ring, 8);
        read_req(a, base + 24, l.fd, 4);
        read_req(a, base + 28, l.len, 4);
        read_req(a, base + 32, l.pos, 8);
        read_req(a, base + 40, l.rw_flags, 4);
        read_req(a, base + 44, l.req_flags, 4);
        read_req(a, base + 48, l.sync_flags, 4);
        send(a, out, SUBMIT_BYTES);
    })
}

/// With R6 the `sys_enter` context, at io_uring_register's entry for the opcodes that fill
/// the file table: records of tag, kind, which `CHUNK` of the descriptors the record holds
/// (3); the opcode (4), the ring (8), the count argument (12), the argument struct (16, 32
/// bytes: for REGISTER_FILES the first descriptors themselves) and `CHUNK` descriptors (48),
/// read from the program's memory (zeros where a read fails) — one record for each `CHUNK`
/// the call names, up to `CHUNKS`; nothing for the other calls. Falls through at the end
/// (R1–R5 and R7–R9 clobbered).
pub fn files_code(a: &mut Asm, regs: &Regs, out: &OwnedFd) {
    let done = "uring_files_done";
    let register = call_nr(Call::IoUringRegister);
    a.ld(W::Dw, R1, R6, ENTER_NR)
        .jump_if(JNE, R1, register, done);
    regs.read_args(a);
    regs.arg(a, R7, 1);
    a.mov(R1, R7)
        .op(0x57, R1, 0, 0, !(REGISTER_USE_REGISTERED_RING as i32)); // R1 &= !flag
    for op in [
        REGISTER_FILES,
        REGISTER_FILES_UPDATE,
        REGISTER_FILES2,
        REGISTER_FILES_UPDATE2,
    ] {
        a.jump_if(JEQ, R1, op as i32, "uring_table");
    }
    a.goto(done);
    a.label("uring_table");
    let base = record(a, FILES_BYTES, KIND_FILES);
    a.mov(R7, R1).st(W::Wd, FP, base + 4, R7);
    regs.arg(a, R1, 0);
    a.st(W::Wd, FP, base + 8, R1);
    regs.arg(a, R9, 3);
    a.st(W::Wd, FP, base + 12, R9);
    regs.arg(a, R8, 2);
    a.mov(R1, FP).addi(R1, base + 16).movi(R2, 32).mov(R3, R8);
    a.call(HELPER_PROBE_READ_USER);
    // The descriptors' address (R8) and count (R9) by opcode.
    a.jump_if(JEQ, R7, REGISTER_FILES as i32, "uring_copy")
        .jump_if(JEQ, R7, REGISTER_FILES2 as i32, "uring_files2");
    a.ld(W::Dw, R8, FP, base + 24)
        .jump_if(JEQ, R7, REGISTER_FILES_UPDATE as i32, "uring_copy");
    a.ld(W::Wd, R9, FP, base + 40).goto("uring_copy");
    a.label("uring_files2")
        .ld(W::Dw, R8, FP, base + 32)
        .ld(W::Wd, R9, FP, base + 16);
    a.label("uring_copy");
    for k in 0..CHUNKS {
        // This chunk's descriptors: the count less those before it (none left: done), at
        // most CHUNK (the verifier needs the bound), 4 bytes each.
        let before = k * CHUNK;
        if k > 0 {
            a.jump_if(JLE, R9, before, done).sti(W::B, FP, base + 3, k);
        }
        let clamped = format!("uring_clamped_{k}");
        a.mov(R2, R9)
            .addi(R2, -before)
            .jump_if(JLE, R2, CHUNK, &clamped)
            .movi(R2, CHUNK)
            .label(&clamped)
            .lshi(R2, 2);
        a.mov(R1, FP)
            .addi(R1, base + FILES_HEAD)
            .mov(R3, R8)
            .addi(R3, 4 * before);
        a.call(HELPER_PROBE_READ_USER);
        send(a, out, FILES_BYTES);
    }
    a.label(done);
}

/// On io_uring_complete (its arguments: the ring, the request, then the completion entry or
/// the result's fields): tag, kind; the request (16) and its result (24).
fn done_program(l: &Layout, out: &OwnedFd) -> Vec<BpfInsn> {
    program(|a| {
        let base = record(a, DONE_BYTES, KIND_DONE);
        a.ld(W::Dw, R1, R6, word(1)).st(W::Dw, FP, base + 16, R1);
        match l.res {
            Res::InCqe(res) => {
                a.ld(W::Dw, R9, R6, word(2));
                read_req(a, base + 24, res, 4);
            }
            Res::Argument => {
                a.ld(W::Dw, R1, R6, word(3)).st(W::Wd, FP, base + 24, R1);
            }
        }
        send(a, out, DONE_BYTES);
    })
}

/// On io_uring_register (its first argument: the ring), as an io_uring_register call ends:
/// tag, kind; the ring (8).
fn registered_program(out: &OwnedFd) -> Vec<BpfInsn> {
    program(|a| {
        let base = record(a, RING_BYTES, KIND_RING);
        a.ld(W::Dw, R1, R6, word(0)).st(W::Dw, FP, base + 8, R1);
        send(a, out, RING_BYTES);
    })
}
