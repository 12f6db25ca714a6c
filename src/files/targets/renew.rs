//! Which files a job with unlink_each_loop may renew: it removes its files before each loop
//! after the first, so only files this run created, or that an earlier run created and nobody
//! changed since, named directly; checked when the job's files are opened, before any I/O.

use std::path::Path;

use super::{Kind, TargetError, Targets, usage};

impl Targets {
    /// Ok when the job may remove `p` and create it afresh each loop.
    pub(super) fn renewable(&self, p: &Path) -> Result<(), TargetError> {
        let Some(n) = self.needs.get(p) else {
            return Err(TargetError::Io(format!(
                "{}: not a checked target",
                p.display()
            )));
        };
        let refuse = |why: &str| Err(usage(format!("{}: unlink_each_loop: {why}", p.display())));
        if n.kind != Kind::Regular {
            return refuse("not a regular file; only files are removed and created afresh");
        }
        if n.follow {
            return refuse(
                "named through a symbolic link; iogauge removes only files named directly",
            );
        }
        if !(self.created.iter().any(|c| c == p) || n.ours) {
            return refuse(
                "it exists and iogauge did not create it, and each loop would remove it; name \
                 a new file (iogauge creates it, and may then renew it)",
            );
        }
        Ok(())
    }
}
