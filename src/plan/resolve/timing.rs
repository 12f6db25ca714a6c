//! When a job runs and for how long: runtime and numjobs, start delays, wait_for, rate caps,
//! thinktime, and fio's steady state.

use std::time::Duration;

use super::Earlier;
use super::values::Values;
use crate::plan::job::*;
use crate::plan::value;
use crate::plan::{Plan, SpecError};

/// fio's steady state: `ss_dur` above 0 turns it on.
pub(super) fn steady_state(
    v: &Values<'_>,
    timing: &Timing,
    w: &mut Vec<String>,
) -> Result<Option<crate::plan::SteadyState>, SpecError> {
    let dur = v.seconds("steadystate_duration")?.unwrap_or_default();
    let ramp = v.seconds("steadystate_ramp_time")?.unwrap_or_default();
    let interval = v
        .seconds("steadystate_check_interval")?
        .unwrap_or(Duration::from_secs(1));
    let text = v
        .text("steadystate")
        .map_or_else(|| "iops_slope:0.01%".to_string(), |(t, _)| t);
    let (name, limit) = text.split_once(':').ok_or_else(|| {
        v.error(
            "steadystate",
            format!(
                "{text}: expected CRITERION:LIMIT ({}; iops_slope:0.1%, bw:5%)",
                crate::plan::SteadyCriterion::ACCEPTED
            ),
        )
    })?;
    let criterion = crate::plan::SteadyCriterion::parse(name.trim()).ok_or_else(|| {
        v.error(
            "steadystate",
            format!(
                "{name}: expected {} before the ':'",
                crate::plan::SteadyCriterion::ACCEPTED
            ),
        )
    })?;
    let limit = limit.trim();
    let (number, pct) = match limit.strip_suffix('%') {
        Some(n) => (n.trim(), true),
        None => (limit, false),
    };
    let limit = match number.parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => x,
        // fio takes a latency limit as a time.
        _ if criterion == crate::plan::SteadyCriterion::Lat && !pct => {
            crate::plan::value::parse_duration(number, Duration::from_micros(1))
                .map(|d| d.as_nanos() as f64)
                .map_err(|acc| v.error("steadystate", format!("{number}: expected {acc}")))?
        }
        _ => {
            return Err(v.error(
                "steadystate",
                format!("{limit}: expected a limit of 0 or more, absolute or in % (0.1%)"),
            ));
        }
    };
    if dur.is_zero() {
        for o in [
            "steadystate",
            "steadystate_ramp_time",
            "steadystate_check_interval",
        ] {
            if v.given(o) {
                w.push(format!(
                    "{o}: has no effect without steadystate_duration (ss_dur), as in fio"
                ));
            }
        }
        return Ok(None);
    }
    if interval.is_zero() || interval.as_millis() == 0 {
        return Err(v.error(
            "steadystate_check_interval",
            "expected an interval of 1 ms or more".into(),
        ));
    }
    let n = dur.as_millis() / interval.as_millis();
    if n < 2 || dur.as_millis() % interval.as_millis() != 0 {
        return Err(v.error(
            "steadystate_duration",
            format!(
                "{} s with ss_interval {} s: expected a multiple of the interval, at least twice \
                 it (the window needs two samples or more)",
                dur.as_secs_f64(),
                interval.as_secs_f64()
            ),
        ));
    }
    if !timing.time_based && timing.loops <= 1 {
        w.push(
            "steadystate: the job stops at the end of its size if steady state comes later; \
             fio's advice is time_based with a runtime (or loops)"
                .into(),
        );
    }
    Ok(Some(crate::plan::SteadyState {
        criterion,
        limit,
        pct,
        dur,
        ramp,
        interval,
    }))
}

/// How long a job runs, and how many copies of it (`numjobs`). time_based without a runtime
/// is refused on the command line; in a job file it is dropped with a warning, as fio drops
/// it (its error message, then the run), so fio's files run as fio runs them.
pub(super) fn timing(v: &Values<'_>, w: &mut Vec<String>) -> Result<(Timing, u32), SpecError> {
    let runtime = v.seconds("runtime")?;
    let mut time_based = v.bool("time_based")?;
    let from_file = v
        .map
        .get("time_based")
        .is_some_and(|(_, e)| matches!(e.origin, crate::plan::Origin::File { .. }));
    if time_based && runtime.is_none() && !from_file {
        return Err(v.error("time_based", "needs --runtime (how long to run)".into()));
    }
    if time_based && runtime.is_none() {
        w.push(
            "time_based is ignored without runtime (as fio ignores it): the job ends when its \
             size is done"
                .into(),
        );
        time_based = false;
    }
    if runtime.is_some_and(|r| r.is_zero()) {
        return Err(v.error("runtime", "expected a duration above 0".into()));
    }
    let timing = Timing {
        runtime,
        time_based,
        ramp: v.seconds("ramp_time")?.unwrap_or_default(),
        loops: v.int("loops")?.unwrap_or(1) as u32,
        clock: match v.choice_opt("clocksource")?.as_deref() {
            Some("cpu") => ClockSource::Cpu,
            Some(_) => ClockSource::Monotonic,
            None => ClockSource::Auto,
        },
    };
    // The option table caps numjobs at MAX_JOBS.
    Ok((timing, v.int("numjobs")?.unwrap_or(1) as u32))
}

