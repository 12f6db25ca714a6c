//! Sections → [`Plan`]: looks every key up in the option table, parses and validates values,
//! applies defaults and cross-option rules, and clones jobs for `numjobs`. The result is the
//! only thing the runner sees, whichever front end produced the sections. Checks that need the
//! file system (does the directory exist, is there room) belong to `target`, not here.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use super::options::{self, Kind, OptionDef};
use super::value;
use super::{Entry, Origin, Section, SpecError};

/// The I/O pattern of a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RwMode {
    Read,
    Write,
    RandRead,
    RandWrite,
    /// Mixed sequential (`rw`, `readwrite`).
    ReadWrite,
    RandRw,
    /// Random read of a block, then a write of the same block.
    Update,
}

impl RwMode {
    /// The mode fio's word names (`readwrite` = `rw`); the word is already lower case.
    pub fn from_word(word: &str) -> Option<RwMode> {
        Some(match word {
            "read" => RwMode::Read,
            "write" => RwMode::Write,
            "randread" => RwMode::RandRead,
            "randwrite" => RwMode::RandWrite,
            "rw" | "readwrite" => RwMode::ReadWrite,
            "randrw" => RwMode::RandRw,
            "update" => RwMode::Update,
            _ => return None,
        })
    }

    pub fn is_random(self) -> bool {
        matches!(
            self,
            RwMode::RandRead | RwMode::RandWrite | RwMode::RandRw | RwMode::Update
        )
    }
    pub fn reads(self) -> bool {
        !matches!(self, RwMode::Write | RwMode::RandWrite)
    }
    pub fn writes(self) -> bool {
        !matches!(self, RwMode::Read | RwMode::RandRead)
    }
    pub fn as_str(self) -> &'static str {
        match self {
            RwMode::Read => "read",
            RwMode::Write => "write",
            RwMode::RandRead => "randread",
            RwMode::RandWrite => "randwrite",
            RwMode::ReadWrite => "rw",
            RwMode::RandRw => "randrw",
            RwMode::Update => "update",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineKind {
    Psync,
    Sync,
    Pvsync,
    Pvsync2,
    #[serde(rename = "io_uring")]
    IoUring,
    Null,
}

impl EngineKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EngineKind::Psync => "psync",
            EngineKind::Sync => "sync",
            EngineKind::Pvsync => "pvsync",
            EngineKind::Pvsync2 => "pvsync2",
            EngineKind::IoUring => "io_uring",
            EngineKind::Null => "null",
        }
    }
    /// Whether one call can move several page buffers (`numpages`).
    pub fn vectored(self) -> bool {
        matches!(
            self,
            EngineKind::Pvsync | EngineKind::Pvsync2 | EngineKind::IoUring | EngineKind::Null
        )
    }
    /// Whether write-through (`sync=dsync|sync`) is applied per call (RWF_DSYNC/RWF_SYNC)
    /// rather than at open (O_DSYNC/O_SYNC).
    pub fn per_call_sync(self) -> bool {
        self == EngineKind::Pvsync2
    }
}

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

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DataMode {
    /// Random, incompressible bytes, each written block stamped unique.
    Random,
    /// Fresh random bytes before every write.
    Refill,
    Zero,
}

