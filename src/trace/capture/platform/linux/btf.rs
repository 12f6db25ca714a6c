//! The running kernel's own description of its types (BTF, /sys/kernel/btf/vmlinux), read
//! just far enough to find where a field lies in a struct and how many arguments a
//! tracepoint passes its raw programs: the eBPF program that reports what an open opened
//! follows kernel pointers (task → files → fd table → file → inode), the programs on the
//! raw tracepoints read a call's registers, and their offsets differ from build to build.

use std::collections::HashMap;

const MAGIC: u16 = 0xeb9f;

const KIND_INT: u32 = 1;
const KIND_PTR: u32 = 2;
const KIND_ARRAY: u32 = 3;
const KIND_STRUCT: u32 = 4;
const KIND_UNION: u32 = 5;
const KIND_ENUM: u32 = 6;
const KIND_TYPEDEF: u32 = 8;
const KIND_FUNC_PROTO: u32 = 13;
const KIND_VAR: u32 = 14;
const KIND_DATASEC: u32 = 15;
const KIND_DECL_TAG: u32 = 17;
const KIND_ENUM64: u32 = 19;

/// A member of a struct or union: its name, type id and offset in bits.
#[derive(Debug, Clone)]
struct Member {
    name: String,
    ty: u32,
    bits: u32,
}

/// The structs and unions of a BTF blob by type id, and what is needed to count a
/// tracepoint's arguments (other kinds are skipped).
#[derive(Debug, Default)]
pub struct Btf {
    members: HashMap<u32, Vec<Member>>,
    /// Named structs: name → type id (the first with members, where there are several).
    structs: HashMap<String, u32>,
    /// Pointer types: type id → the type pointed to.
    pointers: HashMap<u32, u32>,
    /// Function prototypes: type id → how many parameters.
    protos: HashMap<u32, usize>,
    /// Each tracepoint's `btf_trace_NAME` typedef (a pointer to its probes' prototype, whose
    /// first parameter is the probe's data): NAME → the type it names.
    tracepoints: HashMap<String, u32>,
}

/// Why BTF could not be read.
#[derive(Debug, thiserror::Error)]
#[error("the kernel's BTF: {0}")]
pub struct BadBtf(pub String);

fn u32_at(b: &[u8], at: usize) -> Result<u32, BadBtf> {
    b.get(at..at + 4)
        .map(|s| u32::from_le_bytes(s.try_into().expect("4 bytes")))
        .ok_or_else(|| BadBtf(format!("truncated at byte {at}")))
}

