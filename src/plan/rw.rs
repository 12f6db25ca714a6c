//! A job's pattern (`rw`): which directions it issues, in which order.

/// The I/O pattern of a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RwMode {
    Read,
    Write,
    RandRead,
    RandWrite,
    /// Mixed sequential (`rw`, `readwrite`).
    ReadWrite,
    RandRw,
    /// Random read of a block, then a write of the same block.
    Update,
    /// Sequential trims (discard on a block device, a punched hole in a file).
    Trim,
    RandTrim,
    /// A trim, then a write of the same bytes; sequential (`trimwrite`) or random.
    TrimWrite,
    RandTrimWrite,
}

impl RwMode {
    /// The mode fio's word names (`readwrite` = `rw`); the word is already lower case.
    pub fn from_word(word: &str) -> Option<RwMode> {
        Some(match word {
            "read" => RwMode::Read,
            "write" => RwMode::Write,
            "randread" => RwMode::RandRead,
            "randwrite" => RwMode::RandWrite,
            "rw" | "readwrite" => RwMode::ReadWrite,
            "randrw" => RwMode::RandRw,
            "update" => RwMode::Update,
            "trim" => RwMode::Trim,
            "randtrim" => RwMode::RandTrim,
            "trimwrite" => RwMode::TrimWrite,
            "randtrimwrite" => RwMode::RandTrimWrite,
            _ => return None,
        })
    }

    pub fn is_random(self) -> bool {
        matches!(
            self,
            RwMode::RandRead
                | RwMode::RandWrite
                | RwMode::RandRw
                | RwMode::Update
                | RwMode::RandTrim
                | RwMode::RandTrimWrite
        )
    }
    pub fn reads(self) -> bool {
        matches!(
            self,
            RwMode::Read | RwMode::RandRead | RwMode::ReadWrite | RwMode::RandRw | RwMode::Update
        )
    }
    pub fn writes(self) -> bool {
        !matches!(
            self,
            RwMode::Read | RwMode::RandRead | RwMode::Trim | RwMode::RandTrim
        )
    }
    pub fn trims(self) -> bool {
        matches!(
            self,
            RwMode::Trim | RwMode::RandTrim | RwMode::TrimWrite | RwMode::RandTrimWrite
        )
    }
    /// Whether the job changes what its files hold (writes or trims): what the safety rules,
    /// the open mode and `--readonly` go by.
    pub fn modifies(self) -> bool {
        self.writes() || self.trims()
    }
    /// Each I/O is followed by a write of the same bytes (`update`, the trimwrites): the
    /// first I/O's direction, or `None`.
    pub fn pair_first(self) -> Option<crate::engine::Dir> {
        use crate::engine::Dir;
        match self {
            RwMode::Update => Some(Dir::Read),
            RwMode::TrimWrite | RwMode::RandTrimWrite => Some(Dir::Trim),
            _ => None,
        }
    }
    /// Which directions the job issues: read, write, trim.
    pub fn dirs(self) -> [bool; 3] {
        [self.reads(), self.writes(), self.trims()]
    }
    /// Which directions' sizes (`bs=R,W,T`) the job's I/Os take: a trimwrite's write takes
    /// its trim's size, as fio's does.
    pub fn sized_dirs(self) -> [bool; 3] {
        match self {
            RwMode::TrimWrite | RwMode::RandTrimWrite => [false, false, true],
            m => m.dirs(),
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            RwMode::Read => "read",
            RwMode::Write => "write",
            RwMode::RandRead => "randread",
            RwMode::RandWrite => "randwrite",
            RwMode::ReadWrite => "rw",
            RwMode::RandRw => "randrw",
            RwMode::Update => "update",
            RwMode::Trim => "trim",
            RwMode::RandTrim => "randtrim",
            RwMode::TrimWrite => "trimwrite",
            RwMode::RandTrimWrite => "randtrimwrite",
        }
    }
}
