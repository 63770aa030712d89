//! ## What it does
//! Reports an `mpirun` (`mpiexec`, `mpiexec.hydra`, `orterun`) that the head node of a
//! `generic` multinode job runs without the two things Fuzzball's own example gives it
//! (`mpirun -H $MULTINODE_HOSTLIST --mca plm_rsh_agent $MULTINODE_SSH_WRAPPER -np
//! $MULTINODE_TOTAL_SLOTS <program>`):
//! - a host list: `-H`/`--host`, `--hostfile`/`-hostfile`/`--machinefile`/`-machinefile`,
//!   `--default-hostfile`, `-rankfile` (Open MPI), `-hosts`/`-f` (MPICH Hydra), or the variables
//!   that give one (`OMPI_MCA_orte_default_hostfile`, `PRTE_MCA_prte_default_hostfile`,
//!   `HYDRA_HOST_FILE`);
//! - Fuzzball's SSH wrapper as the agent that starts processes on the other nodes:
//!   `--mca plm_rsh_agent $MULTINODE_SSH_WRAPPER` (also `orte_rsh_agent`, Open MPI 5's
//!   `--prtemca plm_ssh_agent`), Hydra's `-launcher-exec`/`-bootstrap-exec`, or the same in the
//!   environment (`OMPI_MCA_plm_rsh_agent`, `PRTE_MCA_plm_ssh_agent`, `HYDRA_LAUNCHER_EXEC`,
//!   `HYDRA_BOOTSTRAP_EXEC`). An agent that is plain `ssh` or `rsh` counts as none. (Open MPI 5
//!   still reads `plm_rsh_agent`, as PRRTE's `plm_ssh_agent`; `orte_rsh_agent` is Open MPI 4's
//!   older name, gone in 5: open-mpi/ompi#12873.)
//!
//! `horovodrun` in such a job is reported too: without `-H`, `--hostfile` or
//! `--host-discovery-script` it starts every process on `localhost` (horovod/runner/launch.py
//! `_run`); with other hosts it reaches them with ssh (it first runs `ssh HOST true` to each,
//! `_check_all_hosts_ssh_successful`), which the SSH wrapper cannot stand in for: a warning,
//! with `mpirun` as Horovod's own "Run Horovod with Open MPI" starts it as the way instead.
//!
//! A launch whose arguments are not all known before the run (`mpirun $MPI_ARGS ...`) is not
//! reported, nor one that `exec_all` starts on every node (each node runs its own), nor a
//! single process without a host list (`mpirun -np 1 ...`, meant for the head node).
//!
//! ## Why is this bad?
//! Without a host list, mpirun knows only the node it runs on: every rank starts on the head
//! node and the other nodes of the job sit idle (or the ranks oversubscribe the head). Without
//! the SSH wrapper, mpirun starts its daemons on the other nodes with `ssh`, which Fuzzball's
//! containers do not serve: the launch fails to reach them.
//!
//! ## Example
//! ```yaml
//! jobs:
//!   nccl-tests:
//!     command: [mpirun, -np, "8", all_reduce_perf, -g, "1"]
//!     resource:
//!       cpu: {cores: 4}
//!       devices: {nvidia.com/gpu: 4}
//!     multinode: {nodes: 2, implementation: generic}
//! ```
//!
//! ## Use instead
//! ```yaml
//! jobs:
//!   nccl-tests:
//!     command: [mpirun, -H, $MULTINODE_HOSTLIST, --mca, plm_rsh_agent, $MULTINODE_SSH_WRAPPER, -np, $MULTINODE_TOTAL_SLOTS, all_reduce_perf, -g, "1"]
//!     resource:
//!       cpu: {cores: 4}
//!       devices: {nvidia.com/gpu: 4}
//!     multinode: {nodes: 2, implementation: generic}
//! ```

use super::{Check, Context, TaskContext};
use crate::launch::Launcher;
use crate::semantics::{Launch, LauncherArgs, Resolved, Site};
use fuzzfile_diagnostics::{Diagnostic, Rule};

declare_rule! {
    pub struct MpirunMissingHosts {
        code: "FZ213",
        name: "mpirun-missing-hosts",
        severity: Error,
        category: Gpu,
        summary: "mpirun in a generic multinode job without the host list or without Fuzzball's SSH wrapper as its launch agent",
        fix: None,
    }
}

