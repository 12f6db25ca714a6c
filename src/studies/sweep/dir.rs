//! A sweep's directory: made new, or taken back by `--resume` only when it is this sweep's own
//! (its index written by iogauge and unchanged, the same workload, the same grid) and every
//! file the sweep will write there is new or iogauge's own unchanged file. Every file goes
//! through the one audited writer, relative to the directory held open from the start, so a
//! planted link, an edited table or a foreign point report is refused before any point runs,
//! never written through or over. Nothing here prints or runs a point.

use std::ffi::{OsStr, OsString};
use std::path::Path;

use super::{Axis, Index, Status};
use crate::files::writer::{OutDir, Refusal};

/// The largest index read back: a million points' rows are a few hundred MiB.
const MAX_INDEX_BYTES: u64 = 512 << 20;

/// The directory of a sweep being run, held open.
pub struct SweepDir {
    root: OutDir,
    points: OutDir,
    /// Replace files iogauge did not write (`--overwrite-output`).
    replace: bool,
}

/// The files a sweep writes in its directory besides its points' reports.
pub const OUTPUTS: [&str; 4] = ["index.json", "index.csv", "table.txt", "index.html"];

/// A point's report, relative to the sweep's directory.
pub fn point_file(point: usize) -> String {
    format!("points/{point:04}.json")
}

impl SweepDir {
    /// Whether a new sweep may go in `dir`: new, or an empty directory, in a directory that
    /// exists. Nothing is created here (the points are checked first; see [`SweepDir::create`]).
    pub fn check_new(dir: &Path, shown: &str) -> Result<(), String> {
        if std::fs::read_dir(dir).is_ok_and(|mut d| d.next().is_some()) {
            return Err(format!(
                "--dir={shown}: exists and is not empty: give --resume to continue the sweep \
                 in it, or a new directory"
            ));
        }
        match std::fs::symlink_metadata(dir) {
            Ok(m) if !m.is_dir() && !m.file_type().is_symlink() => {
                return Err(format!("--dir={shown}: exists and is not a directory"));
            }
            Ok(m) if m.file_type().is_symlink() && !dir.is_dir() => {
                return Err(format!(
                    "--dir={shown}: is a symbolic link to something that is not a directory"
                ));
            }
            _ => {}
        }
        let parent = crate::files::fsinfo::parent_dir(dir);
        if !parent.as_os_str().is_empty() && !parent.is_dir() {
            return Err(format!(
                "--dir={shown}: {} does not exist or is not a directory",
                crate::rawpath::display(parent)
            ));
        }
        Ok(())
    }

    /// Makes the (checked) new directory and opens it.
    pub fn create(dir: &Path, shown: &str, replace: bool) -> Result<SweepDir, String> {
        match std::fs::create_dir(dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && dir.is_dir() => {}
            Err(e) => return Err(format!("--dir={shown}: {e}")),
        }
        Self::open(dir, shown, replace)
    }

    fn open(dir: &Path, shown: &str, replace: bool) -> Result<SweepDir, String> {
        let root = OutDir::open(dir).map_err(|e| format!("--dir={shown}: {e}"))?;
        let points = root
            .sub("points")
            .map_err(|e| format!("{shown}/points: {e}"))?;
        Ok(SweepDir {
            root,
            points,
            replace,
        })
    }