/// One clock times the whole run: jobs that name different clocks are refused.
pub(super) fn one_clock(plan: &Plan) -> Result<(), SpecError> {
    let mut jobs = plan.groups.iter().flat_map(|g| &g.jobs);
    let asked = |j: &&JobSpec| j.timing.clock != ClockSource::Auto;
    let Some(first) = jobs.clone().find(asked) else {
        return Ok(());
    };
    match jobs.find(|j| asked(j) && j.timing.clock != first.timing.clock) {
        None => Ok(()),
        Some(other) => Err(SpecError {
            option: "clocksource".into(),
            value: other.options.get("clocksource").cloned(),
            message: format!(
                "job {} asks for another clock than job {} ({}): one clock times the whole \
                 run, so every job that names one must name the same",
                other.name,
                first.name,
                first.options.get("clocksource").map_or("?", String::as_str)
            ),
            origin: other
                .origins
                .get("clocksource")
                .cloned()
                .unwrap_or(crate::plan::Origin::Cli),
        }),
    }
}

/// When a job starts and how fast it may go: start delay (the range each clone draws from,
/// returned apart), wait_for, rate caps, thinktime.
pub(super) type DelayRange = (Duration, Duration);

pub(super) fn pacing(
    v: &Values<'_>,
    name: &str,
    earlier: &Earlier,
) -> Result<(Pacing, DelayRange), SpecError> {
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
            if !earlier.contains_key(w.as_str()) {
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
    // Bytes (`rate`, `ratemin`) or I/Os (`rate_iops`, `rate_iops_min`) per second, per
    // direction; 0 where not given.
    let per_second = |name: &'static str, bytes: bool| -> Result<[u64; 3], SpecError> {
        let Some((t, _)) = v.text(name) else {
            return Ok([0; 3]);
        };
        let unit = if bytes { "bytes" } else { "I/Os" };
        value::per_direction(&t, 0, |p| match bytes {
            true => value::parse_size_base(p, kb).map(|s| s.bytes),
            false => value::parse_int(p, 0, u64::MAX),
        })
        .map_err(|acc| v.error(name, format!("expected {acc} ({unit} per second)")))
    };
    let (rate_bps, rate_iops) = (per_second("rate", true)?, per_second("rate_iops", false)?);
    let rate_min_bps = per_second("ratemin", true)?;
    let rate_min_iops = per_second("rate_iops_min", false)?;
    let rate_cycle = Duration::from_millis(v.int("ratecycle")?.unwrap_or(1000));
    let rate_poisson = v.choice("rate_process")? == "poisson";
    if rate_poisson && rate_bps == [0; 3] && rate_iops == [0; 3] {
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
    let pacing = Pacing {
        startdelay: Duration::ZERO,
        wait_for,
        rate_bps,
        rate_iops,
        rate_poisson,
        rate_min_bps,
        rate_min_iops,
        rate_cycle,
        thinktime,
        thinktime_blocks: v.int("thinktime_blocks")?.unwrap_or(1) as u32,
        flow: flow(v)?,
        latency: latency_target(v)?,
        max_latency: v
            .parsed("max_latency", |t| {
                value::per_direction(t, Duration::ZERO, |p| {
                    value::parse_duration(p, Duration::from_micros(1))
                })
            })?
            .unwrap_or_default(),
    };
    Ok((pacing, startdelay))
}

/// fio's latency target and its window, percentile and `latency_run`; the others are refused
/// without a target (they would do nothing).
fn latency_target(v: &Values<'_>) -> Result<Option<LatencyTarget>, SpecError> {
    let micros = |name| {
        v.parsed(name, |t| value::parse_duration(t, Duration::from_micros(1)))
            .map(Option::unwrap_or_default)
    };
    let target = micros("latency_target")?;
    let window = micros("latency_window")?;
    let percentile = v
        .parsed("latency_percentile", |t| {
            t.trim()
                .trim_end_matches('%')
                .parse::<f64>()
                .ok()
                .filter(|p| (0.0..=100.0).contains(p))
                .ok_or(value::ValueError::Syntax("a percentage from 0 to 100"))
        })?
        .unwrap_or(100.0);
    let run = v.bool("latency_run")?;
    if target.is_zero() {
        let given = ["latency_window", "latency_percentile", "latency_run"]
            .into_iter()
            .find(|o| v.given(o));
        if let Some(o) = given {
            return Err(v.error(o, "needs latency_target (the latency searched for)".into()));
        }
        return Ok(None);
    }
    Ok(Some(LatencyTarget {
        target,
        window,
        percentile,
        run,
    }))
}

/// fio's flow control: a weight above 0 puts the job in flow `flow_id`.
fn flow(v: &Values<'_>) -> Result<Option<FlowSpec>, SpecError> {
    let id = v.int("flow_id")?.unwrap_or(0) as u32;
    let sleep = Duration::from_micros(v.int("flow_sleep")?.unwrap_or(0));
    Ok(match v.int("flow")?.unwrap_or(0) as u32 {
        0 => None,
        weight => Some(FlowSpec { id, weight, sleep }),
    })
}
