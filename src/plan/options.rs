//! THE option table: every workload option iogauge understands, by fio's name, with its
//! aliases, value type, default and help. The CLI builds its flags from this table, and job
//! files, profiles and the documentation read the same rows, so an option exists in exactly one
//! place. This module describes options; it does not parse values (see `value`) or combine them
//! into jobs (see `resolve`). Adding an option: a row here, a read in the `resolve` step whose
//! part of the job it sets (pacing, queue, sync…), and that part's field. A row no step reads
//! is refused at resolution and fails `every_option_in_the_table_is_applied_or_refused`.

/// The type of an option's value, which decides how it is parsed and documented.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A byte size (`4k`, `1g`).
    Size,
    /// A duration; a bare number is in seconds.
    Seconds,
    /// A boolean; may be given without a value to mean true.
    Bool,
    /// A whole number in an inclusive range.
    Int { min: u64, max: u64 },
    /// One of a fixed list of words.
    Choice(&'static [&'static str]),
    /// Free text (a path, a name).
    Text,
    /// A syntax of the option's own, parsed where the option is resolved; the text says what
    /// it accepts.
    Spec(&'static str),
    /// A duration; a bare number is in microseconds (fio's thinktime).
    Micros,
}

/// One row of the table.
#[derive(Debug)]
pub struct OptionDef {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub kind: Kind,
    /// The default as the user would write it, or `None` where the default depends on other
    /// options (described in `help`).
    pub default: Option<&'static str>,
    pub help: &'static str,
}

pub const RW_MODES: &[&str] = &[
    "read",
    "write",
    "randread",
    "randwrite",
    "rw",
    "readwrite",
    "randrw",
    "update",
    "trim",
    "randtrim",
    "trimwrite",
    "randtrimwrite",
];

/// Each engine's own options, as fio's engines carry theirs. One given to a job of another
/// engine is refused, unless it was set while an engine of its own was in force and a later
/// `ioengine=` (a job's own, under a [global] one) replaced that engine: then it is ignored,
/// as fio ignores it.
pub const ENGINE_OPTIONS: &[(&str, &[&str])] = &[
    (
        "io_uring",
        &[
            "fixedbufs",
            "registerfiles",
            "sqthread_poll",
            "sqthread_poll_cpu",
            "hipri",
            "nowait",
            "uncached",
            "force_async",
            "cmdprio_percentage",
            "cmdprio_class",
            "cmdprio",
            "cmdprio_bssplit",
        ],
    ),
    (
        "libaio",
        &[
            "userspace_reap",
            "nowait",
            "cmdprio_percentage",
            "cmdprio_class",
            "cmdprio",
            "cmdprio_bssplit",
        ],
    ),
    ("pvsync2", &["hipri", "nowait", "uncached"]),
    ("filestat", &["stat_type"]),
    ("dirstat", &["stat_type"]),
    (
        "cpuio",
        &["cpuload", "cpuchunks", "cpumode", "exit_on_io_done"],
    ),
    (
        "exec",
        &["program", "arguments", "grace_time", "std_redirect"],
    ),
    ("e4defrag", &["donorname", "inplace"]),
    ("mmap", &["thp"]),
    ("net", NET_OPTIONS),
    ("netsplice", NET_OPTIONS),
];

/// The net engines' own options.
const NET_OPTIONS: &[&str] = &[
    "hostname",
    "port",
    "protocol",
    "listen",
    "pingpong",
    "nodelay",
    "interface",
    "ttl",
    "window_size",
    "mss",
];

/// The options of engine `e` (empty for an engine with none of its own).
pub fn engine_options(e: &str) -> &'static [&'static str] {
    ENGINE_OPTIONS
        .iter()
        .find(|(name, _)| *name == e)
        .map_or(&[], |(_, o)| o)
}

/// Whether `option` is some engine's own.
pub fn is_engine_option(option: &str) -> bool {
    ENGINE_OPTIONS.iter().any(|(_, o)| o.contains(&option))
}

/// The engines `ioengine` accepts: every engine's name, in [`crate::engine::Kind::ALL`]'s
/// order.
pub const ENGINES: &[&str] = &{
    let all = crate::engine::Kind::ALL;
    let mut names = [""; crate::engine::Kind::ALL.len()];
    let mut i = 0;
    while i < names.len() {
        names[i] = all[i].as_str();
        i += 1;
    }
    names
};

