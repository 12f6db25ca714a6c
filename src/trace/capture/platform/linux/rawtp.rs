//! The capture's eBPF programs run on the kernel's raw tracepoints (BPF_RAW_TRACEPOINT_OPEN),
//! not through perf events on the tracing system's events. The difference is what taking
//! them off costs: the last perf event on a tracepoint waits, as it closes, for the kernel's
//! tracepoint grace periods — about 40 ms a tracepoint on this project's VM, one tracepoint
//! after another, 0.6 s at the end of every recording for the fourteen the capture used —
//! where a raw tracepoint's program is taken off at once when its descriptor closes (freed
//! later by an RCU callback). What a call costs the traced program is the same on both.
//!
//! A raw program's context is the tracepoint's own arguments, one 64-bit word each, not the
//! tracing system's record of them: `sys_enter` passes the call's saved registers and its
//! number, `sys_exit` the registers and the result. The call's arguments (and at its exit,
//! its number) are read from the registers, at the offsets the kernel's BTF gives for this
//! architecture's `struct pt_regs`.

use std::sync::OnceLock;

use super::bpf::NoProbes;
use super::bpf_asm::*;
use super::btf::{BadBtf, Btf};

/// BPF_PROG_TYPE_RAW_TRACEPOINT.
pub(super) const PROG_RAW_TRACEPOINT: u32 = 17;

/// The offset of a raw program's context word `i` (the tracepoint's argument `i`).
pub(super) const fn word(i: i32) -> i32 {
    8 * i
}

/// `sys_enter`'s second word: the call's number; `sys_exit`'s: its result.
pub(super) const ENTER_NR: i32 = word(1);
pub(super) const EXIT_RET: i32 = word(1);

/// Where the registers read are kept on a program's stack: its bottom 136 bytes (the
/// programs' own records lie above, nearer the frame pointer).
const REGS_AT: i32 = -512;
const REGS_ROOM: i32 = 128;
const NR_AT: i32 = REGS_AT + REGS_ROOM;
/// The widest stretch of the registers read in one copy.
const SPAN: i32 = 64;

/// Where a system call's arguments and number lie in the registers the kernel saved at its
/// entry, and how they are copied onto a program's stack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Regs {
    /// Each argument's offset in `struct pt_regs`.
    args: [i32; 6],
    /// The call number's offset and width (bytes).
    nr: i32,
    nr_bytes: i32,
    /// The copies [`Regs::read_args`] makes: (offset in pt_regs, bytes, stack offset).
    spans: Vec<(i32, i32, i32)>,
}

