//! `fuzz`: the node-side front end. `fuzz check` runs the preflight every node does before it
//! executes anything (the same analysis as `fuzzlint`, refusing a Fuzzfile with errors);
//! `fuzz plan` lowers a Fuzzfile to its launch plan (JSON) or draws its job graph;
//! `fuzz run` executes a Fuzzfile or a plan on this node (`fuzz_runner`).

// The system allocator: `fuzz run` starts a tokio runtime's threads, and mimalloc's eager
// arena commit per thread costs a trivial job several milliseconds (docs/benchmarks.md,
// "A trivial job"); `fuzzlint`, which analyses many files, keeps mimalloc.

use clap::{Parser, Subcommand, ValueEnum};
use fuzzfile_check::{render, Severity};
use fuzzfile_plan::{PlanOptions, Refusal};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

mod template;

/// The most findings shown for one file (`fuzzlint check --format json` lists them all).
const MAX_SHOWN: usize = 100;

/// `fuzz`'s command line: `fuzz check` is `fuzzlint check` with the preflight report as its
/// default output format.
fn command() -> clap::Command {
    <Cli as clap::CommandFactory>::command().mut_subcommand("check", |c| {
        c.mut_arg("format", |a| a.default_value("preflight"))
    })
}

#[derive(Parser)]
#[command(name = "fuzz", version, about = "Run Fuzzfiles on nodes")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Preflight: `fuzzlint check` itself (the same files, fuzzlint.toml, `--cluster`, output
    /// formats and exit status), reporting each file as `ready` or `not runnable` by default
    /// (`--output-format preflight`). Application templates (`template.yaml`,
    /// `*.template.yaml`) are rendered first, as `fuzz run` renders them.
    Check(Box<fuzzlint::CheckArgs>),
    /// Print the shell completion script: `source <(fuzz completions bash)`, or save it where
    /// the shell loads completions from (bash, zsh, fish, elvish, powershell).
    Completions {
        #[arg(value_enum)]
        shell: fuzzlint::cli_docs::Shell,
    },
    /// Lower a Fuzzfile to its launch plan (deterministic JSON), or draw its job graph.
    /// Refused (exit 1) when the Fuzzfile has errors.
    Plan {
        file: PathBuf,
        /// Cluster profile (TOML) to check and lower with.
        #[arg(long, value_name = "PROFILE")]
        cluster: Option<PathBuf>,
        /// Hosts multinode jobs run on, in rank order: `h1,h2`, Slurm's `gpu[01-04]`
        /// (default: `<job>-0`, `<job>-1`, …).
        #[arg(long, value_name = "H1,H2,...")]
        hosts: Option<String>,
        /// The hosts, from an Open MPI or MPICH hostfile.
        #[arg(long, value_name = "FILE", conflicts_with = "hosts")]
        hostfile: Option<PathBuf>,
        /// Write to this file instead of standard output.
        #[arg(short, long, value_name = "PATH")]
        output: Option<PathBuf>,
        #[arg(long, value_enum, default_value_t = Format::Json)]
        format: Format,
        #[command(flatten)]
        template: template::TemplateArgs,
    },
    /// Run a Fuzzfile (or a launch plan, `.json`) on this node. Exit 0 when every job
    /// finished, 1 when one failed, timed out or was skipped, 2 for a plan it cannot run,
    /// 3 when every job finished but a log or the events file could not be written in full
    /// (a full disk: the summary warns which), 130 after SIGINT (143 after SIGTERM).
    ///
    /// Every process a job starts ends with it, also one that left its process group: a
    /// cgroup v2 per instance where the node offers one, else the runner is a child subreaper
    /// and ends what carries the instance's FUZZ_INSTANCE_ID (FUZZ_PROCESS_TRACKING=subreaper
    /// forces that way, =cgroup requires a cgroup).
    Run(Box<RunArgs>),
    /// Draw a run from its events file (`fuzz run --events FILE`) as a timeline: one row per
    /// job, task, node and transfer (waiting, starting, running; a mark at its end or
    /// failure). `-o run.svg` writes an SVG picture, `-o run.html` a page with the picture
    /// and a table; without `-o`, the SVG goes to standard output. Exit 2 for an events file
    /// it cannot read.
    Report {
        events: PathBuf,
        /// `.svg` or `.html`.
        #[arg(short, long, value_name = "PATH")]
        output: Option<PathBuf>,
    },
}

