//! Linux paths are bytes. Option values travel as text (sections hold `String`s), so a byte
//! that is not part of valid UTF-8, in an argument or a job file, is carried losslessly as one
//! private-use character (byte `0xNN` as U+10FFNN, for 0x80..=0xFF) and turned back into that
//! byte where a value becomes a path. Text that already holds such a character is refused, so
//! the mapping cannot be ambiguous; a path that still holds one when it reaches the file system
//! is refused too (see `ownership`), so no value ever names another file than the user's bytes.
//! Messages show carried bytes as `\xNN`. Nothing here touches the file system.

use std::borrow::Cow;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

mod platform;
pub use platform::os_from_bytes;

/// U+10FF00 + byte: the character that carries a raw byte.
const BASE: u32 = 0x10_FF00;

fn carrier(c: char) -> Option<u8> {
    let v = c as u32;
    (BASE + 0x80..=BASE + 0xFF)
        .contains(&v)
        .then(|| (v - BASE) as u8)
}

/// Text that holds a carrier character itself: it could not be told from a carried byte.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the character U+{:X} is reserved here (iogauge uses it to carry bytes that are not UTF-8)",
    *.0 as u32
)]
pub struct Reserved(pub char);

/// Text for `bytes`: valid UTF-8 as it is, every other byte as its carrier. Refuses text that
/// holds a carrier character itself; the error says which character.
pub fn from_bytes(bytes: &[u8]) -> Result<String, Reserved> {
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        if let Some(c) = chunk.valid().chars().find(|c| carrier(*c).is_some()) {
            return Err(Reserved(c));
        }
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            out.push(char::from_u32(BASE + u32::from(*b)).expect("a valid code point"));
        }
    }
    Ok(out)
}

/// An argument as text (see [`from_bytes`]).
pub fn from_os(s: OsString) -> Result<String, Reserved> {
    match s.into_string() {
        Ok(text) => from_bytes(text.as_bytes()).map(|_| text),
        Err(s) => from_bytes(s.as_encoded_bytes()),
    }
}

/// A path as option text, so that [`path`] gives it back byte for byte: how a front end puts a
/// path it holds into a section (never `to_string_lossy`, which names another file).
pub fn text(p: &Path) -> String {
    let mut out = String::new();
    let mut carry = |b: u8| char::from_u32(BASE + u32::from(b)).expect("a valid code point");
    for chunk in p.as_os_str().as_encoded_bytes().utf8_chunks() {
        for c in chunk.valid().chars() {
            if carrier(c).is_some() {
                // Reserved as a character: carried as its bytes instead.
                let mut buf = [0u8; 4];
                out.extend(c.encode_utf8(&mut buf).bytes().map(&mut carry));
            } else {
                out.push(c);
            }
        }
        out.extend(chunk.invalid().iter().map(|b| carry(*b)));
    }
    out
}

/// A path as the value of `filename`, which lists paths separated by ':': [`text`] with
/// each ':' escaped as fio escapes it (`\:`), so a path holding one stays one path.
pub fn filename_value(p: &Path) -> String {
    text(p).replace(':', "\\:")
}