/// Options that give mpirun its hosts (Open MPI; MPICH Hydra's `-hosts`, `-f`).
const HOST_FLAGS: &[&str] = &[
    "H",
    "host",
    "hosts",
    "hostfile",
    "machinefile",
    "default-hostfile",
    "rankfile",
    "f",
];
/// Variables that give mpirun its hosts.
const HOST_VARIABLES: &[&str] = &[
    "OMPI_MCA_orte_default_hostfile",
    "OMPI_MCA_prte_default_hostfile",
    "PRTE_MCA_prte_default_hostfile",
    "HYDRA_HOST_FILE",
];
/// MCA parameters naming the program that starts processes on other nodes.
const AGENT_PARAMETERS: &[&str] = &["plm_rsh_agent", "orte_rsh_agent", "plm_ssh_agent"];
/// Hydra options naming it.
const AGENT_FLAGS: &[&str] = &["launcher-exec", "bootstrap-exec"];
/// Variables naming it.
const AGENT_VARIABLES: &[&str] = &[
    "OMPI_MCA_plm_rsh_agent",
    "OMPI_MCA_orte_rsh_agent",
    "PRTE_MCA_plm_ssh_agent",
    "PRTE_MCA_plm_rsh_agent",
    "HYDRA_LAUNCHER_EXEC",
    "HYDRA_BOOTSTRAP_EXEC",
];

/// What an agent value says: `Some(true)` the SSH wrapper (or a program not known to be plain
/// ssh), `Some(false)` plain `ssh`/`rsh`.
fn agent_ok(text: &str, value: &Resolved) -> bool {
    match value {
        Resolved::Literal(v) => {
            let prog = v.split_whitespace().next().unwrap_or("");
            let base = prog.rsplit('/').next().unwrap_or(prog);
            !matches!(base, "ssh" | "rsh" | "")
        }
        _ => !text.trim().is_empty(),
    }
}

/// The agent mpirun is given: `Some(ok)` when it is given.
fn agent(t: &TaskContext<'_>, l: &Launch, m: &LauncherArgs) -> Option<bool> {
    for f in m.flags.iter().rev() {
        let Some(v) = &f.value else { continue };
        if ["mca", "gmca", "prtemca"].contains(&f.name.as_str()) {
            let mut parts = v.text.splitn(2, ' ');
            let (k, val) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
            if AGENT_PARAMETERS.contains(&k) {
                let value = match &v.value {
                    Resolved::Literal(s) => Resolved::Literal(
                        s.split_once(' ')
                            .map_or(String::new(), |(_, b)| b.to_owned()),
                    ),
                    other => other.clone(),
                };
                return Some(agent_ok(val, &value));
            }
        }
        if AGENT_FLAGS.contains(&f.name.as_str()) {
            return Some(agent_ok(&v.text, &v.value));
        }
    }
    for name in AGENT_VARIABLES {
        if let Some(w) = l.env(name) {
            return Some(agent_ok(&w.text, &w.value));
        }
        if let Some(e) = t.facts.env_var(name) {
            return Some(agent_ok(&e.value, &Resolved::Literal(e.value.to_string())));
        }
    }
    None
}

fn has_hosts(t: &TaskContext<'_>, l: &Launch, m: &LauncherArgs) -> bool {
    m.get_any(HOST_FLAGS).is_some()
        || HOST_VARIABLES
            .iter()
            .any(|n| l.env(n).is_some() || t.facts.env_var(n).is_some())
}

/// MPICH Hydra's spelling is in use (`mpiexec.hydra`, `-hosts`, `-ppn`, `-genv`, `-launcher`).
fn hydra(l: &Launch, m: &LauncherArgs) -> bool {
    l.words
        .first()
        .is_some_and(|w| w.text.ends_with("mpiexec.hydra"))
        || m.get_any(&[
            "hosts",
            "ppn",
            "genv",
            "genvlist",
            "launcher",
            "bootstrap",
            "f",
        ])
        .is_some()
}

