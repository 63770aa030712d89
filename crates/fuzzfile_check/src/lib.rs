//! The one analysis every front end calls.
//!
//! [`analyze`] runs the whole pipeline on one text: syntax ([`fuzzfile_syntax`]), model
//! ([`fuzzfile_model`]) and the semantic rules in [`rules`], and returns an [`Analysis`] with
//! every diagnostic sorted into reading order. The CLI, the language server and the runner all
//! call this function, so they see the same findings.
//!
//! Invariants: one file per rule under `rules/`, whose `//!` comment is the rule's
//! documentation, whose `declare_rule!` block is its metadata and whose `Check` hooks are its
//! check (the registry in `rules/mod.rs` runs them all); rules read the model and the tree and
//! never re-parse text; pure functions, no I/O.

pub mod config;
pub mod config_chain;
pub mod devices;
pub mod edits;
pub mod fixes;
pub mod gpu;
pub mod invariants;
pub mod json_schema;
pub mod launch;
pub mod profile;
pub mod recognise;
pub mod render;
pub mod rules;
pub mod semantics;
pub mod settings;
pub mod suppress;
pub mod task_cache;
pub mod template;

pub use fuzzfile_diagnostics::{
    Applicability, Diagnostic, Edit, Fix, LineCol, LineIndex, Rule, RuleCategory, RuleName,
    Severity, TextRange,
};
pub use fuzzfile_model::Fuzzfile;
pub use fuzzfile_syntax::Tree;

/// Everything known about one Fuzzfile.
#[derive(Debug)]
pub struct Analysis {
    /// The text analysed (invalid UTF-8 replaced by U+FFFD).
    pub text: String,
    pub line_index: LineIndex,
    pub tree: Tree,
    pub model: Fuzzfile,
    pub diagnostics: Vec<Diagnostic>,
    /// What each job and service runs, derived once on first use ([`semantics`]; read it
    /// with [`Analysis::facts`]): rules, hover, inlay hints, the launch plan and the runner
    /// read it.
    pub semantics: semantics::Semantics,
    /// The options the text was analysed with (a fixed text is verified with the same).
    pub options: Options,
}

impl Analysis {
    /// The highest severity found, if any.
    pub fn max_severity(&self) -> Option<Severity> {
        self.diagnostics.iter().map(|d| d.severity).max()
    }
    /// What `task` (a job or service of this analysis's model) runs, and with what: derived on
    /// its first use.
    pub fn facts(&self, task: &fuzzfile_model::Task) -> &semantics::TaskFacts {
        self.semantics
            .task_in(&self.text, &self.tree, &self.model, task)
    }
    pub fn line_col(&self, offset: u32) -> LineCol {
        self.line_index.line_col(&self.text, offset)
    }
}

/// What an analysis may know beyond the file itself.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Facts about the cluster the workflow runs on.
    pub profile: Option<profile::ClusterProfile>,
    /// Which rules report and at which severity (from `fuzzlint.toml` and the command line);
    /// the default runs every rule at its default severity.
    pub rules: config::RuleSettings,
    /// Evaluations of shell texts kept from earlier analyses by the caller (the language server
    /// passes one per session); `None` evaluates everything.
    pub evaluations: Option<semantics::EvaluationCache>,
    /// Each task's findings kept from earlier analyses of the same document by the caller (the
    /// language server keeps one per open document): an analysis re-runs the per-task rules of
    /// the tasks an edit can change only. `None` checks every task.
    pub task_findings: Option<task_cache::TaskFindingsCache>,
}

/// Analyse a text.
pub fn analyze(text: &str) -> Analysis {
    analyze_with(text, &Options::default())
}

/// Analyse a text with options (a cluster profile).
pub fn analyze_with(text: &str, options: &Options) -> Analysis {
    let tree = fuzzfile_syntax::parse(text);
    finish(text.to_owned(), tree, options)
}

/// Analyse bytes read from a file; invalid UTF-8 is one `yaml-syntax` error and nothing else.
pub fn analyze_bytes(bytes: &[u8]) -> Analysis {
    analyze_bytes_with(bytes, &Options::default())
}

pub fn analyze_bytes_with(bytes: &[u8], options: &Options) -> Analysis {
    let (text, tree) = fuzzfile_syntax::parse_bytes(bytes);
    finish(text, tree, options)
}

/// [`analyze_bytes_with`] of bytes the caller gives up (a file just read): UTF-8 input becomes
/// the analysis's text without a copy, so the input is held once while it is analysed.
pub fn analyze_owned_bytes_with(bytes: Vec<u8>, options: &Options) -> Analysis {
    let (text, tree) = fuzzfile_syntax::parse_owned_bytes(bytes);
    finish(text, tree, options)
}

