//! `fuzzlint` as a library: the command line (`Cli`), `fuzzlint check`'s arguments
//! (`CheckArgs`) and its runner (`check`), which `fuzz check` calls too, so the node preflight
//! and CI read Fuzzfiles the same way. The analysis is `fuzzfile_check::analyze`; the binary
//! (main.rs) only picks the allocator and calls `run`.

pub mod cli_docs;
mod cluster_note;
mod detect;
mod discover;
mod exclusion;
mod fix_apply;
mod fuzzfile_kind;
mod ordered;
mod output;
mod settings;
mod statistics;
mod stdin;
mod templates;

use clap::{Parser, Subcommand, ValueEnum};
use fuzzfile_check::config::{self, Selector};
use fuzzfile_check::template::{FileFindings, TemplateAnalysis};
use fuzzfile_check::{Analysis, Diagnostic, LineCol, LineIndex, Rule};
use fuzzfile_diagnostics::suggest;
use rayon::prelude::*;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "fuzzlint",
    version,
    about = "Check Fuzzfiles: schema, references, the job graph and GPU launch settings"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check Fuzzfiles and directories of Fuzzfiles.
    Check(Box<CheckArgs>),
    /// Print the documentation of one rule (by name or code).
    Rule { name: String },
    /// List every rule with its code, default severity and summary.
    Rules,
    /// Run the language server on stdin/stdout (for editors).
    Server {
        /// Accepted for editors that pass it; stdio is the only transport.
        #[arg(long, hide = true)]
        stdio: bool,
    },
    /// Cluster profiles.
    #[command(subcommand)]
    Profile(ProfileCommand),
    /// Print a JSON Schema (draft-07), as committed in schemas/: fuzzfile (dispatching on
    /// `version`), fuzzfile-v1, fuzzfile-v4, cluster-profile, fuzzlint-config, launch-plan.
    /// Without a name, list the names.
    Schema { name: Option<String> },
    /// Print the shell completion script: `source <(fuzzlint completions bash)`, or save it
    /// where the shell loads completions from (bash, zsh, fish, elvish, powershell).
    Completions {
        #[arg(value_enum)]
        shell: cli_docs::Shell,
    },
}

/// `fuzzlint`'s command line as clap builds it (for completions and the man pages).
pub fn command() -> clap::Command {
    <Cli as clap::CommandFactory>::command()
}

#[derive(Subcommand)]
enum ProfileCommand {
    /// Print the cluster profile (TOML) of the node this runs on: GPUs, fabric and HCAs,
    /// Multi-Node NVLink, IMEX, NCCL defaults. What cannot be seen is left out and said in a
    /// comment.
    Detect {
        /// Read /sys, /proc, /etc and /dev below this directory instead of `/` (for tests).
        #[arg(long, hide = true, value_name = "DIR")]
        root: Option<PathBuf>,
        /// Stop `nvidia-smi` after this many seconds.
        #[arg(long, hide = true, value_name = "SECONDS", default_value_t = 30)]
        tool_timeout: u64,
    },
}

