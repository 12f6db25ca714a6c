//! The host's facts on Linux: uname, /proc/cpuinfo and /proc/meminfo for the machine;
//! /proc/self/mountinfo and /sys/dev/block for a target's file system, mount and device;
//! statvfs for its space. Read-only, best effort: what cannot be read is left empty.

use std::borrow::Cow;
use std::fs;
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use crate::platform::{Device, Host, Memory, Space, TargetInfo};

/// The machine: its name, kernel, CPU and memory.
pub fn host() -> Host {
    let u = rustix::system::uname();
    let s = |c: &std::ffi::CStr| c.to_string_lossy().into_owned();
    let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu_model = cpuinfo
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")
                .and_then(|r| r.split_once(':'))
                .map(|x| x.1)
        })
        .unwrap_or("")
        .trim()
        .to_string();
    let memory_bytes = fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            let line = m.lines().find(|l| l.starts_with("MemTotal:"))?.to_string();
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .map_or(0, |kb| kb * 1024);
    Host {
        hostname: s(u.nodename()),
        kernel: format!("{} {} {}", s(u.sysname()), s(u.release()), s(u.version())),
        arch: s(u.machine()),
        cpu_model,
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
        memory_bytes,
    }
}

struct Mount {
    dev: String,
    point: String,
    options: String,
    fs_type: String,
    source: String,
}

fn mounts() -> Vec<Mount> {
    let text = fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    text.lines()
        .filter_map(|l| {
            let (pre, post) = l.split_once(" - ")?;
            let pre: Vec<&str> = pre.split(' ').collect();
            let post: Vec<&str> = post.split(' ').collect();
            Some(Mount {
                dev: pre.get(2)?.to_string(),
                point: unescape(pre.get(4)?),
                options: pre.get(5)?.to_string(),
                fs_type: post.first()?.to_string(),
                source: post.get(1).unwrap_or(&"").to_string(),
            })
        })
        .collect()
}

/// mountinfo escapes space, tab, newline and backslash as octal.
fn unescape(s: &str) -> String {
    s.replace("\\040", " ")
        .replace("\\011", "\t")
        .replace("\\012", "\n")
        .replace("\\134", "\\")
}

fn read_trim(p: impl AsRef<Path>) -> Option<String> {
    Some(fs::read_to_string(p).ok()?.trim().to_string())
}

fn device(major: u32, minor: u32) -> Option<Device> {
    let sys = PathBuf::from(format!("/sys/dev/block/{major}:{minor}"));
    let real = fs::canonicalize(&sys).ok()?;
    let name = real.file_name()?.to_string_lossy().into_owned();
    // A partition's queue and model belong to its disk.
    let disk = if real.join("partition").exists() {
        real.parent()?.to_path_buf()
    } else {
        real
    };
    let model = device_model(&disk);
    let queue = |f: &str| read_trim(disk.join("queue").join(f));
    let number = |f: &str| queue(f).and_then(|v| v.parse().ok());
    Some(Device {
        name,
        model,
        major_minor: format!("{major}:{minor}"),
        logical_block_size: number("logical_block_size"),
        rotational: queue("rotational").map(|v| v == "1"),
        write_cache: queue("write_cache"),
        // "none [mq-deadline] kyber": the one in brackets is in use.
        scheduler: queue("scheduler").map(|v| {
            v.split_whitespace()
                .find_map(|w| w.strip_prefix('[').and_then(|w| w.strip_suffix(']')))
                .unwrap_or(v.as_str())
                .to_string()
        }),
        read_ahead_kb: number("read_ahead_kb"),
        max_sectors_kb: number("max_sectors_kb"),
        nr_requests: number("nr_requests"),
    })
}

/// The disk's vendor and model as the kernel knows them ("ATA Samsung SSD 870", "Dell
/// PERC H730"); for a virtio disk, which has only a PCI vendor number, what it is.
fn device_model(disk: &Path) -> String {
    let read = |f: &str| read_trim(disk.join("device").join(f)).filter(|v| !v.is_empty());
    let driver = fs::read_link(disk.join("device/driver"))
        .ok()
        .and_then(|l| l.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    let vendor = read("vendor").filter(|v| !v.starts_with("0x"));
    match (vendor, read("model")) {
        (Some(v), Some(m)) if !m.starts_with(&v) => format!("{v} {m}"),
        (_, Some(m)) => m,
        (Some(v), None) => v,
        (None, None) if driver == "virtio_blk" => "virtio block device".into(),
        (None, None) => {
            let name = disk.file_name().map(|n| n.to_string_lossy().into_owned());
            match name.as_deref() {
                Some(n) if n.starts_with("vd") => "virtio block device".into(),
                Some(n) if n.starts_with("loop") => "loop device".into(),
                _ => String::new(),
            }
        }
    }
}

/// Describes `path` (or, if it is gone or not yet created, the directory holding it).
pub fn describe(path: &Path) -> TargetInfo {
    describe_with(path, &mut Seen::default())
}

/// [`describe`] for each of `paths`, the mount table read once and each device once: a
/// filecreate run of 9000 files spent a second reading /proc/self/mountinfo for each.
pub fn describe_all<'a>(paths: impl Iterator<Item = &'a Path>) -> Vec<TargetInfo> {
    let mut seen = Seen::default();
    paths.map(|p| describe_with(p, &mut seen)).collect()
}

