//! Value grammars of Fuzzfile fields. Every parser returns the value or a message that says what
//! is wrong and what a valid value looks like; none of them panics on any input.

use std::fmt;

/// A memory or volume size in bytes, as written (`14GiB`, `0.5GiB`, `512MB`, `1024`).
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct ByteSize {
    pub bytes: u64,
    /// The unit was written explicitly (`1024` alone means bytes).
    pub has_unit: bool,
}

/// Parse a size: a decimal number (fractions allowed) and an optional unit, case-insensitive:
/// `B`, decimal `K`/`KB` … `P`/`PB` (powers of 1000) or binary `Ki`/`KiB` … `Pi`/`PiB` (powers
/// of 1024). No unit means bytes.
pub fn parse_size(s: &str) -> Result<ByteSize, String> {
    let t = s.trim();
    if t.is_empty() {
        return Err("a size is empty; write a number and a unit such as `4GiB` or `512MB`".into());
    }
    let num_end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(num_end);
    let unit_trimmed = unit.strip_prefix(' ').unwrap_or(unit);
    if num.is_empty() || num == "." || num.matches('.').count() > 1 {
        return Err(format!(
            "`{s}` is not a size: it must start with a number, as in `4GiB` or `0.5GiB`"
        ));
    }
    let value: f64 = num
        .parse()
        .map_err(|_| format!("`{s}` is not a size: `{num}` is not a number"))?;
    let lower = unit_trimmed.to_ascii_lowercase();
    let mult: f64 = match lower.as_str() {
        "" | "b" => 1.0,
        "k" | "kb" => 1e3,
        "m" | "mb" => 1e6,
        "g" | "gb" => 1e9,
        "t" | "tb" => 1e12,
        "p" | "pb" => 1e15,
        "ki" | "kib" => 1024.0,
        "mi" | "mib" => 1024f64.powi(2),
        "gi" | "gib" => 1024f64.powi(3),
        "ti" | "tib" => 1024f64.powi(4),
        "pi" | "pib" => 1024f64.powi(5),
        _ => {
            return Err(format!(
                "`{unit_trimmed}` is not a size unit; use B, KB, MB, GB, TB, PB (powers of 1000) or KiB, MiB, GiB, TiB, PiB (powers of 1024)"
            ))
        }
    };
    let bytes = value * mult;
    if !bytes.is_finite() || bytes > u64::MAX as f64 {
        return Err(format!("`{s}` is too large a size"));
    }
    Ok(ByteSize {
        bytes: bytes.round() as u64,
        has_unit: !lower.is_empty(),
    })
}

/// A duration in nanoseconds, parsed with the grammar of Go's `time.ParseDuration`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Duration {
    pub nanos: u128,
}

impl Duration {
    pub fn as_secs_f64(self) -> f64 {
        self.nanos as f64 / 1e9
    }
}

impl fmt::Display for Duration {
    /// Go's `Duration.String` form (`2h30m0s`, `1.5s`, `0s`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.nanos;
        if n == 0 {
            return f.write_str("0s");
        }
        if n < 1_000_000_000 {
            return write!(f, "{}ms", n as f64 / 1e6);
        }
        let secs = n / 1_000_000_000;
        let frac = n % 1_000_000_000;
        let h = secs / 3600;
        let m = (secs % 3600) / 60;
        let s = secs % 60;
        if h > 0 {
            write!(f, "{h}h")?;
        }
        if h > 0 || m > 0 {
            write!(f, "{m}m")?;
        }
        if frac == 0 {
            write!(f, "{s}s")
        } else {
            let frac_s = format!("{:09}", frac);
            write!(f, "{s}.{}s", frac_s.trim_end_matches('0'))
        }
    }
}

/// Why a duration was rejected.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum DurationError {
    /// Not a Go duration at all.
    Invalid(String),
    /// Uses a `d` (days) or `w` unit, which Go's grammar lacks; `suggestion` is the same span in
    /// hours.
    DayUnit { suggestion: String },
}

