//! Volume ingress and egress: what is copied into a volume before the jobs that mount it
//! start, and out of it after the workflow's jobs finish.
//!
//! [`check`] looks at every transfer of a volume before anything starts and refuses what this
//! runner cannot do; [`ingress`] and [`egress`] then do one transfer each and say what they
//! did in a [`TransferReport`]. A volume's directory on the node is `volume_dir`: under the
//! run directory for an ephemeral volume, the `--volume NAME=PATH` directory otherwise.
//!
//! # Ingress sources
//!
//! * `file://<name>` naming a top-level `files` entry ([`TransferEnd::file`]): its content,
//!   verbatim.
//! * `file:///path/on/node`: a file or a directory tree on this node (an absolute path; a
//!   `file://` source that is neither is refused). Fuzzball itself only knows `files`
//!   entries here; a local path is how data that Fuzzball would fetch from elsewhere is given
//!   to this runner.
//! * `http://` and `https://`: a `GET`, following at most 5 redirects. Any status other than
//!   2xx is an error. The body is stored as sent (no `Accept-Encoding` is asked for, nothing
//!   is decompressed). Proxies come from `ALL_PROXY`, `HTTPS_PROXY`, `HTTP_PROXY` and
//!   `NO_PROXY`. Servers are trusted through the Mozilla roots built into the runner, plus the
//!   PEM certificates in `SSL_CERT_FILE` and in [`TransferOptions::ca_file`] (`fuzz run
//!   --ca-file`), all at once (`SSL_CERT_DIR` and the system's certificate store are not
//!   read). A server whose own certificate is a CA certificate (`basicConstraints CA:TRUE`,
//!   what a bare `openssl req -x509` makes) is refused even when that certificate is trusted;
//!   the message says so.
//!
//! The destination is `file://<path in the volume>`; `file://dir/x` and `file:///dir/x` both
//! mean `dir/x` under the volume's root. A path that ends in `/` (or is empty) is a directory
//! the source goes into, under the source's own name (the `files` entry's name, the node
//! path's last component, or the URL path's last segment, percent-decoded); any other path is
//! the exact name to write. Missing parent directories are created.
//!
//! # Egress
//!
//! The source is `file://<path in the volume>`: a file or a directory tree. The destination is
//! `file:///path/on/node`, an absolute path on this node (the plan's `volume_path` of an
//! egress destination is not used: the path is outside the volume); a path ending in `/` is a
//! directory the source goes into under its own name, any other path is the exact name.
//! Missing parent directories on the node are created.
//!
//! # How files are written
//!
//! A file is written to a temporary name in its destination directory and renamed into place
//! when complete, so a failed transfer leaves no partial file; an existing file of that name
//! is replaced. A directory tree is copied to a temporary directory and renamed into place
//! when the destination does not exist yet; into an existing directory it is merged, file by
//! file (each replaced atomically, files not in the source kept). Within a tree, symbolic
//! links are copied as links, never followed; other special files (sockets, devices, FIFOs)
//! are an error. File permissions are kept; times and ownership are not. Putting a file where
//! a directory is, or a tree where a file is, is an error, and so is copying a tree into
//! itself. Everything is written into the volume through [`crate::safe_fs`]: a path in the
//! volume that goes through a symbolic link (possible in a persistent volume, or left by a
//! job) is refused when the transfer runs, and a link at the destination's own name is
//! replaced, never written through. An egress source that leads out of the volume through a
//! link is refused too.
//!
//! # Limits
//!
//! * [`TransferOptions::timeout`] (the transfer's `policy.timeout.execute`) bounds the whole
//!   transfer: connecting, redirects, the body, copying. Without it only connecting is bounded
//!   (30 s).
//! * [`TransferOptions::max_bytes`] caps the bytes one transfer may write (default 64 GiB).
//!   An `http(s)` answer that announces more is refused before its body is read.
//!
//! # Refused before anything starts (by [`check`])
//!
//! Any other scheme (`s3://`, `gs://`, `ftp://`, …) on either side; a transfer end with a
//! `secret` (authenticated transfers); an ingress `file://` source that is neither a `files`
//! entry nor an absolute path, or a node path that does not exist; a destination in the volume
//! or an egress source that leaves the volume (`..`, an absolute path); an egress destination
//! that is not an absolute `file:///` path. Each message names the volume, the transfer
//! (`ingress 2`, counted from 1), its ends and what to do instead.
//!
//! Messages never show the user name and password of a URL (`https://user:pass@host`) nor
//! its query string (which often carries a signature): both are replaced by `***`.

use crate::safe_fs::{Dir, ErrorKind, Kind};
use fuzzfile_plan::{TopFile, Transfer, TransferEnd, Volume};
use std::ffi::{OsStr, OsString};
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The default cap on the bytes one transfer writes: 64 GiB.
pub const DEFAULT_MAX_BYTES: u64 = 64 << 30;

/// How long connecting to an `http(s)` server may take when the transfer has no timeout.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// Redirects followed for one `http(s)` ingress.
const MAX_REDIRECTS: u32 = 5;

/// How one transfer is done.
#[derive(Clone, Debug)]
pub struct TransferOptions {
    /// The whole transfer must end within this (the transfer's `policy.timeout.execute`).
    pub timeout: Option<Duration>,
    /// Extra PEM CA certificates to trust for `https://` (`fuzz run --ca-file`), besides the
    /// built-in roots and `SSL_CERT_FILE`.
    pub ca_file: Option<PathBuf>,
    /// At most this many bytes are written.
    pub max_bytes: u64,
}

