//! Value syntax shared by every front end: sizes (`4k`, `1g`), durations (`30s`), booleans,
//! percentages, size splits (`bssplit`), random distributions and filename lists. Parsing
//! follows fio's rules exactly, including the surprising ones, so a value
//! means the same thing on the command line, in a job file and in fio. This module only turns
//! text into numbers; it knows nothing about which option a value belongs to.

use std::time::Duration;

use super::job::Distribution;

/// Why a value does not parse. Each reads as what the option accepts, in the words users see
/// after `--OPTION=VALUE: expected `.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValueError {
    /// Not in the option's syntax: what it takes.
    #[error("{0}")]
    Syntax(&'static str),
    /// A whole number outside the option's range.
    #[error("a whole number from {min} to {max}")]
    Range { min: u64, max: u64 },
    #[error("a number that fits in 64 bits")]
    Overflow,
    #[error("a size below 16 EiB")]
    SizeTooLarge,
    #[error("a duration below 136 years")]
    DurationTooLong,
    /// Not one of the option's words.
    #[error("one of {}", .0.join(", "))]
    OneOf(&'static [&'static str]),
    /// A distribution's parameter outside its domain: the distribution and what it takes.
    #[error("{kind}:{takes}")]
    Parameter { kind: String, takes: &'static str },
}

use ValueError::Syntax;

/// A parsed size and, when fio's reading of it would surprise a reader, why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Size {
    pub bytes: u64,
    /// Set when the suffix was an IEC form (`KiB`, `MiB`) that fio, with its default
    /// `kb_base=1024`, reads as a power of ten.
    pub iec_reversed: bool,
}

/// Parses a byte size the way fio does with `kb_base=1024` (its default): `k`, `K`, `kb` and
/// `KB` mean 1024; the IEC forms `KiB`, `MiB` mean powers of 1000 ("the reverse standard", for
/// compatibility with old job files); a bare `Ki`, `Mi` means 1024. Suffixes are
/// case-insensitive; `b`/`B` alone means bytes.
pub fn parse_size(text: &str) -> Result<Size, ValueError> {
    parse_size_base(text, 1024)
}

/// [`parse_size`] under fio's `kb_base`: 1024 as above, or 1000, where `k`/`kb` mean 1000 and
/// the IEC forms (`KiB`) mean 1024.
pub fn parse_size_base(text: &str, kb_base: u64) -> Result<Size, ValueError> {
    let t = text.trim();
    let digits_end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    if digits_end == 0 {
        return Err(Syntax(
            "a whole number of bytes with an optional unit (512, 4k, 1m, 10g, 1t)",
        ));
    }
    let number: u64 = t[..digits_end].parse().map_err(|_| ValueError::Overflow)?;
    let suffix = t[digits_end..].to_ascii_lowercase();
    let (power, iec_reversed, base) = match suffix.as_str() {
        "" | "b" => (0, false, 1024),
        s => {
            let mut chars = s.chars();
            let prefix = chars.next().unwrap_or(' ');
            let rest: String = chars.collect();
            let power = match prefix {
                'k' => 1,
                'm' => 2,
                'g' => 3,
                't' => 4,
                'p' => 5,
                _ => return Err(size_units_hint()),
            };
            match (rest.as_str(), kb_base) {
                ("" | "b" | "i", 1000) => (power, false, 1000u64),
                ("ib", 1000) => (power, false, 1024u64),
                ("" | "b" | "i", _) => (power, false, 1024u64),
                ("ib", _) => (power, true, 1000u64),
                _ => return Err(size_units_hint()),
            }
        }
    };
    let mult = base.checked_pow(power).ok_or(ValueError::SizeTooLarge)?;
    let bytes = number.checked_mul(mult).ok_or(ValueError::SizeTooLarge)?;
    Ok(Size {
        bytes,
        iec_reversed,
    })
}

fn size_units_hint() -> ValueError {
    Syntax("a whole number of bytes with an optional unit k, m, g, t, p (powers of 1024, as fio)")
}

