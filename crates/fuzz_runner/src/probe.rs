//! Readiness probes of services: `tcp-socket`, `http-get` and `exec`, with Kubernetes timing
//! (initial delay, period, per-attempt timeout, success and failure thresholds).
//!
//! Services share the node's network, so every probe goes to `127.0.0.1`. An `exec` probe runs
//! on the node with the service's environment and working directory (under a container
//! runtime too: the runner does not enter the service's container). A `grpc` probe is checked
//! as a TCP connection to its port (the gRPC health protocol needs HTTP/2, which the runner
//! does not speak); the plan preparation says so in a note. `HTTPS` probes do the TLS
//! handshake without verifying the certificate, as Kubernetes does.
//!
//! A readiness probe never stops the service by itself: after `failure-threshold` failures in a
//! row the runner says the service is not ready yet and goes on probing; only the runner's
//! ready timeout (`fuzz run --ready-timeout`) ends the wait, with the last failure named.

use crate::prepare::Instance;
use fuzzfile_plan::{Probe, Readiness};
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Probe until `success-threshold` successes in a row; the number of attempts, or why not.
pub(crate) async fn wait_ready(
    r: &Readiness,
    inst: &Instance,
    ready_timeout: Duration,
    say: &(dyn Fn(&str) + Send + Sync),
) -> Result<u64, String> {
    let start = Instant::now();
    let deadline = start + ready_timeout;
    tokio::time::sleep(Duration::from_secs(r.initial_delay_seconds)).await;
    let (mut ok, mut failed, mut attempts) = (0u64, 0u64, 0u64);
    let mut last = String::new();
    loop {
        attempts += 1;
        let per_try = Duration::from_secs(r.timeout_seconds.max(1));
        match tokio::time::timeout(per_try, attempt(&r.action, inst, per_try)).await {
            Ok(Ok(())) => {
                ok += 1;
                failed = 0;
                if ok >= r.success_threshold {
                    return Ok(attempts);
                }
            }
            Ok(Err(e)) => {
                ok = 0;
                failed += 1;
                last = e;
            }
            Err(_) => {
                ok = 0;
                failed += 1;
                last = format!("no answer within {} s", per_try.as_secs());
            }
        }
        if failed == r.failure_threshold {
            say(&format!(
                "not ready yet: {} ({failed} probe failures in a row; still probing)",
                last
            ));
        }
        let next = Instant::now() + Duration::from_secs(r.period_seconds.max(1));
        if next > deadline {
            return Err(format!(
                "not RUNNING after {} s: the readiness probe ({}) failed {attempts} time(s); last: {last}",
                ready_timeout.as_secs(),
                describe(&r.action)
            ));
        }
        tokio::time::sleep_until(next.into()).await;
    }
}

/// The probe in words: `tcp-socket 6379`, `http-get http://127.0.0.1:8080/health`, `exec …`.
pub(crate) fn describe(p: &Probe) -> String {
    match p {
        Probe::TcpSocket { port } => format!("tcp-socket {}", port.unwrap_or(0)),
        Probe::Grpc { port, .. } => format!("grpc {} (as TCP)", port.unwrap_or(0)),
        Probe::HttpGet {
            path, port, scheme, ..
        } => format!(
            "http-get {}://127.0.0.1:{}{}",
            scheme.as_deref().unwrap_or("HTTP").to_ascii_lowercase(),
            port.unwrap_or(80),
            path.as_deref().unwrap_or("/")
        ),
        Probe::Exec { command } => format!("exec {}", command.join(" ")),
    }
}

