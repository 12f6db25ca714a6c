//! The path probes' eBPF code (`bpf.rs` loads it and reads its records): at a call's entry,
//! the path of each call that names one, copied from the program's memory; at an open's
//! exit, what it opened, followed from the task's file table to the inode with offsets from
//! the kernel's BTF. It runs as programs of its own, or inside the call ring's programs
//! (`callring.rs`).

use std::os::fd::OwnedFd;
use std::sync::OnceLock;

use super::bpf::{KIND_EXIT_PATH, KIND_OPENED, KIND_PATH, NoProbes, PATH_HEAD, PATH_MAX, TAG};
use super::bpf_asm::*;
use super::btf::Btf;
use super::calls::Call;
use super::rawtp::{ENTER_NR, EXIT_RET, Regs};
use super::sys::BpfInsn;

/// Where each path-naming call's path argument is (argument indices).
pub(super) struct Probe {
    pub(super) call: Call,
    which: u8,
    path: u8,
    dirfd: Option<u8>,
    how: Option<u8>,
}

const fn probe(call: Call, which: u8, path: u8, dirfd: Option<u8>) -> Probe {
    Probe {
        call,
        which,
        path,
        dirfd,
        how: None,
    }
}

pub(super) const PROBES: &[Probe] = &[
    probe(Call::Open, 0, 0, None),
    probe(Call::Creat, 0, 0, None),
    probe(Call::Openat, 0, 1, Some(0)),
    Probe {
        how: Some(2),
        ..probe(Call::Openat2, 0, 1, Some(0))
    },
    probe(Call::Truncate, 0, 0, None),
    probe(Call::Unlink, 0, 0, None),
    probe(Call::Unlinkat, 0, 1, Some(0)),
    probe(Call::Rename, 0, 0, None),
    probe(Call::Rename, 1, 1, None),
    probe(Call::Renameat, 0, 1, Some(0)),
    probe(Call::Renameat, 1, 3, Some(2)),
    probe(Call::Renameat2, 0, 1, Some(0)),
    probe(Call::Renameat2, 1, 3, Some(2)),
    probe(Call::Chdir, 0, 0, None),
];

/// The opens whose exits report what they opened.
pub(super) const OPENS: &[Call] = &[Call::Open, Call::Creat, Call::Openat, Call::Openat2];

/// The kernel fields the exit program follows, as byte offsets.
#[derive(Debug, Clone, Copy)]
pub(super) struct Offsets {
    files: i32,
    fdt: i32,
    fd: i32,
    max_fds: i32,
    f_inode: i32,
    i_mode: i32,
    i_size: i32,
    i_sb: i32,
    s_magic: i32,
}

pub(super) fn offsets() -> Result<Offsets, NoProbes> {
    static CACHE: OnceLock<Result<Offsets, NoProbes>> = OnceLock::new();
    CACHE
        .get_or_init(|| {
            let btf = Btf::kernel().map_err(|e| e.to_string())?;
            let o = |s: &str, f: &str| btf.operand(s, f);
            Ok(Offsets {
                files: o("task_struct", "files")?,
                fdt: o("files_struct", "fdt")?,
                fd: o("fdtable", "fd")?,
                max_fds: o("fdtable", "max_fds")?,
                f_inode: o("file", "f_inode")?,
                i_mode: o("inode", "i_mode")?,
                i_size: o("inode", "i_size")?,
                i_sb: o("inode", "i_sb")?,
                s_magic: o("super_block", "s_magic")?,
            })
        })
        .clone()
}

/// The enter program, on the `sys_enter` raw tracepoint (every call of every task): the
/// paths ([`enter_paths`]).
pub(super) fn enter_program(
    regs: &Regs,
    probes: &[&Probe],
    scratch: &OwnedFd,
    out: &OwnedFd,
) -> Vec<BpfInsn> {
    let mut a = Asm::default();
    a.mov(R6, R1);
    enter_paths(&mut a, regs, probes, scratch, out);
    a.movi(R0, 0).exit();
    a.finish()
}

