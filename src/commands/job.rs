//! `iogauge job FILE...`: fio job files into sections, and `--parse-only`'s plan.

use std::process::ExitCode;

use crate::session::*;
use iogauge::cli::{self};
use iogauge::jobfile;
use iogauge::plan::{self, Section};
use iogauge::{errln, out};

/// Reads fio job files into sections: several files run one after another (fio's rule), each
/// starting from the command line's defaults. Returns the jobs and the files' warnings.
pub(crate) fn read_job_files(
    files: &[std::path::PathBuf],
    defaults: &Section,
    overrides: &Section,
    only: &[String],
) -> Result<(Vec<Section>, Vec<String>), Failure> {
    let env = jobfile::Env::system();
    let (mut jobs, mut notes, mut names) = (Vec::new(), Vec::new(), Vec::new());
    for (i, f) in files.iter().enumerate() {
        let parsed = jobfile::parse_file(f, &env).map_err(Failure::usage)?;
        notes.extend(parsed.warnings.iter().cloned());
        names.extend(
            parsed
                .sections
                .iter()
                .filter(|s| !s.is_global())
                .map(|s| s.name.clone()),
        );
        let mut these = parsed.jobs(&defaults.entries, &overrides.entries, only);
        if i > 0 {
            if let Some(first) = these.first_mut() {
                first.set("stonewall", "1", plan::Origin::Cli);
            }
        }
        jobs.extend(these);
    }
    if let Some(missing) = only.iter().find(|s| !names.contains(s)) {
        return Err(Failure::Usage(format!(
            "--section={missing}: no such job section; the files have: {}",
            names.join(", ")
        )));
    }
    if jobs.is_empty() {
        return Err(Failure::Usage(format!(
            "{}: no job sections to run (only [global] ones)",
            files[0].display()
        )));
    }
    Ok((jobs, notes))
}

/// `--parse-only`: the resolved jobs, group by group; nothing is created or run.
pub(crate) fn print_plan(sections: &[Section], notes: &[String]) -> ExitCode {
    for n in notes {
        errln!("iogauge: warning: {}", cli::for_terminal(n));
    }
    // Jobs on fio's hardware engines: their options checked, then listed as not run here.
    let (sections, aside) = plan::absent::set_aside(sections);
    let plan = match plan::resolve(&sections, false) {
        Ok(p) => p,
        Err(e) => return usage_exit(&e.to_string()),
    };
    for w in plan.warnings.iter().cloned().chain(plan.ignored_note()) {
        errln!("iogauge: warning: {}", cli::for_terminal(&w));
    }
    let mut out = String::new();
    for (gi, g) in plan.groups.iter().enumerate() {
        let after = if gi == 0 {
            String::new()
        } else {
            format!(", after group {gi} ends")
        };
        out += &format!("group {}{after}:\n", gi + 1);
        let mut count: std::collections::HashMap<&str, usize> = Default::default();
        for j in &g.jobs {
            *count.entry(j.name.as_str()).or_default() += 1;
        }
        for j in g.jobs.iter() {
            let clones = count[j.name.as_str()];
            if j.clone > 0 {
                continue;
            }
            let n = if clones > 1 {
                format!(" (x{clones})")
            } else {
                String::new()
            };
            match aside.iter().find(|a| a.job == j.name) {
                Some(a) => out += &format!("  {}\n", a.line(&n)),
                None => out += &format!("  {}{n}: {}\n", j.name, j.summary()),
            }
        }
    }
    out!("{out}");
    ExitCode::SUCCESS
}

/// `iogauge job FILE...`: the files' jobs run (or, with `--parse-only`, their plan printed).
pub(crate) fn job(
    args: &[String],
    (files, defaults, overrides, sections): (&[std::path::PathBuf], &Section, &Section, &[String]),
    parse_only: bool,
    tool: iogauge::cli::ToolOptions,
) -> ExitCode {
    let (jobs, notes) = match read_job_files(files, defaults, overrides, sections) {
        Ok(r) => r,
        Err(e) => return ExitCode::from(e.reported()),
    };
    if parse_only {
        return print_plan(&jobs, &notes);
    }
    execute(
        args,
        jobs,
        false,
        tool,
        Reporting::Iogauge(None),
        notes,
        None,
    )
}
