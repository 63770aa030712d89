//! The secrets file of `fuzz run --secrets FILE`: the values of the `secret://<scope>/<name>`
//! references a Fuzzfile makes.
//!
//! It is TOML with one table per scope; each key in it is a secret's name and its value, a
//! string, is the secret:
//!
//! ```toml
//! [user]
//! hf-token = "hf_…"            # secret://user/hf-token
//! "wandb/key" = "…"            # secret://user/wandb/key (quote names with `/` or `.`)
//!
//! [account]
//! registry-password = """
//! multi-line values are fine
//! """                          # secret://account/registry-password
//! ```
//!
//! Any scope name is accepted (Fuzzball's are `user`, `account`, `group`, `organization` and
//! `cluster`). The result is keyed `scope/name`. A key outside a scope table, a value that is
//! not a string, or a table inside a scope is an error naming the file, line and column.
//!
//! The file should be readable by its owner only: when group or others may read it, a note
//! says so (the values are still used).

use std::collections::BTreeMap;
use std::path::Path;

use toml::de::{DeTable, DeValue};

/// A secrets file larger than this is refused (it is surely not one).
const MAX_SIZE: u64 = 1 << 20;

/// The secrets in `path`, keyed `scope/name`, and notes (warnings) about the file.
pub fn read_secrets(path: &Path) -> Result<(BTreeMap<String, String>, Vec<String>), String> {
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
    if !meta.is_file() {
        return Err(format!("{shown} is not a file"));
    }
    if meta.len() > MAX_SIZE {
        return Err(format!(
            "{shown} is {} bytes; a secrets file is at most {MAX_SIZE} bytes",
            meta.len()
        ));
    }
    let mut notes = Vec::new();
    if let Some(mode) = group_or_other_readable(&meta) {
        notes.push(format!(
            "{shown} can be read by group or others (mode {mode:03o}); \
             restrict it with `chmod 600 {shown}`"
        ));
    }
    // Bounded while reading too: the file may grow after the check above.
    let bytes = fuzzfile_io::read(path, fuzzfile_io::Kind::SECRETS)
        .map_err(|e| format!("cannot read {shown}: {}", e.reason()))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let (line, column) = line_col_bytes(e.as_bytes(), e.utf8_error().valid_up_to());
        format!("{shown}:{line}:{column}: the file is not UTF-8 text")
    })?;
    let secrets = parse_secrets(&text).map_err(|e| format!("{shown}:{e}"))?;
    Ok((secrets, notes))
}

/// The permission bits when group or others have any access.
#[cfg(unix)]
fn group_or_other_readable(meta: &std::fs::Metadata) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    let mode = meta.permissions().mode() & 0o777;
    (mode & 0o077 != 0).then_some(mode)
}

#[cfg(not(unix))]
fn group_or_other_readable(_meta: &std::fs::Metadata) -> Option<u32> {
    None
}

