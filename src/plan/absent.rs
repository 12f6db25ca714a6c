//! fio's engines iogauge does not have, and why: the one line a job naming one gets, so a
//! job file is never run on another engine than the one it names. Engines that need
//! hardware or a service this machine may lack say what; fio's local engines not built yet
//! say that. `--parse-only` checks a job naming one of fio's hardware engines as fio's does
//! ([`set_aside`]): its options, not whether it can run here.

use super::Section;
use super::options::{self, ENGINES};

/// One of fio's engines that needs hardware, a service or a library beyond the kernel's
/// system calls: its names, what it needs, and its own options (fio 3.33's), which a job
/// naming it may set.
struct Foreign {
    engines: &'static [&'static str],
    needs: &'static str,
    options: &'static [&'static str],
}

/// io_uring's options, which fio's io_uring_cmd takes too (with `cmd_type`).
const URING_OPTIONS: &[&str] = &[
    "hipri",
    "cmdprio_percentage",
    "cmdprio_class",
    "cmdprio",
    "cmdprio_bssplit",
    "fixedbufs",
    "registerfiles",
    "sqthread_poll",
    "sqthread_poll_cpu",
    "nonvectored",
    "uncached",
    "nowait",
    "force_async",
    "cmd_type",
];

const fn foreign(
    engines: &'static [&'static str],
    needs: &'static str,
    options: &'static [&'static str],
) -> Foreign {
    Foreign {
        engines,
        needs,
        options,
    }
}

const NEEDS: &[Foreign] = &[
    foreign(
        &["rdma"],
        "an RDMA network card (InfiniBand or RoCE) and a peer running fio's rdma server",
        &["hostname", "bindname", "port", "verb"],
    ),
    foreign(
        &[
            "librpma_apm_client",
            "librpma_apm_server",
            "librpma_gpspm_client",
            "librpma_gpspm_server",
        ],
        "an RDMA network card, persistent memory and librpma",
        &[
            "serverip",
            "port",
            "direct_write_to_pmem",
            "busy_wait_polling",
        ],
    ),
    foreign(
        &["http"],
        "an HTTP, S3 or Swift object store",
        &[
            "https",
            "http_host",
            "http_user",
            "http_pass",
            "http_s3_key",
            "http_s3_keyid",
            "http_swift_auth_token",
            "http_s3_region",
            "http_s3_sse_customer_key",
            "http_s3_sse_customer_algorithm",
            "http_s3_storage_class",
            "http_mode",
            "http_verbose",
        ],
    ),
    foreign(
        &["sg"],
        "a SCSI generic device (/dev/sg*, /dev/bsg/*)",
        &["hipri", "readfua", "writefua", "sg_write_mode", "stream_id"],
    ),
    foreign(
        &["libzbc"],
        "a zoned block device (SMR or ZNS) and libzbc",
        &[],
    ),
    foreign(
        &["libcufile"],
        "an NVIDIA GPU with GPUDirect Storage (cuFile)",
        &["gpu_dev_ids", "cuda_io"],
    ),
    foreign(
        &["io_uring_cmd"],
        "an NVMe generic character device (/dev/ng*) for passthrough commands",
        URING_OPTIONS,
    ),
    foreign(
        &["xnvme"],
        "an NVMe device and the xNVMe library",
        &[
            "hipri",
            "sqthread_poll",
            "xnvme_be",
            "xnvme_async",
            "xnvme_sync",
            "xnvme_admin",
            "xnvme_dev_nsid",
            "xnvme_iovec",
        ],
    ),
    foreign(
        &["spdk", "spdk_bdev"],
        "SPDK and a device detached from the kernel",
        &[],
    ),
    foreign(
        &["ime_psync", "ime_psyncv", "ime_aio"],
        "DDN's IME burst-buffer client",
        &[],
    ),
    foreign(
        &["rbd"],
        "a Ceph cluster (librbd, librados)",
        &["clustername", "rbdname", "pool", "clientname", "busy_poll"],
    ),
    foreign(
        &["rados"],
        "a Ceph cluster (librbd, librados)",
        &[
            "clustername",
            "pool",
            "clientname",
            "conf",
            "busy_poll",
            "touch_objects",
        ],
    ),
    foreign(
        &["pmemblk", "libpmem", "dev-dax"],
        "persistent memory (PMEM, DAX) and PMDK",
        &[],
    ),
    foreign(
        &["nfs"],
        "an NFS server reached through libnfs",
        &["nfs_url"],
    ),
    foreign(&["nbd"], "an NBD server reached through libnbd", &["uri"]),
    foreign(&["mtd"], "a raw flash MTD device", &["skip_bad"]),
    foreign(
        &["libiscsi"],
        "an iSCSI target reached through libiscsi",
        &["initiator"],
    ),
    foreign(
        &["libhdfs"],
        "a Hadoop HDFS cluster",
        &[
            "namenode",
            "hostname",
            "port",
            "hdfsdirectory",
            "chunk_size",
            "single_instance",
            "hdfs_use_direct",
        ],
    ),
    foreign(
        &["gfapi", "gfapi_async"],
        "a GlusterFS volume (libgfapi)",
        &["volume", "brick"],
    ),
    foreign(
        &["dfs"],
        "a DAOS storage system",
        &["pool", "cont", "chunk_size", "object_class", "svcl"],
    ),
    foreign(
        &["cpp_null"],
        "fio's C++ example engine, built with fio",
        &[],
    ),
    foreign(
        &["external"],
        "a fio engine plugin (a shared object built for fio)",
        &[],
    ),
    foreign(&["solarisaio"], "Solaris", &[]),
];

