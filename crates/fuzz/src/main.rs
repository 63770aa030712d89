//! `fuzz`: the node-side front end. Today it runs the preflight every node does before it
//! executes anything: the same analysis as `fuzzlint`, refusing a Fuzzfile with errors.

use clap::{Parser, Subcommand};
use fuzzfile_check::{render, Severity};
use std::path::PathBuf;
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
