//! Parsing keeps no memory: a parser built for one template is freed with it (regression:
//! the grammar's recursive parts held themselves, about 12 KB kept per parse, which a language
//! server parsing on every edit would keep forever). Alone in its binary, so no other test
//! moves the resident size.

fn resident_kib() -> Option<usize> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: usize = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4)
}

#[test]
fn parsing_again_and_again_keeps_no_memory() {
    let text = "{{ if .A }}{{ range $i, $v := .L }}{{ $v | printf \"%d\" }}{{ end }}{{ else if .B }}b{{ end }}{{ define \"d\" }}{{ with (len .X) }}{{ . }}{{ end }}{{ end }}";
    for _ in 0..200 {
        fuzzfile_template::parse("t", text).unwrap();
    }
    let Some(before) = resident_kib() else {
        fuzz_test_support::system::skip("no /proc/self/statm");
        return;
    };
    for _ in 0..4000 {
        fuzzfile_template::parse("t", text).unwrap();
    }
    let after = resident_kib().unwrap();
    // 4000 parses kept ~48 MB before the fix.
    assert!(
        after < before + 8 * 1024,
        "resident size grew from {before} KiB to {after} KiB over 4000 parses"
    );
}