/// Parse the text of a secrets file; an error reads `LINE:COLUMN: message`.
pub fn parse_secrets(text: &str) -> Result<BTreeMap<String, String>, String> {
    let at = |offset: usize, message: String| {
        let (line, column) = line_col(text, offset);
        format!("{line}:{column}: {message}")
    };
    let root = DeTable::parse(text).map_err(|e| {
        let offset = e.span().map_or(0, |s| s.start);
        at(offset, e.message().trim().to_owned())
    })?;
    // In the order they are written, so the first mistake is reported.
    let mut scopes: Vec<_> = root.get_ref().iter().collect();
    scopes.sort_by_key(|(k, _)| k.span().start);
    let mut out = BTreeMap::new();
    for (scope, table) in scopes {
        let scope_name = scope.get_ref();
        let DeValue::Table(entries) = table.get_ref() else {
            return Err(at(
                scope.span().start,
                format!(
                    "`{scope_name}` is outside a scope table: put secrets under a scope, as in \
                     `[user]` then `{scope_name} = \"…\"` for secret://user/{scope_name}"
                ),
            ));
        };
        if scope_name.is_empty() {
            return Err(at(scope.span().start, "the scope name is empty".into()));
        }
        let mut entries: Vec<_> = entries.iter().collect();
        entries.sort_by_key(|(k, _)| k.span().start);
        for (name, value) in entries {
            let name_str = name.get_ref();
            if name_str.is_empty() {
                return Err(at(
                    name.span().start,
                    format!("a secret name in [{scope_name}] is empty"),
                ));
            }
            let DeValue::String(v) = value.get_ref() else {
                let what = match value.get_ref() {
                    DeValue::Table(_) => format!(
                        "`{scope_name}.{name_str}` is a table; scopes hold secrets directly \
                         (quote a name that contains a dot: `\"{name_str}.x\" = \"…\"`)"
                    ),
                    other => format!(
                        "the secret secret://{scope_name}/{name_str} must be a string, not {} \
                         (write it in quotes)",
                        kind(other)
                    ),
                };
                return Err(at(value.span().start, what));
            };
            if v.contains('\0') {
                // No process environment can hold it.
                return Err(at(
                    value.span().start,
                    format!(
                        "the secret secret://{scope_name}/{name_str} contains a NUL character \
                         (`\\u0000`), which no environment variable can hold"
                    ),
                ));
            }
            out.insert(format!("{scope_name}/{name_str}"), v.to_string());
        }
    }
    Ok(out)
}

