//! The storage under a volume on Windows, asked of the volume's and the disk's own handles:
//! IOCTL_STORAGE_GET_DEVICE_NUMBER for the disk holding a volume (`\\.\PhysicalDriveN`), and
//! IOCTL_STORAGE_QUERY_PROPERTY for its vendor and model, its sector sizes (the access
//! alignment property), whether it incurs a seek penalty and its write cache. The handles are
//! opened with no access at all — queries need none, so no administrator rights either — and
//! nothing is ever written. Best effort: a property the driver does not answer is left empty;
//! the logical sector size falls back to GetDiskFreeSpace's, which every volume answers.

use std::ffi::OsStr;
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};
use std::path::Path;

use windows_sys::Win32::Foundation::INVALID_HANDLE_VALUE;
use windows_sys::Win32::Storage::FileSystem::{
    CreateFileW, FILE_SHARE_DELETE, FILE_SHARE_READ, FILE_SHARE_WRITE, GetDiskFreeSpaceW,
    OPEN_EXISTING,
};
use windows_sys::Win32::System::IO::DeviceIoControl;
use windows_sys::Win32::System::Ioctl::{
    DEVICE_SEEK_PENALTY_DESCRIPTOR, IOCTL_STORAGE_GET_DEVICE_NUMBER, IOCTL_STORAGE_QUERY_PROPERTY,
    PropertyStandardQuery, STORAGE_ACCESS_ALIGNMENT_DESCRIPTOR, STORAGE_DEVICE_DESCRIPTOR,
    STORAGE_DEVICE_NUMBER, STORAGE_PROPERTY_ID, STORAGE_PROPERTY_QUERY,
    STORAGE_WRITE_CACHE_PROPERTY, StorageAccessAlignmentProperty, StorageDeviceProperty,
    StorageDeviceSeekPenaltyProperty, StorageDeviceWriteCacheProperty, WriteCacheDisabled,
    WriteCacheEnabled,
};

use super::wide::wide;
use crate::platform::Device;

/// A device opened for queries only (`\\.\C:`, `\\?\Volume{…}`, `\\.\PhysicalDrive0`).
pub(super) fn open_for_queries(name: &str) -> Option<OwnedHandle> {
    let w = wide(OsStr::new(name));
    // SAFETY: a NUL-terminated name; no security attributes or template.
    let h = unsafe {
        CreateFileW(
            w.as_ptr(),
            0,
            FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
            std::ptr::null(),
            OPEN_EXISTING,
            0,
            std::ptr::null_mut(),
        )
    };
    if h == INVALID_HANDLE_VALUE || h.is_null() {
        return None;
    }
    // SAFETY: a handle CreateFileW just gave us, owned from here.
    Some(unsafe { OwnedHandle::from_raw_handle(h) })
}

/// One IOCTL with an input and an output buffer; the bytes it wrote, or `None` if it failed.
pub(super) fn ioctl(h: &OwnedHandle, code: u32, input: &[u8], out: &mut [u8]) -> Option<usize> {
    let mut got = 0u32;
    // SAFETY: both buffers are live for the call and their lengths are given; no OVERLAPPED
    // (the handle was opened for synchronous use).
    let ok = unsafe {
        DeviceIoControl(
            h.as_raw_handle(),
            code,
            input.as_ptr().cast(),
            input.len() as u32,
            out.as_mut_ptr().cast(),
            out.len() as u32,
            &mut got,
            std::ptr::null_mut(),
        )
    };
    (ok != 0).then_some(got as usize)
}

/// A plain-data structure read from the front of `bytes`, when they hold all of it.
pub(super) fn read_struct<T: Copy>(bytes: &[u8]) -> Option<T> {
    (bytes.len() >= std::mem::size_of::<T>())
        // SAFETY: `bytes` holds at least size_of::<T>() bytes; T is a plain C structure of
        // integers and bools that the driver filled in (read unaligned: a Vec<u8>'s start).
        .then(|| unsafe { std::ptr::read_unaligned(bytes.as_ptr().cast::<T>()) })
}

/// The bytes of one storage property (up to 1 KiB: enough for the device descriptor's
/// strings).
fn property(h: &OwnedHandle, id: STORAGE_PROPERTY_ID) -> Option<Vec<u8>> {
    let q = STORAGE_PROPERTY_QUERY {
        PropertyId: id,
        QueryType: PropertyStandardQuery,
        AdditionalParameters: [0],
    };
    // SAFETY: STORAGE_PROPERTY_QUERY is plain data; its bytes are what the IOCTL takes.
    let input = unsafe {
        std::slice::from_raw_parts(
            (&q as *const STORAGE_PROPERTY_QUERY).cast::<u8>(),
            std::mem::size_of::<STORAGE_PROPERTY_QUERY>(),
        )
    };
    let mut out = vec![0u8; 1024];
    let n = ioctl(h, IOCTL_STORAGE_QUERY_PROPERTY, input, &mut out)?;
    out.truncate(n);
    Some(out)
}