/// Parses a duration. A bare number is in `default_unit`; suffixes `us`, `ms`, `s`, `m`, `h`,
/// `d` are accepted as in fio.
pub fn parse_duration(text: &str, default_unit: Duration) -> Result<Duration, ValueError> {
    let t = text.trim();
    let digits_end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let accepted = "a whole number with an optional unit us, ms, s, m, h, d (e.g. 30, 30s, 5m)";
    if digits_end == 0 {
        return Err(Syntax(accepted));
    }
    let n: u64 = t[..digits_end].parse().map_err(|_| Syntax(accepted))?;
    let unit = match t[digits_end..].to_ascii_lowercase().as_str() {
        "" => default_unit,
        "us" | "usec" => Duration::from_micros(1),
        "ms" | "msec" => Duration::from_millis(1),
        "s" | "sec" => Duration::from_secs(1),
        "m" | "min" => Duration::from_secs(60),
        "h" => Duration::from_secs(3600),
        "d" => Duration::from_secs(86400),
        _ => return Err(Syntax(accepted)),
    };
    u32::try_from(n)
        .ok()
        .and_then(|n| unit.checked_mul(n))
        .ok_or(ValueError::DurationTooLong)
}

/// Splits fio's per-direction list (`4k,64k,8k`: reads, writes, trims). A value not followed
/// by a comma applies to the directions after it too (`4k,64k`: trims 64k); an empty one
/// leaves the default (`4k,64k,`: trims the default).
pub fn per_direction<T: Clone>(
    text: &str,
    default: T,
    parse: impl Fn(&str) -> Result<T, ValueError>,
) -> Result<[T; 3], ValueError> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    if parts.len() > 3 {
        return Err(Syntax(
            "at most three comma-separated values (read, write, trim)",
        ));
    }
    let one = |p: &str| -> Result<T, ValueError> {
        if p.is_empty() {
            Ok(default.clone())
        } else {
            parse(p)
        }
    };
    match parts.as_slice() {
        [only] => {
            let v = one(only)?;
            Ok([v.clone(), v.clone(), v])
        }
        [r, w] => {
            let w = one(w)?;
            Ok([one(r)?, w.clone(), w])
        }
        [r, w, t] => Ok([one(r)?, one(w)?, one(t)?]),
        _ => unreachable!("split yields one to three parts here"),
    }
}

/// The number and unit `text` starts with, where more follows them (`65536)` → `65536`,
/// `512/25` → `512`): what fio's number parser reads of it. `None` without a leading digit
/// or when nothing follows.
pub fn leading_size(text: &str) -> Option<&str> {
    let t = text.trim_start();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let unit = t[digits..]
        .find(|c: char| !c.is_ascii_alphabetic())
        .map_or(t.len(), |e| digits + e);
    (digits > 0 && unit < t.len()).then(|| &t[..unit])
}

/// Parses `MIN-MAX` or `MIN:MAX` (fio takes either separator), or a single value (MIN = MAX),
/// with `parse`.
pub fn parse_range<T: PartialOrd + Copy>(
    text: &str,
    parse: impl Fn(&str) -> Result<T, ValueError>,
) -> Result<(T, T), ValueError> {
    let (a, b) = match text.split_once('-').or_else(|| text.split_once(':')) {
        Some((a, b)) => (parse(a)?, parse(b)?),
        None => {
            let v = parse(text)?;
            (v, v)
        }
    };
    if a > b {
        return Err(Syntax("a range MIN-MAX with MIN <= MAX"));
    }
    Ok((a, b))
}

/// Parses a boolean: `1`/`0`, `true`/`false`, `yes`/`no`, `on`/`off`.
pub fn parse_bool(text: &str) -> Result<bool, ValueError> {
    match text.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err(Syntax("1 or 0 (also true/false, yes/no, on/off)")),
    }
}

/// Parses a whole number in `[min, max]`.
pub fn parse_int(text: &str, min: u64, max: u64) -> Result<u64, ValueError> {
    let accepted = ValueError::Range { min, max };
    let n: u64 = text.trim().parse().map_err(|_| accepted.clone())?;
    if n < min || n > max {
        return Err(accepted);
    }
    Ok(n)
}

