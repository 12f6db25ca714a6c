//! The files of fio's file-operation engines, whose measured operation is on the file's name:
//! `filecreate` needs names that are free (it creates each file itself, during the run, and the
//! run then owns it as it owns a file it laid out), `filedelete` deletes only files this run
//! created for it, and `filestat` stats existing files as they are (never opened to write) or
//! files the run creates. What each engine gets is a name in a directory held open, so a
//! delete reaches the directory the file was created in.

use crate::platform::fd::{AsFd, OwnedFd};
use std::ffi::CString;
use std::path::{Path, PathBuf};

use crate::platform::sys::fs::{FileType, OFlags};

use super::check::{check_creatable, check_directory, existing, option_of};
use super::{Kind, Need, OpenedFile, TargetError, Targets, io_err, lock_for_writing, usage};
use crate::engine::Files;
use crate::engine::fileops::Name;
use crate::files::ownership::{self, Identity, MarkState};
use crate::plan::{EngineKind, JobSpec};

/// Checks a file-operation job's paths and records what the run must do with them.
pub(super) fn check_job(t: &mut Targets, gi: usize, job: &JobSpec) -> Result<(), TargetError> {
    let opt = option_of(job);
    check_directory(job)?;
    let engine = job.label_with("ioengine", job.engine.as_str());
    for (i, p) in job.paths().iter().enumerate() {
        let used_before = t.needs.contains_key(p);
        if job.engine.dir_op() {
            dir_need(t, gi, job, p)?;
            continue;
        }
        let found = existing(t, p, &opt)?;
        let new_only = match job.engine {
            EngineKind::Filecreate => Some("creating it is the measured operation"),
            EngineKind::Filedelete => Some("it deletes only files this run creates for it"),
            _ => None,
        };
        if let Some(why) = new_only.filter(|_| found.is_some() || used_before) {
            let what = match found.is_some() {
                true => "exists",
                false => "is another job's file in this run",
            };
            return Err(usage(format!(
                "{}: {what}; {engine}: {why}, so it needs names that are free (remove the \
                 files, or name another directory)",
                opt(p)
            )));
        }
        if found.is_none() && !used_before {
            check_creatable(p, &opt)?;
        }
        let by_job = job.engine == EngineKind::Filecreate;
        let entry = t.needs.entry(p.clone()).or_insert(Need {
            kind: found.as_ref().map_or(Kind::Regular, |e| e.kind),
            exists: found.is_some(),
            extent: 0,
            layout_from: None,
            first_group: gi,
            written: found.is_none(),
            identity: found.as_ref().map(|e| e.identity),
            follow: found.as_ref().is_some_and(|e| e.follow),
            ours: false,
            fallocate: job.fallocate,
            writers: Vec::new(),
            by_job,
            fill_from: None,
            after_fill: 0,
        });
        if !entry.exists && !by_job {
            // Created and laid out with data before the job, as fio lays its files out.
            entry.extent = entry.extent.max(job.extent(i));
            entry.layout_from.get_or_insert(gi);
        }
    }
    Ok(())
}

/// A directory engine's path: dircreate's and dirdelete's must be free (dircreate makes the
/// directory as its measured operation; dirdelete removes only directories the run made for
/// it, before the job), dirstat's an existing directory, used as it is, or one the run makes.
fn dir_need(t: &mut Targets, gi: usize, job: &JobSpec, p: &Path) -> Result<(), TargetError> {
    let opt = option_of(job);
    let engine = job.label_with("ioengine", job.engine.as_str());
    if let Some(n) = t.needs.get(p) {
        // Another job's directory (a dirstat after a dircreate): as that job leaves it.
        if n.kind != Kind::Directory || job.engine != EngineKind::Dirstat {
            let what = match n.kind {
                Kind::Directory => "directory",
                _ => "file",
            };
            return Err(usage(format!(
                "{}: is another job's {what} in this run; {engine} needs a name of its own",
                opt(p)
            )));
        }
        return Ok(());
    }
    let meta = std::fs::symlink_metadata(p);
    let link = meta.as_ref().is_ok_and(|m| m.file_type().is_symlink());
    let found = match meta {
        Ok(_) if job.engine != EngineKind::Dirstat => {
            let why = match job.engine {
                EngineKind::Dircreate => "makes each directory as its measured operation",
                _ => "removes only directories this run makes for it",
            };
            return Err(usage(format!(
                "{}: exists; {engine} {why}, so it needs names that are free (remove them, or \
                 name another directory)",
                opt(p)
            )));
        }
        Ok(_) => {
            // Stat'ed as it is, through the link the user named if it is one.
            let d = std::fs::File::open(p).map_err(|e| usage(format!("{}: {e}", opt(p))))?;
            let st = crate::platform::sys::fs::fstat(&d)
                .map_err(|e| io_err(p, "cannot stat", e.into()))?;
            if FileType::from_raw_mode(st.st_mode) != FileType::Directory {
                return Err(usage(format!(
                    "{}: not a directory; {engine} stats directories",
                    opt(p)
                )));
            }
            t.held.insert(p.to_path_buf(), OwnedFd::from(d));
            Some(Identity::of(&st))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            check_creatable(p, &opt)?;
            None
        }
        Err(e) => return Err(usage(format!("{}: {e}", opt(p)))),
    };
    let need = Need {
        kind: Kind::Directory,
        exists: found.is_some(),
        extent: 0,
        layout_from: None,
        first_group: gi,
        written: found.is_none(),
        identity: found,
        follow: link,
        ours: false,
        fallocate: job.fallocate,
        writers: Vec::new(),
        by_job: job.engine == EngineKind::Dircreate,
        fill_from: None,
        after_fill: 0,
    };
    t.needs.insert(p.to_path_buf(), need);
    Ok(())
}

