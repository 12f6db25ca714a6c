//! What iogauge writes and how: today the one audited writer of its outputs (`writer`). The
//! test files' check, creation and removal (`target/`), the mark (`ownership`) and the file
//! system's facts (`fsinfo`) join this folder as the layout of DESIGN.md is reached.

pub mod writer;
