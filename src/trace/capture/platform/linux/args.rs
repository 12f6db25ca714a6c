//! A recorded call's arguments in the trace's terms: the open flags and preadv2/pwritev2's
//! RWF_* flags as event flags, and the paths calls name made lexical (no `.`, `..` or doubled
//! slashes). Pure functions the decoder uses.

use crate::trace::recording::flag;

/// The event flags an open's status flags give.
pub fn io_flags(flags: u64) -> u16 {
    let mut f = 0;
    if flags & libc::O_DIRECT as u64 != 0 {
        f |= flag::DIRECT;
    }
    if flags & libc::O_SYNC as u64 == libc::O_SYNC as u64 {
        f |= flag::SYNC;
    } else if flags & libc::O_DSYNC as u64 != 0 {
        f |= flag::DSYNC;
    }
    if flags & libc::O_APPEND as u64 != 0 {
        f |= flag::APPEND;
    }
    f
}

/// preadv2/pwritev2's RWF_* flags as event flags.
pub fn rwf_flags(rwf: u64) -> u16 {
    let mut f = 0;
    if rwf & 2 != 0 {
        f |= flag::DSYNC;
    }
    if rwf & 4 != 0 {
        f |= flag::SYNC;
    }
    if rwf & 16 != 0 {
        f |= flag::APPEND;
    }
    f
}

/// An absolute path without its `.` and `..` components and repeated slashes, read as written
/// (a `..` after a symbolic link is taken lexically, as a shell's `cd` does); a relative path
/// (its directory unknown) is left as it is.
pub fn lexical(path: Vec<u8>) -> Vec<u8> {
    if path.first() != Some(&b'/') {
        return path;
    }
    let mut parts: Vec<&[u8]> = Vec::new();
    for part in path.split(|&b| b == b'/') {
        match part {
            b"" | b"." => {}
            b".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    let mut out = Vec::with_capacity(path.len());
    for p in parts {
        out.push(b'/');
        out.extend_from_slice(p);
    }
    if out.is_empty() {
        out.push(b'/');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::lexical;

    #[test]
    fn paths_lose_dots_and_doubled_slashes() {
        let l = |p: &str| String::from_utf8(lexical(p.as_bytes().to_vec())).unwrap();
        assert_eq!(l("/tmp/./f"), "/tmp/f");
        assert_eq!(l("/tmp/a/../b//c/."), "/tmp/b/c");
        assert_eq!(l("/.."), "/");
        assert_eq!(l("/"), "/");
        assert_eq!(l("rel/./x"), "rel/./x");
    }
}
