//! `iogauge predict`: how long a recorded program would run on other storage, from closed-loop
//! replays of its trace there, and how far to trust the answer.
//!
//! Each replay issues the program's calls on the target, each its recorded think time after
//! the call before it (and after the other threads' calls it waited for: `trace::order`,
//! `trace::anchor`), so its timeline is the program's with the target's I/O times. The
//! program's predicted end is read off it (`end`): the thread that finishes last, the
//! recorded time after its last call. From that the replay's own delays on the chain of
//! calls that decided the end are taken away (it issues late by a wake-up, which the program
//! did not), and the part of the capture's measured cost that the recorded think times still
//! hold. The prediction is the median over the replays; its bound is the sum of what is
//! uncertain, each part shown: the replays' spread, the capture's cost (its cost per call is
//! measured, not how it splits between the call and the think time around it, nor what the
//! caches it empties cost the program's work after the call: `CAPTURE_REACH`), and the time
//! the program waited on I/O the trace cannot see (io_uring, libaio), which the replay keeps
//! at its recorded length. Two more come from the scheduler's view of the recording: the
//! time the deciding thread waited for a CPU between its calls (the recording machine's
//! load, the recorder's own threads among it: half taken away, half in the bound), and the
//! calls that sleep on one storage and not the other, whose wake-ups cost the work after them
//! cold caches (`wake`).
//!
//! Pure: a function of the recording and what the replays measured.

mod asleep;
mod end;
mod figures;
#[cfg(test)]
mod tests;
mod wake;

use serde::Serialize;

pub use end::{End, ProgramEnd, program_end};
pub use figures::{FileFigures, PatternFigures, ThreadFigures};
pub use wake::Wakes;

use crate::stats::cold::ColdStart;

use crate::trace::recording::Recording;
use crate::trace::replayed::{ReplayReport, Timeline};

/// What one replay predicted.
#[derive(Debug, Clone, Serialize)]
pub struct ReplayPrediction {
    pub predicted_ns: u64,
    /// The program's end read off the replay, before the corrections below.
    pub replayed_end_ns: u64,
    /// The replay's own delays on the chain of calls that decided the end (taken away).
    pub replay_delay_ns: u64,
    /// The capture's cost still in the recorded think times on that chain (taken away:
    /// the middle of what it can be, less what the replay took out itself).
    pub capture_left_ns: u64,
    /// The capture's cost the replay took out of the think times on that chain itself, as
    /// the recording measured it (`Overhead::between_calls_ns`).
    pub capture_taken_ns: u64,
    /// Recorded calls on that chain.
    pub chain_calls: u64,
    /// Half the time the deciding thread waited for a CPU between its calls when recorded
    /// (taken away; the other half is in the bound). 0 where the replay split the think times
    /// (`think`): it left those waits out itself.
    pub preempted_left_ns: u64,
    /// What the replay made of the recorded think times, where the trace splits them: the
    /// computation replayed as CPU time, the recorded waits for a CPU left out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub think: Option<crate::trace::replayed::ThinkFigures>,
    /// Calls on that chain that sleep differently here, and what their wake-ups may move.
    pub wakes: Wakes,
    /// What the wake-ups moved the prediction by, ns (the middle of their range, never taking
    /// away more than the think time left).
    pub wake_shift_ns: i64,
    /// Time in the replayed calls, all threads.
    pub replayed_io_ns: u64,
    /// Calls whose result differed from the recorded one.
    pub results_differ: u64,
    /// Threads that polled for a file, and how many ended at an earlier look or a later
    /// turn here (`trace::poll`).
    pub polls: crate::trace::replayed::PollFigures,
    /// How long the replay's threads waited for a CPU, and the recorded program's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_wait: Option<crate::trace::replayed::CpuWait>,
    /// The program's major page faults, as the replay made them (None: the trace holds none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub faults: Option<crate::trace::replayed::FaultFigures>,
}

/// The parts of the bound, ns.
#[derive(Debug, Clone, Serialize)]
pub struct Bound {
    /// The replays' spread: the half-width of the 95% prediction interval of one more run,
    /// t(0.975, n-1) · s · √(1 + 1/n) over the n replays' predictions (0 for one replay).
    pub noise_ns: u64,
    /// Half the range the capture's cost left in the think times can take.
    pub capture_ns: u64,
    /// The recorded time of io_uring/libaio calls whose I/O the trace cannot see, and the
    /// time the program slept in the major page faults the replay did not replay (outside the
    /// trace's files, or where this system cannot: I/O through mappings kept as recorded).
    pub unseen_io_ns: u64,
    /// Half the time the deciding thread waited for a CPU between its calls when recorded.
    pub preempted_ns: u64,
    /// Half the range the wake-ups of calls that sleep differently here can move the run.
    pub wake_ns: u64,
    /// The method's own bias, MODEL_BIAS_PCT of the prediction.
    pub model_ns: u64,
}

