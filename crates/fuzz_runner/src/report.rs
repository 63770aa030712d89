//! Seeing a run: the `run_finished` event, the end of a failed instance's log in the summary,
//! and `fuzz report`: a run's events file drawn as a timeline (SVG, or an HTML page holding
//! it), one row per job, task, node and transfer, coloured by state: waiting (for dependencies
//! or for the node's resources), starting (a service before its readiness probe passed),
//! ready (a service after it), running, and a mark at the end: finished, failed, skipped,
//! cancelled.
//!
//! The drawing depends on the events only (times relative to the first event, fixed
//! formatting), so the same events file always gives the same bytes.

use crate::exec::{Outcome, Status};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The fields of the `run_finished` event.
pub(crate) fn run_finished(o: &Outcome, took: Duration) -> Value {
    let code = o.exit_code();
    let status = match (o.interrupted, code) {
        (Some(_), _) => "interrupted",
        (None, 0) => "finished",
        (None, crate::exec::LOGS_INCOMPLETE) => "logs_incomplete",
        _ => "failed",
    };
    let count = |s: Status| o.jobs.iter().filter(|j| j.status == s).count();
    json!({
        "status": status,
        "exit_code": code,
        "signal": o.interrupted,
        "jobs": o.jobs.len(),
        "finished": count(Status::Finished),
        "failed": count(Status::Failed),
        "timed_out": count(Status::TimedOut),
        "skipped": count(Status::Skipped),
        "cancelled": count(Status::Cancelled),
        "transfer_failures": o.transfer_failures.len(),
        "log_failures": o.log_failures.len(),
        "duration_s": took.as_secs_f64(),
    })
}

/// How much of a log's end is read for the summary.
const TAIL_BYTES: u64 = 64 * 1024;

/// The summary's lines about a failed instance's log `stem` (`logs/<hostname>`): the file
/// that says most (standard error unless it is empty) and its last `n` lines.
pub(crate) fn log_tail(stem: &Path, n: usize) -> String {
    let with = |ext: &str| {
        let mut p = stem.as_os_str().to_owned();
        p.push(ext);
        PathBuf::from(p)
    };
    let (err, out) = (with(".err"), with(".out"));
    let lines = |p: &Path| -> Vec<String> {
        fuzzfile_io::read_tail(p, TAIL_BYTES)
            .map(|t| {
                t.lines()
                    .filter(|l| !l.trim().is_empty())
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    };
    let (shown, other, tail) = match lines(&err) {
        e if !e.is_empty() => (err, out, e),
        _ => (out.clone(), err, lines(&out)),
    };
    if tail.is_empty() {
        return format!(
            "    log: {} and {} are empty\n",
            shown.display(),
            other.display()
        );
    }
    let from = tail.len().saturating_sub(n);
    let mut s = format!(
        "    log: {} (last {} line{}; also {}):\n",
        shown.display(),
        tail.len() - from,
        if tail.len() - from == 1 { "" } else { "s" },
        other.display()
    );
    for l in &tail[from..] {
        // Bounded, whatever a line holds.
        let l: String = l.chars().take(300).collect();
        let _ = writeln!(s, "    | {l}");
    }
    s
}

/// A row's state between two events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Waiting,
    Starting,
    /// A service whose readiness probe passed.
    Ready,
    Running,
}

impl State {
    fn name(self) -> &'static str {
        match self {
            State::Waiting => "waiting",
            State::Starting => "starting",
            State::Ready => "ready",
            State::Running => "running",
        }
    }
    fn colour(self) -> &'static str {
        match self {
            State::Waiting => "#c9ccd1",
            State::Starting => "#f2c14e",
            State::Ready => "#45a5a0",
            State::Running => "#4a90d9",
        }
    }
}

/// One span of a row, in seconds from the run's first event.
#[derive(Clone, Debug, PartialEq)]
pub struct Span {
    pub state: State,
    pub start: f64,
    pub end: f64,
}

/// One row of the timeline.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub label: String,
    pub spans: Vec<Span>,
    /// When and how it ended (`finished`, `failed`, `timed_out`, `skipped`, `cancelled`,
    /// `exit 3`…); `None`: it had not ended when the events stop.
    pub end: Option<(f64, String)>,
    open: Option<(State, f64)>,
    key: (u8, usize, i64),
}

