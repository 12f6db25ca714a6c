//! Recorded I/O: the formats a program's I/O is kept in and read back from. Today fio's I/O
//! log (`iolog`, versions 2 and 3: what `write_iolog` writes and `read_iolog` replays; one
//! `Op` per line both ways: the worker records them, `report::log` writes them, `parse`
//! reads them back). Pure data and text: callers read and write the files; nothing here
//! touches the file system, the plan or the runner.

pub mod iolog;
