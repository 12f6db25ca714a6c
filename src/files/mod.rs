//! Which files are iogauge's and how it touches them: the plan's files checked, created,
//! laid out, opened by descriptor and removed (`targets`), the mark that proves a file is
//! iogauge's and the identity-checked opens and removal (`ownership`), what the file system
//! says of a path (`fsinfo`), and the one writer of every output (`writer`).

pub mod fsinfo;
pub mod ownership;
pub mod renew;
pub mod replay;
pub mod targets;
pub mod writer;
