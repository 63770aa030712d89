//! The function library: every case of `tests/funcs_cases.txt` against Go's recorded results
//! (`funcs_cases.go.jsonl`, from `scripts/go-template-render`: Go 1.19's text/template with
//! slim-sprig's functions), and what Go cannot show: the random source's algorithm, the
//! fixed clock, and the function catalog.

mod exec_check;

use fuzzfile_template::funcs::{is_defined, Random, NAMES, NOT_BUILT};
use fuzzfile_template::{parse, render, ExecErrorKind, RenderOptions, Value};

/// slim-sprig's functions and Go's builtins as Go runs them: argument order, clamping,
/// conversions, defaults, errors and their messages.
#[test]
fn funcs_cases_match_go() {
    exec_check::check_pair("funcs_cases");
}

/// The recorded results of funcs_cases.txt are what Go prints for them now.
#[test]
fn funcs_cases_record_is_gos() {
    exec_check::check_recorded_against_go("funcs_cases");
}

fn render_text(template: &str, options: &RenderOptions) -> Result<String, String> {
    let t = parse("t", template).map_err(|e| e[0].message.clone())?;
    render(&t, &Value::Map(Default::default()), options)
        .map(|r| r.text)
        .map_err(|e| e.message)
}

/// splitmix64 as published (Steele, Lea, Flood 2014; Vigna's reference `splitmix64.c`): the
/// first outputs from seed 0 are these (the Go harness mirrors the same algorithm).
#[test]
fn random_is_splitmix64() {
    let mut r = Random::new(0);
    assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
    assert_eq!(r.next_u64(), 0x6E78_9E6A_A1B9_65F4);
    assert_eq!(r.next_u64(), 0x06C4_5D18_8009_454F);
}

/// randInt MIN MAX = MIN + next_u64() % (MAX - MIN), one draw per call in template order.
#[test]
fn rand_int_draws_as_documented() {
    let options = RenderOptions {
        seed: 1234,
        ..RenderOptions::default()
    };
    let mut r = Random::new(1234);
    let want: Vec<String> = [(0i64, 10i64), (1000, 65000), (-50, 50)]
        .iter()
        .map(|(lo, hi)| (lo + (r.next_u64() % (hi - lo) as u64) as i64).to_string())
        .collect();
    let got = render_text(
        "{{ randInt 0 10 }} {{ randInt 1000 65000 }} {{ randInt -50 50 }}",
        &options,
    );
    assert_eq!(got, Ok(want.join(" ")));
    // The same seed gives the same text; another seed, another draw.
    let again = render_text("{{ randInt 0 1000000 }}", &options);
    assert_eq!(again, render_text("{{ randInt 0 1000000 }}", &options));
    let other = RenderOptions {
        seed: 1235,
        ..RenderOptions::default()
    };
    assert_ne!(again, render_text("{{ randInt 0 1000000 }}", &other));
}

/// `now` is RenderOptions.now_unix_seconds; `unixEpoch` prints its seconds.
#[test]
fn now_is_the_fixed_clock() {
    let options = RenderOptions {
        now_unix_seconds: 1_234_567_890,
        ..RenderOptions::default()
    };
    assert_eq!(
        render_text("{{ now | unixEpoch }}|{{ now }}", &options),
        Ok("1234567890|2009-02-13 23:31:30 +0000 UTC".to_string())
    );
    assert_eq!(
        render_text("{{ unixEpoch now }}", &RenderOptions::default()),
        Ok("946684800".to_string())
    );
}