/// Parse a Go `time.ParseDuration` string: a sequence of decimal numbers, each with an optional
/// fraction and a unit (`ns`, `us`, `µs`, `ms`, `s`, `m`, `h`), such as `30m`, `2h30m`,
/// `8h0m0s`, `1.5h`. `0` alone is allowed. Negative durations are rejected (a timeout cannot be
/// negative).
pub fn parse_duration(s: &str) -> Result<Duration, DurationError> {
    let invalid = |why: &str| {
        DurationError::Invalid(format!(
            "`{s}` is not a duration{why}; write a number and a unit as Go does: `30m`, `2h`, `1h30m`, `90s` (units ns, us, ms, s, m, h)"
        ))
    };
    let t = s;
    if t.is_empty() {
        return Err(invalid(" (it is empty)"));
    }
    if t.starts_with('-') {
        return Err(DurationError::Invalid(format!(
            "`{s}` is negative; a timeout must be positive"
        )));
    }
    let t = t.strip_prefix('+').unwrap_or(t);
    if t == "0" {
        return Ok(Duration { nanos: 0 });
    }
    let mut total: f64 = 0.0;
    let mut rest = t;
    let mut has_day = false;
    let mut hours_total: f64 = 0.0;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if num_len == 0 {
            return Err(invalid(""));
        }
        let num = &rest[..num_len];
        if num == "." || num.matches('.').count() > 1 {
            return Err(invalid(""));
        }
        let v: f64 = num.parse().map_err(|_| invalid(""))?;
        rest = &rest[num_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = &rest[..unit_len];
        rest = &rest[unit_len..];
        let mult = match unit {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            "d" => {
                has_day = true;
                hours_total += v * 24.0;
                continue;
            }
            "w" => {
                has_day = true;
                hours_total += v * 24.0 * 7.0;
                continue;
            }
            "" => return Err(invalid(&format!(": `{num}` has no unit"))),
            other => return Err(invalid(&format!(": `{other}` is not a unit"))),
        };
        if mult == 3600e9 {
            hours_total += v;
        } else {
            hours_total += v * mult / 3600e9;
        }
        total += v * mult;
    }
    if has_day {
        let h = hours_total;
        let suggestion = if (h - h.round()).abs() < 1e-9 {
            format!("{}h", h.round() as u64)
        } else {
            format!("{h}h")
        };
        return Err(DurationError::DayUnit { suggestion });
    }
    if !total.is_finite() || total > 9.2e18 {
        return Err(DurationError::Invalid(format!(
            "`{s}` is longer than the longest Go duration (about 292 years)"
        )));
    }
    Ok(Duration {
        nanos: total.round() as u128,
    })
}

/// The scheme of an image URI.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ImageScheme {
    /// `docker://`: an OCI image.
    Docker,
    /// `oras://`: a SIF image stored in an OCI registry.
    Oras,
}

#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ImageUri {
    pub scheme: ImageScheme,
    /// Everything after `scheme://`: `nvcr.io/nvidia/pytorch:25.01-py3`.
    pub reference: String,
}

impl ImageUri {
    /// The tag after the last `:` of the last path component, if any (`25.01-py3`).
    pub fn tag(&self) -> Option<&str> {
        let r = self.reference.split('@').next().unwrap_or("");
        let last = r.rsplit('/').next().unwrap_or(r);
        last.split_once(':').map(|(_, t)| t)
    }
    /// The repository without registry host and tag (`nvidia/pytorch`).
    pub fn repository(&self) -> &str {
        let r = self.reference.split('@').next().unwrap_or("");
        let no_tag = match r.rfind(':') {
            Some(i) if !r[i..].contains('/') => &r[..i],
            _ => r,
        };
        match no_tag.split_once('/') {
            Some((host, rest))
                if host.contains('.') || host.contains(':') || host == "localhost" =>
            {
                rest
            }
            _ => no_tag,
        }
    }
}

