//! The Plan and its jobs: what resolution produces and the runner, the engines' configuration,
//! the reports and the personalities read. Pure data with the arithmetic that follows from it
//! (sizes per file, the engine's configuration, the log files a job writes); how options
//! become these values is `resolve`'s business.

pub use super::logs::LogSpec;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

pub use crate::engine::Kind as EngineKind;
use crate::rawpath;

pub use super::data::{DataMode, DataShape};
pub use super::rw::RwMode;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SyncMode {
    None,
    Dsync,
    Sync,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Fadvise {
    None,
    Sequential,
    Random,
}

/// How each I/O's size is chosen, for one direction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlockSizes {
    Fixed(u64),
    /// Uniform over `min..=max` in steps of `min` (`bsrange`).
    Range {
        min: u64,
        max: u64,
    },
    /// (bytes, cumulative percent up to 100): a draw `r` in 0..100 takes the first entry with
    /// `r < cumulative` (`bssplit`).
    Split(Vec<(u64, u32)>),
}

impl BlockSizes {
    pub fn min(&self) -> u64 {
        match self {
            BlockSizes::Fixed(b) => *b,
            BlockSizes::Range { min, .. } => *min,
            BlockSizes::Split(v) => v.iter().map(|e| e.0).min().unwrap_or(0),
        }
    }
    pub fn max(&self) -> u64 {
        match self {
            BlockSizes::Fixed(b) => *b,
            BlockSizes::Range { max, .. } => *max,
            BlockSizes::Split(v) => v.iter().map(|e| e.0).max().unwrap_or(0),
        }
    }
    /// The sizes whose alignment decides every I/O's: each size an I/O may have is one of
    /// these or (a range) a multiple of its minimum.
    pub fn alignment_sizes(&self) -> Vec<u64> {
        match self {
            BlockSizes::Fixed(b) => vec![*b],
            BlockSizes::Range { min, .. } => vec![*min],
            BlockSizes::Split(v) => v.iter().map(|e| e.0).collect(),
        }
    }
    /// fio's notation: 4096, 4096-65536, 4096/60:65536/40.
    pub fn describe(&self) -> String {
        match self {
            BlockSizes::Fixed(b) => b.to_string(),
            BlockSizes::Range { min, max } => format!("{min}-{max}"),
            BlockSizes::Split(v) => {
                let mut prev = 0;
                v.iter()
                    .map(|&(b, cum)| {
                        let pct = cum - prev;
                        prev = cum;
                        format!("{b}/{pct}")
                    })
                    .collect::<Vec<_>>()
                    .join(":")
            }
        }
    }
}

/// How random offsets are spread over the region (`random_distribution`).
#[derive(Debug, Clone, PartialEq)]
pub enum Distribution {
    Uniform,
    /// Zipf with exponent theta (> 0, not 1): rank k is drawn with weight 1/k^theta.
    Zipf(f64),
    /// Pareto with parameter h (0 < h < 1): a share h of I/Os go to a share 1 - h of blocks.
    Pareto(f64),
    /// fio's bell: the mean of 12 uniform draws, plus a jitter of up to this many percent of
    /// the blocks (half either way).
    Normal(f64),
    /// Zones in order from the start: (share of I/Os in percent, zone length in
    /// hundredths of a percent of the region, or in bytes when `abs`).
    Zoned {
        abs: bool,
        zones: Vec<(u32, u64)>,
    },
}

impl Distribution {
    pub fn is_uniform(&self) -> bool {
        *self == Distribution::Uniform
    }
}

/// Where a job's files are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetSpec {
    /// Named files or devices, shared by every clone of the job.
    Files(Vec<PathBuf>),
    /// One file per clone inside this directory.
    Directory(PathBuf),
}

pub use super::pacing::{FlowSpec, LatencyTarget, Pacing};

/// How random offsets are drawn.
#[derive(Debug, Clone, PartialEq)]
pub struct Randomness {
    pub seed: u64,
    pub distribution: Distribution,
    /// Where a zipf, pareto or normal skew sits in the region (fio's `KIND:VALUE:CENTER`,
    /// 0 to 1); None: fio's default (zipf and pareto a drawn offset, normal the middle).
    pub center: Option<f64>,
    /// Share of random offsets per direction for random patterns.
    pub pct_random: [u8; 3],
    /// Every block once per pass (fio's random map; `norandommap` turns it off).
    pub randommap: bool,
    /// Random offsets on multiples of this (`blockalign`); 0: of the smallest block.
    pub align: u64,
    /// fio's `randrepeat`: a skewed distribution's generators are seeded from the files'
    /// names, as fio's are, so both tools pick the same blocks.
    pub repeatable: bool,
    /// fio's number for the job (1 for the first job of the plan, clones counted), part of
    /// those seeds. Set when the plan is assembled.
    pub job_number: u32,
}

