//! The host's facts on Windows: the computer's DNS name, the version and CPU model from the
//! registry, GlobalMemoryStatusEx and GetSystemInfo for memory; for a target, its volume
//! (GetVolumePathName), the volume's file system and GUID name (GetVolumeInformation,
//! GetVolumeNameForVolumeMountPoint), its space (GetDiskFreeSpaceEx) and the disk under it
//! (`volume.rs`: its model, sector size, seek penalty and write cache). Read-only, best effort:
//! what cannot be read is left empty.

use std::borrow::Cow;
use std::ffi::OsStr;
use std::io;
use std::path::{Path, PathBuf};

use windows_sys::Win32::Storage::FileSystem::{
    GetDiskFreeSpaceExW, GetVolumeInformationW, GetVolumeNameForVolumeMountPointW,
    GetVolumePathNameW,
};
use windows_sys::Win32::System::Registry::{HKEY_LOCAL_MACHINE, RRF_RT_REG_SZ, RegGetValueW};
use windows_sys::Win32::System::SystemInformation::{
    ComputerNameDnsHostname, GetComputerNameExW, GetSystemInfo, GlobalMemoryStatusEx,
    MEMORYSTATUSEX, SYSTEM_INFO,
};

use super::wide::{text, wide};
use crate::platform::{Host, Memory, Space, TargetInfo};

/// The machine: its name, Windows version, CPU and memory.
pub fn host() -> Host {
    let version = r"SOFTWARE\Microsoft\Windows NT\CurrentVersion";
    let product = registry(version, "ProductName").unwrap_or_else(|| "Windows".into());
    let kernel = match registry(version, "CurrentBuildNumber") {
        Some(build) => format!("{product} build {build}"),
        None => product,
    };
    let cpu = r"HARDWARE\DESCRIPTION\System\CentralProcessor\0";
    Host {
        hostname: computer_name(),
        kernel,
        arch: std::env::consts::ARCH.to_string(),
        cpu_model: registry(cpu, "ProcessorNameString")
            .unwrap_or_default()
            .trim()
            .to_string(),
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
        memory_bytes: memory().total_bytes,
    }
}

fn computer_name() -> String {
    let mut buf = [0u16; 256];
    let mut len = buf.len() as u32;
    // SAFETY: `buf` holds `len` UTF-16 units; the call writes at most that many.
    match unsafe { GetComputerNameExW(ComputerNameDnsHostname, buf.as_mut_ptr(), &mut len) } {
        0 => String::new(),
        _ => text(&buf[..len as usize]),
    }
}

/// A string value under HKEY_LOCAL_MACHINE.
fn registry(key: &str, value: &str) -> Option<String> {
    let (key, value) = (wide(OsStr::new(key)), wide(OsStr::new(value)));
    let mut buf = [0u16; 512];
    let mut bytes = (buf.len() * 2) as u32;
    // SAFETY: NUL-terminated key and value names; `buf` holds `bytes` bytes.
    let rc = unsafe {
        RegGetValueW(
            HKEY_LOCAL_MACHINE,
            key.as_ptr(),
            value.as_ptr(),
            RRF_RT_REG_SZ,
            std::ptr::null_mut(),
            buf.as_mut_ptr().cast(),
            &mut bytes,
        )
    };
    (rc == 0).then(|| text(&buf)).filter(|s| !s.is_empty())
}

/// The machine's physical memory and page size.
pub fn memory() -> Memory {
    // SAFETY: MEMORYSTATUSEX and SYSTEM_INFO are plain data the calls fill in.
    unsafe {
        let mut m: MEMORYSTATUSEX = std::mem::zeroed();
        m.dwLength = std::mem::size_of::<MEMORYSTATUSEX>() as u32;
        let total_bytes = match GlobalMemoryStatusEx(&mut m) {
            0 => 0,
            _ => m.ullTotalPhys,
        };
        let mut s: SYSTEM_INFO = std::mem::zeroed();
        GetSystemInfo(&mut s);
        Memory {
            total_bytes,
            page_bytes: u64::from(s.dwPageSize.max(4096)),
        }
    }
}

/// The space of the volume holding `dir`.
pub fn space(dir: &Path) -> io::Result<Space> {
    let dir = wide(dir.as_os_str());
    let (mut avail, mut total, mut free) = (0u64, 0u64, 0u64);
    // SAFETY: a NUL-terminated path and three writable counters.
    match unsafe { GetDiskFreeSpaceExW(dir.as_ptr(), &mut avail, &mut total, &mut free) } {
        0 => Err(io::Error::last_os_error()),
        _ => Ok(Space {
            total_bytes: total,
            avail_bytes: avail,
            free_bytes: free,
        }),
    }
}

/// The volume root holding `path` (`C:\`, or a mounted folder).
pub(super) fn volume_root(path: &Path) -> Option<String> {
    let p = wide(path.as_os_str());
    let mut buf = [0u16; 1024];
    // SAFETY: a NUL-terminated path and a buffer of the length given.
    match unsafe { GetVolumePathNameW(p.as_ptr(), buf.as_mut_ptr(), buf.len() as u32) } {
        0 => None,
        _ => Some(text(&buf)),
    }
}

