//! The nodes of a multinode run: Slurm node lists, `--hosts`, hostfiles, and the host names
//! that may be put into a launcher's argv.
//!
//! - [`expand_nodelist`] expands a Slurm hostlist expression (`SLURM_JOB_NODELIST`,
//!   `gpu[01-04,07]`) the way Slurm's `hostlist.c` does (checked against `scontrol show
//!   hostnames` of Slurm 22.05), and refuses what Slurm refuses. Where Slurm accepts something
//!   odd without complaint (an empty item, `a[1-]`, a space inside brackets), this parser
//!   refuses it with a message instead of guessing; every expression it accepts expands to the
//!   same names in the same order as Slurm.
//! - [`parse_hosts_arg`] reads `--hosts`: node list items with an optional `:SLOTS`
//!   (`h1:4,h2:4`, `gpu[01-04]:8`), the shape of `MULTINODE_HOSTLIST`.
//! - [`read_hostfile`] reads an Open MPI hostfile (`host slots=4 max_slots=8`) or an MPICH
//!   (Hydra) machine file (`host:4`), with line numbers in its errors.
//! - [`slurm_hosts`] pairs `SLURM_JOB_NODELIST` with `SLURM_TASKS_PER_NODE`.
//! - [`validate_hostname`] is the gate every name passes before it reaches `ssh`, `srun -w`
//!   or `mpirun --host`: letters, digits, `-`, `.`, `_`, starting with a letter or digit (so
//!   never an option), DNS lengths. Every name the parsers here return has passed it.
//!
//! Lists keep their order and their duplicates (Slurm's `a[1,1]` is `a1,a1`; Open MPI adds
//! the slots of repeated hostfile lines); [`check_unique`] is there for callers that need one
//! entry per node.

use std::fmt::Write as _;

/// The most hosts one expression may expand to. Slurm refuses a single range of more than
/// 64 Ki hosts (`MAX_RANGE` in `hostlist.c`); the same bound applies here to the whole list.
pub const MAX_HOSTS: usize = 64 * 1024;

/// One node and, where given, how many processes it takes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostSpec {
    pub name: String,
    /// `host:N`, `slots=N`, or `SLURM_TASKS_PER_NODE`; `None` when not given.
    pub slots: Option<u32>,
    /// Open MPI's `max_slots=N` (hostfiles only).
    pub max_slots: Option<u32>,
}

impl HostSpec {
    pub fn new(name: impl Into<String>) -> HostSpec {
        HostSpec {
            name: name.into(),
            slots: None,
            max_slots: None,
        }
    }

    pub fn with_slots(name: impl Into<String>, slots: u32) -> HostSpec {
        HostSpec {
            name: name.into(),
            slots: Some(slots),
            max_slots: None,
        }
    }
}

/// Checks that `host` can be used as a host name in a launcher's argv (`ssh HOST`, `srun -w
/// HOST`, `mpirun --host HOST:1`) without quoting and without being read as an option.
///
/// Accepted: ASCII letters, digits, `-`, `.`, `_`; the first character a letter or digit; at
/// most 253 bytes, labels (between dots) non-empty and at most 63 bytes. IPv4 addresses pass;
/// IPv6 addresses and `user@host` do not (put a user name in the ssh configuration).
pub fn validate_hostname(host: &str) -> Result<(), String> {
    if host.is_empty() {
        return Err("empty host name".to_string());
    }
    if host.len() > 253 {
        return Err(format!(
            "host name {} is {} bytes long: at most 253 are allowed",
            shorten(host),
            host.len()
        ));
    }
    // First: a leading '-' would be read as an option, whatever follows.
    let first = host.as_bytes()[0];
    if !first.is_ascii_alphanumeric() {
        return Err(format!(
            "host name {} starts with {:?}: a host name starts with a letter or a digit",
            shorten(host),
            first as char
        ));
    }
    for (i, c) in host.char_indices() {
        if c.is_ascii_alphanumeric() || c == '-' || c == '.' || c == '_' {
            continue;
        }
        let hint = match c {
            ':' => " (IPv6 addresses are not supported; use a host name)",
            '@' => " (a user name belongs in the ssh configuration, not in the host list)",
            _ => "",
        };
        return Err(format!(
            "host name {} contains {:?} at byte {i}: host names may contain only letters, \
             digits, '-', '.' and '_'{hint}",
            shorten(host),
            c
        ));
    }
    for label in host.split('.') {
        if label.is_empty() {
            return Err(format!(
                "host name {} has an empty label (two dots in a row, or a dot at the end)",
                shorten(host)
            ));
        }
        if label.len() > 63 {
            return Err(format!(
                "host name {} has a label of {} bytes: at most 63 are allowed",
                shorten(host),
                label.len()
            ));
        }
    }
    Ok(())
}