async fn attempt(p: &Probe, inst: &Instance, per_try: Duration) -> Result<(), String> {
    match p {
        Probe::TcpSocket { port } | Probe::Grpc { port, .. } => {
            let port = port.ok_or("the probe names no port")?;
            TcpStream::connect(("127.0.0.1", port as u16))
                .await
                .map(drop)
                .map_err(|e| format!("127.0.0.1:{port}: {e}"))
        }
        Probe::HttpGet {
            path,
            port,
            scheme,
            headers,
        } => {
            let port = port.unwrap_or(80) as u16;
            let path = path.as_deref().unwrap_or("/");
            if scheme
                .as_deref()
                .is_some_and(|s| s.eq_ignore_ascii_case("HTTPS"))
            {
                return https_get(port, path, headers, per_try).await;
            }
            let mut s = TcpStream::connect(("127.0.0.1", port))
                .await
                .map_err(|e| format!("127.0.0.1:{port}: {e}"))?;
            let mut req = format!(
                "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUser-Agent: fuzz-run-probe\r\nConnection: close\r\n"
            );
            for h in headers {
                req.push_str(&format!("{}: {}\r\n", h.name, h.value));
            }
            req.push_str("\r\n");
            s.write_all(req.as_bytes())
                .await
                .map_err(|e| format!("127.0.0.1:{port}: {e}"))?;
            let mut head = [0u8; 64];
            let mut n = 0;
            while n < head.len() {
                let k = s.read(&mut head[n..]).await.map_err(|e| e.to_string())?;
                if k == 0 {
                    break;
                }
                n += k;
                if head[..n].contains(&b'\n') {
                    break;
                }
            }
            status_ok(&head[..n])
        }
        Probe::Exec { command } => {
            if command.is_empty() {
                return Err("the exec probe has no command".into());
            }
            // On the host runtime the probe sees what the service sees: its files and mounts
            // at their paths (as a container runtime runs it in the container).
            let words = match &inst.sandbox {
                Some(v) => {
                    let t = crate::sandbox::tool().ok_or_else(|| {
                        format!(
                            "no private mount namespace for the probe: {}",
                            crate::sandbox::INSTALL
                        )
                    })?;
                    crate::sandbox::wrap(v, &t, command)?
                }
                None => command.clone(),
            };
            let Some((prog, args)) = words.split_first() else {
                return Err("the exec probe has no command".into());
            };
            let mut cmd = tokio::process::Command::new(prog);
            cmd.args(args)
                .envs(inst.env.iter().map(|(k, v)| (k, v)))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .process_group(0)
                .kill_on_drop(true);
            if let (Some(c), None) = (&inst.cwd, &inst.sandbox) {
                cmd.current_dir(c);
            }
            let mut child = cmd
                .spawn()
                .map_err(|e| format!("cannot start {prog}: {e}"))?;
            let group = child.id().map(|p| nix::unistd::Pid::from_raw(p as i32));
            let r = tokio::time::timeout(per_try, child.wait()).await;
            if let Some(g) = group {
                let _ = nix::sys::signal::killpg(g, nix::sys::signal::Signal::SIGKILL);
            }
            match r {
                Ok(Ok(s)) if s.success() => Ok(()),
                Ok(Ok(s)) => Err(format!("`{}` ended with {s}", command.join(" "))),
                Ok(Err(e)) => Err(e.to_string()),
                Err(_) => Err(format!("`{}` did not end in time", command.join(" "))),
            }
        }
    }
}

/// `HTTP/1.x 2xx` or `3xx` is ready (Kubernetes: 200 ≤ status < 400).
fn status_ok(head: &[u8]) -> Result<(), String> {
    let line = String::from_utf8_lossy(head);
    let line = line.lines().next().unwrap_or("").trim().to_owned();
    let code = line
        .strip_prefix("HTTP/")
        .and_then(|r| r.split_whitespace().nth(1))
        .and_then(|c| c.parse::<u16>().ok());
    match code {
        Some(c) if (200..400).contains(&c) => Ok(()),
        Some(c) => Err(format!("HTTP status {c}")),
        None if line.is_empty() => Err("the connection closed without an answer".into()),
        None => Err(format!("not an HTTP answer: {line:?}")),
    }
}

async fn https_get(
    port: u16,
    path: &str,
    headers: &[fuzzfile_plan::Header],
    per_try: Duration,
) -> Result<(), String> {
    let url = format!("https://127.0.0.1:{port}{path}");
    let headers: Vec<(String, String)> = headers
        .iter()
        .map(|h| (h.name.clone(), h.value.clone()))
        .collect();
    tokio::task::spawn_blocking(move || crate::transfer::probe_https(&url, &headers, per_try))
        .await
        .map_err(|e| e.to_string())?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_status_lines() {
        assert!(status_ok(b"HTTP/1.1 200 OK\r\n").is_ok());
        assert!(status_ok(b"HTTP/1.0 302 Found\r\n").is_ok());
        assert_eq!(
            status_ok(b"HTTP/1.1 503 Service Unavailable\r\n"),
            Err("HTTP status 503".into())
        );
        assert!(status_ok(b"")
            .expect_err("empty")
            .contains("without an answer"));
        assert!(status_ok(b"SSH-2.0-OpenSSH\r\n")
            .expect_err("ssh")
            .contains("not an HTTP answer"));
    }

    #[test]
    fn probes_in_words() {
        let p = Probe::HttpGet {
            path: Some("/health".into()),
            port: Some(8080),
            scheme: Some("HTTPS".into()),
            headers: vec![],
        };
        assert_eq!(describe(&p), "http-get https://127.0.0.1:8080/health");
        assert_eq!(
            describe(&Probe::TcpSocket { port: Some(6379) }),
            "tcp-socket 6379"
        );
    }
}
