// HTTPS ingress against a server on 127.0.0.1 with a certificate made for the test: trusted
// through `ca_file` or SSL_CERT_FILE, refused without it, a 404 leaves nothing behind.
//
// Needs the `openssl` command and `python3` with its `ssl` module (Debian: openssl, python3).

use fuzz_runner::transfer::{ingress, TransferOptions};
use fuzzfile_plan::{Transfer, TransferEnd};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

const SERVER: &str = r#"
import functools, http.server, os, signal, ssl, sys, threading
root, cert, key = sys.argv[1:4]
signal.alarm(300)
# Ends with the test: its standard input closes when the test process goes away.
threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()
class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=root))
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
print(srv.server_address[1], flush=True)
srv.serve_forever()
"#;

struct Fixture {
    dir: PathBuf,
    cert: PathBuf,
    server: Child,
    port: u16,
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn need(program: &str, version_arg: &str, package: &str) {
    let found = Command::new(program)
        .arg(version_arg)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        found,
        "this test needs `{program}` (Debian package {package})"
    );
}

/// `server_cert`: a certificate for a server (CA:FALSE); else what `openssl req -x509` makes by
/// default, a CA certificate.
fn fixture(tag: &str, server_cert: bool) -> Fixture {
    need("openssl", "version", "openssl");
    need("python3", "--version", "python3");
    let dir = std::env::temp_dir().join(format!("fuzz-https-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("www/data")).expect("temp dir");
    std::fs::write(
        dir.join("www/data/in.lj.txt"),
        "units lj\natom_style atomic\n",
    )
    .expect("write");
    let (key, cert) = (dir.join("k.pem"), dir.join("c.pem"));
    let mut req = Command::new("openssl");
    req.args([
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
    ])
    .args(["-nodes", "-subj", "/CN=localhost", "-days", "1"])
    .args(["-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"]);
    if server_cert {
        req.args(["-addext", "basicConstraints=critical,CA:FALSE"]);
    }
    let out = req
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .expect("openssl runs");
    assert!(
        out.status.success(),
        "openssl req: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut server = Command::new("python3")
        .arg("-c")
        .arg(SERVER)
        .arg(dir.join("www"))
        .arg(&cert)
        .arg(&key)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("python3 runs");
    let mut line = String::new();
    BufReader::new(server.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("the server prints its port");
    let port = line.trim().parse().unwrap_or_else(|_| {
        let _ = server.kill();
        panic!("the server did not start: {line:?}")
    });
    Fixture {
        dir,
        cert,
        server,
        port,
    }
}

fn end(uri: &str, volume_path: Option<&str>) -> TransferEnd {
    TransferEnd {
        uri: Some(uri.into()),
        volume_path: volume_path.map(Into::into),
        file: None,
        secret: None,
    }
}

fn download(f: &Fixture, path: &str, volume: &Path, opts: &TransferOptions) -> Result<u64, String> {
    let t = Transfer {
        source: end(&format!("https://127.0.0.1:{}{path}", f.port), None),
        destination: end("file://inputs/", Some("inputs/")),
        timeout: None,
    };
    ingress(volume, &t, &[], opts).map(|r| r.bytes)
}

fn volume(f: &Fixture, name: &str) -> PathBuf {
    let v = f.dir.join(name);
    std::fs::create_dir_all(&v).expect("volume dir");
    v
}

fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn https_with_the_ca_file_downloads_and_without_it_is_refused() {
    let f = fixture("ca", true);
    let trusted = TransferOptions {
        ca_file: Some(f.cert.clone()),
        ..Default::default()
    };

    let vol = volume(&f, "vol-ok");
    let bytes = download(&f, "/data/in.lj.txt", &vol, &trusted).expect("trusted download");
    assert_eq!(bytes, 27);
    assert_eq!(
        std::fs::read_to_string(vol.join("inputs/in.lj.txt")).expect("read"),
        "units lj\natom_style atomic\n"
    );
    assert_eq!(listing(&vol.join("inputs")), ["in.lj.txt"]);

    if std::env::var_os("SSL_CERT_FILE").is_none() {
        let vol = volume(&f, "vol-untrusted");
        let e = download(&f, "/data/in.lj.txt", &vol, &TransferOptions::default())
            .expect_err("an unknown CA is refused");
        assert!(
            e.contains("the server's TLS certificate is not trusted") && e.contains("--ca-file"),
            "{e}"
        );
        assert!(listing(&vol.join("inputs")).is_empty(), "nothing left: {e}");
    }

    let vol = volume(&f, "vol-404");
    let e = download(&f, "/data/missing.txt", &vol, &trusted).expect_err("404");
    assert!(
        e.ends_with("HTTP 404 File not found") || e.ends_with("HTTP 404 Not Found"),
        "{e}"
    );
    assert!(listing(&vol.join("inputs")).is_empty(), "nothing left: {e}");
}

#[test]
fn a_ca_certificate_used_by_the_server_itself_is_explained() {
    let f = fixture("ca-true", false);
    let vol = volume(&f, "vol");
    let e = download(
        &f,
        "/data/in.lj.txt",
        &vol,
        &TransferOptions {
            ca_file: Some(f.cert.clone()),
            ..Default::default()
        },
    )
    .expect_err("refused");
    assert!(e.contains("CA:TRUE") && e.contains("CA:FALSE"), "{e}");
}

#[test]
fn ssl_cert_file_is_trusted_too() {
    // SSL_CERT_FILE is read from the environment, so the download runs in a child process
    // (this test binary, running only `ssl_cert_file_child`) with the variable set.
    let f = fixture("env", true);
    let vol = volume(&f, "vol-env");
    let out = Command::new(std::env::current_exe().expect("test binary"))
        .args(["--exact", "ssl_cert_file_child", "--ignored", "--nocapture"])
        .env("SSL_CERT_FILE", &f.cert)
        .env("FUZZ_TRANSFER_CHILD_PORT", f.port.to_string())
        .env("FUZZ_TRANSFER_CHILD_VOLUME", &vol)
        .output()
        .expect("child runs");
    assert!(
        out.status.success(),
        "child: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(vol.join("inputs/in.lj.txt").is_file());
}

#[test]
#[ignore = "run by ssl_cert_file_is_trusted_too"]
fn ssl_cert_file_child() {
    let (Some(port), Some(vol)) = (
        std::env::var_os("FUZZ_TRANSFER_CHILD_PORT"),
        std::env::var_os("FUZZ_TRANSFER_CHILD_VOLUME"),
    ) else {
        return;
    };
    let t = Transfer {
        source: end(
            &format!(
                "https://127.0.0.1:{}/data/in.lj.txt",
                port.to_string_lossy()
            ),
            None,
        ),
        destination: end("file://inputs/", Some("inputs/")),
        timeout: None,
    };
    ingress(Path::new(&vol), &t, &[], &TransferOptions::default())
        .expect("trusted by SSL_CERT_FILE");
}
