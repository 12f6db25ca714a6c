//! What the system counted for the disks under a group's targets: two readings around the
//! group give what each device really did while iogauge measured, which is how a report can
//! tell a device's speed from the page cache's. The platform reads them (/proc/diskstats on
//! Linux, IOCTL_DISK_PERFORMANCE on Windows); this decides nothing (the report does).

pub use crate::platform::DiskCounters;
pub use crate::platform::disks::{DiskId, device_of, snapshot};