/// Where a job's files are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetSpec {
    /// Named files or devices, shared by every clone of the job.
    Files(Vec<PathBuf>),
    /// One file per clone inside this directory.
    Directory(PathBuf),
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
    pub bs: u64,
    /// Bytes per pass over all of the job's files; `None` until `target` reads it from an
    /// existing file or device.
    pub size: Option<u64>,
    pub offset: u64,
    pub target: TargetSpec,
    pub runtime: Option<Duration>,
    pub time_based: bool,
    pub ramp: Duration,
    pub loops: u32,
    pub engine: EngineKind,
    /// I/Os in flight (1 for synchronous engines, whatever was asked).
    pub iodepth: u32,
    /// Queued I/Os per submission (`iodepth_batch_submit`, 0 resolved to iodepth).
    pub batch_submit: u32,
    /// Completions waited for per reap (`iodepth_batch_complete_min`; 0: never wait unless
    /// the queue is full).
    pub complete_min: u32,
    /// Most completions taken per reap (at least 1).
    pub complete_max: u32,
    /// Once full, reap until at most this many are in flight (`iodepth_low`).
    pub depth_low: u32,
    /// Page buffers per call; each I/O moves `bs * numpages` bytes.
    pub numpages: u32,
    pub fixedbufs: bool,
    pub registerfiles: bool,
    pub sqthread_poll: bool,
    pub sqthread_poll_cpu: Option<u32>,
    pub hipri: bool,
    pub nowait: bool,
    pub direct: bool,
    pub sync: SyncMode,
    pub invalidate: bool,
    pub fadvise: Fadvise,
    pub fsync_every: u32,
    pub end_fsync: bool,
    /// Lay out a new file before a sequential write job (fio's `overwrite`).
    pub overwrite: bool,
    /// This job starts a new group (`stonewall`).
    pub stonewall: bool,
    /// Report this job's group as one job.
    pub group_reporting: bool,
    /// fio-format logs to write after the run (base names), and their window.
    pub logs: LogSpec,
    /// Interval of the report's time series and of the logs' entries.
    pub series_ms: u64,
    /// Sequential patterns: blocks from one I/O to the next (1 = contiguous; `rw=read:GAP`).
    pub stride_blocks: u64,
    pub randommap: bool,
    pub seed: u64,
    pub data: DataMode,
    /// The options as given (canonical names), for the report.
    pub options: BTreeMap<String, String>,
}

impl JobSpec {
    /// Bytes each I/O moves: `bs` × `numpages`.
    pub fn xfer(&self) -> u64 {
        self.bs * u64::from(self.numpages)
    }

    /// The paths this job's I/O goes to.
    pub fn paths(&self) -> Vec<PathBuf> {
        match &self.target {
            TargetSpec::Files(files) => files.clone(),
            TargetSpec::Directory(dir) => vec![dir.join(format!("{}.{}.0", self.name, self.clone))],
        }
    }
}

/// The fio-format interval logs a job asked for (`write_bw_log=NAME` …).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogSpec {
    pub bw: Option<String>,
    pub iops: Option<String>,
    pub lat: Option<String>,
}

impl LogSpec {
    pub fn any(&self) -> bool {
        self.bw.is_some() || self.iops.is_some() || self.lat.is_some()
    }

    /// The files job number `n` (from 1) writes, in fio's naming.
    pub fn files(&self, n: usize) -> Vec<String> {
        let mut v = Vec::new();
        if let Some(b) = &self.bw {
            v.push(format!("{b}_bw.{n}.log"));
        }
        if let Some(b) = &self.iops {
            v.push(format!("{b}_iops.{n}.log"));
        }
        if let Some(b) = &self.lat {
            for kind in ["lat", "clat", "slat"] {
                v.push(format!("{b}_{kind}.{n}.log"));
            }
        }
        v
    }
}

/// Jobs that run at the same time.
#[derive(Debug, Clone, Default)]
pub struct Group {
    pub jobs: Vec<JobSpec>,
}

/// Everything to run, in order: groups one after another, jobs in a group concurrently.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    pub groups: Vec<Group>,
    /// Things the user should know about their options (printed to stderr, kept in reports).
    pub warnings: Vec<String>,
}

/// Fixed default seed (fio's `randrepeat=1` behaviour: the same run twice does the same I/O).
pub const DEFAULT_SEED: u64 = 0x6975_6761_7567_6521;

/// Resolves sections, each becoming one job (cloned `numjobs` times), all in one group each
/// when `separate_groups`, else all in one group.
pub fn resolve(sections: &[Section], separate_groups: bool) -> Result<Plan, SpecError> {
    let mut plan = Plan::default();
    for section in sections {
        let (jobs, warnings) = resolve_section(section)?;
        plan.warnings.extend(warnings);
        let stonewall = jobs.first().is_some_and(|j| j.stonewall);
        if separate_groups || stonewall || plan.groups.is_empty() {
            plan.groups.push(Group::default());
        }
        plan.groups
            .last_mut()
            .expect("pushed above")
            .jobs
            .extend(jobs);
    }
    Ok(plan)
}

/// The last value given for each option, keyed by canonical name.
struct Values<'a> {
    map: BTreeMap<&'static str, (&'static OptionDef, &'a Entry)>,
}

