//! The seeds of a job's random generators as fio 3.33 makes them, so that a job run by
//! iogauge picks the same blocks, in the same order, as fio run on it (the generators
//! themselves are `workload::fiorand`'s): from the job's number in the plan, its files' names
//! as fio spells them, and `randseed`.

use super::job::{DEFAULT_SEED, JobSpec, TargetSpec};
use super::workload::fiorand;

impl JobSpec {
    /// The seed of each file's skewed generator (zipf, pareto, normal), as fio 3.33 seeds it:
    /// with `randrepeat`, the hash of the file's name as fio spells it (`DIR/NAME.CLONE.N`
    /// when `directory` is given, `NAME.CLONE.N` when not, a `filename` as given) times the
    /// job's number; without, from the job's seed.
    pub fn skew_seeds(&self) -> Vec<u32> {
        let names: Vec<Vec<u8>> = match &self.target {
            TargetSpec::Files(files) => files
                .iter()
                .map(|f| f.as_os_str().as_encoded_bytes().to_vec())
                .collect(),
            TargetSpec::Directory(dir) => (0..self.nrfiles)
                .map(|i| {
                    let name = format!("{}.{}.{i}", self.name, self.clone);
                    match self.origins.contains_key("directory") {
                        true => {
                            [dir.as_os_str().as_encoded_bytes(), b"/", name.as_bytes()].concat()
                        }
                        false => name.into_bytes(),
                    }
                })
                .collect(),
        };
        let r = &self.random;
        names
            .iter()
            .enumerate()
            .map(|(i, n)| match r.repeatable {
                true => fiorand::file_seed(n, r.job_number),
                false => fiorand::fold(r.seed) ^ i as u32,
            })
            .collect()
    }

    /// The seed of the job's uniform random offsets as fio 3.33 seeds them with `randrepeat`
    /// (its constant times the job's number); without, from the job's seed.
    pub fn offset_seed(&self) -> u32 {
        let r = &self.random;
        match r.repeatable {
            true => fiorand::offset_seed(r.job_number),
            false => fiorand::fold(r.seed),
        }
    }

    /// The seeds of the job's generators as fio 3.33 makes them: offsets as
    /// [`JobSpec::offset_seed`], a mix's directions and zoned's zones from `randseed` (fio's
    /// default 0x89 where the job leaves iogauge's default seed) and the job's number.
    pub fn fio_seeds(&self) -> fiorand::FioSeeds {
        use fiorand::{FioSeeds, MIX_OFF, ZONE_OFF, chain_seed};
        let r = &self.random;
        let rand_seed = if r.seed == DEFAULT_SEED { 0x89 } else { r.seed };
        FioSeeds {
            offset: self.offset_seed(),
            mix: chain_seed(rand_seed, r.job_number, MIX_OFF),
            zone: chain_seed(rand_seed, r.job_number, ZONE_OFF),
        }
    }
}