impl Default for TransferOptions {
    fn default() -> Self {
        TransferOptions {
            timeout: None,
            ca_file: None,
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }
}

impl TransferOptions {
    /// The options for `t`: its timeout, `ca_file`, and the default cap.
    pub fn for_transfer(t: &Transfer, ca_file: Option<&Path>) -> Self {
        TransferOptions {
            timeout: t.timeout.as_ref().map(|d| Duration::from_secs(d.seconds)),
            ca_file: ca_file.map(Path::to_path_buf),
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }
}

/// What one transfer did.
#[derive(Clone, Debug)]
pub struct TransferReport {
    /// The source as written (URLs with their user name, password and query hidden).
    pub source: String,
    /// Where it was written on this node.
    pub destination: PathBuf,
    /// The bytes of file content written (for a tree, of all its files).
    pub bytes: u64,
    pub duration: Duration,
}

/// Checks that every transfer of `volume` can be done by this runner: nothing is fetched or
/// written. All problems are reported, one per line.
pub fn check(volume: &Volume) -> Result<(), String> {
    let mut problems = Vec::new();
    for (i, t) in volume.ingress.iter().enumerate() {
        if let Err(e) = check_ingress(t) {
            problems.push(format!(
                "volume `{}`, ingress {} ({}): {e}",
                volume.key,
                i + 1,
                describe(t)
            ));
        }
    }
    for (i, t) in volume.egress.iter().enumerate() {
        if let Err(e) = check_egress(t) {
            problems.push(format!(
                "volume `{}`, egress {} ({}): {e}",
                volume.key,
                i + 1,
                describe(t)
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

/// Checks that the extra CA certificates (`ca_file`, and `SSL_CERT_FILE` when set) can be
/// read and hold at least one PEM certificate each; the number of certificates found.
pub fn check_ca(ca_file: Option<&Path>) -> Result<usize, String> {
    extra_roots(ca_file).map(|c| c.len())
}

/// `source → destination`, for messages (URLs redacted).
pub fn describe(t: &Transfer) -> String {
    format!("{} → {}", end_text(&t.source), end_text(&t.destination))
}

/// Fetches `t`'s source into the volume whose directory is `volume_dir`.
pub fn ingress(
    volume_dir: &Path,
    t: &Transfer,
    files: &[TopFile],
    opts: &TransferOptions,
) -> Result<TransferReport, String> {
    let started = Instant::now();
    let fail = |e: String| format!("ingress {}: {e}", describe(t));
    check_ingress(t).map_err(fail)?;
    let source = ingress_source(t).map_err(fail)?;
    let dest_path = end_volume_path(&t.destination).unwrap_or_default();
    let rel = volume_rel(dest_path).map_err(fail)?;
    let into = is_into(dest_path);
    let mut budget = Budget::new(opts);
    let (destination, bytes) = match source {
        Source::TopFile(name) => {
            let f = files
                .iter()
                .find(|f| f.name == name)
                .ok_or_else(|| fail(format!("the plan has no top-level `files` entry `{name}`")))?;
            let dest = place_in_volume(volume_dir, &rel, into, || base_name(name)).map_err(fail)?;
            refuse_directory(&dest).map_err(fail)?;
            let n = write_atomic(&dest.dir, &dest.name, |w| {
                budget.add(f.content.len() as u64)?;
                w.write_all(f.content.as_bytes())
                    .map_err(|e| format!("{}: {e}", dest.path.display()))?;
                Ok(f.content.len() as u64)
            })
            .map_err(fail)?;
            (dest.path, n)
        }
        Source::Node(path) => {
            let name = || {
                path.file_name()
                    .and_then(|n| n.to_str())
                    .map(str::to_owned)
                    .ok_or_else(|| format!("{} has no file name", path.display()))
            };
            let dest = place_in_volume(volume_dir, &rel, into, name).map_err(fail)?;
            let n = copy_any(&path, &dest.dir, &dest.name, &mut budget).map_err(fail)?;
            (dest.path, n)
        }
        Source::Http(url) => {
            let dest =
                place_in_volume(volume_dir, &rel, into, || url_file_name(url)).map_err(fail)?;
            refuse_directory(&dest).map_err(fail)?;
            let n = http_get(url, &dest, opts, &mut budget).map_err(fail)?;
            (dest.path, n)
        }
    };
    Ok(TransferReport {
        source: end_text(&t.source),
        destination,
        bytes,
        duration: started.elapsed(),
    })
}

/// Copies `t`'s source in the volume whose directory is `volume_dir` to its destination on
/// this node.
pub fn egress(
    volume_dir: &Path,
    t: &Transfer,
    opts: &TransferOptions,
) -> Result<TransferReport, String> {
    let started = Instant::now();
    let fail = |e: String| format!("egress {}: {e}", describe(t));
    check_egress(t).map_err(fail)?;
    let rel = volume_rel(end_volume_path(&t.source).unwrap_or_default()).map_err(fail)?;
    let root = fs::canonicalize(volume_dir).map_err(|e| {
        fail(format!(
            "the volume's directory {}: {e}",
            volume_dir.display()
        ))
    })?;
    let joined = root.join(&rel);
    let src = fs::canonicalize(&joined).map_err(|e| {
        fail(if e.kind() == io::ErrorKind::NotFound {
            format!("{} does not exist in the volume", joined.display())
        } else {
            format!("{}: {e}", joined.display())
        })
    })?;
    if !src.starts_with(&root) {
        return Err(fail(format!(
            "{} leads out of the volume (to {}) through a symbolic link",
            joined.display(),
            src.display()
        )));
    }
    let (dest, into) = egress_destination(t).map_err(fail)?;
    let dest = if into {
        let name = if rel.as_os_str().is_empty() {
            root.file_name().map(PathBuf::from)
        } else {
            joined.file_name().map(PathBuf::from)
        };
        dest.join(name.unwrap_or_else(|| PathBuf::from("volume")))
    } else {
        dest
    };
    // The destination is the plan's choice on this node: its parents are created as `mkdir -p`
    // does; what is written in them is never written through a symbolic link.
    let (Some(parent), Some(name)) = (dest.parent(), dest.file_name()) else {
        return Err(fail(format!("{} names no file", dest.display())));
    };
    let dir = Dir::create_root(parent).map_err(|e| fail(e.to_string()))?;
    let mut budget = Budget::new(opts);
    let bytes = copy_any(&src, &dir, name, &mut budget).map_err(fail)?;
    Ok(TransferReport {
        source: end_text(&t.source),
        destination: dest,
        bytes,
        duration: started.elapsed(),
    })
}

/// An HTTPS readiness probe: a `GET` of `url` that does not verify the certificate (as
/// Kubernetes does), follows no redirect and goes through no proxy; ready when the status is
/// 2xx or 3xx.
pub(crate) fn probe_https(
    url: &str,
    headers: &[(String, String)],
    timeout: Duration,
) -> Result<(), String> {
    let tls = ureq::tls::TlsConfig::builder()
        .disable_verification(true)
        .build();
    let agent = ureq::Agent::new_with_config(
        ureq::Agent::config_builder()
            .tls_config(tls)
            .proxy(None)
            .max_redirects(0)
            .http_status_as_error(false)
            .timeout_global(Some(timeout))
            .user_agent("fuzz-run-probe")
            .build(),
    );
    let mut req = agent.get(url);
    for (k, v) in headers {
        req = req.header(k.as_str(), v.as_str());
    }
    let resp = req
        .call()
        .map_err(|e| format!("{}: {}", redact(url), http_error(&e, Some(timeout))))?;
    let code = resp.status().as_u16();
    if (200..400).contains(&code) {
        Ok(())
    } else {
        Err(format!("HTTP status {code}"))
    }
}

/// A URI with its user name and password, query and fragment hidden.
pub fn redact(uri: &str) -> String {
    let (scheme, rest) = match uri.split_once("://") {
        Some((s, r)) => (Some(s), r),
        None => (None, uri),
    };
    let (rest, hidden_query) = match rest.find(['?', '#']) {
        Some(i) => (&rest[..i], true),
        None => (rest, false),
    };
    let (authority, path) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let authority = match authority.rsplit_once('@') {
        Some((_, host)) => format!("***@{host}"),
        None => authority.to_owned(),
    };
    let mut out = String::new();
    if let Some(s) = scheme {
        out.push_str(s);
        out.push_str("://");
    }
    out.push_str(&authority);
    out.push_str(path);
    if hidden_query {
        out.push_str("?***");
    }
    out
}

// ---------------------------------------------------------------------------------------------
// What the transfer ends mean.

enum Source<'a> {
    TopFile(&'a str),
    Node(PathBuf),
    Http(&'a str),
}

fn end_text(e: &TransferEnd) -> String {
    match e.uri.as_deref() {
        Some(u) if !u.trim().is_empty() => redact(u.trim()),
        _ => "(no uri)".to_owned(),
    }
}

fn uri_of(e: &TransferEnd) -> Result<&str, &'static str> {
    match e.uri.as_deref().map(str::trim) {
        Some(u) if !u.is_empty() => Ok(u),
        _ => Err("no uri"),
    }
}

/// The scheme, lowercased, and what follows `://`.
fn scheme_of(uri: &str) -> Result<(String, &str), String> {
    match uri.split_once("://") {
        Some((s, rest)) if !s.is_empty() => Ok((s.to_ascii_lowercase(), rest)),
        _ => Err(format!("`{}` is not a URI (`scheme://…`)", redact(uri))),
    }
}

/// The path in the volume of a `file://` end: the plan's `volume_path`, else what follows
/// `file://` without its leading `/`.
fn end_volume_path(e: &TransferEnd) -> Option<&str> {
    if let Some(p) = e.volume_path.as_deref() {
        return Some(p);
    }
    let uri = e.uri.as_deref()?.trim();
    let (scheme, rest) = uri.split_once("://")?;
    scheme
        .eq_ignore_ascii_case("file")
        .then(|| rest.trim_start_matches('/'))
}

fn no_secret(e: &TransferEnd, side: &str) -> Result<(), String> {
    match &e.secret {
        Some(s) => Err(format!(
            "the {side} uses the secret `{}`: authenticated transfers are not supported by \
             fuzz run; fetch the data on this node yourself and give it as \
             `file:///path/on/node`",
            s.reference
        )),
        None => Ok(()),
    }
}

fn ingress_source(t: &Transfer) -> Result<Source<'_>, String> {
    let uri = uri_of(&t.source).map_err(|e| format!("the source has {e}"))?;
    let (scheme, rest) = scheme_of(uri)?;
    match scheme.as_str() {
        "file" => {
            if let Some(name) = t.source.file.as_deref() {
                Ok(Source::TopFile(name))
            } else if rest.starts_with('/') {
                Ok(Source::Node(PathBuf::from(rest)))
            } else {
                Err(format!(
                    "`file://{rest}` names no top-level `files` entry; to copy from this node, \
                     give an absolute path: `file:///path/on/node`"
                ))
            }
        }
        "http" | "https" => {
            uri.parse::<ureq::http::Uri>()
                .ok()
                .filter(|u| u.host().is_some_and(|h| !h.is_empty()))
                .ok_or_else(|| format!("`{}` is not a valid URL", redact(uri)))?;
            Ok(Source::Http(uri))
        }
        other => Err(format!(
            "`{other}://` sources are not supported by fuzz run, which fetches `file://` (a \
             top-level `files` entry, or `file:///path/on/node`), `http://` and `https://`; \
             download the data on this node and give it as `file:///path/on/node`"
        )),
    }
}

fn check_ingress(t: &Transfer) -> Result<(), String> {
    let source = ingress_source(t)?;
    no_secret(&t.source, "source")?;
    if let Source::Node(p) = &source {
        fs::metadata(p).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    let uri = uri_of(&t.destination).map_err(|e| format!("the destination has {e}"))?;
    let (scheme, _) = scheme_of(uri)?;
    if scheme != "file" {
        return Err(format!(
            "an ingress destination is a path in the volume, `file://path/in/volume`, not \
             `{scheme}://`"
        ));
    }
    no_secret(&t.destination, "destination")?;
    volume_rel(end_volume_path(&t.destination).unwrap_or_default())?;
    Ok(())
}

fn check_egress(t: &Transfer) -> Result<(), String> {
    let uri = uri_of(&t.source).map_err(|e| format!("the source has {e}"))?;
    let (scheme, _) = scheme_of(uri)?;
    if scheme != "file" {
        return Err(format!(
            "an egress source is a path in the volume, `file://path/in/volume`, not `{scheme}://`"
        ));
    }
    no_secret(&t.source, "source")?;
    volume_rel(end_volume_path(&t.source).unwrap_or_default())?;
    egress_destination(t)?;
    no_secret(&t.destination, "destination")?;
    Ok(())
}

/// The egress destination on the node, and whether it is a directory to copy into.
fn egress_destination(t: &Transfer) -> Result<(PathBuf, bool), String> {
    let uri = uri_of(&t.destination).map_err(|e| {
        format!("the destination has {e}; give a directory on this node as `file:///path/`")
    })?;
    let (scheme, rest) = scheme_of(uri)?;
    if scheme != "file" {
        return Err(format!(
            "`{scheme}://` destinations are not supported by fuzz run, which exports to this \
             node only (`file:///path/on/node`); export to a directory here and upload it from \
             there"
        ));
    }
    if !rest.starts_with('/') {
        return Err(format!(
            "an egress destination is an absolute path on this node, `file:///path/on/node`; \
             `file://{rest}` is not"
        ));
    }
    Ok((PathBuf::from(rest), rest.ends_with('/')))
}

/// A path relative to the volume's root that stays in it.
fn volume_rel(path: &str) -> Result<PathBuf, String> {
    if path.contains('\0') {
        return Err("the path in the volume contains a NUL character".into());
    }
    let mut out = PathBuf::new();
    for c in Path::new(path).components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::CurDir => {}
            Component::ParentDir => {
                return Err(format!(
                    "the path in the volume `{path}` contains `..`; a transfer stays in its volume"
                ))
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(format!(
                    "the path in the volume `{path}` is absolute; write it relative to the \
                     volume's root"
                ))
            }
        }
    }
    Ok(out)
}

/// Whether a path in the volume is a directory to put the source in: empty, or ending in `/`.
fn is_into(path: &str) -> bool {
    path.ends_with('/') || Path::new(path).components().all(|c| c == Component::CurDir)
}

/// A file name that can be put in a directory: one normal component.
fn safe_name(name: &str) -> Result<String, String> {
    let mut c = Path::new(name).components();
    match (c.next(), c.next()) {
        (Some(Component::Normal(n)), None) if !name.contains('\0') => {
            Ok(n.to_string_lossy().into_owned())
        }
        _ => Err(format!(
            "`{name}` cannot be used as a file name; give one in the destination (a path not \
             ending in `/`)"
        )),
    }
}

fn base_name(name: &str) -> Result<String, String> {
    safe_name(name.rsplit('/').next().unwrap_or(name))
}

/// The last segment of a URL's path, percent-decoded.
fn url_file_name(url: &str) -> Result<String, String> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let rest = &rest[..rest.find(['?', '#']).unwrap_or(rest.len())];
    let path = rest.find('/').map_or("", |i| &rest[i..]);
    let last = path.rsplit('/').next().unwrap_or("");
    if last.is_empty() {
        return Err(format!(
            "`{}` names no file, so the destination needs a file name (a path not ending in `/`)",
            redact(url)
        ));
    }
    safe_name(&percent_decode(last))
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Where a transfer writes in a volume: the directory that holds the destination (opened
/// below the volume's directory, parents created, none of them a symbolic link: see
/// [`crate::safe_fs`]), the destination's name in it, and its path for messages.
struct Placed {
    dir: Dir,
    name: OsString,
    path: PathBuf,
}

/// The destination on the node of a path in the volume: parents created, none of them leading
/// out of the volume through a symbolic link.
fn place_in_volume(
    volume_dir: &Path,
    rel: &Path,
    into: bool,
    name: impl FnOnce() -> Result<String, String>,
) -> Result<Placed, String> {
    let rel = if into {
        rel.join(name()?)
    } else {
        rel.to_path_buf()
    };
    let root_path = fs::canonicalize(volume_dir)
        .map_err(|e| format!("the volume's directory {}: {e}", volume_dir.display()))?;
    let root = Dir::open(&root_path).map_err(|e| format!("the volume's directory {e}"))?;
    let Some(file) = rel.file_name() else {
        return Err(format!("`{}` names no file in the volume", rel.display()));
    };
    let parent = rel.parent().unwrap_or(Path::new(""));
    let dir = root.create_dirs(parent).map_err(|e| match e.kind {
        ErrorKind::Symlink => format!(
            "{} leads out of the volume through a symbolic link (the runner does not write \
             through symbolic links)",
            e.path.display()
        ),
        _ => e.to_string(),
    })?;
    Ok(Placed {
        dir,
        name: file.to_owned(),
        path: root_path.join(&rel),
    })
}

fn refuse_directory(dest: &Placed) -> Result<(), String> {
    match dest.dir.kind(Path::new(&dest.name)) {
        Some(Kind::Dir) => Err(format!(
            "{} is a directory; end the destination with `/` to put the file in it",
            dest.path.display()
        )),
        _ => Ok(()),
    }
}

// ---------------------------------------------------------------------------------------------
// Writing.

/// Time and size left to one transfer.
struct Budget {
    deadline: Option<Instant>,
    timeout: Option<Duration>,
    max: u64,
    used: u64,
}

impl Budget {
    fn new(opts: &TransferOptions) -> Self {
        Budget {
            deadline: opts.timeout.map(|d| Instant::now() + d),
            timeout: opts.timeout,
            max: opts.max_bytes,
            used: 0,
        }
    }

    fn add(&mut self, n: u64) -> Result<(), String> {
        self.used = self.used.saturating_add(n);
        if self.used > self.max {
            return Err(too_big(self.max));
        }
        self.tick()
    }

    fn tick(&self) -> Result<(), String> {
        match (self.deadline, self.timeout) {
            (Some(d), Some(t)) if Instant::now() > d => Err(timed_out(t)),
            _ => Ok(()),
        }
    }
}

fn too_big(max: u64) -> String {
    format!("more than {} (the cap on one transfer)", human_bytes(max))
}

fn timed_out(t: Duration) -> String {
    format!(
        "timed out after {} (the transfer's policy.timeout.execute)",
        human_duration(t)
    )
}

fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut u = 0;
    let mut v = n;
    while u + 1 < UNITS.len() && v >= 1024 && (v >> 10) << 10 == v {
        v /= 1024;
        u += 1;
    }
    if u == 0 {
        format!("{n} bytes")
    } else {
        format!("{v} {} ({n} bytes)", UNITS[u])
    }
}

fn human_duration(d: Duration) -> String {
    let s = d.as_secs();
    if d.subsec_nanos() != 0 {
        format!("{:.3}s", d.as_secs_f64())
    } else if s >= 3600 && s / 3600 * 3600 == s {
        format!("{}h", s / 3600)
    } else if s >= 60 && s / 60 * 60 == s {
        format!("{}m", s / 60)
    } else {
        format!("{s}s")
    }
}

/// Removes the temporary file or tree (a name in `dir`) unless the transfer completed.
struct TempGuard<'a> {
    dir: &'a Dir,
    name: Option<PathBuf>,
}

impl Drop for TempGuard<'_> {
    fn drop(&mut self) {
        if let Some(n) = self.name.take() {
            let _ = self.dir.remove(n.as_os_str());
        }
    }
}

/// Writes `name` in `dir` through a temporary file beside it, renamed into place by `fill`'s
/// success; nothing is left on failure, and a symbolic link at `name` is replaced.
fn write_atomic(
    dir: &Dir,
    name: &OsStr,
    fill: impl FnOnce(&mut File) -> Result<u64, String>,
) -> Result<u64, String> {
    let shown = dir.path().join(name);
    let (mut f, tmp) = dir.create_temp(name, 0o644).map_err(|e| e.to_string())?;
    let mut guard = TempGuard {
        dir,
        name: Some(tmp.clone()),
    };
    let n = fill(&mut f)?;
    f.flush().map_err(|e| format!("{}: {e}", shown.display()))?;
    drop(f);
    dir.rename(&tmp, name).map_err(|e| e.to_string())?;
    guard.name = None;
    Ok(n)
}

/// Copies `r` to `w` within the budget.
fn copy_stream(
    r: &mut dyn Read,
    w: &mut File,
    budget: &mut Budget,
    read_err: &dyn Fn(io::Error) -> String,
    write_err: &dyn Fn(io::Error) -> String,
) -> Result<u64, String> {
    let mut buf = vec![0u8; 256 * 1024];
    let mut n = 0u64;
    loop {
        budget.tick()?;
        let k = match r.read(&mut buf) {
            Ok(0) => return Ok(n),
            Ok(k) => k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(read_err(e)),
        };
        budget.add(k as u64)?;
        w.write_all(&buf[..k]).map_err(write_err)?;
        n += k as u64;
    }
}

fn copy_file(src: &Path, dir: &Dir, name: &OsStr, budget: &mut Budget) -> Result<u64, String> {
    let dest = dir.path().join(name);
    let mut r = File::open(src).map_err(|e| format!("{}: {e}", src.display()))?;
    let perm = r
        .metadata()
        .map_err(|e| format!("{}: {e}", src.display()))?
        .permissions();
    write_atomic(dir, name, |w| {
        let n = copy_stream(
            &mut r,
            w,
            budget,
            &|e| format!("{}: {e}", src.display()),
            &|e| format!("{}: {e}", dest.display()),
        )?;
        w.set_permissions(perm)
            .map_err(|e| format!("{}: {e}", dest.display()))?;
        Ok(n)
    })
}

/// Copies the file or tree `src` (followed if a link) to `name` in `dir`, as the module doc
/// says.
fn copy_any(src: &Path, dir: &Dir, name: &OsStr, budget: &mut Budget) -> Result<u64, String> {
    let dest = dir.path().join(name);
    let meta = fs::metadata(src).map_err(|e| format!("{}: {e}", src.display()))?;
    let existing = dir.kind(Path::new(name));
    if meta.is_file() {
        if existing == Some(Kind::Dir) {
            return Err(format!(
                "{} is a directory; end the destination with `/` to put the file in it",
                dest.display()
            ));
        }
        copy_file(src, dir, name, budget)
    } else if meta.is_dir() {
        // A tree copied into itself would never end.
        let real_src = fs::canonicalize(src).map_err(|e| format!("{}: {e}", src.display()))?;
        let real_dest = fs::canonicalize(dir.path()).ok().map(|p| p.join(name));
        if real_dest.is_some_and(|d| d.starts_with(&real_src)) {
            return Err(format!(
                "{} is inside the directory {} it would be copied from",
                dest.display(),
                src.display()
            ));
        }
        match existing {
            Some(Kind::Dir) => {
                let sub = dir.open_dir(Path::new(name)).map_err(|e| e.to_string())?;
                copy_tree(src, &sub, budget)
            }
            Some(_) => Err(format!(
                "{} exists and is not a directory; the source {} is one",
                dest.display(),
                src.display()
            )),
            None => {
                let tmp = crate::safe_fs::temp_name(name);
                let sub = dir.make_dir(tmp.as_os_str()).map_err(|e| e.to_string())?;
                let mut guard = TempGuard {
                    dir,
                    name: Some(tmp.clone()),
                };
                let n = copy_tree(src, &sub, budget)?;
                dir.rename(&tmp, name).map_err(|e| e.to_string())?;
                guard.name = None;
                Ok(n)
            }
        }
    } else {
        Err(format!(
            "{} is neither a file nor a directory",
            src.display()
        ))
    }
}

/// Copies the contents of the directory `src` into the existing directory `dest`.
fn copy_tree(src: &Path, dest: &Dir, budget: &mut Budget) -> Result<u64, String> {
    let mut entries: Vec<_> = fs::read_dir(src)
        .map_err(|e| format!("{}: {e}", src.display()))?
        .collect::<Result<_, _>>()
        .map_err(|e| format!("{}: {e}", src.display()))?;
    entries.sort_by_key(|e| e.file_name());
    let mut n = 0;
    for e in entries {
        budget.tick()?;
        let from = e.path();
        let name = e.file_name();
        let to = dest.path().join(&name);
        let ft = e
            .file_type()
            .map_err(|err| format!("{}: {err}", from.display()))?;
        let existing = dest.kind(Path::new(&name));
        if ft.is_symlink() {
            let target =
                fs::read_link(&from).map_err(|err| format!("{}: {err}", from.display()))?;
            if existing == Some(Kind::Dir) {
                return Err(format!(
                    "{} is a directory; the source {} is a symbolic link",
                    to.display(),
                    from.display()
                ));
            }
            let tmp = crate::safe_fs::temp_name(&name);
            dest.symlink(&target, &tmp).map_err(|err| err.to_string())?;
            let mut guard = TempGuard {
                dir: dest,
                name: Some(tmp.clone()),
            };
            dest.rename(&tmp, &name).map_err(|err| err.to_string())?;
            guard.name = None;
        } else if ft.is_dir() {
            let sub = match existing {
                Some(Kind::Dir) => dest
                    .open_dir(Path::new(&name))
                    .map_err(|err| err.to_string())?,
                Some(_) => {
                    return Err(format!(
                        "{} exists and is not a directory; the source {} is one",
                        to.display(),
                        from.display()
                    ))
                }
                None => dest.make_dir(&name).map_err(|err| err.to_string())?,
            };
            n += copy_tree(&from, &sub, budget)?;
            if let Ok(m) = fs::metadata(&from) {
                use std::os::unix::fs::PermissionsExt;
                let _ = sub.set_mode(m.permissions().mode());
            }
        } else if ft.is_file() {
            if existing == Some(Kind::Dir) {
                return Err(format!(
                    "{} is a directory; the source {} is a file",
                    to.display(),
                    from.display()
                ));
            }
            n += copy_file(&from, dest, &name, budget)?;
        } else {
            return Err(format!(
                "{} is not a file, a directory or a symbolic link (a socket, device or FIFO), \
                 which a transfer does not copy",
                from.display()
            ));
        }
    }
    Ok(n)
}

// ---------------------------------------------------------------------------------------------
// HTTP(S).

/// The PEM certificates of `SSL_CERT_FILE` and `ca_file`.
fn extra_roots(ca_file: Option<&Path>) -> Result<Vec<ureq::tls::Certificate<'static>>, String> {
    let mut certs = Vec::new();
    if let Some(p) = std::env::var_os("SSL_CERT_FILE").filter(|p| !p.is_empty()) {
        certs.extend(read_pem(Path::new(&p), "SSL_CERT_FILE")?);
    }
    if let Some(p) = ca_file {
        certs.extend(read_pem(p, "--ca-file")?);
    }
    Ok(certs)
}

fn read_pem(path: &Path, what: &str) -> Result<Vec<ureq::tls::Certificate<'static>>, String> {
    let bytes = fuzzfile_io::read(path, fuzzfile_io::Kind::CERTIFICATES)
        .map_err(|e| format!("{what} {}: {}", path.display(), e.reason()))?;
    let mut certs = Vec::new();
    for item in ureq::tls::parse_pem(&bytes) {
        match item {
            Ok(ureq::tls::PemItem::Certificate(c)) => certs.push(c),
            Ok(_) => {}
            Err(e) => return Err(format!("{what} {}: not PEM: {e}", path.display())),
        }
    }
    if certs.is_empty() {
        return Err(format!(
            "{what} {}: no PEM certificate (`-----BEGIN CERTIFICATE-----`) in it",
            path.display()
        ));
    }
    Ok(certs)
}

fn agent(opts: &TransferOptions) -> Result<ureq::Agent, String> {
    let extra = extra_roots(opts.ca_file.as_deref())?;
    let roots = if extra.is_empty() {
        ureq::tls::RootCerts::WebPki
    } else {
        let mut all: Vec<ureq::tls::Certificate<'static>> =
            webpki_root_certs::TLS_SERVER_ROOT_CERTS
                .iter()
                .map(|c| ureq::tls::Certificate::from_der(c.as_ref()))
                .collect();
        all.extend(extra);
        ureq::tls::RootCerts::Specific(Arc::new(all))
    };
    let tls = ureq::tls::TlsConfig::builder().root_certs(roots).build();
    let connect = match opts.timeout {
        Some(t) if t < CONNECT_TIMEOUT => None,
        _ => Some(CONNECT_TIMEOUT),
    };
    Ok(ureq::Agent::new_with_config(
        ureq::Agent::config_builder()
            .tls_config(tls)
            .max_redirects(MAX_REDIRECTS)
            .http_status_as_error(false)
            .timeout_global(opts.timeout)
            .timeout_connect(connect)
            .user_agent(concat!("fuzz-run/", env!("CARGO_PKG_VERSION")))
            .build(),
    ))
}

/// An error of ureq in words. The URL is not repeated (the caller names the transfer), and
/// nothing of ureq's that could hold the URL is shown.
fn http_error(e: &ureq::Error, timeout: Option<Duration>) -> String {
    match e {
        ureq::Error::Timeout(ureq::Timeout::Connect)
            if timeout.is_none_or(|t| t >= CONNECT_TIMEOUT) =>
        {
            format!(
                "connecting took longer than {}",
                human_duration(CONNECT_TIMEOUT)
            )
        }
        ureq::Error::Timeout(_) => match timeout {
            Some(t) => timed_out(t),
            None => "timed out".to_owned(),
        },
        ureq::Error::HostNotFound => "the host name was not found".to_owned(),
        ureq::Error::ConnectionFailed => "the connection failed".to_owned(),
        ureq::Error::TooManyRedirects => format!("more than {MAX_REDIRECTS} redirects"),
        ureq::Error::RedirectFailed => "a redirect could not be followed".to_owned(),
        ureq::Error::BadUri(_) | ureq::Error::Http(_) => "not a valid URL".to_owned(),
        ureq::Error::Rustls(r) => {
            let text = r.to_string();
            certificate_error(&text).unwrap_or_else(|| format!("TLS: {text}"))
        }
        ureq::Error::Io(io) => {
            let text = io.to_string();
            certificate_error(&text).unwrap_or(text)
        }
        other => {
            let text = other.to_string();
            certificate_error(&text).unwrap_or(text)
        }
    }
}

/// A refused server certificate in words, with what to do.
fn certificate_error(text: &str) -> Option<String> {
    if !text.contains("invalid peer certificate") {
        return None;
    }
    Some(if text.contains("CaUsedAsEndEntity") {
        format!(
            "the server presents a CA certificate (basicConstraints CA:TRUE) as its own \
             certificate, which is refused even when trusted ({text}); the server needs a \
             certificate with CA:FALSE, for example one signed by that CA"
        )
    } else {
        format!(
            "the server's TLS certificate is not trusted ({text}); give the CA certificate \
             that signed it (PEM) with `fuzz run --ca-file FILE` or SSL_CERT_FILE"
        )
    })
}

/// An error reading the body: ureq's own, in words, or the I/O error.
fn body_error(e: io::Error, timeout: Option<Duration>) -> String {
    if let Some(inner) = e.get_ref().and_then(|i| i.downcast_ref::<ureq::Error>()) {
        return format!("reading the body: {}", http_error(inner, timeout));
    }
    match timeout {
        Some(t) if e.kind() == io::ErrorKind::TimedOut => timed_out(t),
        _ => format!("reading the body: {e}"),
    }
}

fn http_get(
    url: &str,
    dest: &Placed,
    opts: &TransferOptions,
    budget: &mut Budget,
) -> Result<u64, String> {
    let agent = agent(opts)?;
    let resp = agent
        .get(url)
        .call()
        .map_err(|e| http_error(&e, opts.timeout))?;
    let status = resp.status();
    if !status.is_success() {
        let reason = status.canonical_reason().unwrap_or("");
        return Err(format!("HTTP {} {reason}", status.as_u16())
            .trim_end()
            .to_owned());
    }
    let announced = resp
        .headers()
        .get("content-length")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if let Some(n) = announced.filter(|&n| n > opts.max_bytes) {
        return Err(format!(
            "the server announces {}: {}",
            human_bytes(n),
            too_big(opts.max_bytes)
        ));
    }
    let mut body = resp.into_body().into_reader();
    let timeout = opts.timeout;
    write_atomic(&dest.dir, &dest.name, |w| {
        copy_stream(&mut body, w, budget, &|e| body_error(e, timeout), &|e| {
            format!("{}: {e}", dest.path.display())
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use fuzzfile_plan::{SecretRef, Timeout, VolumeKind};
    use std::io::BufRead;
    use std::net::{TcpListener, TcpStream};
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

    static TEMP_SEQ: AtomicU64 = AtomicU64::new(0);

    fn end(uri: &str) -> TransferEnd {
        TransferEnd {
            uri: Some(uri.into()),
            volume_path: None,
            file: None,
            secret: None,
        }
    }

    /// As the plan lowers it: `file://` is a path in the volume, or a `files` entry.
    fn lowered(uri: &str, files: &[&str], source: bool) -> TransferEnd {
        let mut e = end(uri);
        if let Some(rest) = uri.strip_prefix("file://") {
            if source && files.contains(&rest) {
                e.file = Some(rest.into());
            } else {
                e.volume_path = Some(rest.trim_start_matches('/').into());
            }
        }
        e
    }

    fn tin(src: &str, dst: &str) -> Transfer {
        Transfer {
            source: lowered(src, &["params.csv", "run.sh"], true),
            destination: lowered(dst, &[], false),
            timeout: None,
        }
    }

    fn tout(src: &str, dst: &str) -> Transfer {
        Transfer {
            source: lowered(src, &[], true),
            destination: lowered(dst, &[], false),
            timeout: None,
        }
    }

    fn volume(ingress: Vec<Transfer>, egress: Vec<Transfer>) -> Volume {
        Volume {
            key: "data".into(),
            kind: VolumeKind::Ephemeral,
            reference: Some("volume://user/ephemeral".into()),
            use_: None,
            provisioner: None,
            name: None,
            size_bytes: None,
            host_path: "{workdir}/volumes/data".into(),
            ingress,
            egress,
            mounted_by: vec![],
        }
    }

    fn top(name: &str, content: &str) -> TopFile {
        TopFile {
            name: name.into(),
            content: content.into(),
            bytes: content.len() as u64,
        }
    }

    fn tmpdir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "fuzz-transfer-{tag}-{}-{}",
            std::process::id(),
            TEMP_SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).expect("temp dir");
        d
    }

    fn entries(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .expect("read dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_top_level_file_is_written_into_the_volume() {
        let vol = tmpdir("top");
        let files = [top("params.csv", "a,b\n1,2\n")];
        let r = ingress(
            &vol,
            &tin("file://params.csv", "file://inputs/params.csv"),
            &files,
            &TransferOptions::default(),
        )
        .expect("ingress");
        assert_eq!(r.bytes, 8);
        assert_eq!(
            fs::read_to_string(vol.join("inputs/params.csv")).expect("written"),
            "a,b\n1,2\n"
        );
        assert_eq!(
            entries(&vol.join("inputs")),
            ["params.csv"],
            "no temporary file left"
        );
        // Into a directory (trailing `/`, or the root), under the entry's name; three slashes
        // address the volume root too.
        ingress(
            &vol,
            &tin("file://params.csv", "file:///deep/dir/"),
            &files,
            &Default::default(),
        )
        .expect("into a directory");
        assert!(vol.join("deep/dir/params.csv").is_file());
        ingress(
            &vol,
            &tin("file://params.csv", "file://"),
            &files,
            &Default::default(),
        )
        .expect("into the root");
        assert!(vol.join("params.csv").is_file());
        // Written again: replaced.
        let files = [top("params.csv", "new\n")];
        ingress(
            &vol,
            &tin("file://params.csv", "file://params.csv"),
            &files,
            &Default::default(),
        )
        .expect("again");
        assert_eq!(
            fs::read_to_string(vol.join("params.csv")).expect("read"),
            "new\n"
        );
        fs::remove_dir_all(&vol).ok();
    }

    #[test]
    fn a_file_is_not_put_where_a_directory_is() {
        let vol = tmpdir("dir");
        fs::create_dir(vol.join("inputs")).expect("mkdir");
        let e = ingress(
            &vol,
            &tin("file://params.csv", "file://inputs"),
            &[top("params.csv", "x")],
            &Default::default(),
        )
        .expect_err("a directory is there");
        assert!(
            e.contains("is a directory; end the destination with `/`"),
            "{e}"
        );
        fs::remove_dir_all(&vol).ok();
    }

    #[test]
    fn a_link_at_the_destination_is_replaced_and_a_tree_never_goes_through_one() {
        let vol = tmpdir("link-name");
        let outside = tmpdir("link-name-outside");
        fs::write(outside.join("file"), "keep").expect("write");
        std::os::unix::fs::symlink(outside.join("file"), vol.join("x")).expect("symlink");
        ingress(
            &vol,
            &tin("file://params.csv", "file://x"),
            &[top("params.csv", "new")],
            &Default::default(),
        )
        .expect("a link at the name is replaced");
        assert_eq!(
            fs::read_to_string(outside.join("file")).expect("read"),
            "keep"
        );
        assert!(fs::symlink_metadata(vol.join("x")).expect("meta").is_file());
        assert_eq!(fs::read_to_string(vol.join("x")).expect("read"), "new");
        // A tree merged into a directory of the volume whose subdirectory is a link outside.
        let src = tmpdir("link-tree-src");
        fs::create_dir_all(src.join("tree/sub")).expect("mkdir");
        fs::write(src.join("tree/sub/f"), "f").expect("write");
        fs::create_dir(vol.join("tree")).expect("mkdir");
        std::os::unix::fs::symlink(&outside, vol.join("tree/sub")).expect("symlink");
        let e = ingress(
            &vol,
            &tin(&format!("file://{}/tree", src.display()), "file://"),
            &[],
            &Default::default(),
        )
        .expect_err("a tree through a link");
        assert!(e.contains("not a directory"), "{e}");
        assert_eq!(entries(&outside), vec!["file".to_owned()]);
        for d in [vol, outside, src] {
            fs::remove_dir_all(d).ok();
        }
    }

    #[test]
    fn paths_that_leave_the_volume_are_refused() {
        for dst in ["file://../x", "file://a/../../x", "file:///../etc/passwd"] {
            let e = check(&volume(vec![tin("https://example.org/x", dst)], vec![])).expect_err(dst);
            assert!(e.contains("volume `data`, ingress 1"), "{e}");
            assert!(e.contains("contains `..`"), "{e}");
        }
        let mut t = tin("https://example.org/x", "file://x");
        t.destination.volume_path = Some("/etc/x".into());
        let e = check(&volume(vec![t], vec![])).expect_err("absolute");
        assert!(e.contains("is absolute"), "{e}");
        let e = check(&volume(
            vec![],
            vec![tout("file://../../home", "file:///tmp/out/")],
        ))
        .expect_err("egress source");
        assert!(
            e.contains("volume `data`, egress 1") && e.contains("`..`"),
            "{e}"
        );
        // Through a symbolic link in the volume: refused when the transfer runs.
        let vol = tmpdir("link");
        let outside = tmpdir("outside");
        std::os::unix::fs::symlink(&outside, vol.join("out")).expect("symlink");
        let e = ingress(
            &vol,
            &tin("file://params.csv", "file://out/x"),
            &[top("params.csv", "x")],
            &Default::default(),
        )
        .expect_err("through a link");
        assert!(e.contains("leads out of the volume"), "{e}");
        assert!(entries(&outside).is_empty());
        fs::write(outside.join("secret"), "s").expect("write");
        let dest = tmpdir("dest");
        let e = egress(
            &vol,
            &tout("file://out/secret", &format!("file://{}/", dest.display())),
            &Default::default(),
        )
        .expect_err("egress through a link");
        assert!(e.contains("leads out of the volume"), "{e}");
        for d in [vol, outside, dest] {
            fs::remove_dir_all(d).ok();
        }
    }

    #[test]
    fn other_schemes_and_secrets_are_refused_by_check() {
        let e = check(&volume(
            vec![
                tin("https://example.org/a.tar.gz", "file://a.tar.gz"),
                tin("s3://bucket/data.tar.gz", "file://inputs/data.tar.gz"),
            ],
            vec![tout("file://results/out.tar.gz", "s3://bucket/out.tar.gz")],
        ))
        .expect_err("s3");
        let lines: Vec<&str> = e.lines().collect();
        assert_eq!(lines.len(), 2, "{e}");
        assert!(lines[0].starts_with("volume `data`, ingress 2 (s3://bucket/data.tar.gz → file://inputs/data.tar.gz): `s3://` sources are not supported"), "{e}");
        assert!(lines[0].contains("file:///path/on/node"), "{e}");
        assert!(lines[1].starts_with("volume `data`, egress 1 (file://results/out.tar.gz → s3://bucket/out.tar.gz): `s3://` destinations are not supported"), "{e}");

        let mut t = tin("https://example.org/a", "file://a");
        t.source.secret = Some(SecretRef {
            reference: "secret://account/TOKEN".into(),
            scope: "account".into(),
            name: "TOKEN".into(),
        });
        let e = check(&volume(vec![t], vec![])).expect_err("secret");
        assert!(
            e.contains("secret://account/TOKEN") && e.contains("authenticated"),
            "{e}"
        );

        let e = check(&volume(vec![tin("file://nope.txt", "file://x")], vec![]))
            .expect_err("no such files entry");
        assert!(e.contains("names no top-level `files` entry"), "{e}");
        let e = check(&volume(
            vec![tin("file:///no/such/dir", "file://x")],
            vec![],
        ))
        .expect_err("no such node path");
        assert!(e.contains("/no/such/dir"), "{e}");
        let e = check(&volume(
            vec![],
            vec![tout("file://log", "file://relative/dir")],
        ))
        .expect_err("relative egress destination");
        assert!(e.contains("absolute path on this node"), "{e}");
        let mut t = tout("file://log", "file:///tmp/x");
        t.destination.uri = None;
        let e = check(&volume(vec![], vec![t])).expect_err("no destination");
        assert!(e.contains("the destination has no uri"), "{e}");
        let e = check(&volume(vec![tin("https://", "file://x")], vec![])).expect_err("no host");
        assert!(e.contains("not a valid URL"), "{e}");

        check(&volume(
            vec![
                tin("file://params.csv", "file://p.csv"),
                tin("http://example.org/x", "file:///in/"),
                tin(
                    &format!("file://{}", std::env::temp_dir().display()),
                    "file://tmp/",
                ),
            ],
            vec![tout("file://log.lammps", "file:///tmp/results/")],
        ))
        .expect("supported");
    }

    #[test]
    fn secrets_in_urls_are_never_shown() {
        assert_eq!(
            redact("https://user:pa55@host.example:8443/a/b.tar?X-Amz-Signature=abc#f"),
            "https://***@host.example:8443/a/b.tar?***"
        );
        assert_eq!(redact("https://host/x"), "https://host/x");
        let t = tin("https://u:p@127.0.0.1:1/x?sig=1", "file://x");
        let e = ingress(&tmpdir("redact"), &t, &[], &Default::default()).expect_err("refused");
        assert!(!e.contains("u:p") && !e.contains("sig=1"), "{e}");
        assert!(e.contains("https://***@127.0.0.1:1/x?***"), "{e}");
    }

    #[test]
    fn file_names_come_from_the_url() {
        assert_eq!(
            url_file_name("https://h/a/in.lj.txt?x=1").as_deref(),
            Ok("in.lj.txt")
        );
        assert_eq!(
            url_file_name("https://h/a/My%20File.zip").as_deref(),
            Ok("My File.zip")
        );
        assert!(url_file_name("https://h/a/").is_err());
        assert!(url_file_name("https://h").is_err());
        assert!(url_file_name("https://h/a/%2e%2e").is_err());
        assert!(url_file_name("https://h/a/x%2fy").is_err());
    }

    #[test]
    fn a_tree_on_the_node_is_copied_in_and_out() {
        let src = tmpdir("tree-src");
        fs::create_dir_all(src.join("sub/deeper")).expect("mkdir");
        fs::write(src.join("a.txt"), "aaaa").expect("write");
        fs::write(src.join("sub/b.txt"), "bb").expect("write");
        fs::write(src.join("sub/deeper/run.sh"), "#!/bin/sh\n").expect("write");
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(
            src.join("sub/deeper/run.sh"),
            fs::Permissions::from_mode(0o755),
        )
        .expect("chmod");
        std::os::unix::fs::symlink("a.txt", src.join("link")).expect("symlink");
        let vol = tmpdir("tree-vol");
        let r = ingress(
            &vol,
            &tin(&format!("file://{}", src.display()), "file://inputs/"),
            &[],
            &Default::default(),
        )
        .expect("ingress a tree");
        let name = src
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        let copied = vol.join("inputs").join(&name);
        assert_eq!(
            r.destination,
            fs::canonicalize(&vol)
                .expect("canon")
                .join("inputs")
                .join(&name)
        );
        assert_eq!(r.bytes, 4 + 2 + 10);
        assert_eq!(
            fs::read_to_string(copied.join("sub/b.txt")).expect("b"),
            "bb"
        );
        assert_eq!(
            fs::read_link(copied.join("link")).expect("link"),
            Path::new("a.txt")
        );
        let mode = fs::metadata(copied.join("sub/deeper/run.sh"))
            .expect("meta")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o755);
        assert_eq!(
            entries(&vol.join("inputs")),
            [name.as_str()],
            "no temporary tree left"
        );

        // Out again, into an existing directory: merged, other files kept.
        let out = tmpdir("tree-out");
        fs::create_dir_all(out.join("res")).expect("mkdir");
        fs::write(out.join("res/keep.txt"), "k").expect("write");
        fs::write(out.join("res/a.txt"), "old").expect("write");
        let r = egress(
            &vol,
            &tout(
                &format!("file://inputs/{name}"),
                &format!("file://{}/res", out.display()),
            ),
            &Default::default(),
        )
        .expect("egress a tree");
        assert_eq!(r.bytes, 16);
        assert_eq!(
            entries(&out.join("res")),
            ["a.txt", "keep.txt", "link", "sub"]
        );
        assert_eq!(
            fs::read_to_string(out.join("res/a.txt")).expect("a"),
            "aaaa"
        );
        assert_eq!(
            fs::read_to_string(out.join("res/sub/deeper/run.sh")).expect("r"),
            "#!/bin/sh\n"
        );
        // Not into itself.
        let e = egress(
            &vol,
            &tout(
                "file://inputs",
                &format!("file://{}/inputs/again/", vol.display()),
            ),
            &Default::default(),
        )
        .expect_err("into itself");
        assert!(e.contains("it would be copied from"), "{e}");
        for d in [src, vol, out] {
            fs::remove_dir_all(d).ok();
        }
    }

    #[test]
    fn egress_copies_a_file_to_the_node() {
        let vol = tmpdir("eg-vol");
        fs::create_dir_all(vol.join("results")).expect("mkdir");
        fs::write(vol.join("results/log.lammps"), "done\n").expect("write");
        let out = tmpdir("eg-out");
        // Into a directory (created), under its own name.
        let r = egress(
            &vol,
            &tout(
                "file://results/log.lammps",
                &format!("file://{}/new/dir/", out.display()),
            ),
            &Default::default(),
        )
        .expect("egress");
        assert_eq!(r.destination, out.join("new/dir/log.lammps"));
        assert_eq!(r.bytes, 5);
        assert_eq!(fs::read_to_string(&r.destination).expect("read"), "done\n");
        // The exact name.
        egress(
            &vol,
            &tout(
                "file://results/log.lammps",
                &format!("file://{}/run1.log", out.display()),
            ),
            &Default::default(),
        )
        .expect("egress");
        assert_eq!(
            fs::read_to_string(out.join("run1.log")).expect("read"),
            "done\n"
        );
        assert_eq!(entries(&out), ["new", "run1.log"]);
        // Missing in the volume.
        let e = egress(
            &vol,
            &tout("file://results/nope", &format!("file://{}/", out.display())),
            &Default::default(),
        )
        .expect_err("missing");
        assert!(e.contains("does not exist in the volume"), "{e}");
        // The cap.
        let e = egress(
            &vol,
            &tout(
                "file://results/log.lammps",
                &format!("file://{}/capped", out.display()),
            ),
            &TransferOptions {
                max_bytes: 3,
                ..Default::default()
            },
        )
        .expect_err("cap");
        assert!(e.contains("more than 3 bytes"), "{e}");
        assert!(!out.join("capped").exists());
        assert_eq!(entries(&out), ["new", "run1.log"], "no temporary file left");
        fs::remove_dir_all(&vol).ok();
        fs::remove_dir_all(&out).ok();
    }

    // A tiny HTTP/1.1 server on loopback: each connection gets what `answer` says for its
    // request path. Stops when dropped.
    struct Server {
        port: u16,
        stop: Arc<AtomicBool>,
        thread: Option<std::thread::JoinHandle<()>>,
    }

    enum Answer {
        Ok(Vec<u8>),
        Status(u16, &'static str),
        Redirect(String),
        /// Says this many bytes, sends fewer, closes.
        Short(usize, Vec<u8>),
        /// No Content-Length: the body ends when the connection closes.
        Unsized(Vec<u8>),
        /// Says this many bytes, sends some, then holds the connection.
        Stall(usize, Vec<u8>),
        /// Reads the request, answers nothing, holds the connection.
        Silent,
    }

    impl Server {
        fn start(answer: impl Fn(&str) -> Answer + Send + 'static) -> Server {
            let l = TcpListener::bind("127.0.0.1:0").expect("bind");
            let port = l.local_addr().expect("addr").port();
            l.set_nonblocking(true).expect("nonblocking");
            let stop = Arc::new(AtomicBool::new(false));
            let s = stop.clone();
            let thread = std::thread::spawn(move || {
                let mut held: Vec<TcpStream> = Vec::new();
                while !s.load(Ordering::Relaxed) {
                    match l.accept() {
                        Ok((c, _)) => {
                            c.set_nonblocking(false).ok();
                            c.set_read_timeout(Some(Duration::from_secs(5))).ok();
                            if let Some(c) = serve(c, &answer) {
                                held.push(c);
                            }
                        }
                        Err(_) => std::thread::sleep(Duration::from_millis(10)),
                    }
                }
            });
            Server {
                port,
                stop,
                thread: Some(thread),
            }
        }

        fn url(&self, path: &str) -> String {
            format!("http://127.0.0.1:{}{path}", self.port)
        }
    }

    impl Drop for Server {
        fn drop(&mut self) {
            self.stop.store(true, Ordering::Relaxed);
            if let Some(t) = self.thread.take() {
                let _ = t.join();
            }
        }
    }

    fn serve(mut c: TcpStream, answer: &dyn Fn(&str) -> Answer) -> Option<TcpStream> {
        let mut r = io::BufReader::new(c.try_clone().ok()?);
        let mut line = String::new();
        r.read_line(&mut line).ok()?;
        let path = line.split_whitespace().nth(1).unwrap_or("/").to_owned();
        loop {
            let mut h = String::new();
            if r.read_line(&mut h).ok()? == 0 || h == "\r\n" || h == "\n" {
                break;
            }
        }
        let head = |code: u16, reason: &str, len: usize, extra: &str| {
            format!("HTTP/1.1 {code} {reason}\r\nContent-Length: {len}\r\n{extra}Connection: close\r\n\r\n")
        };
        match answer(&path) {
            Answer::Ok(body) => {
                let _ = c.write_all(head(200, "OK", body.len(), "").as_bytes());
                let _ = c.write_all(&body);
            }
            Answer::Status(code, reason) => {
                let _ = c.write_all(head(code, reason, 9, "").as_bytes());
                let _ = c.write_all(b"not found");
            }
            Answer::Redirect(to) => {
                let _ =
                    c.write_all(head(302, "Found", 0, &format!("Location: {to}\r\n")).as_bytes());
            }
            Answer::Short(len, body) => {
                let _ = c.write_all(head(200, "OK", len, "").as_bytes());
                let _ = c.write_all(&body);
            }
            Answer::Unsized(body) => {
                let _ = c.write_all(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n");
                let _ = c.write_all(&body);
            }
            Answer::Stall(len, body) => {
                let _ = c.write_all(head(200, "OK", len, "").as_bytes());
                let _ = c.write_all(&body);
                return Some(c);
            }
            Answer::Silent => return Some(c),
        }
        None
    }

    #[test]
    fn http_downloads_follow_redirects_and_refuse_errors() {
        let body: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        let b = body.clone();
        let server = Server::start(move |path| match path {
            "/data/in.lj.txt" => Answer::Ok(b.clone()),
            "/moved" => Answer::Redirect("/data/in.lj.txt".into()),
            "/short" => Answer::Short(1000, vec![b'x'; 10]),
            "/unsized" => Answer::Unsized(vec![b'u'; 5000]),
            _ => Answer::Status(404, "Not Found"),
        });
        let vol = tmpdir("http");
        let r = ingress(
            &vol,
            &tin(&server.url("/data/in.lj.txt"), "file:///"),
            &[],
            &Default::default(),
        )
        .expect("download");
        assert_eq!(r.bytes, body.len() as u64);
        assert_eq!(fs::read(vol.join("in.lj.txt")).expect("read"), body);

        ingress(
            &vol,
            &tin(&server.url("/moved"), "file://m/x.bin"),
            &[],
            &Default::default(),
        )
        .expect("redirected");
        assert_eq!(fs::read(vol.join("m/x.bin")).expect("read"), body);

        let e = ingress(
            &vol,
            &tin(&server.url("/missing.txt"), "file://missing.txt"),
            &[],
            &Default::default(),
        )
        .expect_err("404");
        assert!(
            e.ends_with("/missing.txt → file://missing.txt: HTTP 404 Not Found"),
            "{e}"
        );

        let e = ingress(
            &vol,
            &tin(&server.url("/short"), "file://short"),
            &[],
            &Default::default(),
        )
        .expect_err("cut short");
        assert!(e.contains("reading the body"), "{e}");

        let e = ingress(
            &vol,
            &tin(&server.url("/data/in.lj.txt"), "file://capped"),
            &[],
            &TransferOptions {
                max_bytes: 1000,
                ..Default::default()
            },
        )
        .expect_err("cap");
        assert!(
            e.contains("announces") && e.contains("more than 1000 bytes"),
            "{e}"
        );
        // Without a Content-Length the cap is met while the body streams in.
        let e = ingress(
            &vol,
            &tin(&server.url("/unsized"), "file://capped"),
            &[],
            &TransferOptions {
                max_bytes: 1000,
                ..Default::default()
            },
        )
        .expect_err("cap while streaming");
        assert!(
            e.ends_with("more than 1000 bytes (the cap on one transfer)"),
            "{e}"
        );
        ingress(
            &vol,
            &tin(&server.url("/unsized"), "file://u/"),
            &[],
            &Default::default(),
        )
        .expect("an unsized body");
        assert_eq!(fs::read(vol.join("u/unsized")).expect("read").len(), 5000);
        assert_eq!(human_bytes(DEFAULT_MAX_BYTES), "64 GiB (68719476736 bytes)");
        assert_eq!(
            entries(&vol),
            ["in.lj.txt", "m", "u"],
            "no file left by a failure"
        );
        fs::remove_dir_all(&vol).ok();
    }

    #[test]
    fn a_silent_server_times_out() {
        let server = Server::start(|_| Answer::Silent);
        let vol = tmpdir("silent");
        let mut t = tin(&server.url("/x"), "file://x");
        t.timeout = Some(Timeout {
            seconds: 1,
            as_written: "1s".into(),
            source: "the transfer's policy.timeout.execute".into(),
            at: None,
        });
        let started = Instant::now();
        let e =
            ingress(&vol, &t, &[], &TransferOptions::for_transfer(&t, None)).expect_err("timeout");
        assert!(started.elapsed() < Duration::from_secs(10));
        assert!(
            e.contains("timed out after 1s (the transfer's policy.timeout.execute)"),
            "{e}"
        );
        assert!(entries(&vol).is_empty());
        fs::remove_dir_all(&vol).ok();
    }

    #[test]
    fn a_body_that_stalls_times_out() {
        let server = Server::start(|_| Answer::Stall(100_000, vec![b's'; 1000]));
        let vol = tmpdir("stall");
        let opts = TransferOptions {
            timeout: Some(Duration::from_millis(1500)),
            ..Default::default()
        };
        let e = ingress(&vol, &tin(&server.url("/big.bin"), "file://"), &[], &opts)
            .expect_err("timeout");
        assert!(e.contains("timed out after 1.500s"), "{e}");
        assert!(
            entries(&vol).is_empty(),
            "no partial file: {:?}",
            entries(&vol)
        );
        fs::remove_dir_all(&vol).ok();
    }

    #[test]
    fn ca_files_must_hold_certificates() {
        let d = tmpdir("ca");
        fs::write(d.join("empty.pem"), "nothing here\n").expect("write");
        let e = read_pem(&d.join("empty.pem"), "--ca-file").expect_err("empty");
        assert!(e.contains("no PEM certificate"), "{e}");
        let e = read_pem(&d.join("missing.pem"), "--ca-file").expect_err("missing");
        assert!(e.contains("missing.pem"), "{e}");
        fs::remove_dir_all(&d).ok();
    }
}
