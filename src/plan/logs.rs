//! The fio-format logs a job writes (`write_bw_log`, `write_lat_log`, …) and their file
//! names.

/// The fio-format logs a job asked for (`write_bw_log=NAME` …) and how they are written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogSpec {
    pub bw: Option<String>,
    pub iops: Option<String>,
    pub lat: Option<String>,
    /// log_avg_msec=0 (fio's default): a line per I/O; else a line per window.
    pub per_io: bool,
    /// per_job_logs: NAME_bw.N.log per job (fio's default); else NAME_bw.log for all.
    pub per_job: bool,
    /// log_offset: each line carries the I/O's offset.
    pub offset: bool,
    /// log_prio: the last column is the I/O's ioprio value, not whether it was real-time.
    pub prio: bool,
    /// fio's I/O log (`write_iolog=FILE`): every I/O issued, replayable by fio.
    pub iolog: Option<String>,
    /// log_store_compressed: the bw/iops/lat logs written zlib-compressed (`.log.fz`).
    pub compressed: bool,
}

impl Default for LogSpec {
    fn default() -> LogSpec {
        LogSpec {
            bw: None,
            iops: None,
            lat: None,
            per_io: true,
            per_job: true,
            offset: false,
            prio: false,
            iolog: None,
            compressed: false,
        }
    }
}

impl LogSpec {
    pub fn any(&self) -> bool {
        self.bw.is_some() || self.iops.is_some() || self.lat.is_some()
    }

    /// The files job number `n` (from 1) writes, in fio's naming.
    pub fn files(&self, n: usize) -> Vec<String> {
        let mut v = Vec::new();
        if let Some(b) = &self.bw {
            v.push(self.file_name(b, "bw", n));
        }
        if let Some(b) = &self.iops {
            v.push(self.file_name(b, "iops", n));
        }
        if let Some(b) = &self.lat {
            for kind in ["lat", "clat", "slat"] {
                v.push(self.file_name(b, kind, n));
            }
        }
        v.extend(self.iolog.clone());
        v
    }

    /// fio's name for log `kind` (bw, iops, lat, clat, slat) of job `n` (from 1) under
    /// `prefix`: `PREFIX_KIND.N.log`, or with per_job_logs=0 `PREFIX_KIND.log`. The one place
    /// log files are named.
    pub fn file_name(&self, prefix: &str, kind: &str, n: usize) -> String {
        let fz = if self.compressed { ".fz" } else { "" };
        if self.per_job {
            format!("{prefix}_{kind}.{n}.log{fz}")
        } else {
            format!("{prefix}_{kind}.log{fz}")
        }
    }
}
