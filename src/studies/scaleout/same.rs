//! Every rank runs the same plan: a launch whose ranks were given different options (an MPMD
//! launch, `mpirun -n 1 A : -n 3 B`, or a job file that differs between hosts) would add
//! different workloads into one total, so it is refused before any file is made unless the
//! user asks for it (`--rank-mixed`). Here, what is compared: each rank's plan as lines, the
//! options that name a rank's own files left out.

use std::collections::BTreeMap;

use crate::plan::Section;

/// The plan as the ranks compare it: one `[section] key=value` line per option in effect
/// (the last of a repeated key; sorted within a section, so the order on the command line is
/// no difference), the file-naming options left out, then the tool's own lines as given
/// (`[tool] repeat=2`). Where each option came from (a line of a job file, a flag) is no
/// difference either.
pub fn plan_text(sections: &[Section], tool: &[String]) -> String {
    let mut out = String::new();
    for s in sections {
        let mut set: BTreeMap<&str, Option<&str>> = BTreeMap::new();
        for e in &s.entries {
            set.insert(&e.key, e.value.as_deref());
        }
        for (k, v) in set {
            if super::merge::PER_RANK.contains(&k) {
                continue;
            }
            match v {
                Some(v) => out.push_str(&format!("[{}] {k}={v}\n", s.name)),
                None => out.push_str(&format!("[{}] {k}\n", s.name)),
            }
        }
    }
    for t in tool {
        out.push_str(&format!("[tool] {t}\n"));
    }
    out
}

/// A plan's text as one number the ranks can gather (FNV-1a, 64 bits: the same on every
/// build and host, unlike std's hasher).
pub fn fingerprint(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The refusal of a launch whose ranks `odd` were given another plan than rank 0's (`base`);
/// `theirs` is the plan of the first of them, for the first difference each way.
pub fn mixed_error(odd: &[usize], base: &str, theirs: &str) -> String {
    let only = |a: &str, b: &str| {
        a.lines()
            .find(|l| !b.lines().any(|m| m == *l))
            .map(String::from)
    };
    let first = odd.first().copied().unwrap_or(0);
    let mut diff = Vec::new();
    if let Some(l) = only(theirs, base) {
        diff.push(format!("rank {first} has `{l}`"));
    }
    if let Some(l) = only(base, theirs) {
        diff.push(format!("rank 0 has `{l}`"));
    }
    if diff.is_empty() {
        diff.push(format!("rank {first} has its jobs in another order"));
    }
    let list: Vec<String> = odd.iter().map(|r| r.to_string()).collect();
    format!(
        "--rank-mixed: rank(s) {} were given other options than rank 0 ({}); their figures \
         would be added together as one workload: give every rank the same options (its file \
         names aside), or add --rank-mixed to run them as they are",
        list.join(", "),
        diff.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Origin;

    fn section(name: &str, opts: &[(&str, &str)]) -> Section {
        let mut s = Section::new(name);
        for (k, v) in opts {
            s.set(k, v, Origin::Cli);
        }
        s
    }

    #[test]
    fn the_same_plan_whatever_the_order_files_and_origins() {
        let a = section("w", &[("rw", "write"), ("bs", "4k"), ("filename", "/d/a")]);
        let mut b = section(
            "w",
            &[("bs", "8k"), ("filename", "/e/$rank"), ("rw", "write")],
        );
        b.set(
            "bs",
            "4k",
            Origin::Flag {
                tool: "iogauge",
                flag: "bs",
            },
        );
        b.set("directory", "/x", Origin::Cli);
        let tool = ["repeat=2".to_string()];
        assert_eq!(
            plan_text(std::slice::from_ref(&a), &tool),
            plan_text(&[b], &tool)
        );
        assert_eq!(
            plan_text(&[a], &tool),
            "[w] bs=4k\n[w] rw=write\n[tool] repeat=2\n"
        );
    }

    #[test]
    fn a_different_option_flag_or_job_is_a_different_plan() {
        let a = plan_text(&[section("w", &[("rw", "write")])], &[]);
        let mut timed = section("w", &[("rw", "write")]);
        timed.entries.push(crate::plan::Entry {
            key: "time_based".into(),
            value: None,
            origin: Origin::Cli,
        });
        let b = plan_text(&[timed], &[]);
        assert_ne!(fingerprint(&a), fingerprint(&b));
        let c = plan_text(&[section("w", &[("rw", "write")])], &["repeat=3".into()]);
        assert_ne!(fingerprint(&a), fingerprint(&c));
        let d = plan_text(&[section("r", &[("rw", "write")])], &[]);
        assert_ne!(fingerprint(&a), fingerprint(&d));
    }

    #[test]
    fn the_refusal_names_the_ranks_and_the_first_difference_each_way() {
        let base = "[w] bs=4k\n[w] rw=write\n";
        let theirs = "[w] bs=1m\n[w] rw=write\n";
        let e = mixed_error(&[2, 3], base, theirs);
        assert!(
            e.starts_with("--rank-mixed: rank(s) 2, 3 were given other options"),
            "{e}"
        );
        assert!(
            e.contains("(rank 2 has `[w] bs=1m`, rank 0 has `[w] bs=4k`)"),
            "{e}"
        );
        assert!(!e.contains('\n'));
        let e = mixed_error(&[1], base, "[w] bs=4k\n[w] rw=write\n[w] time_based\n");
        assert!(e.contains("(rank 1 has `[w] time_based`)"), "{e}");
    }
}