impl Row {
    fn set(&mut self, t: f64, s: State) {
        if let Some((prev, from)) = self.open.take() {
            if prev == s {
                self.open = Some((prev, from));
                return;
            }
            self.spans.push(Span {
                state: prev,
                start: from,
                end: t,
            });
        }
        self.open = Some((s, t));
    }
    fn finish(&mut self, t: f64, how: String) {
        if let Some((prev, from)) = self.open.take() {
            self.spans.push(Span {
                state: prev,
                start: from,
                end: t,
            });
        }
        self.end = Some((t, how));
    }
}

/// A run read from its events file.
#[derive(Clone, Debug, PartialEq)]
pub struct Timeline {
    pub run_id: String,
    /// Seconds from the first event to the last.
    pub length: f64,
    /// `finished`, `failed`, … from `run_finished`; `None` when the run did not end.
    pub outcome: Option<String>,
    pub rows: Vec<Row>,
}

/// Why an events file cannot be drawn.
#[derive(Debug)]
pub enum ReportError {
    Read(String),
    /// A line that is not an event: file, line, what.
    Line(String, usize, String),
    Empty(String),
}

impl std::fmt::Display for ReportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReportError::Read(m) => write!(f, "{m}"),
            ReportError::Line(p, n, m) => {
                write!(f, "{p}:{n}: not an event of `fuzz run --events` ({m})")
            }
            ReportError::Empty(p) => write!(
                f,
                "{p}: no events (write them with `fuzz run --events {p} …`)"
            ),
        }
    }
}

/// The events file's size limit.
const EVENTS_LIMIT: u64 = 512 * 1024 * 1024;

/// Reads an events file (JSON lines) into a timeline.
pub fn read_events(path: &Path) -> Result<Timeline, ReportError> {
    let text = fuzzfile_io::read_to_string(
        path,
        fuzzfile_io::Kind {
            what: "events file",
            limit: EVENTS_LIMIT,
        },
    )
    .map_err(|e| ReportError::Read(e.to_string()))?;
    let shown = path.display().to_string();
    let mut events = Vec::new();
    for (k, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(line)
            .map_err(|e| ReportError::Line(shown.clone(), k + 1, e.to_string()))?;
        if v.get("event").and_then(Value::as_str).is_none()
            || v.get("time_ms").and_then(Value::as_u64).is_none()
        {
            return Err(ReportError::Line(
                shown.clone(),
                k + 1,
                "no `event` and `time_ms`".into(),
            ));
        }
        events.push(v);
    }
    if events.is_empty() {
        return Err(ReportError::Empty(shown));
    }
    Ok(timeline(&events))
}