#[derive(clap::Args)]
pub struct CheckArgs {
    /// Files or directories (default: the current directory); `-` is standard input.
    /// Directories are searched for `*.fz` files and for `*.yaml`/`*.yml` files with a
    /// top-level `version:` and `jobs:` or `services:`, honouring .gitignore. Application
    /// templates (`template.yaml`, `*.template.yaml`) are rendered with the values file beside
    /// them (`values.yaml`, `<name>.values.yaml`) and the result is checked, with positions in
    /// the template.
    paths: Vec<PathBuf>,
    /// Values for templates, over the defaults of their values file: a file shaped like
    /// `values.yaml`, or a mapping `Name: value`. May be given several times (later wins).
    #[arg(long = "values", value_name = "FILE")]
    values: Vec<PathBuf>,
    /// A value for templates, over the defaults and `--values`: `--set Cores=8`. May be given
    /// several times.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    set: Vec<String>,
    /// For templates: also check each other choice of each value that has choices (an
    /// `options_input` option, the other boolean), so that a branch no default reaches is
    /// checked too; its findings say which choice reaches them.
    #[arg(long)]
    all_branches: bool,
    /// Output format.
    #[arg(long = "output-format", visible_alias = "format", value_enum, default_value_t = Format::Human)]
    format: Format,
    /// Write the report to this file instead of standard output: whole or not at all (a
    /// temporary file beside it, renamed into place when complete).
    #[arg(long, value_name = "PATH")]
    output_file: Option<std::path::PathBuf>,
    /// The name of what `-` reads from standard input: the fuzzlint.toml found from it
    /// applies, it says whether the text is a template, and messages show it [default: `-`].
    /// Nothing is written to it: `--fix` prints the fixed text on standard output.
    #[arg(long, value_name = "PATH")]
    stdin_filename: Option<std::path::PathBuf>,
    /// Exit with 1 when a diagnostic at or above this severity is found [default: error, or
    /// `fail-on` of fuzzlint.toml].
    #[arg(long, value_enum)]
    fail_on: Option<FailOn>,
    /// Use this config file for every file, instead of the `fuzzlint.toml` found in each
    /// file's directory or above it.
    #[arg(long, value_name = "PATH")]
    config: Option<PathBuf>,
    /// Cluster profile (TOML) for the cluster rules, overriding `cluster` of fuzzlint.toml.
    #[arg(long, value_name = "PATH")]
    cluster: Option<PathBuf>,
    /// Only these rules (names, codes or code prefixes such as `FZ2`, comma-separated),
    /// replacing the selection of fuzzlint.toml.
    #[arg(long, value_name = "RULES", value_delimiter = ',')]
    select: Option<Vec<String>>,
    /// Turn these rules off (names, codes or code prefixes, comma-separated), in addition to
    /// fuzzlint.toml.
    #[arg(long, value_name = "RULES", value_delimiter = ',')]
    ignore: Vec<String>,
    /// Print, for each file, the config file, cluster profile, rules and severities that apply,
    /// and exit.
    #[arg(long)]
    show_settings: bool,
    /// List the files that would be checked, each with its config (and the
    /// `per-file-ignores` that match it), and exit.
    #[arg(long)]
    show_files: bool,
    /// Print how many findings each rule has (code, name, `[*]` when fixable with `--fix`,
    /// `[-]` with `--unsafe-fixes`), most first, instead of the findings; `--format json`
    /// gives them as JSON.
    #[arg(long)]
    statistics: bool,
    /// Print the findings only: no summary, no notes.
    #[arg(short, long, conflicts_with = "verbose")]
    quiet: bool,
    /// Say on standard error which configs apply to how many files, and how long the run took.
    #[arg(short, long)]
    verbose: bool,
    /// Leave out a file named on the command line that `exclude`/`extend-exclude` of
    /// fuzzlint.toml exclude (as a directory walk does); without it, a named file is checked.
    #[arg(long)]
    force_exclude: bool,
    /// Apply fixes in place, keeping everything else byte for byte: the safe ones (a
    /// misspelt key, quoting); unsafe ones too with `--unsafe-fixes`.
    #[arg(long)]
    fix: bool,
    /// Also apply (with `--fix`, `--diff`) or show as available the unsafe fixes: those that
    /// change a resource request, a launcher's arguments, or delete a key.
    #[arg(long)]
    unsafe_fixes: bool,
    /// Print a unified diff of what `--fix` would change, write nothing; exit 1 when there
    /// would be a change.
    #[arg(long)]
    diff: bool,
    /// Colour in human output: auto (a terminal without NO_COLOR), always or never.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    color: ColorChoice,
    /// Show at most this many findings per file in human output (0: all); the other formats
    /// list every finding.
    #[arg(long, value_name = "N", default_value_t = 100)]
    max_diagnostics: usize,
    /// Check a YAML file named on the command line even when it does not look like a Fuzzfile
    /// (a top-level `version: v1|v4` and `jobs:` or `services:`); by default it is skipped, so
    /// that a hook may pass every YAML file. Overrides `skip-non-fuzzfiles` of fuzzlint.toml.
    #[arg(long)]
    no_skip: bool,
}

pub use output::Format;

#[derive(Clone, Copy, ValueEnum)]
enum FailOn {
    Error,
    Warning,
    Info,
    Never,
}

#[derive(Clone, Copy, ValueEnum)]
enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// One checked file.
pub struct Checked {
    /// The path the file was read from (and `--fix` writes to).
    pub path: PathBuf,
    /// The path as shown to the user.
    pub display: String,
    pub body: Body,
    /// The settings it was checked with.
    pub settings: std::sync::Arc<settings::FileSettings>,
    /// Listed with the file it belongs to (a template's values file), not counted as a file
    /// checked on its own.
    pub companion: bool,
}