/// With R6 the `sys_enter` context: for each probe whose call this is, copies the path (and
/// the directory fd, and openat2's flags) into the CPU's scratch value and sends it out;
/// falls through at the end.
pub(super) fn enter_paths(
    a: &mut Asm,
    regs: &Regs,
    probes: &[&Probe],
    scratch: &OwnedFd,
    out: &OwnedFd,
) {
    a.ld(W::Dw, R8, R6, ENTER_NR);
    for (i, p) in probes.iter().enumerate() {
        let next = format!("next{i}");
        let nr = p.call.number().unwrap_or(-1) as i32;
        let arg = |a: &mut Asm, dst: u8, i: u8| regs.arg(a, dst, usize::from(i));
        a.jump_if(JNE, R8, nr, &next);
        regs.read_args(a);
        a.sti(W::Wd, FP, -4, 0).mov(R2, FP).addi(R2, -4);
        a.map(R1, scratch)
            .call(HELPER_MAP_LOOKUP)
            .jump_if(JEQ, R0, 0, &next);
        a.mov(R7, R0)
            .sti(W::H, R7, 0, i32::from(TAG))
            .sti(W::B, R7, 2, i32::from(KIND_PATH))
            .sti(W::B, R7, 3, i32::from(p.which))
            .st(W::Wd, R7, 4, R8);
        match p.dirfd {
            Some(i) => arg(a, R1, i),
            None => {
                a.movi(R1, libc::AT_FDCWD);
            }
        };
        a.st(W::Dw, R7, 8, R1).sti(W::Dw, R7, 16, 0);
        if let Some(i) = p.how {
            arg(a, R3, i);
            a.mov(R1, R7).addi(R1, 16).movi(R2, 8);
            a.call(HELPER_PROBE_READ_USER);
        }
        arg(a, R3, p.path);
        a.mov(R1, R7).addi(R1, PATH_HEAD).movi(R2, PATH_MAX);
        let (read, sized) = (format!("read{i}"), format!("sized{i}"));
        a.call(HELPER_PROBE_READ_USER_STR)
            .jump_if(JSGT, R0, 0, &read)
            .movi(R0, 0)
            .label(&read)
            .jump_if(JSLE, R0, PATH_MAX, &sized)
            .movi(R0, PATH_MAX)
            .label(&sized)
            .mov(R5, R0)
            .addi(R5, PATH_HEAD);
        a.mov(R1, R6).map(R2, out).movi32(R3, -1).mov(R4, R7);
        a.call(HELPER_PERF_EVENT_OUTPUT);
        a.label(&next);
    }
}

/// Reads `len` bytes at kernel address `R3` into the stack at `to`; on failure jumps to
/// "emit".
fn read_kernel(a: &mut Asm, to: i32, len: i32) {
    a.mov(R1, FP).addi(R1, to).movi(R2, len);
    a.call(HELPER_PROBE_READ_KERNEL).jump_if(JNE, R0, 0, "emit");
}

/// The exit program, on the `sys_exit` raw tracepoint: what each open opened
/// ([`exit_opened`]).
pub(super) fn exit_program(
    regs: &Regs,
    o: Offsets,
    opens: &[i64],
    (scratch, out): (&OwnedFd, &OwnedFd),
) -> Vec<BpfInsn> {
    let mut a = Asm::default();
    a.mov(R6, R1);
    regs.nr(&mut a, R8);
    exit_opened(&mut a, (o, regs), opens, (scratch, out));
    a.movi(R0, 0).exit();
    a.finish()
}