/// fio's strided zones: `size` bytes of I/O in a zone of `range` bytes, then on to the next
/// zone, `skip` bytes past this one's end (wrapping to the first at the region's end).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Zones {
    pub range: u64,
    pub size: u64,
    pub skip: u64,
}

/// How long a job runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Timing {
    pub runtime: Option<Duration>,
    pub time_based: bool,
    pub ramp: Duration,
    pub loops: u32,
    /// The clock asked for (`clocksource`); one for the whole run.
    pub clock: ClockSource,
}

/// Which clock times the I/O (fio's `clocksource`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClockSource {
    /// The TSC where the kernel trusts it, else CLOCK_MONOTONIC.
    #[default]
    Auto,
    /// `clocksource=cpu`: the TSC (CLOCK_MONOTONIC, with a warning, where it is not trusted).
    Cpu,
    /// `clocksource=clock_gettime` (or gettimeofday): CLOCK_MONOTONIC.
    Monotonic,
}

/// The page cache: what the job tells the kernel about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cache {
    /// Drop the file's cached pages before the job starts.
    pub invalidate: bool,
    /// Read the job's files once before it starts, untimed (fio's `pre_read`).
    pub pre_read: bool,
    pub fadvise: Fadvise,
}

/// Data verification: each written block sealed with a header and checksum, read back and
/// checked after the job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verify {
    pub checksum: crate::verify::Checksum,
    /// Bytes per sealed block (divides every write's size and the page size).
    pub interval: u64,
    /// Read back and check after the job (`do_verify`).
    pub after_write: bool,
    /// Write nothing; check what an earlier run left (`verify_only`). The job's `rw` is then
    /// a sequential read of its region.
    pub only: bool,
    /// The `rw` given (verify_only replays its writes, as fio does, to know which blocks the
    /// job would have written).
    pub given_rw: super::RwMode,
    /// Stop at the first bad block.
    pub fatal: bool,
    /// Pause every this many writes to read them back and check them (`verify_backlog`; 0:
    /// only after the job), up to `backlog_batch` of them each time.
    pub backlog: u64,
    pub backlog_batch: u64,
    /// The job only reads: each block is checked as the workload reads it (its headers, as
    /// verify_only checks them), inside the measured time.
    pub inline: bool,
    /// Write each bad block kept (and the block as written, where it can be made again) to a
    /// file next to the target (`verify_dump`).
    pub dump: bool,
    /// Journal which write of each block was acknowledged durable (`verify_state_save`).
    pub state_save: bool,
    /// verify_only: check only what an earlier run's journal says was durable, exactly
    /// (`verify_state_load`).
    pub state_load: bool,
    /// Threads that read back and check the verify phase (`verify_async`; 0: one per CPU
    /// among the group's verifying jobs).
    pub threads: u32,
    /// Where in the block the header is swapped to before writing (`verify_offset`; 0: first).
    pub header_at: u32,
}

/// fio's steady-state criteria.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SteadyCriterion {
    /// Every IOPS sample within the limit of the window's mean.
    Iops,
    /// The least-squares slope of IOPS below the limit.
    IopsSlope,
    Bw,
    BwSlope,
    /// Every mean completion latency within the limit of the window's mean.
    Lat,
}

impl SteadyCriterion {
    pub const ACCEPTED: &'static str = "iops, iops_slope, bw, bw_slope or lat";

    pub fn parse(t: &str) -> Option<Self> {
        Some(match t {
            "iops" => Self::Iops,
            "iops_slope" => Self::IopsSlope,
            "bw" => Self::Bw,
            "bw_slope" => Self::BwSlope,
            "lat" => Self::Lat,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Iops => "iops",
            Self::IopsSlope => "iops_slope",
            Self::Bw => "bw",
            Self::BwSlope => "bw_slope",
            Self::Lat => "lat",
        }
    }

    pub fn slope(self) -> bool {
        matches!(self, Self::IopsSlope | Self::BwSlope)
    }
}

/// `steadystate=CRITERION:LIMIT[%]`, `ss_dur`, `ss_ramp`, `ss_interval` (fio's).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SteadyState {
    pub criterion: SteadyCriterion,
    /// In the criterion's unit (IOPS, bytes/s, ns; per interval for a slope), or percent of
    /// the window's mean when `pct`.
    pub limit: f64,
    pub pct: bool,
    /// The rolling window.
    pub dur: Duration,
    /// From the job's start, before samples are taken.
    pub ramp: Duration,
    pub interval: Duration,
}

