//! fio's random offsets and mixes, I/O for I/O: a job file with zipf, pareto and normal jobs,
//! uniform ones (with fio's random map, without it, over several loops, over three files) and
//! mixed ones (random and sequential, over loops, with a seed of their own) and zoned ones
//! (in percent over two files, in bytes over loops), in
//! several sections, with and without a directory, run by the real fio and by iogauge writes
//! the same `write_iolog`: the same files, offsets and sizes in the same order, because
//! iogauge draws them with fio 3.33's own generators, seeded as fio seeds them.

use super::*;

/// The I/Os of a fio iolog (v2/v3): (file, action, offset, length), in order.
fn ios(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_else(|e| panic!("{}: {e}", log.display()))
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            // v3 lines start with a time; the action follows the file name.
            (f.len() == 5 && matches!(f[2], "read" | "write")).then(|| f[1..].join(" "))
        })
        .collect()
}

#[test]
fn zipf_pareto_and_normal_pick_fios_blocks_in_fios_order() {
    let d = tmp();
    let data = d.path().join("data");
    std::fs::create_dir(&data).unwrap();
    // Each section but the last in a directory (fio spells its files DIR/NAME.N.F); the last
    // in the working directory (NAME.N.F, no prefix), its file named.
    let dir = format!("directory={}", data.display());
    let job = format!(
        "[global]\nsize=2m\nbs=4k\nrw=randread\nnumber_ios=300\n\
         [zipf]\n{dir}\nrandom_distribution=zipf:1.3\nwrite_iolog=zipf.log\n\
         [zipf-again]\n{dir}\nrandom_distribution=zipf:0.8\nwrite_iolog=zipf2.log\n\
         [pareto]\n{dir}\nrandom_distribution=pareto:0.7\nrw=randwrite\nwrite_iolog=pareto.log\n\
         [normal]\n{dir}\nrandom_distribution=normal:5\nnrfiles=2\nsize=4m\nbs=8k\n\
         write_iolog=normal.log\n\
         [here]\nrandom_distribution=zipf\nwrite_iolog=here.log\n\
         [uniform]\n{dir}\nnumber_ios=512\nwrite_iolog=uniform.log\n\
         [nomap]\n{dir}\nnorandommap\nwrite_iolog=nomap.log\n\
         [loops]\n{dir}\nsize=256k\nloops=3\nnumber_ios=0\nwrite_iolog=loops.log\n\
         [files]\n{dir}\nnrfiles=3\nsize=3m\nrw=randwrite\nnumber_ios=0\n\
         write_iolog=files.log\n\
         [mix]\n{dir}\nrw=randrw\nrwmixread=70\nsize=1m\nloops=2\nnumber_ios=0\n\
         write_iolog=mix.log\n\
         [seqmix]\n{dir}\nrw=rw\nrwmixwrite=20\nrandseed=1234\nwrite_iolog=seqmix.log\n\
         [zoned]\n{dir}\nrandom_distribution=zoned:60/10:30/20:10/70\nnrfiles=2\nsize=4m\n\
         write_iolog=zoned.log\n\
         [zabs]\n{dir}\nrw=randwrite\nrandom_distribution=zoned_abs:60/512k:40/512k\nsize=1m\n\
         loops=2\nnumber_ios=0\nwrite_iolog=zabs.log\n\
         [zcenter]\n{dir}\nrandom_distribution=zipf:1.2:0.3\nwrite_iolog=zcenter.log\n\
         [pcenter]\n{dir}\nrandom_distribution=pareto:0.8:0.75\nwrite_iolog=pcenter.log\n\
         [ncenter]\n{dir}\nrandom_distribution=normal:10:0.1\nnrfiles=2\n\
         write_iolog=ncenter.log\n"
    );
    std::fs::write(d.path().join("dist.fio"), job).unwrap();
    let logs = [
        "zipf", "zipf2", "pareto", "normal", "here", "uniform", "nomap", "loops", "files", "mix",
        "seqmix", "zoned", "zabs", "zcenter", "pcenter", "ncenter",
    ];
    let Ok(fio) = Command::new("fio")
        .current_dir(d.path())
        .args(["dist.fio", "--output=/dev/null"])
        .output()
    else {
        skip!("fio is not installed (scripts/test-deps.sh installs it)");
        return;
    };
    assert!(fio.status.success(), "{}", stderr(&fio));
    for l in logs {
        let from = d.path().join(format!("{l}.log"));
        std::fs::rename(&from, d.path().join(format!("{l}.fio"))).unwrap();
    }
    // fio leaves its files; iogauge writes only files it creates.
    std::fs::remove_dir_all(&data).unwrap();
    std::fs::create_dir(&data).unwrap();
    std::fs::remove_file(d.path().join("here.0.0")).unwrap();
    let o = run_in(d.path(), &["fio", "dist.fio", "--output=/dev/null"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    for l in logs {
        let theirs = ios(&d.path().join(format!("{l}.fio")));
        let ours = ios(&d.path().join(format!("{l}.log")));
        let want = match l {
            "uniform" => 512,
            "loops" => 3 * 64,
            "files" => 768,
            "mix" => 512,
            "zabs" => 512,
            _ => 300,
        };
        assert_eq!(theirs.len(), want, "{l}");
        assert_eq!(ours, theirs, "{l}: iogauge's I/Os differ from fio's");
    }
    // The hot blocks repeat, as they must: zipf:1.3's 300 reads touch far fewer blocks.
    let zipf = ios(&d.path().join("zipf.log"));
    let distinct: std::collections::HashSet<&String> = zipf.iter().collect();
    assert!(distinct.len() < 150, "{}", distinct.len());
}

/// A center outside 0..1 is refused with one line naming the option and what it takes, and
/// nothing is created.
#[test]
fn a_center_out_of_range_is_refused() {
    let d = tmp();
    for bad in ["zipf:1.2:2", "pareto:0.5:-0.1", "normal:10:x"] {
        let opt = format!("--random_distribution={bad}");
        let o = run_in(
            d.path(),
            &["run", "--rw=randread", "--size=1m", "--name=c", &opt],
        );
        assert_eq!(o.status.code(), Some(2), "{bad}");
        let err = stderr(&o);
        assert!(
            err.contains(&opt) && err.contains("CENTER from 0 to 1"),
            "{err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(entries(d.path()).is_empty());
    }
}
