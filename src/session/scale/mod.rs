//! Scale-out over MPI: every rank runs the plan on its own files, meets the others before
//! each group, and sends its report to rank 0, which merges them and reports for all.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use iogauge::plan::Section;
use iogauge::studies::scaleout::{
    Merger, RankJobs, RankResult, ReadShift, borrow, fingerprint, launched, mixed_error, plan_text,
    rank_sections,
};
use iogauge::units::unix_ns;
use mpi::traits::*;

use super::{AGREE, Failure, GROUP_READY, Measured, RUN_TICK, Tick, Told};

mod exchange;
mod start;
mod tree;
mod wait;

use start::{all_hosts, clock_offsets, leaders_of};

use wait::{Patience, Sends, flush_pending, meet, tell_all};

/// The tag of the message a stopping rank sends every other rank: the repetition in the
/// high 32 bits, the rank in the low.
const STOP: mpi::Tag = 7;
/// The tag of the clock round trips.
const CLOCK: mpi::Tag = 8;
/// The tag of "this rank finished group N" (stonewalling): the repetition (15 bits) in the
/// top 16 bits, the group in the next 16, the rank in the low 32.
const DONE: mpi::Tag = 9;
/// The tag of a rank's result, sent to rank 0 after each measurement.
const RESULT: mpi::Tag = 10;
/// The tag of rank 0's answer to a result: the merged exit code.
const CODE: mpi::Tag = 11;
/// The tag of rank 0's "the report is out", to the ranks that answered, once the others
/// were given up (no meeting can be had then: a rank that left early would end the job,
/// and the launcher rank 0 with it, before the report is written).
const BYE: mpi::Tag = 12;
/// The tag of a host leader's merge of its host's results, to rank 0.
const PARTIAL: mpi::Tag = 13;

pub struct Ranks {
    // Dropped last, after the report is out: MPI_Finalize meets the launcher, which after a
    // Ctrl-C at mpirun is already ending the job.
    world: mpi::topology::SimpleCommunicator,
    phase: Rc<mpi::topology::SimpleCommunicator>,
    rank: usize,
    host: String,
    starts: Rc<RefCell<Vec<u64>>>,
    /// The rank whose failure stopped this one, if one did.
    stopped_by: Rc<RefCell<Option<i32>>>,
    /// The group this rank was ready to start when another rank was not.
    held_at: Rc<RefCell<Option<usize>>>,
    /// Stonewalling on; per group, the rank whose finish stopped this one's.
    stonewall: bool,
    stonewalled: Rc<RefCell<Vec<Option<usize>>>>,
    /// `--rank-read-shift`: read jobs read the files of the rank this many further on.
    read_shift: Option<usize>,
    /// Every rank's host, indexed by rank.
    hosts: Vec<String>,
    /// Each rank's host's first rank (its leader in a tree of host leaders), indexed by rank.
    leaders: Vec<usize>,
    /// Rank 0: each rank's clock offset.
    offsets: Vec<i64>,
    /// Rank 0: a row per host and job in the merged report, not one per rank's job.
    jobs_per_host: bool,
    /// How long it waits for the others, and whether a wait ran out.
    patience: Rc<Patience>,
    /// Rank 0: the ranks that sent their result in the last exchange.
    answered: RefCell<Vec<usize>>,
    /// The communicator of the messages during a run (stop, stonewall).
    tick: Rc<mpi::topology::SimpleCommunicator>,
    /// The measurement in which this rank stopped itself, and the one under way.
    stopping: Rc<Cell<u64>>,
    round: Rc<Cell<u64>>,
    /// Its stop messages, sent once its files are removed.
    sends: RefCell<Sends>,
    _universe: mpi::environment::Universe,
}

/// What the command line asks of the ranks: `--rank-stonewall`, `--rank-read-shift`,
/// `--rank-timeout`, `--rank-mixed`, `--rank-jobs` (none of them: the legacy tools), and the
/// tool's flags every rank must share (`repeat=2`: a rank repeating less would leave the
/// others waiting).
#[derive(Default)]
pub struct Asked {
    pub stonewall: bool,
    pub read_shift: Option<ReadShift>,
    pub timeout: Option<std::time::Duration>,
    pub mixed: bool,
    pub jobs: RankJobs,
    pub shared_flags: Vec<String>,
}