/// What was found in a file.
pub enum Body {
    Fuzzfile(Box<Analysis>),
    /// An application template: findings at template positions.
    Template(Box<TemplateAnalysis>),
    /// A values file: named on the command line, or a template's, listed when it has
    /// findings.
    Values(FileFindings),
}

impl Checked {
    pub fn text(&self) -> &str {
        match &self.body {
            Body::Fuzzfile(a) => &a.text,
            Body::Template(t) => t.text(),
            Body::Values(f) => &f.text,
        }
    }
    pub fn line_index(&self) -> &LineIndex {
        match &self.body {
            Body::Fuzzfile(a) => &a.line_index,
            Body::Template(t) => &t.line_index,
            Body::Values(f) => &f.line_index,
        }
    }
    pub fn line_col(&self, offset: u32) -> LineCol {
        self.line_index().line_col(self.text(), offset)
    }
    pub fn diagnostics(&self) -> &[Diagnostic] {
        match &self.body {
            Body::Fuzzfile(a) => &a.diagnostics,
            Body::Template(t) => &t.diagnostics,
            Body::Values(f) => &f.diagnostics,
        }
    }
    pub fn diagnostics_mut(&mut self) -> &mut Vec<Diagnostic> {
        match &mut self.body {
            Body::Fuzzfile(a) => &mut a.diagnostics,
            Body::Template(t) => &mut t.diagnostics,
            Body::Values(f) => &mut f.diagnostics,
        }
    }
    /// Whether it counts as a file checked (a template's values file does through its
    /// template).
    pub fn counted(&self) -> bool {
        !self.companion
    }
}

/// `fuzzlint` with the process's arguments: the exit status.
pub fn run() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    match cli.command {
        Command::Check(args) => check(*args),
        Command::Rule { name } => match Rule::lookup(&name) {
            Some(fuzzfile_check::RuleName { rule, alias }) => {
                let mut text = format!("# {} ({})\n\n", rule.name(), rule.code());
                if let Some(old) = alias {
                    text.push_str(&format!(
                        "`{old}` is the former name of `{}`.\n\n",
                        rule.name()
                    ));
                }
                text.push_str(&format!(
                    "Default severity: {}. {}\n\n",
                    rule.default_severity(),
                    rule.summary()
                ));
                text.push_str(&fuzzfile_check::rules::documentation(rule));
                print_to_stdout(&text);
                ExitCode::SUCCESS
            }
            None => {
                let names: Vec<&str> = Rule::ALL.iter().map(|r| r.name()).collect();
                let hint = fuzzfile_model_hint(&name, &names);
                eprintln!("error: no rule is named `{name}`{hint}; `fuzzlint rules` lists them");
                ExitCode::from(2)
            }
        },
        Command::Server { .. } => {
            ExitCode::from(u8::try_from(fuzzfile_server::run_stdio()).unwrap_or(1))
        }
        Command::Profile(ProfileCommand::Detect { root, tool_timeout }) => {
            profile_detect(root, tool_timeout)
        }
        Command::Schema { name } => schema(name.as_deref()),
        Command::Completions { shell } => cli_docs::print_completions(command(), shell),
        Command::Rules => {
            let mut text = String::new();
            for r in Rule::ALL {
                text.push_str(&format!(
                    "{}  {:<24} {:<8} {}\n",
                    r.code(),
                    r.name(),
                    r.default_severity(),
                    r.summary()
                ));
            }
            print_to_stdout(&text);
            ExitCode::SUCCESS
        }
    }
}

/// `fuzzlint profile detect`: exit 0 with the profile, also a partial one; 2 when `--root`
/// is not a directory.
fn profile_detect(root: Option<PathBuf>, tool_timeout: u64) -> ExitCode {
    let probe = match detect::Probe::new(root) {
        Ok(p) => detect::Probe {
            timeout: std::time::Duration::from_secs(tool_timeout),
            ..p
        },
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let text = detect::render(&detect::detect(&probe));
    if let Err(e) = fuzzfile_check::profile::parse_profile(&text) {
        eprintln!("error: the detected profile does not parse ({e}); please report it:\n{text}");
        return ExitCode::from(2);
    }
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: cannot write the profile: {e}");
            ExitCode::from(2)
        }
    }
}