impl SteadyState {
    /// Samples in the window.
    pub fn intervals(&self) -> usize {
        (self.dur.as_millis() / self.interval.as_millis().max(1)) as usize
    }

    /// As fio prints it: "iops_slope:0.010000%".
    pub fn describe(&self) -> String {
        format!(
            "{}:{:.6}{}",
            self.criterion.name(),
            self.limit,
            if self.pct { "%" } else { "" }
        )
    }
}

/// What makes writes durable: write-through opens and explicit flushes (fio's sync family).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Durability {
    pub mode: SyncMode,
    /// Flush after every this many writes (0: never): `fsync=N`, `fdatasync=N` and
    /// `sync_file_range=FLAGS:N`, checked in fio's order (see `due_after`).
    pub fsync_every: u32,
    pub fdatasync_every: u32,
    pub range_every: u32,
    /// SYNC_FILE_RANGE_* flags of `sync_file_range`.
    pub range_flags: u32,
    /// The flush when the job ends.
    pub at_end: EndFlush,
}

/// The flush at the end of a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EndFlush {
    None,
    /// fsync each written file (`end_fsync`, `fsync_on_close`).
    Fsync,
    /// One syncfs of the file system (`end_syncfs`).
    Syncfs,
}

/// A periodic flush, before the range it covers is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Periodic {
    Fsync,
    Fdatasync,
    /// sync_file_range with these flags, over the range written since the last flush.
    Range(u32),
}

impl Durability {
    /// The flush due once `written` writes have completed, if any: fio checks fsync, then
    /// fdatasync, then sync_file_range, and issues one flush after any one write.
    pub fn due_after(&self, written: u64) -> Option<Periodic> {
        let every = |n: u32| n > 0 && written > 0 && written % u64::from(n) == 0;
        if every(self.fsync_every) {
            Some(Periodic::Fsync)
        } else if every(self.fdatasync_every) {
            Some(Periodic::Fdatasync)
        } else if every(self.range_every) {
            Some(Periodic::Range(self.range_flags))
        } else {
            None
        }
    }

    /// Whether the job flushes every N writes.
    pub fn periodic(&self) -> bool {
        self.fsync_every + self.fdatasync_every + self.range_every > 0
    }

    /// Whether the job flushes explicitly at all (periodically or at the end).
    pub fn flushes(&self) -> bool {
        self.periodic() || self.at_end != EndFlush::None
    }
}

/// How a file iogauge creates is allocated before the job (fio's `fallocate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Fallocate {
    /// fallocate(2) mode 0: blocks allocated (unwritten), size set.
    Native,
    /// posix_fallocate(3): as native, or zeros written where the file system lacks it.
    Posix,
    /// fallocate(2) with FALLOC_FL_KEEP_SIZE: blocks allocated, size left at 0.
    Keep,
    /// ftruncate(2): size set, nothing allocated (sparse).
    Truncate,
    None,
}

impl Fallocate {
    pub fn as_str(self) -> &'static str {
        match self {
            Fallocate::Native => "native",
            Fallocate::Posix => "posix",
            Fallocate::Keep => "keep",
            Fallocate::Truncate => "truncate",
            Fallocate::None => "none",
        }
    }
}

