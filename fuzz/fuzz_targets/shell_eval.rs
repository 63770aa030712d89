//! The shell evaluator on arbitrary scripts: it never panics, and every range it reports
//! (commands, words, the origin of every piece of text) is a byte range on character
//! boundaries of the source it names. The input is a script, optionally followed by
//! `\n#---\n` and the content of a file the job ships at `/opt/x.sh` (which the script may run
//! or source), with a starting environment holding known and run-time variables and `exec_all`
//! as a remote runner.
//!
//! Run it with `ASAN_OPTIONS=detect_stack_use_after_return=0`: the evaluator bounds its own
//! stack by comparing stack addresses, and AddressSanitizer's fake stacks make it stop at once.
#![no_main]

use fuzzfile_shell::eval::{
    evaluate, Arg, Initial, Options, Piece, SourceId, Sources, Span, UnsetNames, Value,
};
use libfuzzer_sys::fuzz_target;

fn check(span: &Span, texts: &[&str], what: &str) {
    let text = texts
        .get(span.source.0 as usize)
        .unwrap_or_else(|| panic!("{what}: unknown source {:?}", span.source));
    assert!(
        text.get(span.range.clone()).is_some(),
        "{what}: {:?} is not a range of source {:?} ({} bytes)",
        span.range,
        span.source,
        text.len()
    );
}

fn check_pieces(pieces: &[Piece], texts: &[&str]) {
    for p in pieces {
        match p {
            Piece::Text {
                text,
                origin: Some(o),
            } => {
                check(o, texts, "text origin");
                let at = &texts[o.source.0 as usize][o.range.clone()];
                assert!(
                    at.len() <= 4 * text.len() + 16 || text.is_empty(),
                    "origin {at:?} far longer than its text {text:?}"
                );
            }
            Piece::Text { origin: None, .. } => {}
            Piece::Runtime { origin, .. } | Piece::Unknown { origin } => {
                check(origin, texts, "piece origin")
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else {
        return;
    };
    let (script, file) = match input.split_once("\n#---\n") {
        Some((s, f)) => (s, Some(f)),
        None => (input, None),
    };
    let env_value = "--nproc_per_node 8 --nnodes 2";
    let mut texts = vec![script, env_value];
    let mut sources = Sources::default();
    if let Some(f) = file {
        texts.push(f);
        sources.files.insert("/opt/x.sh".into(), SourceId(2));
    }
    sources.texts = texts.clone();
    let options = Options {
        env: vec![
            (
                "ARGS".into(),
                Initial::Known {
                    text: env_value.into(),
                    origin: Some(Span {
                        source: SourceId(1),
                        range: 0..env_value.len(),
                    }),
                },
            ),
            ("RANK".into(), Initial::Runtime),
            ("MULTINODE_NODE_IP".into(), Initial::Runtime),
            ("MULTINODE_SSH_WRAPPER".into(), Initial::Runtime),
            ("IMAGE_VAR".into(), Initial::Unknown),
        ],
        unset_names: UnsetNames::Unknown,
        cwd: Some("/opt".into()),
        remote_runners: vec!["exec_all".into()],
        remote_wrappers: vec!["MULTINODE_SSH_WRAPPER".into()],
    };
    let e = evaluate(SourceId(0), &sources, &options);
    for x in &e.execs {
        check(&x.span, &texts, "command span");
        for n in &x.nesting {
            check(&n.command, &texts, "nesting command");
        }
        for a in &x.argv {
            match a {
                Arg::Field(f) => {
                    check(&f.word, &texts, "field word");
                    assert!(!f.choices.is_empty() && f.choices.len() <= 8);
                    for c in &f.choices {
                        check_pieces(c, &texts);
                    }
                }
                Arg::Unknown(s) => check(s, &texts, "unknown argument"),
            }
        }
        for (_, f) in &x.prefix {
            check(&f.word, &texts, "prefix word");
        }
        for v in x.variables.values() {
            if let Value::Scalar(f) = &v.value {
                assert!(!f.choices.is_empty());
            }
        }
    }
});
