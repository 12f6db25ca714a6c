//! Sections → [`Plan`]: looks every key up in the option table, parses and validates values,
//! applies defaults and cross-option rules, and clones jobs for `numjobs`. The result is the
//! only thing the runner sees, whichever front end produced the sections. Checks that need the
//! file system (does the directory exist, is there room) belong to `target`, not here.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use std::borrow::Cow;

use super::job::*;
use super::options::{self, FioOnly, Kind, OptionDef};
use super::value;
use super::{Entry, Origin, Section, SpecError};
use crate::rawpath;

/// Resolves sections, each becoming one job (cloned `numjobs` times), all in one group each
/// when `separate_groups`, else all in one group.
pub fn resolve(sections: &[Section], separate_groups: bool) -> Result<Plan, SpecError> {
    let mut plan = Plan::default();
    // Job names so far, with their group, for wait_for.
    let mut names: Vec<(String, usize)> = Vec::new();
    for section in sections {
        let earlier: Vec<&str> = names.iter().map(|(n, _)| n.as_str()).collect();
        let (mut jobs, warnings, ignored) = resolve_section(section, &earlier)?;
        for w in warnings {
            if !plan.warnings.contains(&w) {
                plan.warnings.push(w);
            }
        }
        for i in ignored {
            if !plan.ignored.iter().any(|(o, _)| *o == i.0) {
                plan.ignored.push(i);
            }
        }
        let stonewall = jobs.first().is_some_and(|j| j.stonewall);
        if separate_groups || stonewall || plan.groups.is_empty() {
            plan.groups.push(Group::default());
        }
        let gi = plan.groups.len() - 1;
        if let Some(w) = jobs.first().and_then(|j| j.wait_for.clone()) {
            // A job of an earlier group has finished before this group starts.
            if names.iter().any(|(n, g)| *n == w && *g < gi) {
                for j in &mut jobs {
                    j.wait_for = None;
                }
            }
        }
        if let Some(j) = jobs.first() {
            names.push((j.name.clone(), gi));
        }
        plan.groups[gi].jobs.extend(jobs);
    }
    Ok(plan)
}

/// The last value given for each option, keyed by canonical name.
/// The last value given for each option, keyed by canonical name.
struct Values<'a> {
    map: BTreeMap<&'static str, (&'static OptionDef, Cow<'a, Entry>)>,
    /// fio's kb_base: what k, m, g mean.
    kb_base: u64,
}