impl From<&iogauge::cli::ToolOptions> for Asked {
    fn from(t: &iogauge::cli::ToolOptions) -> Asked {
        let shift = t.rank_read_shift.map(|s| s.to_string()).unwrap_or_default();
        Asked {
            stonewall: t.rank_stonewall,
            read_shift: t.rank_read_shift,
            timeout: t.rank_timeout,
            mixed: t.rank_mixed,
            jobs: t.rank_jobs.unwrap_or_default(),
            shared_flags: vec![
                format!("repeat={}", t.repeat),
                format!("max-rounds={}", t.rounds.max),
                format!("precondition={}", t.rounds.precondition),
                format!("rank-stonewall={}", t.rank_stonewall),
                format!("rank-read-shift={shift}"),
                // Whether results go through the hosts' leaders: every rank must agree.
                format!("rank-jobs={}", t.rank_jobs.unwrap_or_default()),
            ],
        }
    }
}

/// Joins the launch when there is one: the rank's files made its own (and, with
/// `--rank-read-shift`, its read jobs pointed at another rank's), the barrier before each
/// group set up. `Err(code)`: the launch cannot run as asked (rank 0 said why; every rank
/// leaves with the code).
pub fn begin(sections: &mut [Section], asked: Asked) -> Result<Option<Ranks>, u8> {
    let Asked {
        stonewall,
        read_shift,
        timeout,
        mixed,
        jobs,
        shared_flags,
    } = asked;
    let Some(launch) = launched(&|k| std::env::var(k).ok()) else {
        return Ok(None);
    };
    let Some(universe) = mpi::initialize() else {
        return Ok(None);
    };
    let world = universe.world();
    let rank = world.rank() as usize;
    debug_assert_eq!(rank, launch.rank);
    same_plans(&world, &plan_text(sections, &shared_flags), mixed)?;
    let host = mpi::environment::processor_name().unwrap_or_else(|_| "?".into());
    let shared = std::env::var("IOGAUGE_MPI_SHARED_FILES").is_ok_and(|v| v == "1");
    let hosts = all_hosts(&world, &host);
    let leaders = leaders_of(&hosts);
    let offsets = clock_offsets(&world, &leaders);
    refuse(&world, iogauge::studies::scaleout::commands_error(sections))?;
    let shift = read_partner(&world, read_shift, &hosts, shared)?;
    let borrowing = shift.is_some();
    let shift_ranks = shift.as_ref().map(|(_, n, _)| *n);
    if let Some(shift) = shift {
        read_from_partner(sections, shift, (rank, &hosts), shared);
    }
    rank_sections(sections, rank, &host, shared);
    super::WARNINGS_ONLY_IN_REPORT.store(rank != 0, std::sync::atomic::Ordering::Relaxed);
    let state = RankState::new(
        world.duplicate(),
        Rc::new(Patience::for_plan(sections, timeout)),
    );
    state.hook_agree();
    let tick = Rc::new(world.duplicate());
    state.hook_tick(tick.clone(), stonewall);
    state.hook_ready(borrowing);
    let RankState {
        phase,
        starts,
        stopped_by,
        stonewalled,
        held_at,
        patience,
        stopping,
        round,
        ..
    } = state;
    Ok(Some(Ranks {
        world,
        phase,
        rank,
        host,
        starts,
        stopped_by,
        held_at,
        stonewall,
        stonewalled,
        read_shift: shift_ranks,
        jobs_per_host: jobs.per_host(hosts.len()),
        hosts,
        leaders,
        offsets,
        patience,
        answered: RefCell::new(Vec::new()),
        tick,
        stopping,
        round,
        sends: RefCell::new(Sends(Vec::new())),
        _universe: universe,
    }))
}

/// Every rank was given rank 0's plan, or rank 0 asked for `--rank-mixed`; else the launch
/// is refused before any file is made (`Err(code)`, the same on every rank: rank 0 says why,
/// with the first difference from the first rank that differs, and no rank leaves before it
/// is said).
fn same_plans(
    world: &mpi::topology::SimpleCommunicator,
    text: &str,
    mixed: bool,
) -> Result<(), u8> {
    let mine = [fingerprint(text), u64::from(mixed)];
    let mut all = vec![0u64; 2 * world.size() as usize];
    world.all_gather_into(&mine[..], &mut all[..]);
    let odd: Vec<usize> = (1..all.len() / 2)
        .filter(|&r| all[2 * r] != all[0])
        .collect();
    let Some(&first) = odd.first().filter(|_| all[1] == 0) else {
        return Ok(());
    };
    let me = world.rank() as usize;
    if me == first {
        world.process_at_rank(0).send(text.as_bytes());
    }
    if me == 0 {
        let (theirs, _) = world.process_at_rank(first as i32).receive_vec::<u8>();
        let _ = super::usage_exit(&mixed_error(&odd, text, &String::from_utf8_lossy(&theirs)));
    }
    world.barrier();
    Err(if me == 0 { 2 } else { 0 })
}