impl<'a> Values<'a> {
    fn collect(section: &'a Section) -> Result<Self, SpecError> {
        let mut map = BTreeMap::new();
        for entry in &section.entries {
            let Some(def) = options::lookup(&entry.key) else {
                return Err(SpecError {
                    option: entry.key.clone(),
                    value: entry.value.clone(),
                    message: "unknown option; 'iogauge help options' lists the accepted ones"
                        .into(),
                    origin: entry.origin.clone(),
                });
            };
            if entry.value.is_none() && def.kind != Kind::Bool {
                return Err(err(
                    def,
                    entry,
                    format!("needs a value: {}", def.kind.describe()),
                ));
            }
            map.insert(def.name, (def, entry));
        }
        Ok(Values { map })
    }

    fn given(&self, name: &str) -> bool {
        self.map.contains_key(name)
    }

    /// The raw text of an option (its default when not given).
    fn text(&self, name: &'static str) -> Option<(String, Option<&'a Entry>)> {
        match self.map.get(name) {
            Some((_, e)) => Some((e.value.clone().unwrap_or_else(|| "1".into()), Some(*e))),
            None => def(name).default.map(|d| (d.to_string(), None)),
        }
    }

    fn parsed<T>(
        &self,
        name: &'static str,
        parse: impl Fn(&str) -> Result<T, String>,
    ) -> Result<Option<T>, SpecError> {
        let Some((text, entry)) = self.text(name) else {
            return Ok(None);
        };
        parse(&text).map(Some).map_err(|accepted| {
            let d = def(name);
            match entry {
                Some(e) => err(d, e, format!("expected {accepted}")),
                None => unreachable_default(d, &accepted),
            }
        })
    }

    fn size(
        &self,
        name: &'static str,
        warnings: &mut Vec<String>,
    ) -> Result<Option<u64>, SpecError> {
        let size = self.parsed(name, value::parse_size)?;
        if let (Some(s), Some((text, _))) = (size, self.text(name)) {
            if s.iec_reversed {
                warnings.push(format!(
                    "{name}={text} means {} bytes: fio reads KiB/MiB/GiB as powers of 1000 \
                     (its kb_base=1024 rule) and iogauge does the same; write 4k/1m/1g for \
                     powers of 1024",
                    s.bytes
                ));
            }
        }
        Ok(size.map(|s| s.bytes))
    }

    fn bool(&self, name: &'static str) -> Result<bool, SpecError> {
        Ok(self.parsed(name, value::parse_bool)?.unwrap_or(false))
    }

    fn int(&self, name: &'static str) -> Result<Option<u64>, SpecError> {
        let Kind::Int { min, max } = def(name).kind else {
            panic!("{name} is not an int")
        };
        self.parsed(name, |t| value::parse_int(t, min, max))
    }

    fn seconds(&self, name: &'static str) -> Result<Option<Duration>, SpecError> {
        self.parsed(name, |t| value::parse_duration(t, Duration::from_secs(1)))
    }

    fn choice(&self, name: &'static str) -> Result<String, SpecError> {
        let Kind::Choice(words) = def(name).kind else {
            panic!("{name} is not a choice")
        };
        let text = self.parsed(name, |t| {
            let t = t.trim().to_ascii_lowercase();
            if words.contains(&t.as_str()) {
                Ok(t)
            } else {
                Err(format!("one of {}", words.join(", ")))
            }
        })?;
        Ok(text.expect("choices have defaults"))
    }

    fn error(&self, name: &'static str, message: String) -> SpecError {
        match self.map.get(name) {
            Some((d, e)) => err(d, e, message),
            None => SpecError {
                option: name.into(),
                value: None,
                message,
                origin: Origin::Cli,
            },
        }
    }
}

fn def(name: &str) -> &'static OptionDef {
    options::lookup(name).unwrap_or_else(|| panic!("option {name} missing from the table"))
}

fn err(def: &OptionDef, entry: &Entry, message: String) -> SpecError {
    SpecError {
        option: def.name.into(),
        value: entry.value.clone(),
        message,
        origin: entry.origin.clone(),
    }
}

fn unreachable_default(def: &OptionDef, accepted: &str) -> SpecError {
    panic!("default of {} does not parse: {accepted}", def.name)
}