fn fuzzfile_model_hint(name: &str, names: &[&str]) -> String {
    names
        .iter()
        .min_by_key(|n| suggest::levenshtein(name, n))
        .filter(|n| suggest::levenshtein(name, n) <= 3)
        .map(|n| format!(" (did you mean `{n}`?)"))
        .unwrap_or_default()
}

/// The settings of every file, in order: config files, cluster profiles and the flags.
fn resolve_settings(
    args: &CheckArgs,
    files: &[PathBuf],
) -> Result<Vec<std::sync::Arc<settings::FileSettings>>, String> {
    let selectors = |flag: &str, list: &[String]| -> Result<Vec<Selector>, String> {
        list.iter()
            .map(|s| s.trim())
            .filter(|s| !s.is_empty())
            .map(|s| Selector::parse(s).map_err(|e| format!("--{flag}: {e}")))
            .collect()
    };
    let overrides = settings::Overrides {
        config: args.config.clone(),
        cluster: args.cluster.clone(),
        select: match &args.select {
            Some(list) => Some(selectors("select", list)?),
            None => None,
        },
        ignore: selectors("ignore", &args.ignore)?,
        fail_on: args.fail_on.map(|f| match f {
            FailOn::Error => config::FailOn::Error,
            FailOn::Warning => config::FailOn::Warning,
            FailOn::Info => config::FailOn::Info,
            FailOn::Never => config::FailOn::Never,
        }),
    };
    let mut resolver = settings::Resolver::new(overrides)?;
    let stdin_name = args.stdin_filename.as_deref();
    files
        .iter()
        .map(|f| resolver.for_file(stdin::name_of(f, stdin_name)))
        .collect()
}

/// `fuzzlint check` (and `fuzz check`): discover, check, render; the exit status.
pub fn check(args: CheckArgs) -> ExitCode {
    let started = std::time::Instant::now();
    let paths = if args.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        args.paths.clone()
    };
    let excluded = match exclusion::excluder(args.config.clone()) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let files = match discover::discover(&paths, &excluded, args.force_exclude) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let file_settings = match resolve_settings(&args, &files) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    // Named YAML files that are not Fuzzfiles are skipped (fuzzfile_kind), said after the output.
    let (files, file_settings, skipped) =
        fuzzfile_kind::skip_named(files, file_settings, &paths, |s| {
            !args.no_skip && s.skip_non_fuzzfiles
        });
    let skipped_lines = if args.quiet {
        Vec::new()
    } else {
        fuzzfile_kind::report(&skipped, args.verbose)
    };
    // `--show-files`, `--verbose` (statistics.rs).
    if args.show_files {
        let mut out = std::io::stdout().lock();
        let _ = statistics::show_files(&mut out, &files, &file_settings).and_then(|()| out.flush());
        return ExitCode::SUCCESS;
    }
    if args.verbose {
        statistics::say_configs(&file_settings);
    }
    // Remarks about the config files (a rule named by its former name), once each, on
    // standard error; `--show-settings` lists them with each file.
    if !args.show_settings && !args.quiet {
        let mut said = std::collections::HashSet::new();
        for note in file_settings.iter().flat_map(|s| s.notes.iter()) {
            if said.insert(note) {
                eprintln!("{note}");
            }
        }
    }
    if args.show_settings {
        let stdout = std::io::stdout();
        let mut out = stdout.lock();
        for (i, (path, s)) in files.iter().zip(&file_settings).enumerate() {
            if i > 0 {
                let _ = writeln!(out);
            }
            let name = stdin::name_of(path, args.stdin_filename.as_deref());
            let _ = settings::show(&mut out, &discover::display(name), s);
        }
        let _ = out.flush();
        return ExitCode::SUCCESS;
    }
    // `--values` and `--set` without a template to apply them to are a mistake (exit 2), as for
    // `fuzz plan` and `fuzz run`.
    if (!args.values.is_empty() || !args.set.is_empty())
        && !files
            .iter()
            .any(|f| templates::is_template(stdin::name_of(f, args.stdin_filename.as_deref())))
    {
        eprintln!("error: --values and --set are for application templates (`template.yaml`, `NAME.template.yaml`); none of the files checked is named as one");
        return ExitCode::from(2);
    }
    // `--values` files are read once, for every template.
    let mut override_files = Vec::new();
    for p in &args.values {
        match fuzzfile_io::read_to_string(p, fuzzfile_io::Kind::FUZZFILE) {
            Ok(text) => override_files.push(fuzzfile_check::template::Source {
                display: discover::display(p),
                text,
            }),
            Err(e) => {
                eprintln!("error: --values: {e}");
                return ExitCode::from(2);
            }
        }
    }
    let template_args = templates::Args {
        override_files,
        set: args.set.clone(),
        all_branches: args.all_branches,
    };
    // One file of the list: it and the values files listed with it (a template's), or why it
    // could not be read.
    let check_file = |i: usize| -> Result<Vec<Checked>, String> {
        let (path, settings) = (&files[i], &file_settings[i]);
        // What it is read from (`-`: standard input) and the name it is known by.
        let name = stdin::name_of(path, args.stdin_filename.as_deref());
        if templates::is_template(name) {
            return templates::check(path, name, settings, &template_args);
        }
        if templates::is_values(name) {
            return templates::check_values(path, name, settings);
        }
        let bytes =
            fuzzfile_io::read(path, fuzzfile_io::Kind::FUZZFILE).map_err(|e| e.to_string())?;
        let analysis = fuzzfile_check::analyze_owned_bytes_with(bytes, &settings.options);
        Ok(vec![Checked {
            path: path.clone(),
            display: discover::display(name),
            body: Body::Fuzzfile(Box::new(analysis)),
            settings: std::sync::Arc::clone(settings),
            companion: false,
        }])
    };
    let run = Run {
        args: &args,
        skipped_lines: &skipped_lines,
        started,
    };
    if args.fix || args.diff || args.statistics {
        // These need every file's analysis at once: `--fix` analyses fixed files again and
        // prints standard input's fixed text before the report, `--diff` compares texts,
        // `--statistics` counts per rule over all files. They keep the whole set.
        let results = (0..files.len()).into_par_iter().map(check_file).collect();
        return whole_set(&run, results);
    }
    let might_need_cluster_note = file_settings.iter().any(|s| cluster_note::possible_with(s));
    streamed(&run, files.len(), &check_file, might_need_cluster_note)
}