/// Parse an image URI (`docker://…` or `oras://…`). The error says which scheme to use and,
/// for a bare reference, that `docker://` is missing.
pub fn parse_image_uri(s: &str) -> Result<ImageUri, String> {
    let (scheme, rest) = match s.split_once("://") {
        Some(("docker", r)) => (ImageScheme::Docker, r),
        Some(("oras", r)) => (ImageScheme::Oras, r),
        Some((other, _)) => {
            return Err(format!(
                "`{other}://` images are not supported; Fuzzball pulls `docker://` (OCI) and `oras://` (SIF in an OCI registry) images"
            ))
        }
        None => {
            return Err(format!("`{s}` has no scheme; write `docker://{s}` for an OCI image or `oras://{s}` for a SIF image"));
        }
    };
    if rest.is_empty() {
        return Err(format!("`{s}` names no image after the scheme"));
    }
    if let Some(c) = rest.chars().find(|c| c.is_whitespace()) {
        return Err(format!(
            "`{s}` contains whitespace ({c:?}); an image reference is one word"
        ));
    }
    Ok(ImageUri {
        scheme,
        reference: rest.to_owned(),
    })
}

/// A `secret://<scope>/<name>` reference.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct SecretRef {
    pub scope: String,
    pub name: String,
}

pub const SECRET_SCOPES: &[&str] = &["user", "account", "group", "organization", "cluster"];

pub fn parse_secret_ref(s: &str) -> Result<SecretRef, String> {
    let Some(rest) = s.strip_prefix("secret://") else {
        return Err(format!("`{s}` is not a secret reference; write `secret://<scope>/<name>`, as in `secret://user/my-token`"));
    };
    if let Some(c) = rest.chars().find(|c| c.is_control()) {
        return Err(format!(
            "`{}` holds the control character {c:?}, which no secret name holds",
            s.escape_debug()
        ));
    }
    match rest.split_once('/') {
        Some((scope, name)) if !scope.is_empty() && !name.is_empty() => Ok(SecretRef { scope: scope.into(), name: name.into() }),
        _ => Err(format!("`{s}` needs a scope and a name: `secret://<scope>/<name>`, as in `secret://user/my-token`")),
    }
}

/// A `volume://<scope>/<class>[/<name>]` reference.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct VolumeRef {
    pub scope: String,
    pub class: String,
    pub name: Option<String>,
}

pub fn parse_volume_ref(s: &str) -> Result<VolumeRef, String> {
    let Some(rest) = s.strip_prefix("volume://") else {
        return Err(format!(
            "`{s}` is not a volume reference; write `volume://<scope>/<storage class>[/<name>]`, as in `volume://user/ephemeral`"
        ));
    };
    let mut parts = rest.splitn(3, '/');
    let scope = parts.next().unwrap_or("");
    let class = parts.next().unwrap_or("");
    let name = parts.next();
    if scope.is_empty() || class.is_empty() || name.is_some_and(str::is_empty) {
        return Err(format!("`{s}` needs a scope and a storage class: `volume://<scope>/<class>[/<name>]`, as in `volume://user/persistent/data`"));
    }
    Ok(VolumeRef {
        scope: scope.into(),
        class: class.into(),
        name: name.map(Into::into),
    })
}

/// The name after `file://` when `s` refers to a top-level `files` entry.
pub fn file_ref(s: &str) -> Option<&str> {
    s.strip_prefix("file://")
}

/// Whether `s` is a DNS label (RFC 1123): lowercase letters, digits and `-`, 1 to 63 characters,
/// starting and ending with a letter or digit. Job and service names become host names.
pub fn check_dns_label(s: &str) -> Result<(), String> {
    if s.is_empty() {
        return Err("a name must not be empty".into());
    }
    if s.len() > 63 {
        return Err(format!(
            "`{s}` is {} characters long; names become host names and may have at most 63",
            s.len()
        ));
    }
    if let Some(c) = s
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-'))
    {
        let hint = if c.is_ascii_uppercase() || c == '_' || c == '.' {
            format!("; try `{}`", suggest_dns_label(s))
        } else {
            String::new()
        };
        return Err(format!(
            "`{s}` contains {c:?}; job and service names become host names, so they may hold only lowercase letters, digits and `-`{hint}"
        ));
    }
    if s.starts_with('-') || s.ends_with('-') {
        return Err(format!(
            "`{s}` starts or ends with `-`; host names must start and end with a letter or digit"
        ));
    }
    Ok(())
}

/// A DNS-label spelling of `s` (lowercase, `_` and `.` to `-`).
pub fn suggest_dns_label(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| match c {
            'A'..='Z' => c.to_ascii_lowercase(),
            '_' | '.' | ' ' => '-',
            c if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' => c,
            _ => '-',
        })
        .collect();
    while out.starts_with('-') {
        out.remove(0);
    }
    while out.ends_with('-') {
        out.pop();
    }
    out.truncate(63);
    out
}