/// The timeline of `events` (each with `event` and `time_ms`), in the file's order.
pub fn timeline(events: &[Value]) -> Timeline {
    let ms = |v: &Value| v.get("time_ms").and_then(Value::as_u64).unwrap_or(0);
    let t0 = events.iter().map(ms).min().unwrap_or(0);
    let t_end = events.iter().map(ms).max().unwrap_or(0);
    let secs = |v: &Value| (ms(v) - t0) as f64 / 1000.0;
    let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
    let mut rows: BTreeMap<String, Row> = BTreeMap::new();
    let mut groups: Vec<String> = Vec::new();
    let mut services: Vec<String> = Vec::new();
    let mut run_id = String::new();
    let mut outcome = None;
    let mut job_started: BTreeMap<String, f64> = BTreeMap::new();
    fn row<'a>(
        rows: &'a mut BTreeMap<String, Row>,
        groups: &mut Vec<String>,
        id: String,
        label: String,
        key: (u8, &str, i64),
    ) -> &'a mut Row {
        let g = match groups.iter().position(|n| n == key.1) {
            Some(g) => g,
            None => {
                groups.push(key.1.to_owned());
                groups.len() - 1
            }
        };
        rows.entry(id).or_insert_with(|| Row {
            label,
            spans: Vec::new(),
            end: None,
            open: None,
            key: (key.0, g, key.2),
        })
    }
    for v in events {
        let t = secs(v);
        let job = s(v, "job");
        let task = v.get("task_id").and_then(Value::as_i64);
        // The row of an instance: its task's for task arrays, else its job's.
        let inst_row = |rows: &mut BTreeMap<String, Row>, groups: &mut Vec<String>| -> String {
            match task {
                Some(id) => {
                    let r = format!("{job}\u{0}task\u{0}{id:020}");
                    let since = job_started.get(&job).copied();
                    let t_row = row(
                        rows,
                        groups,
                        r.clone(),
                        format!("{job} task {id}"),
                        (1, &job, id + 1),
                    );
                    // A task waits for its place in the array (`concurrency`) from the
                    // job's start.
                    if let (Some(from), None, true) = (since, t_row.open, t_row.spans.is_empty()) {
                        t_row.set(from, State::Waiting);
                    }
                    r
                }
                None => {
                    row(
                        rows,
                        groups,
                        format!("{job}\u{0}"),
                        format!("job {job}"),
                        (1, &job, 0),
                    );
                    format!("{job}\u{0}")
                }
            }
        };
        match s(v, "event").as_str() {
            "plan_ready" => {
                run_id = s(v, "run_id");
                row(
                    &mut rows,
                    &mut groups,
                    "\u{0}run".into(),
                    "run".into(),
                    (0, "", 0),
                )
                .set(t, State::Running);
                for (list, kind) in [("jobs", "job"), ("services", "service")] {
                    for n in v.get(list).and_then(Value::as_array).into_iter().flatten() {
                        let n = n.as_str().unwrap_or("").to_owned();
                        if kind == "service" {
                            services.push(n.clone());
                        }
                        row(
                            &mut rows,
                            &mut groups,
                            format!("{n}\u{0}"),
                            format!("{kind} {n}"),
                            (1, &n, 0),
                        )
                        .set(t, State::Waiting);
                    }
                }
            }
            "job_started" => {
                job_started.insert(job.clone(), t);
                let kind = s(v, "kind");
                let st = if kind == "service" {
                    State::Starting
                } else {
                    State::Running
                };
                row(
                    &mut rows,
                    &mut groups,
                    format!("{job}\u{0}"),
                    format!("{kind} {job}"),
                    (1, &job, 0),
                )
                .set(t, st);
            }
            "service_ready" => {
                if let Some(r) = rows.get_mut(&format!("{job}\u{0}")) {
                    r.set(t, State::Ready);
                }
            }
            "job_finished" => {
                let r = row(
                    &mut rows,
                    &mut groups,
                    format!("{job}\u{0}"),
                    format!("job {job}"),
                    (1, &job, 0),
                );
                r.finish(t, s(v, "status"));
            }
            "job_skipped" => {
                let r = row(
                    &mut rows,
                    &mut groups,
                    format!("{job}\u{0}"),
                    format!("job {job}"),
                    (1, &job, 0),
                );
                r.finish(t, "skipped".into());
            }
            "task_started" => {
                let r = inst_row(&mut rows, &mut groups);
                if let Some(r) = rows.get_mut(&r) {
                    r.set(t, State::Running);
                }
            }
            "task_finished" => {
                let r = inst_row(&mut rows, &mut groups);
                if let Some(r) = rows.get_mut(&r) {
                    r.finish(t, s(v, "status"));
                }
            }
            "instance_waiting" => {
                let r = inst_row(&mut rows, &mut groups);
                if let Some(r) = rows.get_mut(&r) {
                    r.set(t, State::Waiting);
                }
            }
            "instance_placed" => {
                let r = inst_row(&mut rows, &mut groups);
                let service = services.contains(&job);
                if let Some(r) = rows.get_mut(&r) {
                    r.set(
                        t,
                        if service {
                            State::Starting
                        } else {
                            State::Running
                        },
                    );
                }
            }
            "node_started" | "node_finished" => {
                let rank = v.get("rank").and_then(Value::as_i64).unwrap_or(0);
                let host = s(v, "host");
                let r = row(
                    &mut rows,
                    &mut groups,
                    format!("{job}\u{0}node\u{0}{rank:020}"),
                    format!("{job} node {rank} ({host})"),
                    (1, &job, 1_000_000_000 + rank),
                );
                if s(v, "event") == "node_started" {
                    r.set(t, State::Running);
                } else {
                    let code = v.get("exit_code").and_then(Value::as_i64);
                    let how = match code {
                        Some(0) => "finished".to_owned(),
                        Some(c) => format!("exit {c}"),
                        None => "failed".to_owned(),
                    };
                    if r.open.is_none() && r.spans.is_empty() {
                        r.set(t, State::Running);
                    }
                    r.finish(t, how);
                }
            }
            "transfer_done" | "transfer_failed" => {
                let dir = s(v, "direction");
                let vol = s(v, "volume");
                let section = if dir == "ingress" { 0 } else { 2 };
                let took =
                    v.get("duration_ms").and_then(Value::as_u64).unwrap_or(0) as f64 / 1000.0;
                let r = row(
                    &mut rows,
                    &mut groups,
                    format!("\u{0}{dir}\u{0}{vol}"),
                    format!("{dir} {vol}"),
                    (section, "", 1),
                );
                if s(v, "event") == "transfer_done" {
                    r.set((t - took).max(0.0), State::Running);
                    r.finish(t, "finished".into());
                } else {
                    r.finish(t, "failed".into());
                }
            }
            "run_finished" => {
                let st = s(v, "status");
                if let Some(r) = rows.get_mut("\u{0}run") {
                    r.finish(t, st.clone());
                }
                outcome = Some(st);
            }
            _ => {}
        }
    }
    let length = (t_end - t0) as f64 / 1000.0;
    let mut rows: Vec<Row> = rows.into_values().collect();
    for r in &mut rows {
        // What had not ended when the events stop runs to the last event.
        if let Some((st, from)) = r.open.take() {
            r.spans.push(Span {
                state: st,
                start: from,
                end: length,
            });
        }
        // A state left at once (a job placed as it started) is not drawn.
        r.spans.retain(|s| s.end > s.start);
    }
    rows.sort_by(|a, b| a.key.cmp(&b.key).then(a.label.cmp(&b.label)));
    Timeline {
        run_id,
        length,
        outcome,
        rows,
    }
}

fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c if c.is_control() => o.push('\u{fffd}'),
            c => o.push(c),
        }
    }
    o
}

fn end_colour(how: &str) -> &'static str {
    match how {
        "finished" => "#2e9e4f",
        "skipped" | "cancelled" | "interrupted" => "#7f8690",
        _ => "#d0342c",
    }
}

/// A step for about 8 ticks over `length` seconds: 1, 2 or 5 times a power of ten.
fn tick_step(length: f64) -> f64 {
    let raw = (length / 8.0).max(0.001);
    let p = 10f64.powf(raw.log10().floor());
    for m in [1.0, 2.0, 5.0, 10.0] {
        if raw <= m * p {
            return m * p;
        }
    }
    10.0 * p
}

fn secs_label(t: f64, step: f64) -> String {
    let decimals = if step >= 1.0 {
        0
    } else if step >= 0.1 {
        1
    } else if step >= 0.01 {
        2
    } else {
        3
    };
    format!("{t:.decimals$} s")
}

/// The timeline as a standalone SVG picture.
pub fn svg(tl: &Timeline) -> String {
    const W: f64 = 960.0;
    const LABEL: f64 = 250.0;
    const RIGHT: f64 = 90.0;
    const TOP: f64 = 56.0;
    const ROW: f64 = 22.0;
    const BAR: f64 = 12.0;
    let plot = W - LABEL - RIGHT;
    let length = tl.length.max(0.001);
    let x = |t: f64| LABEL + (t / length).clamp(0.0, 1.0) * plot;
    let height = TOP + ROW * tl.rows.len() as f64 + 50.0;
    let mut o = String::new();
    let _ = writeln!(
        o,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W:.0}" height="{height:.0}" viewBox="0 0 {W:.0} {height:.0}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="12">"#
    );
    let _ = writeln!(o, r##"<rect width="100%" height="100%" fill="#ffffff"/>"##);
    let title = format!(
        "fuzz run {} — {} in {:.2} s",
        if tl.run_id.is_empty() {
            "(no run id)"
        } else {
            &tl.run_id
        },
        tl.outcome.as_deref().unwrap_or("not ended"),
        tl.length
    );
    let _ = writeln!(
        o,
        r#"<text x="10" y="20" font-size="14" font-weight="bold">{}</text>"#,
        esc(&title)
    );
    // The time axis.
    let step = tick_step(length);
    let mut k = 0u32;
    loop {
        let t = f64::from(k) * step;
        if t > length + step * 1e-9 {
            break;
        }
        let xt = x(t);
        let _ = writeln!(
            o,
            r##"<line x1="{xt:.1}" y1="{:.1}" x2="{xt:.1}" y2="{:.1}" stroke="#e3e5e8"/>"##,
            TOP - 8.0,
            TOP + ROW * tl.rows.len() as f64
        );
        let _ = writeln!(
            o,
            r##"<text x="{xt:.1}" y="{:.1}" text-anchor="middle" fill="#555">{}</text>"##,
            TOP - 12.0,
            secs_label(t, step)
        );
        k += 1;
        if k > 1000 {
            break;
        }
    }
    for (n, r) in tl.rows.iter().enumerate() {
        let y = TOP + ROW * n as f64;
        if n % 2 == 1 {
            let _ = writeln!(
                o,
                r##"<rect x="0" y="{y:.1}" width="{W:.0}" height="{ROW:.0}" fill="#f6f7f9"/>"##
            );
        }
        let label: String = r.label.chars().take(36).collect();
        let _ = writeln!(
            o,
            r#"<text x="10" y="{:.1}">{}</text>"#,
            y + ROW / 2.0 + 4.0,
            esc(&label)
        );
        let by = y + (ROW - BAR) / 2.0;
        for s in &r.spans {
            let (x0, x1) = (x(s.start), x(s.end));
            let _ = writeln!(
                o,
                r#"<rect x="{x0:.1}" y="{by:.1}" width="{:.1}" height="{BAR:.0}" fill="{}"><title>{}: {} {:.3}–{:.3} s ({:.3} s)</title></rect>"#,
                (x1 - x0).max(1.0),
                s.state.colour(),
                esc(&r.label),
                s.state.name(),
                s.start,
                s.end,
                s.end - s.start
            );
        }
        if let Some((t, how)) = &r.end {
            let xe = x(*t);
            let _ = writeln!(
                o,
                r#"<rect x="{:.1}" y="{:.1}" width="3" height="{:.0}" fill="{}"><title>{}: {} at {:.3} s</title></rect>"#,
                xe - 1.5,
                y + 3.0,
                ROW - 6.0,
                end_colour(how),
                esc(&r.label),
                esc(how),
                t
            );
            let _ = writeln!(
                o,
                r#"<text x="{:.1}" y="{:.1}" fill="{}">{}</text>"#,
                xe + 5.0,
                y + ROW / 2.0 + 4.0,
                end_colour(how),
                esc(&how.replace('_', " "))
            );
        }
    }
    // The legend.
    let ly = TOP + ROW * tl.rows.len() as f64 + 26.0;
    let mut lx = LABEL;
    for st in [
        State::Waiting,
        State::Starting,
        State::Ready,
        State::Running,
    ] {
        let _ = writeln!(
            o,
            r#"<rect x="{lx:.1}" y="{:.1}" width="14" height="10" fill="{}"/><text x="{:.1}" y="{ly:.1}">{}</text>"#,
            ly - 9.0,
            st.colour(),
            lx + 18.0,
            st.name()
        );
        lx += 90.0;
    }
    for (how, name) in [("finished", "end"), ("failed", "failure")] {
        let _ = writeln!(
            o,
            r#"<rect x="{lx:.1}" y="{:.1}" width="3" height="12" fill="{}"/><text x="{:.1}" y="{ly:.1}">{name}</text>"#,
            ly - 10.0,
            end_colour(how),
            lx + 8.0
        );
        lx += 80.0;
    }
    o.push_str("</svg>\n");
    o
}