/// The prediction.
#[derive(Debug, Clone, Serialize)]
pub struct Prediction {
    pub trace: String,
    pub command: Vec<String>,
    /// The storage predicted for: the directory the replays ran in.
    pub directory: String,
    /// The program's run time as recorded, and less the capture's measured cost.
    pub recorded_ns: u64,
    pub recorded_untraced_ns: Option<u64>,
    pub predicted_ns: u64,
    /// predicted_ns ± bound_ns.
    pub bound_ns: u64,
    pub bound_pct: f64,
    pub bound: Bound,
    /// This machine's cost of waking up cold (`stats::cold`), which the wake-ups' part uses.
    pub cold: ColdStart,
    /// The thread whose end decides the program's.
    pub critical_tid: Option<u32>,
    /// Share of the run the critical thread spent in replayed calls: as recorded, as predicted.
    pub io_share_recorded_pct: f64,
    pub io_share_predicted_pct: f64,
    pub replays: Vec<ReplayPrediction>,
    pub threads: Vec<ThreadFigures>,
    pub files: Vec<FileFigures>,
    /// The I/O patterns by replayed time, largest first.
    pub patterns: Vec<PatternFigures>,
    /// Why the prediction may be weaker than its bound says.
    pub warnings: Vec<String>,
}

/// One replay's report and timeline.
pub struct Replayed<'a> {
    pub report: &'a ReplayReport,
    pub timeline: &'a Timeline,
}

/// How far one more run on the target may fall from the replays' predictions: the half-width
/// of the 95% prediction interval of a normal sample, t(0.975, n-1) · s · √(1 + 1/n); 0 for a
/// single replay (no spread to go by: a warning says so).
fn spread(values: &[u64]) -> u64 {
    let n = values.len();
    if n < 2 {
        return 0;
    }
    let mean = values.iter().map(|&v| v as f64).sum::<f64>() / n as f64;
    let var = values
        .iter()
        .map(|&v| (v as f64 - mean).powi(2))
        .sum::<f64>()
        / (n - 1) as f64;
    (t975(n - 1) * var.sqrt() * (1.0 + 1.0 / n as f64).sqrt()) as u64
}

/// Student's t, 97.5th percentile, for `df` degrees of freedom (at least 1).
fn t975(df: usize) -> f64 {
    const T: [f64; 10] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    ];
    match df {
        0 => f64::INFINITY,
        1..=10 => T[df - 1],
        11..=20 => 2.228 - (df - 10) as f64 * 0.0142,
        21..=30 => 2.086 - (df - 20) as f64 * 0.0044,
        _ => 1.96 + 0.082 * 30.0 / df as f64,
    }
}

/// How far past its calibrated cost the capture's cost reaches in a program's think times:
/// the capture's code and records empty the caches the program's work between its calls
/// then refills, which the calibration's small work does not show. Measured on this
/// project's VM (`bench/record_replay.py --only overhead,calibration`, two runs on
/// 2026-12-01 with perf samples and one on 2026-12-02 with the eBPF ring, docs/trace.md): the
/// capture cost dd in 512-byte calls 1.0-1.5x the trace's figure, tar 0.6-2.0x, sqlite3
/// 2-3.3x.
const CAPTURE_REACH: f64 = 3.0;

/// The method's own bias, percent of the prediction, in every bound: where the storage
/// decides a run (a throttled disk, predictions that replays agree on to 0.1%), the
/// predictions of `bench/predict_accuracy.py` were 0.1–2% short of the program's runs
/// (four runs of the bench, 2026-11-28 and 2026-12-01): what a replay does not reproduce
/// (the program's exec and exit, the kernel's writeback and read-ahead state, the phase of a
/// throttle's budget).
const MODEL_BIAS_PCT: u64 = 2;

/// The capture's cost per watched call, and the part of its cost that lies outside the
/// recorded calls for certain (the stops for paths, the calls it does not watch), ns; zero
/// without a measurement.
fn capture_costs(r: &Recording) -> (f64, f64) {
    let Some(o) = &r.footer.overhead else {
        return (0.0, 0.0);
    };
    let calls = r.events.len() as f64 + r.footer.other_calls as f64;
    let outside = (o.added_ns as f64 - o.per_call_ns * calls).max(0.0);
    (o.per_call_ns, outside)
}

