//! Go 1.19's `net/url` as slim-sprig's url.go uses it (`urlParse`, `urlJoin`): `Parse`,
//! `URL.String`, `URL.Hostname` and `Userinfo.String`, on bytes as Go's strings are. A
//! percent escape that decodes to invalid UTF-8 becomes U+FFFD in the result (the
//! engine's strings are UTF-8).

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Path,
    Host,
    Zone,
    UserPassword,
    QueryComponent,
    Fragment,
}

/// Go's `url.Userinfo`.
#[derive(Clone, Default)]
pub(crate) struct Userinfo {
    pub username: Vec<u8>,
    pub password: Option<Vec<u8>>,
}

impl Userinfo {
    /// `Userinfo.String`.
    pub fn string(&self) -> Vec<u8> {
        let mut s = escape(&self.username, Mode::UserPassword);
        if let Some(p) = &self.password {
            s.push(b':');
            s.extend(escape(p, Mode::UserPassword));
        }
        s
    }
}

/// Go's `url.URL` (the fields url.go reads and writes).
#[derive(Clone, Default)]
pub(crate) struct Url {
    pub scheme: Vec<u8>,
    pub opaque: Vec<u8>,
    pub user: Option<Userinfo>,
    pub host: Vec<u8>,
    pub path: Vec<u8>,
    raw_path: Vec<u8>,
    omit_host: bool,
    force_query: bool,
    pub raw_query: Vec<u8>,
    pub fragment: Vec<u8>,
    raw_fragment: Vec<u8>,
}

/// Bytes as a string, invalid UTF-8 replaced.
pub(crate) fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn is_hex(c: u8) -> bool {
    c.is_ascii_hexdigit()
}

fn unhex(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        b'A'..=b'F' => c - b'A' + 10,
        _ => 0,
    }
}

fn should_escape(c: u8, mode: Mode) -> bool {
    if c.is_ascii_alphanumeric() {
        return false;
    }
    if matches!(mode, Mode::Host | Mode::Zone)
        && matches!(
            c,
            b'!' | b'$'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b'+'
                | b','
                | b';'
                | b'='
                | b':'
                | b'['
                | b']'
                | b'<'
                | b'>'
                | b'"'
        )
    {
        return false;
    }
    match c {
        b'-' | b'_' | b'.' | b'~' => return false,
        b'$' | b'&' | b'+' | b',' | b'/' | b':' | b';' | b'=' | b'?' | b'@' => match mode {
            Mode::Path => return c == b'?',
            Mode::UserPassword => return matches!(c, b'@' | b'/' | b'?' | b':'),
            Mode::QueryComponent => return true,
            Mode::Fragment => return false,
            Mode::Host | Mode::Zone => {}
        },
        _ => {}
    }
    if mode == Mode::Fragment && matches!(c, b'!' | b'(' | b')' | b'*') {
        return false;
    }
    true
}

/// Go's `strconv.Quote` of bytes, for the errors' messages.
fn quote(b: &[u8]) -> String {
    super::gofmt::format_verb(&super::gv::V::Str(text(b)), 'q')
}

