//! `fuzz`: the node-side front end. `fuzz check` runs the preflight every node does before it
//! executes anything (the same analysis as `fuzzlint`, refusing a Fuzzfile with errors);
//! `fuzz plan` lowers a Fuzzfile to its launch plan (JSON) or draws its job graph.

/// The analysis allocates many small strings; mimalloc makes a large file about 1.7× faster
/// to check than the system allocator (docs/benchmarks.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::{Parser, Subcommand, ValueEnum};
use fuzzfile_check::{render, Severity};
use fuzzfile_plan::{PlanOptions, Refusal};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "fuzz", version, about = "Run Fuzzfiles on nodes")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Preflight: analyse Fuzzfiles as the runner does before executing them; exit 1 on errors.
    Check { files: Vec<PathBuf> },
    /// Lower a Fuzzfile to its launch plan (deterministic JSON), or draw its job graph.
    /// Refused (exit 1) when the Fuzzfile has errors.
    Plan {
        file: PathBuf,
        /// Cluster profile (TOML) to check and lower with.
        #[arg(long, value_name = "PROFILE")]
        cluster: Option<PathBuf>,
        /// Hosts multinode jobs run on, in rank order (default: `<job>-0`, `<job>-1`, …).
        #[arg(long, value_name = "H1,H2,...", value_delimiter = ',')]
        hosts: Option<Vec<String>>,
        /// Write to this file instead of standard output.
        #[arg(short, long, value_name = "PATH")]
        output: Option<PathBuf>,
        #[arg(long, value_enum, default_value_t = Format::Json)]
        format: Format,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    /// The launch plan.
    Json,
    /// The job graph as Graphviz DOT.
    Dot,
    /// The job graph as a Mermaid flowchart.
    Mermaid,
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
        Command::Plan {
            file,
            cluster,
            hosts,
            output,
            format,
        } => plan(&file, cluster.as_deref(), hosts, output.as_deref(), format),
        Command::Check { files } => {
            if files.is_empty() {
                eprintln!("error: name at least one Fuzzfile");
                return ExitCode::from(2);
            }
            let mut failed = false;
            for f in &files {
                let bytes = match std::fs::read(f) {
                    Ok(b) => b,
                    Err(e) => {
                        eprintln!("error: cannot read {}: {e}", f.display());
                        return ExitCode::from(2);
                    }
                };
                let a = fuzzfile_check::analyze_bytes(&bytes);
                let errors: Vec<_> = a
                    .diagnostics
                    .iter()
                    .filter(|d| d.severity == Severity::Error)
                    .collect();
                if errors.is_empty() {
                    println!("{}: ready", f.display());
                } else {
                    failed = true;
                    println!(
                        "{}: {} error{} — not runnable",
                        f.display(),
                        errors.len(),
                        if errors.len() == 1 { "" } else { "s" }
                    );
                    print!("{}", render::plain(&a));
                }
            }
            if failed {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            }
        }
    }
}

fn plan(
    file: &Path,
    cluster: Option<&Path>,
    hosts: Option<Vec<String>>,
    output: Option<&Path>,
    format: Format,
) -> ExitCode {
    if let Some(h) = &hosts {
        if h.is_empty()
            || h.iter()
                .any(|h| h.trim().is_empty() || h.contains(char::is_whitespace))
        {
            eprintln!(
                "error: --hosts takes host names separated by commas, as in --hosts node1,node2"
            );
            return ExitCode::from(2);
        }
    }
    let profile = match cluster {
        Some(p) => {
            let text = match std::fs::read_to_string(p) {
                Ok(t) => t,
                Err(e) => {
                    eprintln!("error: cannot read {}: {e}", p.display());
                    return ExitCode::from(2);
                }
            };
            match fuzzfile_check::profile::parse_profile(&text) {
                Ok(prof) => Some(prof),
                Err(e) => {
                    eprintln!("{}:{}:{}: {}", p.display(), e.line, e.column, e.message);
                    return ExitCode::from(2);
                }
            }
        }
        None => None,
    };
    let bytes = match std::fs::read(file) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("error: cannot read {}: {e}", file.display());
            return ExitCode::from(2);
        }
    };
    let options = fuzzfile_check::Options {
        profile: profile.clone(),
        ..Default::default()
    };
    let a = fuzzfile_check::analyze_bytes_with(&bytes, &options);
    let source = file.file_name().map_or_else(
        || file.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let plan_options = PlanOptions {
        source,
        hosts,
        profile,
    };
    let plan = match fuzzfile_plan::lower(&a, &plan_options) {
        Ok(p) => p,
        Err(Refusal::Errors(_)) => {
            let n = a
                .diagnostics
                .iter()
                .filter(|d| d.severity == Severity::Error)
                .count();
            eprintln!(
                "{}: {n} error{} — not plannable",
                file.display(),
                if n == 1 { "" } else { "s" }
            );
            eprint!("{}", render::plain(&a));
            return ExitCode::from(1);
        }
        Err(r @ Refusal::Hosts { .. }) => {
            eprintln!("error: {r}");
            return ExitCode::from(2);
        }
        Err(r) => {
            eprintln!("{}: {r}", file.display());
            return ExitCode::from(1);
        }
    };
    let text = match format {
        Format::Json => fuzzfile_plan::to_json(&plan),
        Format::Dot => fuzzfile_plan::render::dot(&plan),
        Format::Mermaid => fuzzfile_plan::render::mermaid(&plan),
    };
    match output {
        Some(o) => {
            if let Err(e) = std::fs::write(o, text) {
                eprintln!("error: cannot write {}: {e}", o.display());
                return ExitCode::from(2);
            }
        }
        None => {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            if out
                .write_all(text.as_bytes())
                .and_then(|()| out.flush())
                .is_err()
            {
                return ExitCode::from(2);
            }
        }
    }
    ExitCode::SUCCESS
}