/// What both ways of checking need of the run.
struct Run<'a> {
    args: &'a CheckArgs,
    /// The named files skipped, said after the report.
    skipped_lines: &'a [String],
    started: std::time::Instant,
}

impl Run<'_> {
    fn fix_request(&self) -> fix_apply::FixRequest {
        fix_apply::FixRequest {
            unsafe_fixes: self.args.unsafe_fixes,
        }
    }

    fn max_per_file(&self) -> usize {
        match self.args.max_diagnostics {
            0 => usize::MAX,
            n => n,
        }
    }

    fn color(&self, destination: output::sink::Destination<'_>) -> bool {
        match self.args.color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                    && match destination {
                        output::sink::Destination::Stdout => std::io::stdout().is_terminal(),
                        output::sink::Destination::Stderr => std::io::stderr().is_terminal(),
                        output::sink::Destination::File(_) => false,
                    }
            }
        }
    }

    fn render_options(&self, destination: output::sink::Destination<'_>) -> output::RenderOptions {
        output::RenderOptions {
            format: self.args.format,
            color: self.color(destination),
            max_per_file: self.max_per_file(),
            cwd: std::env::current_dir().ok(),
        }
    }

    /// The human summary (and fix line), unless `--quiet` or another format.
    fn summary(&self) -> output::emit::Summary {
        if self.args.format == Format::Human && !self.args.quiet {
            output::emit::Summary::Shown(self.fix_request())
        } else {
            output::emit::Summary::Omitted
        }
    }

    /// JUnit's head counts every test case: its files' parts wait for the last file.
    fn hold(&self) -> output::emit::Hold {
        if self.args.format == Format::Junit {
            output::emit::Hold::UntilEnd
        } else {
            output::emit::Hold::Stream
        }
    }

    /// The cluster note of a machine format goes to standard error: their standard output is
    /// what their readers parse.
    fn note_on_stderr(&self, note: Option<&cluster_note::ClusterNote>) {
        if self.args.format != Format::Human && !self.args.quiet {
            if let Some(note) = note {
                eprintln!("{note}");
            }
        }
    }

    /// The end of the run: the skipped files said, and the exit status.
    fn exit(
        &self,
        written: Result<(), output::sink::SinkError>,
        counted_files: usize,
        io_errors: bool,
        failed: bool,
    ) -> ExitCode {
        for line in self.skipped_lines {
            eprintln!("{line}");
        }
        if let Err(e) = written {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
        if self.args.verbose {
            statistics::say_time(counted_files, self.started);
        }
        if io_errors {
            ExitCode::from(2)
        } else if failed {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        }
    }
}