/// What one replay predicts.
fn one(r: &Recording, run: &Replayed<'_>, cold: &ColdStart) -> (ReplayPrediction, ProgramEnd, u64) {
    let pe = program_end(r, run.timeline);
    let tl = run.timeline;
    let (delay, chain, taken) = pe.end.hinge.map_or((0, 0, 0), |h| {
        let taken = tl.chain_capture_ns.get(h).copied().unwrap_or(0);
        (tl.chain_late_ns[h], tl.chain_calls[h], taken)
    });
    // The chain's share of the trace's calls carries that share of the calls not in it (on
    // pipes and sockets, and those not watched) and of the capture's stops.
    let share = chain as f64 / r.events.len().max(1) as f64;
    let (per_call, outside) = capture_costs(r);
    let watched = chain as f64 + r.footer.other_calls as f64 * share;
    // Each call's cost lies between the call's two timestamps (replaced by the replay's own
    // time) and around them (left in the think times), and the work after a call pays for
    // the caches the capture took, which the calibration's small work does not: between none
    // and CAPTURE_REACH times the calibrated cost is left.
    let half = CAPTURE_REACH * per_call * watched / 2.0;
    // The cost left lies in the think time around the calls: never more than the deciding
    // thread's (a calibration on a loaded machine can measure more). The replay took the
    // part it measured out of the think times itself: the middle less that is left.
    let think = pe.critical_tid.map_or(0, |t| outside_calls(r, t));
    let think = think.saturating_sub(taken);
    let left = ((half + outside * share) as u64)
        .saturating_sub(taken)
        .min(think);
    let half = (half as u64).min(think);
    // What is taken away from the think time never comes to more than the think time.
    let room = think.saturating_sub(left);
    // Where the replay split the think times it left the recorded waits for a CPU out, call
    // by call on every thread, and waited for a CPU here as the program would: nothing to
    // take away. Else half the deciding thread's.
    let preempted = pe
        .critical_tid
        .and_then(|t| r.footer.threads.iter().find(|th| th.tid == t))
        .and_then(|th| th.off_cpu)
        .filter(|_| run.report.think.is_none())
        .map_or(0, |o| o.think_preempted_ns / 2)
        .min(room);
    let wakes = wake::wakes(r, run.timeline, pe.end.hinge, cold);
    let floor = i64::try_from(room.saturating_sub(preempted)).unwrap_or(i64::MAX);
    let shift = wakes.shift_ns().max(-floor);
    let predicted = pe
        .end
        .ns
        .saturating_sub(delay)
        .saturating_sub(left)
        .saturating_sub(preempted)
        .saturating_add_signed(shift);
    let p = ReplayPrediction {
        predicted_ns: predicted,
        replayed_end_ns: pe.end.ns,
        replay_delay_ns: delay,
        capture_left_ns: left,
        capture_taken_ns: taken,
        chain_calls: chain,
        preempted_left_ns: preempted,
        think: run.report.think,
        wakes,
        wake_shift_ns: shift,
        replayed_io_ns: run.report.replayed_io_ns,
        results_differ: run.report.results_differ,
        polls: run.report.polls,
        cpu_wait: run.report.cpu_wait,
        faults: run.report.faults.clone(),
    };
    (p, pe, half)
}

/// A thread's recorded time outside its calls: from its creation (or the start) to its end
/// (or its last call's), less the time in its calls.
fn outside_calls(r: &Recording, tid: u32) -> u64 {
    let Some(th) = r.footer.threads.iter().find(|t| t.tid == tid) else {
        return 0;
    };
    let mine = r.events.iter().filter(|e| e.tid == tid);
    let (busy, last) = mine.fold((0u64, 0u64), |(b, l), e| {
        (b.saturating_add(e.dur), l.max(e.done_ns()))
    });
    th.ended_ns
        .unwrap_or(last)
        .max(last)
        .saturating_sub(th.born_ns.unwrap_or(0))
        .saturating_sub(busy)
}

/// The least that the replay's threads waiting longer for a CPU than the recorded program's
/// must come to for a warning, and the share of the prediction (1/BUSIER_SHARE).
const BUSIER_MIN_NS: u64 = 2_000_000;
const BUSIER_SHARE: u64 = 20;

/// Where the replay's threads waited for a CPU longer than the recorded program's threads did
/// (more than 2 ms and a twentieth of the prediction), the warning that says so: this machine
/// was busier than when the program was recorded, and the prediction holds those waits.
fn busier(c: Option<crate::trace::replayed::CpuWait>, predicted: u64) -> Option<String> {
    let c = c?;
    let more = c.replayed_ns.saturating_sub(c.recorded_ns?);
    (more > BUSIER_MIN_NS && more > predicted / BUSIER_SHARE).then(|| {
        format!(
            "the replay's threads waited {:.3} s for a CPU, {:.3} s more than the recorded \
             program's did between its calls: this machine was busier than when the program \
             was recorded (other programs, or the replay's threads outnumbering its CPUs), \
             and the prediction holds those waits where they lay on the chain that decides \
             the end; on a machine as quiet as the recording's it is shorter by up to that \
             much",
            c.replayed_ns as f64 / 1e9,
            more as f64 / 1e9
        )
    })
}

