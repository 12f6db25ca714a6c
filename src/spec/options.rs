//! THE option table: every workload option iogauge understands, by fio's name, with its
//! aliases, value type, default and help. The CLI builds its flags from this table, and job
//! files, profiles and the documentation read the same rows, so an option exists in exactly one
//! place. This module describes options; it does not parse values (see `value`) or combine them
//! into jobs (see `resolve`).

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
];

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
               block: SAS UPDATE/MODIFY, SASIOTEST -rw). A sequential pattern may end in \
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
        kind: Kind::Size,
        default: Some("4k"),
        help: "Bytes per I/O (at least 512).",
    },
    OptionDef {
        name: "size",
        aliases: &[],
        kind: Kind::Size,
        default: None,
        help: "Bytes each job transfers per pass, spread over its files. Default: the size of \
               an existing file or block device; required for new files.",
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
        help: "Byte offset in each file where the job's region starts.",
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
        kind: Kind::Choice(&["psync", "sync", "pvsync", "pvsync2", "io_uring", "null"]),
        default: Some("psync"),
        help: "How I/O is issued: psync (pread/pwrite), sync (lseek + read/write), \
               pvsync (preadv/pwritev over numpages buffers), pvsync2 (preadv2/pwritev2 with \
               per-call flags: hipri, nowait, sync=dsync as RWF_DSYNC), io_uring (iodepth I/Os \
               in flight), null (no I/O: measures iogauge's own overhead).",
    },
    OptionDef {
        name: "iodepth",
        aliases: &[],
        kind: Kind::Int { min: 1, max: 4096 },
        default: Some("1"),
        help: "I/Os kept in flight per job (io_uring). Synchronous engines always have one: \
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
        help: "io_uring, pvsync2: RWF_NOWAIT: an I/O that would block fails with EAGAIN \
               instead of waiting, which stops the job (as in fio).",
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
        help: "fsync the file after every N writes (0: never).",
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
               0: 500 ms windows (fio's bw_avg_time); iogauge never logs each I/O, so logs \
               asked for with 0 get 500 ms means and a warning.",
    },
    OptionDef {
        name: "norandommap",
        aliases: &[],
        kind: Kind::Bool,
        default: Some("0"),
        help: "Random offsets may repeat within a pass (default: every block exactly once).",
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
];

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
    fn lookup_accepts_dashes_and_aliases() {
        assert_eq!(lookup("time-based").unwrap().name, "time_based");
        assert_eq!(lookup("blocksize").unwrap().name, "bs");
        assert!(lookup("nosuch").is_none());
    }
}
