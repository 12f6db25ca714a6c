//! A small eBPF assembler for the capture's programs (`pathprog.rs`, `callring.rs`, `aio.rs`,
//! `uring.rs`): registers, the helpers they call, memory access widths, and jumps to named
//! labels patched when the program is finished.

use std::collections::HashMap;
use std::os::fd::{AsRawFd, OwnedFd};

use super::sys::BpfInsn;

/// A small eBPF assembler: instructions, and jumps to labels patched at the end.
#[derive(Default)]
pub(super) struct Asm {
    code: Vec<BpfInsn>,
    jumps: Vec<(usize, String)>,
    labels: HashMap<String, usize>,
}

pub(super) const R0: u8 = 0;
pub(super) const R1: u8 = 1;
pub(super) const R2: u8 = 2;
pub(super) const R3: u8 = 3;
pub(super) const R4: u8 = 4;
pub(super) const R5: u8 = 5;
pub(super) const R6: u8 = 6;
pub(super) const R7: u8 = 7;
pub(super) const R8: u8 = 8;
pub(super) const R9: u8 = 9;
pub(super) const FP: u8 = 10;

pub(super) const HELPER_MAP_LOOKUP: i32 = 1;
pub(super) const HELPER_MAP_UPDATE: i32 = 2;
pub(super) const HELPER_MAP_DELETE: i32 = 3;
pub(super) const HELPER_KTIME_GET_NS: i32 = 5;
pub(super) const HELPER_GET_CURRENT_PID_TGID: i32 = 14;
pub(super) const HELPER_PERF_EVENT_OUTPUT: i32 = 25;
pub(super) const HELPER_GET_CURRENT_TASK: i32 = 35;
pub(super) const HELPER_PROBE_READ_USER: i32 = 112;
pub(super) const HELPER_PROBE_READ_KERNEL: i32 = 113;
pub(super) const HELPER_PROBE_READ_USER_STR: i32 = 114;
pub(super) const HELPER_RINGBUF_OUTPUT: i32 = 130;

/// Memory access widths: (load, store register, store immediate) opcodes.
#[derive(Clone, Copy)]
pub(super) enum W {
    B,
    H,
    Wd,
    Dw,
}

impl W {
    pub(super) fn ops(self) -> (u8, u8, u8) {
        match self {
            W::B => (0x71, 0x73, 0x72),
            W::H => (0x69, 0x6b, 0x6a),
            W::Wd => (0x61, 0x63, 0x62),
            W::Dw => (0x79, 0x7b, 0x7a),
        }
    }
}

impl Asm {
    pub(super) fn op(&mut self, code: u8, dst: u8, src: u8, off: i16, imm: i32) -> &mut Self {
        self.code.push(BpfInsn {
            code,
            regs: dst | (src << 4),
            off,
            imm,
        });
        self
    }
    pub(super) fn mov(&mut self, dst: u8, src: u8) -> &mut Self {
        self.op(0xbf, dst, src, 0, 0)
    }
    pub(super) fn movi(&mut self, dst: u8, imm: i32) -> &mut Self {
        self.op(0xb7, dst, 0, 0, imm)
    }
    /// A 32-bit move: the upper half is zero (BPF_F_CURRENT_CPU must not be sign-extended).
    pub(super) fn movi32(&mut self, dst: u8, imm: i32) -> &mut Self {
        self.op(0xb4, dst, 0, 0, imm)
    }
    pub(super) fn addi(&mut self, dst: u8, imm: i32) -> &mut Self {
        self.op(0x07, dst, 0, 0, imm)
    }
    pub(super) fn add(&mut self, dst: u8, src: u8) -> &mut Self {
        self.op(0x0f, dst, src, 0, 0)
    }
    pub(super) fn lshi(&mut self, dst: u8, imm: i32) -> &mut Self {
        self.op(0x67, dst, 0, 0, imm)
    }
    pub(super) fn ld(&mut self, w: W, dst: u8, src: u8, off: i32) -> &mut Self {
        self.op(w.ops().0, dst, src, off as i16, 0)
    }
    pub(super) fn st(&mut self, w: W, dst: u8, off: i32, src: u8) -> &mut Self {
        self.op(w.ops().1, dst, src, off as i16, 0)
    }
    pub(super) fn sti(&mut self, w: W, dst: u8, off: i32, imm: i32) -> &mut Self {
        self.op(w.ops().2, dst, 0, off as i16, imm)
    }
    pub(super) fn call(&mut self, helper: i32) -> &mut Self {
        self.op(0x85, 0, 0, 0, helper)
    }
    pub(super) fn map(&mut self, dst: u8, map: &OwnedFd) -> &mut Self {
        // ld_imm64 with src = BPF_PSEUDO_MAP_FD: two instructions.
        self.op(0x18, dst, 1, 0, map.as_raw_fd());
        self.op(0, 0, 0, 0, 0)
    }
    /// A conditional jump (`code`: the BPF_JMP|op|BPF_K opcode) on `dst` against `imm`.
    pub(super) fn jump_if(&mut self, code: u8, dst: u8, imm: i32, to: &str) -> &mut Self {
        self.jumps.push((self.code.len(), to.to_string()));
        self.op(code, dst, 0, 0, imm)
    }
    /// A conditional jump on `dst` against register `src`.
    pub(super) fn jump_if_reg(&mut self, code: u8, dst: u8, src: u8, to: &str) -> &mut Self {
        self.jumps.push((self.code.len(), to.to_string()));
        self.op(code, dst, src, 0, 0)
    }
    /// A label here. Programs are put together from several pieces of code: a name used twice
    /// would send one piece's jumps into the other's, so it is refused.
    pub(super) fn label(&mut self, name: &str) -> &mut Self {
        let before = self.labels.insert(name.to_string(), self.code.len());
        assert!(before.is_none(), "eBPF label {name} placed twice");
        self
    }
    /// An unconditional jump.
    pub(super) fn goto(&mut self, to: &str) -> &mut Self {
        self.jumps.push((self.code.len(), to.to_string()));
        self.op(0x05, 0, 0, 0, 0)
    }
    pub(super) fn exit(&mut self) -> &mut Self {
        self.op(0x95, 0, 0, 0, 0)
    }
    /// How many instructions so far (a name for labels that must not repeat).
    pub(super) fn len(&self) -> usize {
        self.code.len()
    }
    pub(super) fn finish(mut self) -> Vec<BpfInsn> {
        for (at, to) in std::mem::take(&mut self.jumps) {
            let target = self.labels[&to];
            self.code[at].off = (target as i64 - at as i64 - 1) as i16;
        }
        self.code
    }
}

/// A whole program of `code`, with R6 the context, returning 0.
pub(super) fn program(code: impl FnOnce(&mut Asm)) -> Vec<BpfInsn> {
    let mut a = Asm::default();
    a.mov(R6, R1);
    code(&mut a);
    a.movi(R0, 0).exit();
    a.finish()
}

/// A call's number as an instruction's operand (-1, which no call has, for one this
/// architecture lacks).
pub(super) fn call_nr(call: super::calls::Call) -> i32 {
    call.number().map_or(-1, |n| n as i32)
}

pub(super) const JEQ: u8 = 0x15;
pub(super) const JNE: u8 = 0x55;
pub(super) const JSGT: u8 = 0x65;
pub(super) const JSLE: u8 = 0xd5;
/// Unsigned ≤.
pub(super) const JLE: u8 = 0xb5;
pub(super) const JSLT: u8 = 0xc5;
pub(super) const JGE_REG: u8 = 0x3d;
pub(super) const JNE_REG: u8 = 0x5d;
