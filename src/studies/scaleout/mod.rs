//! Scale-out: many hosts (MPI ranks) running one plan at once, and one honest result. This
//! module holds what needs no MPI: how a launch is recognised (so a build without MPI refuses
//! instead of running N independent copies), how each rank's file names are made its own
//! (and, with `--rank-read-shift`, which rank's files its read jobs read), and how rank 0
//! merges the ranks' reports — sums, bandwidth over the earliest start to the latest end,
//! latency percentiles from the merged histograms (exact, never averaged), and a row per
//! host. The transport (gathering the reports) is the binary's, behind `--features mpi`.
//! Here: the launch and each rank's names; `shift.rs` the read shift; `same.rs` the check
//! that every rank was given the same plan; `merge.rs` what the merged report holds of the
//! ranks and its text; `merger.rs` rank 0's merge, folding each rank's result in as it
//! arrives (a row per rank's job, or per host and job); `absorb.rs` a host leader's merge of
//! its host's results taken into rank 0's; `verdicts.rs` the device counters' verdicts, made
//! once per host against all of its ranks' jobs.

mod absorb;
mod merge;
mod merger;
mod same;
mod shift;
mod verdicts;

pub use absorb::*;
pub use merge::*;
pub use merger::*;
pub use same::*;
pub use shift::*;

use crate::plan::{Origin, Section};

/// This process's place in an MPI launch, from the launcher's environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Launch {
    pub rank: usize,
    pub size: usize,
}

/// The launcher's environment: OpenMPI's `OMPI_COMM_WORLD_*`, PMI's `PMI_RANK`/`PMI_SIZE`
/// (MPICH, Intel MPI, Slurm's srun with PMI), PMIx's `PMIX_RANK` with a size from one of them.
pub fn launched(env: &dyn Fn(&str) -> Option<String>) -> Option<Launch> {
    let num = |k: &str| env(k).and_then(|v| v.trim().parse::<usize>().ok());
    let size = num("OMPI_COMM_WORLD_SIZE")
        .or_else(|| num("PMI_SIZE"))
        .or_else(|| num("SLURM_NTASKS").filter(|_| env("PMIX_RANK").is_some()))?;
    let rank = num("OMPI_COMM_WORLD_RANK")
        .or_else(|| num("PMI_RANK"))
        .or_else(|| num("PMIX_RANK"))?;
    Some(Launch { rank, size })
}

/// The one-line refusal of a launch this build cannot join.
pub fn without_mpi_error(l: Launch) -> String {
    format!(
        "launched as rank {} of {} (mpirun/srun) but this iogauge was built without MPI: it would \
         run {} independent copies and report none of them together; build it with `cargo \
         build --release --features mpi` (see docs/scale-out.md), or run it without mpirun",
        l.rank, l.size, l.size
    )
}

/// Makes each rank's files its own: `$rank` and `$host` in `filename` and `directory` are
/// replaced (fio's `filename_format` style), and a `filename` without `$rank` gets `.r{rank}`
/// appended, so ranks never share a file unless the user wrote `$host` alone or set
/// `shared`. A job writing files by `directory` gets `.r{rank}` in its name (its files are
/// named after it).
pub fn rank_sections(sections: &mut [Section], rank: usize, host: &str, shared: bool) {
    for s in sections.iter_mut() {
        let entries: Vec<(String, String)> = s
            .entries
            .iter()
            .filter_map(|e| e.value.clone().map(|v| (e.key.clone(), v)))
            .collect();
        let get = |k: &str| {
            entries
                .iter()
                .rev()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.clone())
        };
        let sub = |v: &str| v.replace("$rank", &rank.to_string()).replace("$host", host);
        if let Some(f) = get("filename") {
            let mut v = sub(&f);
            if !f.contains("$rank") && !shared {
                // Several files (a:b) each get the rank.
                v = v
                    .split(':')
                    .map(|p| format!("{p}.r{rank}"))
                    .collect::<Vec<_>>()
                    .join(":");
            }
            s.set("filename", &v, Origin::Cli);
        }
        if let Some(d) = get("directory") {
            s.set("directory", &sub(&d), Origin::Cli);
            if get("filename").is_none() && !d.contains("$rank") && !shared {
                // The job's name: its `name` option where given (fio's command line), else
                // its section's.
                match get("name") {
                    Some(n) => {
                        s.set("name", &format!("{n}.r{rank}"), Origin::Cli);
                    }
                    None => s.name = format!("{}.r{rank}", s.name),
                }
            }
        }
    }
}