/// What describing several targets reads once: the mount table, each device.
#[derive(Default)]
struct Seen {
    mounts: Option<Vec<Mount>>,
    devices: std::collections::HashMap<(u32, u32), Option<Device>>,
}

fn describe_with(path: &Path, seen: &mut Seen) -> TargetInfo {
    let meta = fs::metadata(path).ok().or_else(|| {
        let parent = crate::rawpath::parent_dir(path);
        fs::metadata(parent).ok()
    });
    let is_block = meta
        .as_ref()
        .is_some_and(|m| m.file_type().is_block_device());
    let mut info = TargetInfo {
        path: fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()),
        kind: Cow::Borrowed(if is_block { "block device" } else { "file" }),
        fs_type: String::new(),
        mount_point: String::new(),
        mount_options: String::new(),
        mount_source: String::new(),
        device: None,
        space: None,
    };
    let Some(meta) = meta else { return info };
    let (major, minor) = numbers(&meta);
    info.device = seen
        .devices
        .entry((major, minor))
        .or_insert_with(|| device(major, minor))
        .clone();
    if is_block {
        info.fs_type = "(raw block device)".into();
        return info;
    }
    let dir = if meta.is_dir() {
        path
    } else {
        crate::rawpath::parent_dir(path)
    };
    info.space = space(dir).ok();
    let key = format!("{major}:{minor}");
    let abs = info.path.to_string_lossy().into_owned();
    let best = seen
        .mounts
        .get_or_insert_with(mounts)
        .iter()
        .filter(|m| m.dev == key)
        .max_by_key(|m| {
            if abs.starts_with(&m.point) {
                m.point.len()
            } else {
                0
            }
        });
    if let Some(m) = best {
        info.fs_type = m.fs_type.clone();
        info.mount_point = m.point.clone();
        info.mount_options = m.options.clone();
        info.mount_source = m.source.clone();
    }
    info
}

/// The logical block size of the device holding `p` (or, when `p` does not exist, its
/// directory; a block device's own), from sysfs; `None` where there is no block device.
pub fn logical_block_size_at(p: &Path) -> Option<u64> {
    let (major, minor) = device_numbers(p)?;
    let base = PathBuf::from(format!("/sys/dev/block/{major}:{minor}"));
    // A partition has no queue/ of its own: its parent disk's applies.
    [
        base.join("queue/logical_block_size"),
        base.join("../queue/logical_block_size"),
    ]
    .iter()
    .find_map(|p| fs::read_to_string(p).ok()?.trim().parse().ok())
}

/// The numbers (major, minor) of the device holding `p` — a block device's own, else its file
/// system's — from `p`'s status or, while it does not exist, its directory's.
pub(super) fn device_numbers(p: &Path) -> Option<(u32, u32)> {
    let meta = fs::metadata(p)
        .or_else(|_| fs::metadata(crate::rawpath::parent_dir(p)))
        .ok()?;
    Some(numbers(&meta))
}

/// A block device's own numbers, or those of the device holding a file.
fn numbers(meta: &fs::Metadata) -> (u32, u32) {
    let dev = match meta.file_type().is_block_device() {
        true => meta.rdev(),
        false => meta.dev(),
    };
    (rustix::fs::major(dev), rustix::fs::minor(dev))
}

/// Why `path` cannot be a target on this system, if it cannot: on Linux every file and block
/// device can be (the target check decides the rest).
pub fn unsupported_target(_path: &Path) -> Option<&'static str> {
    None
}

/// The space of the file system holding `dir` (statvfs).
pub fn space(dir: &Path) -> io::Result<Space> {
    let v = rustix::fs::statvfs(dir)?;
    Ok(Space {
        total_bytes: v.f_blocks.saturating_mul(v.f_frsize),
        avail_bytes: v.f_bavail.saturating_mul(v.f_frsize),
        free_bytes: v.f_bfree.saturating_mul(v.f_frsize),
    })
}

/// The machine's memory (sysinfo) and page size.
pub fn memory() -> Memory {
    let info = rustix::system::sysinfo();
    let unit = u64::from(info.mem_unit.max(1));
    Memory {
        total_bytes: (info.totalram as u64).saturating_mul(unit),
        page_bytes: rustix::param::page_size() as u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describes_this_host_and_a_tmp_dir() {
        let h = host();
        assert!(
            h.kernel.starts_with("Linux") && h.cpus >= 1 && h.memory_bytes > 0,
            "{h:?}"
        );
        let t = describe(Path::new("/proc/self/status"));
        assert_eq!(t.fs_type, "proc");
        assert!(t.device.is_none());
    }

    #[test]
    fn space_and_memory_are_read() {
        let s = space(Path::new("/")).unwrap();
        assert!(
            s.total_bytes > 0 && s.avail_bytes <= s.free_bytes && s.free_bytes <= s.total_bytes
        );
        let m = memory();
        assert_eq!(m.total_bytes >> 10, host().memory_bytes >> 10, "{m:?}");
        assert!(m.page_bytes >= 4096 && m.page_bytes.is_power_of_two());
        assert!(space(Path::new("/no/such/dir")).is_err());
    }
}