impl Btf {
    /// The running kernel's BTF, read once (a few megabytes, parsed in milliseconds).
    pub fn kernel() -> Result<&'static Btf, BadBtf> {
        static CACHE: std::sync::OnceLock<Result<Btf, String>> = std::sync::OnceLock::new();
        CACHE
            .get_or_init(|| {
                let bytes = std::fs::read("/sys/kernel/btf/vmlinux")
                    .map_err(|e| format!("/sys/kernel/btf/vmlinux: {e}"))?;
                Btf::parse(&bytes).map_err(|e| e.0)
            })
            .as_ref()
            .map_err(|e| BadBtf(e.clone()))
    }

    /// Parses a BTF blob (little-endian, as this build's targets are).
    pub fn parse(b: &[u8]) -> Result<Btf, BadBtf> {
        if b.len() < 24 || u16::from_le_bytes([b[0], b[1]]) != MAGIC {
            return Err(BadBtf("not BTF (bad magic)".into()));
        }
        let hdr_len = u32_at(b, 4)? as usize;
        let (type_off, type_len) = (u32_at(b, 8)? as usize, u32_at(b, 12)? as usize);
        let (str_off, str_len) = (u32_at(b, 16)? as usize, u32_at(b, 20)? as usize);
        let types = b
            .get(hdr_len + type_off..hdr_len + type_off + type_len)
            .ok_or_else(|| BadBtf("type section out of bounds".into()))?;
        let strings = b
            .get(hdr_len + str_off..hdr_len + str_off + str_len)
            .ok_or_else(|| BadBtf("string section out of bounds".into()))?;
        let name = |off: u32| -> String {
            let s = strings.get(off as usize..).unwrap_or(&[]);
            let end = s.iter().position(|&c| c == 0).unwrap_or(s.len());
            String::from_utf8_lossy(&s[..end]).into_owned()
        };
        let mut out = Btf::default();
        let (mut at, mut id) = (0usize, 1u32);
        while at + 12 <= types.len() {
            let (name_off, info) = (u32_at(types, at)?, u32_at(types, at + 4)?);
            let (kind, vlen, kflag) = ((info >> 24) & 0x1f, info & 0xffff, info >> 31);
            at += 12;
            let vlen = vlen as usize;
            match kind {
                KIND_STRUCT | KIND_UNION => {
                    let mut members = Vec::with_capacity(vlen);
                    for i in 0..vlen {
                        let m = at + 12 * i;
                        let off = u32_at(types, m + 8)?;
                        members.push(Member {
                            name: name(u32_at(types, m)?),
                            ty: u32_at(types, m + 4)?,
                            bits: if kflag == 1 { off & 0xff_ffff } else { off },
                        });
                    }
                    at += 12 * vlen;
                    if kind == KIND_STRUCT && vlen > 0 {
                        out.structs.entry(name(name_off)).or_insert(id);
                    }
                    out.members.insert(id, members);
                }
                KIND_INT | KIND_VAR | KIND_DECL_TAG => at += 4,
                KIND_ARRAY => at += 12,
                KIND_PTR => {
                    out.pointers.insert(id, u32_at(types, at - 4)?);
                }
                KIND_TYPEDEF => {
                    if let Some(tp) = name(name_off).strip_prefix("btf_trace_") {
                        out.tracepoints
                            .insert(tp.to_owned(), u32_at(types, at - 4)?);
                    }
                }
                KIND_FUNC_PROTO => {
                    out.protos.insert(id, vlen);
                    at += 8 * vlen;
                }
                KIND_ENUM => at += 8 * vlen,
                KIND_DATASEC | KIND_ENUM64 => at += 12 * vlen,
                // FWD, VOLATILE, CONST, RESTRICT, FUNC, FLOAT, TYPE_TAG: none.
                0..=19 => {}
                _ => return Err(BadBtf(format!("unknown kind {kind} at type {id}"))),
            }
            id += 1;
        }
        Ok(out)
    }

    /// The byte offset of `field` in `struct name`, looking into anonymous struct and union
    /// members as C does.
    pub fn offset(&self, name: &str, field: &str) -> Result<u32, BadBtf> {
        let id = self
            .structs
            .get(name)
            .ok_or_else(|| BadBtf(format!("no struct {name}")))?;
        self.find(*id, field, 0)
            .map(|bits| bits / 8)
            .ok_or_else(|| BadBtf(format!("no field {field} in struct {name}")))
    }

    /// [`Btf::offset`] as an eBPF instruction's offset operand.
    pub fn operand(&self, name: &str, field: &str) -> Result<i32, BadBtf> {
        self.offset(name, field).map(|v| v as i32)
    }

    /// How many arguments the kernel's tracepoint `name` passes a raw tracepoint program
    /// (its TP_PROTO's parameters, each a 64-bit word of the program's context).
    pub fn tracepoint_args(&self, name: &str) -> Result<usize, BadBtf> {
        self.tracepoints
            .get(name)
            .and_then(|t| self.pointers.get(t))
            .and_then(|p| self.protos.get(p))
            .and_then(|n| n.checked_sub(1))
            .ok_or_else(|| BadBtf(format!("no tracepoint {name}")))
    }

    fn find(&self, id: u32, field: &str, depth: u32) -> Option<u32> {
        let members = self.members.get(&id)?;
        if let Some(m) = members.iter().find(|m| m.name == field) {
            return Some(m.bits);
        }
        if depth > 8 {
            return None;
        }
        members
            .iter()
            .filter(|m| m.name.is_empty())
            .find_map(|m| self.find(m.ty, field, depth + 1).map(|b| b + m.bits))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_fields_the_open_probe_follows_in_this_kernel() {
        let btf = match Btf::kernel() {
            Ok(b) => b,
            Err(e) => {
                eprintln!("skipped: {e}");
                return;
            }
        };
        for (s, f) in [
            ("task_struct", "files"),
            ("files_struct", "fdt"),
            ("fdtable", "fd"),
            ("fdtable", "max_fds"),
            ("file", "f_inode"),
            ("inode", "i_mode"),
            ("inode", "i_size"),
            ("inode", "i_sb"),
            ("super_block", "s_magic"),
        ] {
            btf.offset(s, f).unwrap();
        }
        // Fields at the start of their struct, on every build.
        assert_eq!(btf.offset("inode", "i_mode").unwrap(), 0);
        assert_eq!(btf.offset("fdtable", "max_fds").unwrap(), 0);
        assert!(btf.offset("inode", "no_such_field").is_err());
        assert!(btf.offset("no_such_struct", "x").is_err());
        // The raw tracepoints the capture's programs run on, as include/trace/events declares
        // them: sys_enter(regs, id), sys_exit(regs, ret), sched_process_fork(parent, child).
        assert_eq!(btf.tracepoint_args("sys_enter").unwrap(), 2);
        assert_eq!(btf.tracepoint_args("sys_exit").unwrap(), 2);
        assert_eq!(btf.tracepoint_args("sched_process_fork").unwrap(), 2);
        assert!(btf.tracepoint_args("no_such_tracepoint").is_err());
    }

    #[test]
    fn a_blob_that_is_not_btf_is_an_error_not_a_panic() {
        assert!(Btf::parse(b"").is_err());
        assert!(Btf::parse(&[0u8; 64]).is_err());
        let mut b = vec![0x9f, 0xeb, 1, 0, 24, 0, 0, 0];
        b.extend_from_slice(&[0, 0, 0, 0, 255, 255, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert!(Btf::parse(&b).is_err());
    }
}