/// A plan no launch can run (the same on every rank): rank 0 says why, and no rank leaves
/// before it is said.
fn refuse(world: &mpi::topology::SimpleCommunicator, why: Option<String>) -> Result<(), u8> {
    let Some(why) = why else {
        return Ok(());
    };
    if world.rank() == 0 {
        let _ = super::usage_exit(&why);
    }
    world.barrier();
    Err(if world.rank() == 0 { 2 } else { 0 })
}

/// `--rank-read-shift`: the shift, how many ranks on the partner is, and a warning for the
/// report. `Err(code)` when the launch cannot shift (the same on every rank: rank 0 says why,
/// and no rank leaves before it is said).
fn read_partner(
    world: &mpi::topology::SimpleCommunicator,
    read_shift: Option<ReadShift>,
    hosts: &[String],
    shared: bool,
) -> Result<Option<(ReadShift, usize, Option<String>)>, u8> {
    let shift = match read_shift {
        Some(s) if shared => Err(iogauge::studies::scaleout::ShiftError::Shared {
            flag: format!("--rank-read-shift={s}"),
        }),
        Some(s) => s.ranks(hosts).map(|(n, w)| Some((s, n, w))),
        None => Ok(None),
    };
    shift.map_err(|why| {
        let rank = world.rank();
        if rank == 0 {
            let _ = super::usage_exit(&why.to_string());
        }
        world.barrier();
        if rank == 0 { 2 } else { 0 }
    })
}

/// Points this rank's read jobs at the partner's files: the partner's sections resolved as
/// they are there, when the plan is made.
fn read_from_partner(
    sections: &[Section],
    (s, n, warning): (ReadShift, usize, Option<String>),
    (rank, hosts): (usize, &[String]),
    shared: bool,
) {
    let partner = (rank + n) % hosts.len();
    let mut theirs = sections.to_vec();
    rank_sections(&mut theirs, partner, &hosts[partner], shared);
    let partner_host = hosts[partner].clone();
    // Said once, in rank 0's report.
    let warning = warning.filter(|_| rank == 0);
    super::READ_FROM.with(|h| {
        *h.borrow_mut() = Some(Box::new(move |plan, separate| {
            let flag = format!("--rank-read-shift={s}");
            let other = iogauge::plan::resolve(&theirs, separate)?;
            borrow(plan, &other, partner, &partner_host, &flag).map_err(Failure::usage)?;
            Ok(warning.iter().cloned().collect())
        }))
    });
}

/// What the session's hooks and the rank's report share while the run goes on.
struct RankState {
    /// The communicator every meeting of the run is on.
    phase: Rc<mpi::topology::SimpleCommunicator>,
    /// When each group started (after its barrier), ns since the Unix epoch.
    starts: Rc<RefCell<Vec<u64>>>,
    /// The measurement (repetition) under way, counted from 1.
    round: Rc<Cell<u64>>,
    stopped_by: Rc<RefCell<Option<i32>>>,
    stonewalled: Rc<RefCell<Vec<Option<usize>>>>,
    held_at: Rc<RefCell<Option<usize>>>,
    patience: Rc<Patience>,
    /// The measurement in which this rank stopped itself (0: none yet).
    stopping: Rc<Cell<u64>>,
}

impl RankState {
    fn new(phase: mpi::topology::SimpleCommunicator, patience: Rc<Patience>) -> RankState {
        RankState {
            phase: Rc::new(phase),
            starts: Rc::default(),
            round: Rc::new(Cell::new(0)),
            stopped_by: Rc::default(),
            stonewalled: Rc::default(),
            held_at: Rc::default(),
            patience,
            stopping: Rc::default(),
        }
    }

