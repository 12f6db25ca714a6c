//! Recorded I/O: the formats a program's I/O is kept in and read back from, and the capture
//! that records it. fio's I/O log (`iolog`, versions 2 and 3: what `write_iolog` writes and
//! `read_iolog` replays; one `Op` per line both ways) and iogauge's own trace (`recording`:
//! every file I/O call of a program, its threads and children, with times, as `iogauge
//! record` captures it in `capture`), what its figures are (`stats`), the trace as fio's I/O log (`export`), fio's I/O log and blktrace's binary as traces (`import`), the order a replay
//! keeps across threads (`order`), the maps keyed by the trace's numbers (`ids`) and what a replay measured (`replayed`; the replay itself
//! runs in `runner::replay`). Pure data and text except `capture`, which runs the recorded
//! program; nothing here touches the plan, the files or the runner.

pub mod anchor;
pub mod capture;
pub mod export;
pub mod ids;
pub mod import;
pub mod iolog;
pub mod order;
pub mod poll;
pub mod recording;
pub mod replayed;
pub mod stats;
