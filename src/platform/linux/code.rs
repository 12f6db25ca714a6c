//! A block of generated machine code to time instruction fetch with: one jump per cache line,
//! through lines of an executable mapping in a random order, the last line returning. Running
//! it right after a sleep and again at once shows what a wake-up costs a program's code (the
//! instruction cache, its TLB and the branch predictor), which a chase through data does not
//! (`stats::cold`). Written while the mapping is writable, then made read-and-execute only,
//! never both. x86-64 only: elsewhere (and where the system refuses executable anonymous
//! memory) `CodeChain::new` says why not, and the caller measures data alone.

/// An executable chain of jumps through `bytes` of code.
#[cfg(target_arch = "x86_64")]
pub struct CodeChain {
    map: *mut libc::c_void,
    entry: usize,
    len: usize,
}

/// Nothing to run where no chain can be built.
#[cfg(not(target_arch = "x86_64"))]
pub struct CodeChain;

#[cfg(not(target_arch = "x86_64"))]
impl CodeChain {
    pub fn new(_bytes: usize, _order: &[usize]) -> std::io::Result<CodeChain> {
        Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            format!(
                "generated code is only run on x86-64 (this is {})",
                std::env::consts::ARCH
            ),
        ))
    }

    pub fn run(&self) {}
}

#[cfg(target_arch = "x86_64")]
impl CodeChain {
    /// A chain through every 64-byte line of `bytes` (up to 1 GiB), in the order `order`
    /// gives (a permutation of the lines: each line jumps to the next in it).
    pub fn new(bytes: usize, order: &[usize]) -> std::io::Result<CodeChain> {
        let lines = bytes / 64;
        // A permutation, or the chain could loop: a line written twice would jump back.
        let mut seen = vec![false; lines];
        let whole = order.len() == lines
            && order
                .iter()
                .all(|&l| l < lines && !std::mem::replace(&mut seen[l], true));
        // A jump's displacement is 32 bits.
        if lines == 0 || !whole || bytes > 1 << 30 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("{} lines are not a chain through {bytes} B", order.len()),
            ));
        }
        // SAFETY: an anonymous private mapping of `bytes`, not yet executable; checked below.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if map == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let chain = CodeChain {
            map,
            entry: order[0] * 64,
            len: bytes,
        };
        // SAFETY: `map` is `bytes` long, writable and ours alone until it is made executable.
        let code = unsafe { std::slice::from_raw_parts_mut(map as *mut u8, bytes) };
        // int3 everywhere: a jump that went wrong traps instead of running on.
        code.fill(0xcc);
        for (k, &line) in order.iter().enumerate() {
            let at = line * 64;
            match order.get(k + 1) {
                Some(&next) => {
                    // jmp rel32: from the end of this 5-byte instruction to the next line.
                    let rel = (next * 64) as i64 - (at + 5) as i64;
                    code[at] = 0xe9;
                    code[at + 1..at + 5].copy_from_slice(&(rel as i32).to_le_bytes());
                }
                None => code[at] = 0xc3,
            }
        }
        // SAFETY: the whole mapping, ours; from here on it is never written again.
        if unsafe { libc::mprotect(map, bytes, libc::PROT_READ | libc::PROT_EXEC) } != 0 {
            // Refused where the system forbids executable anonymous memory (SELinux's execmem).
            return Err(std::io::Error::last_os_error());
        }
        Ok(chain)
    }

    /// Runs the chain once, through every line.
    pub fn run(&self) {
        // SAFETY: `entry` is the first line of a chain built by `new`: each line jumps to
        // another line of the mapping and the last returns, so the call comes back having
        // touched no memory and no register a C function may not (only rip and rsp, as a call
        // and its ret do). The mapping lives as long as `self`.
        unsafe {
            let f: extern "C" fn() = std::mem::transmute((self.map as *const u8).add(self.entry));
            f();
        }
    }
}

#[cfg(target_arch = "x86_64")]
impl Drop for CodeChain {
    fn drop(&mut self) {
        // SAFETY: the mapping `new` made, of `len` bytes, no longer used.
        unsafe {
            libc::munmap(self.map, self.len);
        }
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;

    #[test]
    fn a_chain_runs_through_and_returns() {
        let lines = 4096 / 64;
        let order: Vec<usize> = (0..lines).rev().collect();
        let c = CodeChain::new(4096, &order).expect("an executable mapping");
        c.run();
        c.run();
    }

    #[test]
    fn an_order_that_is_not_the_buffer_s_lines_is_refused() {
        assert!(CodeChain::new(4096, &[0, 1, 2]).is_err());
        assert!(CodeChain::new(4096, &[64; 64]).is_err());
        // Every line twice over would loop for ever.
        let twice: Vec<usize> = (0..64).map(|l| l / 2).collect();
        assert!(CodeChain::new(4096, &twice).is_err());
    }
}