/// With R6 the `sys_exit` context and R8 the call's number: for an open of `opens` that
/// returned a descriptor, the opened inode's size and mode and its file system's magic
/// (zeros where a read fails), sent out, then (and for one that found nothing at its path)
/// its path read again ([`exit_path`]); falls through at the end.
pub(super) fn exit_opened(
    a: &mut Asm,
    (o, regs): (Offsets, &Regs),
    opens: &[i64],
    (scratch, out): (&OwnedFd, &OwnedFd),
) {
    // The record at fp-48 (40 bytes): tag/kind, nr, fd, size, mode, magic; fp-56: scratch.
    a.mov(R7, R8);
    for nr in opens {
        a.jump_if(JEQ, R7, *nr as i32, "open");
    }
    a.goto("opened").label("open");
    // A failed open says nothing of a file, but one that found nothing at its path (a look)
    // had its path read by the kernel: read it again too.
    a.ld(W::Dw, R8, R6, EXIT_RET)
        .jump_if(JSGT, R8, -1, "open_gave_fd")
        .jump_if(JNE, R8, -libc::ENOENT, "opened")
        .goto("exit_path")
        .label("open_gave_fd");
    a.sti(W::H, FP, -48, i32::from(TAG))
        .sti(W::H, FP, -46, i32::from(KIND_OPENED))
        .st(W::Wd, FP, -44, R7)
        .st(W::Dw, FP, -40, R8);
    for at in [-32, -24, -16, -56] {
        a.sti(W::Dw, FP, at, 0);
    }
    a.call(HELPER_GET_CURRENT_TASK).mov(R9, R0);
    // r9 = *(r9 + off), through the scratch slot.
    let follow = |a: &mut Asm, off: i32| {
        a.mov(R3, R9).addi(R3, off);
        read_kernel(a, -56, 8);
        a.ld(W::Dw, R9, FP, -56);
    };
    follow(a, o.files);
    follow(a, o.fdt);
    // The descriptor must be inside the table.
    a.mov(R3, R9).addi(R3, o.max_fds);
    read_kernel(a, -56, 4);
    a.ld(W::Wd, R1, FP, -56)
        .jump_if_reg(JGE_REG, R8, R1, "emit");
    follow(a, o.fd);
    a.mov(R3, R8).lshi(R3, 3).add(R3, R9);
    read_kernel(a, -56, 8);
    a.ld(W::Dw, R9, FP, -56);
    follow(a, o.f_inode);
    a.mov(R3, R9).addi(R3, o.i_size);
    read_kernel(a, -32, 8);
    a.mov(R3, R9).addi(R3, o.i_mode);
    read_kernel(a, -24, 2);
    follow(a, o.i_sb);
    a.mov(R3, R9).addi(R3, o.s_magic);
    read_kernel(a, -16, 8);
    a.label("emit")
        .mov(R1, R6)
        .map(R2, out)
        .movi32(R3, -1)
        .mov(R4, FP)
        .addi(R4, -48)
        .movi(R5, 40)
        .call(HELPER_PERF_EVENT_OUTPUT);
    exit_path(a, regs, scratch, out);
    a.label("opened");
}

/// With R6 the `sys_exit` context and R7 the number of an open that returned a descriptor
/// (or found nothing at its path, -ENOENT): its path read again, sent out as a
/// `KIND_EXIT_PATH` record (a path record's layout, no directory fd or flags). The kernel
/// has read the path by now, so its page is in memory,
/// where at the call's entry it may not have been (a path in a page the program had not
/// touched yet: the entry's copy cannot fault it in, and comes back empty). Jumps to
/// "opened" where there is nothing to send.
fn exit_path(a: &mut Asm, regs: &Regs, scratch: &OwnedFd, out: &OwnedFd) {
    a.label("exit_path");
    regs.read_args(a);
    a.sti(W::Wd, FP, -4, 0).mov(R2, FP).addi(R2, -4);
    a.map(R1, scratch)
        .call(HELPER_MAP_LOOKUP)
        .jump_if(JEQ, R0, 0, "opened");
    a.mov(R9, R0)
        .sti(W::H, R9, 0, i32::from(TAG))
        .sti(W::B, R9, 2, i32::from(KIND_EXIT_PATH))
        .sti(W::B, R9, 3, 0)
        .st(W::Wd, R9, 4, R7)
        .sti(W::Dw, R9, 8, 0)
        .sti(W::Dw, R9, 16, 0);
    // R3 = the open's path argument.
    for p in PROBES
        .iter()
        .filter(|p| OPENS.contains(&p.call) && p.which == 0)
    {
        let Some(nr) = p.call.number() else { continue };
        let other = format!("exit_path_not_{nr}");
        a.jump_if(JNE, R7, nr as i32, &other);
        regs.arg(a, R3, usize::from(p.path));
        a.goto("exit_path_read").label(&other);
    }
    a.goto("opened").label("exit_path_read");
    a.mov(R1, R9).addi(R1, PATH_HEAD).movi(R2, PATH_MAX);
    a.call(HELPER_PROBE_READ_USER_STR)
        .jump_if(JSLE, R0, 0, "opened")
        .jump_if(JSLE, R0, PATH_MAX, "exit_path_sized")
        .movi(R0, PATH_MAX)
        .label("exit_path_sized")
        .mov(R5, R0)
        .addi(R5, PATH_HEAD);
    a.mov(R1, R6).map(R2, out).movi32(R3, -1).mov(R4, R9);
    a.call(HELPER_PERF_EVENT_OUTPUT);
}
