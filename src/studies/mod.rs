//! Studies: functions from runs and their results to an answer — a sweep's grid and its
//! directory (`sweep`), the spread of repeated runs (`repeat`), steady-state rounds
//! (`rounds`), verdicts against published guidance (`assess`), the merge of MPI ranks
//! (`scaleout`) and two reports compared (`compare`). They run nothing and print nothing.

pub mod assess;
pub mod compare;
pub mod repeat;
pub mod rounds;
pub mod scaleout;
pub mod sweep;