/// Every workload option, in the order the documentation lists them.
pub static OPTIONS: &[OptionDef] = &[
    OptionDef {
        name: "name",
        aliases: &[],
        kind: Kind::Text,
        default: Some("job"),
        help: "Job name; used in reports and in file names under `directory`.",
    },
    OptionDef {
        name: "rw",
        aliases: &["readwrite"],
        kind: Kind::Choice(RW_MODES),
        default: Some("read"),
        help: "I/O pattern: read, write, randread, randwrite, rw/readwrite (mixed sequential), \
               randrw (mixed random), update (random read of a block, then write of the same \
               block: SAS UPDATE/MODIFY, SASIOTEST -rw), trim/randtrim (a discard on a block \
               device, a punched hole in a file), trimwrite/randtrimwrite (a trim, then a \
               write of the same bytes). A sequential pattern may end in \
               ':GAP' (fio's offset modifier): skip GAP bytes, a multiple of bs, after each \
               I/O, wrapping to the start at the end of the region.",
    },
    OptionDef {
        name: "rwmixread",
        aliases: &[],
        kind: Kind::Int { min: 0, max: 100 },
        default: Some("50"),
        help: "Percentage of I/Os that are reads in rw and randrw.",
    },
    OptionDef {
        name: "rwmixwrite",
        aliases: &[],
        kind: Kind::Int { min: 0, max: 100 },
        default: Some("50"),
        help: "Percentage of I/Os that are writes in rw and randrw (100 - rwmixread).",
    },
    OptionDef {
        name: "bs",
        aliases: &["blocksize"],
        kind: Kind::Spec("size[,size]"),
        default: Some("4k"),
        help: "Bytes per I/O (1 byte or more, as in fio; with direct=1 a multiple of the \
               device's logical block size). Two values separated by a comma are for reads and \
               writes (bs=4k,64k); an empty one keeps the default (bs=,64k).",
    },
    OptionDef {
        name: "bsrange",
        aliases: &["blocksize_range"],
        kind: Kind::Spec("min-max[,min-max]"),
        default: None,
        help: "Each I/O's size is drawn from MIN..MAX in steps of MIN (per direction with a \
               comma, as bs). Random offsets then may repeat within a pass.",
    },
    OptionDef {
        name: "bssplit",
        aliases: &[],
        kind: Kind::Spec("bs/pct[:bs/pct...][,...]"),
        default: None,
        help: "Weighted I/O sizes: 4k/60:64k/40 makes 60% of I/Os 4 KiB and 40% 64 KiB; an \
               entry without a percentage shares what is left. Per direction with a comma. \
               Random offsets then may repeat within a pass.",
    },
    OptionDef {
        name: "size",
        aliases: &[],
        kind: Kind::Spec("size, or N% of the existing file or device"),
        default: None,
        help: "Bytes of the job's region per pass, spread over its files. N% takes that share \
               of an existing file or block device (after offset). Default: the size of an \
               existing file or block device, or filesize x nrfiles; required for new files.",
    },
    OptionDef {
        name: "filesize",
        aliases: &[],
        kind: Kind::Size,
        default: None,
        help: "Size of each file; the region is filesize x nrfiles, and size (if given) is \
               then the bytes to transfer.",
    },
    OptionDef {
        name: "nrfiles",
        aliases: &["nr_files"],
        kind: Kind::Int {
            min: 1,
            max: 100_000,
        },
        default: Some("1"),
        help: "Files per job clone under directory (NAME.CLONE.0 .. NAME.CLONE.N-1); I/O \
               rotates over them. Ignored when filename names the files.",
    },
    OptionDef {
        name: "io_size",
        aliases: &["io_limit"],
        kind: Kind::Size,
        default: None,
        help: "Bytes to transfer per loop, when not the region's size: smaller stops early, \
               larger wraps around the region.",
    },
    OptionDef {
        name: "number_ios",
        aliases: &[],
        kind: Kind::Int {
            min: 0,
            max: u64::MAX,
        },
        default: None,
        help: "Stop after this many I/Os, even if size is not done (0: no limit, as fio's \
               default).",
    },
    OptionDef {
        name: "filename",
        aliases: &[],
        kind: Kind::Text,
        default: None,
        help: "Target file(s) or block device(s), ':'-separated; I/O rotates over them. \
               Shared by all clones of a job.",
    },
    OptionDef {
        name: "directory",
        aliases: &[],
        kind: Kind::Text,
        default: None,
        help: "Directory for the job's files: one file per job clone, named NAME.INDEX.0.",
    },
    OptionDef {
        name: "offset",
        aliases: &[],
        kind: Kind::Size,
        default: Some("0"),
        help: "Byte offset in each file where the job's region starts (N%: that share of \
               an existing file or device).",
    },
    OptionDef {
        name: "offset_increment",
        aliases: &[],
        kind: Kind::Size,
        default: Some("0"),
        help: "Clone N of the job (numjobs) starts at offset + N x offset_increment.",
    },
    OptionDef {
        name: "unlink",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("0"),
        help: "Remove the job's files as soon as its group ends, even with --keep (files \
               iogauge created are removed at the end of the run anyway, unless --keep).",
    },
    OptionDef {
        name: "unlink_each_loop",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("0"),
        help: "Remove the job's files before each loop after the first and write them \
               afresh, as new files (loops > 1; a job that only writes, on an engine doing \
               its I/O through a descriptor). Only files iogauge created are removed.",
    },
    OptionDef {
        name: "fill_device",
        aliases: &["fill_fs"],
        kind: Kind::Bool,
        default: Some("0"),
        help: "Write until the file system is full (ENOSPC or EDQUOT ends the job, as fio's \
               fill_device): without a size, a file's region is the free space of its file \
               system; a reading job lays its file out that way first. A later job that reads \
               the file without a size reads what was written. On a block device \
               (--allow-overwrite) the region is the device.",
    },
    OptionDef {
        name: "create_serialize",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("1"),
        help: "Lay out files one at a time. iogauge always does; 0 is accepted with a note.",
    },
    OptionDef {
        name: "runtime",
        aliases: &["timeout"],
        kind: Kind::Seconds,
        default: None,
        help: "Stop after this long (bare number: seconds). Without time_based the job also \
               stops when its size is done.",
    },
    OptionDef {
        name: "time_based",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("0"),
        help: "Keep looping over the region until runtime has passed.",
    },
    OptionDef {
        name: "ramp_time",
        aliases: &[],
        kind: Kind::Seconds,
        default: Some("0"),
        help: "Run this long before measuring; I/O during the ramp is not counted.",
    },
    OptionDef {
        name: "clocksource",
        aliases: &[],
        kind: Kind::Choice(&["cpu", "clock_gettime", "gettimeofday"]),
        default: None,
        help: "The clock that times each I/O, as fio names them: cpu is the CPU's time-stamp \
               counter (calibrated against CLOCK_MONOTONIC at the start and checked at the \
               end; where the kernel does not trust it, CLOCK_MONOTONIC with a warning), \
               clock_gettime is CLOCK_MONOTONIC, gettimeofday is taken as CLOCK_MONOTONIC \
               too (a wall clock can step mid-run). Default: the TSC where the kernel uses it \
               as its own clock source, else CLOCK_MONOTONIC. One clock for the whole run; \
               the report names it.",
    },
    OptionDef {
        name: "steadystate",
        aliases: &["ss"],
        kind: Kind::Spec("criterion:limit[%]"),
        default: Some("iops_slope:0.01%"),
        help: "fio's steady state: stop the job (its group, with group_reporting) once this \
               holds over the last ss_dur: iops or bw (every sample within LIMIT of the \
               window's mean), iops_slope or bw_slope (least-squares slope below LIMIT), lat \
               (mean completion latency within LIMIT); LIMIT absolute or in % of the mean.",
    },
    OptionDef {
        name: "steadystate_duration",
        aliases: &["ss_dur"],
        kind: Kind::Seconds,
        default: Some("0"),
        help: "The rolling window steady state is judged over (0: no steady-state check).",
    },
    OptionDef {
        name: "steadystate_ramp_time",
        aliases: &["ss_ramp"],
        kind: Kind::Seconds,
        default: Some("0"),
        help: "Run this long from the job's start before taking steady-state samples.",
    },
    OptionDef {
        name: "steadystate_check_interval",
        aliases: &["ss_interval"],
        kind: Kind::Seconds,
        default: Some("1"),
        help: "One steady-state sample per this interval; ss_dur must be a multiple of it.",
    },
    OptionDef {
        name: "startdelay",
        aliases: &[],
        kind: Kind::Spec("duration or min-max"),
        default: Some("0"),
        help: "Start the job this long after its group (a range: a reproducible random \
               delay per clone); the time before the start is not measured.",
    },
    OptionDef {
        name: "exitall",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("0"),
        help: "When this job finishes, stop the jobs exit_what names (they finish normally, \
               counting what they did).",
    },
    OptionDef {
        name: "exit_what",
        aliases: &[],
        kind: Kind::Choice(&["group", "stonewall", "all"]),
        default: Some("group"),
        help: "With exitall: group stops the jobs of this job's reporting group (new_group \
               starts one), stonewall every job running, all those and every later job.",
    },
    OptionDef {
        name: "continue_on_error",
        aliases: &[],
        kind: Kind::Choice(&["none", "read", "write", "io", "verify", "all", "0", "1"]),
        default: Some("none"),
        help: "Count and go past failed I/Os of these classes instead of stopping the job (by \
               default only EIO and EILSEQ, as fio's; ignore_error lists others).",
    },
    OptionDef {
        name: "ignore_error",
        aliases: &[],
        kind: Kind::Spec("READ,WRITE,VERIFY lists of errno names or numbers, ':' between them"),
        default: None,
        help: "The errors continue_on_error goes past, per class (read,write,verify): \
               ignore_error=,ENOSPC goes past full file systems on writes.",
    },
    OptionDef {
        name: "exitall_on_error",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("0"),
        help: "fio mode: when this job fails, stop every other job and end the run (by \
               default, as in fio, the others go on and later groups still run). iogauge run \
               always does.",
    },
    OptionDef {
        name: "wait_for",
        aliases: &[],
        kind: Kind::Text,
        default: None,
        help: "Start only when every clone of the named earlier job has finished; the other \
               jobs of the group keep running meanwhile.",
    },
    OptionDef {
        name: "new_group",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("0"),
        help: "fio's new reporting group without waiting: accepted, and the job runs \
               alongside the jobs before it as in fio, but iogauge reports it in the same \
               group (with a warning saying so).",
    },
    OptionDef {
        name: "rate",
        aliases: &[],
        kind: Kind::Spec("bytes/s[,bytes/s]"),
        default: None,
        help: "Cap bandwidth per job (bytes per second, fio's suffixes: rate=10m); two \
               values are for reads and writes.",
    },
    OptionDef {
        name: "rate_iops",
        aliases: &[],
        kind: Kind::Spec("N[,N]"),
        default: None,
        help: "Cap I/Os per second per job; two values are for reads and writes.",
    },
    OptionDef {
        name: "ratemin",
        aliases: &["rate_min"],
        kind: Kind::Spec("SIZE[,SIZE]"),
        default: None,
        help: "A floor per job, bytes per second (two values: reads, writes): from 2 s into \
               the measured time, a job whose rate over a ratecycle falls below it fails, as \
               fio's.",
    },
    OptionDef {
        name: "rate_iops_min",
        aliases: &[],
        kind: Kind::Spec("N[,N]"),
        default: None,
        help: "A floor per job in I/Os per second, checked as ratemin is.",
    },
    OptionDef {
        name: "ratecycle",
        aliases: &["rate_cycle"],
        kind: Kind::Int {
            min: 1,
            max: 3_600_000,
        },
        default: Some("1000"),
        help: "The milliseconds over which ratemin and rate_iops_min are averaged.",
    },
    OptionDef {
        name: "rate_process",
        aliases: &[],
        kind: Kind::Choice(&["linear", "poisson"]),
        default: Some("linear"),
        help: "How rate-capped I/Os are spaced: evenly (linear) or with exponential gaps of \
               the same mean (poisson, arrivals as from many independent clients).",
    },
    OptionDef {
        name: "cpus_allowed",
        aliases: &[],
        kind: Kind::Spec("CPU list (0-3,6)"),
        default: None,
        help: "The CPUs the job's thread may run on (sched_setaffinity before its first I/O), \
               as fio; a CPU this host lacks is refused.",
    },
    OptionDef {
        name: "cpumask",
        aliases: &[],
        kind: Kind::Spec("mask (0x3)"),
        default: None,
        help: "The CPUs the job's thread may run on, as a bit mask (0x5: CPUs 0 and 2); \
               cpus_allowed wins where both are given.",
    },
    OptionDef {
        name: "numa_cpu_nodes",
        aliases: &[],
        kind: Kind::Spec("NUMA node list (0-1)"),
        default: None,
        help: "The job's thread runs on the CPUs of these NUMA nodes (with cpus_allowed: the \
               CPUs of both); one node, 0, on a machine without NUMA.",
    },
    OptionDef {
        name: "numa_mem_policy",
        aliases: &[],
        kind: Kind::Spec("default|local|prefer:N|bind:LIST|interleave:LIST"),
        default: None,
        help: "The NUMA memory policy of the job's buffers (set_mempolicy on its thread before \
               they are touched), as fio's.",
    },
    OptionDef {
        name: "cpus_allowed_policy",
        aliases: &[],
        kind: Kind::Choice(&["shared", "split"]),
        default: Some("shared"),
        help: "shared: every job may run on all of cpus_allowed; split: each job (numjobs \
               clones included, counted through the run) takes one CPU of it in turn.",
    },
    OptionDef {
        name: "nice",
        aliases: &[],
        kind: Kind::Spec("-20..19"),
        default: None,
        help: "The job thread's nice value (negative needs root), as fio's.",
    },
    OptionDef {
        name: "verify_async_cpus",
        aliases: &[],
        kind: Kind::Spec("CPU list (0-3,6)"),
        default: None,
        help: "The CPUs the verify phase's checking threads may run on, as fio's.",
    },
    OptionDef {
        name: "prio",
        aliases: &[],
        kind: Kind::Int { min: 0, max: 7 },
        default: None,
        help: "The job's I/O priority level (0 highest), set on its thread with ioprio_set(2) \
               before its first I/O, in prioclass (best-effort when not given), as fio and \
               ionice do.",
    },
    OptionDef {
        name: "prioclass",
        aliases: &[],
        kind: Kind::Int { min: 0, max: 3 },
        default: None,
        help: "The job's I/O priority class: 1 real-time (root only), 2 best-effort, 3 idle \
               (0: best-effort); with prio, the level in it.",
    },
    OptionDef {
        name: "cmdprio_percentage",
        aliases: &[],
        kind: Kind::Spec("percent[,percent]"),
        default: None,
        help: "io_uring/libaio: this share of the I/Os (per direction with a comma) carry \
               cmdprio_class/cmdprio in their submission; the rest the job's own priority. \
               Latencies are then reported per priority too (fio's prios).",
    },
    OptionDef {
        name: "cmdprio_class",
        aliases: &[],
        kind: Kind::Spec("class[,class]"),
        default: Some("1"),
        help: "Class of the per-command priority: 1 real-time, 2 best-effort, 3 idle.",
    },
    OptionDef {
        name: "cmdprio",
        aliases: &[],
        kind: Kind::Spec("level[,level]"),
        default: Some("0"),
        help: "Level (0-7, 0 highest) of the per-command priority.",
    },
    OptionDef {
        name: "cmdprio_bssplit",
        aliases: &[],
        kind: Kind::Spec("bs/pct[/class/level][:...][,...]"),
        default: None,
        help: "io_uring/libaio: per-command priorities by I/O size: 64k/25/1/1:64k/75/3/2 \
               gives 25% of 64 KiB I/Os class 1 level 1 and 75% class 3 level 2; an entry \
               without class and level takes cmdprio_class/cmdprio. Not with \
               cmdprio_percentage.",
    },
    OptionDef {
        name: "latency_target",
        aliases: &[],
        kind: Kind::Micros,
        default: Some("0"),
        help: "Search for the deepest queue (up to iodepth) at which latency_percentile % of \
               each latency_window's I/Os complete within this (bare number: microseconds), \
               as fio does; the report's latency_depth is the depth found.",
    },
    OptionDef {
        name: "latency_window",
        aliases: &[],
        kind: Kind::Micros,
        default: Some("0"),
        help: "With latency_target: how long each queue depth is tried (bare number: \
               microseconds; 0: judged after every I/O).",
    },
    OptionDef {
        name: "latency_percentile",
        aliases: &[],
        kind: Kind::Spec("a percentage from 0 to 100"),
        default: Some("100"),
        help: "With latency_target: the share of a window's I/Os that must meet the target.",
    },
    OptionDef {
        name: "latency_run",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("0"),
        help: "With latency_target: keep adjusting the depth for the whole job instead of \
               measuring one last window at the depth found.",
    },
    OptionDef {
        name: "max_latency",
        aliases: &[],
        kind: Kind::Spec("a time per direction (read,write,trim; bare number: microseconds)"),
        default: None,
        help: "An I/O slower than this from submission to completion fails the job with \
               ETIMEDOUT, as fio's (read,write,trim values).",
    },
    OptionDef {
        name: "thinktime",
        aliases: &[],
        kind: Kind::Micros,
        default: Some("0"),
        help: "Pause this long (bare number: microseconds, as fio) after every \
               thinktime_blocks I/Os.",
    },
    OptionDef {
        name: "thinktime_blocks",
        aliases: &[],
        kind: Kind::Int {
            min: 1,
            max: u32::MAX as u64,
        },
        default: Some("1"),
        help: "I/Os between thinktime pauses.",
    },
    OptionDef {
        name: "serialize_overlap",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("0"),
        help: "Never have two I/Os of the job in flight over the same bytes (fio's). iogauge \
               takes it with one I/O in flight (iodepth=1 or a synchronous engine), where it \
               holds by construction, and refuses it with more.",
    },
    OptionDef {
        name: "flow_id",
        aliases: &[],
        kind: Kind::Int {
            min: 0,
            max: u32::MAX as u64,
        },
        default: Some("0"),
        help: "The flow the job's flow weight counts in (fio's flow control): jobs of one \
               flow_id keep their I/O counts in the ratio of their flow weights.",
    },
    OptionDef {
        name: "flow",
        aliases: &[],
        kind: Kind::Int { min: 0, max: 1024 },
        default: Some("0"),
        help: "The job's weight in its flow (0: no flow control). Before each I/O the job \
               checks its share of the flow's I/Os against its share of the weights, and \
               waits while it is ahead (fio's).",
    },
    OptionDef {
        name: "flow_sleep",
        aliases: &[],
        kind: Kind::Int {
            min: 0,
            max: 1_000_000_000,
        },
        default: Some("0"),
        help: "Microseconds a job ahead of its flow share waits before it checks again (0: \
               it checks again at once, as fio).",
    },
    OptionDef {
        name: "loops",
        aliases: &[],
        kind: Kind::Int {
            min: 1,
            max: 1_000_000,
        },
        default: Some("1"),
        help: "Passes over the region when size-bounded.",
    },
    OptionDef {
        name: "numjobs",
        aliases: &[],
        kind: Kind::Int { min: 1, max: 4096 },
        default: Some("1"),
        help: "Threads running this job, all released together by a start barrier.",
    },
    OptionDef {
        name: "ioengine",
        aliases: &[],
        kind: Kind::Choice(ENGINES),
        default: Some("psync"),
        help: "How I/O is issued: psync (pread/pwrite), sync (lseek + read/write), vsync \
               (lseek + readv/writev over numpages buffers), \
               pvsync (preadv/pwritev over numpages buffers), pvsync2 (preadv2/pwritev2 with \
               per-call flags: hipri, nowait, sync=dsync as RWF_DSYNC), io_uring (iodepth I/Os \
               in flight), libaio (Linux native AIO: io_submit/io_getevents, iodepth in \
               flight; buffered I/O completes inside io_submit, as the kernel does it), mmap (a \
               copy through a shared mapping of the file), splice (through a pipe with \
               splice/vmsplice), falloc \
               (each I/O a fallocate of its range), ftruncate (each write an ftruncate to its \
               offset), filecreate/filestat/filedelete and dircreate/dirstat/dirdelete \
               (metadata operations on files and directories), posixaio (glibc's aio_read/\
               aio_write, iodepth in flight), cpuio (burns CPU), exec (runs a program beside \
               the other jobs), net/netsplice (sockets), null (no I/O: measures iogauge's own \
               overhead).",
    },
    OptionDef {
        name: "iodepth",
        aliases: &[],
        kind: Kind::Int { min: 1, max: 4096 },
        default: Some("1"),
        help: "I/Os kept in flight per job (io_uring, libaio). Synchronous engines always have one: \
               with them iodepth has no effect.",
    },
    OptionDef {
        name: "iodepth_batch_submit",
        aliases: &["iodepth_batch"],
        kind: Kind::Int { min: 0, max: 4096 },
        default: Some("1"),
        help: "Queued I/Os handed to the kernel per submission (0: iodepth).",
    },
    OptionDef {
        name: "iodepth_batch_complete_min",
        aliases: &["iodepth_batch_complete"],
        kind: Kind::Int { min: 0, max: 4096 },
        default: Some("1"),
        help: "Completions to wait for when reaping (0: only take what is already done, \
               never wait unless the queue is full).",
    },
    OptionDef {
        name: "iodepth_batch_complete_max",
        aliases: &[],
        kind: Kind::Int { min: 0, max: 4096 },
        default: None,
        help: "Most completions taken per reap. Default: iodepth_batch_complete_min.",
    },
    OptionDef {
        name: "iodepth_low",
        aliases: &[],
        kind: Kind::Int { min: 0, max: 4096 },
        default: None,
        help: "Once the queue is full, reap until no more than this many are in flight \
               before queuing again. Default: iodepth (keep the queue full).",
    },
    OptionDef {
        name: "numpages",
        aliases: &["bufno"],
        kind: Kind::Int { min: 1, max: 65536 },
        default: Some("1"),
        help: "Pages of bs bytes moved by each call, as one iovec of numpages separate \
               buffers (SAS SGIO: BUFNO x BUFSIZE; SASIOTEST -numpages). Each I/O transfers \
               bs x numpages. Needs pvsync, pvsync2 or io_uring; with numpages > 1 the size \
               per file must be a multiple of bs x numpages. Linux takes at most 1024 iovec \
               entries per call (IOV_MAX): above that each I/O is several calls of up to 1024 \
               pages, timed as one I/O.",
    },
    OptionDef {
        name: "fixedbufs",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("0"),
        help: "io_uring: register the I/O buffers once (READ/WRITE_FIXED), saving the \
               kernel's per-I/O page pinning. Not with numpages > 1.",
    },
    OptionDef {
        name: "registerfiles",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("0"),
        help: "io_uring: register the files once, saving a file lookup per I/O.",
    },
    OptionDef {
        name: "sqthread_poll",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("0"),
        help: "io_uring: a kernel thread polls the submission queue (no syscall to submit; \
               costs a CPU while busy).",
    },
    OptionDef {
        name: "sqthread_poll_cpu",
        aliases: &[],
        kind: Kind::Int { min: 0, max: 65535 },
        default: None,
        help: "io_uring with sqthread_poll: the CPU the polling thread is bound to.",
    },
    OptionDef {
        name: "hipri",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("0"),
        help: "Polled completions: io_uring IORING_SETUP_IOPOLL, pvsync2 RWF_HIPRI. Needs \
               direct=1 and a device with poll queues (NVMe with poll_queues set).",
    },
    OptionDef {
        name: "nowait",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("0"),
        help: "io_uring, libaio, pvsync2: RWF_NOWAIT: an I/O that would block fails with EAGAIN \
               instead of waiting, which stops the job (as in fio).",
    },
    OptionDef {
        name: "uncached",
        aliases: &[],
        kind: Kind::Int {
            min: 0,
            max: 4_294_967_295,
        },
        default: Some("0"),
        help: "io_uring, pvsync2: RWF_DONTCACHE on each buffered read and write: the data \
               goes through the page cache but leaves it once the I/O is done (a write starts \
               its writeback before the call returns). Linux 6.14+ on a file system that has \
               it (ext4, xfs, btrfs; not tmpfs): checked when the files are opened. No effect \
               with direct=1.",
    },
    OptionDef {
        name: "atomic",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("0"),
        help: "io_uring, libaio, pvsync2: RWF_ATOMIC on each write: torn-write protection (after \
               a power failure the write is all there or not at all), what lets a database \
               drop its double-write buffer. Needs direct=1, one power-of-two write size at \
               offsets that are multiples of it, and a file whose file system and device \
               take atomic writes of that size (statx STATX_WRITE_ATOMIC, checked when the \
               files are opened; Linux 6.11+).",
    },
    OptionDef {
        name: "exec_prerun",
        aliases: &[],
        kind: Kind::Text,
        default: None,
        help: "A shell command run before the job's I/O starts (fio's), its output in \
               NAME.prerun.txt (a new file); if it fails, the job does not run.",
    },
    OptionDef {
        name: "exec_postrun",
        aliases: &[],
        kind: Kind::Text,
        default: None,
        help: "A shell command run after the job's group ends (fio's), its output in \
               NAME.postrun.txt (a new file); a failure is a warning.",
    },
    OptionDef {
        name: "write_hint",
        aliases: &[],
        kind: Kind::Choice(&["none", "short", "medium", "long", "extreme"]),
        default: None,
        help: "The write lifetime hint a writing job puts on its files (fcntl F_SET_RW_HINT), \
               which their writes carry to a device that places data by lifetime (fio's).",
    },
    OptionDef {
        name: "force_async",
        aliases: &[],
        kind: Kind::Int {
            min: 0,
            max: u32::MAX as u64,
        },
        default: Some("0"),
        help: "io_uring: every this many I/Os is handed to io_uring's worker threads \
               (IOSQE_ASYNC) instead of being tried inline first (fio's; 0: none).",
    },
    OptionDef {
        name: "userspace_reap",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("0"),
        help: "libaio: when not waiting, take completions from the ring the kernel maps into \
               the process instead of calling io_getevents.",
    },
    OptionDef {
        name: "file_service_type",
        aliases: &[],
        kind: Kind::Spec(
            "roundrobin, sequential or random, each with an optional :N; zipf, pareto or \
             normal, each with an optional :VALUE",
        ),
        default: Some("roundrobin"),
        help: "Which file each I/O of a job with several files goes to: the next after every N \
               I/Os (roundrobin:N, default N=1), each file to its end before the next \
               (sequential), a random one every N I/Os (random:N), or one drawn per I/O from \
               zipf:THETA (1.1), pareto:H (0.2) or normal:DEV (gauss) over the files, its hot \
               files anywhere in the list. Each pass covers every file once.",
    },
    OptionDef {
        name: "allow_file_create",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("1"),
        help: "Create the files that are missing (0: every file must exist; a missing one is \
               refused before anything runs).",
    },
    OptionDef {
        name: "donorname",
        aliases: &[],
        kind: Kind::Text,
        default: None,
        help: "e4defrag: the donor file each write swaps blocks with (in the job's directory; \
               iogauge creates it, and refuses one it did not create).",
    },
    OptionDef {
        name: "thp",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("0"),
        help: "mmap: map each file privately (MAP_PRIVATE) with transparent huge pages asked \
               for (madvise MADV_HUGEPAGE), as fio's thp does; reads only, since writes to a \
               private mapping never reach the file.",
    },
    OptionDef {
        name: "inplace",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("0"),
        help: "e4defrag: allocate the donor's blocks before each move and free them after (0: \
               allocate the donor once, over the job's region, before it starts).",
    },
    OptionDef {
        name: "hostname",
        aliases: &[],
        kind: Kind::Text,
        default: None,
        help: "net: the host a sender connects or sends to (a name or an address); for a udp \
               receiver, only a multicast group to join. unix sockets use filename.",
    },
    OptionDef {
        name: "port",
        aliases: &[],
        kind: Kind::Int { min: 1, max: 65535 },
        default: None,
        help: "net: the tcp or udp port (required for them; none for unix). Each clone of a \
               job (numjobs) uses the next port up, as fio's.",
    },
    OptionDef {
        name: "protocol",
        aliases: &["proto"],
        kind: Kind::Choice(&["tcp", "tcpv6", "udp", "udpv6", "unix", "vsock"]),
        default: Some("tcp"),
        help: "net: tcp, tcpv6, udp, udpv6 or unix (a local socket at filename); vsock (VM \
               sockets) is fio's only.",
    },
    OptionDef {
        name: "listen",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("0"),
        help: "net: wait for the peer's connection (tcp, unix) rather than connect to \
               hostname; a udp reader always waits for its sender.",
    },
    OptionDef {
        name: "pingpong",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("0"),
        help: "net: each block is sent back by the receiver, so each I/O's latency is a round \
               trip (with several udp multicast readers, give it to one).",
    },
    OptionDef {
        name: "nodelay",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("0"),
        help: "net: TCP_NODELAY on tcp connections (each block sent at once).",
    },
    OptionDef {
        name: "interface",
        aliases: &[],
        kind: Kind::Text,
        default: None,
        help: "net: the IPv4 address of the interface udp multicast goes out of or is \
               received on.",
    },
    OptionDef {
        name: "ttl",
        aliases: &[],
        kind: Kind::Int { min: 0, max: 255 },
        default: Some("1"),
        help: "net: the time-to-live of a udp multicast sender's datagrams.",
    },
    OptionDef {
        name: "window_size",
        aliases: &[],
        kind: Kind::Size,
        default: None,
        help: "net: the socket's send and receive buffer size (SO_SNDBUF, SO_RCVBUF; the \
               kernel doubles what it is given).",
    },
    OptionDef {
        name: "mss",
        aliases: &[],
        kind: Kind::Int { min: 0, max: 65535 },
        default: None,
        help: "net: the tcp maximum segment size (TCP_MAXSEG).",
    },
    OptionDef {
        name: "stat_type",
        aliases: &[],
        kind: Kind::Choice(&["stat", "lstat", "statx"]),
        default: Some("stat"),
        help: "filestat and dirstat: the call measured on each file's (or directory's) \
               path: stat(2), lstat(2), or statx(2) with STATX_ALL.",
    },
    OptionDef {
        name: "blockalign",
        aliases: &["ba"],
        kind: Kind::Spec("a size, a multiple of the smallest block size"),
        default: None,
        help: "Random offsets on multiples of this (fio's; by default the smallest block \
               size), as JESD219's 4 KiB alignment of 512 B-64 KiB I/Os; needs norandommap.",
    },
    OptionDef {
        name: "cpuload",
        aliases: &[],
        kind: Kind::Int {
            min: 0,
            max: u32::MAX as u64,
        },
        default: None,
        help: "cpuio: the share of a CPU each job burns, in percent (above 100: 100).",
    },
    OptionDef {
        name: "cpuchunks",
        aliases: &["cpucycle"],
        kind: Kind::Int {
            min: 1,
            max: u32::MAX as u64,
        },
        default: Some("50000"),
        help: "cpuio: microseconds of spinning per cycle (cpumode=noop).",
    },
    OptionDef {
        name: "cpumode",
        aliases: &[],
        kind: Kind::Choice(&["noop", "qsort"]),
        default: Some("noop"),
        help: "cpuio: spin (noop), or sort 256 Ki integers each cycle (qsort, fio's stress).",
    },
    OptionDef {
        name: "program",
        aliases: &[],
        kind: Kind::Text,
        default: None,
        help: "exec: the program the job runs for its runtime (found on PATH).",
    },
    OptionDef {
        name: "arguments",
        aliases: &[],
        kind: Kind::Text,
        default: None,
        help: "exec: the program's arguments, split on spaces; %r is the job's runtime in \
               seconds, %n its name.",
    },
    OptionDef {
        name: "grace_time",
        aliases: &[],
        kind: Kind::Int {
            min: 0,
            max: u32::MAX as u64,
        },
        default: Some("1"),
        help: "exec: seconds the program has to exit after SIGTERM at the job's end, before \
               SIGKILL.",
    },
    OptionDef {
        name: "std_redirect",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("1"),
        help: "exec: the program's stdout and stderr to NAME.stdout and NAME.stderr (new \
               files; one that exists is refused), else iogauge's own.",
    },
    OptionDef {
        name: "exit_on_io_done",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("0"),
        help: "cpuio: end when the group's I/O jobs have ended (fio's).",
    },
    OptionDef {
        name: "direct",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("0"),
        help: "Open with O_DIRECT: bypass the page cache. bs and offset must be multiples of \
               the device's logical block size.",
    },
    OptionDef {
        name: "buffered",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("1"),
        help: "The opposite of direct (fio's buffered=0 is direct=1); the later of the two wins.",
    },
    OptionDef {
        name: "sync",
        aliases: &[],
        kind: Kind::Choice(&["none", "0", "dsync", "sync", "1"]),
        default: Some("none"),
        help: "Write-through: dsync opens with O_DSYNC (data reaches stable storage before \
               each write returns; SASIOTEST -writethru), sync (or 1) with O_SYNC.",
    },
    OptionDef {
        name: "invalidate",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("1"),
        help: "Drop the file's pages from the page cache before the job starts.",
    },
    OptionDef {
        name: "pre_read",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("0"),
        help: "Read the job's files once before it starts, untimed, so its reads find them in \
               the page cache (fio's pre_read; it turns invalidate off).",
    },
    OptionDef {
        name: "fadvise_hint",
        aliases: &[],
        kind: Kind::Choice(&["1", "0", "none", "sequential", "random"]),
        default: Some("1"),
        help: "posix_fadvise hint: 1 = by pattern (sequential or random), 0/none = no hint, \
               or force sequential/random.",
    },
    OptionDef {
        name: "fsync",
        aliases: &[],
        kind: Kind::Int {
            min: 0,
            max: u32::MAX as u64,
        },
        default: Some("0"),
        help: "fsync(2) the file after every N writes (0: never), once the writes in flight \
               have completed; each call is timed into the job's sync latencies.",
    },
    OptionDef {
        name: "fdatasync",
        aliases: &[],
        kind: Kind::Int {
            min: 0,
            max: u32::MAX as u64,
        },
        default: Some("0"),
        help: "fdatasync(2) the file after every N writes (0: never): the database log test \
               (data, not metadata, made durable). With fsync=N as well, fio's order holds: \
               fsync is checked first, and one flush follows any one write.",
    },
    OptionDef {
        name: "sync_file_range",
        aliases: &[],
        kind: Kind::Spec(
            "FLAGS:N: FLAGS one or more of wait_before, write, wait_after joined by ','",
        ),
        default: None,
        help: "sync_file_range(2) over the range written since the last one, with those flags, \
               after every N writes (N defaults to 1): write:8 starts write-back of the last \
               8 writes; wait_before,write,wait_after waits for it.",
    },
    OptionDef {
        name: "end_fsync",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("0"),
        help: "fsync at the end of the job, inside the measured time, so buffered writes are \
               counted when they reach storage.",
    },
    OptionDef {
        name: "fsync_on_close",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("0"),
        help: "fsync each written file when the job closes it. iogauge keeps a job's files \
               open until the job ends, so this is end_fsync (as in fio for a job that does \
               not reopen its files).",
    },
    OptionDef {
        name: "end_syncfs",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("0"),
        help: "Like end_fsync, with one syncfs(2) of the file system instead of an fsync per \
               file (it flushes other writers' dirty data too).",
    },
    OptionDef {
        name: "write_barrier",
        aliases: &[],
        kind: Kind::Int {
            min: 0,
            max: u32::MAX as u64,
        },
        default: Some("0"),
        help: "fio's barrier write every N writes. Linux has no barrier writes; fio honours \
               this only in its libpmem engine, and no engine of iogauge's has them, so it \
               changes nothing (said once in the warnings).",
    },
    OptionDef {
        name: "fallocate",
        aliases: &[],
        kind: Kind::Choice(&["native", "posix", "keep", "truncate", "none", "0", "1"]),
        default: Some("native"),
        help: "How a file iogauge creates is allocated before the job, as fio: native \
               (fallocate(2) to full size; none where the file system lacks it), posix \
               (posix_fallocate(3), which writes zeros where fallocate is missing), keep \
               (fallocate with FALLOC_FL_KEEP_SIZE: blocks reserved, size 0), truncate \
               (ftruncate to full size: sparse), none (0; the job appends), 1 (posix). A \
               sequential writer then overwrites allocated blocks instead of growing the file, \
               which is what a database log or a preallocated data file sees. The report says \
               how each file was laid out.",
    },
    OptionDef {
        name: "overwrite",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("0"),
        help: "Lay out a new file in full before a sequential write job starts, so the job \
               overwrites existing blocks instead of extending the file (random writes and \
               reads always get a laid-out file).",
    },
    OptionDef {
        name: "stonewall",
        aliases: &["wait_for_previous"],
        kind: Kind::Bool,
        default: Some("0"),
        help: "Start a new group: this job waits until every job before it has finished.",
    },
    OptionDef {
        name: "group_reporting",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("0"),
        help: "Report each group as one job (as fio): I/Os and bytes summed over its jobs, \
               latencies merged, bandwidth = all bytes / the longest job's time.",
    },
    OptionDef {
        name: "write_bw_log",
        aliases: &[],
        kind: Kind::Text,
        default: None,
        help: "Write bandwidth over time to NAME_bw.N.log (fio's log format: msec, KiB/s, \
               direction, bs, offset), N counting jobs from 1.",
    },
    OptionDef {
        name: "write_iops_log",
        aliases: &[],
        kind: Kind::Text,
        default: None,
        help: "Write IOPS over time to NAME_iops.N.log (fio's log format).",
    },
    OptionDef {
        name: "write_lat_log",
        aliases: &[],
        kind: Kind::Text,
        default: None,
        help: "Write mean latency (ns) over time to NAME_lat.N.log, NAME_clat.N.log and \
               NAME_slat.N.log (fio's log format).",
    },
    OptionDef {
        name: "log_avg_msec",
        aliases: &[],
        kind: Kind::Int {
            min: 0,
            max: 3_600_000,
        },
        default: Some("0"),
        help: "Window (ms) over which log entries and report time series are averaged. \
               0 (fio's default): the logs have a line per I/O, and the report's time series \
               500 ms windows (fio's bw_avg_time).",
    },
    OptionDef {
        name: "per_job_logs",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("1"),
        help: "1: each job's logs are NAME_bw.N.log (N counting jobs from 1); 0: all jobs \
               of the name write NAME_bw.log, one after another (fio's).",
    },
    OptionDef {
        name: "log_offset",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("0"),
        help: "Add each I/O's offset to its log line (a window's line: 0), before the \
               priority column (fio's).",
    },
    OptionDef {
        name: "log_prio",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("0"),
        help: "The last column of each per-I/O log line: 0 (fio's default) says whether the \
               I/O had a real-time priority (1) or not (0); 1 gives its ioprio value (class << \
               13 | level).",
    },
    OptionDef {
        name: "clat_percentiles",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("1"),
        help: "fio's report: completion latency's percentiles (and json+ bins) in clat_ns.",
    },
    OptionDef {
        name: "lat_percentiles",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("0"),
        help: "fio's report: total latency's percentiles (and json+ bins) in lat_ns; the \
               terse line then carries them instead of clat's.",
    },
    OptionDef {
        name: "slat_percentiles",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("0"),
        help: "fio's report: submission latency's percentiles (and json+ bins) in slat_ns \
               (queued engines; a synchronous engine has no submission latency).",
    },
    OptionDef {
        name: "unified_rw_reporting",
        aliases: &[],
        kind: Kind::Choice(&["none", "mixed", "both", "0", "1", "2"]),
        default: Some("none"),
        help: "fio's report: mixed (1) reports reads, writes and trims together as one \
               `mixed` block; both (2) adds it to the three; none (0) does not.",
    },
    OptionDef {
        name: "log_store_compressed",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("0"),
        help: "Write the bw/iops/lat logs zlib-compressed, as NAME.log.fz (fio's); \
               `iogauge fio --inflate-log=NAME.log.fz` (or fio's) prints them back.",
    },
    OptionDef {
        name: "norandommap",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("0"),
        help: "Random offsets may repeat within a pass (default: every block exactly once).",
    },
    OptionDef {
        name: "write_iolog",
        aliases: &[],
        kind: Kind::Text,
        default: None,
        help: "Writes fio's I/O log (version 3) to this file: each I/O the job issues (ramp \
               included) and each flush, timed in microseconds from the job's start, between \
               the files' add/open/close lines; fio's read_iolog replays it.",
    },
    OptionDef {
        name: "read_iolog",
        aliases: &[],
        kind: Kind::Text,
        default: None,
        help: "Replays fio's I/O log (version 2 or 3; '-' reads it from standard input) \
               instead of generating I/O: its files become the job's, each read, write, trim \
               and sync is issued in order, at its recorded time (version 3) unless \
               replay_no_stall. FILE1:FILE2 gives numjobs clones a log each.",
    },
    OptionDef {
        name: "replay_no_stall",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("0"),
        help: "Replay the log's I/O as fast as the queue allows, in order, ignoring its times \
               and waits.",
    },
    OptionDef {
        name: "replay_time_scale",
        aliases: &[],
        kind: Kind::Int {
            min: 1,
            max: 1_000_000,
        },
        default: Some("100"),
        help: "Percent of the log's rate: 200 replays its I/O at twice the recorded rate \
               (half the gaps), 50 at half.",
    },
    OptionDef {
        name: "replay_redirect",
        aliases: &[],
        kind: Kind::Text,
        default: None,
        help: "Replays every I/O of the log onto this one file or device, whatever file the \
               log names.",
    },
    OptionDef {
        name: "replay_scale",
        aliases: &[],
        kind: Kind::Int {
            min: 1,
            max: u64::MAX,
        },
        default: Some("1"),
        help: "Divides the log's offsets by this factor (use replay_align too).",
    },
    OptionDef {
        name: "replay_align",
        aliases: &[],
        kind: Kind::Size,
        default: None,
        help: "Rounds the log's offsets down to a multiple of this power of two.",
    },
    OptionDef {
        name: "replay_skip",
        aliases: &[],
        kind: Kind::Spec("read,write,trim,sync"),
        default: None,
        help: "Leaves these kinds of the log's actions out of the replay (sync covers \
               datasync and sync_file_range too).",
    },
    OptionDef {
        name: "zonemode",
        aliases: &[],
        kind: Kind::Choice(&["none", "strided", "zbd"]),
        default: Some("none"),
        help: "strided (fio's): the region is cut into zones of zonerange bytes; the job does \
               zonesize bytes of I/O in one zone (random or sequential within it), then moves \
               zoneskip bytes past its end to the next, wrapping to the first at the end. \
               zbd (zoned block devices) is not supported.",
    },
    OptionDef {
        name: "zonerange",
        aliases: &[],
        kind: Kind::Size,
        default: None,
        help: "zonemode=strided: the size of a zone (default: zonesize).",
    },
    OptionDef {
        name: "zonesize",
        aliases: &[],
        kind: Kind::Size,
        default: None,
        help: "zonemode=strided: the bytes of I/O done in a zone before moving on.",
    },
    OptionDef {
        name: "zoneskip",
        aliases: &[],
        kind: Kind::Size,
        default: None,
        help: "zonemode=strided: the bytes skipped after a zone before the next begins.",
    },
    OptionDef {
        name: "random_generator",
        aliases: &[],
        kind: Kind::Choice(&["tausworthe", "lfsr", "tausworthe64"]),
        default: Some("tausworthe"),
        help: "fio's generator names. iogauge draws offsets with xoshiro256++ (no map: \
               repeats allowed) or walks a keyed permutation (every block once per pass). \
               lfsr is fio's full-period generator: every block once per pass even with \
               norandommap, so iogauge walks its permutation; the others draw as chosen.",
    },
    OptionDef {
        name: "random_distribution",
        aliases: &[],
        kind: Kind::Spec(
            "random|zipf:THETA|pareto:H|normal:DEV|zoned:ACC/SIZE[:...]|zoned_abs:ACC/BYTES[:...]",
        ),
        default: Some("random"),
        help: "How random offsets are spread: random (uniform), zipf:THETA (theta > 0, not 1; \
               default 1.1) and pareto:H (0 < h < 1; default 0.2) concentrate on hot blocks \
               scattered over each file, normal:DEV (0 to below 100; default 0) is fio's bell: \
               the mean of 12 uniform draws plus a jitter of up to DEV/2 % either way, \
               scattered the same way. These three are fio's own generators, seeded as fio \
               seeds them (the file's name and the job's number), so they pick the same blocks \
               in the same order as fio; so does random, with fio's random map. zoned:60/10:30/20:10/70 sends 60% of I/Os to the \
               first 10% of the region and so on (zoned_abs: zone sizes in bytes). Any but \
               random lets offsets repeat.",
    },
    OptionDef {
        name: "percentage_random",
        aliases: &[],
        kind: Kind::Spec("0-100[,0-100]"),
        default: Some("100"),
        help: "For random patterns: the share of I/Os at a random offset; the rest continue \
               sequentially (per direction with a comma).",
    },
    OptionDef {
        name: "randrepeat",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("1"),
        help: "1: the same offsets every run (a fixed seed, or randseed); 0: a new seed each \
               run, taken from the clock and recorded in the report.",
    },
    OptionDef {
        name: "kb_base",
        aliases: &[],
        kind: Kind::Choice(&["1024", "1000"]),
        default: Some("1024"),
        help: "What k, m, g mean in sizes (as fio): 1024 (default; KiB, MiB then mean powers \
               of 1000, fio's compatibility rule) or 1000 (k = 1000, KiB = 1024).",
    },
    OptionDef {
        name: "randseed",
        aliases: &[],
        kind: Kind::Int {
            min: 0,
            max: u64::MAX,
        },
        default: None,
        help: "Seed for offsets, mixes and data; the same seed gives the same run. \
               Default: a fixed seed, as fio's randrepeat.",
    },
    OptionDef {
        name: "zero_buffers",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("0"),
        help: "Write zeros instead of random bytes (compressible: results may flatter).",
    },
    OptionDef {
        name: "refill_buffers",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("0"),
        help: "Fill the buffer with new random bytes before every write \
               (default: random once, each block stamped unique).",
    },
    OptionDef {
        name: "buffer_pattern",
        aliases: &[],
        kind: Kind::Spec("0x and hex digits, a quoted string, or a decimal number"),
        default: None,
        help: "Write this pattern, repeated, instead of random bytes (compressible and \
               dedupable: the report warns).",
    },
    OptionDef {
        name: "buffer_compress_percentage",
        aliases: &[],
        kind: Kind::Int { min: 0, max: 100 },
        default: Some("0"),
        help: "Make the random data this compressible: that share of each \
               buffer_compress_chunk is zeros (the report says so and warns).",
    },
    OptionDef {
        name: "buffer_compress_chunk",
        aliases: &[],
        kind: Kind::Size,
        default: Some("512"),
        help: "The chunk buffer_compress_percentage shapes (random bytes, then zeros).",
    },
    OptionDef {
        name: "dedupe_percentage",
        aliases: &[],
        kind: Kind::Int { min: 0, max: 100 },
        default: Some("0"),
        help: "This share of writes repeats earlier data exactly (the same writes each run), \
               for deduplicating storage; the report warns.",
    },
    OptionDef {
        name: "dedupe_mode",
        aliases: &[],
        kind: Kind::Choice(&["repeat", "working_set"]),
        default: Some("repeat"),
        help: "Which data a repeating write (dedupe_percentage) repeats: the first write's \
               (repeat), or one of a working set of unique writes (working_set), as a real \
               data set's duplicates spread.",
    },
    OptionDef {
        name: "dedupe_working_set_percentage",
        aliases: &[],
        kind: Kind::Int { min: 0, max: 100 },
        default: Some("5"),
        help: "dedupe_mode=working_set: the working set's share of the job's size.",
    },
    OptionDef {
        name: "dedupe_global",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("0"),
        help: "dedupe_mode=working_set: the jobs with this set share their working sets, so \
               one job's writes repeat others' data (across files).",
    },
    OptionDef {
        name: "scramble_buffers",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("1"),
        help: "Stamp every write unique (8 bytes per 512-byte sector), so no two blocks are \
               alike; 0 writes the same random data every time (dedupable; the report warns).",
    },
    OptionDef {
        name: "verify",
        aliases: &[],
        kind: Kind::Spec(
            "0, crc32c, crc32c-intel, crc64, md5, sha1, sha256, xxhash, meta, null, pattern, \
             pattern_hdr",
        ),
        default: Some("0"),
        help: "Check that what the job wrote comes back: every block carries a header (offset, \
               run, job, write number, generation, time written) and this checksum of its \
               data; after the job, every block it wrote is read back (the cache dropped \
               first) and checked, as a phase of its own. Finds bit flips, lost and stale \
               writes, misdirected and torn writes and another run's data, naming file, \
               offset and what was found (exit 1). meta: the header only; null: read back, \
               check nothing; pattern: no header, every byte verify_pattern's; pattern_hdr: \
               the header, and verify_pattern between it and the block's trailer.",
    },
    OptionDef {
        name: "verify_pattern",
        aliases: &[],
        kind: Kind::Spec("pieces: 0x and hex digits, quoted strings, decimal numbers, %o"),
        default: None,
        help: "Write this pattern, repeated from each write's start, as the data (the header \
               still leads each block unless verify=pattern, which checks the pattern alone). \
               Pieces follow one another as in fio (\"abcd\"-120xdeadface); %o is 8 bytes \
               holding the write's offset.",
    },
    OptionDef {
        name: "verify_pattern_interval",
        aliases: &[],
        kind: Kind::Size,
        default: Some("0"),
        help: "Start verify_pattern again every this many bytes of each write (newer fio's), its \
               %o pieces holding where each restart is; 0: once per write.",
    },
    OptionDef {
        name: "verify_interval",
        aliases: &[],
        kind: Kind::Size,
        default: None,
        help: "Bytes per verified block, each with its own header (default: the block size; \
               at least 512, and a divisor of every I/O size).",
    },
    OptionDef {
        name: "verify_offset",
        aliases: &[],
        kind: Kind::Size,
        default: Some("0"),
        help: "Swap the block's header with the data this many bytes into the block before \
               writing, and back before checking (fio's option; 0: the header leads). At least \
               the header's 104 bytes, and the header must end before the block's 16-byte \
               trailer.",
    },
    OptionDef {
        name: "do_verify",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("1"),
        help: "Run the verify phase after the job (with verify=); 0: write the headers only, \
               to check later with verify_only.",
    },
    OptionDef {
        name: "verify_only",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("0"),
        help: "Write nothing: read the job's region back and check the headers an earlier run \
               wrote there (kept with --keep): checksum, offset, torn writes. Files must exist.",
    },
    OptionDef {
        name: "verify_fatal",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("0"),
        help: "Stop verifying at the first bad block (default: check every block, report the \
               first ones and the count).",
    },
    OptionDef {
        name: "verify_dump",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("0"),
        help: "Write each bad block kept to FILE.OFFSET.received next to the file, and the \
               block as written to FILE.OFFSET.expected where it can be made again (a bit \
               flip's), for a closer look; existing files iogauge did not write are left \
               alone.",
    },
    OptionDef {
        name: "verify_state_save",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("0"),
        help: "Journal, in NAME-CLONE-verify.state in the current directory, which write of \
               each block was acknowledged durable (after its fsync/fdatasync/syncfs, or at \
               once with sync=dsync/sync), each entry made durable itself before the job goes \
               on: after a crash or power cut, verify_only=1 with verify_state_load=1 names \
               exactly the durable writes that were lost. The journal's writes and flushes \
               are inside the measured time (a crash test, not a benchmark). Default 0 \
               (fio's is 1, for its own state on abnormal exit).",
    },
    OptionDef {
        name: "verify_state_load",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("0"),
        help: "With verify_only=1: read NAME-CLONE-verify.state and check the blocks it says \
               were durable, each against the write it names (that write or a later one of \
               the same run must be there).",
    },
    OptionDef {
        name: "verify_backlog",
        aliases: &[],
        kind: Kind::Int {
            min: 0,
            max: u32::MAX as u64,
        },
        default: Some("0"),
        help: "Every N writes, pause and read them back and check them (found early, not only \
               after the job); the job's figures include the pauses, not the reads. The full \
               check after the job still runs.",
    },
    OptionDef {
        name: "verify_backlog_batch",
        aliases: &[],
        kind: Kind::Int {
            min: 1,
            max: u32::MAX as u64,
        },
        default: None,
        help: "How many of those writes each pause reads back (default: verify_backlog; the \
               others are left to the check after the job).",
    },
    OptionDef {
        name: "verify_async",
        aliases: &[],
        kind: Kind::Int { min: 0, max: 1024 },
        default: Some("0"),
        help: "Threads that read back and check the blocks after the job (0: one per CPU, \
               shared among the group's verifying jobs). Checks during the job (verify_backlog, \
               a verifying reader) stay in the job's thread, inside its figures.",
    },
];