fn resolve_section(section: &Section) -> Result<(Vec<JobSpec>, Vec<String>), SpecError> {
    let v = Values::collect(section)?;
    let mut warnings = Vec::new();

    // The section's name, unless the name option overrides it.
    let name = match v.map.get("name") {
        Some((_, e)) => e.value.clone().unwrap_or_default(),
        None => section.name.clone(),
    };
    if name.is_empty() || name.contains('/') || name.contains('\0') {
        return Err(v.error("name", "expected a job name without '/'".into()));
    }
    let (rw_word, gap) = rw_and_gap(&v)?;
    let rw = RwMode::from_word(&rw_word)
        .unwrap_or_else(|| unreachable!("rw_and_gap checked {rw_word} against RW_MODES"));
    let read_pct = match (v.given("rwmixread"), v.given("rwmixwrite")) {
        (true, true) => {
            let (r, w) = (
                v.int("rwmixread")?.unwrap_or(50),
                v.int("rwmixwrite")?.unwrap_or(50),
            );
            if r + w != 100 {
                return Err(v.error(
                    "rwmixwrite",
                    format!("rwmixread={r} and rwmixwrite={w} must add up to 100"),
                ));
            }
            r
        }
        (false, true) => 100 - v.int("rwmixwrite")?.unwrap_or(50),
        _ => v.int("rwmixread")?.unwrap_or(50),
    } as u8;
    if (v.given("rwmixread") || v.given("rwmixwrite"))
        && !matches!(rw, RwMode::ReadWrite | RwMode::RandRw)
    {
        warnings.push(format!(
            "rwmixread/rwmixwrite only apply to rw and randrw; rw={} ignores them",
            rw.as_str()
        ));
    }

    let bs = v.size("bs", &mut warnings)?.expect("bs has a default");
    if bs < 512 {
        return Err(v.error("bs", "expected at least 512 bytes".into()));
    }
    let size = v.size("size", &mut warnings)?;
    if size == Some(0) {
        return Err(v.error("size", "expected a size above 0".into()));
    }
    let offset = v.size("offset", &mut warnings)?.unwrap_or(0);

    let target = match (
        v.text("filename").map(|t| t.0),
        v.text("directory").map(|t| t.0),
    ) {
        (Some(files), dir) => {
            let dir = dir.map(PathBuf::from);
            let paths: Vec<PathBuf> = files
                .split(':')
                .map(|f| match &dir {
                    Some(d) if !f.starts_with('/') => d.join(f),
                    _ => PathBuf::from(f),
                })
                .collect();
            if paths.iter().any(|p| p.as_os_str().is_empty()) {
                return Err(v.error(
                    "filename",
                    "expected one or more paths separated by ':'".into(),
                ));
            }
            TargetSpec::Files(paths)
        }
        (None, Some(dir)) if dir.is_empty() => {
            return Err(v.error("directory", "expected a directory path".into()));
        }
        (None, Some(dir)) => TargetSpec::Directory(PathBuf::from(dir)),
        (None, None) => TargetSpec::Directory(PathBuf::from(".")),
    };
    let nfiles = match &target {
        TargetSpec::Files(f) => f.len() as u64,
        TargetSpec::Directory(_) => 1,
    };
    if let Some(size) = size {
        if bs > size / nfiles {
            let what = if nfiles > 1 {
                format!(" split over {nfiles} files")
            } else {
                String::new()
            };
            return Err(v.error(
                "bs",
                format!(
                    "is larger than size={size} bytes{what}; bs must be at most the size per file"
                ),
            ));
        }
    }

    let runtime = v.seconds("runtime")?;
    let time_based = v.bool("time_based")?;
    if time_based && runtime.is_none_or(|r| r.is_zero()) {
        return Err(v.error("time_based", "needs --runtime (how long to run)".into()));
    }
    if runtime.is_some_and(|r| r.is_zero()) {
        return Err(v.error("runtime", "expected a duration above 0".into()));
    }
    let ramp = v.seconds("ramp_time")?.unwrap_or_default();
    let loops = v.int("loops")?.unwrap_or(1) as u32;
    let numjobs = v.int("numjobs")?.unwrap_or(1) as u32;
    let engine = match v.choice("ioengine")?.as_str() {
        "psync" => EngineKind::Psync,
        "sync" => EngineKind::Sync,
        "pvsync" => EngineKind::Pvsync,
        "pvsync2" => EngineKind::Pvsync2,
        "io_uring" => EngineKind::IoUring,
        "null" => EngineKind::Null,
        other => unreachable!("engine {other} not handled"),
    };
    let direct = v.bool("direct")?;
    let queue = queue_options(&v, engine, &mut warnings)?;
    let numpages = v.int("numpages")?.unwrap_or(1) as u32;
    if numpages > 1 && !engine.vectored() {
        return Err(v.error(
            "numpages",
            format!(
                "needs a vectored engine (ioengine=pvsync, pvsync2 or io_uring); \
                 ioengine={} moves one buffer per call",
                engine.as_str()
            ),
        ));
    }
    let flags = engine_flags(&v, engine, direct, numpages)?;
    if let Some(size) = size {
        let xfer = bs * u64::from(numpages);
        if numpages > 1 && (size / nfiles) % xfer != 0 {
            return Err(v.error(
                "numpages",
                format!(
                    "size per file ({} bytes) is not a multiple of bs x numpages ({bs} x \
                     {numpages} = {xfer} bytes); as SASIOTEST, iogauge refuses rather than \
                     issue a short last call",
                    size / nfiles
                ),
            ));
        }
    }
    let sync = match v.choice("sync")?.as_str() {
        "none" | "0" => SyncMode::None,
        "dsync" => SyncMode::Dsync,
        _ => SyncMode::Sync,
    };
    let fadvise = match v.choice("fadvise_hint")?.as_str() {
        "0" | "none" => Fadvise::None,
        "sequential" => Fadvise::Sequential,
        "random" => Fadvise::Random,
        _ if rw.is_random() => Fadvise::Random,
        _ => Fadvise::Sequential,
    };
    let zero = v.bool("zero_buffers")?;
    let refill = v.bool("refill_buffers")?;
    if zero && refill {
        return Err(v.error(
            "refill_buffers",
            "cannot be combined with zero_buffers".into(),
        ));
    }
    let data = if zero {
        DataMode::Zero
    } else if refill {
        DataMode::Refill
    } else {
        DataMode::Random
    };
    let fsync_every = v.int("fsync")?.unwrap_or(0) as u32;
    let log_name = |name: &'static str| -> Result<Option<String>, SpecError> {
        match v.text(name) {
            Some((t, _)) if t.trim().is_empty() || t.contains('\0') => {
                Err(v.error(name, "expected a log file name prefix".into()))
            }
            Some((t, _)) => Ok(Some(t.trim().to_string())),
            None => Ok(None),
        }
    };
    let logs = LogSpec {
        bw: log_name("write_bw_log")?,
        iops: log_name("write_iops_log")?,
        lat: log_name("write_lat_log")?,
    };
    let series_ms = match v.int("log_avg_msec")?.unwrap_or(0) {
        0 => {
            if logs.any() {
                warnings.push(
                    "log_avg_msec=0: fio logs every I/O then; iogauge logs means over \
                     windows, so the logs have 500 ms means (set log_avg_msec to choose the \
                     window)"
                        .into(),
                );
            }
            crate::stats::series::DEFAULT_BASE_MS
        }
        ms => ms,
    };
    let seed = v.int("randseed")?.unwrap_or(DEFAULT_SEED);

    let mut opts = BTreeMap::new();
    for (name, (_, entry)) in &v.map {
        opts.insert(
            name.to_string(),
            entry.value.clone().unwrap_or_else(|| "1".into()),
        );
    }
    let spec = JobSpec {
        name,
        clone: 0,
        rw,
        read_pct,
        bs,
        size,
        offset,
        target,
        runtime,
        time_based,
        ramp,
        loops,
        engine,
        iodepth: queue.depth,
        batch_submit: queue.batch_submit,
        complete_min: queue.complete_min,
        complete_max: queue.complete_max,
        depth_low: queue.low,
        numpages,
        fixedbufs: flags.fixedbufs,
        registerfiles: flags.registerfiles,
        sqthread_poll: flags.sqthread_poll,
        sqthread_poll_cpu: flags.sqthread_poll_cpu,
        hipri: flags.hipri,
        nowait: flags.nowait,
        direct,
        sync,
        invalidate: v.bool("invalidate")?,
        fadvise,
        fsync_every,
        end_fsync: v.bool("end_fsync")?,
        overwrite: v.bool("overwrite")?,
        stonewall: v.bool("stonewall")?,
        group_reporting: v.bool("group_reporting")?,
        logs,
        series_ms,
        stride_blocks: stride_blocks(&v, rw, gap, bs * u64::from(numpages))?,
        randommap: !v.bool("norandommap")?,
        seed,
        data,
        options: opts,
    };
    let jobs = (0..numjobs)
        .map(|clone| JobSpec {
            clone,
            // Clones get different but reproducible seeds.
            seed: seed ^ (u64::from(clone)).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            ..spec.clone()
        })
        .collect();
    Ok((jobs, warnings))
}

