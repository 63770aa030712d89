//! ## What it does
//! Checks the values of NCCL environment variables (in jobs, services and `defaults.job`, and
//! those the job's script exports before a launch) against what NCCL accepts, and reports
//! names that are deprecated or do not exist:
//! - `NCCL_DEBUG`: one of `VERSION`, `WARN`, `INFO`, `ABORT`, `TRACE` (any case);
//! - `NCCL_DEBUG_SUBSYS`: a comma list (optionally after `^`) of `INIT`, `COLL`, `P2P`,
//!   `SHM`, `NET`, `GRAPH`, `TUNING`, `ENV`, `ALLOC`, `ALLOC_HOST`, `CALL`, `PROXY`, `NVLS`,
//!   `BOOTSTRAP`, `REG`, `PROFILE`, `RAS`, `DESTROY`, `ALL`;
//! - `NCCL_ALGO` (`Tree`, `Ring`, `CollNet`, `CollNetDirect`, `CollNetChain`, `NVLS`,
//!   `NVLSTree`, `PAT`) and `NCCL_PROTO` (`LL`, `LL128`, `Simple`): comma lists, optionally
//!   after `^`; the per-collective `func:list` form is not checked;
//! - `NCCL_P2P_LEVEL` and `NCCL_NET_GDR_LEVEL`: `LOC`, `NVL`, `NVB`, `C2C`, `PIX`, `PXB`,
//!   `P2C`, `PXN`, `PHB`, `SYS` (exact case) or an old-style number;
//! - `NCCL_*_DISABLE` (0 or 1), `NCCL_MNNVL_ENABLE` and `NCCL_NVLS_ENABLE` (0, 1 or 2),
//!   `NCCL_CUMEM_ENABLE` (0 or 1), and every other `NCCL_*_ENABLE`: an integer;
//! - `NCCL_IB_HCA`: `^` (exclude) must come before `=` (exact match), and a port after `:` is
//!   a number;
//! - `NCCL_SOCKET_IFNAME` that selects the loopback interface `lo` in a multinode job
//!   (warning);
//! - `NCCL_ASYNC_ERROR_HANDLING`, `NCCL_BLOCKING_WAIT`, `NCCL_DESYNC_DEBUG`: deprecated PyTorch
//!   names, renamed `TORCH_NCCL_*` (warning, with a rename fix);
//! - `NCCL_TIMEOUT`: not an NCCL variable at all (warning).
//!
//! Values with `$` (expanded at run time), `secret://` values and empty values are not
//! checked.
//!
//! Fix safety: unsafe where NCCL reads the fixed value but ignored the written one (a debug or
//! path level, `^=`, `1`/`0` for a boolean word), which changes how it runs; the rename of a
//! deprecated PyTorch name is safe (PyTorch reads both names alike).
//!
//! ## Why is this bad?
//! NCCL does not stop on most of these: it ignores an unknown debug level, subsystem or P2P
//! level name, reads a non-integer switch such as `NCCL_IB_DISABLE=true` as `0` (so the switch
//! is off), and with `=^mlx5` looks for a device literally named `^mlx5`. Newer releases
//! refuse unknown `NCCL_ALGO`/`NCCL_PROTO` tokens at initialisation. The old PyTorch names
//! still work but print a deprecation warning and will be removed; `NCCL_TIMEOUT` does
//! nothing.
//!
//! ## Example
//! ```yaml
//! jobs:
//!   train:
//!     env:
//!       - NCCL_DEBUG=VERBOSE
//!       - NCCL_IB_HCA==^mlx5_1
//!       - NCCL_P2P_LEVEL=NVLINK
//!       - NCCL_ASYNC_ERROR_HANDLING=1
//! ```
//!
//! ## Use instead
//! ```yaml
//! jobs:
//!   train:
//!     env:
//!       - NCCL_DEBUG=WARN
//!       - NCCL_IB_HCA=^=mlx5_1
//!       - NCCL_P2P_LEVEL=NVL
//!       - TORCH_NCCL_ASYNC_ERROR_HANDLING=1
//! ```

