//! fio's engines iogauge does not have, and why: the one line a job naming one gets, so a
//! job file is never run on another engine than the one it names. Engines that need
//! hardware or a service this machine may lack say what; fio's local engines not built yet
//! say that.

use super::options::ENGINES;

/// fio's engines that need hardware, a service or a library beyond the kernel's system calls.
const NEEDS: &[(&[&str], &str)] = &[
    (
        &["rdma"],
        "an RDMA network card (InfiniBand or RoCE) and a peer running fio's rdma server",
    ),
    (
        &[
            "librpma_apm_client",
            "librpma_apm_server",
            "librpma_gpspm_client",
            "librpma_gpspm_server",
        ],
        "an RDMA network card, persistent memory and librpma",
    ),
    (&["http"], "an HTTP, S3 or Swift object store"),
    (&["sg"], "a SCSI generic device (/dev/sg*, /dev/bsg/*)"),
    (&["libzbc"], "a zoned block device (SMR or ZNS) and libzbc"),
    (
        &["libcufile"],
        "an NVIDIA GPU with GPUDirect Storage (cuFile)",
    ),
    (
        &["io_uring_cmd"],
        "an NVMe generic character device (/dev/ng*) for passthrough commands",
    ),
    (&["xnvme"], "an NVMe device and the xNVMe library"),
    (
        &["spdk", "spdk_bdev"],
        "SPDK and a device detached from the kernel",
    ),
    (
        &["ime_psync", "ime_psyncv", "ime_aio"],
        "DDN's IME burst-buffer client",
    ),
    (&["rbd", "rados"], "a Ceph cluster (librbd, librados)"),
    (
        &["pmemblk", "libpmem", "dev-dax"],
        "persistent memory (PMEM, DAX) and PMDK",
    ),
    (&["nfs"], "an NFS server reached through libnfs"),
    (&["nbd"], "an NBD server reached through libnbd"),
    (&["mtd"], "a raw flash MTD device"),
    (&["libiscsi"], "an iSCSI target reached through libiscsi"),
    (&["libhdfs"], "a Hadoop HDFS cluster"),
    (&["gfapi", "gfapi_async"], "a GlusterFS volume (libgfapi)"),
    (&["dfs"], "a DAOS storage system"),
    (&["cpp_null"], "fio's C++ example engine, built with fio"),
    (
        &["external"],
        "a fio engine plugin (a shared object built for fio)",
    ),
    (&["windowsaio"], "Windows (iogauge runs on Linux)"),
    (&["solarisaio"], "Solaris"),
];

/// fio's engines on the kernel's own calls that iogauge has not built yet.
const LOCAL: &[&str] = &["guasi", "binject"];

/// Why `engine` (not one of iogauge's) is refused: what it needs, or that iogauge has not
/// built it, and the engines iogauge has.
pub fn why(engine: &str) -> String {
    let have = ENGINES.join(", ");
    if let Some((_, needs)) = NEEDS.iter().find(|(names, _)| names.contains(&engine)) {
        return format!(
            "not supported: fio's {engine} engine needs {needs}; fio runs it, iogauge does not \
             (iogauge's engines: {have})"
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_refusal_says_why_in_one_line() {
        let rdma = why("rdma");
        assert!(rdma.contains("needs an RDMA network card") && rdma.contains("fio runs it"));
        assert!(why("guasi").starts_with("not supported yet: fio's guasi engine"));
        assert!(why("ioengine-typo").contains("no such engine"));
        for (names, _) in NEEDS {
            for n in *names {
                assert!(!ENGINES.contains(n) && !LOCAL.contains(n), "{n}");
                assert!(!why(n).contains('\n'));
            }
        }
        for n in LOCAL {
            assert!(!ENGINES.contains(n), "{n} is built: take it off the list");
        }
    }
}