type Ignored = Vec<(String, &'static str)>;

impl<'a> Values<'a> {
    /// The section's options by canonical name, and the fio options it may ignore. An engine
    /// iogauge lacks is reported before anything else: it is why the engine's own options
    /// are unknown.
    fn collect(section: &'a Section) -> Result<(Self, Ignored), SpecError> {
        let engine = section
            .entries
            .iter()
            .rev()
            .find(|e| options::lookup(&e.key).is_some_and(|d| d.name == "ioengine"));
        if let Some(e) = engine {
            let word = e.value.as_deref().unwrap_or("").trim().to_ascii_lowercase();
            if !options::ENGINES.contains(&word.as_str()) {
                return Err(SpecError {
                    option: "ioengine".into(),
                    value: e.value.clone(),
                    message: format!(
                        "iogauge has no such engine; it has {} (libaio runs as io_uring)",
                        options::ENGINES.join(", ")
                    ),
                    origin: e.origin.clone(),
                });
            }
        }
        let mut map = BTreeMap::new();
        let mut ignored = Vec::new();
        for entry in &section.entries {
            let Some(def) = options::lookup(&entry.key) else {
                let norm = entry.key.replace('-', "_");
                let given = entry.value.as_deref().map(str::trim);
                let message = match options::fio_only(&entry.key) {
                    Some(FioOnly::DefaultOnly(only, why)) if given != Some(only) => {
                        format!("not supported: only {norm}={only} ({why})")
                    }
                    Some(FioOnly::Ignored(why) | FioOnly::DefaultOnly(_, why)) => {
                        if !ignored.iter().any(|(o, _): &(String, _)| *o == norm) {
                            ignored.push((norm, why));
                        }
                        continue;
                    }
                    Some(FioOnly::Rejected(why)) => format!("not supported: {why}"),
                    None => "unknown option; 'iogauge help options' lists the accepted ones".into(),
                };
                return Err(SpecError {
                    option: entry.key.clone(),
                    value: entry.value.clone(),
                    message,
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
            if def.name == "buffered" {
                // buffered=B is direct=!B; whichever of the two comes later wins.
                let b = entry.value.as_deref().map_or(Ok(true), value::parse_bool);
                let b = b.map_err(|acc| err(def, entry, format!("expected {acc}")))?;
                let direct = Entry {
                    key: "direct".into(),
                    value: Some(if b { "0" } else { "1" }.into()),
                    origin: entry.origin.clone(),
                };
                map.insert(
                    "direct",
                    (
                        options::lookup("direct").expect("in table"),
                        Cow::Owned(direct),
                    ),
                );
                continue;
            }
            map.insert(def.name, (def, Cow::Borrowed(entry)));
        }
        let mut v = Values { map, kb_base: 1024 };
        v.kb_base = v.choice("kb_base")?.parse().expect("choices are numbers");
        Ok((v, ignored))
    }

    fn given(&self, name: &str) -> bool {
        self.map.contains_key(name)
    }

    /// The raw text of an option (its default when not given).
    fn text(&self, name: &'static str) -> Option<(String, Option<&Entry>)> {
        match self.map.get(name) {
            Some((_, e)) => Some((e.value.clone().unwrap_or_else(|| "1".into()), Some(&**e))),
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
        let kb = self.kb_base;
        let size = self.parsed(name, |t| value::parse_size_base(t, kb))?;
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

type Resolved = (Vec<JobSpec>, Vec<String>, Ignored);

/// One section → its jobs (one per clone). `earlier`: the names of the jobs before it.
fn resolve_section(section: &Section, earlier: &[&str]) -> Result<Resolved, SpecError> {
    let (v, ignored) = Values::collect(section)?;
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

    let sizes = block_sizes(&v, &mut warnings)?;
    let dirs_used = [rw.reads(), rw.writes()];
    let used = || {
        sizes
            .iter()
            .zip(dirs_used)
            .filter(|(_, u)| *u)
            .map(|(s, _)| s)
    };
    let bs = used()
        .map(BlockSizes::min)
        .min()
        .expect("every pattern reads or writes");
    let max_bs = used()
        .map(BlockSizes::max)
        .max()
        .expect("every pattern reads or writes");
    for s in used() {
        if s.min() < 512 {
            let name = size_option(&v);
            return Err(v.error(name, "expected at least 512 bytes per I/O".into()));
        }
    }
    let (size, size_pct) = size_or_pct(&v, "size", &mut warnings)?;
    if size == Some(0) {
        return Err(v.error("size", "expected a size above 0".into()));
    }
    let (offset, offset_pct) = size_or_pct(&v, "offset", &mut warnings)?;
    let offset = offset.unwrap_or(0);
    let offset_increment = v.size("offset_increment", &mut warnings)?.unwrap_or(0);
    let filesize = v.size("filesize", &mut warnings)?;
    if filesize == Some(0) {
        return Err(v.error("filesize", "expected a size above 0".into()));
    }
    let nrfiles = v.int("nrfiles")?.unwrap_or(1) as u32;

    let target = match (
        v.text("filename").map(|t| t.0),
        v.text("directory").map(|t| t.0),
    ) {
        (Some(files), dir) => {
            let dir = dir.map(|d| rawpath::path(&d));
            let paths: Vec<PathBuf> = value::split_filenames(&files)
                .into_iter()
                .map(|f| match &dir {
                    Some(d) if !f.starts_with('/') => d.join(rawpath::path(&f)),
                    _ => rawpath::path(&f),
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
        (None, Some(dir)) => TargetSpec::Directory(rawpath::path(&dir)),
        (None, None) => TargetSpec::Directory(PathBuf::from(".")),
    };
    let nfiles = match &target {
        TargetSpec::Files(f) => f.len() as u64,
        TargetSpec::Directory(_) => u64::from(nrfiles),
    };
    // The region: filesize per file when given (size is then the bytes to move), else size.
    let (size, mut io_bytes) = match filesize {
        Some(fs) => (Some(fs.saturating_mul(nfiles)), size),
        None => (size, None),
    };
    if let Some(io) = v.size("io_size", &mut warnings)? {
        io_bytes = Some(io);
    }
    if let Some(size) = size {
        if max_bs > size / nfiles {
            let what = if nfiles > 1 {
                format!(" split over {nfiles} files")
            } else {
                String::new()
            };
            let name = size_option(&v);
            return Err(v.error(
                name,
                format!(
                    "is larger than size={size} bytes{what}; every I/O must fit in the size \
                     per file"
                ),
            ));
        }
    }
    if let Some(io) = io_bytes {
        if io < bs {
            let name = if v.given("io_size") {
                "io_size"
            } else {
                "size"
            };
            return Err(v.error(name, format!("moves less than one I/O of {bs} bytes")));
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
        "libaio" => {
            warnings.push(
                "ioengine=libaio runs as io_uring: the same queued, asynchronous submission \
                 at iodepth (iogauge has no libaio engine). Unlike libaio, io_uring stays \
                 asynchronous for buffered I/O too (direct=0), so buffered queue depths are \
                 real here where fio's libaio would complete each I/O inside submission"
                    .into(),
            );
            EngineKind::IoUring
        }
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
    if numpages > 1 && bs != max_bs {
        return Err(v.error(
            "numpages",
            "needs one I/O size (bs), not bsrange, bssplit or different read and write sizes"
                .into(),
        ));
    }
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
    let seed = match v.int("randseed")? {
        Some(s) => s,
        None if v.bool("randrepeat")? => DEFAULT_SEED,
        None => {
            // randrepeat=0: a new seed each run, kept in the report's options.
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default();
            now.as_nanos() as u64 ^ u64::from(std::process::id()).rotate_left(32)
        }
    };
    let startdelay = {
        let (text, _) = v.text("startdelay").expect("has a default");
        value::parse_range(&text, |t| value::parse_duration(t, Duration::from_secs(1)))
            .map_err(|acc| v.error("startdelay", format!("expected {acc}")))?
    };
    let wait_for = match v.text("wait_for") {
        Some((w, _)) => {
            let w = w.trim().to_string();
            if w == name {
                return Err(v.error("wait_for", "a job cannot wait for itself".into()));
            }
            if !earlier.contains(&w.as_str()) {
                return Err(v.error(
                    "wait_for",
                    format!(
                        "no earlier job is named {w:?}; wait_for names a job defined above this one"
                    ),
                ));
            }
            Some(w)
        }
        None => None,
    };
    let kb = v.kb_base;
    let rate_bps = match v.text("rate") {
        Some((t, _)) => {
            value::per_direction(&t, 0, |p| value::parse_size_base(p, kb).map(|s| s.bytes))
                .map_err(|acc| v.error("rate", format!("expected {acc} (bytes per second)")))?
        }
        None => [0, 0],
    };
    let rate_iops = match v.text("rate_iops") {
        Some((t, _)) => value::per_direction(&t, 0, |p| value::parse_int(p, 0, u64::MAX))
            .map_err(|acc| v.error("rate_iops", format!("expected {acc} (I/Os per second)")))?,
        None => [0, 0],
    };
    let rate_poisson = v.choice("rate_process")? == "poisson";
    if rate_poisson && rate_bps == [0, 0] && rate_iops == [0, 0] {
        return Err(v.error(
            "rate_process",
            "needs rate or rate_iops (the mean it spaces I/Os around)".into(),
        ));
    }
    let thinktime = v
        .parsed("thinktime", |t| {
            value::parse_duration(t, Duration::from_micros(1))
        })?
        .unwrap_or_default();
    let thinktime_blocks = v.int("thinktime_blocks")?.unwrap_or(1) as u32;
    let distribution = {
        let (t, _) = v.text("random_distribution").expect("has a default");
        value::parse_distribution(&t, kb)
            .map_err(|acc| v.error("random_distribution", format!("expected {acc}")))?
    };
    if !distribution.is_uniform() && !rw.is_random() {
        warnings.push(format!(
            "random_distribution applies to random patterns; rw={} ignores it",
            rw.as_str()
        ));
    }
    let pct_random = match v.text("percentage_random") {
        Some((t, _)) => {
            value::per_direction(&t, 100u8, |p| value::parse_int(p, 0, 100).map(|n| n as u8))
                .map_err(|acc| v.error("percentage_random", format!("expected {acc}")))?
        }
        None => [100, 100],
    };
    let number_ios = v.int("number_ios")?;
    if v.bool("new_group")? {
        warnings.push(
            "new_group: the job runs alongside the jobs before it, as in fio, but iogauge \
             still reports it in their group (separate reporting groups within a run group \
             are not implemented yet); use stonewall to run and report it apart"
                .into(),
        );
    }
    if !v.bool("create_serialize")? {
        warnings.push(
            "create_serialize=0: iogauge lays out files one at a time anyway, before the \
             group starts, so layout never competes with measured I/O"
                .into(),
        );
    }

    let mut opts = BTreeMap::new();
    for (name, (_, entry)) in &v.map {
        opts.insert(
            name.to_string(),
            entry.value.clone().unwrap_or_else(|| "1".into()),
        );
    }
    if !v.given("randseed") && !v.bool("randrepeat")? {
        opts.insert("randseed".into(), seed.to_string());
    }
    let spec = JobSpec {
        name,
        clone: 0,
        rw,
        read_pct,
        bs,
        sizes,
        size,
        offset,
        size_pct,
        offset_pct,
        target,
        nrfiles,
        io_bytes,
        number_ios,
        unlink: v.bool("unlink")?,
        startdelay: startdelay.0,
        exitall: v.bool("exitall")?,
        wait_for,
        new_group: v.bool("new_group")?,
        rate_bps,
        rate_iops,
        rate_poisson,
        thinktime,
        thinktime_blocks,
        distribution,
        pct_random,
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
        .map(|clone| {
            // Clones get different but reproducible seeds.
            let seed = seed ^ (u64::from(clone)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            let (lo, hi) = startdelay;
            let spread = (hi - lo).as_nanos() as u64;
            let delay = if spread == 0 {
                lo
            } else {
                lo + Duration::from_nanos(seed.wrapping_mul(0xD6E8_FEB8_6659_FD93) % (spread + 1))
            };
            JobSpec {
                clone,
                seed,
                offset: spec.offset + offset_increment * u64::from(clone),
                startdelay: delay,
                ..spec.clone()
            }
        })
        .collect();
    Ok((jobs, warnings, ignored))
}

/// The option that set the I/O sizes, for errors about them.
fn size_option(v: &Values<'_>) -> &'static str {
    ["bssplit", "bsrange"]
        .into_iter()
        .find(|o| v.given(o))
        .unwrap_or("bs")
}

/// Read and write I/O sizes from bssplit, else bsrange, else bs (fio's order).
fn block_sizes(v: &Values<'_>, warnings: &mut Vec<String>) -> Result<[BlockSizes; 2], SpecError> {
    let kb = v.kb_base;
    let iec = std::cell::Cell::new(false);
    let bytes = |t: &str| -> Result<u64, String> {
        let s = value::parse_size_base(t, kb)?;
        iec.set(iec.get() || s.iec_reversed);
        Ok(s.bytes)
    };
    let (bs_text, _) = v.text("bs").expect("bs has a default");
    let bs = value::per_direction(&bs_text, 4096, bytes)
        .map_err(|acc| v.error("bs", format!("expected {acc}")))?;
    let mut sizes = bs.map(BlockSizes::Fixed);
    if let Some((t, _)) = v.text("bsrange") {
        let [r, w] = value::per_direction(&t, None, |p| value::parse_range(p, bytes).map(Some))
            .map_err(|acc| v.error("bsrange", format!("expected MIN-MAX sizes: {acc}")))?;
        for (slot, range) in sizes.iter_mut().zip([r, w]) {
            match range {
                Some((min, max)) if min == max => *slot = BlockSizes::Fixed(min),
                Some((min, max)) if min > 0 => *slot = BlockSizes::Range { min, max },
                Some(_) => return Err(v.error("bsrange", "expected sizes above 0".into())),
                None => {}
            }
        }
    }
    if let Some((t, _)) = v.text("bssplit") {
        let [r, w] = value::per_direction(&t, None, |p| value::parse_split(p, bytes).map(Some))
            .map_err(|acc| v.error("bssplit", format!("expected {acc}")))?;
        for (slot, split) in sizes.iter_mut().zip([r, w]) {
            match split {
                Some(v) if v.len() == 1 => *slot = BlockSizes::Fixed(v[0].0),
                Some(v) => *slot = BlockSizes::Split(v),
                None => {}
            }
        }
    }
    if iec.get() {
        let what = match &sizes {
            [BlockSizes::Fixed(a), BlockSizes::Fixed(b)] if a == b => {
                format!("bs={} means {a} bytes", bs_text.trim())
            }
            _ => format!("{}: a size in KiB/MiB/GiB", size_option(v)),
        };
        warnings.push(format!(
            "{what}: fio reads KiB/MiB/GiB as powers of 1000 (its kb_base=1024 rule) and \
             iogauge does the same; write 4k/1m/1g for powers of 1024"
        ));
    }
    Ok(sizes)
}

/// A size, or `N%` (1..=100) of what is there.
fn size_or_pct(
    v: &Values<'_>,
    name: &'static str,
    warnings: &mut Vec<String>,
) -> Result<(Option<u64>, Option<u8>), SpecError> {
    match v.text(name) {
        Some((t, _)) if t.trim().ends_with('%') => {
            let n = t.trim().trim_end_matches('%');
            let lo = if name == "offset" { 0 } else { 1 };
            let pct = value::parse_int(n, lo, 100).map_err(|_| {
                v.error(
                    name,
                    format!("expected a size, or a percentage from {lo}% to 100%"),
                )
            })?;
            Ok((None, Some(pct as u8)))
        }
        _ => Ok((v.size(name, warnings)?, None)),
    }
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
        Some(g) if g.starts_with('-') => {
            return Err(v.error(
                "rw",
                "a negative gap (fio's backwards sequential I/O) is not supported; gaps skip \
                 forward"
                    .into(),
            ));
        }
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