/// One job thread, fully resolved.
#[derive(Debug, Clone)]
pub struct JobSpec {
    pub name: String,
    /// Index among the clones made by `numjobs` (0-based).
    pub clone: u32,
    pub rw: RwMode,
    /// Share of reads in mixed modes, in percent.
    pub read_pct: u8,
    /// The smallest I/O size of the directions the job issues: offsets are aligned to it, and
    /// the region is a whole number of it.
    pub bs: u64,
    /// I/O sizes for reads, writes and trims.
    pub sizes: [BlockSizes; 3],
    /// Bytes per pass over all of the job's files; `None` until `files::targets` reads it from an
    /// existing file or device.
    pub size: Option<u64>,
    pub offset: u64,
    /// `size=N%`: the region is that share of the existing file or device (set by `files::targets`).
    pub size_pct: Option<u8>,
    /// `offset=N%`: likewise for the offset.
    pub offset_pct: Option<u8>,
    pub target: TargetSpec,
    /// Files under `directory` per clone.
    pub nrfiles: u32,
    /// Bytes to transfer per loop, when not the region's size (`io_size`, or `size` with
    /// `filesize`).
    pub io_bytes: Option<u64>,
    /// Stop after this many I/Os (`number_ios`).
    pub number_ios: Option<u64>,
    /// Remove the job's files when its group ends.
    pub unlink: bool,
    /// Remove and create afresh the job's files before each loop after the first
    /// (`unlink_each_loop`; a writing, size-bounded job with loops > 1 only).
    pub unlink_each_loop: bool,
    /// Write until the file system is full (`fill_device`): ENOSPC or EDQUOT ends the job.
    pub fill_device: bool,
    /// Its size is what a fill_device job leaves in its files, measured when its group starts
    /// (set by `files::targets`).
    pub size_from_fill: bool,
    /// When this job ends, the jobs `exit_what` names stop.
    pub exitall: bool,
    pub exit_what: ExitWhat,
    /// The failed I/Os the job counts and goes past (`continue_on_error`, `ignore_error`).
    pub on_error: super::errors::ContinueOn,
    /// `exitall_on_error`: a failure of this job ends the run, whatever `Plan::on_failure`.
    pub exitall_on_error: bool,
    /// A failure of this job stops the other jobs of its group (iogauge's rule; fio's only
    /// with `exitall_on_error`). Set from `Plan::on_failure` by [`Plan::set_on_failure`].
    pub failure_stops_group: bool,
    /// Reported apart from the jobs before it (fio's new_group).
    pub new_group: bool,
    pub pacing: Pacing,
    pub random: Randomness,
    pub timing: Timing,
    pub engine: EngineKind,
    /// The queue (depth 1 for synchronous engines, whatever was asked) and its batching.
    pub queue: crate::engine::Queue,
    /// Page buffers per call; each I/O moves `bs * numpages` bytes.
    pub numpages: u32,
    /// The engines' switches (fixedbufs, registerfiles, sqthread_poll, hipri, nowait).
    pub flags: crate::engine::Flags,
    pub direct: bool,
    pub cache: Cache,
    pub sync: Durability,
    /// Lay out a new file before a sequential write job (fio's `overwrite`).
    pub overwrite: bool,
    /// How the files this job has iogauge create are allocated first.
    pub fallocate: Fallocate,
    /// This job starts a new group (`stonewall`).
    pub stonewall: bool,
    /// Report this job's group as one job.
    pub group_reporting: bool,
    /// fio-format logs to write after the run (base names), and their window.
    pub logs: LogSpec,
    /// Interval of the report's time series and of the logs' entries.
    pub series_ms: u64,
    /// Sequential patterns: bytes skipped after each I/O (`rw=read:GAP`; negative: back).
    pub gap: i64,
    /// `zonemode=strided`: where in the region each stretch of I/O goes.
    pub zones: Option<Zones>,
    /// I/O priorities: the job's own and per-command ones (`prio`, `cmdprio_percentage`…).
    pub prio: super::prio::Priorities,
    /// Where the job's thread runs (`cpus_allowed`, `cpumask`, `numa_*`).
    pub cpus: Option<CpuSpec>,
    /// The job thread's nice value (`nice`).
    pub nice: Option<i32>,
    /// The CPUs the verify phase's checking threads may run on (`verify_async_cpus`).
    pub verify_cpus: Option<Vec<usize>>,
    pub data: DataMode,
    pub data_shape: DataShape,
    /// Data verification (`verify=`), when asked for.
    pub verify: Option<Verify>,
    /// fio's steady-state stop (`ss_dur` above 0), when asked for.
    pub steady: Option<SteadyState>,
    /// The options as given (canonical names), for the report.
    pub options: BTreeMap<String, String>,
    /// Where each given option came from, so errors found later (the file system, the
    /// engine) name it as the user wrote it.
    pub origins: BTreeMap<String, super::Origin>,
    /// Another rank's files this job reads instead of its own (`--rank-read-shift`, IOR's
    /// `-C`); its own are still checked, created and laid out here, for the rank reading them.
    pub read_from: Option<ReadFrom>,
    /// `read_iolog`: the job replays a log instead of generating its I/O.
    pub replay: Option<super::replay::ReplaySpec>,
    /// ioengine=exec: the program it runs.
    pub program: Option<crate::engine::exec::Program>,
    /// ioengine=net, netsplice: the job's end of its connection.
    pub net: Option<crate::engine::net::Endpoint>,
    /// `allow_file_create`: missing files may be created (else each must exist).
    pub allow_create: bool,
    /// `file_service_type`: which file each I/O goes to.
    pub file_service: crate::plan::workload::FileService,
    /// ioengine=e4defrag: the donor file (`donorname`), created by the run and removed after.
    pub donor: Option<PathBuf>,
    /// `write_hint`: the write lifetime hint put on the files' inodes (RWH_WRITE_LIFE_*).
    pub write_hint: Option<u64>,
    /// fio's `exec_prerun` and `exec_postrun`: shell commands before the job's I/O and after
    /// its group, their output in `NAME.prerun.txt` and `NAME.postrun.txt`.
    pub exec_hooks: [Option<String>; 2],
}