/// Expands a Slurm hostlist expression into host names, in Slurm's order.
///
/// - Items are separated by `,`, spaces or tabs outside brackets; a comma inside brackets
///   belongs to the range list (`gpu[01-04,07]` is one item).
/// - A bracket holds comma-separated numbers and `lo-hi` ranges of decimal digits. Each value
///   is zero-padded to the width of the range's lower bound as written: `[08-10]` gives `08 09
///   10`, `[8-10]` gives `8 9 10`, `[1-010]` gives `1` … `10`, `[009-011]` gives `009 010
///   011`. There is no step syntax (Slurm has none).
/// - Several brackets in one name are expanded as Slurm's `_push_range_list` does: the last
///   bracket varies fastest; the others are nested from the one just before the last
///   (outermost) back to the first. `rack[1-2]-node[1-2]` gives `rack1-node1 rack1-node2
///   rack2-node1 rack2-node2`; `a[1-2]b[3-4]c[5-6]` gives `a1b3c5 a1b3c6 a2b3c5 a2b3c6 a1b4c5
///   …`.
/// - Text after the last bracket is refused, as Slurm refuses it (`gpu[1-2]-ib`: "Invalid
///   hostlist"); text between brackets is fine (`host[01-02]x[3]`).
/// - Refused as in Slurm: a reversed range (`[3-1]`), a negative number, an empty range
///   (`[]`, `[1-2,]`), a range of more than 65,536 hosts. Refused here although Slurm
///   tolerates it: empty items (`a,,b`, a leading or trailing comma), an open range (`[1-]`),
///   unbalanced or nested brackets (`a[1-3`, `a]`, `a[[1]`), signs or spaces inside brackets,
///   more than [`MAX_HOSTS`] names in all, and names that fail [`validate_hostname`].
///
/// Duplicates are kept, as Slurm keeps them.
pub fn expand_nodelist(s: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for item in split_items(s)? {
        expand_item(s, &item, &mut out)?;
    }
    Ok(out)
}

/// Parses `--hosts`: comma-separated node list items, each optionally followed by `:SLOTS`
/// (`h1,h2`, `h1:4,h2:4`, `gpu[01-04]:8,login1`). The slots of an item apply to every host it
/// expands to; `slots` is `None` where no `:SLOTS` is written. This is also the shape of
/// `MULTINODE_HOSTLIST` (see [`format_hostlist`]).
pub fn parse_hosts_arg(s: &str) -> Result<Vec<HostSpec>, String> {
    let mut out = Vec::new();
    for item in split_items(s)? {
        let text = &s[item.start..item.end];
        // A colon can only come after the last bracket: brackets hold digits, ',' and '-'.
        let (list_end, slots) = match text.find(':') {
            Some(colon) => {
                let value = &text[colon + 1..];
                let slots = parse_count(value)
                    .map_err(|why| format!("--hosts item {text:?}: the slots after ':' {why}"))?;
                (item.start + colon, Some(slots))
            }
            None => (item.end, None),
        };
        let list = Item {
            start: item.start,
            end: list_end,
        };
        if list.start == list.end {
            return Err(format!("--hosts item {text:?} has no host name before ':'"));
        }
        let mut names = Vec::new();
        expand_item(s, &list, &mut names)?;
        if out.len() + names.len() > MAX_HOSTS {
            return Err(too_many(s));
        }
        out.extend(names.into_iter().map(|name| HostSpec {
            name,
            slots,
            max_slots: None,
        }));
    }
    Ok(out)
}

/// Reads a hostfile: one host per line, in either format.
///
/// - Open MPI: `host [slots=N] [max_slots=N]`; `count=` and `cpu=` are Open MPI's other names
///   for `slots=`, and `max-slots`, `slots_max`, `slots-max` for `max_slots` (the names of its
///   hostfile lexer); `key = value` with spaces is accepted as Open MPI accepts it.
/// - MPICH (Hydra): `host:N`.
/// - `#` starts a comment (to the end of the line); blank lines are skipped.
///
/// Errors say the line number and what is accepted. Repeated hosts are kept as separate
/// entries (Open MPI adds their slots; see [`check_unique`]).
pub fn read_hostfile(text: &str) -> Result<Vec<HostSpec>, String> {
    let mut out = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let line_no = index + 1;
        let line = match raw.find('#') {
            Some(hash) => &raw[..hash],
            None => raw,
        };
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let at = |why: String| format!("hostfile line {line_no}: {why}");
        // `slots = 4` is three words to a splitter, one attribute to Open MPI.
        let joined = line.replace(" =", "=").replace("= ", "=");
        let mut words = joined.split_whitespace();
        let first = words.next().unwrap_or_default();
        let mut spec = match first.split_once(':') {
            Some((name, count)) => {
                validate_hostname(name).map_err(at)?;
                let slots = parse_count(count)
                    .map_err(|why| at(format!("the slots in {first:?} (MPICH host:N) {why}")))?;
                HostSpec::with_slots(name, slots)
            }
            None => {
                if first.contains('=') {
                    return Err(at(format!(
                        "{first:?} comes before any host name: a line starts with the host"
                    )));
                }
                validate_hostname(first).map_err(at)?;
                HostSpec::new(first)
            }
        };
        let mpich = spec.slots.is_some();
        for word in words {
            let Some((key, value)) = word.split_once('=') else {
                return Err(at(format!(
                    "{word:?} after the host name is not an attribute: write slots=N or \
                     max_slots=N (Open MPI), or host:N alone (MPICH)"
                )));
            };
            if mpich {
                return Err(at(format!(
                    "{word:?} after {first:?}: the MPICH form host:N takes no attributes; \
                     write {} slots=N instead",
                    spec.name
                )));
            }
            let n = parse_count(value).map_err(|why| at(format!("{key}={value:?}: {why}")))?;
            let slot = match key {
                "slots" | "count" | "cpu" => &mut spec.slots,
                "max_slots" | "max-slots" | "slots_max" | "slots-max" => &mut spec.max_slots,
                _ => {
                    return Err(at(format!(
                        "unknown attribute {key:?}: the attributes are slots=N and max_slots=N"
                    )))
                }
            };
            if slot.is_some() {
                return Err(at(format!("{key} is given twice")));
            }
            *slot = Some(n);
        }
        if let (Some(slots), Some(max)) = (spec.slots, spec.max_slots) {
            if max < slots {
                return Err(at(format!(
                    "max_slots={max} is less than slots={slots}: max_slots is the upper bound"
                )));
            }
        }
        if out.len() == MAX_HOSTS {
            return Err(at(format!(
                "the hostfile lists more than {MAX_HOSTS} hosts"
            )));
        }
        out.push(spec);
    }
    if out.is_empty() {
        return Err("the hostfile lists no host (only blank lines and comments)".to_string());
    }
    Ok(out)
}