/// The longest name that becomes one path component (room is left for suffixes).
pub const MAX_PATH_NAME: usize = 200;

/// Whether `s` can be a volume key: it becomes a directory name (`volumes/<key>` on the node),
/// so it is a letter or digit followed by letters, digits, `-`, `_` and `.`, at most
/// [`MAX_PATH_NAME`] bytes (the names the runner accepts; the catalog's keys are
/// `[a-z0-9_-]`). This keeps `../x`, `a/b`, NUL and control characters out.
pub fn check_path_name(s: &str) -> Result<(), String> {
    if s.is_empty() {
        return Err("a name must not be empty".into());
    }
    if s.len() > MAX_PATH_NAME {
        return Err(format!(
            "is {} bytes long; names become directory names and may have at most {MAX_PATH_NAME}",
            s.len()
        ));
    }
    if let Some(c) = s
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
    {
        return Err(format!(
            "contains {c:?}; names become directory names, so they may hold only letters, digits, `-`, `_` and `.`"
        ));
    }
    if !s.as_bytes()[0].is_ascii_alphanumeric() {
        return Err("starts with a punctuation character; a name starts with a letter or digit (so it is never `.` or `..`)".into());
    }
    Ok(())
}

/// What is wrong with a path that the runner resolves under a directory it owns (a container
/// path, a path inside a volume): a NUL character or a `..` component.
pub fn check_contained_path(s: &str) -> Result<(), String> {
    if s.contains('\0') {
        return Err("holds a NUL character, which no path can hold".into());
    }
    if s.split('/').any(|c| c == "..") {
        return Err("contains a `..` component, which could reach outside the place it names; write the path without it".into());
    }
    Ok(())
}

