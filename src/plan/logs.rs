//! The fio-format interval logs a job writes (`write_bw_log`, `write_lat_log`, …) and
//! their file names.

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
            v.push(Self::file_name(b, "bw", n));
        }
        if let Some(b) = &self.iops {
            v.push(Self::file_name(b, "iops", n));
        }
        if let Some(b) = &self.lat {
            for kind in ["lat", "clat", "slat"] {
                v.push(Self::file_name(b, kind, n));
            }
        }
        v
    }

    /// fio's name for log `kind` (bw, iops, lat, clat, slat) of job `n` (from 1) under
    /// `prefix`: the one place log files are named.
    pub fn file_name(prefix: &str, kind: &str, n: usize) -> String {
        format!("{prefix}_{kind}.{n}.log")
    }
}
