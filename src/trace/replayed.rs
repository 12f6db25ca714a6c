//! What a replay of a trace measured (`iogauge replay`, run by `runner::replay`): pure data,
//! serialised as the replay's JSON report and rendered by `report::trace`.

use serde::Serialize;

/// When calls are issued.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    #[default]
    Closed,
    Open,
    Afap,
}

impl std::str::FromStr for Mode {
    type Err = BadMode;
    fn from_str(s: &str) -> Result<Mode, BadMode> {
        match s {
            "closed" => Ok(Mode::Closed),
            "open" => Ok(Mode::Open),
            "afap" => Ok(Mode::Afap),
            _ => Err(BadMode(s.into())),
        }
    }
}

/// A mode name that is not one.
#[derive(Debug, thiserror::Error)]
#[error("--mode={0}: expected closed, open or afap")]
pub struct BadMode(pub String);

/// One call type's figures.
#[derive(Debug, Clone, Serialize)]
pub struct OpFigures {
    pub op: String,
    pub calls: u64,
    pub bytes: u64,
    pub errors: u64,
    /// MiB/s over the replay's span (reads and writes).
    pub mib_per_s: f64,
    pub lat_mean_ns: f64,
    pub lat_p50_ns: u64,
    pub lat_p99_ns: u64,
    pub lat_max_ns: u64,
    /// The recorded calls' mean latency, for comparison.
    pub recorded_lat_mean_ns: f64,
}

/// One replay thread's figures.
#[derive(Debug, Clone, Serialize)]
pub struct ThreadFigures {
    pub tid: u32,
    pub calls: u64,
    pub busy_ns: u64,
    pub recorded_busy_ns: u64,
    pub issue_error_p50_ns: u64,
    pub issue_error_p99_ns: u64,
}

/// What a replay measured (the default: a closed replay that measured nothing, for building
/// one by hand).
#[derive(Debug, Clone, Default, Serialize)]
pub struct ReplayReport {
    pub trace: String,
    pub command: Vec<String>,
    pub mode: Mode,
    pub speed: f64,
    /// The replay's directory (removed at its end).
    pub directory: String,
    pub laid_out_bytes: u64,
    /// First issue to last completion of the replayed calls: recorded, and replayed (of a
    /// replay cut short, `stopped` or `storage_failed`, the recorded figures are those of the
    /// calls it made, here and in `recorded_io_ns` and `recorded_calls_slept`).
    pub recorded_span_ns: u64,
    /// The recorded span less what the capture measured it added over that span (its cost per
    /// call, spread over the recording): about what the program took untraced. None when the
    /// trace holds no overhead measurement.
    pub recorded_span_untraced_ns: Option<u64>,
    pub replayed_span_ns: u64,
    /// Time inside the replayed calls, summed over threads: recorded and replayed.
    pub recorded_io_ns: u64,
    pub replayed_io_ns: u64,
    /// Issue time against schedule, over every replayed call.
    pub issue_error_p50_ns: u64,
    pub issue_error_p99_ns: u64,
    pub issue_error_max_ns: u64,
    pub ops: Vec<OpFigures>,
    pub threads: Vec<ThreadFigures>,
    /// Calls not replayed (mappings, seeks, renames that failed, io_uring/libaio calls whose
    /// I/Os the trace does not hold).
    pub skipped: u64,
    /// Calls whose result differs from the recorded one (an error where it succeeded, or
    /// the reverse, or another byte count).
    pub results_differ: u64,
    /// Replayed calls that slept (their thread gave up the CPU to wait for the device or a
    /// lock): as recorded (None: the trace does not say) and in the replay.
    pub recorded_calls_slept: Option<u64>,
    pub replayed_calls_slept: u64,
    /// Stopped before the end (a signal).
    pub stopped: bool,
    /// Threads that looked for a file on a timer until another changed it (closed mode).
    pub polls: PollFigures,
    /// Closed mode, where the trace says when its threads were off their CPU between their
    /// calls (perf captures from 2026-12-05): what the replay made of the think times. None:
    /// it waited them out whole (sleeping, spinning their last 100–200 µs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub think: Option<ThinkFigures>,
    /// Closed mode, where the trace measured it (recorded since 2026-12-08): the capture's
    /// cost taken out of the think times.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capture_taken: Option<CaptureTaken>,
    /// The program's major page faults (its I/O through mappings), replayed (None: the trace
    /// holds none: recorded before 2026-12-07, under ptrace, or where perf could not count
    /// them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub faults: Option<FaultFigures>,
    /// Why the recorded native AIO was replayed synchronously (no native AIO here); None:
    /// asynchronously, or the trace has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub async_one_by_one: Option<String>,
    /// Why the recorded io_uring rings' I/Os were replayed through native AIO (this system
    /// made no io_uring ring); None: through io_uring, or the trace has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uring_as_aio: Option<String>,
    /// What the trace misses (its recording said INCOMPLETE: records dropped, calls seen
    /// half, tasks not followed, 32-bit programs): the replay did only the calls it holds.
    /// None: the trace knows of nothing missing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<String>,
    /// How long the threads waited for a CPU, recorded and here (None: the platform keeps
    /// no figure of a thread's waits).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_wait: Option<CpuWait>,
    /// The call the storage failed (no room, over quota, an I/O error, a file system turned
    /// read-only) where the recording's succeeded: the replay stopped there, and its figures
    /// cover the calls before it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub storage_failed: Option<StorageFailure>,
    /// Why the replay's directory, or some of its files, could not be removed at its end (a
    /// file system turned read-only); None: removed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_removed: Option<String>,
}

