//! fio's dedupe working set as a job sets it: `dedupe_mode=working_set` makes a repeating
//! write (`dedupe_percentage`) repeat one of about `dedupe_working_set_percentage` of the
//! job's size in unique writes, not always the first write's data; `dedupe_global` shares the
//! working sets of every job that sets it, across the plan, so one job's writes repeat
//! another's data (across files, as a dedupe domain spanning volumes sees them).

use super::values::Values;
use crate::plan::job::*;
use crate::plan::{Plan, SpecError};

/// The job's working set (`data_shape.dedupe_set`), and whether it shares it (set to its
/// place among the sharing jobs by [`share`]).
pub(super) fn working_set(
    v: &Values<'_>,
    spec: &mut JobSpec,
    w: &mut Vec<String>,
) -> Result<(), SpecError> {
    let working = v.choice("dedupe_mode")? == "working_set";
    let pct = v.int("dedupe_working_set_percentage")?.unwrap_or(5);
    let global = v.bool("dedupe_global")?;
    if !working || spec.data_shape.dedupe_pct == 0 {
        if global || (v.given("dedupe_working_set_percentage") && !working) {
            w.push(format!(
                "job {}: dedupe_working_set_percentage and dedupe_global apply only with \
                 dedupe_mode=working_set and a dedupe_percentage: they change nothing here",
                spec.name
            ));
        }
        return Ok(());
    }
    let Some(size) = spec.size else {
        return Err(v.error(
            "dedupe_mode",
            "working_set needs size: the working set is a share of the job's size (fio's rule)"
                .into(),
        ));
    };
    let write = (spec.sizes[1].min() * u64::from(spec.numpages.max(1))).max(1);
    let before = super::verify::flattering(&spec.data_shape, spec.data);
    spec.data_shape.dedupe_set = (size.saturating_mul(pct) / 100 / write).max(1);
    if global {
        spec.data_shape.dedupe_share = Some((0, 1));
    }
    // The warning about the data says which data repeats.
    let after = super::verify::flattering(&spec.data_shape, spec.data);
    for x in w.iter_mut().filter(|x| **x == before) {
        x.clone_from(&after);
    }
    Ok(())
}

/// Every job of `plan` sharing its working set (`dedupe_global`) gets its place among them.
/// They must write alike — the same dedupe_percentage, working set, write size and data
/// shape — or one job's repeats would not be another's bytes: else an error naming the first
/// that differs.
pub(super) fn share(plan: &mut Plan) -> Result<(), SpecError> {
    let mut sharing: Vec<&mut JobSpec> = plan
        .groups
        .iter_mut()
        .flat_map(|g| g.jobs.iter_mut())
        .filter(|j| j.data_shape.dedupe_share.is_some())
        .collect();
    let n = sharing.len() as u32;
    let alike = |j: &JobSpec| {
        (
            j.data_shape.dedupe_pct,
            j.data_shape.dedupe_set,
            j.data_shape.compress_pct,
            j.data_shape.compress_chunk,
            j.sizes[1].clone(),
            j.numpages,
        )
    };
    if let Some(first) = sharing.first() {
        let want = alike(first);
        let first_name = first.name.clone();
        if let Some(odd) = sharing.iter().find(|j| alike(j) != want) {
            return Err(SpecError {
                option: "dedupe_global".into(),
                value: None,
                message: format!(
                    "job {} shares its dedupe working set with job {first_name} but writes \
                     otherwise (dedupe_percentage, dedupe_working_set_percentage with size, \
                     the write size or the compression differ): their repeated data could not \
                     match; give the sharing jobs the same",
                    odd.name
                ),
                origin: odd
                    .origins
                    .get("dedupe_global")
                    .cloned()
                    .unwrap_or(crate::plan::Origin::Cli),
            });
        }
    }
    for (i, j) in sharing.iter_mut().enumerate() {
        j.data_shape.dedupe_share = Some((i as u32, n));
    }
    Ok(())
}
