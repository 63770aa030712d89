//! The report's writer: the head of the document, each file's part ([`EntryReport`]) in the
//! files' order as it is handed over, then the end (the closing of the document, the human
//! summary), with the counts the end and the exit status need.
//!
//! Parts are written as they come ([`Hold::Stream`]) or kept until the end
//! ([`Hold::UntilEnd`]): JUnit's head counts every test case, and the human format's cluster
//! note, which comes first, counts every file without a profile. Kept parts are the rendered
//! bytes, never the analyses.

use super::{gitlab, human, json, junit, preflight, sarif, EntryReport, Format};
use crate::fix_apply::{self, FixRequest};
use std::collections::{HashMap, HashSet};
use std::io::{self, Write};

/// Whether the files' parts are written as they come or kept until the end.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Hold {
    Stream,
    UntilEnd,
}

/// The human format's last lines.
#[derive(Clone, Copy, Debug)]
pub enum Summary {
    /// `--quiet`, and every other format.
    Omitted,
    /// The summary line and the fix line (`N fixable with --fix`).
    Shown(FixRequest),
}

/// Why a file has no part in the report.
#[derive(Debug)]
pub enum GroupError {
    /// It could not be read: said on standard error, exit status 2.
    Read(String),
    /// Its part could not be written.
    Render(io::Error),
}

/// The whole run's counts.
#[derive(Default, Debug)]
pub struct Totals {
    /// Files checked (a template's values file counts through its template).
    pub files: usize,
    /// Findings by severity: `[info, warning, error]`.
    pub severity_counts: [usize; 3],
    pub safe_fixes: usize,
    pub unsafe_fixes: usize,
    /// A file fails by its own `fail-on`.
    pub failed: bool,
    /// Files whose `cluster-profile-missing` finding was taken out for the run's note.
    pub cluster_profile_missing: usize,
    /// A file could not be read.
    pub read_errors: bool,
    /// JUnit's test cases (a file without findings is one).
    junit_cases: usize,
}

pub struct Emitter<'w> {
    out: io::BufWriter<&'w mut dyn Write>,
    format: Format,
    max_per_file: usize,
    hold: Hold,
    summary: Summary,
    held: Vec<Vec<EntryReport>>,
    head_written: bool,
    /// Whether the document's array (json, sarif, gitlab) has an element yet.
    any_element: bool,
    /// Values files listed so far: one shared by several templates (`--values`) is listed
    /// once.
    listed_values: HashSet<String>,
    /// `gitlab`: identical findings so far (path, rule, message; flagged text), for the rank
    /// of a path listed twice.
    fingerprint_ranks: HashMap<(String, String), usize>,
    /// `sarif`: the files listed, for `artifacts`.
    artifacts: Vec<String>,
    totals: Totals,
    /// The first write that failed; nothing more is written after it, but the files are still
    /// counted (the exit status says whether one fails).
    failure: Option<io::Error>,
}

impl<'w> Emitter<'w> {
    pub fn new(
        out: &'w mut dyn Write,
        format: Format,
        max_per_file: usize,
        hold: Hold,
        summary: Summary,
    ) -> Self {
        Emitter {
            out: io::BufWriter::new(out),
            format,
            max_per_file,
            hold,
            summary,
            held: Vec::new(),
            head_written: false,
            any_element: false,
            listed_values: HashSet::new(),
            fingerprint_ranks: HashMap::new(),
            artifacts: Vec::new(),
            totals: Totals::default(),
            failure: None,
        }
    }

    /// The run's counts so far.
    pub fn totals(&self) -> &Totals {
        &self.totals
    }

    /// The next file of the list: its part and those of the values files listed with it
    /// (companions follow their template), or why it has none.
    pub fn push(&mut self, group: Result<Vec<EntryReport>, GroupError>) {
        let mut group = match group {
            Ok(g) => g,
            Err(GroupError::Read(message)) => {
                eprintln!("error: {message}");
                self.totals.read_errors = true;
                return;
            }
            Err(GroupError::Render(e)) => {
                self.failure.get_or_insert(e);
                return;
            }
        };
        let listed = &mut self.listed_values;
        group.retain(|e| !e.companion || listed.insert(e.display.clone()));
        for e in &mut group {
            let t = &mut self.totals;
            if !e.companion {
                t.files += 1;
            }
            for (all, n) in t.severity_counts.iter_mut().zip(e.severity_counts) {
                *all += n;
            }
            t.safe_fixes += e.safe_fixes;
            t.unsafe_fixes += e.unsafe_fixes;
            t.failed |= e.fails;
            t.cluster_profile_missing += usize::from(e.cluster_profile_missing);
            t.junit_cases += e.findings().max(1);
            match self.format {
                Format::Sarif => self.artifacts.push(e.display.clone()),
                Format::Gitlab => rank_fingerprints(&mut self.fingerprint_ranks, e),
                _ => {}
            }
        }
        match self.hold {
            Hold::UntilEnd => self.held.push(group),
            Hold::Stream => {
                let written = self.head().and_then(|()| self.group(&group));
                self.keep_failure(written);
            }
        }
    }