    /// Takes back the sweep in `dir` for `--resume`: its index must be iogauge's, unchanged,
    /// of the same workload (`base`) and the same grid as `fresh`; the points it finished
    /// (whose reports are still iogauge's) are carried into `fresh`. Then every file the
    /// sweep will write is checked. Refusals say what differs or which file is not ours.
    pub fn resume(
        dir: &Path,
        shown: &str,
        fresh: Index,
        replace: bool,
    ) -> Result<(SweepDir, Index), String> {
        let root = OutDir::open(dir)
            .map_err(|e| format!("--resume: {shown}: {e}: no sweep to resume there"))?;
        let index_name = OsStr::new("index.json");
        let bytes = root
            .read(index_name, MAX_INDEX_BYTES)
            .map_err(|e| format!("--resume: {shown}/index.json: {e}: no sweep to resume there"))?;
        let old: Index = serde_json::from_slice(&bytes)
            .map_err(|e| format!("--resume: {shown}/index.json: not a sweep's index ({e})"))?;
        if old.schema != super::SCHEMA {
            return Err(format!("--resume: {shown}/index.json: not a sweep's index"));
        }
        root.check(index_name, replace).map_err(|e| {
            format!(
                "--resume: {shown}/index.json: {e} (the sweep's record of what ran cannot be \
                 trusted)"
            )
        })?;
        if old.base != fresh.base {
            return Err(format!(
                "--resume: {shown} holds a sweep of another workload ({}); give the same \
                 options, or another --dir",
                old.base.join(" ")
            ));
        }
        if let Some(why) = grid_difference(&old.axes, &fresh.axes) {
            return Err(format!(
                "--resume: {shown} holds a sweep of another grid: {why}; give the same --sweep \
                 axes, or another --dir"
            ));
        }
        let me = Self::open(dir, shown, replace)?;
        let mut index = fresh;
        for p in &mut index.points {
            let done = old.points.iter().find(|o| {
                o.values == p.values
                    && matches!(o.status, Status::Ok | Status::Failed | Status::Refused)
            });
            let Some(o) = done else { continue };
            if let Some(r) = &o.report {
                // A report carried over must be the one iogauge wrote for this point.
                if *r != point_file(o.point) {
                    return Err(format!(
                        "--resume: {shown}/index.json: point {} names the report {r:?}, not one \
                         a sweep writes",
                        o.point
                    ));
                }
                match me.points.check(&report_name(o.point), false) {
                    Ok(true) => {}
                    Ok(false) => continue,
                    Err(e) => {
                        return Err(format!("--resume: {shown}/{r}: {e}"));
                    }
                }
            }
            let n = p.point;
            *p = o.clone();
            p.point = n;
        }
        me.check_outputs(&index, shown)?;
        Ok((me, index))
    }

    /// Every file the sweep will write (the index files and the pending points' reports)
    /// must be new or iogauge's unchanged, or the user allowed replacing it.
    pub fn check_outputs(&self, index: &Index, shown: &str) -> Result<(), String> {
        for name in OUTPUTS {
            self.root
                .check(OsStr::new(name), self.replace)
                .map_err(|e| format!("{shown}/{name}: {e}"))?;
        }
        for p in &index.points {
            if matches!(p.status, Status::Pending | Status::Interrupted) {
                self.points
                    .check(&report_name(p.point), self.replace)
                    .map_err(|e| format!("{shown}/{}: {e}", point_file(p.point)))?;
            }
        }
        Ok(())
    }

    /// Writes one of the index files.
    pub fn write(&self, name: &str, bytes: &[u8]) -> Result<(), Refusal> {
        self.root.write(OsStr::new(name), bytes, self.replace)
    }

    /// Writes a point's report.
    pub fn write_point(&self, point: usize, bytes: &[u8]) -> Result<(), Refusal> {
        self.points.write(&report_name(point), bytes, self.replace)
    }

    /// The index, as JSON and CSV.
    pub fn save_index(&self, index: &Index) -> Result<(), Refusal> {
        let json = serde_json::to_vec_pretty(index).map_err(std::io::Error::other)?;
        self.write("index.json", &json)?;
        self.write("index.csv", index.csv().as_bytes())
    }
}

fn report_name(point: usize) -> OsString {
    OsString::from(format!("{point:04}.json"))
}

/// How two grids differ, in words; `None` when they are the same.
pub fn grid_difference(old: &[Axis], new: &[Axis]) -> Option<String> {
    let names = |a: &[Axis]| {
        a.iter()
            .map(|x| x.name.clone())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if old.len() != new.len() || old.iter().zip(new).any(|(o, n)| o.name != n.name) {
        return Some(format!(
            "it sweeps {} where this sweeps {}",
            names(old),
            names(new)
        ));
    }
    for (o, n) in old.iter().zip(new) {
        if o.values != n.values {
            return Some(format!(
                "its {} takes {} value(s) ({}) where this takes {} ({})",
                o.name,
                o.values.len(),
                brief(&o.values),
                n.values.len(),
                brief(&n.values)
            ));
        }
    }
    None
}

fn brief(v: &[String]) -> String {
    if v.len() <= 6 {
        v.join(",")
    } else {
        format!("{},{},{},…,{}", v[0], v[1], v[2], v[v.len() - 1])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn axis(name: &str, v: &[&str]) -> Axis {
        Axis {
            name: name.into(),
            values: v.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn grids_that_differ_say_how() {
        let a = [axis("bs", &["4k", "8k"])];
        assert_eq!(grid_difference(&a, &a), None);
        let w = grid_difference(&a, &[axis("bs", &["4k", "16k"])]).unwrap();
        assert!(w.contains("4k,8k") && w.contains("4k,16k"), "{w}");
        let w = grid_difference(&a, &[axis("iodepth", &["1"])]).unwrap();
        assert!(w.contains("sweeps bs where this sweeps iodepth"), "{w}");
    }
}