/// Whether `s` is a valid environment variable name (`[A-Za-z_][A-Za-z0-9_]*`).
pub fn is_env_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("1GiB").unwrap().bytes, 1 << 30);
        assert_eq!(parse_size("0.5GiB").unwrap().bytes, 1 << 29);
        assert_eq!(parse_size("512MIB").unwrap().bytes, 512 << 20);
        assert_eq!(parse_size("8gb").unwrap().bytes, 8_000_000_000);
        assert_eq!(parse_size("92GB").unwrap().bytes, 92_000_000_000);
        let plain = parse_size("1024").unwrap();
        assert_eq!((plain.bytes, plain.has_unit), (1024, false));
        assert_eq!(parse_size("10 GB").unwrap().bytes, 10_000_000_000);
        assert!(parse_size("GB")
            .unwrap_err()
            .contains("must start with a number"));
        assert!(parse_size("4 gigs")
            .unwrap_err()
            .contains("`gigs` is not a size unit"));
        assert!(parse_size("1.2.3GB").is_err());
        assert!(parse_size("").is_err());
        assert!(parse_size("99999999999999999999PB")
            .unwrap_err()
            .contains("too large"));
    }

    #[test]
    fn durations_follow_go() {
        let d = |s| parse_duration(s).unwrap().nanos;
        assert_eq!(d("30m"), 30 * 60 * 1_000_000_000);
        assert_eq!(d("2h30m"), 9000 * 1_000_000_000);
        assert_eq!(d("8h0m0s"), 8 * 3600 * 1_000_000_000);
        assert_eq!(d("1m300s"), 360 * 1_000_000_000);
        assert_eq!(d("1.5h"), 5400 * 1_000_000_000);
        assert_eq!(d("0"), 0);
        assert_eq!(d("100ms"), 100_000_000);
        assert_eq!(d("2µs"), 2000);
        assert!(
            matches!(parse_duration("30"), Err(DurationError::Invalid(m)) if m.contains("has no unit"))
        );
        assert!(
            matches!(parse_duration("30 minutes"), Err(DurationError::Invalid(m)) if m.contains("is not a unit"))
        );
        assert!(
            matches!(parse_duration("-5m"), Err(DurationError::Invalid(m)) if m.contains("negative"))
        );
        assert!(matches!(parse_duration(""), Err(DurationError::Invalid(_))));
        assert!(matches!(
            parse_duration("h"),
            Err(DurationError::Invalid(_))
        ));
        assert_eq!(
            parse_duration("2d"),
            Err(DurationError::DayUnit {
                suggestion: "48h".into()
            })
        );
        assert_eq!(
            parse_duration("1d12h"),
            Err(DurationError::DayUnit {
                suggestion: "36h".into()
            })
        );
    }

    #[test]
    fn duration_display_is_go_style() {
        assert_eq!(parse_duration("90m").unwrap().to_string(), "1h30m0s");
        assert_eq!(parse_duration("45s").unwrap().to_string(), "45s");
        assert_eq!(parse_duration("0").unwrap().to_string(), "0s");
    }

    #[test]
    fn image_uris() {
        let u = parse_image_uri("docker://nvcr.io/nvidia/pytorch:25.01-py3").unwrap();
        assert_eq!(u.scheme, ImageScheme::Docker);
        assert_eq!(u.tag(), Some("25.01-py3"));
        assert_eq!(u.repository(), "nvidia/pytorch");
        let u = parse_image_uri("docker://localhost:5000/app").unwrap();
        assert_eq!(u.tag(), None);
        assert_eq!(u.repository(), "app");
        assert_eq!(
            parse_image_uri("oras://ghcr.io/x/y:1").unwrap().scheme,
            ImageScheme::Oras
        );
        assert!(parse_image_uri("alpine:3.19")
            .unwrap_err()
            .contains("write `docker://alpine:3.19`"));
        assert!(parse_image_uri("library://alpine")
            .unwrap_err()
            .contains("not supported"));
        assert!(parse_image_uri("docker://").is_err());
        assert!(parse_image_uri("docker://a b").is_err());
    }

    #[test]
    fn references() {
        assert_eq!(
            parse_secret_ref("secret://user/tok").unwrap(),
            SecretRef {
                scope: "user".into(),
                name: "tok".into()
            }
        );
        assert!(parse_secret_ref("secret://user").is_err());
        assert!(parse_secret_ref("user/tok").is_err());
        let v = parse_volume_ref("volume://user/persistent/data").unwrap();
        assert_eq!(
            (v.scope.as_str(), v.class.as_str(), v.name.as_deref()),
            ("user", "persistent", Some("data"))
        );
        assert!(parse_volume_ref("volume://user/ephemeral")
            .unwrap()
            .name
            .is_none());
        assert!(parse_volume_ref("volume://user").is_err());
        assert!(parse_volume_ref("volume://user/persistent/").is_err());
        assert_eq!(file_ref("file://a.py"), Some("a.py"));
    }

    #[test]
    fn secret_names_hold_no_control_characters() {
        assert!(parse_secret_ref("secret://user/token").is_ok());
        assert!(parse_secret_ref("secret://user/to\0ken").is_err());
        assert!(parse_secret_ref("secret://user/to\nken").is_err());
    }

    #[test]
    fn path_names() {
        for ok in ["data", "vol-0", "data_volume", "a.b", "0"] {
            assert!(check_path_name(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "..",
            ".",
            "../x",
            "a/b",
            "a\0b",
            "-x",
            "a b",
            "é",
            &"a".repeat(201),
        ] {
            assert!(check_path_name(bad).is_err(), "{bad:?}");
        }
        assert!(check_contained_path("/data/x").is_ok());
        assert!(check_contained_path("dir/..x").is_ok());
        for bad in ["/data/../etc", "../x", "a/..", "/a\0"] {
            assert!(check_contained_path(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn dns_labels() {
        assert!(check_dns_label("run-blast").is_ok());
        assert!(check_dns_label("a").is_ok());
        assert!(check_dns_label("Run_Blast")
            .unwrap_err()
            .contains("try `run-blast`"));
        assert!(check_dns_label("-x").is_err());
        assert!(check_dns_label(&"a".repeat(64))
            .unwrap_err()
            .contains("64 characters"));
        assert!(
            is_env_name("NCCL_IB_HCA")
                && is_env_name("_x1")
                && !is_env_name("1X")
                && !is_env_name("A-B")
        );
    }
}