/// The logical sector size a storage device reports (the access alignment property).
fn logical_sector(h: &OwnedHandle) -> Option<u64> {
    let a: STORAGE_ACCESS_ALIGNMENT_DESCRIPTOR =
        read_struct(&property(h, StorageAccessAlignmentProperty)?)?;
    sector(a.BytesPerLogicalSector)
}

/// A sector size worth believing: a power of two from 512 bytes to 64 KiB.
fn sector(n: u32) -> Option<u64> {
    (n.is_power_of_two() && (512..=65536).contains(&n)).then_some(u64::from(n))
}

/// The name to open a volume by: `\\.\C:` for a drive's root (as a reader knows it, and
/// as reports name it), else its GUID name without the trailing backslash (with one, the
/// volume's root directory is opened instead). A folder a volume is mounted on (`C:\mnt\x\`)
/// is not its drive's volume, so only the GUID name serves there.
pub(super) fn volume_device(root: &str, guid: &str) -> Option<String> {
    let b = root.as_bytes();
    if b.len() == 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && b[2] == b'\\' {
        return Some(format!(r"\\.\{}", &root[..2]));
    }
    guid.strip_suffix('\\')
        .filter(|g| g.starts_with(r"\\?\Volume"))
        .map(str::to_string)
}

/// The logical sector size under the volume mounted at `root` (`C:\`): its device's own
/// answer (`device`: the name [`volume_device`] gives it), else the file system's
/// (GetDiskFreeSpace's bytes per sector). FILE_FLAG_NO_BUFFERING needs offsets and sizes in
/// multiples of it.
pub(super) fn sector_size(root: &str, device: Option<&str>) -> Option<u64> {
    if let Some(s) = device
        .and_then(open_for_queries)
        .as_ref()
        .and_then(logical_sector)
    {
        return Some(s);
    }
    let r = wide(OsStr::new(root));
    let (mut per_cluster, mut per_sector, mut free, mut total) = (0u32, 0u32, 0u32, 0u32);
    // SAFETY: a NUL-terminated root and four writable counters.
    let ok = unsafe {
        GetDiskFreeSpaceW(
            r.as_ptr(),
            &mut per_cluster,
            &mut per_sector,
            &mut free,
            &mut total,
        )
    };
    (ok != 0).then_some(()).and_then(|()| sector(per_sector))
}

/// The logical sector size of a raw device named by its path (`\\.\PhysicalDrive0`, `\\.\E:`).
pub(super) fn device_sector_size(path: &Path) -> Option<u64> {
    open_for_queries(path.to_str()?)
        .as_ref()
        .and_then(logical_sector)
}

/// The disk under the volume whose device is `volume` (the name [`volume_device`] gives it):
/// `\\.\PhysicalDriveN` and what its driver says of it. `None` when the volume is not on one
/// disk (a spanned volume) or cannot be asked.
pub(super) fn disk_of(volume: &str) -> Option<Device> {
    let volume = open_for_queries(volume)?;
    let name = disk_name(disk_number(&volume)?);
    // The disk answers for itself; the volume forwards most queries to it, so it stands in.
    let disk = open_for_queries(&name);
    let h = disk.as_ref().unwrap_or(&volume);
    let seek: Option<DEVICE_SEEK_PENALTY_DESCRIPTOR> =
        property(h, StorageDeviceSeekPenaltyProperty).and_then(|b| read_struct(&b));
    let cache: Option<STORAGE_WRITE_CACHE_PROPERTY> =
        property(h, StorageDeviceWriteCacheProperty).and_then(|b| read_struct(&b));
    Some(Device {
        name,
        model: property(h, StorageDeviceProperty)
            .map(|b| model(&b))
            .unwrap_or_default(),
        major_minor: String::new(),
        logical_block_size: logical_sector(h),
        rotational: seek.map(|s| s.IncursSeekPenalty),
        write_cache: cache.and_then(|c| match c.WriteCacheEnabled {
            e if e == WriteCacheEnabled => Some("write back".to_string()),
            e if e == WriteCacheDisabled => Some("write through".to_string()),
            _ => None,
        }),
        scheduler: None,
        read_ahead_kb: None,
        max_sectors_kb: None,
        nr_requests: None,
    })
}