/// Expands `SLURM_TASKS_PER_NODE` (`2(x3),1` is `2 2 2 1`): one count per node of the
/// allocation, in the order of `SLURM_JOB_NODELIST`.
pub fn expand_tasks_per_node(s: &str) -> Result<Vec<u32>, String> {
    let mut out = Vec::new();
    for item in s.split(',') {
        let item = item.trim();
        let (count, repeat) = match item.split_once("(x") {
            Some((count, rest)) => {
                let Some(repeat) = rest.strip_suffix(')') else {
                    return Err(format!(
                        "SLURM_TASKS_PER_NODE item {item:?}: expected N or N(xM)"
                    ));
                };
                (count, repeat)
            }
            None => (item, "1"),
        };
        let count = parse_count(count)
            .map_err(|why| format!("SLURM_TASKS_PER_NODE item {item:?}: the count {why}"))?;
        let repeat = parse_count(repeat)
            .map_err(|why| format!("SLURM_TASKS_PER_NODE item {item:?}: the repeat {why}"))?;
        if out.len() + repeat as usize > MAX_HOSTS {
            return Err(format!(
                "SLURM_TASKS_PER_NODE {s:?} describes more than {MAX_HOSTS} nodes"
            ));
        }
        out.extend(std::iter::repeat_n(count, repeat as usize));
    }
    Ok(out)
}

/// The nodes of a Slurm allocation: `SLURM_JOB_NODELIST` expanded, each with its count from
/// `SLURM_TASKS_PER_NODE` when that is given (the two must describe the same number of nodes).
pub fn slurm_hosts(nodelist: &str, tasks_per_node: Option<&str>) -> Result<Vec<HostSpec>, String> {
    let names = expand_nodelist(nodelist).map_err(|why| format!("SLURM_JOB_NODELIST: {why}"))?;
    let Some(tasks) = tasks_per_node else {
        return Ok(names.into_iter().map(HostSpec::new).collect());
    };
    let counts = expand_tasks_per_node(tasks)?;
    if counts.len() != names.len() {
        return Err(format!(
            "SLURM_JOB_NODELIST names {} nodes but SLURM_TASKS_PER_NODE {tasks:?} describes {}",
            names.len(),
            counts.len()
        ));
    }
    Ok(names
        .into_iter()
        .zip(counts)
        .map(|(name, slots)| HostSpec::with_slots(name, slots))
        .collect())
}

/// Refuses a list that names a host twice, naming the first repeated host.
pub fn check_unique(hosts: &[HostSpec]) -> Result<(), String> {
    let mut seen = std::collections::BTreeMap::new();
    for (i, host) in hosts.iter().enumerate() {
        if let Some(first) = seen.insert(host.name.as_str(), i) {
            return Err(format!(
                "host {:?} is listed twice (entries {} and {}): each node is listed once",
                host.name,
                first + 1,
                i + 1
            ));
        }
    }
    Ok(())
}

/// `host:slots,...` as in `MULTINODE_HOSTLIST`; a host without slots gets `default_slots`.
pub fn format_hostlist(hosts: &[HostSpec], default_slots: u32) -> String {
    let mut out = String::new();
    for (i, host) in hosts.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "{}:{}", host.name, host.slots.unwrap_or(default_slots));
    }
    out
}

/// A top-level item: byte range into the expression.
struct Item {
    start: usize,
    end: usize,
}

