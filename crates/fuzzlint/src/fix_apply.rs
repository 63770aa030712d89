//! `--fix`, `--unsafe-fixes` and `--diff`: which fixes apply, writing them back or printing
//! what they would change, and the "N fixable" line of the human summary.
//!
//! Each fix is safe or unsafe (its rule's `fix_safety`, or its own: `fuzzfile_check::fixes`).
//! `--fix` applies the safe ones; `--unsafe-fixes` adds the unsafe ones (and, without `--fix`,
//! counts them as available); `--diff` prints a unified diff of what `--fix` (with or without
//! `--unsafe-fixes`) would write, writes nothing, and makes the exit status 1 when there would
//! be a change (as ruff's `--diff`).

use crate::{Body, Checked};
use fuzzfile_check::Applicability;
use std::io::Write;

/// What the command line asks of fixes.
#[derive(Clone, Copy, Debug, Default)]
pub struct FixRequest {
    /// `--unsafe-fixes`.
    pub unsafe_fixes: bool,
}

impl FixRequest {
    /// The least safety a fix needs to be applied (or counted as available).
    pub fn required(self) -> Applicability {
        if self.unsafe_fixes {
            Applicability::Unsafe
        } else {
            Applicability::Safe
        }
    }
}

/// What applying fixes did.
#[derive(Default)]
pub struct Outcome {
    /// A file could not be written (or was standard input): exit status 2.
    pub io_errors: bool,
    /// Files written (`--fix`) or that would change (`--diff`).
    pub changed: usize,
}

/// The text `--fix` writes for `c` with fixes at least as safe as `required`; `None` when the
/// file is no fixable kind (a values file).
fn fixed_text(c: &Checked, required: Applicability) -> Option<String> {
    match &c.body {
        Body::Fuzzfile(a) => Some(fuzzfile_check::fixes::fix_until_stable_at(a, required)),
        Body::Template(t) => Some(fuzzfile_check::template::fix_template_at(t, required)),
        Body::Values(_) => None,
    }
}

fn has_fix(c: &Checked, required: Applicability) -> bool {
    c.diagnostics().iter().any(|d| d.fix_at(required).is_some())
}

/// `--fix`: apply the fixes to each file in place and analyse the fixed text again, so that
/// what is reported is what is left.
pub fn apply(checked: &mut [Checked], request: FixRequest) -> Outcome {
    let required = request.required();
    let mut outcome = Outcome::default();
    for c in checked.iter_mut() {
        if !has_fix(c, required) {
            continue;
        }
        let Some(text) = fixed_text(c, required) else {
            continue;
        };
        if text == c.text() {
            continue;
        }
        if c.path.as_os_str() == "-" {
            // Standard input is written nowhere: its fixed text is printed (stdin.rs).
        } else if let Err(e) = std::fs::write(&c.path, &text) {
            eprintln!("error: cannot write {}: {e}", c.path.display());
            outcome.io_errors = true;
            continue;
        }
        outcome.changed += 1;
        let options = &c.settings.options;
        c.body = match &c.body {
            Body::Template(t) => {
                let mut input = t.input.clone();
                input.template.text = text;
                Body::Template(Box::new(fuzzfile_check::template::check(input, options)))
            }
            _ => Body::Fuzzfile(Box::new(fuzzfile_check::analyze_with(&text, options))),
        };
    }
    outcome
}

/// `--diff`: a unified diff of each file `--fix` would change, on `out`; nothing is written.
pub fn diff(
    out: &mut dyn Write,
    checked: &[Checked],
    request: FixRequest,
) -> std::io::Result<Outcome> {
    let required = request.required();
    let mut outcome = Outcome::default();
    for c in checked {
        if !has_fix(c, required) {
            continue;
        }
        let Some(text) = fixed_text(c, required) else {
            continue;
        };
        if text == c.text() {
            continue;
        }
        outcome.changed += 1;
        let name = fuzzfile_check::render::printable(&c.display);
        let diff = similar::TextDiff::from_lines(c.text(), text.as_str());
        write!(
            out,
            "{}",
            diff.unified_diff()
                .context_radius(3)
                .header(&name, &name)
                .missing_newline_hint(true)
        )?;
    }
    Ok(outcome)
}

/// The human summary's fix line: `N fixable with --fix, M more with --unsafe-fixes` (or
/// `N fixable with --fix --unsafe-fixes` once unsafe fixes are asked for); `None` when no
/// finding left has a fix.
pub fn summary(safe: usize, unsafe_: usize, request: FixRequest) -> Option<String> {
    match (safe, unsafe_) {
        (0, 0) => None,
        (n, m) if request.unsafe_fixes => {
            Some(format!("{} fixable with --fix --unsafe-fixes", n + m))
        }
        (n, 0) => Some(format!("{n} fixable with --fix")),
        (0, m) => Some(format!("no fix with --fix alone, {m} with --unsafe-fixes")),
        (n, m) => Some(format!(
            "{n} fixable with --fix, {m} more with --unsafe-fixes"
        )),
    }
}

/// `--diff` on standard output and its exit status: 1 when a file would change, 2 when a file
/// could not be read or the diff not written, else 0.
pub fn diff_and_exit(
    checked: &[Checked],
    request: FixRequest,
    io_errors: bool,
) -> std::process::ExitCode {
    use std::process::ExitCode;
    let mut out = std::io::stdout().lock();
    let result = diff(&mut out, checked, request).and_then(|o| out.flush().map(|()| o));
    match result {
        Ok(_) if io_errors => ExitCode::from(2),
        Ok(o) if o.changed > 0 => ExitCode::from(1),
        Ok(_) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::from(1),
        Err(e) => {
            eprintln!("error: cannot write the diff: {e}");
            ExitCode::from(2)
        }
    }
}

/// The human output's note on a finding's fix: what it does and the command that applies it.
pub fn note(d: &fuzzfile_check::Diagnostic, message: &str) -> String {
    match d.fix_applicability() {
        Some(Applicability::Unsafe) => {
            format!("unsafe fix available: {message} (`fuzzlint check --fix --unsafe-fixes`)")
        }
        _ => format!("fix available: {message} (`fuzzlint check --fix`)"),
    }
}
