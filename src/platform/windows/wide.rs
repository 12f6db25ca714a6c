//! UTF-16 strings for the Win32 API's `W` functions.

use std::ffi::OsStr;
use std::os::windows::ffi::OsStrExt;

/// `s` as a NUL-terminated UTF-16 string.
pub(crate) fn wide(s: &OsStr) -> Vec<u16> {
    s.encode_wide().chain(Some(0)).collect()
}

/// The UTF-16 text in `buf` up to its first NUL, with anything unpaired replaced.
pub(crate) fn text(buf: &[u16]) -> String {
    let end = buf.iter().position(|&c| c == 0).unwrap_or(buf.len());
    String::from_utf16_lossy(&buf[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_utf16() {
        let w = wide(OsStr::new("C:\\sasdata\\é.dat"));
        assert_eq!(w.last(), Some(&0));
        assert_eq!(text(&w), "C:\\sasdata\\é.dat");
        assert_eq!(text(&[0x41, 0, 0x42]), "A");
    }
}