    /// Before a measurement: every rank learns whether all could start.
    fn hook_agree(&self) {
        let (p, s, n) = (self.phase.clone(), self.starts.clone(), self.round.clone());
        let pat = self.patience.clone();
        let (by, walled, held) = (
            self.stopped_by.clone(),
            self.stonewalled.clone(),
            self.held_at.clone(),
        );
        AGREE.with(|h| {
            *h.borrow_mut() = Some(Box::new(move |ok: bool| {
                // A new measurement (a repetition): what it reports starts afresh, and the
                // messages of an earlier one are told apart by its number.
                n.set(n.get() + 1);
                s.borrow_mut().clear();
                by.borrow_mut().take();
                walled.borrow_mut().clear();
                held.borrow_mut().take();
                meet(&p, ok, false, &pat, "the start of the run").is_some_and(|m| m.0)
            }))
        });
    }

    /// At each tick of a running group: a failing rank stops every rank; with stonewalling,
    /// the first rank to finish a group ends it on the others.
    fn hook_tick(&self, w: Rc<mpi::topology::SimpleCommunicator>, stonewall: bool) {
        let (by, walled, n) = (
            self.stopped_by.clone(),
            self.stonewalled.clone(),
            self.round.clone(),
        );
        let stopping = self.stopping.clone();
        let mut sends = Sends(Vec::new());
        RUN_TICK.with(|h| {
            *h.borrow_mut() = Some(Box::new(move |t: Tick| {
                let now = n.get();
                flush_pending(&mut sends.0);
                if stop_messages(&w, &t, now, &stopping, &by) {
                    return Told::StopRun;
                }
                if !stonewall {
                    return Told::Nothing;
                }
                stonewall_messages(&w, &t, now, &mut walled.borrow_mut(), &mut sends.0)
            }))
        });
    }

    /// The barrier before each group (and, reading another rank's files, after each group's
    /// files are laid out): whether every rank got there ready.
    fn hook_ready(&self, borrowing: bool) {
        let (p, s, held) = (
            self.phase.clone(),
            self.starts.clone(),
            self.held_at.clone(),
        );
        let pat = self.patience.clone();
        GROUP_READY.with(|h| {
            *h.borrow_mut() = Some(Box::new(move |group, ok: bool| {
                // The barrier, and whether every rank got there ready.
                let what = format!("the start of group {}", group + 1);
                let all = meet(&p, ok, false, &pat, &what).is_some_and(|m| m.0);
                if all {
                    s.borrow_mut().push(unix_ns());
                } else if ok {
                    *held.borrow_mut() = Some(group);
                }
                all
            }))
        });
        if borrowing {
            let (p, held) = (self.phase.clone(), self.held_at.clone());
            let pat = self.patience.clone();
            super::GROUP_LAID_OUT.with(|h| {
                *h.borrow_mut() = Some(Box::new(move |group, ok: bool| {
                    // Every rank's files are there before any rank opens another's.
                    let what = format!("the lay-out of group {}", group + 1);
                    let all = meet(&p, ok, false, &pat, &what).is_some_and(|m| m.0);
                    if !all && ok {
                        *held.borrow_mut() = Some(group);
                    }
                    all
                }))
            });
        }
    }
}

/// A job of this rank failed (or it was interrupted): noted (`stopping`: the measurement it
/// stopped in), and the others are told once its files are removed ([`Ranks::merge`]), so
/// no call to a peer that may be gone comes first (OpenMPI's TCP transport aborts a process
/// whose connection to a dead peer fails). `true` when another rank said to stop in this
/// measurement (`by`: the first that did, unless this rank stopped first).
fn stop_messages(
    w: &mpi::topology::SimpleCommunicator,
    t: &Tick,
    now: u64,
    stopping: &Cell<u64>,
    by: &RefCell<Option<i32>>,
) -> bool {
    if t.stopping && stopping.get() != now && by.borrow().is_none() {
        stopping.set(now);
    }
    let mut stop = false;
    while let Some((msg, _)) = w.any_process().immediate_matched_probe_with_tag(STOP) {
        let (m, _) = msg.matched_receive::<i64>();
        // One from an earlier repetition (sent after this rank had finished it) is old news.
        if (m >> 32) as u64 != now {
            continue;
        }
        if stopping.get() != now {
            by.borrow_mut().get_or_insert((m & 0xffff_ffff) as i32);
        }
        stop = true;
    }
    stop
}

