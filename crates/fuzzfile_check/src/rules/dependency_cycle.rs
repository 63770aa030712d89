//! ## What it does
//! Finds jobs and services that depend on each other in a cycle, through `depends-on` or
//! `requires`, and names the cycle (`a → b → a`). Each cycle is reported once, at the
//! dependency of its first member in the file.
//!
//! ## Why is this bad?
//! None of the members can ever start: Fuzzball refuses to start the workflow.
//!
//! ## Example
//! ```yaml
//! jobs:
//!   prepare:
//!     depends-on: [{name: train, status: FINISHED}]
//!   train:
//!     depends-on: [{name: prepare, status: FINISHED}]
//! ```
//!
//! ## Use instead
//! ```yaml
//! jobs:
//!   prepare: {}
//!   train:
//!     depends-on: [{name: prepare, status: FINISHED}]
//! ```

use super::{Check, Context};
use fuzzfile_diagnostics::{Diagnostic, Rule, TextRange};
use std::collections::{HashMap, VecDeque};

declare_rule! {
    pub struct DependencyCycle {
        code: "FZ021",
        name: "dependency-cycle",
        severity: Error,
        category: Semantic,
        summary: "Jobs and services that depend on each other in a cycle, so the workflow cannot start",
        fix: None,
    }
}

/// For each task (by index), the tasks it waits for, with the range of the reference.
pub type Adjacency = Vec<Vec<(usize, TextRange)>>;

/// Edges of the dependency graph: the task names, and for each task (by index), the tasks it
/// waits for, with the range of the reference.
pub fn edges<'a>(ctx: &Context<'a>) -> (Vec<&'a str>, Adjacency) {
    let names: Vec<&str> = ctx.model.tasks().map(|t| t.name.value.as_str()).collect();
    let index: HashMap<&str, usize> = names.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let mut adj = vec![Vec::new(); names.len()];
    for (i, task) in ctx.model.tasks().enumerate() {
        // `requires` is ignored when `depends-on` is set.
        if task.depends_on_key.is_some() {
            for d in &task.depends_on {
                if let Some(n) = &d.name {
                    if let Some(&j) = index.get(n.value.as_str()) {
                        adj[i].push((j, n.range));
                    }
                }
            }
        } else {
            for n in &task.requires {
                if let Some(&j) = index.get(n.value.as_str()) {
                    adj[i].push((j, n.range));
                }
            }
        }
    }
    (names, adj)
}

/// Strongly connected components (iterative Tarjan), each as a list of node indices.
fn sccs(adj: &[Vec<(usize, TextRange)>]) -> Vec<Vec<usize>> {
    let n = adj.len();
    let mut index = vec![usize::MAX; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut out = Vec::new();
    let mut next = 0;
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        let mut work: Vec<(usize, usize)> = vec![(root, 0)];
        while let Some(&mut (v, ref mut ei)) = work.last_mut() {
            if *ei == 0 && index[v] == usize::MAX {
                index[v] = next;
                low[v] = next;
                next += 1;
                stack.push(v);
                on_stack[v] = true;
            }
            if *ei < adj[v].len() {
                let w = adj[v][*ei].0;
                *ei += 1;
                if index[w] == usize::MAX {
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                let mut comp = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    comp.push(w);
                    if w == v {
                        break;
                    }
                }
                out.push(comp);
            }
        }
    }
    out
}

/// Shortest path from `from` to `to` inside `members`.
fn path(adj: &[Vec<(usize, TextRange)>], members: &[usize], from: usize, to: usize) -> Vec<usize> {
    let mut prev: HashMap<usize, usize> = HashMap::new();
    let mut q = VecDeque::from([from]);
    let mut seen = vec![false; adj.len()];
    seen[from] = true;
    while let Some(v) = q.pop_front() {
        if v == to {
            break;
        }
        for &(w, _) in &adj[v] {
            if members.contains(&w) && !seen[w] {
                seen[w] = true;
                prev.insert(w, v);
                q.push_back(w);
            }
        }
    }
    let mut p = vec![to];
    let mut cur = to;
    while cur != from {
        match prev.get(&cur) {
            Some(&c) => {
                p.push(c);
                cur = c;
            }
            None => break,
        }
    }
    p.reverse();
    p
}

impl Check for DependencyCycle {
    fn file(&self, ctx: &Context<'_>, out: &mut Vec<Diagnostic>) {
        let (names, adj) = edges(ctx);
        for comp in sccs(&adj) {
            let start = *comp.iter().min().unwrap_or(&0);
            let self_loop = adj[start].iter().any(|(w, _)| *w == start);
            if comp.len() < 2 && !self_loop {
                continue;
            }
            // The first edge of `start` that stays in the component.
            let Some(&(next, range)) = adj[start].iter().find(|(w, _)| comp.contains(w)) else {
                continue;
            };
            let mut cycle = vec![start];
            if next != start {
                cycle.extend(path(&adj, &comp, next, start));
            } else {
                cycle.push(start);
            }
            let shown: Vec<&str> = cycle.iter().map(|&i| names[i]).collect();
            let msg = if next == start {
                format!("`{}` depends on itself", names[start])
            } else {
                format!("dependency cycle: {}", shown.join(" → "))
            };
            out.push(
                Diagnostic::new(Rule::DependencyCycle, range, msg).with_help(
                    "none of these can start; remove one of the dependencies to break the cycle",
                ),
            );
        }
    }
}