/// Splits at `,`, space and tab outside brackets, as Slurm's `_next_tok` does, but refuses
/// empty items and unbalanced or nested brackets.
fn split_items(s: &str) -> Result<Vec<Item>, String> {
    let mut items = Vec::new();
    let mut open: Option<usize> = None;
    let mut current: Option<usize> = None;
    let mut pending_comma: Option<usize> = None;
    for (i, c) in s.char_indices() {
        match c {
            '[' => {
                if let Some(o) = open {
                    return Err(format!(
                        "{s:?}: '[' at byte {i} inside the bracket opened at byte {o}: \
                         brackets do not nest"
                    ));
                }
                open = Some(i);
                if current.is_none() {
                    current = Some(i);
                    pending_comma = None;
                }
            }
            ']' => {
                if open.take().is_none() {
                    return Err(format!(
                        "{s:?}: ']' at byte {i} closes no '[' (unbalanced brackets)"
                    ));
                }
            }
            ',' | ' ' | '\t' if open.is_none() => {
                if let Some(start) = current.take() {
                    items.push(Item { start, end: i });
                }
                if c == ',' {
                    if items.is_empty() || pending_comma.is_some() {
                        return Err(format!(
                            "{s:?}: empty item before the comma at byte {i}: write names \
                             separated by single commas"
                        ));
                    }
                    pending_comma = Some(i);
                }
            }
            _ => {
                if current.is_none() {
                    current = Some(i);
                    pending_comma = None;
                }
            }
        }
    }
    if let Some(o) = open {
        return Err(format!(
            "{s:?}: the '[' at byte {o} is never closed (unbalanced brackets)"
        ));
    }
    if let Some(start) = current {
        items.push(Item {
            start,
            end: s.len(),
        });
    }
    if let Some(comma) = pending_comma {
        return Err(format!(
            "{s:?}: nothing follows the comma at byte {comma}: remove the trailing comma"
        ));
    }
    if items.is_empty() {
        return Err("empty host list".to_string());
    }
    Ok(items)
}

/// One `lo-hi` (or a single number, `lo == hi`) with the width of `lo` as written.
#[derive(Clone, Copy, Debug)]
struct Range {
    lo: u64,
    hi: u64,
    width: usize,
}

enum Seg<'a> {
    Text(&'a str),
    Group(Vec<Range>),
}

/// Expands one item (brackets already balanced and not nested) onto `out`.
fn expand_item(s: &str, item: &Item, out: &mut Vec<String>) -> Result<(), String> {
    let text = &s[item.start..item.end];
    let mut segs = Vec::new();
    let mut rest = text;
    let mut offset = item.start;
    while let Some(open) = rest.find('[') {
        let close = rest[open..]
            .find(']')
            .map(|c| open + c)
            .ok_or_else(|| format!("{s:?}: the '[' at byte {} is never closed", offset + open))?;
        if open > 0 {
            segs.push(Seg::Text(&rest[..open]));
        }
        let body = &rest[open + 1..close];
        segs.push(Seg::Group(parse_ranges(s, body, offset + open + 1)?));
        offset += close + 1;
        rest = &rest[close + 1..];
    }
    if !rest.is_empty() {
        if segs.is_empty() {
            validate_hostname(rest)?;
            push_checked(s, out, rest.to_string())?;
            return Ok(());
        }
        return Err(format!(
            "{s:?}: {rest:?} follows the last bracket of {text:?}: Slurm refuses text after \
             the last range (\"Invalid hostlist\"); list such names one by one"
        ));
    }

    let groups: Vec<&Vec<Range>> = segs
        .iter()
        .filter_map(|seg| match seg {
            Seg::Group(ranges) => Some(ranges),
            Seg::Text(_) => None,
        })
        .collect();
    let sizes: Vec<usize> = groups.iter().map(|ranges| group_size(ranges)).collect();
    let mut total: usize = 1;
    for size in &sizes {
        total = total.saturating_mul(*size);
    }
    if total > MAX_HOSTS || out.len() + total > MAX_HOSTS {
        return Err(too_many(s));
    }
    let values: Vec<Vec<(u64, usize)>> = groups
        .iter()
        .map(|ranges| {
            ranges
                .iter()
                .flat_map(|r| (r.lo..=r.hi).map(move |v| (v, r.width)))
                .collect()
        })
        .collect();

    // Slurm's nesting: the last group varies fastest; the outer loops run from the group
    // just before the last back to the first (`_push_range_list` takes the last '[' of the
    // prefix, loops over it, and recurses into what is left of it).
    let n = groups.len();
    let mut order: Vec<usize> = (0..n - 1).rev().collect();
    order.push(n - 1);
    let mut pos = vec![0usize; n];
    loop {
        let mut name = String::new();
        let mut g = 0;
        for seg in &segs {
            match seg {
                Seg::Text(t) => name.push_str(t),
                Seg::Group(_) => {
                    let (v, width) = values[g][pos[g]];
                    let _ = write!(name, "{v:0width$}");
                    g += 1;
                }
            }
        }
        validate_hostname(&name).map_err(|why| format!("{s:?} expands to a bad name: {why}"))?;
        out.push(name);
        // Advance the odometer, fastest digit last in `order`.
        let mut k = n;
        loop {
            if k == 0 {
                return Ok(());
            }
            k -= 1;
            let g = order[k];
            pos[g] += 1;
            if pos[g] < sizes[g] {
                break;
            }
            pos[g] = 0;
        }
    }
}