/// The number of the disk a volume (or a disk, or a partition) is on.
pub(super) fn disk_number(h: &OwnedHandle) -> Option<u32> {
    let mut out = [0u8; std::mem::size_of::<STORAGE_DEVICE_NUMBER>()];
    ioctl(h, IOCTL_STORAGE_GET_DEVICE_NUMBER, &[], &mut out)?;
    read_struct::<STORAGE_DEVICE_NUMBER>(&out).map(|n| n.DeviceNumber)
}

/// The disk numbered `n` by its device path.
pub(super) fn disk_name(n: u32) -> String {
    format!(r"\\.\PhysicalDrive{n}")
}

/// The vendor and product named in a device descriptor ("NVMe Samsung SSD 980"), as Linux's
/// half joins vendor and model.
fn model(bytes: &[u8]) -> String {
    let Some(d) = read_struct::<STORAGE_DEVICE_DESCRIPTOR>(bytes) else {
        return String::new();
    };
    let at = |offset: u32| -> String {
        let start = offset as usize;
        if start == 0 || start >= bytes.len() {
            return String::new();
        }
        let end = bytes[start..]
            .iter()
            .position(|&b| b == 0)
            .map_or(bytes.len(), |n| start + n);
        String::from_utf8_lossy(&bytes[start..end])
            .trim()
            .to_string()
    };
    let (vendor, product) = (at(d.VendorIdOffset), at(d.ProductIdOffset));
    match (vendor.is_empty(), product.is_empty()) {
        (false, false) if !product.starts_with(&vendor) => format!("{vendor} {product}"),
        (_, false) => product,
        (false, true) => vendor,
        (true, true) => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_volume_is_named_by_its_drive_letter_else_its_guid_name() {
        assert_eq!(
            volume_device(r"C:\", r"\\?\Volume{1}\").as_deref(),
            Some(r"\\.\C:")
        );
        assert_eq!(volume_device(r"D:\", "").as_deref(), Some(r"\\.\D:"));
        assert_eq!(
            volume_device(r"C:\mnt\data\", r"\\?\Volume{2}\").as_deref(),
            Some(r"\\?\Volume{2}")
        );
        assert_eq!(volume_device(r"C:\mnt\data\", ""), None);
        assert_eq!(volume_device(r"\\server\share\", ""), None);
    }

    #[test]
    fn only_believable_sector_sizes_are_taken() {
        assert_eq!(sector(512), Some(512));
        assert_eq!(sector(4096), Some(4096));
        assert_eq!(sector(0), None);
        assert_eq!(sector(520), None);
        assert_eq!(sector(1 << 20), None);
    }

    #[test]
    fn the_model_joins_vendor_and_product_from_the_descriptor() {
        let mut b = vec![0u8; std::mem::size_of::<STORAGE_DEVICE_DESCRIPTOR>()];
        let vendor_at = b.len() as u32;
        b.extend_from_slice(b"ATA     \0");
        let product_at = b.len() as u32;
        b.extend_from_slice(b"Samsung SSD 870 \0");
        let d = STORAGE_DEVICE_DESCRIPTOR {
            VendorIdOffset: vendor_at,
            ProductIdOffset: product_at,
            ..Default::default()
        };
        // SAFETY: writes the plain descriptor at the front of a buffer at least its size.
        unsafe { std::ptr::write_unaligned(b.as_mut_ptr().cast(), d) };
        assert_eq!(model(&b), "ATA Samsung SSD 870");
        let none = STORAGE_DEVICE_DESCRIPTOR::default();
        let mut b2 = vec![0u8; std::mem::size_of::<STORAGE_DEVICE_DESCRIPTOR>()];
        // SAFETY: as above.
        unsafe { std::ptr::write_unaligned(b2.as_mut_ptr().cast(), none) };
        assert_eq!(model(&b2), "");
        assert_eq!(model(&[1, 2]), "");
    }

    #[test]
    fn the_temp_dirs_volume_has_a_sector_size() {
        let dir = std::env::temp_dir();
        let root = super::super::host::volume_root(&dir).expect("the temp dir's volume");
        let device = volume_device(&root, "");
        let s = sector_size(&root, device.as_deref())
            .expect("a sector size, if only GetDiskFreeSpace's");
        assert!(s.is_power_of_two() && s >= 512, "{s}");
        // What the device itself says is printed, not asserted: Wine's volumes answer
        // neither the device number nor the storage properties.
        println!(
            "{root}: sector {s}, disk {:?}",
            device.and_then(|d| disk_of(&d))
        );
    }
}