fn unescape(s: &[u8], mode: Mode) -> Result<Vec<u8>, String> {
    let escape_error = |e: &[u8]| format!("invalid URL escape {}", quote(e));
    let mut n = 0;
    let mut has_plus = false;
    let mut i = 0;
    while i < s.len() {
        match s[i] {
            b'%' => {
                n += 1;
                if i + 2 >= s.len() || !is_hex(s[i + 1]) || !is_hex(s[i + 2]) {
                    let rest = &s[i..];
                    return Err(escape_error(&rest[..rest.len().min(3)]));
                }
                let escaped = &s[i..i + 3];
                if mode == Mode::Host && unhex(s[i + 1]) < 8 && escaped != b"%25" {
                    return Err(escape_error(escaped));
                }
                if mode == Mode::Zone {
                    let v = (unhex(s[i + 1]) << 4) | unhex(s[i + 2]);
                    if escaped != b"%25" && v != b' ' && should_escape(v, Mode::Host) {
                        return Err(escape_error(escaped));
                    }
                }
                i += 3;
            }
            b'+' => {
                has_plus = mode == Mode::QueryComponent;
                i += 1;
            }
            c => {
                if matches!(mode, Mode::Host | Mode::Zone) && c < 0x80 && should_escape(c, mode) {
                    return Err(format!(
                        "invalid character {} in host name",
                        quote(&s[i..=i])
                    ));
                }
                i += 1;
            }
        }
    }
    if n == 0 && !has_plus {
        return Ok(s.to_vec());
    }
    let mut t = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        match s[i] {
            b'%' => {
                t.push((unhex(s[i + 1]) << 4) | unhex(s[i + 2]));
                i += 2;
            }
            b'+' if mode == Mode::QueryComponent => t.push(b' '),
            c => t.push(c),
        }
        i += 1;
    }
    Ok(t)
}

fn escape(s: &[u8], mode: Mode) -> Vec<u8> {
    const UPPER_HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut t = Vec::with_capacity(s.len());
    for &c in s {
        if c == b' ' && mode == Mode::QueryComponent {
            t.push(b'+');
        } else if should_escape(c, mode) {
            t.extend([
                b'%',
                UPPER_HEX[usize::from(c >> 4)],
                UPPER_HEX[usize::from(c & 15)],
            ]);
        } else {
            t.push(c);
        }
    }
    t
}

fn cut(s: &[u8], sep: u8) -> (&[u8], &[u8], bool) {
    match s.iter().position(|&c| c == sep) {
        Some(i) => (&s[..i], &s[i + 1..], true),
        None => (s, &[], false),
    }
}

fn get_scheme(raw: &[u8]) -> Result<(&[u8], &[u8]), String> {
    for (i, &c) in raw.iter().enumerate() {
        match c {
            b'a'..=b'z' | b'A'..=b'Z' => {}
            b'0'..=b'9' | b'+' | b'-' | b'.' => {
                if i == 0 {
                    return Ok((&[], raw));
                }
            }
            b':' => {
                if i == 0 {
                    return Err("missing protocol scheme".into());
                }
                return Ok((&raw[..i], &raw[i + 1..]));
            }
            _ => return Ok((&[], raw)),
        }
    }
    Ok((&[], raw))
}

/// `url.Parse`: its error as Go's `*url.Error` prints it (`parse "URL": WHY`).
pub(crate) fn parse(raw: &[u8]) -> Result<Url, String> {
    let (u, frag, _) = cut(raw, b'#');
    let mut url = parse_without_fragment(u).map_err(|e| format!("parse {}: {e}", quote(u)))?;
    if frag.is_empty() {
        return Ok(url);
    }
    let fragment =
        unescape(frag, Mode::Fragment).map_err(|e| format!("parse {}: {e}", quote(raw)))?;
    url.raw_fragment = if escape(&fragment, Mode::Fragment) == frag {
        Vec::new()
    } else {
        frag.to_vec()
    };
    url.fragment = fragment;
    Ok(url)
}

