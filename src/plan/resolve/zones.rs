//! `zonemode=strided` (fio's): the region is cut into zones of `zonerange` bytes; a job does
//! `zonesize` bytes of I/O in one zone, skips `zoneskip` bytes past its end, and goes on in
//! the next, wrapping to the first at the end of the region.

use super::values::Values;
use crate::plan::SpecError;
use crate::plan::job::{JobSpec, Zones};

/// The zones `zonemode` asks for, checked against the resolved job.
pub(super) fn zones(
    v: &Values<'_>,
    job: &JobSpec,
    w: &mut Vec<String>,
) -> Result<Option<Zones>, SpecError> {
    let mode = v.choice("zonemode")?;
    let size = v.size("zonesize", w)?;
    let range = v.size("zonerange", w)?;
    let skip = v.size("zoneskip", w)?.unwrap_or(0);
    match mode.as_str() {
        "strided" => {}
        "zbd" => {
            return Err(v.error(
                "zonemode",
                "zbd (zoned block devices: write pointers, zone resets) is not supported; \
                 strided is"
                    .into(),
            ));
        }
        _ => {
            for o in ["zonesize", "zonerange", "zoneskip"] {
                if v.given(o) {
                    return Err(v.error(o, "needs zonemode=strided".into()));
                }
            }
            return Ok(None);
        }
    }
    let Some(size) = size.filter(|&s| s > 0) else {
        return Err(v.error(
            "zonemode",
            "strided needs zonesize (the bytes of I/O done in each zone)".into(),
        ));
    };
    // fio's default: a zone is as large as the I/O done in it.
    let range = range.unwrap_or(size);
    let xfer = job.xfer();
    for (name, bytes) in [("zonerange", range), ("zoneskip", skip)] {
        if bytes % xfer != 0 || (name == "zonerange" && bytes == 0) {
            return Err(v.error(
                name,
                format!(
                    "is {bytes} bytes: zones start on I/O boundaries, so it must be a \
                     multiple of bs x numpages ({xfer} bytes){}",
                    if name == "zonerange" { ", above 0" } else { "" }
                ),
            ));
        }
    }
    if !job.fixed_size() {
        return Err(v.error(
            "zonemode",
            "strided takes one I/O size (bs); bsrange and bssplit are not supported with it".into(),
        ));
    }
    if job.paths().len() > 1 {
        return Err(v.error(
            "zonemode",
            "strided works on one file per job here (fio keeps zones per file); give one \
             filename, nrfiles=1"
                .into(),
        ));
    }
    if !job.random.distribution.is_uniform() {
        return Err(v.error(
            "zonemode",
            "strided draws uniformly within each zone; random_distribution is not supported \
             with it"
                .into(),
        ));
    }
    if job.gap > 0 {
        return Err(v.error(
            "zonemode",
            "strided and a sequential gap (rw=read:GAP) both place each I/O; use one".into(),
        ));
    }
    Ok(Some(Zones { range, size, skip }))
}