    /// Nothing more is ready: what is written so far reaches the reader.
    pub fn flush(&mut self) {
        if self.failure.is_none() {
            let flushed = self.out.flush();
            self.keep_failure(flushed);
        }
    }

    /// The end: `preamble` (the cluster note, with its blank line) when the parts were kept,
    /// the kept parts, then the end of the document; the counts, or the first write that
    /// failed.
    pub fn finish(mut self, preamble: Option<&str>) -> (Totals, io::Result<()>) {
        if self.hold == Hold::UntilEnd {
            let written = preamble
                .map_or(Ok(()), |p| self.write(p.as_bytes()))
                .and_then(|()| self.head());
            self.keep_failure(written);
            for group in std::mem::take(&mut self.held) {
                let written = self.group(&group);
                self.keep_failure(written);
            }
        }
        let written = self
            .head()
            .and_then(|()| self.tail())
            .and_then(|()| self.out.flush());
        self.keep_failure(written);
        let result = match self.failure.take() {
            Some(e) => Err(e),
            None => Ok(()),
        };
        (std::mem::take(&mut self.totals), result)
    }

    fn keep_failure(&mut self, written: io::Result<()>) {
        if let Err(e) = written {
            self.failure.get_or_insert(e);
        }
    }

    fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        if self.failure.is_some() {
            return Ok(());
        }
        self.out.write_all(bytes)
    }

    /// The document's head, once.
    fn head(&mut self) -> io::Result<()> {
        if self.head_written || self.failure.is_some() {
            return Ok(());
        }
        self.head_written = true;
        match self.format {
            Format::Json => self.out.write_all(json::HEAD.as_bytes()),
            Format::Sarif => sarif::head(&mut self.out),
            Format::Gitlab => self.out.write_all(b"["),
            Format::Junit => {
                let findings = self.totals.severity_counts.iter().sum();
                junit::head(&mut self.out, self.totals.junit_cases, findings)
            }
            _ => Ok(()),
        }
    }

    fn group(&mut self, group: &[EntryReport]) -> io::Result<()> {
        if self.failure.is_some() {
            return Ok(());
        }
        match self.format {
            Format::Preflight => {
                let parts: Vec<&EntryReport> = group.iter().collect();
                preflight::group(&mut self.out, &parts, self.max_per_file)
            }
            Format::Json | Format::Sarif | Format::Gitlab => {
                for e in group.iter().filter(|e| !e.fragment.is_empty()) {
                    // The first element of the array has no comma before it.
                    let skip = usize::from(!self.any_element);
                    self.any_element = true;
                    self.out.write_all(&e.fragment[skip..])?;
                }
                Ok(())
            }
            _ => group
                .iter()
                .try_for_each(|e| self.out.write_all(&e.fragment)),
        }
    }

    /// The end of the document, or the human summary.
    fn tail(&mut self) -> io::Result<()> {
        if self.failure.is_some() {
            return Ok(());
        }
        let any = self.any_element;
        let t = &self.totals;
        match self.format {
            Format::Json => json::tail(&mut self.out, any, t.files),
            Format::Sarif => sarif::tail(&mut self.out, any, &self.artifacts),
            Format::Gitlab => gitlab::tail(&mut self.out, any),
            Format::Junit => junit::tail(&mut self.out),
            Format::Human => match self.summary {
                Summary::Omitted => Ok(()),
                Summary::Shown(request) => {
                    human::summary(&mut self.out, t.files, t.severity_counts)?;
                    // "N fixable with --fix, M more with --unsafe-fixes" (fix_apply).
                    match fix_apply::summary(t.safe_fixes, t.unsafe_fixes, request) {
                        Some(line) => writeln!(self.out, "{line}"),
                        None => Ok(()),
                    }
                }
            },
            _ => Ok(()),
        }
    }
}

/// Ranks `e`'s identical findings after those of the same path listed before, writing again
/// a fingerprint whose rank is not the one it was written with (its file's own).
fn rank_fingerprints(ranks: &mut HashMap<(String, String), usize>, e: &mut EntryReport) {
    for slot in std::mem::take(&mut e.fingerprints) {
        let key = (slot.identity, slot.flagged);
        let rank = ranks.get(&key).copied().unwrap_or(0);
        if rank != slot.local_rank {
            let fingerprint = gitlab::fingerprint_of(&key.0, &key.1, rank);
            let end = slot.offset + gitlab::FINGERPRINT_DIGITS;
            if let Some(digits) = e.fragment.get_mut(slot.offset..end) {
                digits.copy_from_slice(&fingerprint.as_bytes()[..gitlab::FINGERPRINT_DIGITS]);
            }
        }
        ranks.insert(key, rank + 1);
    }
}