impl Regs {
    /// This kernel's layout (read once).
    pub(super) fn kernel() -> Result<&'static Regs, NoProbes> {
        static CACHE: OnceLock<Result<Regs, String>> = OnceLock::new();
        CACHE
            .get_or_init(|| {
                let btf = Btf::kernel().map_err(|e| e.to_string())?;
                Regs::of(btf).map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(|e| NoProbes(e.clone()))
    }

    /// The layout `btf` describes for the architecture this is built for: the registers
    /// the kernel's `syscall_get_arguments` and `syscall_get_nr` read.
    fn of(btf: &Btf) -> Result<Regs, BadBtf> {
        let o = |f: &str| btf.operand("pt_regs", f);
        #[cfg(target_arch = "x86_64")]
        let (args, nr, nr_bytes) = (
            [o("di")?, o("si")?, o("dx")?, o("r10")?, o("r8")?, o("r9")?],
            o("orig_ax")?,
            8,
        );
        // The first argument's register is the result's by the call's end: the kernel keeps
        // the argument in orig_x0.
        #[cfg(target_arch = "aarch64")]
        let (args, nr, nr_bytes) = {
            let x = o("regs")?;
            (
                [o("orig_x0")?, x + 8, x + 16, x + 24, x + 32, x + 40],
                o("syscallno")?,
                4,
            )
        };
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        let (args, nr, nr_bytes): ([i32; 6], i32, i32) = {
            let _ = o;
            return Err(BadBtf(format!(
                "a system call's registers on {} are not known to this build",
                std::env::consts::ARCH
            )));
        };
        Regs::laid_out(args, nr, nr_bytes)
    }

    /// Groups the arguments' offsets into stretches of at most [`SPAN`] bytes, each copied
    /// with one helper call (x86-64: one copy; aarch64: two).
    fn laid_out(args: [i32; 6], nr: i32, nr_bytes: i32) -> Result<Regs, BadBtf> {
        let mut sorted = args;
        sorted.sort_unstable();
        let mut spans: Vec<(i32, i32, i32)> = Vec::new();
        let mut room = 0;
        for off in sorted {
            match spans.last_mut() {
                Some((from, bytes, _)) if off + 8 - *from <= SPAN => *bytes = off + 8 - *from,
                _ => spans.push((off, 8, 0)),
            }
        }
        for s in &mut spans {
            s.2 = REGS_AT + room;
            room += s.1;
        }
        if room > REGS_ROOM || args.iter().any(|&a| a < 0 || a % 8 != 0) {
            return Err(BadBtf(format!(
                "the system call registers' layout {args:?} is not one this build reads"
            )));
        }
        Ok(Regs {
            args,
            nr,
            nr_bytes,
            spans,
        })
    }

    /// With R6 a `sys_enter` or `sys_exit` context: copies the registers that hold the
    /// call's arguments onto the stack (zeros where a copy fails). R1–R5 are clobbered.
    pub(super) fn read_args(&self, a: &mut Asm) {
        for &(from, bytes, to) in &self.spans {
            a.mov(R1, FP)
                .addi(R1, to)
                .movi(R2, bytes)
                .ld(W::Dw, R3, R6, word(0))
                .addi(R3, from);
            a.call(HELPER_PROBE_READ_KERNEL);
        }
    }

    /// `dst` = the call's argument `i`, once [`Regs::read_args`] has run.
    pub(super) fn arg(&self, a: &mut Asm, dst: u8, i: usize) {
        a.ld(W::Dw, dst, FP, self.arg_at(i));
    }

    /// The stack offset argument `i` is copied to.
    fn arg_at(&self, i: usize) -> i32 {
        let off = self.args[i];
        let &(from, _, to) = self
            .spans
            .iter()
            .find(|(from, bytes, _)| (*from..*from + *bytes).contains(&off))
            .expect("every argument is in a span");
        to + off - from
    }

    /// With R6 a `sys_exit` context: `dst` = the call's number (R1–R5 clobbered; where the
    /// copy fails, a number no call has).
    pub(super) fn nr(&self, a: &mut Asm, dst: u8) {
        let read = format!("nr_read{}", a.len());
        a.sti(W::Dw, FP, NR_AT, 0);
        a.mov(R1, FP)
            .addi(R1, NR_AT)
            .movi(R2, self.nr_bytes)
            .ld(W::Dw, R3, R6, word(0))
            .addi(R3, self.nr);
        a.call(HELPER_PROBE_READ_KERNEL);
        let w = if self.nr_bytes == 8 { W::Dw } else { W::Wd };
        // A failed copy leaves zeros: x86-64's `read`.
        a.ld(w, dst, FP, NR_AT)
            .jump_if(JEQ, R0, 0, &read)
            .movi(dst, -1)
            .label(&read);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_copied_in_as_few_stretches_as_fit() {
        // x86-64's pt_regs: di 112, si 104, dx 96, r10 56, r8 72, r9 64 — one copy of 64 bytes.
        let x86 = Regs::laid_out([112, 104, 96, 56, 72, 64], 120, 8).unwrap();
        assert_eq!(x86.spans, vec![(56, 64, REGS_AT)]);
        assert_eq!(x86.arg_at(0), REGS_AT + 112 - 56);
        assert_eq!(x86.arg_at(3), REGS_AT);
        // aarch64's: orig_x0 272, x1–x5 at 8–40 — two copies, 48 bytes of stack.
        let arm = Regs::laid_out([272, 8, 16, 24, 32, 40], 280, 4).unwrap();
        assert_eq!(arm.spans, vec![(8, 40, REGS_AT), (272, 8, REGS_AT + 40)]);
        assert_eq!(arm.arg_at(0), REGS_AT + 40);
        assert_eq!(arm.arg_at(5), REGS_AT + 32);
        // Scattered so widely the copies would not fit the room kept for them: refused.
        assert!(Regs::laid_out([0, 56, 200, 256, 400, 456], 0, 8).is_err());
        assert!(
            Regs::laid_out([0, 8, 16, 24, 32, 44], 0, 8).is_err(),
            "unaligned"
        );
    }

    #[test]
    fn this_kernels_layout_is_read_from_its_btf() {
        let btf = match Btf::kernel() {
            Ok(b) => b,
            Err(e) => {
                eprintln!("skipped: {e}");
                return;
            }
        };
        let regs = Regs::of(btf).unwrap();
        #[cfg(target_arch = "x86_64")]
        assert_eq!((regs.args, regs.nr), ([112, 104, 96, 56, 72, 64], 120));
        assert!(regs.spans.iter().map(|s| s.1).sum::<i32>() <= REGS_ROOM);
    }
}
