//! A sweep's directory: made new, or taken back by `--resume` only when it is this sweep's own
//! (its index written by iogauge and unchanged, the same workload, the same grid) and every
//! file the sweep will write there is new or iogauge's own unchanged file. Every file goes
//! through the one audited writer, relative to the directory held open from the start, so a
//! planted link, an edited table or a foreign point report is refused before any point runs,
//! never written through or over. Nothing here prints or runs a point.

use std::ffi::{OsStr, OsString};
use std::path::Path;

use super::{Axis, DirError, Index, ResumeError, Status, SweepError};
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
    pub fn check_new(dir: &Path, shown: &str) -> Result<(), SweepError> {
        let bad = |problem| SweepError::Dir {
            shown: shown.to_string(),
            problem,
        };
        if std::fs::read_dir(dir).is_ok_and(|mut d| d.next().is_some()) {
            return Err(bad(DirError::NotEmpty));
        }
        match std::fs::symlink_metadata(dir) {
            Ok(m) if !m.is_dir() && !m.file_type().is_symlink() => {
                return Err(bad(DirError::NotDirectory));
            }
            Ok(m) if m.file_type().is_symlink() && !dir.is_dir() => {
                return Err(bad(DirError::LinkToNonDirectory));
            }
            _ => {}
        }
        let parent = crate::files::fsinfo::parent_dir(dir);
        if !parent.as_os_str().is_empty() && !parent.is_dir() {
            return Err(SweepError::NoParent {
                shown: shown.to_string(),
                parent: parent.to_path_buf(),
            });
        }
        Ok(())
    }

    /// Makes the (checked) new directory and opens it.
    pub fn create(dir: &Path, shown: &str, replace: bool) -> Result<SweepDir, SweepError> {
        match std::fs::create_dir(dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && dir.is_dir() => {}
            Err(e) => {
                return Err(SweepError::Dir {
                    shown: shown.to_string(),
                    problem: e.into(),
                });
            }
        }
        Self::open(dir, shown, replace)
    }

    fn open(dir: &Path, shown: &str, replace: bool) -> Result<SweepDir, SweepError> {
        let root = OutDir::open(dir).map_err(|e| SweepError::Dir {
            shown: shown.to_string(),
            problem: e.into(),
        })?;
        let points = root.sub("points").map_err(|source| SweepError::Io {
            file: format!("{shown}/points"),
            source,
        })?;
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
    ) -> Result<(SweepDir, Index), SweepError> {
        let shown_ = || shown.to_string();
        let no = |e: ResumeError| SweepError::Resume(e);
        let root = OutDir::open(dir).map_err(|source| {
            no(ResumeError::NoDir {
                shown: shown_(),
                source,
            })
        })?;
        let index_name = OsStr::new("index.json");
        let bytes = root.read(index_name, MAX_INDEX_BYTES).map_err(|source| {
            no(ResumeError::NoIndex {
                shown: shown_(),
                source,
            })
        })?;
        let old: Index = serde_json::from_slice(&bytes).map_err(|e| {
            no(ResumeError::NotIndex {
                shown: shown_(),
                why: Some(e),
            })
        })?;
        if old.schema != super::SCHEMA {
            return Err(no(ResumeError::NotIndex {
                shown: shown_(),
                why: None,
            }));
        }
        root.check(index_name, replace).map_err(|refusal| {
            no(ResumeError::Untrusted {
                shown: shown_(),
                refusal,
            })
        })?;
        if old.base != fresh.base {
            return Err(no(ResumeError::OtherWorkload {
                shown: shown_(),
                base: old.base.join(" "),
            }));
        }
        if let Some(why) = grid_difference(&old.axes, &fresh.axes) {
            return Err(no(ResumeError::OtherGrid {
                shown: shown_(),
                why,
            }));
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
                    return Err(no(ResumeError::ForeignReport {
                        shown: shown_(),
                        point: o.point,
                        report: r.clone(),
                    }));
                }
                match me.points.check(&report_name(o.point), false) {
                    Ok(true) => {}
                    Ok(false) => continue,
                    Err(refusal) => {
                        return Err(no(ResumeError::Report {
                            shown: shown_(),
                            report: r.clone(),
                            refusal,
                        }));
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
    pub fn check_outputs(&self, index: &Index, shown: &str) -> Result<(), SweepError> {
        for name in OUTPUTS {
            self.root
                .check(OsStr::new(name), self.replace)
                .map_err(|refusal| SweepError::Output {
                    file: format!("{shown}/{name}"),
                    refusal,
                })?;
        }
        for p in &index.points {
            if matches!(p.status, Status::Pending | Status::Interrupted) {
                self.points
                    .check(&report_name(p.point), self.replace)
                    .map_err(|refusal| SweepError::Output {
                        file: format!("{shown}/{}", point_file(p.point)),
                        refusal,
                    })?;
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
