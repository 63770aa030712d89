//! Go's `time.Time` as a template meets it (the value `now` returns, in UTC): the calendar
//! fields its methods return and `Format` (Go's time/format.go `nextStdChunk` and
//! `Time.appendFormat`), for the methods exec.rs calls and slim-sprig's date.go `date` and
//! `dateInZone`.

/// The calendar fields of a time in UTC.
pub(crate) struct Civil {
    pub year: i64,
    /// 1..=12.
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    pub nanos: u32,
    /// 0 (Sunday)..=6.
    pub weekday: u32,
    /// 1..=366.
    pub yday: u32,
}

/// The calendar fields of `unix_seconds` (UTC) and `nanos`.
pub(crate) fn civil(unix_seconds: i64, nanos: u32) -> Civil {
    let days = unix_seconds.div_euclid(86_400);
    let secs = unix_seconds.rem_euclid(86_400) as u32;
    let (year, month, day) = civil_from_days(days);
    let jan1 = days_from_civil(year, 1, 1);
    Civil {
        year,
        month,
        day,
        hour: secs / 3600,
        minute: secs / 60 % 60,
        second: secs % 60,
        nanos,
        // 1970-01-01 was a Thursday.
        weekday: (days + 4).rem_euclid(7) as u32,
        yday: (days - jan1 + 1) as u32,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Hinnant's `days_from_civil`).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Go's month names (time.Month.String).
pub(crate) const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// Go's weekday names (time.Weekday.String).
pub(crate) const DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];

/// A layout element (format.go's `std*` constants).
#[derive(Clone, Copy)]
enum Std {
    LongMonth,
    Month,
    NumMonth,
    ZeroMonth,
    LongWeekDay,
    WeekDay,
    Day,
    UnderDay,
    ZeroDay,
    UnderYearDay,
    ZeroYearDay,
    Hour,
    Hour12,
    ZeroHour12,
    Minute,
    ZeroMinute,
    Second,
    ZeroSecond,
    LongYear,
    Year,
    Pm(bool),
    /// A numeric zone: the text printed for UTC (`Z07:00` prints `Z`, `-07:00` `+00:00`).
    Zone(&'static str),
    Tz,
    /// Fractional seconds: separator, digits, trailing zeros trimmed (`.999`).
    Frac(u8, usize, bool),
}

fn starts_lower(s: &[u8]) -> bool {
    s.first().is_some_and(u8::is_ascii_lowercase)
}

/// format.go `nextStdChunk`: the literal text before the next element, the element and
/// the rest.
fn next_std_chunk(layout: &[u8]) -> (usize, Option<(Std, usize)>) {
    let has = |i: usize, p: &str| layout[i..].starts_with(p.as_bytes());
    for i in 0..layout.len() {
        let rest = &layout[i..];
        let found = match layout[i] {
            b'J' if has(i, "Jan") => {
                if has(i, "January") {
                    Some((Std::LongMonth, 7))
                } else if !starts_lower(&rest[3..]) {
                    Some((Std::Month, 3))
                } else {
                    None
                }
            }
            b'M' if has(i, "Mon") => {
                if has(i, "Monday") {
                    Some((Std::LongWeekDay, 6))
                } else if !starts_lower(&rest[3..]) {
                    Some((Std::WeekDay, 3))
                } else {
                    None
                }
            }
            b'M' if has(i, "MST") => Some((Std::Tz, 3)),
            b'0' if rest.len() >= 2 && (b'1'..=b'6').contains(&rest[1]) => Some((
                [
                    Std::ZeroMonth,
                    Std::ZeroDay,
                    Std::ZeroHour12,
                    Std::ZeroMinute,
                    Std::ZeroSecond,
                    Std::Year,
                ][usize::from(rest[1] - b'1')],
                2,
            )),
            b'0' if has(i, "002") => Some((Std::ZeroYearDay, 3)),
            b'1' if has(i, "15") => Some((Std::Hour, 2)),
            b'1' => Some((Std::NumMonth, 1)),
            b'2' if has(i, "2006") => Some((Std::LongYear, 4)),
            b'2' => Some((Std::Day, 1)),
            b'_' if has(i, "_2006") => {
                // `_2006` is a literal `_` and the long year.
                return (i + 1, Some((Std::LongYear, 4)));
            }
            b'_' if has(i, "_2") => Some((Std::UnderDay, 2)),
            b'_' if has(i, "__2") => Some((Std::UnderYearDay, 3)),
            b'3' => Some((Std::Hour12, 1)),
            b'4' => Some((Std::Minute, 1)),
            b'5' => Some((Std::Second, 1)),
            b'P' if has(i, "PM") => Some((Std::Pm(true), 2)),
            b'p' if has(i, "pm") => Some((Std::Pm(false), 2)),
            b'-' | b'Z' => {
                let z = layout[i] == b'Z';
                [
                    ("070000", "+000000"),
                    ("07:00:00", "+00:00:00"),
                    ("0700", "+0000"),
                    ("07:00", "+00:00"),
                    ("07", "+00"),
                ]
                .iter()
                .find(|(p, _)| rest[1..].starts_with(p.as_bytes()))
                .map(|(p, text)| (Std::Zone(if z { "Z" } else { text }), p.len() + 1))
            }
            b'.' | b',' if rest.len() > 1 && (rest[1] == b'0' || rest[1] == b'9') => {
                let ch = rest[1];
                let mut j = 1;
                while j < rest.len() && rest[j] == ch {
                    j += 1;
                }
                if rest.get(j).is_some_and(u8::is_ascii_digit) {
                    None
                } else {
                    Some((Std::Frac(layout[i], j - 1, ch == b'9'), j))
                }
            }
            _ => None,
        };
        if found.is_some() {
            return (i, found);
        }
    }
    (layout.len(), None)
}

fn pad(out: &mut String, n: i64, width: usize) {
    if n < 0 {
        out.push('-');
    }
    out.push_str(&format!("{:0width$}", n.unsigned_abs()));
}

/// `Time.Format(layout)` of a time in UTC.
pub(crate) fn format(unix_seconds: i64, nanos: u32, layout: &str) -> String {
    let c = civil(unix_seconds, nanos);
    let mut out = String::new();
    let mut rest = layout;
    while !rest.is_empty() {
        let (at, found) = next_std_chunk(rest.as_bytes());
        out.push_str(&rest[..at]);
        let Some((std, len)) = found else {
            break;
        };
        rest = &rest[at + len..];
        let hour12 = match c.hour % 12 {
            0 => 12,
            h => h,
        };
        match std {
            Std::LongMonth => out.push_str(MONTHS[(c.month - 1) as usize]),
            Std::Month => out.push_str(&MONTHS[(c.month - 1) as usize][..3]),
            Std::NumMonth => pad(&mut out, c.month.into(), 0),
            Std::ZeroMonth => pad(&mut out, c.month.into(), 2),
            Std::LongWeekDay => out.push_str(DAYS[c.weekday as usize]),
            Std::WeekDay => out.push_str(&DAYS[c.weekday as usize][..3]),
            Std::Day => pad(&mut out, c.day.into(), 0),
            Std::UnderDay => {
                if c.day < 10 {
                    out.push(' ');
                }
                pad(&mut out, c.day.into(), 0);
            }
            Std::ZeroDay => pad(&mut out, c.day.into(), 2),
            Std::UnderYearDay => {
                if c.yday < 100 {
                    out.push(' ');
                    if c.yday < 10 {
                        out.push(' ');
                    }
                }
                pad(&mut out, c.yday.into(), 0);
            }
            Std::ZeroYearDay => pad(&mut out, c.yday.into(), 3),
            Std::Hour => pad(&mut out, c.hour.into(), 2),
            Std::Hour12 => pad(&mut out, hour12.into(), 0),
            Std::ZeroHour12 => pad(&mut out, hour12.into(), 2),
            Std::Minute => pad(&mut out, c.minute.into(), 0),
            Std::ZeroMinute => pad(&mut out, c.minute.into(), 2),
            Std::Second => pad(&mut out, c.second.into(), 0),
            Std::ZeroSecond => pad(&mut out, c.second.into(), 2),
            Std::LongYear => pad(&mut out, c.year, 4),
            Std::Year => pad(&mut out, c.year.rem_euclid(100), 2),
            Std::Pm(upper) => out.push_str(match (c.hour >= 12, upper) {
                (true, true) => "PM",
                (false, true) => "AM",
                (true, false) => "pm",
                (false, false) => "am",
            }),
            Std::Zone(text) => out.push_str(text),
            Std::Tz => out.push_str("UTC"),
            Std::Frac(sep, digits, trim) => {
                // format.go `appendNano`.
                if trim && (digits == 0 || c.nanos == 0) {
                    continue;
                }
                let mut f = format!("{:09}", c.nanos);
                f.truncate(digits.min(9));
                if trim {
                    let t = f.trim_end_matches('0');
                    if t.is_empty() {
                        continue;
                    }
                    f = t.to_string();
                }
                out.push(char::from(sep));
                out.push_str(&f);
            }
        }
    }
    out
}

/// time.go `Duration.String` of `d` nanoseconds.
pub(crate) fn duration_string(d: i64) -> String {
    let neg = d < 0;
    let mut u = d.unsigned_abs();
    // Written backwards, as Go fills its buffer from the end.
    let mut rev: Vec<char> = Vec::new();
    let frac = |rev: &mut Vec<char>, mut v: u64, prec: u32| {
        let mut print = false;
        for _ in 0..prec {
            let digit = v % 10;
            print = print || digit != 0;
            if print {
                rev.push(char::from(b'0' + digit as u8));
            }
            v /= 10;
        }
        if print {
            rev.push('.');
        }
        v
    };
    let int = |rev: &mut Vec<char>, v: u64| rev.extend(v.to_string().chars().rev());
    if u < 1_000_000_000 {
        let (unit, prec) = match u {
            0 => return "0s".into(),
            1..=999 => ("ns", 0),
            1_000..=999_999 => ("µs", 3),
            _ => ("ms", 6),
        };
        rev.extend(unit.chars().rev());
        u = frac(&mut rev, u, prec);
        int(&mut rev, u);
    } else {
        rev.push('s');
        u = frac(&mut rev, u, 9);
        int(&mut rev, u % 60);
        u /= 60;
        if u > 0 {
            rev.push('m');
            int(&mut rev, u % 60);
            u /= 60;
            if u > 0 {
                rev.push('h');
                int(&mut rev, u);
            }
        }
    }
    if neg {
        rev.push('-');
    }
    rev.into_iter().rev().collect()
}

/// time/format.go `quote`: a duration's text in an error message.
fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        if c < ' ' || !c.is_ascii() {
            let mut b = [0u8; 4];
            for byte in c.encode_utf8(&mut b).bytes() {
                out.push_str(&format!("\\x{byte:02x}"));
            }
        } else {
            if c == '"' || c == '\\' {
                out.push('\\');
            }
            out.push(c);
        }
    }
    out.push('"');
    out
}