/// Stonewalling: another rank's finish of this group stops it here (`walled`: per group, the
/// rank whose finish did); this rank finishing first tells the others.
fn stonewall_messages(
    w: &mpi::topology::SimpleCommunicator,
    t: &Tick,
    now: u64,
    walled: &mut Vec<Option<usize>>,
    pending: &mut Vec<mpi::request::Request<'static, i64>>,
) -> Told {
    let me = w.rank();
    if walled.len() <= t.group {
        walled.resize(t.group + 1, None);
    }
    let mut told = Told::Nothing;
    // Finishes of this group by other ranks (an older group's or repetition's are left over).
    while let Some((msg, _)) = w.any_process().immediate_matched_probe_with_tag(DONE) {
        let (m, _) = msg.matched_receive::<i64>();
        let (r, g, from) = (
            (m >> 48) as u64,
            ((m >> 32) & 0xffff) as usize,
            (m & 0xffff_ffff) as usize,
        );
        if r == now & 0x7fff && g == t.group && !t.ended && walled[g].is_none() {
            walled[g] = Some(from);
            told = Told::StopGroup;
        }
    }
    if t.ended && !t.stopping && walled[t.group].is_none() {
        // This rank finished the group first (as far as it knows): the others stop.
        let m =
            (((now & 0x7fff) as i64) << 48) | (((t.group & 0xffff) as i64) << 32) | i64::from(me);
        tell_all(w, m, DONE, pending);
    }
    told
}

/// One measurement's result across the ranks (see `Ranks::merge`); this rank's own
/// without a launch. Every rank calls it after each measurement (each repetition).
pub fn each(
    ranks: &Option<Ranks>,
    measured: Result<Measured, Failure>,
) -> Result<Measured, Failure> {
    match ranks {
        Some(r) => r.merge(measured),
        None => measured,
    }
}

/// Whether this rank gave other ranks up (a wait for them ran out).
pub fn gave_up(ranks: &Option<Ranks>) -> bool {
    ranks.as_ref().is_some_and(|r| r.patience.is_lost())
}

/// Rank 0's merged result (this rank's own without a launch), once the measurements are
/// done. `Err(code)`: a rank other than 0, which has nothing to print (rank 0 reports for
/// everyone) and has met the others for the last time.
pub fn merged(
    ranks: &Option<Ranks>,
    measured: Result<Measured, Failure>,
) -> Result<Result<Measured, Failure>, u8> {
    let Some(r) = ranks else {
        return Ok(measured);
    };
    // Nothing is measured any more: the hooks (and the communicators they hold) go before
    // MPI_Finalize.
    GROUP_READY.with(|h| *h.borrow_mut() = None);
    super::GROUP_LAID_OUT.with(|h| *h.borrow_mut() = None);
    super::READ_FROM.with(|h| *h.borrow_mut() = None);
    AGREE.with(|h| *h.borrow_mut() = None);
    RUN_TICK.with(|h| *h.borrow_mut() = None);
    if r.rank != 0 {
        // Rank 0's exit code is everyone's (the worst rank's): a launcher such as mpirun
        // ends the whole job when any rank exits non-zero, which would kill rank 0 before
        // it reports.
        end(ranks, 0);
        return Err(0);
    }
    Ok(measured)
}

/// Rank 0's merge finished; the hosts' devices' verdicts, which the ranks left to it, reach
/// stderr as a single run's do, whatever the report's format.
fn finish(merger: Merger) -> Option<(iogauge::studies::Report, u8)> {
    for v in merger.device_verdicts() {
        super::warn(&v);
    }
    merger.finish()
}

/// Once the report is out: every rank leaves together (see `Ranks::done`).
pub fn end(ranks: &Option<Ranks>, code: u8) {
    if let Some(r) = ranks {
        r.done();
        leave_if_ending(code);
        if r.patience.is_lost() {
            // MPI_Finalize would wait on the ranks that are gone: leave without it (the
            // launcher then ends those still waiting).
            use std::io::Write as _;
            let _ = std::io::stdout().flush();
            let _ = std::io::stderr().flush();
            std::process::exit(i32::from(code));
        }
    }
}