fn parse_without_fragment(raw: &[u8]) -> Result<Url, String> {
    if raw.iter().any(|&b| b < b' ' || b == 0x7f) {
        return Err("net/url: invalid control character in URL".into());
    }
    let mut url = Url::default();
    if raw == b"*" {
        url.path = b"*".to_vec();
        return Ok(url);
    }
    let (scheme, mut rest) = get_scheme(raw)?;
    url.scheme = scheme.to_ascii_lowercase();
    if rest.last() == Some(&b'?') && rest.iter().filter(|&&c| c == b'?').count() == 1 {
        url.force_query = true;
        rest = &rest[..rest.len() - 1];
    } else {
        let (before, query, _) = cut(rest, b'?');
        url.raw_query = query.to_vec();
        rest = before;
    }
    if !rest.starts_with(b"/") {
        if !url.scheme.is_empty() {
            url.opaque = rest.to_vec();
            return Ok(url);
        }
        let (segment, _, _) = cut(rest, b'/');
        if segment.contains(&b':') {
            return Err("first path segment in URL cannot contain colon".into());
        }
    }
    if (!url.scheme.is_empty() || !rest.starts_with(b"///")) && rest.starts_with(b"//") {
        let mut authority = &rest[2..];
        rest = &[];
        if let Some(i) = authority.iter().position(|&c| c == b'/') {
            rest = &authority[i..];
            authority = &authority[..i];
        }
        let (user, host) = parse_authority(authority)?;
        url.user = user;
        url.host = host;
    } else if !url.scheme.is_empty() && rest.starts_with(b"/") {
        url.omit_host = true;
    }
    let path = unescape(rest, Mode::Path)?;
    url.raw_path = if escape(&path, Mode::Path) == rest {
        Vec::new()
    } else {
        rest.to_vec()
    };
    url.path = path;
    Ok(url)
}

fn valid_userinfo(s: &[u8]) -> bool {
    // Go ranges over runes: any non-ASCII rune is refused, as is any byte below.
    s.iter().all(|&c| {
        c.is_ascii_alphanumeric()
            || matches!(
                c,
                b'-' | b'.'
                    | b'_'
                    | b':'
                    | b'~'
                    | b'!'
                    | b'$'
                    | b'&'
                    | b'\''
                    | b'('
                    | b')'
                    | b'*'
                    | b'+'
                    | b','
                    | b';'
                    | b'='
                    | b'%'
                    | b'@'
            )
    })
}

fn parse_authority(authority: &[u8]) -> Result<(Option<Userinfo>, Vec<u8>), String> {
    let at = authority.iter().rposition(|&c| c == b'@');
    let host = parse_host(match at {
        Some(i) => &authority[i + 1..],
        None => authority,
    })?;
    let Some(i) = at else {
        return Ok((None, host));
    };
    let userinfo = &authority[..i];
    if !valid_userinfo(userinfo) {
        return Err("net/url: invalid userinfo".into());
    }
    let (username, password, has_colon) = cut(userinfo, b':');
    let username = unescape(username, Mode::UserPassword)?;
    let password = if has_colon {
        Some(unescape(password, Mode::UserPassword)?)
    } else {
        None
    };
    Ok((Some(Userinfo { username, password }), host))
}

fn valid_optional_port(port: &[u8]) -> bool {
    match port.split_first() {
        None => true,
        Some((b':', digits)) => digits.iter().all(u8::is_ascii_digit),
        Some(_) => false,
    }
}

fn parse_host(host: &[u8]) -> Result<Vec<u8>, String> {
    if host.starts_with(b"[") {
        let Some(i) = host.iter().rposition(|&c| c == b']') else {
            return Err("missing ']' in host".into());
        };
        let colon_port = &host[i + 1..];
        if !valid_optional_port(colon_port) {
            return Err(format!("invalid port {} after host", quote(colon_port)));
        }
        if let Some(zone) = host[..i].windows(3).position(|w| w == b"%25") {
            let mut out = unescape(&host[..zone], Mode::Host)?;
            out.extend(unescape(&host[zone..i], Mode::Zone)?);
            out.extend(unescape(&host[i..], Mode::Host)?);
            return Ok(out);
        }
    } else if let Some(i) = host.iter().rposition(|&c| c == b':') {
        let colon_port = &host[i..];
        if !valid_optional_port(colon_port) {
            return Err(format!("invalid port {} after host", quote(colon_port)));
        }
    }
    unescape(host, Mode::Host)
}

fn valid_encoded(s: &[u8], mode: Mode) -> bool {
    s.iter().all(|&c| {
        matches!(
            c,
            b'!' | b'$'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b'+'
                | b','
                | b';'
                | b'='
                | b':'
                | b'@'
                | b'['
                | b']'
                | b'%'
        ) || !should_escape(c, mode)
    })
}