use super::{Check, Context, TaskContext};
use crate::gpu::{env_get, is_literal, multinode, value_sub_range};
use fuzzfile_diagnostics::{Applicability, Diagnostic, Fix, Rule, Severity, TextRange};
use fuzzfile_model::schema::did_you_mean;
use fuzzfile_model::{EnvVar, TaskKind};

declare_rule! {
    pub struct NcclInvalidValue {
        code: "FZ305",
        name: "nccl-invalid-value",
        severity: Error,
        category: Gpu,
        summary: "An NCCL or PyTorch NCCL environment variable with an invalid or deprecated value or name",
        fix: Sometimes,
        fix_safety: Unsafe,
    }
}

const DEBUG_LEVELS: &[&str] = &["VERSION", "WARN", "INFO", "ABORT", "TRACE"];
const SUBSYSTEMS: &[&str] = &[
    "INIT",
    "COLL",
    "P2P",
    "SHM",
    "NET",
    "GRAPH",
    "TUNING",
    "ENV",
    "ALLOC",
    "ALLOC_HOST",
    "CALL",
    "PROXY",
    "NVLS",
    "BOOTSTRAP",
    "REG",
    "PROFILE",
    "RAS",
    "DESTROY",
    "ALL",
];
const ALGORITHMS: &[&str] = &[
    "Tree",
    "Ring",
    "CollNet",
    "CollNetDirect",
    "CollNetChain",
    "NVLS",
    "NVLSTree",
    "PAT",
];
const PROTOCOLS: &[&str] = &["LL", "LL128", "Simple"];
const PATH_LEVELS: &[&str] = &[
    "LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS",
];
/// Old PyTorch names and their replacements (the language server's completion ranks them
/// last and marks them deprecated from this table).
pub const RENAMED: &[(&str, &str)] = &[
    (
        "NCCL_ASYNC_ERROR_HANDLING",
        "TORCH_NCCL_ASYNC_ERROR_HANDLING",
    ),
    ("NCCL_BLOCKING_WAIT", "TORCH_NCCL_BLOCKING_WAIT"),
    ("NCCL_DESYNC_DEBUG", "TORCH_NCCL_DESYNC_DEBUG"),
];

