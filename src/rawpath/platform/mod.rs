//! A path's bytes made a path again: on Linux any bytes are a path (`OsString::from_vec`); on
//! Windows a path is UTF-16 and its bytes here are WTF-8 (`OsStr::as_encoded_bytes`), so bytes
//! no Windows name holds (a `\xNN` escape of a lone byte) are replaced, as they cannot name a
//! file there.

use std::ffi::OsString;

/// `bytes` (as `OsStr::as_encoded_bytes` gives them) as a path.
#[cfg(target_os = "linux")]
pub fn os_from_bytes(bytes: Vec<u8>) -> OsString {
    use std::os::unix::ffi::OsStringExt;
    OsString::from_vec(bytes)
}

/// `bytes` (as `OsStr::as_encoded_bytes` gives them) as a path.
#[cfg(windows)]
pub fn os_from_bytes(bytes: Vec<u8>) -> OsString {
    match String::from_utf8(bytes) {
        Ok(s) => s.into(),
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned().into(),
    }
}
