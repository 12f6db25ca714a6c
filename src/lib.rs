//! iogauge measures what a storage path can really do — throughput, IOPS, latency and CPU
//! cost — and says how it measured it.
//!
//! Data flows one way:
//!
//! ```text
//! argv / profile / legacy argv (compat) ─► spec::Section (fio key=value) ─► spec::resolve ─► spec::Plan
//!   target::check (safety, space, alignment, io_uring support; nothing created yet; every
//!                 existing file opened once and held: see ownership for the mark and identity)
//!   runner::run: per group: Targets::prepare_group, Targets::open_job, one thread per job,
//!                start barrier, then one generic loop per job over a slab of iodepth I/O
//!                units: workload → engine.queue (sync engines complete here) → commit →
//!                reap → stats recorded per I/O (total, submission, completion latency)
//!   stats merged (+=) ─► result::RunReport ─► report::{text, json}, compat::* (legacy output)
//! ```
//!
//! Rules: one spec (every front end becomes sections and the same Plan); only the CLI prints
//! (the runner sends events, stats are pure, reporters are functions of a RunReport); engines
//! know syscalls, not workloads.

pub mod cli;
pub mod compare;
pub mod compat;
pub mod engine;
pub mod fsinfo;
pub mod host;
pub mod jobfile;
pub mod ownership;
pub mod profiles;
pub mod rawpath;
pub mod report;
pub mod result;
pub mod runner;
pub mod spec;
pub mod stats;
pub mod target;
pub mod units;