fn group_size(ranges: &[Range]) -> usize {
    ranges
        .iter()
        .map(|r| (r.hi - r.lo + 1) as usize)
        .fold(0usize, usize::saturating_add)
}

/// The inside of one bracket: `1,3-5,08-10`.
fn parse_ranges(s: &str, body: &str, body_at: usize) -> Result<Vec<Range>, String> {
    let mut ranges = Vec::new();
    let mut at = body_at;
    for part in body.split(',') {
        let here = at;
        at += part.len() + 1;
        let bad = |why: &str| format!("{s:?}: range {part:?} at byte {here}: {why}");
        if part.is_empty() {
            return Err(bad("empty range (Slurm: \"Invalid range\")"));
        }
        let (lo, hi) = match part.split_once('-') {
            Some((lo, hi)) => (lo, Some(hi)),
            None => (part, None),
        };
        if lo.is_empty() {
            return Err(bad(
                "a range starts with a number; negative numbers are not allowed",
            ));
        }
        let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
        if !digits(lo) || hi.is_some_and(|h| !h.is_empty() && !digits(h)) {
            return Err(bad("a range is N or LO-HI, with decimal digits only"));
        }
        let Some(lo_value) = number(lo) else {
            return Err(bad("the number is too large"));
        };
        let hi_value = match hi {
            None => lo_value,
            Some("") => {
                return Err(bad("the range has no upper bound: write LO-HI"));
            }
            Some(h) => number(h).ok_or_else(|| bad("the number is too large"))?,
        };
        if lo_value > hi_value {
            return Err(bad(
                "the lower bound is greater than the upper bound (Slurm: \"Invalid range\")",
            ));
        }
        if hi_value - lo_value >= MAX_HOSTS as u64 {
            return Err(bad(&format!(
                "more than {MAX_HOSTS} hosts in one range (Slurm: \"Too many hosts in range\")"
            )));
        }
        ranges.push(Range {
            lo: lo_value,
            hi: hi_value,
            width: lo.len(),
        });
    }
    Ok(ranges)
}

fn number(digits: &str) -> Option<u64> {
    digits.parse::<u64>().ok()
}

/// A slot or task count: decimal, at least 1.
fn parse_count(value: &str) -> Result<u32, String> {
    if value.is_empty() {
        return Err("is missing: write a whole number, at least 1".to_string());
    }
    if !value.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("{value:?} is not a whole number"));
    }
    match value.parse::<u32>() {
        Ok(0) => Err("is 0: it must be at least 1".to_string()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("{value:?} is too large")),
    }
}

fn push_checked(s: &str, out: &mut Vec<String>, name: String) -> Result<(), String> {
    if out.len() >= MAX_HOSTS {
        return Err(too_many(s));
    }
    out.push(name);
    Ok(())
}

fn too_many(s: &str) -> String {
    format!("{} expands to more than {MAX_HOSTS} hosts", shorten(s))
}