fn list(items: &[&str]) -> String {
    items
        .iter()
        .map(|i| format!("`{i}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What `strtoll(s, NULL, 0)` returns: the leading integer, or 0.
fn strtoll_prefix(s: &str) -> i64 {
    let t = s.trim_start();
    let (neg, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let (radix, digits) = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        (16, h)
    } else if t.starts_with('0') && t.len() > 1 {
        (8, &t[1..])
    } else {
        (10, t)
    };
    let end = digits
        .find(|c: char| !c.is_digit(radix))
        .unwrap_or(digits.len());
    let v = i64::from_str_radix(&digits[..end], radix).unwrap_or(0);
    if neg {
        -v
    } else {
        v
    }
}

/// The value as a whole integer, the way NCCL writes them (decimal, `0x` hex, `0` octal).
fn whole_integer(s: &str) -> Option<i64> {
    let t = s.strip_prefix(['-', '+']).unwrap_or(s);
    let ok = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        !h.is_empty() && h.chars().all(|c| c.is_ascii_hexdigit())
    } else {
        !t.is_empty() && t.chars().all(|c| c.is_ascii_digit())
    };
    ok.then(|| strtoll_prefix(s))
}

/// Comma-separated tokens of `value` after an optional leading `^`, with their byte offsets;
/// empty tokens are skipped, as NCCL's tokenizer does.
fn tokens(value: &str) -> Vec<(usize, &str)> {
    let start = usize::from(value.starts_with('^'));
    let mut out = Vec::new();
    let mut at = start;
    for t in value[start..].split(',') {
        if !t.is_empty() {
            out.push((at, t));
        }
        at += t.len() + 1;
    }
    out
}

fn error(range: TextRange, message: String) -> Diagnostic {
    Diagnostic::new(Rule::NcclInvalidValue, range, message)
}

/// Unknown tokens of a list variable.
fn check_tokens(text: &str, e: &EnvVar, known: &[&str], what: &str, out: &mut Vec<Diagnostic>) {
    for (at, t) in tokens(&e.value) {
        if known.iter().any(|k| k.eq_ignore_ascii_case(t)) {
            continue;
        }
        let mut d = error(
            value_sub_range(text, e, at, at + t.len()),
            format!("`{t}` is not {what} that `{}` accepts", e.name),
        );
        d = match did_you_mean(t, known.iter().copied()) {
            Some(s) => d.with_help(format!("did you mean `{s}`? valid: {}", list(known))),
            None => d.with_help(format!("valid: {}", list(known))),
        };
        out.push(d);
    }
}

fn check_value(text: &str, e: &EnvVar, out: &mut Vec<Diagnostic>) {
    let v = e.value.as_str();
    let name = e.name.as_str();
    match name {
        "NCCL_DEBUG" => {
            if DEBUG_LEVELS.iter().any(|l| l.eq_ignore_ascii_case(v)) {
                return;
            }
            let mut d = error(
                e.value_range,
                format!("`{v}` is not an NCCL debug level: NCCL ignores it"),
            );
            let suggestion = match v.to_ascii_uppercase().as_str() {
                "WARNING" | "WARNINGS" => Some("WARN"),
                _ => did_you_mean(v, DEBUG_LEVELS.iter().copied()),
            };
            d = match suggestion {
                Some(s) => d.with_help(format!(
                    "did you mean `{s}`? levels: {}",
                    list(DEBUG_LEVELS)
                )),
                None => d.with_help(format!("levels: {}", list(DEBUG_LEVELS))),
            };
            if matches!(v.to_ascii_uppercase().as_str(), "WARNING" | "WARNINGS")
                && e.value_range.slice(text) == v
            {
                d = d.with_fix(Fix::replace("Change to `WARN`", e.value_range, "WARN"));
            }
            out.push(d);
        }
        "NCCL_DEBUG_SUBSYS" => check_tokens(text, e, SUBSYSTEMS, "a debug subsystem", out),
        "NCCL_ALGO" | "NCCL_PROTO" => {
            if v.contains([':', ';']) {
                return; // per-collective form, not checked
            }
            if name == "NCCL_ALGO" {
                check_tokens(text, e, ALGORITHMS, "an algorithm", out);
            } else {
                check_tokens(text, e, PROTOCOLS, "a protocol", out);
            }
        }
        "NCCL_P2P_LEVEL" | "NCCL_NET_GDR_LEVEL" => {
            if PATH_LEVELS.contains(&v) || v.starts_with(|c: char| c.is_ascii_digit()) {
                return;
            }
            let upper = v.to_ascii_uppercase();
            let suggestion = if PATH_LEVELS.contains(&upper.as_str()) {
                Some(upper.as_str())
            } else if upper == "NVLINK" {
                Some("NVL")
            } else {
                did_you_mean(v, PATH_LEVELS.iter().copied())
            };
            let mut d = error(
                e.value_range,
                format!("`{v}` is not a path level: NCCL ignores `{name}` and uses its default"),
            );
            match suggestion {
                Some(s) => {
                    d = d.with_help(format!(
                        "did you mean `{s}`? levels (exact case): {}",
                        list(PATH_LEVELS)
                    ));
                    if e.value_range.slice(text) == v {
                        d = d.with_fix(Fix::replace(format!("Change to `{s}`"), e.value_range, s));
                    }
                }
                None => d = d.with_help(format!("levels (exact case): {}", list(PATH_LEVELS))),
            }
            out.push(d);
        }
        "NCCL_IB_HCA" => {
            if v.starts_with("=^") {
                let r = value_sub_range(text, e, 0, 2);
                let mut d = error(
                    r,
                    "`=^` is not an exclusion: NCCL reads `^` only as the first character, so this looks for a device named like `^…` exactly".to_owned(),
                )
                .with_help("write `^=` (exclude these devices, matching names exactly)");
                if r.len() == 2 && r.slice(text) == "=^" {
                    d = d.with_fix(Fix::replace("Change to `^=`", r, "^="));
                }
                out.push(d);
            }
            let body_start = usize::from(v.starts_with('^'));
            let body_start = body_start + usize::from(v[body_start..].starts_with('='));
            let mut at = body_start;
            for entry in v[body_start..].split(',') {
                if let Some((dev, port)) = entry.split_once(':') {
                    let port = port.split(':').next().unwrap_or("");
                    if !port.starts_with(|c: char| c.is_ascii_digit()) && !dev.is_empty() {
                        let ps = at + dev.len() + 1;
                        out.push(
                            error(
                                value_sub_range(text, e, ps, ps + port.len()),
                                format!("`{dev}:{port}`: the port after `:` is not a number, so NCCL reads port 0 and matches no device"),
                            )
                            .with_help(format!("write a port number (`{dev}:1`), or only the device (`{dev}`)")),
                        );
                    }
                }
                at += entry.len() + 1;
            }
        }
        "NCCL_MNNVL_ENABLE" | "NCCL_NVLS_ENABLE" => check_int(text, e, Some(&[0, 1, 2]), out),
        "NCCL_CUMEM_ENABLE" => check_int(text, e, Some(&[0, 1]), out),
        _ if name.starts_with("NCCL_") && name.ends_with("_DISABLE") => {
            check_int(text, e, Some(&[0, 1]), out)
        }
        _ if name.starts_with("NCCL_") && name.ends_with("_ENABLE") => {
            check_int(text, e, None, out)
        }
        _ => {}
    }
}

/// An integer switch, optionally limited to `allowed`.
fn check_int(text: &str, e: &EnvVar, allowed: Option<&[i64]>, out: &mut Vec<Diagnostic>) {
    let v = e.value.as_str();
    let shown = |a: &[i64]| {
        a.iter()
            .map(|x| format!("`{x}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match whole_integer(v) {
        None => {
            let read = strtoll_prefix(v);
            let mut d = error(
                e.value_range,
                format!("`{v}` is not an integer: NCCL reads `{}` as {read}", e.name),
            );
            let lower = v.to_ascii_lowercase();
            d = match allowed {
                _ if lower == "auto" || lower == "default" => {
                    d.with_help(format!("remove `{}` to keep NCCL's default", e.name))
                }
                Some(a) => d.with_help(format!("write one of {}", shown(a))),
                None => d.with_help("write an integer (`0` or `1`)"),
            };
            let replacement = match v.to_ascii_lowercase().as_str() {
                "true" | "yes" | "on" => Some("1"),
                "false" | "no" | "off" => Some("0"),
                _ => None,
            };
            if let Some(r) = replacement {
                if e.value_range.slice(text) == v
                    && allowed.is_none_or(|a| a.contains(&r.parse().unwrap_or(-1)))
                {
                    d = d.with_fix(Fix::replace(format!("Change to `{r}`"), e.value_range, r));
                }
            }
            out.push(d);
        }
        Some(n) => {
            if let Some(a) = allowed.filter(|a| !a.contains(&n)) {
                out.push(error(
                    e.value_range,
                    format!("`{}` takes {}, not `{v}`", e.name, shown(a)),
                ));
            }
        }
    }
}

/// Deprecated and invented names, whatever their value.
fn check_name(text: &str, e: &EnvVar, siblings: &[EnvVar], out: &mut Vec<Diagnostic>) {
    if let Some((_, new)) = RENAMED.iter().find(|(old, _)| *old == e.name) {
        let both = siblings.iter().any(|s| s.name == *new);
        let message = if both {
            format!(
                "`{}` is the deprecated PyTorch name of `{new}`, which is set as well",
                e.name
            )
        } else {
            format!("`{}` is the deprecated PyTorch name of `{new}`", e.name)
        };
        let mut d = Diagnostic::new(Rule::NcclInvalidValue, e.name_range, message)
            .with_severity(Severity::Warning);
        if both {
            d = d.with_help(format!("remove `{}`: PyTorch reads `{new}`", e.name));
        } else {
            d = d.with_help(format!(
                "PyTorch warns `Environment variable {} is deprecated; use {new} instead`",
                e.name
            ));
            if e.name_range.slice(text) == e.name {
                // PyTorch reads both names alike: a pure rename.
                d = d.with_fix(
                    Fix::replace(format!("Rename to `{new}`"), e.name_range, *new)
                        .with_applicability(Applicability::Safe),
                );
            }
        }
        out.push(d);
    } else if e.name == "NCCL_TIMEOUT" {
        out.push(
            Diagnostic::new(
                Rule::NcclInvalidValue,
                e.name_range,
                "NCCL has no `NCCL_TIMEOUT` variable: it does nothing",
            )
            .with_severity(Severity::Warning)
            .with_help(
                "set the collective timeout in the program (`init_process_group(timeout=timedelta(seconds=1800))`); `NCCL_IB_TIMEOUT` is InfiniBand's transport timeout, not a collective timeout",
            ),
        );
    }
}

impl Check for NcclInvalidValue {
    fn file(&self, ctx: &Context<'_>, out: &mut Vec<Diagnostic>) {
        if let Some(d) = &ctx.model.defaults {
            check_list(ctx.text, &d.env, out);
        }
    }

    fn task(&self, ctx: &Context<'_>, facts: &TaskContext<'_>, out: &mut Vec<Diagnostic>) {
        let task = facts.task;
        check_list(ctx.text, &task.env, out);
        // What the job's shell exports reaches the launched programs as `env` does.
        check_list(ctx.text, &facts.facts.exports, out);
        // The loopback interface across nodes.
        if task.kind != TaskKind::Job || multinode(ctx, task).is_none() {
            return;
        }
        let env = &facts.env;
        let Some(e) = env_get(env, "NCCL_SOCKET_IFNAME").filter(|e| is_literal(e)) else {
            return;
        };
        if e.value.starts_with('^') {
            return;
        }
        let body = usize::from(e.value.starts_with('='));
        let mut at = body;
        for t in e.value[body..].split(',') {
            let name = t.split(':').next().unwrap_or(t);
            if name == "lo" {
                out.push(
                    Diagnostic::new(
                        Rule::NcclInvalidValue,
                        value_sub_range(ctx.text, e, at, at + name.len()),
                        "`NCCL_SOCKET_IFNAME` selects the loopback interface `lo` in a multinode job: other nodes cannot reach it",
                    )
                    .with_severity(Severity::Warning)
                    .with_help("name the interface the nodes reach each other on (`=eth0`, `ib`), or exclude `docker` and `lo` (`^docker,lo`)"),
                );
            }
            at += t.len() + 1;
        }
    }
}

/// The names and values of one `env` list.
fn check_list(text: &str, env: &[EnvVar], out: &mut Vec<Diagnostic>) {
    for e in env {
        check_name(text, e, env, out);
        if is_literal(e) && !e.value.trim().is_empty() {
            check_value(text, e, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strtoll_reads_like_c() {
        assert_eq!(strtoll_prefix("true"), 0);
        assert_eq!(strtoll_prefix("1abc"), 1);
        assert_eq!(strtoll_prefix("0x10"), 16);
        assert_eq!(strtoll_prefix("-2"), -2);
        assert_eq!(whole_integer("2"), Some(2));
        assert_eq!(whole_integer("1 "), None);
        assert_eq!(whole_integer("0x1"), Some(1));
    }

    #[test]
    fn tokens_keep_offsets() {
        assert_eq!(tokens("^INIT,,NET"), vec![(1, "INIT"), (7, "NET")]);
    }
}