/// time/format.go `ParseDuration` (Go 1.19): nanoseconds, or Go's error message.
pub(crate) fn parse_duration(orig: &str) -> Result<i64, String> {
    const LIMIT: u64 = 1 << 63;
    let invalid = || format!("time: invalid duration {}", quote(orig));
    let mut s = orig;
    let mut neg = false;
    if let Some(rest) = s.strip_prefix('-') {
        neg = true;
        s = rest;
    } else if let Some(rest) = s.strip_prefix('+') {
        s = rest;
    }
    if s == "0" {
        return Ok(0);
    }
    if s.is_empty() {
        return Err(invalid());
    }
    let mut d: u64 = 0;
    while !s.is_empty() {
        let b = s.as_bytes();
        if !(b[0] == b'.' || b[0].is_ascii_digit()) {
            return Err(invalid());
        }
        // leadingInt.
        let digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
        let mut v: u64 = 0;
        for c in &b[..digits] {
            if v > LIMIT / 10 {
                return Err(invalid());
            }
            v = v * 10 + u64::from(c - b'0');
            if v > LIMIT {
                return Err(invalid());
            }
        }
        let pre = digits > 0;
        s = &s[digits..];
        // leadingFraction.
        let (mut f, mut scale, mut post) = (0u64, 1f64, false);
        if let Some(rest) = s.strip_prefix('.') {
            let fd = rest.bytes().take_while(u8::is_ascii_digit).count();
            let mut overflow = false;
            for c in rest[..fd].bytes() {
                if overflow {
                    continue;
                }
                if f > (LIMIT - 1) / 10 {
                    overflow = true;
                    continue;
                }
                let y = f * 10 + u64::from(c - b'0');
                if y > LIMIT {
                    overflow = true;
                    continue;
                }
                f = y;
                scale *= 10.0;
            }
            post = fd > 0;
            s = &rest[fd..];
        }
        if !pre && !post {
            return Err(invalid());
        }
        let unit_len = s
            .char_indices()
            .find(|(_, c)| *c == '.' || c.is_ascii_digit())
            .map_or(s.len(), |(i, _)| i);
        if unit_len == 0 {
            return Err(format!("time: missing unit in duration {}", quote(orig)));
        }
        let u = &s[..unit_len];
        s = &s[unit_len..];
        let unit: u64 = match u {
            "ns" => 1,
            "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => {
                return Err(format!(
                    "time: unknown unit {} in duration {}",
                    quote(u),
                    quote(orig)
                ))
            }
        };
        if v > LIMIT / unit {
            return Err(invalid());
        }
        v *= unit;
        if f > 0 {
            v += (f as f64 * (unit as f64 / scale)) as u64;
            if v > LIMIT {
                return Err(invalid());
            }
        }
        d += v;
        if d > LIMIT {
            return Err(invalid());
        }
    }
    if neg {
        return Ok((d as i64).wrapping_neg());
    }
    if d > LIMIT - 1 {
        return Err(invalid());
    }
    Ok(d as i64)
}

/// `Time.Add(d)` for a time as (Unix seconds, nanoseconds).
pub(crate) fn add(unix_seconds: i64, nanos: u32, d: i64) -> (i64, u32) {
    let total = i128::from(nanos) + i128::from(d % 1_000_000_000);
    let secs = unix_seconds
        .saturating_add(d / 1_000_000_000)
        .saturating_add(total.div_euclid(1_000_000_000) as i64);
    (secs, total.rem_euclid(1_000_000_000) as u32)
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian calendar (Howard
/// Hinnant's `civil_from_days`).
pub(crate) fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}