impl Targets {
    /// Makes the directory `p` a dirstat or dirdelete job works on (just before its group).
    pub(super) fn make_dir(&mut self, p: &Path) -> Result<(), TargetError> {
        let id = self.create(p, true)?;
        let made = "a directory made for the job, empty".to_string();
        self.layouts.insert(p.to_path_buf(), made);
        let need = self.needs.get_mut(p).expect("known path");
        (need.exists, need.identity, need.ours) = (true, Some(id), true);
        Ok(())
    }
}

impl Targets {
    /// A file-operation job's files: filecreate's names only (its files do not exist yet);
    /// filestat's and filedelete's also open read-only, holding their inodes for the run.
    pub(super) fn open_names(
        &self,
        job: &JobSpec,
    ) -> Result<(Files, Vec<OpenedFile>), TargetError> {
        // One descriptor per directory, shared by its files' places (as the run's own are).
        let mut dirs = Vec::new();
        let mut files = Files::default();
        let mut opened = Vec::new();
        for p in job.paths() {
            let place = match self.places.get(&p) {
                // Where the run created it: the directory held since.
                Some(place) => place.clone(),
                None => ownership::Place::of(&p)
                    .map_err(|e| io_err(&p, "cannot open its directory", e))?
                    .sharing(&mut dirs),
            };
            let c = |b: &[u8]| {
                CString::new(b)
                    .map_err(|_| usage(format!("{}: the name holds a NUL byte", p.display())))
            };
            files.names.push(Name {
                dir: place.dir(),
                name: c(place.name().as_encoded_bytes())?,
                path: c(p.as_os_str().as_encoded_bytes())?,
            });
            let (flags, layout) = match job.engine {
                EngineKind::Filecreate => (
                    vec!["O_RDWR".into(), "O_CREAT".into(), "O_EXCL".into()],
                    "created by the job itself (its measured operation), empty".to_string(),
                ),
                EngineKind::Dircreate => (
                    Vec::new(),
                    "a directory made by the job itself (its measured operation, mkdir with \
                     mode 0700)"
                        .to_string(),
                ),
                _ => {
                    files.fds.push(self.reopen(&p, OFlags::RDONLY, "direct")?);
                    let layout = self.layout(&p).unwrap_or("existing, used as it is");
                    (Vec::new(), layout.to_string())
                }
            };
            opened.push(OpenedFile {
                path: p,
                open_flags: flags,
                layout: Some(layout),
            });
        }
        Ok((files, opened))
    }

    /// Takes over the files a job's engine created as its measured operation (filecreate):
    /// from now on the run holds, marks and removes them as the files it laid out. `paths` are
    /// the job's, `made` their indexes and descriptors. Returns what it could not do.
    pub fn adopt(&mut self, paths: &[PathBuf], made: Vec<(usize, OwnedFd)>) -> Vec<String> {
        let mut notes = Vec::new();
        // Looked up once per file: a filecreate job of 4500 files spent seconds in a search
        // of the list for each.
        let mut known: std::collections::HashSet<PathBuf> = self.created.iter().cloned().collect();
        for (i, fd) in made {
            let Some(p) = paths.get(i) else { continue };
            let Ok(st) = crate::platform::sys::fs::fstat(&fd) else {
                continue;
            };
            let id = Identity::of(&st);
            let place = match ownership::Place::of(p) {
                Ok(pl) => Some(pl.sharing(&mut self.dirs)),
                Err(e) => {
                    notes.push(format!("{}: created, but its directory: {e}", p.display()));
                    None
                }
            };
            let _ = ownership::set_mark(fd.as_fd(), MarkState::New);
            if let Err(e) = lock_for_writing(&fd, p) {
                notes.push(e.to_string());
            }
            // On the emergency list since its creation (found by its path there).
            if let Some(place) = place {
                self.places.insert(p.clone(), place);
            }
            // A file renewed each loop (unlink_each_loop) replaces the one the run held.
            let renewed = self.held.contains_key(p);
            if known.insert(p.clone()) {
                self.created.push(p.clone());
            }
            self.held.insert(p.clone(), fd);
            let dir = FileType::from_raw_mode(st.st_mode) == FileType::Directory;
            let what = match dir {
                true => "made by a dircreate job",
                _ if renewed => "created afresh each loop by its job (unlink_each_loop)",
                _ => "created by a filecreate job",
            };
            self.layouts.insert(p.clone(), what.into());
            if let Some(n) = self.needs.get_mut(p) {
                (n.exists, n.identity, n.ours, n.written) = (true, Some(id), true, true);
            }
        }
        notes
    }
}
