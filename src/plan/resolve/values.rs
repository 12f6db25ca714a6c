//! A section's values, read once: every key looked up in the option table (the last value
//! given wins), fio-only options sorted into ignored and refused, and typed readers (sizes,
//! durations, choices, booleans) whose errors name the option and where it was set.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use crate::plan::options::{self, FioOnly, Kind, OptionDef};
use crate::plan::value;
use crate::plan::{Entry, Origin, Section, SpecError};

/// The last value given for each option, keyed by canonical name.
pub(super) struct Values<'a> {
    pub(super) map: BTreeMap<&'static str, (&'static OptionDef, Cow<'a, Entry>)>,
    /// fio's kb_base: what k, m, g mean.
    pub(super) kb_base: u64,
    /// The options a step has looked at: an option given but never looked at would be
    /// accepted and silently ignored, the one thing a table row without a step could do.
    looked_at: RefCell<BTreeSet<&'static str>>,
}

pub(super) type Ignored = Vec<(String, &'static str)>;

impl<'a> Values<'a> {
    /// The section's options by canonical name, and the fio options it may ignore. An engine
    /// iogauge lacks is reported before anything else: it is why the engine's own options
    /// are unknown.
    pub(super) fn collect(section: &'a Section) -> Result<(Self, Ignored), SpecError> {
        let engine = section
            .entries
            .iter()
            .rev()
            .find(|e| options::lookup(&e.key).is_some_and(|d| d.name == "ioengine"));
        if let Some(e) = engine {
            let word = e.value.as_deref().unwrap_or("").trim().to_ascii_lowercase();
            if !options::ENGINES.contains(&word.as_str()) {
                return Err(SpecError {
                    option: "ioengine".into(),
                    value: e.value.clone(),
                    message: crate::plan::absent::why(&word),
                    origin: e.origin.clone(),
                });
            }
        }
        let mut map = BTreeMap::new();
        let mut ignored = Vec::new();
        let replaced = replaced_engine_options(section);
        for (i, entry) in section.entries.iter().enumerate() {
            if replaced.contains(&i) {
                let norm = entry.key.replace('-', "_");
                if !ignored.iter().any(|(o, _): &(String, _)| *o == norm) {
                    ignored.push((norm, "set for an engine a later ioengine= replaced"));
                }
                continue;
            }
            let Some(def) = options::lookup(&entry.key) else {
                let norm = entry.key.replace('-', "_");
                let given = entry.value.as_deref().map(str::trim);
                let message = match options::fio_only(&entry.key) {
                    Some(FioOnly::DefaultOnly(only, why)) if given != Some(only) => {
                        format!("not supported: only {norm}={only} ({why})")
                    }
                    Some(FioOnly::Ignored(why) | FioOnly::DefaultOnly(_, why)) => {
                        if !ignored.iter().any(|(o, _): &(String, _)| *o == norm) {
                            ignored.push((norm, why));
                        }
                        continue;
                    }
                    Some(FioOnly::Rejected(why)) => format!("not supported: {why}"),
                    None => "unknown option; 'iogauge help options' lists the accepted ones".into(),
                };
                return Err(SpecError {
                    option: entry.key.clone(),
                    value: entry.value.clone(),
                    message,
                    origin: entry.origin.clone(),
                });
            };
            if entry.value.is_none()
                && def.kind != Kind::Bool
                && !crate::plan::options::VALUE_OPTIONAL.contains(&def.name)
            {
                return Err(err(
                    def,
                    entry,
                    format!("needs a value: {}", def.kind.describe()),
                ));
            }
            if def.name == "buffered" {
                // buffered=B is direct=!B; whichever of the two comes later wins.
                let b = entry.value.as_deref().map_or(Ok(true), value::parse_bool);
                let b = b.map_err(|acc| err(def, entry, format!("expected {acc}")))?;
                let direct = Entry {
                    key: "direct".into(),
                    value: Some(if b { "0" } else { "1" }.into()),
                    origin: entry.origin.clone(),
                };
                map.insert(
                    "direct",
                    (
                        options::lookup("direct").expect("in table"),
                        Cow::Owned(direct),
                    ),
                );
                continue;
            }
            map.insert(def.name, (def, Cow::Borrowed(entry)));
        }
        let mut v = Values {
            map,
            kb_base: 1024,
            looked_at: RefCell::default(),
        };
        v.kb_base = v.choice("kb_base")?.parse().expect("choices are numbers");
        Ok((v, ignored))
    }

    /// Where each given option came from, by canonical name.
    pub(super) fn origins(&self) -> BTreeMap<String, Origin> {
        let given = self.map.iter();
        given
            .map(|(n, (_, e))| (n.to_string(), e.origin.clone()))
            .collect()
    }

    pub(super) fn given(&self, name: &'static str) -> bool {
        self.looked_at.borrow_mut().insert(name);
        self.map.contains_key(name)
    }

    /// The options given that no step looked at. Empty unless a table row has no step that
    /// lands it in the job: resolution treats that as its own bug.
    pub(super) fn unused(&self) -> Vec<&'static str> {
        let seen = self.looked_at.borrow();
        self.map
            .keys()
            .filter(|k| !seen.contains(*k))
            .copied()
            .collect()
    }

    /// The raw text of an option (its default when not given).
    pub(super) fn text(&self, name: &'static str) -> Option<(String, Option<&Entry>)> {
        self.looked_at.borrow_mut().insert(name);
        match self.map.get(name) {
            Some((_, e)) => Some((e.value.clone().unwrap_or_else(|| "1".into()), Some(&**e))),
            None => def(name).default.map(|d| (d.to_string(), None)),
        }
    }

    pub(super) fn parsed<T>(
        &self,
        name: &'static str,
        parse: impl FnOnce(&str) -> Result<T, value::ValueError>,
    ) -> Result<Option<T>, SpecError> {
        let Some((text, entry)) = self.text(name) else {
            return Ok(None);
        };
        parse(&text).map(Some).map_err(|accepted| {
            let d = def(name);
            match entry {
                Some(e) => err(d, e, format!("expected {accepted}")),
                None => unreachable_default(d, &accepted.to_string()),
            }
        })
    }

    pub(super) fn size(
        &self,
        name: &'static str,
        warnings: &mut Vec<String>,
    ) -> Result<Option<u64>, SpecError> {
        let kb = self.kb_base;
        let size = self.parsed(name, |t| {
            value::parse_size_base(t, kb).or_else(|e| {
                // fio reads the number and unit at the start and ignores what follows
                // (`65536)`); so does iogauge, saying so.
                let lead = value::leading_size(t).ok_or(e.clone())?;
                let s = value::parse_size_base(lead, kb).map_err(|_| e)?;
                warnings.push(format!(
                    "{name}={t}: fio reads this as {lead} (the number and unit at the start, \
                     the rest ignored); iogauge does the same"
                ));
                Ok(s)
            })
        })?;
        if let (Some(s), Some((text, _))) = (size, self.text(name)) {
            if s.iec_reversed {
                warnings.push(format!(
                    "{name}={text} means {} bytes: fio reads KiB/MiB/GiB as powers of 1000 \
                     (its kb_base=1024 rule) and iogauge does the same; write 4k/1m/1g for \
                     powers of 1024",
                    s.bytes
                ));
            }
        }
        Ok(size.map(|s| s.bytes))
    }

    /// An option as the user named it, bare: `bs` in fio's words, `-pagesize` for a legacy
    /// tool's flag, for messages that mention other options than the one at fault.
    pub(super) fn named(&self, name: &'static str) -> String {
        match self.map.get(name).map(|(_, e)| &e.origin) {
            Some(Origin::Flag { flag, .. }) if *flag != "FILE" => flag.to_string(),
            _ => name.to_string(),
        }
    }

    pub(super) fn bool(&self, name: &'static str) -> Result<bool, SpecError> {
        Ok(self.parsed(name, value::parse_bool)?.unwrap_or(false))
    }

    pub(super) fn int(&self, name: &'static str) -> Result<Option<u64>, SpecError> {
        let Kind::Int { min, max } = def(name).kind else {
            panic!("{name} is not an int")
        };
        self.parsed(name, |t| value::parse_int(t, min, max))
    }

    pub(super) fn seconds(&self, name: &'static str) -> Result<Option<Duration>, SpecError> {
        self.parsed(name, |t| value::parse_duration(t, Duration::from_secs(1)))
    }

    pub(super) fn choice(&self, name: &'static str) -> Result<String, SpecError> {
        Ok(self.choice_opt(name)?.expect("choices have defaults"))
    }

    /// A choice without a default: `None` when not given.
    pub(super) fn choice_opt(&self, name: &'static str) -> Result<Option<String>, SpecError> {
        let Kind::Choice(words) = def(name).kind else {
            panic!("{name} is not a choice")
        };
        self.parsed(name, |t| {
            let t = t.trim().to_ascii_lowercase();
            if words.contains(&t.as_str()) {
                Ok(t)
            } else {
                Err(value::ValueError::OneOf(words))
            }
        })
    }

    pub(super) fn error(&self, name: &'static str, message: String) -> SpecError {
        match self.map.get(name) {
            Some((d, e)) => err(d, e, message),
            None => SpecError {
                option: name.into(),
                value: None,
                message,
                origin: Origin::Cli,
            },
        }
    }
}