fn kind(v: &DeValue<'_>) -> &'static str {
    match v {
        DeValue::String(_) => "a string",
        DeValue::Integer(_) => "an integer",
        DeValue::Float(_) => "a float",
        DeValue::Boolean(_) => "a boolean",
        DeValue::Datetime(_) => "a date-time",
        DeValue::Array(_) => "an array",
        DeValue::Table(_) => "a table",
    }
}

/// 1-based line and column (in characters) of a byte offset.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// 1-based line and column (in bytes) of a byte offset in bytes that may not be UTF-8.
fn line_col_bytes(bytes: &[u8], offset: usize) -> (usize, usize) {
    let before = &bytes[..offset.min(bytes.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let column = before.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn ok(text: &str) -> BTreeMap<String, String> {
        match parse_secrets(text) {
            Ok(m) => m,
            Err(e) => panic!("{e}"),
        }
    }

    fn err(text: &str) -> String {
        match parse_secrets(text) {
            Ok(m) => panic!("parsed: {m:?}"),
            Err(e) => e,
        }
    }

    #[test]
    fn scopes_and_names_become_keys() {
        let m = ok(r#"
[user]
hf-token = "hf_abc"
"wandb/key" = 'literal \n'

[account]
registry-password = """
line one
line two"""

[cluster]
"#);
        assert_eq!(m.len(), 3);
        assert_eq!(m["user/hf-token"], "hf_abc");
        assert_eq!(m["user/wandb/key"], "literal \\n");
        assert_eq!(m["account/registry-password"], "line one\nline two");
    }

    #[test]
    fn any_scope_name_and_inline_tables() {
        let m = ok("group = { shared = \"g\" }\n[\"my team\"]\ntok = \"t\"\n");
        assert_eq!(m["group/shared"], "g");
        assert_eq!(m["my team/tok"], "t");
        assert!(ok("").is_empty());
        assert!(ok("# only a comment\n").is_empty());
    }

    #[test]
    fn a_value_that_is_not_a_string_is_located() {
        let e = err("[user]\nhf-token = \"ok\"\nport = 8080\n");
        assert!(e.starts_with("3:8: "), "{e}");
        assert!(
            e.contains("secret://user/port must be a string, not an integer"),
            "{e}"
        );
        let e = err("[user]\nlist = [\"a\"]\n");
        assert!(e.starts_with("2:8: ") && e.contains("an array"), "{e}");
        let e = err("[user]\nflag = true\n");
        assert!(e.contains("a boolean"), "{e}");
    }

    #[test]
    fn a_value_with_nul_is_located() {
        let e = err("[user]\nok = \"x\"\ntoken = \"a\\u0000b\"\n");
        assert!(e.starts_with("3:9: "), "{e}");
        assert!(e.contains("secret://user/token contains a NUL"), "{e}");
    }

    #[test]
    fn a_key_outside_a_scope_is_an_error() {
        let e = err("hf-token = \"x\"\n");
        assert!(e.starts_with("1:1: "), "{e}");
        assert!(e.contains("outside a scope table"), "{e}");
        assert!(e.contains("secret://user/hf-token"), "{e}");
    }

    #[test]
    fn a_table_inside_a_scope_is_an_error() {
        let e = err("[user]\na = \"1\"\n[user.hf]\ntoken = \"x\"\n");
        assert!(e.contains("`user.hf` is a table"), "{e}");
        assert!(e.starts_with("3:"), "{e}");
    }

    #[test]
    fn syntax_errors_carry_line_and_column() {
        let e = err("[user]\nhf-token = \"unterminated\n");
        assert!(e.starts_with("2:"), "{e}");
        let e = err("[user]\n[user]\n");
        assert!(e.starts_with("2:"), "{e}");
        let e = err("[user]\n  é = \"x\"\n");
        assert!(e.starts_with("2:3: "), "{e}");
    }

    #[test]
    fn line_and_column_count_characters() {
        assert_eq!(line_col("ab\ncé\nx", 7), (3, 1));
        assert_eq!(line_col("ab\ncéx", 6), (2, 3));
        assert_eq!(line_col("", 5), (1, 1));
        assert_eq!(line_col_bytes(b"a\n\xffb", 2), (2, 1));
    }

    /// A scratch file under the system temp directory, removed when dropped.
    struct Scratch(std::path::PathBuf);

    impl Scratch {
        fn new(name: &str, contents: &[u8]) -> Scratch {
            let dir = std::env::temp_dir()
                .join(format!("fuzz-runner-secrets-{}-{name}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).expect("temp dir");
            let path = dir.join("secrets.toml");
            let mut f = std::fs::File::create(&path).expect("create");
            f.write_all(contents).expect("write");
            Scratch(path)
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            if let Some(dir) = self.0.parent() {
                let _ = std::fs::remove_dir_all(dir);
            }
        }
    }

    #[cfg(unix)]
    fn chmod(path: &Path, mode: u32) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
    }

    #[cfg(unix)]
    #[test]
    fn a_file_others_can_read_gets_a_note() {
        let f = Scratch::new("open", b"[user]\ntok = \"v\"\n");
        chmod(&f.0, 0o644);
        let (m, notes) = read_secrets(&f.0).expect("read");
        assert_eq!(m["user/tok"], "v");
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].contains("mode 644") && notes[0].contains("chmod 600"),
            "{}",
            notes[0]
        );

        chmod(&f.0, 0o600);
        let (_, notes) = read_secrets(&f.0).expect("read");
        assert!(notes.is_empty(), "{notes:?}");
        chmod(&f.0, 0o640);
        assert_eq!(read_secrets(&f.0).expect("read").1.len(), 1);
    }

    #[test]
    fn errors_name_the_file() {
        let f = Scratch::new("bad", b"[user]\nport = 1\n");
        let e = read_secrets(&f.0).expect_err("not a string");
        let shown = f.0.display().to_string();
        assert!(e.starts_with(&format!("{shown}:2:8: ")), "{e}");

        let f = Scratch::new("binary", b"[user]\ntok = \"\xff\"\n");
        let e = read_secrets(&f.0).expect_err("not UTF-8");
        assert!(e.contains(":2:8: the file is not UTF-8"), "{e}");

        let missing = f.0.with_file_name("missing.toml");
        let e = read_secrets(&missing).expect_err("missing");
        assert!(
            e.starts_with("cannot read ") && e.contains("missing.toml"),
            "{e}"
        );

        let dir = f.0.parent().expect("dir").to_path_buf();
        let e = read_secrets(&dir).expect_err("a directory");
        assert!(e.ends_with("is not a file"), "{e}");
    }
}