/// `rw` and its optional `:GAP` suffix (bytes).
fn rw_and_gap(v: &Values<'_>) -> Result<(String, u64), SpecError> {
    let (text, _) = v.text("rw").expect("rw has a default");
    let (word, gap) = match text.split_once(':') {
        Some((w, g)) => (w.trim().to_ascii_lowercase(), Some(g.trim())),
        None => (text.trim().to_ascii_lowercase(), None),
    };
    if !options::RW_MODES.contains(&word.as_str()) {
        return Err(v.error(
            "rw",
            format!(
                "expected one of {}, optionally with ':GAP'",
                options::RW_MODES.join(", ")
            ),
        ));
    }
    let gap = match gap {
        None => 0,
        Some(g) => match value::parse_size(g) {
            Ok(s) => s.bytes,
            Err(accepted) => {
                return Err(v.error("rw", format!("the gap after ':' must be {accepted}")));
            }
        },
    };
    Ok((word, gap))
}

/// Blocks between consecutive sequential I/Os: 1 + gap / (bs x numpages).
fn stride_blocks(v: &Values<'_>, rw: RwMode, gap: u64, xfer: u64) -> Result<u64, SpecError> {
    if gap == 0 {
        return Ok(1);
    }
    if rw.is_random() {
        return Err(v.error(
            "rw",
            "a ':GAP' applies to sequential patterns only (read, write, rw)".into(),
        ));
    }
    if gap % xfer != 0 {
        return Err(v.error(
            "rw",
            format!("the gap ({gap} bytes) must be a multiple of bs x numpages ({xfer} bytes)"),
        ));
    }
    Ok(1 + gap / xfer)
}