/// Which jobs a job with `exitall` stops when it ends (fio's `exit_what`): its reporting group
/// (`new_group` starts one), every job running, or those and the rest of the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitWhat {
    Group,
    Stonewall,
    All,
}

/// The job thread's CPUs (empty: any; `split` until each job is given its one) and NUMA
/// memory policy (`numa_mem_policy`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuSpec {
    pub cpus: Vec<usize>,
    pub split: bool,
    pub mem: Option<crate::engine::MemPolicy>,
}

/// Another rank's files, read as that rank left them: opened read-only when the job opens its
/// files, never created, laid out, locked or removed by this rank.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadFrom {
    pub rank: usize,
    pub host: String,
    /// In step with the job's own [`JobSpec::paths`].
    pub paths: Vec<PathBuf>,
}

impl JobSpec {
    /// `option=value` as the user named it (see `Origin::label_with`).
    pub fn label_with(&self, option: &str, value: &str) -> String {
        match self.origins.get(option) {
            Some(o) => o.label_with(option, value),
            None => format!("{}={value}", self.label(option)),
        }
    }

    /// The files the job writes that are not its data (`(option, path)`): exec's program
    /// output, and the prerun and postrun commands' output.
    pub fn output_files(&self) -> Vec<(&'static str, PathBuf)> {
        let mut out = Vec::new();
        if let Some((o, e)) = self.program.as_ref().and_then(|p| p.redirect.clone()) {
            out.extend([("std_redirect", o), ("std_redirect", e)]);
        }
        let [pre, post] = &self.exec_hooks;
        for (option, cmd, mode) in [
            ("exec_prerun", pre, "prerun"),
            ("exec_postrun", post, "postrun"),
        ] {
            if cmd.is_some() {
                out.push((option, self.hook_output(mode)));
            }
        }
        out
    }

    /// Where the job's `exec_prerun` or `exec_postrun` (`mode`: prerun, postrun) writes its
    /// output: `NAME.MODE.txt` in the working directory, as fio's.
    pub fn hook_output(&self, mode: &str) -> PathBuf {
        PathBuf::from(format!("{}.{mode}.txt", self.name))
    }

    /// `option` as the user named it (see `Origin::label`); an option not given is named as
    /// the job's front end names options.
    pub fn label(&self, option: &str) -> String {
        use super::Origin;
        if let Some(o) = self.origins.get(option) {
            return o.label(option);
        }
        let fallback = self.origins.values().find_map(|o| match o {
            Origin::File { path, .. } => Some(
                Origin::File {
                    path: path.clone(),
                    line: 0,
                }
                .label(option),
            ),
            Origin::Flag { tool, .. } => Some(format!("{tool}: {option}")),
            Origin::Profile(p) => Some(Origin::Profile(p).label(option)),
            Origin::Cli => None,
        });
        fallback.unwrap_or_else(|| Origin::Cli.label(option))
    }

    /// What the engine needs of this job: its own options, nothing of the workload.
    pub fn engine_config(&self) -> crate::engine::Config {
        use crate::engine::WriteThrough;
        crate::engine::Config {
            kind: self.engine,
            numpages: self.numpages,
            queue: self.queue,
            flags: self.flags,
            // Only engines that write through per call see it; the others get open flags.
            write_through: match self.sync.mode {
                _ if !self.engine.per_call_sync() => WriteThrough::None,
                SyncMode::None => WriteThrough::None,
                SyncMode::Dsync => WriteThrough::Dsync,
                SyncMode::Sync => WriteThrough::Sync,
            },
        }
    }

    /// Region bytes per file, once the size is known: the size shared by the files, in whole
    /// I/Os of `bs` × `numpages`.
    pub fn per_file_bytes(&self) -> u64 {
        let nfiles = self.paths().len() as u64;
        (self.size.unwrap_or(0) / nfiles) / self.xfer() * self.xfer()
    }

