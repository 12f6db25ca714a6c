//! Generated code to time instruction fetch with (Linux's half builds a chain of jumps): not
//! built on Windows, where `stats::cold` measures data alone and says so.

/// Nothing to run: no chain is built here.
pub struct CodeChain;

impl CodeChain {
    pub fn new(_bytes: usize, _order: &[usize]) -> std::io::Result<CodeChain> {
        Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "generated code is not run on Windows",
        ))
    }

    pub fn run(&self) {}
}
