//! `fuzzlint`: argument parsing and output. The analysis is `fuzzfile_check::analyze`.

mod discover;
mod output;

use clap::{Parser, Subcommand, ValueEnum};
use fuzzfile_check::{Analysis, Rule, Severity};
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
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check Fuzzfiles and directories of Fuzzfiles.
    Check(CheckArgs),
    /// Print the documentation of one rule (by name or code).
    Rule { name: String },
    /// List every rule with its code, default severity and summary.
    Rules,
}

#[derive(clap::Args)]
struct CheckArgs {
    /// Files or directories (default: the current directory). Directories are searched for
    /// `*.fz` files and for `*.yaml`/`*.yml` files with a top-level `version:` and `jobs:` or
    /// `services:`, honouring .gitignore.
    paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// Exit with 1 when a diagnostic at or above this severity is found.
    #[arg(long, value_enum, default_value_t = FailOn::Error)]
    fail_on: FailOn,
    /// Apply fixes in place, keeping everything else byte for byte.
    #[arg(long)]
    fix: bool,
    /// Colour in human output: auto (a terminal without NO_COLOR), always or never.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    color: ColorChoice,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum Format {
    Human,
    Json,
    Sarif,
    Github,
}

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
    pub analysis: Analysis,
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    match cli.command {
        Command::Check(args) => check(args),
        Command::Rule { name } => match Rule::from_name(&name) {
            Some(rule) => {
                println!("# {} ({})\n", rule.name(), rule.code());
                println!(
                    "Default severity: {}. {}\n",
                    rule.default_severity(),
                    rule.summary()
                );
                print!("{}", fuzzfile_check::rules::documentation(rule));
                ExitCode::SUCCESS
            }
            None => {
                let names: Vec<&str> = Rule::ALL.iter().map(|r| r.name()).collect();
                let hint = fuzzfile_model_hint(&name, &names);
                eprintln!("error: no rule is named `{name}`{hint}; `fuzzlint rules` lists them");
                ExitCode::from(2)
            }
        },
        Command::Rules => {
            for r in Rule::ALL {
                println!(
                    "{}  {:<24} {:<8} {}",
                    r.code(),
                    r.name(),
                    r.default_severity(),
                    r.summary()
                );
            }
            ExitCode::SUCCESS
        }
    }
}

fn fuzzfile_model_hint(name: &str, names: &[&str]) -> String {
    names
        .iter()
        .min_by_key(|n| levenshtein(name, n))
        .filter(|n| levenshtein(name, n) <= 3)
        .map(|n| format!(" (did you mean `{n}`?)"))
        .unwrap_or_default()
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            cur.push(
                (prev[j] + usize::from(ca != *cb))
                    .min(prev[j + 1] + 1)
                    .min(cur[j] + 1),
            );
        }
        prev = cur;
    }
    prev[b.len()]
}

fn check(args: CheckArgs) -> ExitCode {
    let paths = if args.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        args.paths.clone()
    };
    let files = match discover::discover(&paths) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let results: Vec<Result<Checked, String>> = files
        .par_iter()
        .map(|path| {
            let bytes =
                std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            let analysis = fuzzfile_check::analyze_bytes(&bytes);
            Ok(Checked {
                path: path.clone(),
                display: discover::display(path),
                analysis,
            })
        })
        .collect();
    let mut checked = Vec::with_capacity(results.len());
    let mut io_errors = false;
    for r in results {
        match r {
            Ok(c) => checked.push(c),
            Err(e) => {
                eprintln!("error: {e}");
                io_errors = true;
            }
        }
    }

    if args.fix {
        let mut fixed_files = 0;
        // `checked` lacks the files that could not be read: each entry carries its own path.
        for c in checked.iter_mut() {
            let path = &c.path;
            if !c.analysis.diagnostics.iter().any(|d| d.fix.is_some()) {
                continue;
            }
            // Apply, re-analyse, repeat: a fix can reveal or enable another.
            let mut text = c.analysis.text.clone();
            for _ in 0..4 {
                let next =
                    fuzzfile_check::apply_fixes(&text, &fuzzfile_check::analyze(&text).diagnostics);
                if next == text {
                    break;
                }
                text = next;
            }
            if text != c.analysis.text {
                if let Err(e) = std::fs::write(path, &text) {
                    eprintln!("error: cannot write {}: {e}", path.display());
                    io_errors = true;
                    continue;
                }
                fixed_files += 1;
                c.analysis = fuzzfile_check::analyze(&text);
            }
        }
        if fixed_files > 0 && args.format == Format::Human {
            eprintln!(
                "fixed {fixed_files} file{}",
                if fixed_files == 1 { "" } else { "s" }
            );
        }
    }

    let color = match args.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::io::stdout().is_terminal()
        }
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let written = match args.format {
        Format::Human => output::human::write(&mut out, &checked, color),
        Format::Json => output::json::write(&mut out, &checked),
        Format::Sarif => output::sarif::write(&mut out, &checked),
        Format::Github => output::github::write(&mut out, &checked),
    };
    let _ = out.flush();
    if let Err(e) = written {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            eprintln!("error: cannot write output: {e}");
            return ExitCode::from(2);
        }
    }
    if io_errors {
        return ExitCode::from(2);
    }
    let threshold = match args.fail_on {
        FailOn::Error => Some(Severity::Error),
        FailOn::Warning => Some(Severity::Warning),
        FailOn::Info => Some(Severity::Info),
        FailOn::Never => None,
    };
    let failed = threshold.is_some_and(|t| {
        checked
            .iter()
            .flat_map(|c| &c.analysis.diagnostics)
            .any(|d| d.severity >= t)
    });
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