struct Queue {
    depth: u32,
    batch_submit: u32,
    complete_min: u32,
    complete_max: u32,
    low: u32,
}

/// iodepth and the batching options, with fio's defaults and clamps. Synchronous engines get
/// depth 1 and a warning when more was asked, because fio users expect it to matter.
fn queue_options(
    v: &Values<'_>,
    engine: EngineKind,
    warnings: &mut Vec<String>,
) -> Result<Queue, SpecError> {
    let depth = v.int("iodepth")?.unwrap_or(1) as u32;
    if engine != EngineKind::IoUring {
        let batch = [
            "iodepth_batch_submit",
            "iodepth_batch_complete_min",
            "iodepth_batch_complete_max",
            "iodepth_low",
        ]
        .into_iter()
        .filter(|o| v.given(o))
        .collect::<Vec<_>>();
        if depth > 1 || !batch.is_empty() {
            let what = if depth > 1 {
                format!("iodepth={depth}")
            } else {
                batch.join(", ")
            };
            warnings.push(format!(
                "{what} has no effect with ioengine={}: it issues one I/O at a time and waits \
                 for it; use ioengine=io_uring for I/Os in flight",
                engine.as_str()
            ));
        }
        return Ok(Queue {
            depth: 1,
            batch_submit: 1,
            complete_min: 1,
            complete_max: 1,
            low: 1,
        });
    }
    let batch_submit = match v.int("iodepth_batch_submit")?.unwrap_or(1) as u32 {
        0 => depth,
        n => n.min(depth),
    };
    let complete_min = (v.int("iodepth_batch_complete_min")?.unwrap_or(1) as u32).min(depth);
    let complete_max = v
        .int("iodepth_batch_complete_max")?
        .map_or(complete_min, |m| m as u32)
        .max(complete_min)
        .clamp(1, depth);
    let low = v.int("iodepth_low")?.map_or(depth, |l| l as u32).min(depth);
    Ok(Queue {
        depth,
        batch_submit,
        complete_min,
        complete_max,
        low,
    })
}

