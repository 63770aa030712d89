//! Placing instances within the node's resources, as Fuzzball places jobs on a node: an
//! instance starts when the cores, memory and GPUs it asks for (`resource.cpu.cores`,
//! `resource.memory.size`, `resource.devices["nvidia.com/gpu"]`, per instance) are free, and
//! holds them until it ends. GPUs are its own, by index (the lowest free ones).
//!
//! Policy: first come, first served, with no overtaking. Instances ask in the order they
//! become ready to start (the plan's order for those ready at once; a task array's tasks in
//! task order); one that does not fit waits, and every instance behind it waits too, even one
//! that would fit. So a big job is never starved by a stream of small ones; the cost is that
//! small ones do not fill the gap (no backfill). An instance that could never fit on the node
//! is refused before anything starts ([`never_fits`]).
//!
//! What the instance gets is passed the way its runtime takes it ([`assign`]):
//! `CUDA_VISIBLE_DEVICES` (with `CUDA_DEVICE_ORDER=PCI_BUS_ID`, so the indices are
//! nvidia-smi's) on the host runtime; for apptainer `--nv` with `NVIDIA_VISIBLE_DEVICES` (read
//! by `--nvccli`) and `CUDA_VISIBLE_DEVICES` in the container; for podman the CDI devices
//! `--device nvidia.com/gpu=N`; for docker `--gpus '"device=N,M"'`. The plan stays
//! node-independent (it asks for all GPUs); the selection is made here at run time.
//!
//! Sources: CUDA C Programming Guide, "CUDA Environment Variables" (`CUDA_VISIBLE_DEVICES`,
//! `CUDA_DEVICE_ORDER=PCI_BUS_ID` numbering devices as nvidia-smi does); NVIDIA Container
//! Toolkit, "Specialized Configurations with Docker" (`--gpus '"device=2,3"'`,
//! `NVIDIA_VISIBLE_DEVICES` as a list of indices) and "Support for Container Device Interface"
//! (`podman run --device nvidia.com/gpu=0`); Apptainer user guide, "GPU Support" (`--nv`
//! binds every GPU, `APPTAINERENV_CUDA_VISIBLE_DEVICES` restricts it; `--nvccli` reads
//! `NVIDIA_VISIBLE_DEVICES`).

use crate::node::{human_bytes, NodeResources};
use std::collections::{BTreeSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// What one instance asks of the node; 0 where the plan asks nothing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Demand {
    pub cores: u64,
    pub memory_bytes: u64,
    pub gpus: u64,
}

impl Demand {
    pub fn is_empty(&self) -> bool {
        *self == Demand::default()
    }

    /// What `n` nodes of a multinode job that all run on this node (the local launcher, which
    /// stands in for several nodes on one machine) take of it: GPUs of their own each (NCCL
    /// refuses two ranks on one GPU), while the cores and memory are shared as by processes of
    /// one machine, so they count once. A three-node test on a two-core machine still runs.
    pub fn for_local_nodes(&self, n: u64) -> Demand {
        Demand {
            gpus: self.gpus.saturating_mul(n),
            ..*self
        }
    }

    /// `2 GPUs, 4 cores, 16 GiB`.
    pub fn describe(&self) -> String {
        let mut v = Vec::new();
        if self.gpus > 0 {
            v.push(format!("{} GPU(s)", self.gpus));
        }
        if self.cores > 0 {
            v.push(format!("{} core(s)", self.cores));
        }
        if self.memory_bytes > 0 {
            v.push(human_bytes(self.memory_bytes));
        }
        if v.is_empty() {
            "nothing".into()
        } else {
            v.join(", ")
        }
    }
}

/// How an instance's runtime takes its GPUs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GpuPassing {
    Host,
    Apptainer,
    Podman,
    Docker,
}