fn finish(text: String, tree: Tree, options: &Options) -> Analysis {
    let line_index = LineIndex::new(&text);
    let mut diagnostics: Vec<Diagnostic> = tree
        .errors
        .iter()
        .map(rules::yaml_syntax::to_diagnostic)
        .collect();
    let invalid_utf8 = tree.root().is_none()
        && !tree.errors.is_empty()
        && tree.errors[0].message.starts_with("invalid UTF-8");
    let (model, model_diags) = if invalid_utf8 {
        (Fuzzfile::default(), Vec::new())
    } else {
        fuzzfile_model::build(&text, &tree)
    };
    diagnostics.extend(model_diags);
    let semantics = if invalid_utf8 {
        semantics::Semantics::default()
    } else {
        semantics::Semantics::build_with(&model, options.evaluations.as_ref())
    };
    if !invalid_utf8 {
        let ctx = rules::Context::new(&text, &tree, &model, options.profile.as_ref(), &semantics);
        let kept = options.task_findings.as_ref().and_then(|cache| {
            task_cache::Session::start(
                cache,
                &text,
                &line_index,
                &tree,
                &model,
                options.profile.as_ref(),
            )
        });
        match kept {
            Some(kept) => rules::run_all_reusing(&ctx, kept, &mut diagnostics),
            None => rules::run_all(&ctx, &mut diagnostics),
        }
    }
    if !tree.blanked_lines.is_empty() {
        drop_consequences_of_blanked_lines(&line_index, &tree, &model, &mut diagnostics);
    }
    // Settings and inline suppressions apply to the findings of every layer.
    suppress::apply(&text, &line_index, &tree, options, &mut diagnostics);
    fuzzfile_diagnostics::sort_diagnostics(&mut diagnostics);
    Analysis {
        text,
        line_index,
        tree,
        model,
        diagnostics,
        semantics,
        options: options.clone(),
    }
}

/// After a syntax error, recovery blanks lines; what they held is unknown, so "missing" findings
/// in the mapping that held them are not trustworthy: a job whose `command:` line had the error
/// is not a job without a command. Drop those, keep everything else.
fn drop_consequences_of_blanked_lines(
    index: &LineIndex,
    tree: &Tree,
    model: &Fuzzfile,
    diags: &mut Vec<Diagnostic>,
) {
    let blanked: Vec<u32> = tree
        .blanked_lines
        .iter()
        .map(|&l| index.line_start(l as usize))
        .collect();
    let has_blank = |r: TextRange| blanked.iter().any(|&b| r.start <= b && b <= r.end);
    diags.retain(|d| {
        if !matches!(
            d.rule,
            Rule::NoCommand | Rule::MissingField | Rule::CommandAndScript
        ) {
            return true;
        }
        // The innermost job or service around the finding, else the whole file.
        let scope = model
            .tasks()
            .filter(|t| t.range.touches(d.range.start))
            .map(|t| t.range)
            .min_by_key(|r| r.len());
        match scope {
            Some(r) => !has_blank(TextRange::new(
                r.start,
                r.end.max(next_line_start(index, r.end)),
            )),
            None => false,
        }
    });
}

fn next_line_start(index: &LineIndex, offset: u32) -> u32 {
    index.line_start(index.line_of(offset) + 1)
}

/// Whether YAML text looks like a Fuzzfile: a top-level `version:` written as a Fuzzfile's
/// and `jobs:` or `services:` ([`recognise::recognise`] says why not). Directory discovery,
/// the files named on the command line and the language server use it for `*.yaml`/`*.yml`.
pub fn looks_like_fuzzfile(text: &str) -> bool {
    recognise::recognise(text).is_ok()
}

/// Apply every fix of `diagnostics` (each whole: all its edits or none) that does not overlap
/// an earlier one, without verifying the result. Front ends apply fixes with
/// [`fixes::fix_all`] (`fuzzlint check --fix`, the editor's "fix all"), which keeps only the
/// fixes whose result parses and has no new error.
pub fn apply_fixes(text: &str, diagnostics: &[Diagnostic]) -> String {
    let fixes = fixes::non_overlapping(diagnostics);
    fuzzfile_diagnostics::apply_edits(text, fixes.iter().flat_map(|f| f.edits.iter()))
}

pub use fixes::{fix_all, fix_all_at, fix_until_stable, fix_until_stable_at};
