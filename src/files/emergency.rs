//! The emergency list: the files this process created, which it removes if it must stop at
//! once (a second Ctrl-C, a bug) before it exits. Split from `ownership.rs`, whose
//! identity-checked removal it uses; callers reach it through `ownership`.

use std::path::Path;

use crate::platform::fd::AsFd;
use crate::platform::sys::fs::AtFlags;

use super::ownership::{Identity, Place, dir_and_name, removal};

/// The files this process created and would remove if it were stopped at once (a second
/// Ctrl-C): the emergency list [`remove_watched`] works from. By path, each path's entries in
/// the order listed, each numbered as listed: finding a path takes one look however many
/// files a run made, in whatever order it takes them off (a filecreate run of 9000 files
/// spent seconds searching a plain list), and the removal still goes newest first.
#[derive(Default)]
struct Watched {
    by_path: std::collections::HashMap<std::path::PathBuf, Vec<(u64, Identity, Option<Place>)>>,
    listed: u64,
}

impl Watched {
    fn add(&mut self, path: &Path, id: Identity, place: Option<&Place>) {
        self.listed += 1;
        let n = self.listed;
        let entries = self.by_path.entry(path.to_path_buf()).or_default();
        entries.push((n, id, place.cloned()));
    }

    /// Takes the newest entry for `path` off.
    fn take(&mut self, path: &Path) {
        if let Some(entries) = self.by_path.get_mut(path) {
            entries.pop();
            if entries.is_empty() {
                self.by_path.remove(path);
            }
        }
    }

    /// Every entry, newest first: a directory made before the files in it comes after them.
    fn newest_first(&self) -> Vec<(&Path, &Identity, Option<&Place>)> {
        let mut all: Vec<_> = self
            .by_path
            .iter()
            .flat_map(|(p, entries)| entries.iter().map(move |(n, id, pl)| (*n, p, id, pl)))
            .collect();
        all.sort_unstable_by_key(|&(n, ..)| std::cmp::Reverse(n));
        all.into_iter()
            .map(|(_, p, id, pl)| (p.as_path(), id, pl.as_ref()))
            .collect()
    }
}

static WATCHED: std::sync::LazyLock<std::sync::Mutex<Watched>> =
    std::sync::LazyLock::new(Default::default);

fn watched() -> std::sync::MutexGuard<'static, Watched> {
    WATCHED.lock().unwrap_or_else(|e| e.into_inner())
}

/// Puts `path` (the inode `id`, which this process created in `place`) on the emergency list.
/// A file made while the process is ending at once (by a stretch that began before, see
/// `crate::ending`) is removed here and now: the list may have been gone through already.
pub fn watch(path: &Path, id: Identity, place: Option<&Place>) {
    let mut w = watched();
    if ending() {
        remove_listed([(path, &id, place)]);
        return;
    }
    w.add(path, id, place);
}

/// Takes `path` off the emergency list (removed, or kept on purpose): its newest entry.
pub fn unwatch(path: &Path) {
    watched().take(path);
}

/// Removes every file on the emergency list whose path still names the inode created there,
/// for a process about to exit at once (a second Ctrl-C), newest first. The descriptors the
/// run holds keep those inodes alive, so their numbers cannot have been reused.
///
/// First the process is marked as ending, and the threads making a file are given half a
/// second to put it on the list (`crate::ending`); none starts making one after.
pub fn remove_watched() {
    crate::ending::begin(std::time::Duration::from_millis(500));
    let w = watched();
    remove_listed(w.newest_first());
}

/// Whether this process is ending at once (a second Ctrl-C, a bug): threads still running
/// make no new file then ([`remove_watched`] has gone, or is going, through the list).
pub fn ending() -> bool {
    crate::ending::now()
}

/// Removes each path in turn while it still names its inode (through the directory held
/// since it was created, where there is one).
fn remove_listed<'a>(list: impl IntoIterator<Item = (&'a Path, &'a Identity, Option<&'a Place>)>) {
    for (p, id, place) in list {
        let opened;
        let (dfd, name) = match place {
            Some(pl) => (pl.dir.as_fd(), pl.name.as_os_str()),
            None => match dir_and_name(p) {
                Ok((d, n)) => {
                    opened = d;
                    (opened.as_fd(), n)
                }
                Err(_) => continue,
            },
        };
        if let Ok(st) = crate::platform::sys::fs::statat(dfd, name, AtFlags::SYMLINK_NOFOLLOW)
            && Identity::of(&st) == *id
        {
            let _ = crate::platform::sys::fs::unlinkat(dfd, name, removal(st.st_mode));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::ownership::create_new;

    #[test]
    fn the_emergency_list_removes_only_what_is_still_ours() {
        let d = tempfile::tempdir().unwrap();
        let (ours, kept, replaced) = (d.path().join("a"), d.path().join("b"), d.path().join("c"));
        let (_a, id_a, _) = create_new(&ours).unwrap();
        let (_b, _, _) = create_new(&kept).unwrap();
        let (_c, id_c, _) = create_new(&replaced).unwrap();
        if !crate::platform::testing::deletes_at_once() {
            skip_test!("a name stays while its file is open on this system");
            return;
        }
        // The process-wide list is not touched here: other tests' files are on it.
        let list = [
            (ours.as_path(), &id_a, None),
            (replaced.as_path(), &id_c, None),
        ];
        std::fs::remove_file(&replaced).unwrap();
        std::fs::write(&replaced, b"theirs").unwrap();
        remove_listed(list);
        assert!(!ours.exists(), "ours is removed");
        assert!(kept.exists(), "not listed (kept on purpose)");
        assert_eq!(std::fs::read(&replaced).unwrap(), b"theirs");
    }

    #[test]
    fn the_list_is_gone_through_newest_first_and_a_path_taken_off_by_its_newest_entry() {
        // The process-wide list is not touched here: a list of its own.
        let mut w = Watched::default();
        let id = |ino| Identity { dev: 1, ino };
        let (dir, f, g) = (Path::new("/d"), Path::new("/d/f"), Path::new("/d/g"));
        w.add(dir, id(1), None);
        w.add(f, id(2), None);
        w.add(g, id(3), None);
        // f renewed: its first file removed and taken off, a new one listed.
        w.take(f);
        w.add(f, id(4), None);
        // g listed twice (a replay's file made again), the newest taken off.
        w.add(g, id(5), None);
        w.take(g);
        let order: Vec<_> = w
            .newest_first()
            .into_iter()
            .map(|(p, i, _)| (p.to_path_buf(), i.ino))
            .collect();
        assert_eq!(
            order,
            vec![(f.into(), 4), (g.into(), 3), (dir.into(), 1)],
            "the directory after the files in it"
        );
        w.take(f);
        w.take(g);
        w.take(g);
        assert_eq!(w.newest_first().len(), 1);
        assert!(w.by_path.len() == 1, "no empty entries kept");
    }
}