/// Why `demand` can never be met on `node`, or `None`.
pub fn never_fits(demand: &Demand, node: &NodeResources) -> Option<String> {
    let mut why = Vec::new();
    if demand.gpus > 0 && node.gpus.is_empty() {
        why.push(format!(
            "{} GPU(s), and this node has none ({}); if it has GPUs, declare them with --gpus N",
            demand.gpus, node.gpus_source
        ));
    } else if demand.gpus > node.gpus.len() as u64 {
        why.push(format!(
            "{} GPU(s), and this node has {} ({})",
            demand.gpus,
            node.gpus.len(),
            node.gpus_source
        ));
    }
    if demand.cores > node.cores {
        why.push(format!(
            "{} cores, and this node has {} ({}; --cores N declares more)",
            demand.cores, node.cores, node.cores_source
        ));
    }
    if demand.memory_bytes > node.memory_bytes {
        why.push(format!(
            "{} of memory, and this node has {} ({}; --memory SIZE declares more)",
            human_bytes(demand.memory_bytes),
            human_bytes(node.memory_bytes),
            node.memory_source
        ));
    }
    (!why.is_empty()).then(|| why.join("; "))
}

/// Every instance of `jobs` that could never start on `node`, all at once (exit 2 before
/// anything starts). A job that needs a service RUNNING must fit beside that service, which
/// holds its resources while the job runs.
pub fn check_fits(
    jobs: &[crate::prepare::Job],
    node: &NodeResources,
) -> Result<(), crate::RunError> {
    use fuzzfile_plan::{DependencyStatus, TaskKind};
    let mut problems = Vec::new();
    for j in jobs {
        let what = match j.kind {
            TaskKind::Job => "job",
            TaskKind::Service => "service",
        };
        let Some((d, copies)) = j.instances.first().map(|i| (i.demand, i.nodes_here)) else {
            continue;
        };
        if copies > 1 {
            if let Some(why) = never_fits(&d.for_local_nodes(copies), node) {
                problems.push(format!(
                    "{what} `{}` runs its {copies} nodes on this node (the local launcher): together they ask {why}",
                    j.name
                ));
                continue;
            }
        }
        let d = d.for_local_nodes(copies);
        if let Some(why) = never_fits(&d, node) {
            let each = if j.instances.len() > 1 {
                " per instance"
            } else {
                ""
            };
            problems.push(format!("{what} `{}` asks{each} {why}", j.name));
            continue;
        }
        let mut together = d;
        let mut beside = Vec::new();
        for (dep, status) in &j.depends_on {
            if *status != DependencyStatus::Running {
                continue;
            }
            if let Some(s) = jobs.iter().find(|s| &s.name == dep) {
                for i in &s.instances {
                    // A plan's numbers may be anything: no overflow.
                    together.cores = together.cores.saturating_add(i.demand.cores);
                    together.memory_bytes =
                        together.memory_bytes.saturating_add(i.demand.memory_bytes);
                    together.gpus = together.gpus.saturating_add(i.demand.gpus);
                }
                beside.push(format!("`{dep}`"));
            }
        }
        if !beside.is_empty() {
            if let Some(why) = never_fits(&together, node) {
                problems.push(format!(
                    "{what} `{}` runs while the service(s) {} it needs hold their resources: together they ask {why}",
                    j.name,
                    beside.join(", ")
                ));
            }
        }
    }
    if problems.is_empty() {
        return Ok(());
    }
    Err(crate::RunError::Plan(format!(
        "it can never start on this node ({}):\n  {}",
        node.describe(),
        problems.join("\n  ")
    )))
}

struct State {
    free_cores: u64,
    free_memory: u64,
    free_gpus: BTreeSet<u32>,
    /// Tickets of the instances waiting, oldest first.
    queue: VecDeque<u64>,
    next: u64,
}

impl State {
    fn fits(&self, d: &Demand) -> bool {
        d.cores <= self.free_cores
            && d.memory_bytes <= self.free_memory
            && d.gpus <= self.free_gpus.len() as u64
    }

    fn free(&self) -> String {
        format!(
            "free: {} GPU(s), {} core(s), {}",
            self.free_gpus.len(),
            self.free_cores,
            human_bytes(self.free_memory)
        )
    }
}

/// The node's free resources and the queue of instances waiting for them.
pub struct Placer {
    state: Mutex<State>,
    changed: Notify,
}

/// Resources held by a running instance, given back when dropped.
pub struct Grant {
    placer: Arc<Placer>,
    demand: Demand,
    /// The GPUs it got, by index.
    pub gpus: Vec<u32>,
    /// How long it waited for them.
    pub waited: Duration,
}

impl Drop for Grant {
    fn drop(&mut self) {
        if let Ok(mut s) = self.placer.state.lock() {
            s.free_cores += self.demand.cores;
            s.free_memory += self.demand.memory_bytes;
            s.free_gpus.extend(self.gpus.iter().copied());
        }
        self.placer.changed.notify_waiters();
    }
}