/// Options that may be given without a value, though not booleans: fio's log names, which
/// default to the job's name.
pub const VALUE_OPTIONAL: &[&str] = &["write_bw_log", "write_iops_log", "write_lat_log"];

/// What iogauge does with a fio option that is not in [`OPTIONS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FioOnly {
    /// It changes only fio's own bookkeeping or report layout, not the I/O: accepted, and
    /// named once per run as ignored.
    Ignored(&'static str),
    /// It changes the I/O in a way iogauge does not reproduce: an error, with the reason.
    Rejected(&'static str),
    /// Accepted (and named as ignored) only with fio's default value, which is what iogauge
    /// does; any other value is refused with the reason.
    DefaultOnly(&'static str, &'static str),
}

const NOT_MEASURED: &str = "changes only fio's own latency/bandwidth bookkeeping";
const REPORT_ONLY: &str = "changes only the layout of fio's report";

/// fio options iogauge knows of but does not take as workload options.
pub static FIO_ONLY: &[(&[&str], FioOnly)] = &[
    (
        &["thread", "threads"],
        FioOnly::Ignored("iogauge always runs jobs as threads"),
    ),
    (
        &["description"],
        FioOnly::Ignored("a comment for fio's output"),
    ),
    (
        &["rwmixcycle"],
        FioOnly::Ignored("deprecated in fio, which ignores it too"),
    ),
    (
        &["disk_util"],
        FioOnly::Ignored(
            "iogauge always reads the devices' counters below the files (the report's device \
             lines and fio's disk_util)",
        ),
    ),
    (
        &["bwavgtime", "iopsavgtime"],
        FioOnly::DefaultOnly(
            "500",
            "the bandwidth and IOPS samples of the report are over log_avg_msec windows, \
             500 ms unless given",
        ),
    ),
    (
        &[
            "gtod_reduce",
            "disable_lat",
            "disable_clat",
            "disable_slat",
            "disable_bw_measurement",
            "disable_bw",
            "gtod_cpu",
        ],
        FioOnly::Ignored(NOT_MEASURED),
    ),
    (
        &[
            "percentile_list",
            "unit_base",
            "stats",
            "log_max_value",
            "log_unix_epoch",
            "block_error_percentiles",
        ],
        FioOnly::Ignored(REPORT_ONLY),
    ),
    (
        &["log_compression"],
        FioOnly::Ignored(
            "fio compresses its logs in memory as they grow; iogauge keeps each I/O of a \
             per-I/O log as a 48-byte record and writes the text as the run ends \
             (log_store_compressed=1 writes it compressed)",
        ),
    ),
    (
        &["mem", "iomem"],
        FioOnly::Ignored("iogauge's buffers are always page-aligned heap memory"),
    ),
    (
        &["create_on_open", "openfiles"],
        FioOnly::Ignored(
            "iogauge creates and lays out every file before its group starts, and keeps them \
             open",
        ),
    ),
    (
        &["io_submit_mode"],
        FioOnly::Ignored(
            "iogauge submits from the job's own thread (io_submit_mode=offload's hand-off to \
             a submitting thread is not reproduced: the I/O is the same, its latency lacks \
             the hand-off)",
        ),
    ),
    (
        &["nonvectored"],
        FioOnly::Ignored(
            "io_uring: iogauge uses READ/WRITE for one buffer, READV/WRITEV for several",
        ),
    ),
    (
        &["verifysort", "experimental_verify"],
        FioOnly::Ignored(
            "how fio orders and replays its verify reads; iogauge keeps a map per block and \
             reads the written blocks back in file order",
        ),
    ),
    (
        &["trim_percentage"],
        FioOnly::Rejected(
            "verify's trims (trimming some verified blocks and checking they read back \
             zeroed) are not done; rw=trim, randtrim and the trimwrites issue trims",
        ),
    ),
    (
        &["ioscheduler"],
        FioOnly::Rejected("iogauge does not run commands or change system settings"),
    ),
    (
        &["error_dump"],
        FioOnly::Ignored(
            "iogauge reports a job's first error and, with continue_on_error, how many it went \
             past",
        ),
    ),
    (
        &["lockmem"],
        FioOnly::Rejected("iogauge does not lock memory away from the page cache"),
    ),
    (
        &["zonecapacity", "max_open_zones", "read_beyond_wp"],
        FioOnly::Rejected(
            "zoned block devices (zonemode=zbd) are not supported; zonemode=strided is",
        ),
    ),
    (
        &["flow_watermark"],
        FioOnly::Ignored("deprecated in fio, which ignores it too"),
    ),
    (
        &["rate_ignore_thinktime"],
        FioOnly::Rejected("how the rate caps treat thinktime is not configurable"),
    ),
    (
        &["thinktime_spin", "thinktime_iotime"],
        FioOnly::Rejected("only plain thinktime (a sleep) is supported"),
    ),
    (
        &[
            "filename_format",
            "unique_filename",
            "file_append",
            "bs_unaligned",
            "bs_is_seq_rand",
            "rw_sequencer",
            "softrandommap",
            "random_distribution_hash",
        ],
        FioOnly::Rejected(
            "iogauge names files NAME.CLONE.N, aligns every I/O to the smallest block size and \
             rotates over files each I/O; this option changes that",
        ),
    ),
    (
        &["write_hist_log", "log_hist_msec", "log_hist_coarseness"],
        FioOnly::Rejected("histogram logs are not supported yet"),
    ),
    (
        &[
            "merge_blktrace_file",
            "merge_blktrace_scalars",
            "merge_blktrace_iters",
        ],
        FioOnly::Rejected(
            "blktrace traces are not replayed yet; read_iolog replays fio's I/O logs \
             (versions 2 and 3)",
        ),
    ),
    (
        &["read_iolog_chunked"],
        FioOnly::Ignored(
            "the log is read whole before the job starts (32 bytes an I/O), so it is \
             checked before anything is written",
        ),
    ),
];

/// The treatment of a fio option that is not an iogauge workload option.
pub fn fio_only(name: &str) -> Option<FioOnly> {
    let norm = name.replace('-', "_");
    FIO_ONLY
        .iter()
        .find(|(names, _)| names.contains(&norm.as_str()))
        .map(|(_, t)| *t)
}

/// Finds an option by name or alias. Dashes and underscores are interchangeable.
pub fn lookup(name: &str) -> Option<&'static OptionDef> {
    let norm = name.replace('-', "_");
    OPTIONS
        .iter()
        .find(|o| o.name == norm || o.aliases.contains(&norm.as_str()))
}