/// The report written as the files are checked: each file's part is written on the thread that
/// checked it, in the chosen format, and its analysis dropped at once; the parts are written in
/// the files' order, each as soon as those before it are (ordered.rs, output/emit.rs).
///
/// The human format's cluster note comes first and counts every file: when a file can have the
/// finding (`might_need_cluster_note`: no cluster profile and the rule on), the files' parts,
/// rendered, wait until every file is checked (their analyses do not), so the note can be
/// written above them. JUnit's parts wait too (its head counts every test case). Every other
/// report is written as the files are checked.
fn streamed(
    run: &Run<'_>,
    count: usize,
    check_file: &(dyn Fn(usize) -> Result<Vec<Checked>, String> + Sync),
    might_need_cluster_note: bool,
) -> ExitCode {
    use output::emit::{Emitter, GroupError, Hold};
    let args = run.args;
    let destination = match &args.output_file {
        Some(path) => output::sink::Destination::File(path),
        None => output::sink::Destination::Stdout,
    };
    let options = run.render_options(destination);
    let note_first = args.format == Format::Human && !args.quiet && might_need_cluster_note;
    let hold = if note_first {
        Hold::UntilEnd
    } else {
        run.hold()
    };
    let render = |i: usize| -> Result<Vec<output::EntryReport>, GroupError> {
        let list = check_file(i).map_err(GroupError::Read)?;
        list.into_iter()
            .map(|mut c| {
                // The run's note replaces the file's `cluster-profile-missing` finding.
                let had_finding = cluster_note::take_from(&mut c);
                let mut entry = output::render_entry(&c, &options).map_err(GroupError::Render)?;
                entry.cluster_profile_missing = had_finding;
                // `c`, the analysis, is dropped here.
                Ok(entry)
            })
            .collect()
    };
    let mut totals = output::emit::Totals::default();
    let written = output::sink::deliver(destination, |out| {
        let mut emitter = Emitter::new(out, args.format, run.max_per_file(), hold, run.summary());
        ordered::in_list_order(count, render, |handed| match handed {
            ordered::Handed::Next(group) => emitter.push(group),
            ordered::Handed::Waiting => emitter.flush(),
        });
        let note = cluster_note::note_for(emitter.totals().cluster_profile_missing);
        let preamble = note
            .filter(|_| note_first)
            .map(|note| format!("{note}\n\n"));
        let (all, result) = emitter.finish(preamble.as_deref());
        totals = all;
        result
    });
    let note = cluster_note::note_for(totals.cluster_profile_missing);
    run.note_on_stderr(note.as_ref());
    run.exit(written, totals.files, totals.read_errors, totals.failed)
}

