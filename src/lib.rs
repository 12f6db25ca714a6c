//! iogauge measures what a storage path can really do — throughput, IOPS, latency and CPU
//! cost — and says how it measured it.
//!
//! Data flows one way:
//!
//! ```text
//! argv (cli) / job file (jobfile) / profile (profiles) / legacy argv (compat)
//!   ─► plan::Section (fio key=value) ─► plan::resolve ─► plan::Plan
//!   files::targets::check (safety, space, alignment, io_uring support; nothing created yet;
//!                 every existing file opened once and held: see files::ownership for the mark
//!                 and identity)
//!   runner::run: per group: Targets::prepare_group, Targets::open_job, one thread per job,
//!                start barrier, then one generic loop per job over a slab of iodepth I/O
//!                units: workload → engine.queue (sync engines complete here) → commit →
//!                reap → stats recorded per I/O (total, submission, completion latency);
//!                with verify=, each write sealed (verify) and, after the job, the written
//!                blocks read back through the same loop and checked (a phase of its own)
//!   stats merged (+=) ─► result::RunReport ─► report::{text, json, csv, html, log},
//!                                              compat::* (legacy output), compare
//! ```
//!
//! The modules, by what they own:
//!
//! - `cli`, `jobfile`, `profiles`, `compat`: front ends; each makes sections (compat also
//!   renders its tool's output).
//! - `plan`: the option table, value parsers, resolution into the Plan, the workload generator.
//! - `files`: `targets`, the plan's files (check, create, lay out, open, remove); `ownership`,
//!   the mark, identity-checked opens and removal, input files; `fsinfo`, questions to the
//!   file system that change nothing; `writer`, the one writer of every output. `rawpath`:
//!   paths as bytes through option text.
//! - `engine`: syscalls (psync, sync, pvsync, pvsync2, io_uring, null); `runner`: threads,
//!   barrier, stop flag, progress events; `stats`: histograms, series, CPU, device counters.
//! - `result`: the RunReport (pure data); `report`: its formats (and fio's JSON read back:
//!   `report::from_fio`); `compare`: two reports; `host`: how it was measured (kernel, CPU,
//!   file system, device); `units`: units and dates.
//! - `verify`: the block header, the checksums, the check of a block read back and the
//!   generation map (pure; the worker seals, reads back and records).
//!
//! The binary (`src/main.rs`, `src/commands/`, `src/session/`) holds the application layer:
//! see docs/architecture.md for every folder's contract.
//!
//! Rules: one spec (every front end becomes sections and the same Plan); only the binary prints
//! (the runner sends events, stats are pure, reporters are functions of a RunReport); engines
//! know syscalls, not workloads.

pub mod cli;
pub mod compat;
pub mod ending;
pub mod engine;
pub mod files;
pub mod host;
pub mod jobfile;
pub mod out;
pub mod plan;
pub mod platform;
pub mod profiles;
pub mod rawpath;
pub mod report;
pub mod result;
pub mod runner;
pub mod stats;
pub mod studies;
pub mod trace;
pub mod units;
pub mod verify;