impl Url {
    /// A URL of these parts (slim-sprig's `urlJoin` builds one from a dict).
    pub fn from_parts(
        scheme: Vec<u8>,
        host: Vec<u8>,
        path: Vec<u8>,
        raw_query: Vec<u8>,
        opaque: Vec<u8>,
        fragment: Vec<u8>,
        user: Option<Userinfo>,
    ) -> Url {
        Url {
            scheme,
            host,
            path,
            raw_query,
            opaque,
            fragment,
            user,
            ..Url::default()
        }
    }

    fn escaped_path(&self) -> Vec<u8> {
        if !self.raw_path.is_empty()
            && valid_encoded(&self.raw_path, Mode::Path)
            && unescape(&self.raw_path, Mode::Path).is_ok_and(|p| p == self.path)
        {
            return self.raw_path.clone();
        }
        if self.path == b"*" {
            return b"*".to_vec();
        }
        escape(&self.path, Mode::Path)
    }

    fn escaped_fragment(&self) -> Vec<u8> {
        if !self.raw_fragment.is_empty()
            && valid_encoded(&self.raw_fragment, Mode::Fragment)
            && unescape(&self.raw_fragment, Mode::Fragment).is_ok_and(|f| f == self.fragment)
        {
            return self.raw_fragment.clone();
        }
        escape(&self.fragment, Mode::Fragment)
    }

    /// `URL.String`.
    pub fn string(&self) -> Vec<u8> {
        let mut buf = Vec::new();
        if !self.scheme.is_empty() {
            buf.extend_from_slice(&self.scheme);
            buf.push(b':');
        }
        if !self.opaque.is_empty() {
            buf.extend_from_slice(&self.opaque);
        } else {
            let has_authority =
                !self.scheme.is_empty() || !self.host.is_empty() || self.user.is_some();
            let host_omitted = self.omit_host && self.host.is_empty() && self.user.is_none();
            if has_authority && !host_omitted {
                if !self.host.is_empty() || !self.path.is_empty() || self.user.is_some() {
                    buf.extend_from_slice(b"//");
                }
                if let Some(user) = &self.user {
                    buf.extend(user.string());
                    buf.push(b'@');
                }
                if !self.host.is_empty() {
                    buf.extend(escape(&self.host, Mode::Host));
                }
            }
            let path = self.escaped_path();
            if path.first().is_some_and(|&c| c != b'/') && !self.host.is_empty() {
                buf.push(b'/');
            }
            if buf.is_empty() && cut(&path, b'/').0.contains(&b':') {
                buf.extend_from_slice(b"./");
            }
            buf.extend(path);
        }
        if self.force_query || !self.raw_query.is_empty() {
            buf.push(b'?');
            buf.extend_from_slice(&self.raw_query);
        }
        if !self.fragment.is_empty() {
            buf.push(b'#');
            buf.extend(self.escaped_fragment());
        }
        buf
    }

    /// `URL.Hostname`: the host without its port and IPv6 brackets.
    pub fn hostname(&self) -> Vec<u8> {
        let mut host: &[u8] = &self.host;
        if let Some(colon) = host.iter().rposition(|&c| c == b':') {
            if valid_optional_port(&host[colon..]) {
                host = &host[..colon];
            }
        }
        if host.len() >= 2 && host.starts_with(b"[") && host.ends_with(b"]") {
            host = &host[1..host.len() - 1];
        }
        host.to_vec()
    }
}

/// slim-sprig's `urlJoin` parses the userinfo as `proto://USERINFO@host`.
pub(crate) fn parse_userinfo(userinfo: &[u8]) -> Result<Option<Userinfo>, String> {
    let mut raw = b"proto://".to_vec();
    raw.extend_from_slice(userinfo);
    raw.extend_from_slice(b"@host");
    parse(&raw).map(|u| u.user)
}