struct Flags {
    fixedbufs: bool,
    registerfiles: bool,
    sqthread_poll: bool,
    sqthread_poll_cpu: Option<u32>,
    hipri: bool,
    nowait: bool,
}

/// Engine-specific switches: each is an error with an engine that has no such thing.
fn engine_flags(
    v: &Values<'_>,
    engine: EngineKind,
    direct: bool,
    numpages: u32,
) -> Result<Flags, SpecError> {
    let f = Flags {
        fixedbufs: v.bool("fixedbufs")?,
        registerfiles: v.bool("registerfiles")?,
        sqthread_poll: v.bool("sqthread_poll")?,
        sqthread_poll_cpu: v.int("sqthread_poll_cpu")?.map(|c| c as u32),
        hipri: v.bool("hipri")?,
        nowait: v.bool("nowait")?,
    };
    let uring_only = [
        ("fixedbufs", f.fixedbufs),
        ("registerfiles", f.registerfiles),
        ("sqthread_poll", f.sqthread_poll),
        ("sqthread_poll_cpu", f.sqthread_poll_cpu.is_some()),
    ];
    for (name, on) in uring_only {
        if on && engine != EngineKind::IoUring {
            return Err(v.error(
                name,
                format!("applies only to ioengine=io_uring, not {}", engine.as_str()),
            ));
        }
    }
    for (name, on) in [("hipri", f.hipri), ("nowait", f.nowait)] {
        if on && !matches!(engine, EngineKind::IoUring | EngineKind::Pvsync2) {
            return Err(v.error(
                name,
                format!(
                    "applies only to ioengine=io_uring or pvsync2, not {}",
                    engine.as_str()
                ),
            ));
        }
    }
    if f.hipri && !direct {
        return Err(v.error(
            "hipri",
            "needs direct=1: polled completion exists only for direct I/O".into(),
        ));
    }
    if f.fixedbufs && numpages > 1 {
        return Err(v.error(
            "fixedbufs",
            format!("cannot be combined with numpages={numpages} (vectored I/O has no fixed form)"),
        ));
    }
    if f.sqthread_poll_cpu.is_some() && !f.sqthread_poll {
        return Err(v.error("sqthread_poll_cpu", "needs sqthread_poll=1".into()));
    }
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(pairs: &[(&str, &str)]) -> Section {
        let mut s = Section::new("t");
        for (k, v) in pairs {
            s.set(k, v, Origin::Cli);
        }
        s
    }

    fn one(pairs: &[(&str, &str)]) -> Result<JobSpec, SpecError> {
        resolve(&[section(pairs)], false).map(|p| p.groups[0].jobs[0].clone())
    }

    #[test]
    fn defaults_are_fio_defaults() {
        let j = one(&[]).unwrap();
        assert_eq!(
            (j.rw, j.bs, j.engine, j.loops),
            (RwMode::Read, 4096, EngineKind::Psync, 1)
        );
        assert!(j.invalidate && j.randommap && !j.direct && !j.time_based);
        assert_eq!(j.target, TargetSpec::Directory(".".into()));
    }

    #[test]
    fn stonewall_starts_a_group_and_a_gap_sets_the_stride() {
        let p = resolve(
            &[
                section(&[("rw", "write")]),
                section(&[("rw", "write")]),
                section(&[("rw", "read:12k"), ("stonewall", "1")]),
            ],
            false,
        )
        .unwrap();
        assert_eq!(
            p.groups.iter().map(|g| g.jobs.len()).collect::<Vec<_>>(),
            [2, 1]
        );
        let j = &p.groups[1].jobs[0];
        assert_eq!((j.rw, j.stride_blocks), (RwMode::Read, 4));
        for (rw, want) in [
            ("read:5k", "multiple of bs"),
            ("randread:4k", "sequential patterns only"),
            ("bogus", "expected one of read"),
            ("read:x", "the gap after ':'"),
        ] {
            let e = one(&[("rw", rw)]).unwrap_err().to_string();
            assert!(
                e.starts_with(&format!("--rw={rw}: ")) && e.contains(want),
                "{e}"
            );
        }
    }

    #[test]
    fn numjobs_clones_with_distinct_seeds() {
        let p = resolve(&[section(&[("numjobs", "3"), ("rw", "randread")])], false).unwrap();
        let jobs = &p.groups[0].jobs;
        assert_eq!(jobs.len(), 3);
        assert_eq!(
            jobs.iter().map(|j| j.clone).collect::<Vec<_>>(),
            vec![0, 1, 2]
        );
        assert_ne!(jobs[0].seed, jobs[1].seed);
        assert_eq!(jobs[1].paths(), vec![PathBuf::from("./t.1.0")]);
    }

    #[test]
    fn errors_name_option_value_and_what_is_accepted() {
        let e = one(&[("bs", "4x")]).unwrap_err().to_string();
        assert!(e.starts_with("--bs=4x: expected a whole number"), "{e}");
        let e = one(&[("rw", "sideways")]).unwrap_err().to_string();
        assert!(e.contains("--rw=sideways") && e.contains("randread"), "{e}");
        let e = one(&[("bs", "8k"), ("size", "4k")])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--bs=8k") && e.contains("larger than size=4096"),
            "{e}"
        );
        let e = one(&[("bogus", "1")]).unwrap_err().to_string();
        assert!(e.starts_with("--bogus=1: unknown option"), "{e}");
        let e = one(&[("time_based", "1")]).unwrap_err().to_string();
        assert!(e.contains("needs --runtime"), "{e}");
        let e = one(&[("bs", "256")]).unwrap_err().to_string();
        assert!(e.contains("at least 512"), "{e}");
        let e = one(&[("rwmixread", "70"), ("rwmixwrite", "20")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("add up to 100"), "{e}");
    }

    #[test]
    fn mix_and_flags() {
        let j = one(&[("rw", "randrw"), ("rwmixwrite", "30")]).unwrap();
        assert_eq!(j.read_pct, 70);
        let j = one(&[("rw", "randread")]).unwrap();
        assert_eq!(j.fadvise, Fadvise::Random);
        let j = one(&[("sync", "dsync"), ("direct", "1"), ("norandommap", "1")]).unwrap();
        assert!(j.direct && !j.randommap && j.sync == SyncMode::Dsync);
    }

    #[test]
    fn queue_options_follow_fios_defaults_and_clamps() {
        let j = one(&[("ioengine", "io_uring"), ("iodepth", "32")]).unwrap();
        assert_eq!(
            (
                j.iodepth,
                j.batch_submit,
                j.complete_min,
                j.complete_max,
                j.depth_low
            ),
            (32, 1, 1, 1, 32)
        );
        let j = one(&[
            ("ioengine", "io_uring"),
            ("iodepth", "16"),
            ("iodepth_batch", "0"),
            ("iodepth_batch_complete_min", "4"),
            ("iodepth_batch_complete_max", "2"),
            ("iodepth_low", "64"),
        ])
        .unwrap();
        // batch 0 = iodepth; max never below min; low never above iodepth.
        assert_eq!(
            (j.batch_submit, j.complete_min, j.complete_max, j.depth_low),
            (16, 4, 4, 16)
        );
        let p = resolve(
            &[section(&[("iodepth", "8"), ("ioengine", "pvsync")])],
            false,
        )
        .unwrap();
        assert_eq!(p.groups[0].jobs[0].iodepth, 1);
        assert!(p.warnings[0].contains("iodepth=8 has no effect with ioengine=pvsync"));
        let j = one(&[
            ("ioengine", "pvsync"),
            ("bufno", "8"),
            ("bs", "64k"),
            ("size", "4m"),
        ])
        .unwrap();
        assert_eq!((j.numpages, j.xfer()), (8, 512 << 10));
    }

    #[test]
    fn iec_suffix_warns() {
        let p = resolve(&[section(&[("bs", "1MiB"), ("size", "10m")])], false).unwrap();
        assert_eq!(p.groups[0].jobs[0].bs, 1_000_000);
        assert!(
            p.warnings[0].contains("bs=1MiB means 1000000 bytes"),
            "{:?}",
            p.warnings
        );
    }
}