fn find(engine: &str) -> Option<&'static Foreign> {
    NEEDS.iter().find(|f| f.engines.contains(&engine))
}

/// fio's engines on the kernel's own calls that iogauge has not built yet.
const LOCAL: &[&str] = &["guasi", "binject"];

/// Why `engine` (not one of iogauge's) is refused: what it needs, or that iogauge has not
/// built it, and the engines iogauge has.
pub fn why(engine: &str) -> String {
    let have = ENGINES.join(", ");
    if let Some(f) = find(engine) {
        return format!(
            "not supported: fio's {engine} engine needs {}; fio runs it, iogauge does not \
             (iogauge's engines: {have})",
            f.needs
        );
    }
    if LOCAL.contains(&engine) {
        return format!(
            "not supported yet: fio's {engine} engine is not built in iogauge (its engines: \
             {have})"
        );
    }
    format!("iogauge has no such engine, nor has fio; it has {have}")
}

/// A job `--parse-only` checked but iogauge cannot run: its name, what it asks for that
/// iogauge has not (`ioengine=rbd`, `zonemode=zbd`) and what that needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Elsewhere {
    pub job: String,
    pub asks: String,
    pub needs: &'static str,
}

impl Elsewhere {
    /// The plan's line for it; `clones`: how the plan counts its clones (" (x16)", or "").
    pub fn line(&self, clones: &str) -> String {
        format!(
            "{}{clones}: {} (fio's; needs {}): its options are fio's, and iogauge does not run \
             it",
            self.job, self.asks, self.needs
        )
    }
}

/// The engine a job set aside is checked as: this build's queued engine.
const STAND_IN: &str = crate::engine::platform::QUEUED_ENGINE;

/// What an engine of iogauge's that another system's build has needs: that system.
fn other_system(engine: &str) -> Option<&'static str> {
    let kind = crate::engine::Kind::from_name(engine)?;
    if crate::engine::platform::has(kind) {
        return None;
    }
    Some(
        match crate::engine::platform::WINDOWS_KINDS.contains(&kind) {
            true => "Windows (iogauge's Windows build runs it; this one is for Linux)",
            false => "Linux (iogauge's Linux build runs it; this one is for Windows)",
        },
    )
}

/// What zonemode=zbd needs.
const ZONED: &str = "a zoned block device (SMR or ZNS) with its write pointers";

/// The last value `section` gives the option `name` (by canonical name).
fn last_value(section: &Section, name: &str) -> Option<String> {
    section
        .entries
        .iter()
        .rev()
        .find(|e| options::lookup(&e.key).is_some_and(|d| d.name == name))
        .and_then(|e| e.value.as_deref())
        .map(|v| v.trim().to_string())
}

