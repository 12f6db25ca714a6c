//! The free-space check: the files a run creates or extends must fit on their file systems
//! (per file system, what each file still needs to grow), before anything is created.

use crate::platform::sys::fs::stat;
use std::collections::BTreeMap;
use std::path::PathBuf;

use super::{Kind, TargetError, Targets, usage};
use crate::files::fsinfo::parent_dir;

/// Refuses when the files to be created or extended do not fit in the free space.
pub(super) fn check_space(t: &Targets, size: &str) -> Result<(), TargetError> {
    let mut per_fs: BTreeMap<u64, (u64, PathBuf)> = BTreeMap::new();
    for (p, n) in &t.needs {
        // A file filled until its file system is full (fill_device) takes what there is.
        if n.kind == Kind::BlockDevice || n.fill_from.is_some() {
            continue;
        }
        let have = stat(p).map_or(0, |st| st.st_blocks as u64 * 512);
        let grow = n.extent.saturating_sub(have);
        let dir = parent_dir(p);
        let dev = stat(dir).map_or(0, |st| st.st_dev);
        let e = per_fs.entry(dev).or_insert((0, dir.to_path_buf()));
        e.0 += grow;
    }
    for (need, dir) in per_fs.values() {
        if *need == 0 {
            continue;
        }
        let free = crate::host::space(dir)
            .map_err(|e| {
                usage(format!(
                    "{}: cannot read its free space: {e}",
                    dir.display()
                ))
            })?
            .avail_bytes;
        if *need > free {
            return Err(usage(format!(
                "{size}: the test files need {} more on the file system of {}, which has {} free; \
                 use a smaller size or another directory",
                crate::units::human_bytes(*need),
                dir.display(),
                crate::units::human_bytes(free)
            )));
        }
    }
    Ok(())
}