/// `--fix`, `--diff` and `--statistics`: every file checked, then the report.
fn whole_set(run: &Run<'_>, results: Vec<Result<Vec<Checked>, String>>) -> ExitCode {
    let args = run.args;
    let mut checked: Vec<Checked> = Vec::with_capacity(results.len());
    let mut io_errors = false;
    let mut listed_values = std::collections::HashSet::new();
    for r in results {
        match r {
            // A values file shared by several templates (`--values`) is listed once.
            Ok(list) => checked.extend(
                list.into_iter()
                    .filter(|c| !c.companion || listed_values.insert(c.display.clone())),
            ),
            Err(e) => {
                eprintln!("error: {e}");
                io_errors = true;
            }
        }
    }

    let fix_request = run.fix_request();
    if args.diff {
        // What `--fix` would change, as a diff (fix_apply); nothing else is printed or written.
        return fix_apply::diff_and_exit(&checked, fix_request, io_errors);
    }
    if args.fix {
        // Apply, re-analyse, repeat: a fix can reveal or enable another. Only fixes whose
        // result parses and has no new error are applied.
        let outcome = fix_apply::apply(&mut checked, fix_request);
        io_errors |= outcome.io_errors;
        let fixed_files = outcome.changed;
        if fixed_files > 0 && args.format == Format::Human && !args.quiet {
            eprintln!(
                "fixed {fixed_files} file{}",
                if fixed_files == 1 { "" } else { "s" }
            );
        }
    }
    // `--fix` of standard input prints its (fixed) text on standard output; the report goes
    // to standard error then, or to `--output-file` (stdin.rs).
    let stdin_fixed = if args.fix {
        stdin::fixed_output(&checked)
    } else {
        None
    };
    if let Some(text) = stdin_fixed {
        let mut out = std::io::stdout().lock();
        if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
            if e.kind() != std::io::ErrorKind::BrokenPipe {
                eprintln!("error: cannot write the fixed text of standard input: {e}");
                io_errors = true;
            }
        }
    }
    let destination = match (&args.output_file, stdin_fixed) {
        (Some(path), _) => output::sink::Destination::File(path),
        (None, Some(_)) => output::sink::Destination::Stderr,
        (None, None) => output::sink::Destination::Stdout,
    };

    // GPU jobs checked without a cluster profile: one note for the run, not a finding per file.
    let cluster_note = cluster_note::take(&mut checked);
    run.note_on_stderr(cluster_note.as_ref());
    let options = run.render_options(destination);
    let written = output::sink::deliver(destination, |out| {
        if args.statistics {
            return statistics::write(out, &checked, args.format == Format::Json);
        }
        if let (Some(note), Format::Human, false) = (&cluster_note, args.format, args.quiet) {
            writeln!(out, "{note}\n")?;
        }
        let entries: Vec<std::io::Result<output::EntryReport>> = checked
            .par_iter()
            .map(|c| output::render_entry(c, &options))
            .collect();
        let mut emitter = output::emit::Emitter::new(
            out,
            args.format,
            run.max_per_file(),
            run.hold(),
            run.summary(),
        );
        // A file and the values files listed with it (companions follow their template).
        let mut group: Vec<output::EntryReport> = Vec::new();
        for entry in entries {
            let entry = entry?;
            if !entry.companion && !group.is_empty() {
                emitter.push(Ok(std::mem::take(&mut group)));
            }
            group.push(entry);
        }
        if !group.is_empty() {
            emitter.push(Ok(group));
        }
        emitter.finish(None).1
    });
    let counted_files = checked.iter().filter(|c| c.counted()).count();
    // Each file fails by its own `fail-on`.
    let failed = checked.iter().any(|c| {
        c.settings
            .fail_on
            .threshold()
            .is_some_and(|t| c.diagnostics().iter().any(|d| d.severity >= t))
    });
    // The analyses are not freed one allocation at a time: the process ends with this status
    // (fuzzlint's and fuzz's main return it), and freeing them was 8 % of checking 1,500 files.
    std::mem::forget(checked);
    run.exit(written, counted_files, io_errors, failed)
}

/// The launch plan's schema belongs to `fuzz plan`; it is generated and kept current by
/// `fuzzfile_plan`'s own drift test, so the committed file is what is printed.
const LAUNCH_PLAN_SCHEMA: &str = include_str!("../../../schemas/launch-plan.schema.json");

/// Writes `text` to standard output. A reader that stopped reading (`fuzzlint rule X | head`)
/// ends the output quietly, as it does for a C tool: `print!` would panic on the closed pipe.
fn print_to_stdout(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

/// `fuzzlint schema [NAME]`: print one schema, or list the names.
fn schema(name: Option<&str>) -> ExitCode {
    use fuzzfile_check::json_schema;
    let mut names: Vec<&str> = json_schema::all_names().iter().map(|(n, _)| *n).collect();
    names.push("launch-plan");
    let Some(name) = name else {
        print_to_stdout(&names.iter().map(|n| format!("{n}\n")).collect::<String>());
        return ExitCode::SUCCESS;
    };
    if name == "launch-plan" {
        print_to_stdout(LAUNCH_PLAN_SCHEMA);
        return ExitCode::SUCCESS;
    }
    match json_schema::by_name(name) {
        Some(v) => {
            print_to_stdout(&schema_text(&v));
            ExitCode::SUCCESS
        }
        None => {
            let hint = suggest::did_you_mean(name, names.iter().copied())
                .map(|s| format!("; did you mean `{s}`?"))
                .unwrap_or_default();
            eprintln!(
                "error: no schema named `{name}`{hint}\n  schemas: {}",
                names.join(", ")
            );
            ExitCode::from(2)
        }
    }
}

/// A schema as committed in schemas/ (pretty JSON, final newline).
fn schema_text(v: &serde_json::Value) -> String {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_default();
    s.push('\n');
    s
}
