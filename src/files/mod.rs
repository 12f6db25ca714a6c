//! Which files are iogauge's and how it touches them: the plan's files checked, created,
//! laid out, opened by descriptor and removed (`targets`), the mark that proves a file is
//! iogauge's and the identity-checked opens and removal (`ownership`), what the file system
//! says of a path (`fsinfo`), the rule for the files the user names — outputs written, inputs
//! read (`named`) — and the one writer of every output (`writer`).

/// Says why a unit test could not check what it is for, in `cargo test`'s normal output
/// (libtest captures a passing test's `print!`, not writes to the stderr handle).
#[cfg(test)]
macro_rules! skip_test {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let test = std::thread::current().name().unwrap_or("?").to_string();
        let _ = writeln!(std::io::stderr(), "SKIP {test}: {}", format!($($t)*));
    }};
}

pub mod emergency;
pub mod fsinfo;
pub mod named;
pub mod ownership;
pub mod renew;
pub mod replay;
pub mod targets;
pub mod writer;