/// The entries that are an engine's own options, set while that engine was in force, which a
/// later `ioengine=` replaced with one that does not have them (see `options::ENGINE_OPTIONS`).
fn replaced_engine_options(section: &Section) -> Vec<usize> {
    let engine_of = |e: &Entry| {
        options::lookup(&e.key)
            .filter(|d| d.name == "ioengine")
            .map(|_| e.value.as_deref().unwrap_or("").trim().to_ascii_lowercase())
    };
    let Some(last) = section.entries.iter().rposition(|e| engine_of(e).is_some()) else {
        return Vec::new();
    };
    let last_engine = engine_of(&section.entries[last]).unwrap_or_default();
    let mut in_force = String::new();
    let mut out = Vec::new();
    for (i, e) in section.entries.iter().enumerate().take(last) {
        if let Some(eng) = engine_of(e) {
            in_force = eng;
            continue;
        }
        let Some(d) = options::lookup(&e.key) else {
            continue;
        };
        let mine = |eng: &str| options::engine_options(eng).contains(&d.name);
        if options::is_engine_option(d.name) && mine(&in_force) && !mine(&last_engine) {
            out.push(i);
        }
    }
    out
}

pub(super) fn def(name: &str) -> &'static OptionDef {
    options::lookup(name).unwrap_or_else(|| panic!("option {name} missing from the table"))
}

pub(super) fn err(def: &OptionDef, entry: &Entry, message: String) -> SpecError {
    SpecError {
        option: def.name.into(),
        value: entry.value.clone(),
        message,
        origin: entry.origin.clone(),
    }
}

pub(super) fn unreachable_default(def: &OptionDef, accepted: &str) -> SpecError {
    panic!("default of {} does not parse: {accepted}", def.name)
}
