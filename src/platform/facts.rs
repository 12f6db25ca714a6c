//! What the platform's halves hand back: the host's facts and a thread's CPU usage, plain data
//! that both halves fill in the same way (a field a platform cannot read is left empty). The
//! report keeps them as they are (the host and stats modules re-export them).

use std::borrow::Cow;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Host {
    pub hostname: String,
    pub kernel: String,
    pub arch: String,
    pub cpu_model: String,
    pub cpus: usize,
    pub memory_bytes: u64,
}

/// A target's place in the storage stack.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TargetInfo {
    #[serde(with = "crate::rawpath::serde_path")]
    pub path: PathBuf,
    pub kind: Cow<'static, str>,
    pub fs_type: String,
    pub mount_point: String,
    pub mount_options: String,
    pub mount_source: String,
    /// The block device under the file system (or the target itself); `None` when there is
    /// none (tmpfs, network file systems).
    pub device: Option<Device>,
    /// The file system's space when the target was described (after the run, before clean-up).
    pub space: Option<Space>,
}

/// statvfs of a target's file system.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Space {
    pub total_bytes: u64,
    /// Free for unprivileged users (df's "Available").
    pub avail_bytes: u64,
    /// Free including the root reserve.
    pub free_bytes: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Device {
    pub name: String,
    pub model: String,
    pub major_minor: String,
    pub logical_block_size: Option<u64>,
    pub rotational: Option<bool>,
    /// The queue's settings that change what a test measures (`/sys/block/X/queue`): the
    /// volatile write cache ("write back" or "write through"), the I/O scheduler in use,
    /// read-ahead, the largest request and the queue's request slots.
    #[serde(default)]
    pub write_cache: Option<String>,
    #[serde(default)]
    pub scheduler: Option<String>,
    #[serde(default)]
    pub read_ahead_kb: Option<u64>,
    #[serde(default)]
    pub max_sectors_kb: Option<u64>,
    #[serde(default)]
    pub nr_requests: Option<u64>,
}

impl Device {
    /// The device as its system names it: `/dev/sda` on Linux (whose `name` is the kernel's,
    /// `sda`), `\\.\PhysicalDrive0` on Windows (whose `name` is that path already).
    pub fn path(&self) -> String {
        match self.name.starts_with(r"\\") {
            true => self.name.clone(),
            false => format!("/dev/{}", self.name),
        }
    }
}

/// The machine's memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Memory {
    pub total_bytes: u64,
    pub page_bytes: u64,
}

/// Resource usage at one instant.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuUsage {
    pub user: Duration,
    pub system: Duration,
    pub voluntary_ctx: u64,
    pub involuntary_ctx: u64,
    pub minor_faults: u64,
    pub major_faults: u64,
}