/// The file system's name (NTFS, ReFS, FAT32) and the volume's GUID path.
pub(super) fn volume_facts(root: &str) -> (String, String) {
    let r = wide(OsStr::new(root));
    let mut fs = [0u16; 64];
    let mut guid = [0u16; 64];
    // SAFETY: a NUL-terminated root; every out-pointer is null or a buffer of the length given.
    unsafe {
        let ok = GetVolumeInformationW(
            r.as_ptr(),
            std::ptr::null_mut(),
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            fs.as_mut_ptr(),
            fs.len() as u32,
        );
        if ok == 0 {
            fs[0] = 0;
        }
        if GetVolumeNameForVolumeMountPointW(r.as_ptr(), guid.as_mut_ptr(), guid.len() as u32) == 0
        {
            guid[0] = 0;
        }
    }
    (text(&fs), text(&guid))
}

/// `\\?\C:\x` as `C:\x`: the verbatim prefix canonicalize adds says nothing to a reader.
fn plain(p: PathBuf) -> PathBuf {
    match p.to_str().and_then(|s| s.strip_prefix(r"\\?\")) {
        Some(rest) if rest.as_bytes().get(1) == Some(&b':') => PathBuf::from(rest),
        _ => p,
    }
}

/// Whether `path` names a device rather than a file (`\\.\PhysicalDrive0`, `\\.\E:`).
pub(crate) fn is_device_path(path: &Path) -> bool {
    path.to_str().is_some_and(|s| s.starts_with(r"\\.\"))
}

/// Why `path` cannot be a target on this system, if it cannot: a raw device, whose size and
/// sector size this build does not read yet (IOCTL_DISK_GET_LENGTH_INFO and the access
/// alignment of a disk opened for I/O are to come), so it is refused before anything opens it,
/// whatever the options.
pub fn unsupported_target(path: &Path) -> Option<&'static str> {
    is_device_path(path).then_some(
        "a raw device: the Windows build does not test raw devices yet (their size and sector \
         size are not read); name a file on one of its volumes",
    )
}

/// [`describe`] for each of `paths`.
pub fn describe_all<'a>(paths: impl Iterator<Item = &'a Path>) -> Vec<TargetInfo> {
    paths.map(describe).collect()
}

/// Describes `path` (or, if it is gone or not yet created, the directory holding it).
pub fn describe(path: &Path) -> TargetInfo {
    let device = is_device_path(path);
    let mut info = TargetInfo {
        path: match device {
            true => path.to_path_buf(),
            false => std::fs::canonicalize(path).map_or_else(|_| path.to_path_buf(), plain),
        },
        kind: Cow::Borrowed(if device { "raw device" } else { "file" }),
        fs_type: String::new(),
        mount_point: String::new(),
        mount_options: String::new(),
        mount_source: String::new(),
        device: None,
        space: None,
    };
    if device {
        info.fs_type = "(raw device)".into();
        return info;
    }
    let dir = match path.is_dir() {
        true => path,
        false => crate::rawpath::parent_dir(path),
    };
    info.space = space(dir).ok();
    if let Some(root) = volume_root(dir) {
        let (fs, guid) = volume_facts(&root);
        info.device =
            super::volume::volume_device(&root, &guid).and_then(|v| super::volume::disk_of(&v));
        info.fs_type = fs;
        info.mount_point = root;
        info.mount_source = guid;
    }
    info
}

/// The logical sector size that unbuffered I/O on `p` must keep to: a raw device's own, or
/// that of the volume holding the file (or, before it exists, its directory).
pub fn logical_block_size_at(p: &Path) -> Option<u64> {
    if is_device_path(p) {
        return super::volume::device_sector_size(p);
    }
    let (root, device) = volume_of(p)?;
    super::volume::sector_size(&root, device.as_deref())
}

/// The volume holding `path` (or, before it exists, its directory): its root (`C:\\`) and
/// the name its device is opened by, where it has one (not a network share).
pub(super) fn volume_of(path: &Path) -> Option<(String, Option<String>)> {
    let dir = match path.exists() {
        true => path,
        false => crate::rawpath::parent_dir(path),
    };
    let root = volume_root(dir)?;
    let (_, guid) = volume_facts(&root);
    let device = super::volume::volume_device(&root, &guid);
    Some((root, device))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describes_this_host_and_a_temp_dir() {
        let h = host();
        assert!(
            h.cpus >= 1 && h.memory_bytes > 0 && !h.kernel.is_empty(),
            "{h:?}"
        );
        let m = memory();
        assert!(
            m.page_bytes >= 4096 && m.page_bytes.is_power_of_two(),
            "{m:?}"
        );
        let dir = std::env::temp_dir();
        let t = describe(&dir.join("not-yet-created.dat"));
        assert!(!t.mount_point.is_empty() && !t.fs_type.is_empty(), "{t:?}");
        let s = t.space.expect("the temp dir's space");
        assert!(s.total_bytes > 0 && s.avail_bytes <= s.total_bytes, "{s:?}");
        assert!(space(Path::new(r"Q:\no\such\dir")).is_err());
        assert_eq!(
            describe(Path::new(r"\\.\PhysicalDrive0")).kind,
            "raw device"
        );
    }

    #[test]
    fn verbatim_prefixes_are_dropped_for_drive_paths_only() {
        assert_eq!(
            plain(PathBuf::from(r"\\?\C:\x\y")),
            PathBuf::from(r"C:\x\y")
        );
        let unc = PathBuf::from(r"\\?\UNC\server\share");
        assert_eq!(plain(unc.clone()), unc);
    }
}