#[derive(clap::Args)]
struct RunArgs {
    /// A Fuzzfile, or a plan written by `fuzz plan` (a `.json` file).
    file: PathBuf,
    /// Where instances run. `auto`: apptainer (or singularity), then podman, then docker if
    /// installed (and, for docker, its engine reachable), else `host`; it says which.
    #[arg(long, value_enum, default_value_t = RuntimeArg::Auto)]
    runtime: RuntimeArg,
    /// The run directory (`{workdir}`: volumes, files, logs); default: a new directory
    /// under the system's temporary directory.
    #[arg(long, value_name = "DIR")]
    workdir: Option<PathBuf>,
    /// Keep the ephemeral volume directories after the run.
    #[arg(long)]
    keep: bool,
    /// Write events as JSON lines to this file.
    #[arg(long, value_name = "FILE")]
    events: Option<PathBuf>,
    /// Seconds between SIGTERM and SIGKILL when a job times out or the run is stopped.
    #[arg(long, value_name = "SECONDS", default_value_t = 5.0)]
    grace: f64,
    /// The host directory of a volume (required for persistent volumes); repeatable.
    #[arg(long = "volume", value_name = "NAME=PATH")]
    volumes: Vec<String>,
    /// Secret values (TOML: a table per scope, `[user]` then `name = "value"`); they are
    /// redacted from every log, event and message.
    #[arg(long, value_name = "FILE")]
    secrets: Option<PathBuf>,
    /// Extra CA certificates (PEM) to trust for `https://` ingress.
    #[arg(long, value_name = "FILE")]
    ca_file: Option<PathBuf>,
    /// Seconds a service may take to pass its readiness probe before it fails.
    #[arg(long, value_name = "SECONDS", default_value_t = 300)]
    ready_timeout: u64,
    /// The live status line: `auto` shows it when standard error is a terminal.
    #[arg(long, value_enum, default_value_t = WhenArg::Auto)]
    status: WhenArg,
    /// The nodes of multinode jobs, head first: `h1,h2` (also `h1:4,h2:4`, slots ignored:
    /// the plan's `procs-per-node` decides). Default: a hostfile, else the Slurm allocation
    /// (`SLURM_JOB_NODELIST`), else the job's own node names.
    #[arg(long, value_name = "HOSTS")]
    hosts: Option<String>,
    /// The nodes, from an Open MPI or MPICH hostfile.
    #[arg(long, value_name = "FILE", conflicts_with = "hosts")]
    hostfile: Option<PathBuf>,
    /// How multinode jobs reach the other nodes: `local` (this machine), `ssh` (OpenSSH,
    /// batch mode), `slurm` (`srun --overlap -w HOST`). Default: `slurm` inside a Slurm
    /// allocation, else `ssh` when hosts are given, else `local`.
    #[arg(long, value_enum)]
    launcher: Option<LauncherArg>,
    /// `ssh -F FILE` for the ssh launcher.
    #[arg(long, value_name = "FILE")]
    ssh_config: Option<PathBuf>,
    /// With `--launcher local`: each host is a network namespace of that name.
    #[arg(long)]
    local_netns: bool,
    /// Forward every node's output to the job's, as `MULTINODE_WRAPPER_FORWARD_STREAMS=1` does.
    #[arg(long)]
    forward_streams: bool,
    /// Seconds every node of a multinode job has to start before the job fails.
    #[arg(long, value_name = "SECONDS", default_value_t = 120)]
    startup_timeout: u64,
    /// This node has N GPUs (indices 0..N-1), whatever nvidia-smi or /proc/driver/nvidia
    /// say. Instances get GPUs of their own within them.
    #[arg(long, value_name = "N")]
    gpus: Option<u64>,
    /// This node has N cores for jobs (default: the CPUs this process may use, within its
    /// cgroup's cpu.max).
    #[arg(long, value_name = "N")]
    cores: Option<u64>,
    /// This node has SIZE of memory for jobs, written as in a Fuzzfile: `64GiB`, `512MB`
    /// (default: MemTotal, within the cgroup's memory.max).
    #[arg(long, value_name = "SIZE")]
    memory: Option<String>,
    /// Cluster profile (TOML): the Fuzzfile is checked and lowered with it, and its
    /// `gpus-per-node` is this node's GPU count unless --gpus is given.
    #[arg(long, value_name = "PROFILE")]
    cluster: Option<PathBuf>,
    #[command(flatten)]
    template: template::TemplateArgs,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum LauncherArg {
    Local,
    Ssh,
    Slurm,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum WhenArg {
    Auto,
    Always,
    Never,
}

#[derive(Clone, Copy, ValueEnum)]
enum RuntimeArg {
    Auto,
    Host,
    Apptainer,
    Podman,
    Docker,
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
    // The multinode helpers call this binary back (see fuzz_runner::multinode).
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("__exec-all") => {
            let code = fuzz_runner::multinode::exec_all_main(&args[2..]);
            return ExitCode::from(code.clamp(0, 255) as u8);
        }
        Some(fuzz_runner::sandbox::EXEC_ARG) => {
            let code = fuzz_runner::sandbox::exec_main(&args[2..]);
            return ExitCode::from(code.clamp(0, 255) as u8);
        }
        Some(fuzz_runner::bridge::BRIDGE_ARG) => {
            let code = fuzz_runner::bridge::bridge_main(&args[2..]);
            return ExitCode::from(code.clamp(0, 255) as u8);
        }
        // The man pages (docs/man/), generated from this command line for the drift test.
        Some("__man-pages") => {
            let dir = args
                .get(2)
                .map_or_else(|| PathBuf::from("."), PathBuf::from);
            return match fuzzlint::cli_docs::write_man_pages(command(), &dir) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!(
                        "error: cannot write the man pages to {}: {e}",
                        dir.display()
                    );
                    ExitCode::from(2)
                }
            };
        }
        Some("__multinode-ssh") => {
            let code = fuzz_runner::multinode::wrapper_main(&args[2..]);
            return ExitCode::from(code.clamp(0, 255) as u8);
        }
        _ => {}
    }
    let cli = match command()
        .try_get_matches()
        .and_then(|m| <Cli as clap::FromArgMatches>::from_arg_matches(&m))
    {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    match cli.command {
        Command::Completions { shell } => fuzzlint::cli_docs::print_completions(command(), shell),
        Command::Plan {
            file,
            cluster,
            hosts,
            hostfile,
            output,
            format,
            template,
        } => match host_names(hosts.as_deref(), hostfile.as_deref(), None) {
            Ok(hosts) => plan(
                &file,
                cluster.as_deref(),
                hosts,
                output.as_deref(),
                format,
                &template,
            ),
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::from(2)
            }
        },
        Command::Run(args) => run(*args),
        Command::Report { events, output } => report(&events, output.as_deref()),
        Command::Check(args) => fuzzlint::check(*args),
    }
}