/// For `--parse-only`, which checks a job file as fio's does (the options, not the machine):
/// the sections that name one of fio's engines for hardware iogauge has no engine for, or
/// fio's zoned-device mode, are set aside, each replaced by the section resolving it checks:
/// its options must be iogauge's (checked as an io_uring job's would be, in its place among the
/// others, so `wait_for` and groups still hold), that engine's own (checked by name: their
/// values are the engine's business), or fio's options iogauge knows and does not run (the
/// job is not run here anyway).
pub fn set_aside(sections: &[Section]) -> (Vec<Section>, Vec<Elsewhere>) {
    let (mut checked, mut aside) = (Vec::new(), Vec::new());
    for s in sections {
        let engine = last_value(s, "ioengine").map(|e| e.to_ascii_lowercase());
        let zoned = last_value(s, "zonemode").is_some_and(|z| z.eq_ignore_ascii_case("zbd"));
        let elsewhere = engine.as_deref().and_then(other_system);
        let (asks, needs, own) = match engine.as_deref().and_then(find) {
            Some(f) => (
                format!("ioengine={}", engine.unwrap_or_default()),
                f.needs,
                f.options,
            ),
            None if elsewhere.is_some() => (
                format!("ioengine={}", engine.unwrap_or_default()),
                elsewhere.unwrap_or_default(),
                &[][..],
            ),
            None if zoned => ("zonemode=zbd".to_string(), ZONED, &[][..]),
            None => {
                checked.push(s.clone());
                continue;
            }
        };
        let keep = |e: &&crate::plan::Entry| {
            let key = e.key.replace('-', "_");
            let def = options::lookup(&key);
            let zone = def.is_some_and(|d| d.name.starts_with("zone"));
            let engine = def.is_some_and(|d| d.name == "ioengine");
            let not_run = matches!(options::fio_only(&key), Some(options::FioOnly::Rejected(_)));
            let drop = own.contains(&key.as_str()) || engine || not_run || (zone && zoned);
            !drop
        };
        let mut generic = Section::new(s.name.clone());
        generic.entries = s.entries.iter().filter(keep).cloned().collect();
        // Checked as a queued engine's job: like fio's hardware engines, it takes iodepth.
        generic.set("ioengine", STAND_IN, crate::plan::Origin::Cli);
        checked.push(generic);
        // Named as the job will be (`name=`, else the section's name).
        let job = last_value(s, "name").unwrap_or_else(|| s.name.clone());
        aside.push(Elsewhere { job, asks, needs });
    }
    (checked, aside)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_refusal_says_why_in_one_line() {
        let rdma = why("rdma");
        assert!(rdma.contains("needs an RDMA network card") && rdma.contains("fio runs it"));
        assert!(why("guasi").starts_with("not supported yet: fio's guasi engine"));
        assert!(why("ioengine-typo").contains("no such engine"));
        for f in NEEDS {
            for n in f.engines {
                assert!(!ENGINES.contains(n) && !LOCAL.contains(n), "{n}");
                assert!(!why(n).contains('\n'));
            }
        }
        for n in LOCAL {
            assert!(!ENGINES.contains(n), "{n} is built: take it off the list");
        }
    }

    fn section(lines: &[(&str, &str)]) -> Section {
        let mut s = Section::new("j");
        for (k, v) in lines {
            s.set(k, v, crate::plan::Origin::Cli);
        }
        s
    }

    #[test]
    fn parse_only_checks_a_hardware_engines_options_and_sets_the_job_aside() {
        let rbd = section(&[
            ("ioengine", "rbd"),
            ("pool", "p"),
            ("rbdname", "r"),
            ("bs", "4k"),
        ]);
        let plain = section(&[("rw", "read"), ("size", "1m")]);
        let (checked, aside) = set_aside(&[plain.clone(), rbd]);
        assert_eq!(checked.len(), 2);
        assert_eq!(checked[0].entries.len(), plain.entries.len());
        assert_eq!(aside.len(), 1);
        assert_eq!(aside[0].asks, "ioengine=rbd");
        assert!(aside[0].line("").contains("needs a Ceph cluster"));
        // The engine's own options are gone from what is resolved; the others stay.
        let keys: Vec<&str> = checked[1].entries.iter().map(|e| e.key.as_str()).collect();
        assert_eq!(keys, ["bs", "ioengine"]);
        assert!(crate::plan::resolve(&checked, false).is_ok());
        // Another engine's option, or a typo, is still an error.
        for bad in [("rbdname", "x"), ("bogus", "1"), ("bs", "lots")] {
            let s = section(&[("ioengine", "rados"), bad]);
            let (checked, _) = set_aside(&[s]);
            assert!(crate::plan::resolve(&checked, false).is_err(), "{bad:?}");
        }
        // zonemode=zbd needs the zoned device, with its zone options.
        let zbd = section(&[
            ("zonemode", "zbd"),
            ("zonesize", "256m"),
            ("max_open_zones", "8"),
        ]);
        let (checked, aside) = set_aside(&[zbd]);
        assert_eq!(aside[0].asks, "zonemode=zbd");
        assert!(crate::plan::resolve(&checked, false).is_ok());
    }
}
