//! What a trace must hold to be read — what a damaged or hand-made trace may break, and a
//! replay would then wait for years, or for ever, or lay out past any disk: the files it
//! names, events in issue order, every time within the recording, sizes a file can have.

use super::{BadTrace, NO_FILE, Recording};

/// How far past the recording's end an event may end: the capture reads its end after its
/// last event's.
const END_SLACK_NS: u64 = 1_000_000_000;

impl Recording {
    /// Refuses what no recording holds: a file, event or page fault named that the trace does
    /// not have, events out of issue order, a time past the recording's end, a file's size or
    /// extent past the largest file offset.
    pub(super) fn check(&self) -> Result<(), BadTrace> {
        self.names_what_it_has()?;
        self.in_order_and_in_time()?;
        let max = i64::MAX as u64;
        if let Some(f) = self
            .footer
            .files
            .iter()
            .find(|f| f.extent > max || f.size_at_open.is_some_and(|s| s > max))
        {
            return Err(BadTrace(format!(
                "file {} is {} bytes, {} of them touched: past the largest file offset",
                f.path,
                f.size_at_open.unwrap_or(0),
                f.extent
            )));
        }
        Ok(())
    }

    /// The files the events, page faults and madvise calls name, and the events the times
    /// off the CPU name, are the trace's.
    fn names_what_it_has(&self) -> Result<(), BadTrace> {
        let files = self.footer.files.len();
        // Events and page faults may name no file (NO_FILE); an madvise is kept only on one.
        let named = (self.events.iter().map(|e| ("an event", e.file, true)))
            .chain((self.footer.faults.iter().flatten()).map(|f| ("a page fault", f.file, true)))
            .chain((self.footer.advice.iter().flatten()).map(|a| ("an madvise", a.file, false)));
        for (what, file, may_be_none) in named {
            if file as usize >= files && !(may_be_none && file == NO_FILE) {
                return Err(BadTrace(format!("{what} names file {file} of {files}")));
            }
        }
        let events = self.events.len() as u64;
        if let Some(g) = self
            .footer
            .gaps
            .iter()
            .flatten()
            .find(|g| g.event >= events)
        {
            return Err(BadTrace(format!(
                "a time off the CPU before event {} of {events}",
                g.event
            )));
        }
        Ok(())
    }

    /// The events in issue order — a replay's threads wait only for calls issued before
    /// theirs, and events out of that order would have two threads wait for each other — and
    /// no event, thread, wake-up, signal, page fault or madvise past the recording's end (a
    /// replay in open mode would wait for it, years on).
    fn in_order_and_in_time(&self) -> Result<(), BadTrace> {
        if let Some(i) = self.events.windows(2).position(|w| w[1].t < w[0].t) {
            return Err(BadTrace(format!(
                "event {} starts at {} ns, before event {i} at {} ns: a trace's events are in \
                 issue order",
                i + 1,
                self.events[i + 1].t,
                self.events[i].t
            )));
        }
        let end = self.footer.duration_ns;
        let late = end.saturating_add(END_SLACK_NS);
        for (i, e) in self.events.iter().enumerate() {
            if e.t.checked_add(e.dur).is_none_or(|done| done > late) {
                return Err(BadTrace(format!(
                    "event {i} runs from {} ns for {} ns, past the recording's end at {end} ns",
                    e.t, e.dur
                )));
            }
        }
        let f = &self.footer;
        if let Some(w) = f.wakes.iter().chain(&f.signals).find(|w| w.t > late) {
            return Err(BadTrace(format!(
                "a wake-up or signal at {} ns, past the recording's end at {end} ns",
                w.t
            )));
        }
        let thread_late = f.threads.iter().find(|th| {
            [Some(th.first_ns), Some(th.last_ns), th.born_ns, th.ended_ns]
                .into_iter()
                .flatten()
                .any(|t| t > late)
        });
        if let Some(th) = thread_late {
            return Err(BadTrace(format!(
                "thread {} starts, calls or ends past the recording's end at {end} ns",
                th.tid
            )));
        }
        let mapped =
            (f.faults.iter().flatten().map(|x| x.t)).chain(f.advice.iter().flatten().map(|a| a.t));
        if let Some(t) = mapped.into_iter().find(|&t| t > late) {
            return Err(BadTrace(format!(
                "a page fault or madvise at {t} ns, past the recording's end at {end} ns"
            )));
        }
        Ok(())
    }
}