/// After Ctrl-C at mpirun (a signal came during the run), once the report is out: exits
/// now. mpirun is ending the job; MPI_Finalize would wait on it until it kills this rank,
/// and leaving closes stdout, so mpirun forwards the whole report before it goes.
fn leave_if_ending(code: u8) {
    if super::signalled() {
        use std::io::Write as _;
        let _ = std::io::stdout().flush();
        let _ = std::io::stderr().flush();
        std::process::exit(i32::from(code));
    }
}

impl Ranks {
    /// The last meeting: rank 0 comes once its report is out, so no rank leaves before
    /// (after Ctrl-C at mpirun, the first rank to exit ends the job for all).
    pub fn done(&self) {
        if !self.patience.is_lost() {
            let _ = meet(&self.phase, true, true, &self.patience, "the last meeting");
            return;
        }
        // The others given up: rank 0 tells those that answered its report is out; they
        // wait for that (bounded) before they leave.
        let fresh = Patience::fresh(2 * self.exchange_limit());
        if self.rank == 0 {
            let bye: &'static u8 = Box::leak(Box::new(1u8));
            for &r in self.answered.borrow().iter().filter(|&&r| r != 0) {
                let req = self
                    .world
                    .process_at_rank(r as i32)
                    .immediate_send_with_tag(mpi::request::StaticScope, bye, BYE);
                let _ = fresh.wait(req, "the last word");
            }
        } else {
            let got: &'static mut u8 = Box::leak(Box::new(0u8));
            let req = self
                .world
                .process_at_rank(0)
                .immediate_receive_into_with_tag(mpi::request::StaticScope, got, BYE);
            let _ = fresh.wait(req, "rank 0's last word");
        }
    }

    /// Once every rank is past its run: the stop messages no one read (a rank that had
    /// finished its group when another stopped) are taken, so none is left at the end.
    fn drain(&self) {
        if meet(
            &self.phase,
            true,
            true,
            &self.patience,
            "the end of the run",
        )
        .is_none()
        {
            return;
        }
        for tag in [STOP, DONE] {
            // On the run's own communicator, where they were sent.
            while let Some((msg, _)) = self
                .tick
                .any_process()
                .immediate_matched_probe_with_tag(tag)
            {
                let _ = msg.matched_receive::<i64>();
            }
        }
    }

    /// What this rank's report says of the others: stopped because another rank did (not
    /// its own interruption), or a group that did not start for them.
    fn own_notes(&self, m: &mut Measured) {
        // Stopped for the others, not by a signal here: not this rank's interruption
        // (the merged report says interrupted only where a rank was).
        let cut = m.report.interrupted && !super::signalled();
        if let Some(from) = self.stopped_by.borrow().filter(|_| cut) {
            m.report.warnings.push(format!(
                "stopped early because rank {from} stopped (a job of it failed, or it \
                 was interrupted): this rank's figures are partial"
            ));
        }
        if let Some(g) = *self.held_at.borrow() {
            m.report.warnings.push(format!(
                "group {} did not start: another rank had stopped or could not prepare \
                 it",
                g + 1
            ));
        }
        if cut {
            m.report.interrupted = false;
            if m.code > 128 {
                m.code = 0;
            }
        }
    }

    /// This rank's result as sent to rank 0: its report, or (no result) why, with its code.
    fn result_bytes(&self, measured: &Result<Measured, Failure>) -> Vec<u8> {
        match measured {
            Ok(m) => serde_json::to_vec(&RankResult {
                rank: self.rank,
                host: self.host.clone(),
                exit_code: m.code,
                group_start_unix_ns: self.starts.borrow().clone(),
                clock_offset_ns: 0,
                stonewall: self.stonewall,
                stonewalled_by: self.stonewalled.borrow().clone(),
                read_shift: self.read_shift,
                report: m.report.run.clone(),
                device_checks: m
                    .report
                    .run
                    .groups
                    .iter()
                    .map(|g| g.device_check.clone())
                    .collect(),
                rounds: m.report.rounds.clone(),
            })
            .expect("a report serialises"),
            // Why, for rank 0 to say (once for all the ranks that give the same reason).
            Err(f) => {
                let mut v = vec![b'!', f.code()];
                v.extend_from_slice(f.message().as_bytes());
                v
            }
        }
    }