/// `4k/60:64k/40` → [(4096, 60), (65536, 100)] (cumulative); entries without a percentage
/// share what the others leave.
pub fn parse_split(
    text: &str,
    bytes: impl Fn(&str) -> Result<u64, ValueError>,
) -> Result<Vec<(u64, u32)>, ValueError> {
    let accepted =
        Syntax("BS/PERCENT entries separated by ':' (4k/60:64k/40), percentages adding up to 100");
    let mut entries: Vec<(u64, Option<u32>)> = Vec::new();
    for part in text.split(':').map(str::trim).filter(|p| !p.is_empty()) {
        let (b, pct) = match part.split_once('/') {
            Some((b, p)) if p.trim().is_empty() => (b, None),
            Some((b, p)) => (
                b,
                Some(parse_int(p, 0, 100).map_err(|_| accepted.clone())? as u32),
            ),
            None => (part, None),
        };
        let b = bytes(b.trim())?;
        if b == 0 {
            return Err(accepted);
        }
        entries.push((b, pct));
    }
    if entries.is_empty() {
        return Err(accepted);
    }
    let given: u32 = entries.iter().filter_map(|e| e.1).sum();
    let blanks = entries.iter().filter(|e| e.1.is_none()).count() as u32;
    if given > 100 || (blanks == 0 && given != 100) {
        return Err(accepted);
    }
    let (share, mut extra) = match (100 - given).checked_div(blanks) {
        Some(share) => (share, (100 - given) % blanks),
        None => (0, 0),
    };
    let mut cum = 0;
    let mut out = Vec::new();
    for (b, pct) in entries {
        let p = pct.unwrap_or_else(|| {
            let e = u32::from(extra > 0);
            extra = extra.saturating_sub(1);
            share + e
        });
        if p == 0 {
            continue;
        }
        cum += p;
        out.push((b, cum));
    }
    Ok(out)
}

/// `a:b` → [a, b]; `\:` stands for a ':' inside a name (fio's escape).
pub fn split_filenames(text: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                out.last_mut().expect("one").push(':');
                chars.next();
            }
            ':' => out.push(String::new()),
            c => out.last_mut().expect("one").push(c),
        }
    }
    out.into_iter().map(|s| s.trim().to_string()).collect()
}

/// Whether `names` (as [`split_filenames`] gives them) hold a Windows path split at its drive
/// letter's unescaped colon: a one-letter name followed by one starting with a separator.
pub fn unescaped_drive(names: &[String]) -> bool {
    names.windows(2).any(|w| {
        let letter = w[0].len() == 1 && w[0].as_bytes()[0].is_ascii_alphabetic();
        letter && (w[1].starts_with('\\') || w[1].starts_with('/'))
    })
}

/// `random`, `zipf:1.2`, `pareto:0.9`, `normal:10`, `zoned:60/10:30/20:10/70`,
/// `zoned_abs:60/1g:40/10g`.
pub fn parse_distribution(text: &str, kb: u64) -> Result<Distribution, ValueError> {
    let t = text.trim().to_ascii_lowercase();
    let (kind, arg) = match t.split_once(':') {
        Some((k, a)) => (k, Some(a)),
        None => (t.as_str(), None),
    };
    // Without a parameter, fio's defaults: zipf 1.1, pareto 0.2, normal 0 (no deviation).
    let float = |a: Option<&str>,
                 ok: &dyn Fn(f64) -> bool,
                 takes: &'static str|
     -> Result<f64, ValueError> {
        let default = match kind {
            "zipf" => "1.1",
            "pareto" => "0.2",
            _ => "0",
        };
        a.or(Some(default))
            .and_then(|a| a.trim().parse::<f64>().ok())
            .filter(|x| x.is_finite() && ok(*x))
            .ok_or_else(|| ValueError::Parameter {
                kind: kind.to_string(),
                takes,
            })
    };
    Ok(match kind {
        "random" if arg.is_none() => Distribution::Uniform,
        "zipf" => Distribution::Zipf(float(
            arg,
            &|x| x > 0.0 && x != 1.0,
            "THETA with THETA > 0, not 1",
        )?),
        "pareto" => Distribution::Pareto(float(arg, &|x| x > 0.0 && x < 1.0, "H with 0 < H < 1")?),
        "normal" | "gauss" => Distribution::Normal(float(
            arg,
            &|x| (0.0..100.0).contains(&x),
            "DEV, a percentage from 0 to below 100",
        )?),
        "zoned" | "zoned_abs" => {
            let abs = kind == "zoned_abs";
            let accepted = Syntax(if abs {
                "zoned_abs:ACCESS%/BYTES[:...] with accesses adding up to 100"
            } else {
                "zoned:ACCESS%/SIZE%[:...] with accesses adding up to 100 and sizes to at most 100"
            });
            let mut zones = Vec::new();
            for z in arg
                .unwrap_or("")
                .split(':')
                .filter(|z| !z.trim().is_empty())
            {
                let (a, sz) = z.split_once('/').ok_or(accepted.clone())?;
                let a = parse_int(a, 0, 100).map_err(|_| accepted.clone())? as u32;
                let sz = if sz.trim().is_empty() && !abs {
                    // An empty size: what the zones before it leave (fio's rand-zones.fio).
                    10_000u64.saturating_sub(zones.iter().map(|z: &(u32, u64)| z.1).sum())
                } else if abs {
                    parse_size_base(sz, kb).map_err(|_| accepted.clone())?.bytes
                } else {
                    let p = sz.trim().parse::<f64>().map_err(|_| accepted.clone())?;
                    if !(0.0..=100.0).contains(&p) {
                        return Err(accepted);
                    }
                    (p * 100.0).round() as u64
                };
                zones.push((a, sz));
            }
            let total_access: u32 = zones.iter().map(|z| z.0).sum();
            let total_size: u64 = zones.iter().map(|z| z.1).sum();
            if zones.is_empty()
                || total_access != 100
                || (!abs && total_size > 10_000)
                || total_size == 0
            {
                return Err(accepted);
            }
            Distribution::Zoned { abs, zones }
        }
        _ => {
            return Err(Syntax(
                "random, zipf:THETA, pareto:H, normal:DEV, zoned:ACC/SIZE[:...] or \
                 zoned_abs:ACC/BYTES[:...]",
            ));
        }
    })
}

