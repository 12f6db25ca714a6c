//! fio's `continue_on_error` and `ignore_error`: which failed I/Os a job counts and goes past
//! instead of stopping. As fio's: an error's class is verify for EILSEQ, read for a read, write
//! otherwise; a class continues when `continue_on_error` names it or `ignore_error` lists
//! errors for it; the errors it continues past are those listed, or else EIO and EILSEQ.

use super::value::ValueError;
use crate::platform::abi::errno;

/// The classes, as fio's bits.
pub const READ: u8 = 1;
pub const WRITE: u8 = 2;
pub const VERIFY: u8 = 4;

/// Which errors a job continues past (none by default).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContinueOn {
    /// The classes that continue (READ | WRITE | VERIFY bits).
    pub classes: u8,
    /// Per class (read, write, verify): the errnos continued past; empty: EIO and EILSEQ.
    pub lists: [Vec<i32>; 3],
}

/// fio's default non-fatal errors.
const NON_FATAL: [i32; 2] = [errno::EIO, errno::EILSEQ];

impl ContinueOn {
    /// Whether a failed I/O (a read when `read`, else a write or trim) with `errno` is
    /// counted and gone past.
    #[inline]
    pub fn continues(&self, read: bool, errno: i32) -> bool {
        if self.classes == 0 {
            return false;
        }
        let class = match (errno, read) {
            (errno::EILSEQ, _) => 2,
            (_, true) => 0,
            (_, false) => 1,
        };
        if self.classes & (1 << class) == 0 {
            return false;
        }
        match self.lists[class].is_empty() {
            true => NON_FATAL.contains(&errno),
            false => self.lists[class].contains(&errno),
        }
    }

    /// `continue_on_error`'s word as classes.
    pub fn classes_of(word: &str) -> u8 {
        match word {
            "read" => READ,
            "write" => WRITE,
            "io" => READ | WRITE,
            "verify" => VERIFY,
            "all" | "1" => READ | WRITE | VERIFY,
            _ => 0,
        }
    }

    /// `ignore_error=READ,WRITE,VERIFY` lists (each errno by name, `ENOSPC`, or number,
    /// separated by ':'): each list given turns its class on, as fio's does.
    pub fn with_ignored(mut self, text: &str) -> Result<ContinueOn, ValueError> {
        const TAKES: &str = "errno names (ENOSPC, EIO…) or numbers with ':' between them, in \
                             up to three lists (read,write,verify)";
        let parts: Vec<&str> = text.split(',').collect();
        if parts.len() > 3 {
            return Err(ValueError::Syntax(TAKES));
        }
        for (class, part) in parts.iter().enumerate() {
            let mut list = Vec::new();
            for name in part.split(':').map(str::trim).filter(|n| !n.is_empty()) {
                list.push(errno_of(name).ok_or(ValueError::Syntax(TAKES))?);
            }
            if !list.is_empty() {
                self.classes |= 1 << class;
                self.lists[class] = list;
            }
        }
        Ok(self)
    }
}

/// An errno by name (`ENOSPC`) or number (`28`, `-28`).
pub fn errno_of(name: &str) -> Option<i32> {
    if let Ok(n) = name.parse::<i32>() {
        return (n != 0).then_some(n.abs());
    }
    ERRNOS
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|&(_, e)| e)
}

/// The errno names an I/O can meet, and a few more.
const ERRNOS: &[(&str, i32)] = &[
    ("EPERM", errno::EPERM),
    ("ENOENT", errno::ENOENT),
    ("EINTR", errno::EINTR),
    ("EIO", errno::EIO),
    ("ENXIO", errno::ENXIO),
    ("EBADF", errno::EBADF),
    ("EAGAIN", errno::EAGAIN),
    ("EWOULDBLOCK", errno::EWOULDBLOCK),
    ("ENOMEM", errno::ENOMEM),
    ("EACCES", errno::EACCES),
    ("EFAULT", errno::EFAULT),
    ("EBUSY", errno::EBUSY),
    ("EEXIST", errno::EEXIST),
    ("ENODEV", errno::ENODEV),
    ("EINVAL", errno::EINVAL),
    ("ENFILE", errno::ENFILE),
    ("EMFILE", errno::EMFILE),
    ("ENOTTY", errno::ENOTTY),
    ("EFBIG", errno::EFBIG),
    ("ENOSPC", errno::ENOSPC),
    ("ESPIPE", errno::ESPIPE),
    ("EROFS", errno::EROFS),
    ("EPIPE", errno::EPIPE),
    ("ERANGE", errno::ERANGE),
    ("ENODATA", errno::ENODATA),
    ("ETIME", errno::ETIME),
    ("EILSEQ", errno::EILSEQ),
    ("EOPNOTSUPP", errno::EOPNOTSUPP),
    ("ENOTSUP", errno::ENOTSUP),
    ("ETIMEDOUT", errno::ETIMEDOUT),
    ("ECONNRESET", errno::ECONNRESET),
    ("ESTALE", errno::ESTALE),
    ("EREMOTEIO", errno::EREMOTEIO),
    ("EDQUOT", errno::EDQUOT),
    ("ECANCELED", errno::ECANCELED),
    ("EMEDIUMTYPE", errno::EMEDIUMTYPE),
    ("ENOMEDIUM", errno::ENOMEDIUM),
    ("EBADMSG", errno::EBADMSG),
    ("EOVERFLOW", errno::EOVERFLOW),
    ("ENOLINK", errno::ENOLINK),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_and_lists_follow_fio() {
        // write: EIO and EILSEQ by default; reads still stop.
        let c = ContinueOn {
            classes: ContinueOn::classes_of("write"),
            ..Default::default()
        };
        assert!(c.continues(false, errno::EIO));
        assert!(!c.continues(false, errno::ENOSPC));
        assert!(!c.continues(true, errno::EIO));
        // EILSEQ is a verify error whatever the direction.
        assert!(!c.continues(false, errno::EILSEQ));
        // enospc-pressure.fio: ignore_error=,ENOSPC replaces write's list.
        let c = c.with_ignored(",ENOSPC").unwrap();
        assert!(c.continues(false, errno::ENOSPC) && !c.continues(false, errno::EIO));
        // A list alone turns its class on: EAGAIN from reads, ENOSPC and 122 from writes.
        let c = ContinueOn::default()
            .with_ignored("EAGAIN,ENOSPC:122")
            .unwrap();
        assert_eq!(c.classes, READ | WRITE);
        assert!(c.continues(true, errno::EAGAIN) && c.continues(false, 122));
        assert!(ContinueOn::default().with_ignored("EBOGUS").is_err());
        assert!(!ContinueOn::default().continues(false, errno::EIO));
    }
}