/// The timeline as an HTML page: the picture and a table of the rows.
pub fn html(tl: &Timeline) -> String {
    let mut o = String::new();
    let title = format!(
        "fuzz run {}",
        if tl.run_id.is_empty() {
            "(no run id)"
        } else {
            &tl.run_id
        }
    );
    let _ = write!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<style>body{{font-family:sans-serif;margin:1em}}table{{border-collapse:collapse}}td,th{{padding:2px 10px;text-align:left;border-bottom:1px solid #ddd}}</style>\n</head>\n<body>\n",
        esc(&title)
    );
    o.push_str(&svg(tl));
    o.push_str("<table>\n<tr><th>row</th><th>waiting (s)</th><th>starting (s)</th><th>ready (s)</th><th>running (s)</th><th>end</th></tr>\n");
    for r in &tl.rows {
        let total = |st: State| -> f64 {
            r.spans
                .iter()
                .filter(|s| s.state == st)
                .map(|s| s.end - s.start)
                .sum()
        };
        let end = match &r.end {
            Some((t, how)) => format!("{} at {t:.3} s", how.replace('_', " ")),
            None => "not ended".into(),
        };
        let _ = writeln!(
            o,
            "<tr><td>{}</td><td>{:.3}</td><td>{:.3}</td><td>{:.3}</td><td>{:.3}</td><td>{}</td></tr>",
            esc(&r.label),
            total(State::Waiting),
            total(State::Starting),
            total(State::Ready),
            total(State::Running),
            esc(&end)
        );
    }
    o.push_str("</table>\n</body>\n</html>\n");
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(text: &str) -> Vec<Value> {
        text.lines()
            .map(|l| serde_json::from_str(l).expect("json"))
            .collect()
    }

    #[test]
    fn states_follow_the_events() {
        let tl = timeline(&ev(
            r#"{"event":"plan_ready","time_ms":1000,"run_id":"r","jobs":["a","b"],"services":["db"]}
{"event":"job_started","time_ms":1000,"job":"db","kind":"service"}
{"event":"service_ready","time_ms":1500,"job":"db"}
{"event":"job_started","time_ms":1500,"job":"a","kind":"job"}
{"event":"instance_waiting","time_ms":1500,"job":"a","instance":"a","task_id":null}
{"event":"instance_placed","time_ms":2000,"job":"a","instance":"a","task_id":null}
{"event":"job_finished","time_ms":3000,"job":"a","status":"failed"}
{"event":"job_skipped","time_ms":3000,"job":"b","reason":"dependency a failed"}
{"event":"job_finished","time_ms":3100,"job":"db","status":"finished"}
{"event":"run_finished","time_ms":3200,"status":"failed"}"#,
        ));
        assert_eq!(tl.outcome.as_deref(), Some("failed"));
        assert_eq!(tl.length, 2.2);
        let labels: Vec<&str> = tl.rows.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(labels, ["run", "job a", "job b", "service db"]);
        let a = &tl.rows[1];
        let states: Vec<(State, f64, f64)> =
            a.spans.iter().map(|s| (s.state, s.start, s.end)).collect();
        assert_eq!(
            states,
            [
                (State::Waiting, 0.0, 0.5),
                (State::Waiting, 0.5, 1.0),
                (State::Running, 1.0, 2.0)
            ]
        );
        assert_eq!(a.end, Some((2.0, "failed".into())));
        let db = &tl.rows[3];
        assert_eq!(db.spans[0].state, State::Starting);
        assert_eq!(db.spans[1].state, State::Ready);
        assert_eq!(tl.rows[2].end, Some((2.0, "skipped".into())));
    }

    #[test]
    fn the_picture_escapes_names_and_is_the_same_each_time() {
        let tl = timeline(&ev(
            r#"{"event":"plan_ready","time_ms":0,"run_id":"r<&>","jobs":["x"],"services":[]}
{"event":"job_started","time_ms":10,"job":"x","kind":"job"}"#,
        ));
        let a = svg(&tl);
        assert_eq!(a, svg(&tl));
        assert!(a.contains("r&lt;&amp;&gt;"), "{a}");
        assert!(!a.contains("r<&>"));
        assert!(a.contains("not ended"), "{a}");
        let h = html(&tl);
        assert!(
            h.starts_with("<!DOCTYPE html>") && h.contains("<svg"),
            "{h}"
        );
    }

    #[test]
    fn ticks_are_round() {
        assert_eq!(tick_step(8.0), 1.0);
        assert_eq!(tick_step(15.0), 2.0);
        assert_eq!(tick_step(0.3), 0.05);
        assert_eq!(secs_label(0.15, 0.05), "0.15 s");
    }
}