fn run(args: RunArgs) -> ExitCode {
    use fuzz_runner::{RunError, RuntimeKind};
    let RunArgs {
        file,
        runtime,
        workdir,
        keep,
        events,
        grace,
        volumes: volume_args,
        secrets,
        ca_file,
        ready_timeout,
        status,
        hosts,
        hostfile,
        launcher,
        ssh_config,
        local_netns,
        forward_streams,
        startup_timeout,
        gpus,
        cores,
        memory,
        cluster,
        template,
    } = args;
    if let Some(e) = template::misplaced_args(&file, &template) {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    let profile = match cluster.as_deref().map(read_profile) {
        Some(Ok(p)) => Some(p),
        Some(Err(code)) => return code,
        None => None,
    };
    let max = fuzz_runner::node::MAX_GPUS;
    if let Some(n) = gpus.filter(|n| *n > max) {
        eprintln!("error: --gpus {n}: a node has at most {max} GPUs here");
        return ExitCode::from(2);
    }
    if let Some(n) = profile
        .as_ref()
        .and_then(|p| p.gpus_per_node)
        .filter(|n| *n > max)
    {
        eprintln!("error: --cluster: gpus-per-node = {n}: a node has at most {max} GPUs here");
        return ExitCode::from(2);
    }
    if cores == Some(0) {
        eprintln!("error: --cores takes the number of cores of this node, 1 or more");
        return ExitCode::from(2);
    }
    let memory_bytes = match memory.as_deref().map(fuzzfile_model::values::parse_size) {
        Some(Ok(b)) if b.bytes > 0 => Some(b.bytes),
        Some(Ok(_)) => {
            eprintln!("error: --memory takes the memory of this node, more than 0 (as in `64GiB`)");
            return ExitCode::from(2);
        }
        Some(Err(e)) => {
            eprintln!("error: --memory: {e}");
            return ExitCode::from(2);
        }
        None => None,
    };
    let node_declared = fuzz_runner::node::Declared {
        gpus,
        cores,
        memory_bytes,
        profile_gpus: profile.as_ref().and_then(|p| p.gpus_per_node),
    };
    let slurm_nodes = std::env::var("SLURM_JOB_NODELIST").ok();
    let host_list = match host_names(
        hosts.as_deref(),
        hostfile.as_deref(),
        slurm_nodes.as_deref(),
    ) {
        Ok(h) => h,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let launcher = match launcher {
        Some(LauncherArg::Local) => fuzz_runner::multinode::Launcher::Local,
        Some(LauncherArg::Ssh) => fuzz_runner::multinode::Launcher::Ssh,
        Some(LauncherArg::Slurm) => fuzz_runner::multinode::Launcher::Slurm,
        None if slurm_nodes.is_some() && hosts.is_none() && hostfile.is_none() => {
            fuzz_runner::multinode::Launcher::Slurm
        }
        None if host_list.is_some() => fuzz_runner::multinode::Launcher::Ssh,
        None => fuzz_runner::multinode::Launcher::Local,
    };
    if local_netns && launcher != fuzz_runner::multinode::Launcher::Local {
        eprintln!("error: --local-netns goes with --launcher local");
        return ExitCode::from(2);
    }
    let file = file.as_path();
    if !grace.is_finite() || grace < 0.0 {
        eprintln!("error: --grace takes a number of seconds, 0 or more");
        return ExitCode::from(2);
    }
    let mut volumes = std::collections::BTreeMap::new();
    for v in &volume_args {
        match v.split_once('=') {
            Some((name, path)) if !name.is_empty() && !path.is_empty() => {
                if volumes
                    .insert(name.to_owned(), PathBuf::from(path))
                    .is_some()
                {
                    eprintln!("error: --volume {name}=…: given twice");
                    return ExitCode::from(2);
                }
            }
            _ => {
                eprintln!("error: --volume takes NAME=PATH (the volume's key in the Fuzzfile and a directory on this node), not `{v}`");
                return ExitCode::from(2);
            }
        }
    }
    let secrets = match secrets {
        None => Default::default(),
        Some(path) => match fuzz_runner::secrets::read_secrets(&path) {
            Ok((values, notes)) => {
                for n in notes {
                    eprintln!("warning: {n}");
                }
                values
            }
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        },
    };
    // A plan spells out every instance and is many times its Fuzzfile: `.json` gets the plan
    // limit.
    let kind = if file.extension().is_some_and(|x| x == "json") {
        fuzzfile_io::Kind::PLAN
    } else {
        fuzzfile_io::Kind::FUZZFILE_OR_PLAN
    };
    let text = match fuzzfile_io::read(file, kind) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    // A template (by its name) starts with `{{` as often as not, and is no plan.
    let is_json = !template::is_template(file)
        && (file.extension().is_some_and(|x| x == "json")
            || text.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{'));
    if is_json && (hosts.is_some() || hostfile.is_some()) {
        eprintln!(
            "error: a launch plan names its hosts already; give --hosts to `fuzz plan` instead"
        );
        return ExitCode::from(2);
    }
    let plan = if template::is_template(file) {
        // An application template: rendered with its values, then lowered as below.
        let options = fuzzfile_check::Options {
            profile: profile.clone(),
            ..Default::default()
        };
        let t = match template::render(file, text, &template, &options) {
            Ok(t) => t,
            Err(template::Refused(message)) => {
                eprint!("{message}");
                return ExitCode::from(2);
            }
        };
        eprint!("{}", t.template_notes());
        match fuzzfile_plan::lower(&t.analysis, &plan_options(file, host_list, profile)) {
            Ok(mut p) => {
                t.plan_positions_in_template(&mut p);
                p
            }
            Err(Refusal::Errors(_)) => {
                eprintln!(
                    "{}: the rendered Fuzzfile has errors — not runnable",
                    file.display()
                );
                eprint!("{}", t.describe(MAX_SHOWN));
                return ExitCode::from(2);
            }
            Err(r) => {
                eprintln!("error: {}: {r}", file.display());
                return ExitCode::from(2);
            }
        }
    } else if is_json {
        match fuzz_runner::read_plan(&String::from_utf8_lossy(&text)) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("error: {}: {e}", file.display());
                return ExitCode::from(2);
            }
        }
    } else {
        let a = fuzzfile_check::analyze_bytes_with(
            &text,
            &fuzzfile_check::Options {
                profile: profile.clone(),
                ..Default::default()
            },
        );
        let source = file.file_name().map_or_else(
            || file.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        match fuzzfile_plan::lower(
            &a,
            &PlanOptions {
                source,
                hosts: host_list,
                profile,
            },
        ) {
            Ok(p) => p,
            Err(Refusal::Errors(_)) => {
                eprintln!("{}: errors — not runnable", file.display());
                eprint!("{}", render::plain_capped(&a, MAX_SHOWN));
                return ExitCode::from(2);
            }
            Err(r) => {
                eprintln!("error: {}: {r}", file.display());
                return ExitCode::from(2);
            }
        }
    };
    let runtime = match runtime {
        RuntimeArg::Auto => {
            let multinode = plan
                .jobs
                .iter()
                .chain(&plan.services)
                .any(|t| t.multinode.is_some());
            let (kind, why) = fuzz_runner::detect_runtime();
            // Multinode jobs run in containers through the bridge on podman (docs/multinode.md);
            // on apptainer and docker not yet.
            if multinode && !matches!(kind, RuntimeKind::Host | RuntimeKind::Podman) {
                eprintln!(
                    "fuzz run: runtime host: the plan has multinode jobs, which run in podman containers or on the host runtime ({why} is not used)"
                );
                RuntimeKind::Host
            } else {
                eprintln!("fuzz run: runtime {why}");
                kind
            }
        }
        RuntimeArg::Host => RuntimeKind::Host,
        RuntimeArg::Apptainer => RuntimeKind::Apptainer,
        RuntimeArg::Podman => RuntimeKind::Podman,
        RuntimeArg::Docker => RuntimeKind::Docker,
    };
    use std::io::IsTerminal;
    let options = fuzz_runner::Options {
        runtime: match runtime {
            RuntimeKind::Auto => RuntimeKind::Host,
            RuntimeKind::Host => RuntimeKind::Host,
            other => other,
        },
        grace: std::time::Duration::from_secs_f64(grace),
        keep,
        events,
        volumes,
        secrets,
        ca_file,
        ready_timeout: std::time::Duration::from_secs(ready_timeout),
        status_line: match status {
            WhenArg::Always => true,
            WhenArg::Never => false,
            WhenArg::Auto => std::io::stderr().is_terminal(),
        },
        multinode: fuzz_runner::MultinodeOptions {
            launcher,
            ssh_config,
            local_netns,
            forward_always: forward_streams,
            startup_timeout: std::time::Duration::from_secs(startup_timeout),
            helper_exe: std::env::current_exe().ok(),
        },
        // After the plan: `nvidia-smi` runs only when a job asks for GPUs.
        node: Some(fuzz_runner::node::detect_for(
            &fuzz_runner::node::Probe::default(),
            &node_declared,
            fuzz_runner::node::plan_asks_gpus(&plan),
        )),
    };
    let run_id = fuzz_runner::run_id();
    let run_dir = match workdir {
        Some(d) => d,
        None => std::env::temp_dir().join(format!("fuzz-run-{run_id}")),
    };
    let run_dir = if run_dir.is_absolute() {
        run_dir
    } else {
        match std::env::current_dir() {
            Ok(c) => c.join(run_dir),
            Err(e) => {
                eprintln!("error: cannot read the current directory: {e}");
                return ExitCode::from(2);
            }
        }
    };
    let prepared = match fuzz_runner::prepare(&plan, &options, &run_dir, &run_id) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {}: {e}", file.display());
            return ExitCode::from(2);
        }
    };
    for n in &prepared.notes {
        eprintln!("note: {n}");
    }
    if let Some(n) = &prepared.node {
        eprintln!("fuzz run: node: {}", n.describe());
    }
    eprintln!("fuzz run: {} (run directory {})", run_id, run_dir.display());
    match fuzz_runner::execute(&prepared) {
        Ok(outcome) => {
            let code = outcome.exit_code();
            if outcome.interrupted.is_some() {
                eprintln!("fuzz run: stopped by a signal");
            }
            eprint!("{}", outcome.summary());
            ExitCode::from(code)
        }
        Err(e @ RunError::Plan(_)) | Err(e @ RunError::Io(_)) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

/// The nodes of multinode jobs, head first: `--hosts` (`h1,h2`, `gpu[01-04]:8`; slots are the
/// plan's business and dropped here), else a hostfile, else a Slurm node list.
fn host_names(
    hosts: Option<&str>,
    hostfile: Option<&Path>,
    slurm_nodes: Option<&str>,
) -> Result<Option<Vec<String>>, String> {
    use fuzz_runner::hosts::{expand_nodelist, parse_hosts_arg, read_hostfile};
    let names =
        |v: Vec<fuzz_runner::hosts::HostSpec>| Some(v.into_iter().map(|h| h.name).collect());
    if let Some(h) = hosts {
        return parse_hosts_arg(h)
            .map(names)
            .map_err(|e| format!("--hosts: {e}"));
    }
    if let Some(f) = hostfile {
        return fuzzfile_io::read_to_string(f, fuzzfile_io::Kind::HOSTFILE)
            .map_err(|e| e.reason())
            .and_then(|t| read_hostfile(&t))
            .map(names)
            .map_err(|e| format!("--hostfile {}: {e}", f.display()));
    }
    match slurm_nodes {
        Some(list) => expand_nodelist(list)
            .map(Some)
            .map_err(|e| format!("SLURM_JOB_NODELIST={list}: {e}")),
        None => Ok(None),
    }
}

/// A cluster profile (`--cluster`); the error is said, and the exit code returned.
fn read_profile(p: &Path) -> Result<fuzzfile_check::profile::ClusterProfile, ExitCode> {
    let text = match fuzzfile_io::read_to_string(p, fuzzfile_io::Kind::PROFILE) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: --cluster {}: {}", p.display(), e.reason());
            return Err(ExitCode::from(2));
        }
    };
    fuzzfile_check::profile::parse_profile(&text).map_err(|e| {
        eprintln!("{}:{}:{}: {}", p.display(), e.line, e.column, e.message);
        ExitCode::from(2)
    })
}

fn plan(
    file: &Path,
    cluster: Option<&Path>,
    hosts: Option<Vec<String>>,
    output: Option<&Path>,
    format: Format,
    template_args: &template::TemplateArgs,
) -> ExitCode {
    if let Some(e) = template::misplaced_args(file, template_args) {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    let profile = match cluster.map(read_profile) {
        Some(Ok(p)) => Some(p),
        Some(Err(code)) => return code,
        None => None,
    };
    let bytes = match fuzzfile_io::read(file, fuzzfile_io::Kind::FUZZFILE) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let options = fuzzfile_check::Options {
        profile: profile.clone(),
        ..Default::default()
    };
    let plan_options = plan_options(file, hosts, profile);
    if template::is_template(file) {
        // An application template: its rendered Fuzzfile is lowered, its findings are
        // shown at template positions. The whole plan is lowered first (not streamed as a
        // plain Fuzzfile's JSON is): its positions are mapped to the template through the
        // whole plan as JSON (`plan_positions_in_template`), volumes' transfers included, and
        // a rendered template is an application's workflow, not a generated 10,000-job file.
        let t = match template::render(file, bytes, template_args, &options) {
            Ok(t) => t,
            Err(template::Refused(message)) => {
                eprint!("{message}");
                return ExitCode::from(2);
            }
        };
        eprint!("{}", t.template_notes());
        return match fuzzfile_plan::lower(&t.analysis, &plan_options) {
            Ok(mut p) => {
                t.plan_positions_in_template(&mut p);
                write_plan(&p, output, format)
            }
            Err(Refusal::Errors(_)) => {
                let n = t.errors();
                eprintln!(
                    "{}: {n} error{} in the rendered Fuzzfile — not plannable",
                    file.display(),
                    if n == 1 { "" } else { "s" }
                );
                eprint!("{}", t.describe(MAX_SHOWN));
                ExitCode::from(1)
            }
            Err(r @ Refusal::Hosts { .. }) => {
                eprintln!("error: {r}");
                ExitCode::from(2)
            }
            Err(r) => {
                eprintln!("{}: {r}", file.display());
                ExitCode::from(1)
            }
        };
    }
    let a = fuzzfile_check::analyze_owned_bytes_with(bytes, &options);
    if let Format::Json = format {
        // Lowered and written one job at a time: memory holds the analysis and one job's plan
        // (about 10 KB), not the whole plan. Every refusal is decided before the output is
        // opened: nothing on standard output, no `-o` file.
        return match fuzzfile_plan::streamed(&a, &plan_options) {
            Ok(plan) => write_json_output(output, |out| plan.write_json(out)),
            Err(r) => refused(file, &a, r),
        };
    }
    match fuzzfile_plan::lower(&a, &plan_options) {
        Ok(plan) => write_plan(&plan, output, format),
        Err(r) => refused(file, &a, r),
    }
}

/// Say why `file` has no plan; exit 1, or 2 for `--hosts` (a wrong argument).
fn refused(file: &Path, a: &fuzzfile_check::Analysis, refusal: Refusal) -> ExitCode {
    match refusal {
        Refusal::Errors(_) => {
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
            eprint!("{}", render::plain_capped(a, MAX_SHOWN));
            ExitCode::from(1)
        }
        r @ Refusal::Hosts { .. } => {
            eprintln!("error: {r}");
            ExitCode::from(2)
        }
        r => {
            eprintln!("{}: {r}", file.display());
            ExitCode::from(1)
        }
    }
}

/// The plan's options: its source is the file's name.
fn plan_options(
    file: &Path,
    hosts: Option<Vec<String>>,
    profile: Option<fuzzfile_check::profile::ClusterProfile>,
) -> PlanOptions {
    let source = file.file_name().map_or_else(
        || file.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    PlanOptions {
        source,
        hosts,
        profile,
    }
}

/// Write the plan (or its graph) to `output` or standard output.
fn write_plan(plan: &fuzzfile_plan::Plan, output: Option<&Path>, format: Format) -> ExitCode {
    let text = match format {
        // Streamed: a plan of many jobs is tens of MB of JSON, not held a second time as text.
        Format::Json => {
            return write_json_output(output, |out| fuzzfile_plan::write_json(plan, out))
        }
        Format::Dot => fuzzfile_plan::render::dot(plan),
        Format::Mermaid => fuzzfile_plan::render::mermaid(plan),
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

/// JSON written by `write` straight into `output` (created only now) or standard output,
/// through one buffer.
fn write_json_output(
    output: Option<&Path>,
    write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> ExitCode {
    use std::io::BufWriter;
    match output {
        Some(o) => {
            let written = std::fs::File::create(o).and_then(|f| write(&mut BufWriter::new(f)));
            if let Err(e) = written {
                eprintln!("error: cannot write {}: {e}", o.display());
                return ExitCode::from(2);
            }
        }
        None => {
            if write(&mut BufWriter::new(std::io::stdout().lock())).is_err() {
                return ExitCode::from(2);
            }
        }
    }
    ExitCode::SUCCESS
}

/// `fuzz report EVENTS [-o FILE]`.
fn report(events: &Path, output: Option<&Path>) -> ExitCode {
    let html = match output.and_then(|o| o.extension()).and_then(|e| e.to_str()) {
        None if output.is_none() => false,
        Some("svg") => false,
        Some("html" | "htm") => true,
        _ => {
            eprintln!(
                "error: -o {}: name an .svg or .html file",
                output.map(|o| o.display().to_string()).unwrap_or_default()
            );
            return ExitCode::from(2);
        }
    };
    let tl = match fuzz_runner::report::read_events(events) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let text = if html {
        fuzz_runner::report::html(&tl)
    } else {
        fuzz_runner::report::svg(&tl)
    };
    match output {
        Some(o) => {
            if let Err(e) = std::fs::write(o, text) {
                eprintln!("error: cannot write {}: {e}", o.display());
                return ExitCode::from(2);
            }
        }
        None => print!("{text}"),
    }
    ExitCode::SUCCESS
}
