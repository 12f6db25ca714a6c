//! One file per subcommand: each turns its request into sections or a plan and hands it to
//! the session pipeline (`crate::session`), then picks its reporter. A new subcommand is a new
//! file here and one line in the door.

pub(crate) mod assess;
pub(crate) mod job;
pub(crate) mod legacy;
pub(crate) mod quick;
pub(crate) mod report;
pub(crate) mod sweep;