/// A call the storage failed in a replay, where the recorded one succeeded.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct StorageFailure {
    pub op: String,
    /// The file as recorded, and its copy in the replay's directory (None: a call on no file
    /// of the trace).
    pub file: Option<String>,
    pub here: Option<String>,
    pub offset: u64,
    pub len: u64,
    /// The error, in words (the system's).
    pub error: String,
    /// What the call returned when recorded, and when (ns into the recording).
    pub recorded_result: i64,
    pub at_ns: u64,
}

/// Time the threads were ready to run but waited for a CPU, summed over threads: the
/// replay's (the scheduler's run delay of each replay thread, from its first call's turn to
/// its end), and the recording's between the calls (its threads' `off_cpu`; None where the
/// trace does not say). More here than recorded: this machine was busier than when the
/// program was recorded (other programs, or the replay's threads outnumbering its CPUs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CpuWait {
    pub replayed_ns: u64,
    pub recorded_ns: Option<u64>,
}

/// The recorded think times, split where the trace says when its threads were off their CPU:
/// what ran was replayed as that much of the replay thread's CPU time (so it waits for a CPU
/// where the program's threads would have), what slept as a sleep, and the waits for a CPU
/// left out (the replay's own, on this machine, take their place).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ThinkFigures {
    /// The recorded computation replayed as CPU time, summed over threads (scaled by the
    /// speed; the replay's own work between its calls counts toward it).
    pub computed_ns: u64,
    /// The recorded waits for a CPU left out of the waits, summed over threads.
    pub left_out_ns: u64,
}

/// The capture's cost that a closed replay took out of the recorded think times
/// (`Overhead::between_calls_ns`, measured at record time): the part between two calls
/// before each replayed call, and the whole cost of each call between them it does not make.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CaptureTaken {
    pub between_calls_ns: u64,
    pub per_skipped_call_ns: u64,
    /// Taken out in all, summed over threads (scaled by the speed; never more than a think
    /// time held), ns.
    pub taken_ns: u64,
}

/// Polls (`trace::poll`): a thread that looked for a file on a timer until another thread of
/// the program changed it (made it, wrote it, removed it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct PollFigures {
    /// In the trace (closed mode; 0 in the others, which keep every look).
    pub found: u64,
    /// Ended here at an earlier look than recorded (the change came sooner): the looks after
    /// it, and the thread's calls between them, not made.
    pub ended_sooner: u64,
    /// Whose last look waited here for the change, to the thread's first turn after it.
    pub ended_later: u64,
}

/// What a replay measured of each call of the trace (indexed as its events), for a
/// prediction: when it completed, how long it took, and along the chain of calls that decided
/// its issue (see `runner::replay`) the replay's own delays and the recorded calls on it.
/// None for a call not replayed (or not reached).
#[derive(Debug, Clone, Default)]
pub struct Timeline {
    /// Completion, ns after the replay's start (the recorded program's exec).
    pub done_ns: Vec<Option<u64>>,
    pub took_ns: Vec<u64>,
    pub chain_late_ns: Vec<u64>,
    /// The capture's cost the replay took out of the recorded think times on the chain.
    pub chain_capture_ns: Vec<u64>,
    pub chain_calls: Vec<u64>,
    /// The call slept in the replay (its thread gave up the CPU to wait).
    pub slept: Vec<bool>,
    /// The call that decided its issue (its thread's previous call, or the call it waited
    /// for or started from): following it back from a call walks that call's chain.
    pub after: Vec<Option<usize>>,
}

/// The recorded program's major page faults (`Footer::faults`), as a replay made them: each
/// page a fault read in, read in here through a read-only mapping of the replay's copy of its
/// file (the kernel's read-around with it), by its thread at its place between its calls, in
/// place of the time the thread slept in it when recorded.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FaultFigures {
    /// In the trace.
    pub recorded: u64,
    /// Read in here; of those, the ones a replay thread waited for storage for (its major
    /// faults; None where the platform does not count them).
    pub replayed: u64,
    pub major_here: Option<u64>,
    /// The replay's threads' time reading them in, summed, and their CPU time in that: taken
    /// out of the recorded computation around the faults as what the recorded faults took of
    /// the CPU (the trace holds their sleep, not their start).
    pub replayed_ns: u64,
    pub replayed_cpu_ns: u64,
    /// The time the program's threads slept in those replayed, when recorded.
    pub replaced_asleep_ns: u64,
    /// Not replayed, their time kept as recorded (as computation): outside the trace's files
    /// (its executable, memory swapped back in), of a thread not replayed, after a stop, or
    /// `failed`; and their recorded sleep.
    pub kept: u64,
    pub kept_asleep_ns: u64,
    /// Not read in here: the file was not there, or the page lay past its end.
    pub failed: u64,
    /// The program's madvise calls on its files' mappings: followed here (normal, random,
    /// sequential: how much the kernel reads around a fault; willneed: its range read ahead
    /// at its place, since 2026-12-07), and not (populate and the rest).
    pub advice_followed: u64,
    pub advice_not_followed: u64,
    /// Of the willneed advice, that given here by the replay's threads (not: its file was not
    /// there, or the replay stopped first).
    pub willneed_given: u64,
    /// Why none was replayed (the system cannot); None: they were, where they could be.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_replayed: Option<String>,
}