    /// I/Os per file per pass: the region's blocks, or one for the file-operation engines
    /// (each I/O is the file's create, stat or delete).
    pub fn blocks_per_file(&self) -> u64 {
        match self.engine.file_op() {
            true => 1,
            false => self.per_file_bytes() / self.xfer(),
        }
    }

    /// Bytes of the smallest I/O: `bs` × `numpages` (every I/O's size when fixed).
    pub fn xfer(&self) -> u64 {
        self.bs * u64::from(self.numpages)
    }

    /// Bytes of the largest I/O the job issues (its buffers' size).
    pub fn max_xfer(&self) -> u64 {
        self.used_sizes()
            .map(BlockSizes::max)
            .max()
            .unwrap_or(self.bs)
            * u64::from(self.numpages)
    }

    /// Whether every I/O has the same size.
    pub fn fixed_size(&self) -> bool {
        self.used_sizes().all(|s| *s == BlockSizes::Fixed(self.bs))
    }

    /// The size choices of the directions the job issues.
    pub fn used_sizes(&self) -> impl Iterator<Item = &BlockSizes> {
        self.sizes
            .iter()
            .zip(self.rw.sized_dirs())
            .filter(|(_, u)| *u)
            .map(|(s, _)| s)
    }

    /// The files the job reaches: another rank's where it reads those (see
    /// [`JobSpec::read_from`]), else its own.
    pub fn io_paths(&self) -> Vec<PathBuf> {
        match &self.read_from {
            Some(r) => r.paths.clone(),
            None => self.paths(),
        }
    }

    /// The job's own files: checked, created and laid out for it (and where its I/O goes,
    /// unless it reads another rank's).
    pub fn paths(&self) -> Vec<PathBuf> {
        match &self.target {
            TargetSpec::Files(files) => files.clone(),
            TargetSpec::Directory(dir) => (0..self.nrfiles)
                .map(|i| dir.join(rawpath::path(&format!("{}.{}.{i}", self.name, self.clone))))
                .collect(),
        }
    }
}

/// Jobs that run at the same time.
#[derive(Debug, Clone, Default)]
pub struct Group {
    pub jobs: Vec<JobSpec>,
}

/// The default interval of a job's series and logs, fio's `bw_avg_time` (500 ms).
pub const DEFAULT_SERIES_MS: u64 = 500;

/// Everything to run, in order: groups one after another, jobs in a group concurrently.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    pub groups: Vec<Group>,
    /// Things the user should know about their options (printed to stderr, kept in reports).
    pub warnings: Vec<String>,
    /// fio options accepted but ignored because they change only fio's internals, with why.
    pub ignored: Vec<(String, &'static str)>,
    /// What a failed job ends (set by the front end).
    pub on_failure: OnFailure,
}

/// What a job that fails (an I/O error, a verify failure) ends: the run (iogauge's default:
/// a later group would most likely meet the same fault), or only its group, later groups
/// still running (fio's, unless a failed job has `exitall_on_error=1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnFailure {
    #[default]
    EndRun,
    EndGroup,
}

impl Plan {
    /// What a failed job ends, for the run and for each job's group.
    pub fn set_on_failure(&mut self, on_failure: OnFailure) {
        self.on_failure = on_failure;
        for job in self.groups.iter_mut().flat_map(|g| &mut g.jobs) {
            job.failure_stops_group = on_failure == OnFailure::EndRun || job.exitall_on_error;
        }
    }

    /// The clock the run asks for: the first job's that names one (resolution sees that
    /// they agree).
    pub fn clock_source(&self) -> ClockSource {
        self.groups
            .iter()
            .flat_map(|g| &g.jobs)
            .map(|j| j.timing.clock)
            .find(|c| *c != ClockSource::Auto)
            .unwrap_or_default()
    }

    /// One line naming the ignored fio options, if any.
    pub fn ignored_note(&self) -> Option<String> {
        if self.ignored.is_empty() {
            return None;
        }
        let list: Vec<String> = self
            .ignored
            .iter()
            .map(|(o, why)| format!("{o} ({why})"))
            .collect();
        Some(format!(
            "ignored fio options that do not change the I/O: {}",
            list.join("; ")
        ))
    }
}

/// Fixed default seed (fio's `randrepeat=1` behaviour: the same run twice does the same I/O).
pub const DEFAULT_SEED: u64 = 0x6975_6761_7567_6521;