/// The bytes `text` carries.
pub fn to_bytes(text: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    for c in text.chars() {
        match carrier(c) {
            Some(b) => out.push(b),
            None => {
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    out
}

/// The path a value names: its carried bytes restored.
pub fn path(text: &str) -> PathBuf {
    if !text.chars().any(|c| carrier(c).is_some()) {
        return PathBuf::from(text);
    }
    PathBuf::from(platform::os_from_bytes(to_bytes(text)))
}

/// Whether a path still holds a carrier character (a value that was not turned into a path
/// through [`path`]).
pub fn undecoded(p: &Path) -> bool {
    // U+10FF80..=U+10FFFF in UTF-8: F4 8F BE 80 ..= F4 8F BF BF.
    p.as_os_str()
        .as_encoded_bytes()
        .windows(3)
        .any(|w| w[0] == 0xF4 && w[1] == 0x8F && (w[2] == 0xBE || w[2] == 0xBF))
}

/// Text for a message: carried bytes shown as `\xNN`.
pub fn shown(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| carrier(c).is_some()) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match carrier(c) {
            Some(b) => out.push_str(&format!("\\x{b:02x}")),
            None => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// A path for a message or a report: UTF-8 as it is, other bytes as `\xNN`.
/// Orders names as people do: runs of digits by their value (`s.9.0` before `s.10.0`).
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    fn parts(s: &str) -> Vec<(bool, &str)> {
        let mut v = Vec::new();
        let mut start = 0;
        let b = s.as_bytes();
        for i in 1..=b.len() {
            if i == b.len() || b[i].is_ascii_digit() != b[start].is_ascii_digit() {
                v.push((b[start].is_ascii_digit(), &s[start..i]));
                start = i;
            }
        }
        v
    }
    let (pa, pb) = (parts(a), parts(b));
    for ((da, xa), (db, xb)) in pa.iter().zip(&pb) {
        let o = match (da, db) {
            (true, true) => {
                let (ta, tb) = (xa.trim_start_matches('0'), xb.trim_start_matches('0'));
                ta.len().cmp(&tb.len()).then(ta.cmp(tb))
            }
            _ => xa.cmp(xb),
        };
        if o != std::cmp::Ordering::Equal {
            return o;
        }
    }
    pa.len().cmp(&pb.len()).then(a.cmp(b))
}

/// Paths for a message: listed when there are a few; else, per directory, how many files and
/// the first and last (`256 files in /dev/shm/d (s.0.0 … s.255.0)`).
pub fn brief_list(paths: &[std::path::PathBuf]) -> String {
    const LIST: usize = 4;
    if paths.len() <= LIST {
        return paths
            .iter()
            .map(|p| display(p).into_owned())
            .collect::<Vec<_>>()
            .join(", ");
    }
    let mut dirs: Vec<(&Path, Vec<&Path>)> = Vec::new();
    for p in paths {
        let dir = p.parent().unwrap_or(Path::new(""));
        match dirs.iter_mut().find(|(d, _)| *d == dir) {
            Some((_, v)) => v.push(p),
            None => dirs.push((dir, vec![p])),
        }
    }
    for (_, v) in dirs.iter_mut() {
        v.sort_by(|a, b| natural_cmp(&display(a), &display(b)));
    }
    dirs.iter()
        .map(|(dir, v)| match v.as_slice() {
            [one] => display(one).into_owned(),
            [first, .., last] => {
                let name =
                    |p: &Path| display(Path::new(p.file_name().unwrap_or_default())).into_owned();
                format!(
                    "{} files in {} ({} … {})",
                    v.len(),
                    display(dir),
                    name(first),
                    name(last)
                )
            }
            [] => String::new(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

pub fn display(p: &Path) -> Cow<'_, str> {
    let bytes = p.as_os_str().as_encoded_bytes();
    match std::str::from_utf8(bytes) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => {
            let mut out = String::new();
            for chunk in bytes.utf8_chunks() {
                out.push_str(chunk.valid());
                for b in chunk.invalid() {
                    out.push_str(&format!("\\x{b:02x}"));
                }
            }
            Cow::Owned(out)
        }
    }
}

/// Serialises a path as text: UTF-8 as it is, other bytes as `\xNN` (serde's own refuses a
/// path that is not UTF-8); reads it back as that text.
pub mod serde_path {
    use std::path::{Path, PathBuf};

    pub fn serialize<S: serde::Serializer>(p: &Path, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&super::display(p))
    }

    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<PathBuf, D::Error> {
        let text: String = serde::Deserialize::deserialize(d)?;
        Ok(PathBuf::from(text))
    }
}

/// [`serde_path`] for a list of paths.
pub mod serde_paths {
    use std::path::PathBuf;

    pub fn serialize<S: serde::Serializer>(v: &[PathBuf], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(v.iter().map(|p| super::display(p)))
    }

    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<PathBuf>, D::Error> {
        let v: Vec<String> = serde::Deserialize::deserialize(d)?;
        Ok(v.into_iter().map(PathBuf::from).collect())
    }
}

/// The directory holding `p` (`.` for a bare file name).
pub fn parent_dir(p: &Path) -> &Path {
    p.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_paths_are_named_per_directory_in_natural_order() {
        use std::cmp::Ordering::*;
        assert_eq!(natural_cmp("s.9.0", "s.10.0"), Less);
        assert_eq!(natural_cmp("s.10.0", "s.10.0"), Equal);
        assert_eq!(
            natural_cmp("a2", "a02"),
            Greater,
            "equal values: the text decides"
        );
        assert_eq!(natural_cmp("b", "a10"), Greater);
        let few: Vec<PathBuf> = ["/d/a", "/e/b"].iter().map(PathBuf::from).collect();
        assert_eq!(brief_list(&few), "/d/a, /e/b");
        let mut many: Vec<PathBuf> = (0..12)
            .map(|i| PathBuf::from(format!("/d/s.{i}.0")))
            .collect();
        many.push(PathBuf::from("/other/x"));
        assert_eq!(
            brief_list(&many),
            "12 files in /d (s.0.0 … s.11.0), /other/x"
        );
    }

    #[test]
    fn bytes_round_trip_through_text() {
        if !crate::platform::testing::ANY_BYTES_IN_PATHS {
            eprintln!("skipped: paths here are text (UTF-16), they carry no stray bytes");
            return;
        }
        for bytes in [
            &b"plain"[..],
            b"t\xe9",
            b"\xff",
            b"caf\xc3\xa9 \x80\xfe",
            b"\xf4\x8f",
        ] {
            let text = from_bytes(bytes).unwrap();
            assert_eq!(to_bytes(&text), bytes);
            assert_eq!(text, super::text(&path(&text)));
            assert_eq!(path(&text).as_os_str().as_encoded_bytes(), bytes);
            assert!(!undecoded(&path(&text)));
        }
        assert_eq!(shown(&from_bytes(b"t\xe9").unwrap()), "t\\xe9");
        assert_eq!(filename_value(Path::new("/d/a:b")), "/d/a\\:b");
        let odd = platform::os_from_bytes(b"a\xff".to_vec());
        assert_eq!(display(Path::new(&odd)), "a\\xff");
    }

    #[test]
    fn text_holding_a_carrier_is_refused_and_an_undecoded_path_is_seen() {
        let carrier = char::from_u32(BASE + 0xe9).unwrap().to_string();
        assert!(from_bytes(carrier.as_bytes()).is_err());
        assert!(from_os(OsString::from(&carrier)).is_err());
        assert!(undecoded(Path::new(&format!("t{carrier}"))));
        // A path that holds one is still carried byte for byte.
        let p = PathBuf::from(format!("t{carrier}"));
        assert_eq!(path(&text(&p)), p);
        assert!(
            !undecoded(Path::new("t\u{10FF00}")),
            "below the carried range"
        );
    }
}
