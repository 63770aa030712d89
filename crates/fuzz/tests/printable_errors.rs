//! `fuzz plan` and `fuzz check` print a refused Fuzzfile's findings with every control
//! character, bidirectional override and line separator of the file escaped, as `fuzzlint`
//! does (`fuzzfile_check::render::printable`): a hostile file cannot drive the terminal or
//! start a CI workflow command.

use fuzz_test_support::{fuzz_binary, ScratchDirectory};

#[test]
fn refused_fuzzfiles_print_no_control_characters() {
    let dir = ScratchDirectory::create("fuzz-printable", "hostile");
    let hostile = "version: v4\njobs:\n  a:\n    image: {uri: docker://x}\n    command: [true]\n    \"x\\n::add-mask::pwned\\e[2J\\u202e\": 1\n    y\x1b[1A: 2\n";
    std::fs::write(dir.join("hostile.fz"), hostile).expect("write the file");
    for verb in ["plan", "check"] {
        let out = fuzz_binary!()
            .command()
            .args([verb, "hostile.fz"])
            .current_dir(&dir)
            .output()
            .expect("run fuzz");
        assert_ne!(out.status.code(), Some(0), "{verb}");
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let bad: Vec<char> = all
            .chars()
            .filter(|&c| (c.is_control() && c != '\n') || c == '\u{202e}')
            .collect();
        assert!(bad.is_empty(), "{verb}: {bad:?} in\n{all}");
        assert!(
            all.contains("unknown key `x\\n::add-mask::pwned\\u{1b}[2J\\u{202e}`"),
            "{verb}: {all}"
        );
    }
}