/// Takes a waiting instance out of the queue when it stops waiting (granted or cancelled).
struct InQueue<'a> {
    placer: &'a Placer,
    ticket: u64,
}

impl Drop for InQueue<'_> {
    fn drop(&mut self) {
        if let Ok(mut s) = self.placer.state.lock() {
            s.queue.retain(|t| *t != self.ticket);
        }
        self.placer.changed.notify_waiters();
    }
}

impl Placer {
    pub fn new(node: &NodeResources) -> Arc<Placer> {
        Arc::new(Placer {
            state: Mutex::new(State {
                free_cores: node.cores,
                free_memory: node.memory_bytes,
                free_gpus: node.gpus.iter().map(|g| g.index).collect(),
                queue: VecDeque::new(),
                next: 0,
            }),
            changed: Notify::new(),
        })
    }

    /// Waits until `demand` is free and this instance is first in line, then takes it.
    /// `on_wait` is called once, with what is free, when the instance has to wait. Dropping
    /// the future leaves the queue.
    pub async fn acquire(self: &Arc<Self>, demand: Demand, on_wait: impl FnOnce(String)) -> Grant {
        let t0 = Instant::now();
        let ticket = match self.state.lock() {
            Ok(mut s) => {
                let t = s.next;
                s.next += 1;
                s.queue.push_back(t);
                t
            }
            // A poisoned lock: a panic elsewhere; run unplaced rather than never.
            Err(_) => return self.grant(demand, Vec::new(), t0),
        };
        let in_queue = InQueue {
            placer: self,
            ticket,
        };
        let mut on_wait = Some(on_wait);
        loop {
            let notified = self.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let taken = match self.state.lock() {
                Ok(mut s) => {
                    if s.queue.front() == Some(&ticket) && s.fits(&demand) {
                        s.free_cores -= demand.cores;
                        s.free_memory -= demand.memory_bytes;
                        let gpus: Vec<u32> = s
                            .free_gpus
                            .iter()
                            .take(demand.gpus as usize)
                            .copied()
                            .collect();
                        for g in &gpus {
                            s.free_gpus.remove(g);
                        }
                        Some(Ok(gpus))
                    } else {
                        let ahead = s.queue.iter().take_while(|t| **t != ticket).count();
                        let why = if ahead > 0 {
                            format!("{ahead} instance(s) ahead in line; {}", s.free())
                        } else {
                            s.free()
                        };
                        Some(Err(why))
                    }
                }
                Err(_) => None,
            };
            match taken {
                Some(Ok(gpus)) => {
                    // Leaving the queue wakes the next in line.
                    drop(in_queue);
                    return self.grant(demand, gpus, t0);
                }
                Some(Err(why)) => {
                    if let Some(f) = on_wait.take() {
                        f(why);
                    }
                }
                None => {
                    drop(in_queue);
                    return self.grant(demand, Vec::new(), t0);
                }
            }
            notified.await;
        }
    }

    fn grant(self: &Arc<Self>, demand: Demand, gpus: Vec<u32>, t0: Instant) -> Grant {
        Grant {
            placer: self.clone(),
            // What is given back on drop: only what was taken.
            demand: if gpus.len() as u64 == demand.gpus {
                demand
            } else {
                Demand::default()
            },
            gpus,
            waited: t0.elapsed(),
        }
    }
}

/// The GPUs of each node of a multinode job whose nodes all run on this node (the local
/// launcher), in the head's environment: `0,1;2,3` (rank order). `exec_all` and the SSH
/// wrapper give node `r` the `r`-th list as its `CUDA_VISIBLE_DEVICES`.
pub const NODE_GPUS_VAR: &str = "FUZZ_NODE_GPUS";

/// Node `rank`'s GPUs from a [`NODE_GPUS_VAR`] value, when it is well formed.
pub fn node_gpus(value: &str, rank: usize) -> Option<&str> {
    let list = value.split(';').nth(rank)?;
    list.bytes()
        .all(|b| b.is_ascii_digit() || b == b',')
        .then_some(list)
}