fn shorten(s: &str) -> String {
    if s.len() <= 80 {
        return format!("{s:?}");
    }
    let mut end = 77;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{:?}…", &s[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand(s: &str) -> Vec<String> {
        match expand_nodelist(s) {
            Ok(v) => v,
            Err(e) => panic!("{s:?}: {e}"),
        }
    }

    fn err(s: &str) -> String {
        match expand_nodelist(s) {
            Ok(v) => panic!("{s:?} should be refused, got {v:?}"),
            Err(e) => e,
        }
    }

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    // Expected values below are what `scontrol show hostnames` of Slurm 22.05.8 prints; the
    // rules they exercise are in hostlist.c (`_next_tok`, `_parse_single_range`,
    // `_push_range_list`, `_hostlist_create_bracketed`).

    #[test]
    fn plain_names_and_separators() {
        assert_eq!(expand("n1"), words("n1"));
        assert_eq!(expand("a,b,c"), words("a b c"));
        // `hostlist_create` separates at "\t, ".
        assert_eq!(expand("a, b\tc d"), words("a b c d"));
        assert_eq!(expand("10.0.0.1,10.0.0.2"), words("10.0.0.1 10.0.0.2"));
    }

    #[test]
    fn ranges_and_lists_inside_brackets() {
        assert_eq!(
            expand("gpu[01-04,07]"),
            words("gpu01 gpu02 gpu03 gpu04 gpu07")
        );
        assert_eq!(expand("x[1-2],y"), words("x1 x2 y"));
        assert_eq!(expand("a[1-2],b[3-4]"), words("a1 a2 b3 b4"));
        assert_eq!(expand("[1-3]"), words("1 2 3"));
        assert_eq!(expand("n[5]"), words("n5"));
    }

    #[test]
    fn width_is_the_written_width_of_the_lower_bound() {
        // `range->width = strlen(str)` of the lower bound; printed with "%0*lu".
        assert_eq!(expand("a[8-10]"), words("a8 a9 a10"));
        assert_eq!(expand("a[08-10]"), words("a08 a09 a10"));
        assert_eq!(expand("a[008-10]"), words("a008 a009 a010"));
        assert_eq!(expand("a[1-010]"), words("a1 a2 a3 a4 a5 a6 a7 a8 a9 a10"));
        assert_eq!(expand("a[009-011]"), words("a009 a010 a011"));
        assert_eq!(expand("a[9-011]"), words("a9 a10 a11"));
        assert_eq!(expand("a[00-01]"), words("a00 a01"));
        assert_eq!(expand("a[9,010]"), words("a9 a010"));
    }

    #[test]
    fn several_brackets_nest_as_slurm_does() {
        assert_eq!(
            expand("rack[1-2]-node[1-2]"),
            words("rack1-node1 rack1-node2 rack2-node1 rack2-node2")
        );
        // Not lexicographic: the middle bracket is the outermost loop.
        assert_eq!(
            expand("a[1-2]b[3-4]c[5-6]"),
            words("a1b3c5 a1b3c6 a2b3c5 a2b3c6 a1b4c5 a1b4c6 a2b4c5 a2b4c6")
        );
        assert_eq!(expand("host[01-02]x[3]"), words("host01x3 host02x3"));
        assert_eq!(expand("a[1]-[2]"), words("a1-2"));
        assert_eq!(expand("a[1-2][3-4]"), words("a13 a14 a23 a24"));
        // Four brackets: the third is outermost, then the second, then the first, the last
        // fastest.
        assert_eq!(
            expand("a[1-2]b[1-2]c[1-2]d[1-2]")[..5],
            words("a1b1c1d1 a1b1c1d2 a2b1c1d1 a2b1c1d2 a1b2c1d1")[..]
        );
    }

    #[test]
    fn duplicates_and_order_are_kept() {
        assert_eq!(expand("a[1,1]"), words("a1 a1"));
        assert_eq!(expand("a[1-2],a1"), words("a1 a2 a1"));
        assert_eq!(expand("b,a"), words("b a"));
    }

    #[test]
    fn refused_as_slurm_refuses() {
        // `_hostlist_create_bracketed`: after the last ']' only ',' or the end.
        assert!(err("gpu[1-2]-ib").contains("after the last range"));
        assert!(err("node-[1-3].ib").contains("after the last range"));
        // `_parse_single_range`: lo > hi, a '-' right after '-', empty, too many.
        assert!(err("a[3-1]").contains("greater than the upper bound"));
        assert!(err("a[-1]").contains("negative"));
        assert!(err("a[1--2]").contains("decimal digits only"));
        assert!(err("a[]").contains("empty range"));
        assert!(err("a[1-2,]").contains("empty range"));
        assert!(err("a[,1]").contains("empty range"));
        assert!(err("a[1-2]b[]").contains("empty range"));
        assert!(err("a[1-0x3]").contains("decimal digits only"));
        assert!(err("a[1x2]").contains("decimal digits only"));
        assert!(err("a[1-2]]").contains("closes no '['"));
        // MAX_RANGE: 65,536 hosts in a range is the limit, one more is refused.
        assert_eq!(expand("a[0-65535]").len(), 65_536);
        assert!(err("a[0-65536]").contains("more than 65536 hosts in one range"));
    }

    #[test]
    fn refused_here_although_slurm_tolerates_it() {
        // Slurm skips empty items; an empty item here is a typo to point at.
        assert!(err("a,,b").contains("empty item"));
        assert!(err(",a").contains("empty item"));
        assert!(err("a,").contains("trailing comma"));
        assert!(err("a, ,b").contains("empty item"));
        // Slurm reads `a[1-]` as `a1`.
        assert!(err("a[1-]").contains("no upper bound"));
        // Slurm prints `a]` for `a[1-3` and `a[1 a[2` for `a[[1-2]`.
        assert!(err("a[1-3").contains("never closed"));
        assert!(err("a[[1-2]").contains("do not nest"));
        assert!(err("a1-3]").contains("closes no '['"));
        // strtoul in Slurm skips spaces and a '+' (`a[ 1]` gives `a01`).
        assert!(err("a[ 1]").contains("decimal digits only"));
        assert!(err("a[+1]").contains("decimal digits only"));
        assert!(err("a[1, 2]").contains("decimal digits only"));
        assert_eq!(err(""), "empty host list");
        assert_eq!(err("  "), "empty host list");
    }

    #[test]
    fn too_many_hosts_in_all() {
        assert!(err("a[1-300]b[1-300]").contains("more than 65536 hosts"));
        assert!(err("a[0-65535],b").contains("more than 65536 hosts"));
        // Saturating sizes: many large ranges in one bracket.
        let huge = format!("a[{}]", vec!["0-65535"; 100_000].join(","));
        assert!(err(&huge).contains("more than 65536 hosts"));
        assert!(err("a[99999999999999999999]").contains("too large"));
    }

    #[test]
    fn names_are_validated() {
        assert!(err("a;b").contains("';'"));
        assert!(err("$(reboot)").contains("'$'"));
        assert!(err("-oProxyCommand").contains("starts with '-'"));
        assert!(err("-[1-2]").contains("starts with '-'"));
        assert!(err("a..b").contains("empty label"));
        assert!(err("user@host").contains("ssh configuration"));
        assert!(err("fe80::1").contains("IPv6"));
    }

    #[test]
    fn hostname_rules() {
        for ok in [
            "n1",
            "gpu-01.cluster.local",
            "node_7",
            "10.1.2.3",
            "1",
            "A-b",
        ] {
            assert_eq!(validate_hostname(ok), Ok(()), "{ok}");
        }
        let long_label = "a".repeat(64);
        let long_name = [
            "a".repeat(60),
            "b".repeat(60),
            "c".repeat(60),
            "d".repeat(60),
            "e".repeat(60),
        ]
        .join(".");
        for (bad, why) in [
            ("", "empty host name"),
            ("-n1", "starts with '-'"),
            (".n1", "starts with '.'"),
            ("_n1", "starts with '_'"),
            ("n1.", "empty label"),
            ("n 1", "' '"),
            ("n1'", "'\\''"),
            ("n1\n", "'\\n'"),
            ("nö", "'ö'"),
            ("a/b", "'/'"),
            (long_label.as_str(), "label of 64 bytes"),
            (long_name.as_str(), "at most 253"),
        ] {
            let e = validate_hostname(bad).expect_err(bad);
            assert!(e.contains(why), "{bad:?}: {e}");
        }
    }

    #[test]
    fn hosts_arg_with_and_without_slots() {
        assert_eq!(
            parse_hosts_arg("h1,h2"),
            Ok(vec![HostSpec::new("h1"), HostSpec::new("h2")])
        );
        assert_eq!(
            parse_hosts_arg("h1:4,h2"),
            Ok(vec![HostSpec::with_slots("h1", 4), HostSpec::new("h2")])
        );
        assert_eq!(
            parse_hosts_arg("gpu[01-02]:8,login1"),
            Ok(vec![
                HostSpec::with_slots("gpu01", 8),
                HostSpec::with_slots("gpu02", 8),
                HostSpec::new("login1"),
            ])
        );
        assert_eq!(
            parse_hosts_arg("10.0.0.1:2"),
            Ok(vec![HostSpec::with_slots("10.0.0.1", 2)])
        );
        let e = |s: &str| parse_hosts_arg(s).expect_err(s);
        assert!(e("h1:0").contains("at least 1"));
        assert!(e("h1:").contains("missing"));
        assert!(e("h1:x").contains("not a whole number"));
        assert!(e("h1:4:5").contains("not a whole number"));
        assert!(e(":4").contains("no host name"));
        assert!(e("h1:99999999999").contains("too large"));
        assert!(e("h1,,h2").contains("empty item"));
        assert!(e("h[1-2]-ib:4").contains("after the last range"));
        assert!(e("h;x:4").contains("';'"));
    }

    #[test]
    fn hostlist_round_trip() {
        let hosts = parse_hosts_arg("a:2,b").expect("valid");
        assert_eq!(format_hostlist(&hosts, 1), "a:2,b:1");
        assert_eq!(
            parse_hosts_arg(&format_hostlist(&hosts, 1))
                .expect("valid")
                .len(),
            2
        );
    }

    #[test]
    fn open_mpi_hostfile() {
        let text = "\
# The cluster
node01 slots=4
node02 slots=4 max_slots=8   # trailing comment
node03
   node04 slots = 2
node05 count=3
node06 max-slots=6

";
        let hosts = read_hostfile(text).expect("valid");
        let want = vec![
            HostSpec::with_slots("node01", 4),
            HostSpec {
                name: "node02".into(),
                slots: Some(4),
                max_slots: Some(8),
            },
            HostSpec::new("node03"),
            HostSpec::with_slots("node04", 2),
            HostSpec::with_slots("node05", 3),
            HostSpec {
                name: "node06".into(),
                slots: None,
                max_slots: Some(6),
            },
        ];
        assert_eq!(hosts, want);
    }

    #[test]
    fn mpich_hostfile() {
        let hosts = read_hostfile("donner:2\nfoo:2\r\nshakey\n").expect("valid");
        assert_eq!(
            hosts,
            vec![
                HostSpec::with_slots("donner", 2),
                HostSpec::with_slots("foo", 2),
                HostSpec::new("shakey"),
            ]
        );
    }

    #[test]
    fn hostfile_errors_name_the_line() {
        let e = |t: &str| read_hostfile(t).expect_err(t);
        assert_eq!(
            e("a\nb slots=0\n"),
            "hostfile line 2: slots=\"0\": is 0: it must be at least 1"
        );
        assert!(e("a\n\nb sockets=2").starts_with("hostfile line 3: unknown attribute \"sockets\""));
        assert!(e("a 4").contains("line 1: \"4\" after the host name is not an attribute"));
        assert!(e("a slots=2 slots=3").contains("slots is given twice"));
        assert!(e("a slots=4 max_slots=2").contains("max_slots=2 is less than slots=4"));
        assert!(e("a:2 slots=2").contains("MPICH form host:N takes no attributes"));
        assert!(e("a:x").contains("line 1: the slots in \"a:x\""));
        assert!(e("slots=2").contains("before any host name"));
        assert!(e("user@a slots=2").contains("ssh configuration"));
        assert!(e("a;b").contains("line 1: host name \"a;b\""));
        assert!(e("# nothing\n\n").contains("lists no host"));
        assert!(e("").contains("lists no host"));
    }

    #[test]
    fn duplicates_are_reported_by_check_unique() {
        let hosts = read_hostfile("a\nb\na slots=2\n").expect("valid");
        assert_eq!(hosts.len(), 3);
        assert_eq!(
            check_unique(&hosts),
            Err("host \"a\" is listed twice (entries 1 and 3): each node is listed once".into())
        );
        assert_eq!(check_unique(&hosts[..2]), Ok(()));
    }

    #[test]
    fn slurm_tasks_per_node() {
        assert_eq!(expand_tasks_per_node("2(x3),1"), Ok(vec![2, 2, 2, 1]));
        assert_eq!(expand_tasks_per_node("4"), Ok(vec![4]));
        assert!(expand_tasks_per_node("2(x3").is_err());
        assert!(expand_tasks_per_node("0").is_err());
        assert!(expand_tasks_per_node("1(x100000)").is_err());
        assert_eq!(
            slurm_hosts("gpu[01-03],cpu1", Some("8(x3),1")),
            Ok(vec![
                HostSpec::with_slots("gpu01", 8),
                HostSpec::with_slots("gpu02", 8),
                HostSpec::with_slots("gpu03", 8),
                HostSpec::with_slots("cpu1", 1),
            ])
        );
        assert_eq!(
            slurm_hosts("n[1-2]", None),
            Ok(vec![HostSpec::new("n1"), HostSpec::new("n2")])
        );
        let e = slurm_hosts("n[1-2]", Some("1")).expect_err("mismatch");
        assert!(
            e.contains("names 2 nodes but SLURM_TASKS_PER_NODE \"1\" describes 1"),
            "{e}"
        );
        assert!(slurm_hosts("n[2-1]", None)
            .expect_err("reversed")
            .starts_with("SLURM_JOB_NODELIST: "));
    }

    /// Compares with Slurm's own expansion where `scontrol` is installed (Debian:
    /// slurm-client); `scontrol show hostnames` needs a configuration file, not a controller.
    #[test]
    fn agrees_with_scontrol_show_hostnames() {
        let Some(scontrol) = crate::which("scontrol") else {
            eprintln!("note: scontrol not found; comparison with Slurm skipped");
            return;
        };
        let dir = std::env::temp_dir().join(format!("fuzz-hosts-scontrol-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let conf = dir.join("slurm.conf");
        std::fs::write(
            &conf,
            "ClusterName=check\nSlurmctldHost=localhost\nNodeName=n1 CPUs=1\nPartitionName=p Nodes=n1\n",
        )
        .expect("write slurm.conf");
        let slurm = |expr: &str| -> Option<Vec<String>> {
            let out = std::process::Command::new(&scontrol)
                .args(["show", "hostnames", expr])
                .env("SLURM_CONF", &conf)
                .output()
                .expect("run scontrol");
            let stdout = String::from_utf8_lossy(&out.stdout).to_string();
            let stderr = String::from_utf8_lossy(&out.stderr).to_string();
            if stdout.contains("Invalid hostlist") || stderr.contains("Invalid hostlist") {
                return None;
            }
            assert!(
                out.status.success() && !stderr.contains("fatal"),
                "scontrol failed on {expr:?}: {stderr}"
            );
            Some(stdout.split_whitespace().map(str::to_string).collect())
        };
        let accepted = [
            "gpu[01-04,07]",
            "n1",
            "a,b",
            "a b",
            "a[8-10]",
            "a[08-10]",
            "a[008-10]",
            "a[1-010]",
            "a[009-011]",
            "a[9,010]",
            "rack[1-2]-node[1-2]",
            "a[1-2]b[3-4]c[5-6]",
            "a[1-2]b[1-2]c[1-2]d[1-2]",
            "host[01-02]x[3]",
            "a[1]-[2]",
            "a[1-2][3-4]",
            "a[1,1]",
            "a[1-2],a1",
            "[1-3]",
            "x[1-2],y[0001-0003,9]",
            "c[0-1023]",
            "node-[001-004]",
        ];
        for expr in accepted {
            let ours = expand_nodelist(expr).unwrap_or_else(|e| panic!("{expr:?}: {e}"));
            assert_eq!(slurm(expr).as_ref(), Some(&ours), "{expr:?}");
        }
        // Refused by both.
        for expr in [
            "gpu[1-2]-ib",
            "a[3-1]",
            "a[-1]",
            "a[]",
            "a[1-2,]",
            "a[0-65536]",
            "b[1-2]c",
        ] {
            assert!(expand_nodelist(expr).is_err(), "{expr:?}");
            assert_eq!(slurm(expr), None, "{expr:?}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