/// fio's `sync_file_range=FLAGS:N` → (SYNC_FILE_RANGE_* flags, N). FLAGS: one or more of
/// wait_before, write, wait_after joined by ','; N defaults to 1.
pub fn parse_sync_file_range(text: &str) -> Result<(u32, u32), ValueError> {
    const ACCEPTED: &str = "FLAGS:N, FLAGS one or more of wait_before, write, wait_after \
                            joined by ',' and N writes between calls (write:8)";
    let (flags, every) = match text.trim().rsplit_once(':') {
        Some((f, n)) => (
            f,
            parse_int(n, 1, u64::from(u32::MAX)).map_err(|_| Syntax(ACCEPTED))?,
        ),
        None => (text.trim(), 1),
    };
    let mut bits = 0;
    for word in flags.split(',') {
        bits |= match word.trim().to_ascii_lowercase().as_str() {
            "wait_before" => crate::platform::abi::SYNC_FILE_RANGE_WAIT_BEFORE,
            "write" => crate::platform::abi::SYNC_FILE_RANGE_WRITE,
            "wait_after" => crate::platform::abi::SYNC_FILE_RANGE_WAIT_AFTER,
            _ => return Err(Syntax(ACCEPTED)),
        };
    }
    Ok((bits, every as u32))
}

/// fio's `buffer_pattern`: pieces one after another, as fio's pattern parser reads them: a
/// quoted string (`"abc"`), `0x` and hex digits (`0xdeadbeef`, bytes in the order written),
/// or a decimal number from -2^31 to 2^31-1 (its bytes, least significant first, as few as it
/// needs; 0 is one zero byte). `"abcd"-120xdeadface` is `abcd`, -12 and `0xdeadface`: a
/// decimal number ends where `0x` begins, and so does a hex one.
pub fn parse_pattern(text: &str) -> Result<Vec<u8>, ValueError> {
    match parse_pattern_pieces(text)? {
        (bytes, offsets) if offsets.is_empty() => Ok(bytes),
        _ => Err(Syntax(
            "pieces without %o (fio pastes the I/O's offset into verify_pattern only)",
        )),
    }
}