/// Why a plan cannot run under a launch of several ranks, if it cannot: the commands a job
/// runs (`exec_prerun`, `exec_postrun`, `ioengine=exec`) write their output after the job's
/// name in the working directory, which every rank shares (each rank would write the same
/// file, or run its own copy of a monitor).
pub fn commands_error(sections: &[Section]) -> Option<String> {
    sections.iter().flat_map(|s| &s.entries).find_map(|e| {
        let v = e.value.as_deref().unwrap_or("");
        let runs = matches!(e.key.as_str(), "exec_prerun" | "exec_postrun")
            || (e.key == "ioengine" && v == "exec");
        runs.then(|| {
            format!(
                "{}={v}: not supported under mpirun/srun: every rank would run it and write its \
                 output to the same file (named after the job, in the working directory the \
                 ranks share); run the command outside the launch",
                e.key
            )
        })
    })
}

/// Rank 0's lines for the ranks that ended without a result (`(rank, why)`, of `n` ranks on
/// `hosts`): each distinct reason once, naming its ranks unless every rank gave it, and the
/// reasons that only say another rank failed (`echo`) after the others.
pub fn failure_lines(
    failed: &[(usize, String)],
    hosts: &[String],
    n: usize,
    echo: &str,
) -> Vec<String> {
    // The same reason from several ranks, once their own file names (`.rRANK`) read
    // `.r$rank`, is one line.
    let mut by_why: Vec<(String, Vec<usize>)> = Vec::new();
    for (rank, why) in failed {
        let why = merge::rank_neutral(why, *rank);
        match by_why.iter_mut().find(|(w, _)| *w == why) {
            Some((_, ranks)) => ranks.push(*rank),
            None => by_why.push((why, vec![*rank])),
        }
    }
    by_why.sort_by_key(|(w, ranks)| (*w == echo, ranks.first().copied()));
    by_why
        .into_iter()
        .map(|(why, mut ranks)| {
            ranks.sort_unstable();
            if ranks.len() == n {
                return why.to_string();
            }
            let mut names: Vec<&str> = Vec::new();
            for h in ranks.iter().filter_map(|&r| hosts.get(r)) {
                if !names.contains(&h.as_str()) {
                    names.push(h);
                }
            }
            let list: Vec<String> = ranks.iter().map(|r| r.to_string()).collect();
            let which = if ranks.len() == 1 { "rank" } else { "ranks" };
            format!("{which} {} ({}): {why}", list.join(","), names.join(","))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_read_shift_by_host_lands_every_rank_on_another_host() {
        let host = ReadShift::Host;
        // By slot (blocks of ranks per host): one host's worth of ranks.
        let by_slot = hosts(&["a", "a", "b", "b", "c", "c"]);
        assert_eq!(host.ranks(&by_slot), Ok((2, None)));
        // Round robin: the next rank is on another host.
        assert_eq!(host.ranks(&hosts(&["a", "b", "a", "b"])), Ok((1, None)));
        // Uneven: no one shift works for every rank.
        let e = host
            .ranks(&hosts(&["a", "a", "a", "b"]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("a: 3, b: 1"), "{e}");
        let e = host.ranks(&hosts(&["n1", "n1"])).unwrap_err().to_string();
        assert!(e.contains("all 2 ranks run on one host (n1)"), "{e}");
    }

    #[test]
    fn a_read_shift_by_ranks_is_taken_modulo_the_ranks_and_warns_on_one_host() {
        let four = hosts(&["a", "a", "b", "b"]);
        assert_eq!(ReadShift::Ranks(2).ranks(&four), Ok((2, None)));
        assert_eq!(ReadShift::Ranks(6).ranks(&four).unwrap().0, 2);
        let (n, w) = ReadShift::Ranks(1).ranks(&four).unwrap();
        assert_eq!(n, 1);
        // Ranks 0 and 2 read their host-mate's files.
        assert!(w.unwrap().contains("2 of 4 ranks"));
        let e = ReadShift::Ranks(8).ranks(&four).unwrap_err().to_string();
        assert!(e.contains("give 1 to 3 or host"), "{e}");
        assert_eq!("host".parse(), Ok(ReadShift::Host));
        assert_eq!("3".parse(), Ok(ReadShift::Ranks(3)));
        for bad in ["0", "-1", "", "hosts", "1.5"] {
            assert!(bad.parse::<ReadShift>().is_err(), "{bad}");
        }
    }

    #[test]
    fn failures_are_said_once_per_reason_with_their_ranks() {
        let h = hosts(&["a", "a", "b", "b"]);
        let echo = "another rank could not start";
        let failed = vec![
            (0, echo.to_string()),
            (1, echo.to_string()),
            (2, "f2: not a regular file".to_string()),
            (3, echo.to_string()),
        ];
        assert_eq!(
            failure_lines(&failed, &h, 4, echo),
            [
                "rank 2 (b): f2: not a regular file",
                "ranks 0,1,3 (a,b): another rank could not start"
            ]
        );
        // Every rank with one reason: said once, as it is.
        let all: Vec<(usize, String)> = (0..4).map(|r| (r, "bad".to_string())).collect();
        assert_eq!(failure_lines(&all, &h, 4, echo), ["bad"]);
        // The same reason about each rank's own file: one line, the name as a template.
        let own: Vec<(usize, String)> = (0..3)
            .map(|r| (r, format!("/d/r.r{r}.0.0 does not exist")))
            .collect();
        assert_eq!(
            failure_lines(&own, &h, 4, echo),
            ["ranks 0,1,2 (a,b): /d/r.r$rank.0.0 does not exist"]
        );
    }

    #[test]
    fn a_launch_is_recognised_from_the_launchers_environment() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(key, _)| *key == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        let ompi = env(&[("OMPI_COMM_WORLD_RANK", "3"), ("OMPI_COMM_WORLD_SIZE", "4")]);
        assert_eq!(launched(&ompi), Some(Launch { rank: 3, size: 4 }));
        let pmi = env(&[("PMI_RANK", "0"), ("PMI_SIZE", "16")]);
        assert_eq!(launched(&pmi), Some(Launch { rank: 0, size: 16 }));
        assert_eq!(launched(&env(&[])), None);
        assert_eq!(
            launched(&env(&[("PMI_SIZE", "2")])),
            None,
            "no rank: not a launch"
        );
        let e = without_mpi_error(Launch { rank: 1, size: 4 });
        assert!(e.contains("4 independent copies") && e.contains("--features mpi"));
    }

    #[test]
    fn each_rank_gets_its_own_files() {
        let mut s = vec![
            Section::new("w"),
            Section::new("d"),
            Section::new("x"),
            Section::new("job"),
        ];
        s[0].set("filename", "/data/a:/data/b", Origin::Cli);
        s[1].set("directory", "/scratch/$host", Origin::Cli);
        s[3].set("name", "r", Origin::Cli);
        s[3].set("directory", "/scratch", Origin::Cli);
        s[2].set("filename", "/data/f.$rank.$host", Origin::Cli);
        rank_sections(&mut s, 3, "n7", false);
        let get = |s: &Section, k: &str| {
            s.entries
                .iter()
                .rev()
                .find(|e| e.key == k)
                .and_then(|e| e.value.clone())
        };
        assert_eq!(get(&s[0], "filename").unwrap(), "/data/a.r3:/data/b.r3");
        assert_eq!(get(&s[1], "directory").unwrap(), "/scratch/n7");
        assert_eq!(
            s[1].name, "d.r3",
            "directory mode: the files are named after the job"
        );
        assert_eq!(get(&s[2], "filename").unwrap(), "/data/f.3.n7");
        assert_eq!(
            get(&s[3], "name").unwrap(),
            "r.r3",
            "--name=r on the command line"
        );
        // Shared on purpose.
        let mut t = vec![Section::new("w")];
        t[0].set("filename", "/shared/f", Origin::Cli);
        rank_sections(&mut t, 2, "n1", true);
        assert_eq!(get(&t[0], "filename").unwrap(), "/shared/f");
    }

    #[test]
    fn read_jobs_borrow_the_partners_files_and_writers_keep_their_own() {
        use std::path::PathBuf;
        let sections = || {
            let mut s = vec![Section::new("w"), Section::new("r"), Section::new("m")];
            for (sec, rw) in s.iter_mut().zip(["write", "randread", "randrw"]) {
                sec.set("directory", "/scratch/$host", Origin::Cli);
                sec.set("size", "1m", Origin::Cli);
                sec.set("rw", rw, Origin::Cli);
            }
            s[1].set("stonewall", "1", Origin::Cli);
            s
        };
        let plan_of = |rank: usize, host: &str| {
            let mut s = sections();
            rank_sections(&mut s, rank, host, false);
            crate::plan::resolve(&s, false).unwrap()
        };
        let mut mine = plan_of(0, "n1");
        let theirs = plan_of(2, "n2");
        assert_eq!(
            borrow(&mut mine, &theirs, 2, "n2", "--rank-read-shift=2"),
            Ok(1)
        );
        let jobs: Vec<&crate::plan::JobSpec> = mine.groups.iter().flat_map(|g| &g.jobs).collect();
        // Writers (and mixed jobs, which write) keep their own files.
        assert_eq!(jobs[0].read_from, None);
        assert_eq!(jobs[2].read_from, None);
        let from = jobs[1].read_from.as_ref().unwrap();
        assert_eq!((from.rank, from.host.as_str()), (2, "n2"));
        assert_eq!(from.paths, [PathBuf::from("/scratch/n2/r.r2.0.0")]);
        assert_eq!(jobs[1].paths(), [PathBuf::from("/scratch/n1/r.r0.0.0")]);
        assert_eq!(jobs[1].io_paths(), from.paths);
        // A plan with no reader has nothing to borrow.
        let mut w = crate::plan::resolve(&sections()[..1], false).unwrap();
        let e = borrow(&mut w, &theirs, 2, "n2", "--rank-read-shift=2")
            .unwrap_err()
            .to_string();
        assert!(e.contains("no job only reads"), "{e}");
    }
}