impl Check for MpirunMissingHosts {
    fn task(&self, _ctx: &Context<'_>, t: &TaskContext<'_>, out: &mut Vec<Diagnostic>) {
        let Some((nodes, nodes_range)) = t.facts.generic_multinode() else {
            return;
        };
        for l in t.launches() {
            if l.exec_all.is_some() || l.site != Site::Head {
                continue;
            }
            let Some(m) = &l.parsed else { continue };
            if m.incomplete {
                continue;
            }
            if l.launcher == Launcher::Horovodrun {
                out.extend(horovodrun(l, nodes, nodes_range));
                continue;
            }
            if l.launcher != Launcher::Mpirun {
                continue;
            }
            let hosts = has_hosts(t, l, m);
            let agent = agent(t, l, m);
            if hosts && agent == Some(true) {
                continue;
            }
            // One process (`mpirun -np 1 prepare.py`) is meant for the node it runs on.
            if !hosts && l.shape.world_size == Some(1) {
                continue;
            }
            let hydra = hydra(l, m);
            let (host_fix, agent_fix) = if hydra {
                (
                    "-hosts $MULTINODE_HOSTLIST",
                    "-launcher ssh -launcher-exec $MULTINODE_SSH_WRAPPER",
                )
            } else {
                (
                    "-H $MULTINODE_HOSTLIST",
                    "--mca plm_rsh_agent $MULTINODE_SSH_WRAPPER",
                )
            };
            let agent_problem = match agent {
                None => "without Fuzzball's SSH wrapper as its launch agent",
                Some(false) => {
                    "with plain ssh as its launch agent instead of Fuzzball's SSH wrapper"
                }
                Some(true) => "",
            };
            let word = l.words.first().map_or(l.range(), |w| w.range);
            let (message, help) = match (hosts, agent_problem.is_empty()) {
                (false, true) => (
                    format!("`{}` without a host list in a job of {nodes} nodes: every rank starts on the head node", l.launcher.name()),
                    format!("give it the job's hosts: `{host_fix}`"),
                ),
                (false, false) => (
                    format!("`{}` without a host list and {agent_problem} in a job of {nodes} nodes: every rank starts on the head node", l.launcher.name()),
                    format!("give it the job's hosts and the wrapper: `{host_fix} {agent_fix}`"),
                ),
                (true, _) => (
                    format!("`{}` {agent_problem}: it cannot start ranks on the other nodes of the job", l.launcher.name()),
                    format!("start remote processes through the wrapper: `{agent_fix}`"),
                ),
            };
            out.push(
                Diagnostic::new(Rule::MpirunMissingHosts, word, message)
                    .with_label(nodes_range, format!("{nodes} nodes"))
                    .with_help(help),
            );
        }
    }
}

/// horovodrun in a generic job: without `-H`, `--hostfile` or a discovery script it runs every
/// process on `localhost` (launch.py `_run`); with other hosts it first checks that it can
/// `ssh HOST true` to each (`_check_all_hosts_ssh_successful`) and starts them over ssh, which
/// neither `--mpi-args` nor the SSH wrapper changes.
fn horovodrun(
    l: &Launch,
    nodes: u64,
    nodes_range: fuzzfile_diagnostics::TextRange,
) -> Option<Diagnostic> {
    let word = l.words.first().map_or(l.range(), |w| w.range);
    // `-H localhost:4` names the head node only.
    let local_only = l
        .setting("hosts")
        .and_then(|s| s.value.literal())
        .is_some_and(|v| {
            v.split(',').all(|h| {
                let host = h.rsplit_once(':').map_or(h, |(h, _)| h).trim();
                matches!(host, "localhost" | "127.0.0.1")
            })
        });
    let hosts = ["hosts", "hostfile", "host-discovery-script"]
        .iter()
        .any(|n| l.setting(n).is_some())
        && !local_only;
    if !hosts {
        if l.shape.world_size == Some(1) {
            return None;
        }
        return Some(
            Diagnostic::new(
                Rule::MpirunMissingHosts,
                word,
                if local_only {
                    format!("`horovodrun` on `localhost` only in a job of {nodes} nodes: every process starts on the head node")
                } else {
                    format!("`horovodrun` without `-H` or `--hostfile` in a job of {nodes} nodes: every process starts on the head node (`localhost:<np>`)")
                },
            )
            .with_label(nodes_range, format!("{nodes} nodes"))
            .with_help("start the processes with mpirun over the job's hosts, as Horovod's \"Run Horovod with Open MPI\" does: `mpirun -H $MULTINODE_HOSTLIST --mca plm_rsh_agent $MULTINODE_SSH_WRAPPER -np $MULTINODE_TOTAL_SLOTS python train.py`"),
        );
    }
    Some(
        Diagnostic::new(
            Rule::MpirunMissingHosts,
            word,
            "`horovodrun` reaches the other hosts with ssh (it runs `ssh HOST true` to each before it starts), not through Fuzzball's SSH wrapper",
        )
        .with_severity(fuzzfile_diagnostics::Severity::Warning)
        .with_label(nodes_range, format!("{nodes} nodes"))
        .with_help("start the processes with mpirun, as Horovod's \"Run Horovod with Open MPI\" does: `mpirun -H $MULTINODE_HOSTLIST --mca plm_rsh_agent $MULTINODE_SSH_WRAPPER -np $MULTINODE_TOTAL_SLOTS python train.py`"),
    )
}