impl Kind {
    /// What a value of this kind looks like, for help text and error messages.
    pub fn describe(&self) -> String {
        match self {
            Kind::Size => "size (512, 4k, 1m, 10g)".into(),
            Kind::Seconds => "duration (30, 30s, 500ms, 5m)".into(),
            Kind::Bool => "bool (1/0)".into(),
            Kind::Int { min, max } => format!("integer {min}..{max}"),
            Kind::Choice(words) => words.join("|"),
            Kind::Text => "text".into(),
            Kind::Spec(s) => (*s).into(),
            Kind::Micros => "duration (100 = 100 us, 5ms, 1s)".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_aliases_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for o in OPTIONS {
            assert!(seen.insert(o.name), "{} twice", o.name);
            for a in o.aliases {
                assert!(seen.insert(a), "{a} twice");
            }
        }
    }

    #[test]
    fn fio_only_options_are_not_workload_options() {
        let mut seen = std::collections::HashSet::new();
        for (names, _) in FIO_ONLY {
            for n in *names {
                assert!(lookup(n).is_none(), "{n} is in both tables");
                assert!(seen.insert(n), "{n} twice");
            }
        }
        assert!(matches!(
            fio_only("trim_percentage"),
            Some(FioOnly::Rejected(_))
        ));
        assert!(fio_only("verify").is_none() && lookup("verify").is_some());
        assert!(matches!(fio_only("gtod-reduce"), Some(FioOnly::Ignored(_))));
    }

    #[test]
    fn lookup_accepts_dashes_and_aliases() {
        assert_eq!(lookup("time-based").unwrap().name, "time_based");
        assert_eq!(lookup("blocksize").unwrap().name, "bs");
        assert!(lookup("nosuch").is_none());
    }
}