/// The time the program's threads slept in the major page faults the replay kept as recorded
/// (computation between calls): as wrong as the target is faster or slower there. Those it
/// replayed took their time on the target. (A replay reports faults wherever the trace holds
/// them.)
fn fault_sleeps(run: &ReplayPrediction) -> u64 {
    run.faults.as_ref().map_or(0, |f| f.kept_asleep_ns)
}

/// Where the prediction is for: the directory the replays ran in, and the machine's cost of
/// waking up cold.
pub struct Target<'a> {
    pub directory: &'a str,
    pub cold: ColdStart,
}

/// The prediction from `runs` (at least one).
pub fn predict(r: &Recording, trace: &str, to: &Target<'_>, runs: &[Replayed<'_>]) -> Prediction {
    assert!(!runs.is_empty(), "a prediction needs a replay");
    let each: Vec<_> = runs.iter().map(|run| one(r, run, &to.cold)).collect();
    let mut sorted: Vec<usize> = (0..each.len()).collect();
    sorted.sort_by_key(|&k| each[k].0.predicted_ns);
    // The median replay (the lower of two middles) stands for all in the figures.
    let mid = sorted[(sorted.len() - 1) / 2];
    let predicted = each[mid].0.predicted_ns;
    let noise = spread(&each.iter().map(|e| e.0.predicted_ns).collect::<Vec<_>>());
    let unseen: u64 = r
        .events
        .iter()
        .filter(|e| e.io_unseen())
        .fold(0, |s: u64, e| s.saturating_add(e.dur))
        .saturating_add(fault_sleeps(&each[mid].0));
    let bound = Bound {
        noise_ns: noise,
        capture_ns: each[mid].2,
        unseen_io_ns: unseen,
        preempted_ns: each[mid].0.preempted_left_ns,
        wake_ns: each[mid].0.wakes.half_ns(),
        model_ns: (u128::from(predicted) * u128::from(MODEL_BIAS_PCT) / 100) as u64,
    };
    let bound_ns = [
        bound.capture_ns,
        bound.unseen_io_ns,
        bound.preempted_ns,
        bound.wake_ns,
        bound.model_ns,
    ]
    .into_iter()
    .fold(bound.noise_ns, u64::saturating_add);
    let (pe, tl) = (&each[mid].1, runs[mid].timeline);
    let f = figures::figures(r, tl, pe);
    let kept = asleep::kept_waits(r, tl, pe);
    let critical_io = |recorded: bool| {
        f.threads
            .iter()
            .find(|t| Some(t.tid) == pe.critical_tid)
            .map_or(0, |t| {
                if recorded {
                    t.recorded_io_ns
                } else {
                    t.replayed_io_ns
                }
            })
    };
    let untraced = r
        .footer
        .overhead
        .as_ref()
        .map(|o| r.footer.duration_ns.saturating_sub(o.added_ns));
    let pct = |a: u64, b: u64| 100.0 * a as f64 / b.max(1) as f64;
    let mut p = Prediction {
        trace: trace.to_string(),
        command: r.header.command.clone(),
        directory: to.directory.to_string(),
        recorded_ns: r.footer.duration_ns,
        recorded_untraced_ns: untraced,
        predicted_ns: predicted,
        bound_ns,
        bound_pct: pct(bound_ns, predicted),
        bound,
        cold: to.cold.clone(),
        critical_tid: pe.critical_tid,
        io_share_recorded_pct: pct(critical_io(true), untraced.unwrap_or(r.footer.duration_ns))
            .min(100.0),
        io_share_predicted_pct: pct(critical_io(false), predicted).min(100.0),
        replays: each.into_iter().map(|e| e.0).collect(),
        threads: f.threads,
        files: f.files,
        patterns: f.patterns,
        warnings: Vec::new(),
    };
    p.warnings = figures::warnings(r, &p);
    p.warnings
        .extend(busier(runs[mid].report.cpu_wait, predicted));
    if let Some(k) = kept.filter(|k| k.asleep_ns >= predicted / 10) {
        let (not, what) = match r.footer.wakes_seen {
            true => (
                "not woken by a call of the program's own tasks",
                "timers, processes outside the program or the exit of one of its own (a \
                 pipe's last writer ending)",
            ),
            false => (
                "not waiting for threads they created",
                "other processes through sockets or pipes, for locks or timers",
            ),
        };
        p.warnings.push(format!(
            "the chain of calls that decides the end keeps {:.3} s of recorded time its threads \
             spent asleep outside their calls, {not} (thread {} the most): waits for {what}, \
             which the trace does not hold; the replay keeps them as they were, so where what \
             they waited for runs faster or slower on this storage, the prediction does not \
             follow",
            k.asleep_ns as f64 / 1e9,
            k.tid
        ));
    }
    p
}