    /// A rank past its measurement: the others told to stop if it stopped itself (a failed
    /// job, a signal: its files are removed by now, and the message waits on no one), then
    /// meetings until every rank has ended (or the wait runs out).
    fn end_meetings(&self) {
        let now = self.round.get();
        if now != 0 && self.stopping.get() == now {
            let m = ((now as i64) << 32) | self.rank as i64;
            tell_all(&self.tick, m, STOP, &mut self.sends.borrow_mut().0);
        }
        let what = "the end of the run";
        while let Some((_, ended)) = meet(&self.phase, false, true, &self.patience, what) {
            if ended {
                break;
            }
        }
    }

    /// After a measurement (each repetition): meets the other ranks until every one has
    /// ended (a rank that ended early tells those still waiting before a group that it is
    /// not ready, and they stop there); then each sends its result to rank 0, which merges
    /// them, and every rank learns the merged exit code, so all go on to the next
    /// repetition or all stop. Rank 0 gets the merge; the other ranks their own result
    /// with the merged code (or `Failure::Said`: rank 0 says why). Every wait is bounded by
    /// the rank's patience: ranks that do not answer are named in rank 0's report, which is
    /// then partial, and the run ends there.
    fn merge(&self, measured: Result<Measured, Failure>) -> Result<Measured, Failure> {
        self.end_meetings();
        let mut measured = measured;
        if let Ok(m) = measured.as_mut() {
            self.own_notes(m);
        }
        // A rank with no result (it could not start) sends its reason, so rank 0 never waits
        // for it.
        let bytes = self.result_bytes(&measured);
        if self.rank != 0 {
            let Some(code) = self.pass_on(bytes) else {
                iogauge::out::stderr(&format!(
                    "iogauge: rank {} ({}): rank 0 did not take this rank's result or answer \
                     within {:.0} s (twice --rank-timeout): no merged report; this rank's files \
                     are removed\n",
                    self.rank,
                    self.host,
                    2.0 * self.exchange_limit().as_secs_f64()
                ));
                self.patience
                    .give_up("the end of the run", self.exchange_limit());
                return Err(Failure::Said(1));
            };
            self.drain();
            return match measured {
                Ok(m) => Ok(Measured {
                    report: m.report,
                    code,
                }),
                Err(_) => Err(Failure::Said(code)),
            };
        }
        let n = self.world.size() as usize;
        let mut merger = Merger::new(self.jobs_per_host);
        let collected = self.collect(bytes, &mut merger);
        let (failed, failed_code) = self.reasons(&collected);
        let exchange::Collected {
            answered,
            received_bytes,
            receive_ms,
            merge_ms,
            host_parts,
            leader_receive_ms_max,
            ..
        } = collected;
        if answered.len() < n {
            self.patience
                .give_up("the end of the run", self.exchange_limit());
        }
        let lines = iogauge::studies::scaleout::failure_lines(
            &failed,
            &self.hosts,
            n,
            super::OTHER_RANK_FAILED,
        );
        let finishing = std::time::Instant::now();
        let merged = measured.as_ref().ok().and_then(|_| finish(merger));
        let merge_ms = merge_ms + finishing.elapsed().as_secs_f64() * 1e3;
        let Some((mut report, mut code)) = merged else {
            // Every rank's reason, each said once.
            for l in &lines {
                iogauge::out::stderr(&format!("iogauge: {}\n", super::cli::for_terminal(l)));
            }
            let code = measured.err().map_or(1, |f| f.code()).max(failed_code);
            self.answer(code, answered.iter().copied());
            *self.answered.borrow_mut() = answered;
            self.drain();
            return Err(Failure::Said(code));
        };
        if let Some(s) = report.scaleout.as_mut() {
            s.merge = Some(iogauge::studies::scaleout::MergeCost {
                received_bytes,
                receive_ms,
                merge_ms,
                peak_rss_kib: iogauge::runner::limits::peak_rss_kib(),
                host_leaders: (host_parts > 0).then_some(iogauge::studies::scaleout::LeadersCost {
                    merges: host_parts,
                    longest_receive_ms: leader_receive_ms_max,
                }),
            });
        }
        for l in lines {
            // Only some ranks ran this repetition, or some did not answer.
            report.errors.push(if l.contains("no result:") {
                l
            } else {
                format!("no result: {l}")
            });
            code = code.max(failed_code.max(1));
        }
        self.answer(code, answered.iter().copied());
        *self.answered.borrow_mut() = answered;
        self.drain();
        Ok(Measured { report, code })
    }
}