/// Every function the catalog calls (research notes, part 5.2) is defined, and no name is
/// listed twice.
#[test]
fn catalog_functions_are_defined() {
    for name in [
        "trim",
        "fail",
        "not",
        "printf",
        "hasPrefix",
        "eq",
        "and",
        "randInt",
        "substr",
        "or",
        "splitList",
        "base",
        "len",
        "list",
        "index",
        "trimPrefix",
        "trimSuffix",
        "default",
        "join",
        "toString",
        "gt",
        "add",
        "max",
        "trimAll",
        "b64enc",
        "int",
        "now",
        "unixEpoch",
        "lower",
        "toJson",
        "empty",
        "mul",
        "sub",
        "append",
        "dict",
        "replace",
        "le",
        "ne",
    ] {
        assert!(is_defined(name), "{name} is not defined");
    }
    let mut seen = std::collections::BTreeSet::new();
    for n in NAMES {
        assert!(seen.insert(n), "{n} is listed twice");
    }
    // Not slim-sprig's: Fuzzball rejects them, so they are not defined here either.
    for name in ["uuidv4", "randAlphaNum", "nospace", "randAlpha", "semver"] {
        assert!(!is_defined(name), "{name} is defined");
    }
    // slim-sprig's names that are not built parse, and stop the render when called.
    for name in NOT_BUILT {
        assert!(is_defined(name), "{name} is not defined");
        let t = parse("t", &format!("{{{{ {name} }}}}")).map_err(|e| e[0].message.clone());
        let Ok(t) = t else {
            panic!("{name}: {t:?}");
        };
        let e = render(
            &t,
            &Value::Map(Default::default()),
            &RenderOptions::default(),
        )
        .expect_err(name);
        assert_eq!(e.kind, ExecErrorKind::WrongArgument, "{name}");
        assert!(e.message.contains("not available"), "{name}: {}", e.message);
    }
}

/// Each defined function can be called: with no argument it runs or reports Go's argument
/// count error, never "not defined" (every name of NAMES has a signature and a body).
#[test]
fn every_name_has_a_signature_and_a_body() {
    for name in NAMES {
        if *name == "fail" {
            continue;
        }
        let t = parse("t", &format!("{{{{ {name} }}}}"))
            .unwrap_or_else(|e| panic!("{name}: {}", e[0].message));
        match render(
            &t,
            &Value::Map(Default::default()),
            &RenderOptions::default(),
        ) {
            Ok(_) => {}
            Err(e) => assert!(
                !e.message.contains("not defined") && !e.message.contains("not a defined"),
                "{name}: {}",
                e.message
            ),
        }
    }
}

/// `fail` stops the render with its own message, as an error of kind Fail at the call.
#[test]
fn fail_is_its_own_kind() {
    let text = "ok\n{{ if true }}{{ fail \"choose a bucket\" }}{{ end }}";
    let t = parse("t", text).map_err(|e| e[0].message.clone());
    let Ok(t) = t else {
        panic!("{t:?}");
    };
    let e = render(
        &t,
        &Value::Map(Default::default()),
        &RenderOptions::default(),
    )
    .expect_err("fail stops the render");
    assert_eq!(e.kind, ExecErrorKind::Fail);
    assert_eq!(e.message, "choose a bucket");
    assert_eq!(&text[e.span.clone()], "fail \"choose a bucket\"");
}

/// Wrong argument types and counts are WrongArgument errors in Go's words.
#[test]
fn argument_errors_are_wrong_argument() {
    for (template, message) in [
        ("{{ trim 1 }}", "expected string; found 1"),
        ("{{ trim }}", "wrong number of args for trim: want 1 got 0"),
        (
            "{{ substr 0 (add 1 1) \"abc\" }}",
            "wrong type for value; expected int; got int64",
        ),
        (
            "{{ printf }}",
            "wrong number of args for printf: want at least 1 got 0",
        ),
    ] {
        let t = parse("t", template).unwrap_or_else(|e| panic!("{template}: {e:?}"));
        let e = render(
            &t,
            &Value::Map(Default::default()),
            &RenderOptions::default(),
        )
        .expect_err(template);
        assert_eq!(e.kind, ExecErrorKind::WrongArgument, "{template}");
        assert_eq!(e.message, message, "{template}");
    }
}