/// fio's `verify_pattern`: [`parse_pattern`]'s pieces and fio's `%o`, 8 bytes where each
/// write pastes its offset (little-endian). The bytes (zeros where `%o` goes) and where each
/// `%o` starts.
pub fn parse_pattern_pieces(text: &str) -> Result<(Vec<u8>, Vec<usize>), ValueError> {
    const ACCEPTED: &str = "pieces one after another: 0x and hex digits (0xdeadbeef), a quoted \
                            string (\"iogauge\"), a decimal number (-12), %o (the I/O's \
                            offset); fio's file pieces ('name') are not supported";
    let t = text.trim();
    let mut out = Vec::new();
    let mut offsets = Vec::new();
    let mut rest = t;
    while !rest.is_empty() {
        let (piece, after) = if let Some(s) = rest.strip_prefix("%o") {
            offsets.push(out.len());
            (vec![0u8; 8], s)
        } else if let Some(s) = rest.strip_prefix('"') {
            let end = s.find('"').ok_or(Syntax(ACCEPTED))?;
            (s.as_bytes()[..end].to_vec(), &s[end + 1..])
        } else if rest.len() > 2 && rest.as_bytes()[..2].eq_ignore_ascii_case(b"0x") {
            let digits = rest[2..]
                .find(|c: char| !c.is_ascii_hexdigit())
                .unwrap_or(rest.len() - 2);
            let mut hex = &rest[2..2 + digits];
            // A run of digits that runs into another "0x" (0xff0x14) ends before it.
            if hex.len() > 1 && hex.ends_with('0') && rest[2 + digits..].starts_with(['x', 'X']) {
                hex = &hex[..hex.len() - 1];
            }
            if hex.is_empty() {
                return Err(Syntax(ACCEPTED));
            }
            // An odd digit count reads as a leading 0.
            let padded = if hex.len() % 2 == 1 {
                format!("0{hex}")
            } else {
                hex.to_string()
            };
            let bytes = (0..padded.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&padded[i..i + 2], 16).expect("hex digits"))
                .collect();
            (bytes, &rest[2 + hex.len()..])
        } else {
            let sign = usize::from(rest.starts_with(['-', '+']));
            let mut end = sign
                + rest[sign..]
                    .find(|c: char| !c.is_ascii_digit())
                    .unwrap_or(rest.len() - sign);
            // A decimal number ends where a hex one begins (-120xdeadface: -12, 0xdeadface).
            if end > sign + 1
                && rest[end - 1..].starts_with('0')
                && rest[end..].starts_with(['x', 'X'])
            {
                end -= 1;
            }
            let n: i64 = rest[..end].parse().map_err(|_| Syntax(ACCEPTED))?;
            if !(i64::from(i32::MIN)..=i64::from(i32::MAX)).contains(&n) {
                return Err(Syntax(ACCEPTED));
            }
            let mut v = n as i32 as u32;
            let mut bytes = Vec::new();
            while v != 0 {
                bytes.push(v as u8);
                v >>= 8;
            }
            if bytes.is_empty() {
                bytes.push(0);
            }
            (bytes, &rest[end..])
        };
        if piece.is_empty() {
            return Err(Syntax(ACCEPTED));
        }
        out.extend(piece);
        rest = after;
    }
    if out.is_empty() {
        return Err(Syntax(ACCEPTED));
    }
    Ok((out, offsets))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_are_read_piece_by_piece_as_fio_reads_them() {
        let p = |t: &str| parse_pattern(t).unwrap();
        assert_eq!(p("0xdeadbeef"), [0xde, 0xad, 0xbe, 0xef]);
        assert_eq!(p("0xabc"), [0x0a, 0xbc]);
        assert_eq!(p("\"iogauge\""), b"iogauge");
        assert_eq!(p("1"), [1]);
        assert_eq!(p("0"), [0]);
        assert_eq!(p("256"), [0, 1]);
        assert_eq!(
            p("\"abcd\"-120xdeadface"),
            [
                b'a', b'b', b'c', b'd', 0xf4, 0xff, 0xff, 0xff, 0xde, 0xad, 0xfa, 0xce
            ]
        );
        assert_eq!(p("0xff0x14"), [0xff, 0x14]);
        assert_eq!(p("\"ab\"0x01\"c\""), [b'a', b'b', 1, b'c']);
        for bad in [
            "",
            "0x",
            "\"\"",
            "\"open",
            "abc",
            "%o",
            "'file'",
            "4294967296",
            "%d",
            "\u{fffd}\n",
            "0\u{e9}",
        ] {
            assert!(parse_pattern(bad).is_err(), "{bad}");
        }
        let (b, o) = parse_pattern_pieces("1%o").unwrap();
        assert_eq!((b, o), (vec![1, 0, 0, 0, 0, 0, 0, 0, 0], vec![1]));
    }

    #[test]
    fn names_split_at_colons_and_a_split_drive_letter_is_seen() {
        let names = |t: &str| split_filenames(t);
        assert_eq!(names("a:b"), ["a", "b"]);
        assert_eq!(names("C\\:\\d\\f.dat"), ["C:\\d\\f.dat"]);
        assert!(unescaped_drive(&names("C:\\d\\f.dat")));
        assert!(unescaped_drive(&names("/x:d:/f")));
        assert!(!unescaped_drive(&names("C\\:\\d\\f.dat")));
        assert!(
            !unescaped_drive(&names("ab:/dev/sdb")),
            "two letters are a name"
        );
        assert!(
            !unescaped_drive(&names("a:b")),
            "one-letter names with no path after"
        );
        assert!(!unescaped_drive(&names("/dev/sda:/dev/sdb")));
    }

    #[test]
    fn sizes_follow_fio() {
        // Values checked against fio 3.33's own accounting (io_bytes of a null-engine job).
        let cases = [
            ("512", 512),
            ("1k", 1024),
            ("1KB", 1024),
            ("1Ki", 1024),
            ("1KiB", 1000),
            ("1kib", 1000),
            ("2m", 2 << 20),
            ("1MB", 1 << 20),
            ("1MiB", 1_000_000),
            ("10g", 10 << 30),
            ("1t", 1 << 40),
            ("7b", 7),
        ];
        for (text, bytes) in cases {
            assert_eq!(parse_size(text).unwrap().bytes, bytes, "{text}");
        }
        assert!(parse_size("1MiB").unwrap().iec_reversed);
        assert!(!parse_size("1m").unwrap().iec_reversed);
    }

    #[test]
    fn bad_sizes_are_rejected() {
        for text in [
            "",
            "k",
            "4x",
            "1.5m",
            "-1",
            "4kk",
            "99999999999999999999",
            "16384p",
        ] {
            assert!(parse_size(text).is_err(), "{text}");
        }
    }

    #[test]
    fn kb_base_1000_swaps_the_meanings() {
        assert_eq!(parse_size_base("4k", 1000).unwrap().bytes, 4000);
        assert_eq!(parse_size_base("4KiB", 1000).unwrap().bytes, 4096);
        assert!(!parse_size_base("4KiB", 1000).unwrap().iec_reversed);
        assert_eq!(parse_size_base("1m", 1024).unwrap().bytes, 1 << 20);
    }

    #[test]
    fn per_direction_lists_and_ranges() {
        let p = |t: &str| parse_size(t).map(|s| s.bytes);
        // fio's HOWTO examples: a value not ended by a comma carries on to trims.
        assert_eq!(per_direction("4k", 1, p).unwrap(), [4096, 4096, 4096]);
        assert_eq!(per_direction("4k,64k", 1, p).unwrap(), [4096, 65536, 65536]);
        assert_eq!(per_direction("4k,64k,", 1, p).unwrap(), [4096, 65536, 1]);
        assert_eq!(per_direction(",64k", 1, p).unwrap(), [1, 65536, 65536]);
        assert_eq!(per_direction(",64k,", 1, p).unwrap(), [1, 65536, 1]);
        assert_eq!(per_direction("4k,", 1, p).unwrap(), [4096, 1, 1]);
        assert_eq!(
            per_direction("4k,8k,16k", 1, p).unwrap(),
            [4096, 8192, 16384]
        );
        assert!(per_direction("4k,x", 1, p).is_err());
        assert!(per_direction("1,2,3,4", 1, p).is_err());
        assert_eq!(parse_range("4k-64k", p).unwrap(), (4096, 65536));
        assert_eq!(parse_range("8k", p).unwrap(), (8192, 8192));
        assert!(parse_range("64k-4k", p).is_err());
    }

    #[test]
    fn durations() {
        let s = Duration::from_secs(1);
        assert_eq!(parse_duration("30", s).unwrap(), Duration::from_secs(30));
        assert_eq!(
            parse_duration("500ms", s).unwrap(),
            Duration::from_millis(500)
        );
        assert_eq!(parse_duration("2m", s).unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("1h", s).unwrap(), Duration::from_secs(3600));
        assert_eq!(
            parse_duration("10", Duration::from_micros(1))
                .unwrap()
                .as_micros(),
            10
        );
        for bad in ["", "s", "1.5s", "10x", "-3"] {
            assert!(parse_duration(bad, s).is_err(), "{bad}");
        }
    }

    #[test]
    fn bools_and_ints() {
        assert!(parse_bool("1").unwrap() && parse_bool("On").unwrap());
        assert!(!parse_bool("0").unwrap() && !parse_bool("false").unwrap());
        assert!(parse_bool("2").is_err());
        assert_eq!(parse_int("7", 1, 10).unwrap(), 7);
        assert!(parse_int("0", 1, 10).is_err() && parse_int("x", 1, 10).is_err());
    }

    #[test]
    fn patterns_read_as_fio_reads_them() {
        assert_eq!(
            parse_pattern("0xdeadbeef"),
            Ok(vec![0xde, 0xad, 0xbe, 0xef])
        );
        assert_eq!(parse_pattern("0xabc"), Ok(vec![0x0a, 0xbc]));
        assert_eq!(parse_pattern("\"ab\""), Ok(b"ab".to_vec()));
        assert_eq!(parse_pattern("258"), Ok(vec![2, 1]));
        assert_eq!(parse_pattern("0"), Ok(vec![0]));
        assert!(parse_pattern("0x").is_err() && parse_pattern("xyz").is_err());
    }
}