/// `0,1`.
pub fn gpu_list(gpus: &[u32]) -> String {
    gpus.iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// The instance's command line and environment with its GPUs: see the module's text. A
/// host instance that asks for no GPUs on a node that has some gets
/// `CUDA_VISIBLE_DEVICES=` (empty: no GPU), as a Fuzzball container without GPUs sees none.
/// A job's own `CUDA_VISIBLE_DEVICES` is left as it wrote it. `per_node`: for a multinode
/// job whose `gpus` are those of several nodes on this node, each node's count: the head
/// gets the first of them and [`NODE_GPUS_VAR`] lists every node's.
pub fn assign(
    argv: &mut Vec<String>,
    env: &mut Vec<(String, String)>,
    passing: GpuPassing,
    gpus: &[u32],
    node_has_gpus: bool,
    per_node: Option<u64>,
) {
    let mut gpus = gpus;
    if let Some(n) = per_node.filter(|n| *n > 0 && (*n as usize) < gpus.len()) {
        let lists: Vec<String> = gpus.chunks(n as usize).map(gpu_list).collect();
        env.push((NODE_GPUS_VAR.to_owned(), lists.join(";")));
        gpus = &gpus[..n as usize];
    }
    let list = gpu_list(gpus);
    let set = |env: &mut Vec<(String, String)>, k: &str, v: &str| {
        if !env.iter().any(|(n, _)| n == k) {
            env.push((k.to_owned(), v.to_owned()));
        }
    };
    match passing {
        GpuPassing::Host => {
            if !gpus.is_empty() || node_has_gpus {
                set(env, "CUDA_VISIBLE_DEVICES", &list);
                set(env, "CUDA_DEVICE_ORDER", "PCI_BUS_ID");
            }
        }
        GpuPassing::Apptainer => {
            if !gpus.is_empty() {
                set(env, "NVIDIA_VISIBLE_DEVICES", &list);
                set(env, "APPTAINERENV_CUDA_VISIBLE_DEVICES", &list);
                set(env, "APPTAINERENV_CUDA_DEVICE_ORDER", "PCI_BUS_ID");
            }
        }
        GpuPassing::Podman => {
            if let Some(k) = argv
                .windows(2)
                .position(|w| w[0] == "--device" && w[1] == "nvidia.com/gpu=all")
            {
                let words: Vec<String> = gpus
                    .iter()
                    .flat_map(|g| ["--device".to_owned(), format!("nvidia.com/gpu={g}")])
                    .collect();
                argv.splice(k..k + 2, words);
            }
        }
        GpuPassing::Docker => {
            if let Some(k) = argv
                .windows(2)
                .position(|w| w[0] == "--gpus" && w[1] == "all")
            {
                if gpus.is_empty() {
                    argv.drain(k..k + 2);
                } else {
                    // docker reads the value as CSV: a list of devices is quoted.
                    argv[k + 1] = format!("\"device={list}\"");
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node::Gpu;

    fn node(gpus: u32, cores: u64, mem: u64) -> NodeResources {
        NodeResources {
            cores,
            memory_bytes: mem,
            gpus: (0..gpus)
                .map(|index| Gpu {
                    index,
                    name: String::new(),
                    memory_bytes: None,
                })
                .collect(),
            cores_source: "test".into(),
            memory_source: "test".into(),
            gpus_source: "test".into(),
        }
    }

    #[test]
    fn never_fits_names_each_shortfall() {
        let n = node(4, 2, 1 << 30);
        let d = Demand {
            gpus: 8,
            cores: 4,
            memory_bytes: 2 << 30,
        };
        let why = never_fits(&d, &n).expect("does not fit");
        assert!(why.contains("8 GPU(s), and this node has 4"), "{why}");
        assert!(why.contains("4 cores, and this node has 2"), "{why}");
        assert!(why.contains("2 GiB of memory"), "{why}");
        assert_eq!(never_fits(&Demand { gpus: 4, ..d }.min_cpu(), &n), None);
        let none = never_fits(
            &Demand {
                gpus: 1,
                ..Demand::default()
            },
            &node(0, 2, 1),
        );
        assert!(none.is_some_and(|w| w.contains("declare them with --gpus N")));
    }

    impl Demand {
        fn min_cpu(self) -> Demand {
            Demand {
                cores: 0,
                memory_bytes: 0,
                ..self
            }
        }
    }

    #[test]
    fn gpus_in_each_runtimes_words() {
        let mut argv: Vec<String> = ["podman", "run", "--device", "nvidia.com/gpu=all", "img"]
            .map(String::from)
            .to_vec();
        let mut env = Vec::new();
        assign(&mut argv, &mut env, GpuPassing::Podman, &[1, 3], true, None);
        assert_eq!(
            argv,
            [
                "podman",
                "run",
                "--device",
                "nvidia.com/gpu=1",
                "--device",
                "nvidia.com/gpu=3",
                "img"
            ]
        );
        let mut argv: Vec<String> = ["docker", "run", "--gpus", "all", "img"]
            .map(String::from)
            .to_vec();
        assign(&mut argv, &mut env, GpuPassing::Docker, &[0, 2], true, None);
        assert_eq!(argv[3], "\"device=0,2\"");
        let mut env = vec![("A".to_owned(), "1".to_owned())];
        assign(&mut argv, &mut env, GpuPassing::Host, &[], true, None);
        assert!(env.contains(&("CUDA_VISIBLE_DEVICES".into(), String::new())));
        let mut env = Vec::new();
        assign(&mut argv, &mut env, GpuPassing::Apptainer, &[2], true, None);
        assert!(env.contains(&("NVIDIA_VISIBLE_DEVICES".into(), "2".into())));
        assert!(env.contains(&("APPTAINERENV_CUDA_VISIBLE_DEVICES".into(), "2".into())));
        // Three nodes of two GPUs each on this node: the head gets the first two.
        let mut env = Vec::new();
        assign(
            &mut argv,
            &mut env,
            GpuPassing::Host,
            &[0, 1, 2, 3, 4, 5],
            true,
            Some(2),
        );
        assert!(env.contains(&("CUDA_VISIBLE_DEVICES".into(), "0,1".into())));
        let all = env
            .iter()
            .find(|(k, _)| k == NODE_GPUS_VAR)
            .map(|(_, v)| v.clone());
        assert_eq!(all.as_deref(), Some("0,1;2,3;4,5"));
        assert_eq!(node_gpus("0,1;2,3;4,5", 2), Some("4,5"));
        assert_eq!(node_gpus("0,1;2,3", 2), None);
        assert_eq!(node_gpus("0;$(reboot)", 1), None);
    }

    #[test]
    fn one_that_stops_waiting_leaves_the_line() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async {
            let p = Placer::new(&node(1, 64, 1 << 40));
            let one = Demand {
                gpus: 1,
                ..Demand::default()
            };
            let held = p.acquire(one, |_| {}).await;
            // Waits for the GPU, then gives up (the run was stopped).
            let gave_up =
                tokio::time::timeout(Duration::from_millis(30), p.acquire(one, |_| {})).await;
            assert!(gave_up.is_err());
            // Whoever comes next is first in line again: it starts once the GPU is free.
            drop(held);
            let next = tokio::time::timeout(Duration::from_secs(1), p.acquire(one, |_| {}))
                .await
                .expect("not held up by the one that left");
            assert_eq!(next.gpus, vec![0]);
        });
    }

    #[test]
    fn first_in_line_goes_first_and_gpus_are_disjoint() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async {
            let p = Placer::new(&node(4, 64, 1 << 40));
            let two = Demand {
                gpus: 2,
                ..Demand::default()
            };
            let a = p.acquire(two, |_| {}).await;
            let b = p.acquire(two, |_| {}).await;
            assert!(a.gpus.iter().all(|g| !b.gpus.contains(g)));
            // A third waits; a fourth asking nothing waits behind it (no overtaking).
            let waited = Arc::new(Mutex::new(Vec::new()));
            let (w3, w4) = (waited.clone(), waited.clone());
            let p3 = p.clone();
            let third = tokio::spawn(async move {
                let g = p3.acquire(two, |why| w3.lock().unwrap().push(why)).await;
                g.gpus.clone()
            });
            let p4 = p.clone();
            let fourth = tokio::spawn(async move {
                p4.acquire(Demand::default(), |why| w4.lock().unwrap().push(why))
                    .await
                    .waited
            });
            tokio::time::sleep(Duration::from_millis(50)).await;
            assert!(!third.is_finished() && !fourth.is_finished());
            let freed = a.gpus.clone();
            drop(a);
            let got = third.await.expect("third");
            assert_eq!(got, freed);
            assert!(fourth.await.expect("fourth") >= Duration::from_millis(50));
            assert_eq!(waited.lock().unwrap().len(), 2);
            drop(b);
        });
    }
}
