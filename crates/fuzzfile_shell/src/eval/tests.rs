use super::*;
use std::time::Instant;

/// Each argument as text: a known value as is, choices as `{a|b}`, a run-time value as
/// `<NAME@head>`/`<NAME@node>`, an unknown piece as `?`, an unknown count as `<*>`.
fn show_arg(a: &Arg) -> String {
    match a {
        Arg::Unknown(_) => "<*>".into(),
        Arg::Field(f) => show_field(f),
    }
}

fn show_field(f: &Field) -> String {
    let show = |c: &Vec<Piece>| -> String {
        c.iter()
            .map(|p| match p {
                Piece::Text { text, .. } => text.clone(),
                Piece::Runtime { name, site, .. } => format!(
                    "<{name}@{}>",
                    if *site == Site::Head { "head" } else { "node" }
                ),
                Piece::Unknown { .. } => "?".into(),
            })
            .collect()
    };
    if f.choices.len() == 1 {
        show(&f.choices[0])
    } else {
        format!(
            "{{{}}}",
            f.choices.iter().map(show).collect::<Vec<_>>().join("|")
        )
    }
}

fn argv(e: &Exec) -> Vec<String> {
    e.argv.iter().map(show_arg).collect()
}

struct Run {
    ev: Evaluation,
}

impl Run {
    /// The argv of every command whose first word is `name`.
    fn of(&self, name: &str) -> Vec<Vec<String>> {
        self.ev
            .execs
            .iter()
            .filter(|e| argv(e).first().map(String::as_str) == Some(name))
            .map(argv)
            .collect()
    }
    fn one(&self, name: &str) -> Vec<String> {
        let all = self.of(name);
        assert_eq!(all.len(), 1, "{name}: {all:?}\n{:#?}", self.all());
        all.into_iter().next().unwrap()
    }
    fn exec(&self, name: &str) -> &Exec {
        self.ev
            .execs
            .iter()
            .find(|e| argv(e).first().map(String::as_str) == Some(name))
            .unwrap_or_else(|| panic!("no {name}: {:?}", self.all()))
    }
    fn all(&self) -> Vec<Vec<String>> {
        self.ev.execs.iter().map(argv).collect()
    }
}

fn opts() -> Options {
    Options {
        env: vec![
            ("RANK".into(), Initial::Runtime),
            ("MULTINODE_NODE_IP".into(), Initial::Runtime),
            ("MULTINODE_SSH_WRAPPER".into(), Initial::Runtime),
        ],
        unset_names: UnsetNames::Empty,
        cwd: Some("/work".into()),
        remote_runners: vec!["exec_all".into()],
        remote_wrappers: vec!["MULTINODE_SSH_WRAPPER".into()],
    }
}

fn run_with(script: &str, files: &[(&str, &str)], o: &Options) -> Run {
    let mut texts = vec![script];
    let mut map = HashMap::new();
    for (i, (path, text)) in files.iter().enumerate() {
        texts.push(text);
        map.insert((*path).to_owned(), SourceId(i as u32 + 1));
    }
    let sources = Sources { texts, files: map };
    Run {
        ev: evaluate(SourceId(0), &sources, o),
    }
}

fn run(script: &str) -> Run {
    run_with(script, &[], &opts())
}

fn v(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

#[test]
fn assignments_and_splitting() {
    let r = run("ARGS=\"--nproc_per_node 8 --nnodes 2\"\ntorchrun $ARGS \"$ARGS\" x.py\n");
    assert_eq!(
        r.one("torchrun"),
        v(&[
            "torchrun",
            "--nproc_per_node",
            "8",
            "--nnodes",
            "2",
            "--nproc_per_node 8 --nnodes 2",
            "x.py"
        ])
    );
    assert!(!r.ev.truncated && !r.ev.has_errors);
}

#[test]
fn origins_point_into_the_assignment() {
    let s = "DISTRIBUTED_ARGS=\"--nproc_per_node 8\"\ntorchrun $DISTRIBUTED_ARGS a.py\n";
    let r = run(s);
    let e = r.exec("torchrun");
    let Arg::Field(f) = &e.argv[2] else { panic!() };
    let Piece::Text {
        text,
        origin: Some(o),
    } = &f.choices[0][0]
    else {
        panic!("{f:?}")
    };
    assert_eq!(text, "8");
    assert_eq!(&s[o.range.clone()], "8");
    assert_eq!(o.range.start, s.find('8').unwrap());
    // The field's word is the expansion in the command.
    assert_eq!(&s[f.word.range.clone()], "$DISTRIBUTED_ARGS");
    assert_eq!(&s[e.span.range.clone()], "torchrun $DISTRIBUTED_ARGS a.py");
}

#[test]
fn parameter_expansions() {
    let r = run(concat!(
        "N=4; E=\nunset U\n",
        "c ${N:-8} ${U:-8} ${E:-8} ${E-8} ${U-8} ${N:+yes} ${U:+yes} ${#N} \"${U}\" ${N}x\n",
        "c ${V:=7} $V ${H#*.} ${H##*.} ${H%.*} ${H%%.*} ${H/a/X} ${H//a/X} ${H:1:3} ${H^^}\n",
    ));
    let all = r.of("c");
    assert_eq!(all[0], v(&["c", "4", "8", "8", "8", "yes", "1", "", "4x"]));
    // H is unset (unset names are empty in these options).
    assert_eq!(all[1], v(&["c", "7", "7"]));
    let r = run("H=a.b.tar.gz\nc ${H#*.} ${H##*.} ${H%.*} ${H%%.*} ${H/a/X} ${H//a/X} ${H:1:3} ${H^^} ${H: -2}\n");
    assert_eq!(
        r.one("c"),
        v(&[
            "c",
            "b.tar.gz",
            "gz",
            "a.b.tar",
            "a",
            "X.b.tar.gz",
            "X.b.tXr.gz",
            ".b.",
            "A.B.TAR.GZ",
            "gz"
        ])
    );
}

#[test]
fn arithmetic() {
    let r =
        run("N=4; M=$((N*2+1)); c $M $(( (N+1)**2 )) $((N/0)) $((X+1)) $((-N))\n((N++)); c $N\n");
    let all = r.of("c");
    // `$((N/0))` is an error in bash, not known here, and one word (a number) if anything.
    assert_eq!(all[0], v(&["c", "9", "25", "?", "1", "-4"]));
    assert_eq!(all[1], v(&["c", "5"]));
}

#[test]
fn arrays() {
    let r = run(concat!(
        "A=(--a 1 \"b c\")\nA+=(--d)\nA[1]=2\n",
        "c \"${A[@]}\" ${#A[@]} ${A[2]} \"${A[*]}\" ${A[@]:1:2}\n",
        "declare -a B=(x y)\nc ${B[@]}\n",
    ));
    let all = r.of("c");
    assert_eq!(
        all[0],
        v(&[
            "c",
            "--a",
            "2",
            "b c",
            "--d",
            "4",
            "b",
            "c",
            "--a 2 b c --d",
            "2",
            "b",
            "c"
        ])
    );
    assert_eq!(all[1], v(&["c", "x", "y"]));
}

#[test]
fn positional_parameters() {
    let r = run(concat!(
        "set -- a \"b c\" d\nc $# \"$@\" $1\nshift\nc \"$@\" $*\n",
        "f() { local x=$1; shift; c \"$x\" \"$@\" $#; return; c never; }\nf p q r\nc \"$@\" $x\n",
    ));
    let all = r.of("c");
    assert_eq!(all[0], v(&["c", "3", "a", "b c", "d", "a"]));
    assert_eq!(all[1], v(&["c", "b c", "d", "b", "c", "d"]));
    assert_eq!(all[2], v(&["c", "p", "q", "r", "2"]));
    assert_eq!(all[3], v(&["c", "b c", "d"]));
    assert!(r.of("never").is_empty() || r.exec("never").certainty == Certainty::Maybe);
    let f = r.ev.execs.iter().find(|e| argv(e) == all[2]).unwrap();
    assert_eq!(
        f.nesting
            .iter()
            .map(|n| n.entry.clone())
            .collect::<Vec<_>>(),
        vec![Entry::Function { name: "f".into() }]
    );
}

#[test]
fn unknowns() {
    let o = Options {
        unset_names: UnsetNames::Unknown,
        ..opts()
    };
    let r = run_with(
        "c $X \"$X\" --a=$X $(hostname) \"$(hostname)\" *.py ~/x $X$X\n",
        &[],
        &o,
    );
    assert_eq!(
        r.one("c"),
        v(&["c", "<*>", "?", "--a=?", "<*>", "<*>", "?", "<*>", "?/x", "<*>"])
    );
    assert_eq!(r.of("hostname").len(), 2);
}

#[test]
fn runtime_values_and_sites() {
    let r = run(concat!(
        "exec_all torchrun --node-rank $RANK --master-addr \"$MULTINODE_NODE_IP\" x.py\n",
        "exec_all bash -c 'torchrun --node-rank $RANK x.py'\n",
        "exec_all bash -c \"torchrun --node-rank $RANK y.py\"\n",
        "$MULTINODE_SSH_WRAPPER host1 torchrun --node-rank '$RANK' z.py\n",
    ));
    let t = r.of("torchrun");
    assert_eq!(t.len(), 3, "{:?}", r.all());
    assert_eq!(t[0], v(&["torchrun", "--node-rank", "<RANK@node>", "x.py"]));
    assert_eq!(t[1], v(&["torchrun", "--node-rank", "<RANK@head>", "y.py"]));
    assert_eq!(t[2], v(&["torchrun", "--node-rank", "<RANK@node>", "z.py"]));
    let ea = r.of("exec_all");
    assert_eq!(ea[0][3], "<RANK@head>");
    assert_eq!(ea[0][5], "<MULTINODE_NODE_IP@head>");
    assert_eq!(ea[1][3], "torchrun --node-rank $RANK x.py");
    let nested: Vec<&Exec> =
        r.ev.execs
            .iter()
            .filter(|e| argv(e)[0] == "torchrun")
            .collect();
    assert_eq!(nested[0].site, Site::EachNode);
    assert_eq!(nested[0].nesting[0].entry, Entry::ShellString);
    assert_eq!(nested[2].site, Site::EachNode);
}

#[test]
fn shell_strings_with_arguments() {
    let r = run(
        "export NP=8\nL=local\nbash -c 'torchrun --nproc $NP \"$L\" $0 \"$@\"' zero a \"b c\"\n",
    );
    assert_eq!(
        r.one("torchrun"),
        v(&["torchrun", "--nproc", "8", "", "zero", "a", "b c"])
    );
    let e = r.exec("torchrun");
    assert_eq!(e.nesting.len(), 1);
    assert_eq!(e.nesting[0].entry, Entry::ShellString);
}

#[test]
fn eval_and_synthetic_texts() {
    let s = "A='torchrun --nnodes'\nB=2\nCMD=\"$A $B --node_rank $RANK\"\neval \"$CMD x.py\"\n";
    let r = run(s);
    assert_eq!(
        r.one("torchrun"),
        v(&[
            "torchrun",
            "--nnodes",
            "2",
            "--node_rank",
            "<RANK@head>",
            "x.py"
        ])
    );
    let e = r.exec("torchrun");
    assert_eq!(e.nesting[0].entry, Entry::Eval);
    // `2` maps back to where it is written.
    let Arg::Field(f) = &e.argv[2] else { panic!() };
    let Piece::Text {
        origin: Some(o), ..
    } = &f.choices[0][0]
    else {
        panic!("{f:?}")
    };
    assert_eq!(&s[o.range.clone()], "2");
    assert_eq!(o.range.start, s.find("B=2").unwrap() + 2);
}

#[test]
fn branches_merge() {
    let r = run(concat!(
        "if [ -n \"$X\" ]; then N=8; else N=4; fi\nc $N\n",
        "case $MODE in a) M=1;; b) M=2;; *) M=3;; esac\nc $M\n",
        "MODE=b\ncase $MODE in a) K=1;; b|c) K=2;; esac\nc $K\n",
        "[ -f x ] && Z=1 || Z=2\nc $Z\n",
        "W=1; if cond; then exit 1; fi; c $W\n",
    ));
    let all = r.of("c");
    // X is unset here: the `else` branch is known to be taken.
    assert_eq!(all[0], v(&["c", "4"]));
    // MODE is unset: only `*` matches.
    assert_eq!(all[1], v(&["c", "3"]));
    assert_eq!(all[2], v(&["c", "2"]));
    assert_eq!(
        all[3],
        v(&["c", "{1|2}"]),
        "`a && X=1 || X=2` is an if/else"
    );
    assert_eq!(all[4], v(&["c", "1"]));
    let o = Options {
        unset_names: UnsetNames::Unknown,
        ..opts()
    };
    let r = run_with(
        "if cond; then N=8; torchrun a; else N=4; fi\nc $N\n",
        &[],
        &o,
    );
    assert_eq!(r.one("c"), v(&["c", "{8|4}"]));
    assert_eq!(r.exec("torchrun").certainty, Certainty::Maybe);
    assert_eq!(r.exec("c").certainty, Certainty::Always);
}

#[test]
fn loops() {
    let r = run("for n in 1 2 3; do c $n; done\nfor x in $(ls); do D=$x; done\nc \"$D\"\nfor ((i=0;i<3;i++)); do :; done\nc $i\n");
    let all = r.of("c");
    assert_eq!(all[..3], [v(&["c", "1"]), v(&["c", "2"]), v(&["c", "3"])]);
    assert_eq!(all[3], v(&["c", "?"]));
    // A C-style loop over known bounds is unrolled: bash leaves i at 3.
    assert_eq!(all[4], v(&["c", "3"]));
}

#[test]
fn braces_and_globs() {
    let r = run("c {a,b}x {1..3} '{a,b}' a\\*b \"*\" [x] x[ y]\n");
    assert_eq!(
        r.one("c"),
        v(&["c", "ax", "bx", "1", "2", "3", "{a,b}", "a*b", "*", "<*>", "x[", "y]"])
    );
}

#[test]
fn files_heredocs_and_sources() {
    let files = [
        (
            "/opt/launch.sh",
            "torchrun --nnodes $1 --nproc $NP $EXTRA\n",
        ),
        ("/work/env.sh", "export NP=4\nEXTRA=local\n"),
    ];
    let r = run_with(
        concat!(
            "source ./env.sh\nbash /opt/launch.sh 2\n",
            "bash <<EOF\ntorchrun --a $NP\nEOF\n",
            "bash -s <<'EOF'\ntorchrun --b $NP\nEOF\n",
            "cat > /tmp/x.sh <<EOF\ntorchrun --c $NP \\$NP\nEOF\nbash /tmp/x.sh\n",
        ),
        &files,
        &opts(),
    );
    let t = r.of("torchrun");
    assert_eq!(t[0], v(&["torchrun", "--nnodes", "2", "--nproc", "4"]));
    assert_eq!(t[1], v(&["torchrun", "--a", "4"]));
    assert_eq!(t[2], v(&["torchrun", "--b", "4"]));
    assert_eq!(t[3], v(&["torchrun", "--c", "4", "4"]));
    let entries: Vec<Vec<Entry>> =
        r.ev.execs
            .iter()
            .filter(|e| argv(e)[0] == "torchrun")
            .map(|e| e.nesting.iter().map(|n| n.entry.clone()).collect())
            .collect();
    assert_eq!(
        entries[0],
        vec![Entry::File {
            path: "/opt/launch.sh".into()
        }]
    );
    assert_eq!(entries[1], vec![Entry::Heredoc]);
    assert_eq!(
        entries[3],
        vec![Entry::File {
            path: "/tmp/x.sh".into()
        }]
    );
}

#[test]
fn hostile_inputs_are_bounded() {
    let cases: Vec<(String, bool)> = vec![
        ("A='eval \"$A\"'; eval \"$A\"".into(), true),
        ("f() { f; }; f".into(), true),
        (":(){ :|:& };:".into(), true),
        ("(".repeat(10_000) + &")".repeat(10_000), false),
        ("c {1..100000000}".into(), true),
        ("A=x; for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30; do A=$A$A; done; c $A".into(), true),
        (format!("c {}", "{a,b}".repeat(30)), true),
        ("x=\"$(".repeat(3000), false),
        ("${".repeat(2000), false),
    ];
    for (s, want_trunc) in cases {
        let t = Instant::now();
        let r = run(&s);
        assert!(
            t.elapsed().as_secs_f64() < 5.0,
            "{s:.40}: {:?}",
            t.elapsed()
        );
        if want_trunc {
            assert!(r.ev.truncated, "{s:.60}");
        }
    }
}

/// A generated script of about 1 MB: assignments, exports, expansions, branches, loops,
/// functions and nested shells over `NAMES` distinct variable names (default 64), or the
/// file `SCRIPT`.
/// `cargo test --release -p fuzzfile_shell --lib one_megabyte -- --ignored --nocapture`
/// prints the time.
#[test]
#[ignore]
fn one_megabyte_script() {
    let names = std::env::var("NAMES")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(64)
        .max(1);
    let mut s = std::env::var("SCRIPT")
        .ok()
        .and_then(|p| std::fs::read_to_string(p).ok())
        .unwrap_or_default();
    let mut n = 0usize;
    while s.len() < 1 << 20 {
        let i = n % names;
        n += 1;
        s.push_str(&format!(
            "N{i}=$((i % 8 + 1))\nexport ARGS{i}=\"--nproc_per_node $N{i} --nnodes 2\"\n\
             if [ -n \"$X{i}\" ]; then M=$N{i}; else M=4; fi\n\
             f{i}() {{ local a=$1; torchrun $ARGS{i} --rank \"$a\" \"$@\" x.py; }}\n\
             f{i} $RANK y z\nfor h in a b c; do echo \"$h\" ${{M:-1}}; done\n\
             bash -c 'echo $ARGS{i}' | tee log.{n}\ncase $M in 4) Q=1;; *) Q=2;; esac\n",
        ));
    }
    let t = Instant::now();
    let r = run(&s);
    let dt = t.elapsed();
    eprintln!(
        "{} bytes, {} commands, {:?} (truncated: {})",
        s.len(),
        r.ev.execs.len(),
        dt,
        r.ev.truncated
    );
    assert!(!r.ev.has_errors || std::env::var("SCRIPT").is_ok());
}

#[test]
fn prefixes_and_environment_of_new_shells() {
    let r = run(concat!(
        "export A=1\nB=2\nset -a\nC=3\nset +a\nD=4\n",
        "nohup nice -n 5 stdbuf -oL timeout -s INT 10 env X=9 bash -c 'torchrun $A$B$C$D$X' &\n",
        "env -i Y=1 sh -c 'torchrun \"$A\" $Y'\n",
        "exec_all setsid bash -c 'torchrun $A $RANK'\n",
    ));
    let t = r.of("torchrun");
    assert_eq!(t[0], v(&["torchrun", "139"]));
    assert_eq!(t[1], v(&["torchrun", "", "1"]));
    // On each node the job's environment, not the head shell's exports.
    assert_eq!(t[2], v(&["torchrun", "<RANK@node>"]));
    let c = r.exec("torchrun");
    assert_eq!(c.variables.get("X").map(|v| v.exported), Some(true));
    assert!(c.variables.get("B").is_none(), "B is not exported");
}

#[test]
fn sources_with_arguments_and_scripts_relative_to_cwd() {
    let files = [
        ("/work/lib.sh", "NNODES=$1\nshift\nREST=\"$*\"\n"),
        ("/work/sub/run.sh", "torchrun --nnodes $1 \"$0\"\n"),
    ];
    let r = run_with(
        "source lib.sh 4 a b\ntorchrun $NNODES $REST \"$@\"\ncd sub\n./run.sh 2\n",
        &files,
        &opts(),
    );
    let t = r.of("torchrun");
    assert_eq!(t[0], v(&["torchrun", "4", "a", "b"]));
    assert_eq!(t[1], v(&["torchrun", "--nnodes", "2", "./run.sh"]));
    let e =
        r.ev.execs
            .iter()
            .filter(|e| argv(e)[0] == "torchrun")
            .nth(1)
            .unwrap();
    assert_eq!(
        e.nesting[0].entry,
        Entry::File {
            path: "/work/sub/run.sh".into()
        }
    );
}

#[test]
fn heredoc_with_tabs_and_quoted_delimiter() {
    let r = run("N=2\nsh <<-EOF\n\ttorchrun --a $N \\$N\n\tEOF\nbash <<'X'\ntorchrun --b $N\nX\n");
    let t = r.of("torchrun");
    // `\$N` reaches the inner shell as `$N`, which is not exported there.
    assert_eq!(t[0], v(&["torchrun", "--a", "2"]));
    // A quoted delimiter: the body is literal; N is not exported.
    assert_eq!(t[1], v(&["torchrun", "--b"]));
}

#[test]
fn regressions_from_the_bash_differential() {
    // Words the grammar puts into a redirection, and an escaped blank it drops.
    let r = run("torchrun > out.log --nnodes 2 2>err.log x.py\npython \"a\"\\ \"b\"\n");
    assert_eq!(r.one("torchrun"), v(&["torchrun", "--nnodes", "2", "x.py"]));
    assert_eq!(r.one("python"), v(&["python", "a b"]));
    // `export X` before X is set; `export -n`.
    let r = run("export N\nN=3\nexport M=1\nexport -n M\nbash -c 'torchrun $N $M'\n");
    assert_eq!(r.one("torchrun"), v(&["torchrun", "3"]));
    // `"$@"` of no parameters is no word; `"$*"` is one.
    let r = run("f() { torchrun \"$@\" \"$*\" $#; }\nf\n");
    assert_eq!(r.one("torchrun"), v(&["torchrun", "", "0"]));
    // A function named like a program: the call is not a command that runs.
    let r = run("torchrun() { command torchrun --wrapped \"$@\"; }\ntorchrun x\n");
    assert!(r.of("torchrun").is_empty(), "{:?}", r.all());
    assert_eq!(
        r.one("command"),
        v(&["command", "torchrun", "--wrapped", "x"])
    );
    // An argument loop over known parameters is unrolled.
    let r = run(concat!(
        "set -- --gpus 4 --other --nnodes 2\nN=1\nG=8\n",
        "while [[ $# -gt 0 ]]; do case $1 in --nnodes) N=$2; shift 2;; --gpus) G=$2; shift 2;; *) shift;; esac; done\n",
        "torchrun $N $G\n",
    ));
    assert_eq!(r.one("torchrun"), v(&["torchrun", "2", "4"]));
    // Over unknown parameters, whatever the loop assigns is unknown after it.
    let r = run(concat!(
        "f() { N=1; while [ $# -gt 0 ]; do case $1 in -n) N=$2; shift;; esac; shift; done; torchrun $N; }\n",
        "f \"$@\"\n",
    ));
    assert_eq!(r.one("torchrun"), v(&["torchrun", "1"]));
    let o = Options {
        unset_names: UnsetNames::Unknown,
        ..opts()
    };
    let r = run_with(
        "N=1\nwhile [ $# -gt 0 ]; do case $1 in -n) N=$2; shift;; esac; shift; done\ntorchrun $N\n",
        &[],
        &Options { ..o.clone() },
    );
    assert_eq!(
        r.one("torchrun"),
        v(&["torchrun", "1"]),
        "no parameters: the loop never runs"
    );
    // `unset 'A[1]'` keeps the other elements.
    let r = run("A=(a b c)\nunset 'A[1]'\ntorchrun \"${A[@]}\" ${#A[@]} ${A[2]}\n");
    assert_eq!(r.one("torchrun"), v(&["torchrun", "a", "c", "2", "<*>"]));
    // `continue` in a branch known to be taken.
    let r = run("for n in 1 2 3; do if [ $n = 2 ]; then continue; fi; torchrun $n; done\n");
    assert_eq!(
        r.of("torchrun"),
        vec![v(&["torchrun", "1"]), v(&["torchrun", "3"])]
    );
}

#[test]
fn assignment_order_and_heredoc_parameters() {
    // Prefix assignments in order; declaration arguments all expanded first.
    let r = run("A=1 B=$A bash -c 'torchrun \"$A\" \"$B\"'\nf() { local a=1 b=$a; python \"$a\" \"$b\"; }\nf\n");
    assert_eq!(r.one("torchrun"), v(&["torchrun", "1", "1"]));
    assert_eq!(r.one("python"), v(&["python", "1", ""]));
    // A heredoc body in a function expands the function's parameters; `"` in it is literal.
    let s = "launch() {\n    sh <<EOF\ntorchrun --nnodes $1 --tag \"x\" $2\nEOF\n}\nlaunch 2 8\n";
    let r = run(s);
    assert_eq!(
        r.one("torchrun"),
        v(&["torchrun", "--nnodes", "2", "--tag", "x", "8"])
    );
    let e = r.exec("torchrun");
    assert_eq!(
        e.nesting
            .iter()
            .map(|n| n.entry.clone())
            .collect::<Vec<_>>(),
        vec![
            Entry::Function {
                name: "launch".into()
            },
            Entry::Heredoc
        ]
    );
    // The literal `--nnodes` of the body maps back to the script.
    let Arg::Field(f) = &e.argv[1] else { panic!() };
    let Piece::Text {
        origin: Some(o), ..
    } = &f.choices[0][0]
    else {
        panic!("{f:?}")
    };
    assert_eq!(&s[o.range.clone()], "--nnodes");
    // Single quotes inside a double-quoted default are literal.
    let r = run("c \"${V:-'a b'}\" ${V:-'a b'}\n");
    assert_eq!(r.one("c"), v(&["c", "'a b'", "a b"]));
}

#[test]
fn deep_nesting_fits_a_small_stack() {
    let mut cases = vec![
        "if true; then ".repeat(2000) + &"fi; ".repeat(2000),
        "{ ".repeat(3000) + "c" + &"; }".repeat(3000),
        "f() { g; }; g() { h; }; h() { f; }; f".to_owned(),
        "A='eval \"$A\"'; eval \"$A\"".to_owned(),
        "A='bash -c \"$A\"'; export A; eval \"$A\"".to_owned(),
        "c ".to_owned() + &"$(".repeat(500) + &")".repeat(500),
        "c \"".to_owned() + &"${X:-".repeat(500) + &"}".repeat(500) + "\"",
        "c $((".to_owned() + &"(".repeat(500) + "1" + &")".repeat(500) + "))",
        "c ".to_owned() + &"{a,".repeat(300) + &"}".repeat(300),
        "for i in 1 2; do ".repeat(100) + "c" + &"; done".repeat(100),
        "case x in x) ".repeat(300) + "c" + &";; esac".repeat(300),
    ];
    cases.push("f() { eval \"f; f\"; }; f".into());
    let only: Option<usize> = std::env::var("CASE").ok().and_then(|v| v.parse().ok());
    let handle = std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(move || {
            for (i, s) in cases.iter().enumerate() {
                if only.is_some_and(|o| o != i) {
                    continue;
                }
                let _ = run(s);
            }
        })
        .unwrap();
    handle.join().unwrap();
}

#[test]
fn let_with_an_unknown_expression_makes_its_names_unknown() {
    // `x=3*4` is a glob pattern to bash before `let` sees it: the filesystem decides.
    let r = run("x=1\nlet x=3*4 y=x+1\nlet z=2+3\nc $x $y $z\n");
    assert_eq!(r.one("c"), v(&["c", "<*>", "<*>", "5"]));
}

#[test]
fn tilde_prefixes() {
    let r = run("HOME=/h\nP=/a:~/b:~:x~\nc ~ ~/x a~ ~u/y \"~\" $P\n");
    assert_eq!(
        r.one("c"),
        v(&["c", "/h", "/h/x", "a~", "?/y", "~", "/a:/h/b:/h:x~"])
    );
    let r = run("P=/a:~/b\nc ~/x \"$P\"\n");
    assert_eq!(r.one("c"), v(&["c", "?/x", "/a:?/b"]));
}

#[test]
fn code_not_known_may_set_names() {
    // A sourced file that is not shipped may set what nothing here sets; what is set stays.
    let r = run(
        "N=2\nsource /etc/profile.d/site.sh\nc $N $M\neval \"$(ssh-agent)\"\nc $SSH_AUTH_SOCK\n",
    );
    let all = r.of("c");
    assert_eq!(all[0], v(&["c", "2", "<*>"]));
    assert_eq!(all[1], v(&["c", "<*>"]));
    // Without them, an unset name is empty (the options say the environment is known).
    let r = run("N=2\nc $N $M\n");
    assert_eq!(r.one("c"), v(&["c", "2"]));
}

#[test]
fn a_command_of_several_forms() {
    let o = Options {
        unset_names: UnsetNames::Unknown,
        ..opts()
    };
    let s = concat!(
        "if command -v torchrun >/dev/null; then L=torchrun; else L=\"python -m torch.distributed.run\"; fi\n",
        "$L --nproc_per_node 2 train.py\n",
    );
    let r = run_with(s, &[], &o);
    let t = r.one("torchrun");
    assert_eq!(t, v(&["torchrun", "--nproc_per_node", "2", "train.py"]));
    let p = r.one("python");
    assert_eq!(
        p,
        v(&[
            "python",
            "-m",
            "torch.distributed.run",
            "--nproc_per_node",
            "2",
            "train.py"
        ])
    );
    assert_eq!(r.exec("torchrun").certainty, Certainty::Maybe);
    assert_eq!(r.exec("python").span, r.exec("torchrun").span);
}

#[test]
fn break_and_continue_levels_and_crlf() {
    let r = run("for a in 1 2; do for b in x y; do c $a $b; break 2; done; done\nfor a in 1 2; do for b in x y; do c $a$b; continue 2; done; done\n");
    assert_eq!(
        r.of("c"),
        vec![v(&["c", "1", "x"]), v(&["c", "1x"]), v(&["c", "2x"])]
    );
    // A carriage return is a character of the word to bash.
    let r = run("N=2\r\ntorchrun --nnodes $N x.py\r\n");
    assert_eq!(
        r.one("torchrun"),
        v(&["torchrun", "--nnodes", "2\r", "x.py\r"])
    );
}

#[test]
fn expansions_in_synthetic_texts_map_back() {
    let s = "exec_all bash -c \"torchrun --node_rank \\$RANK --n $N\"\n";
    let r = run(s);
    assert_eq!(
        r.one("torchrun"),
        v(&["torchrun", "--node_rank", "<RANK@node>", "--n"])
    );
    let e = r.exec("torchrun");
    let Arg::Field(f) = &e.argv[2] else { panic!() };
    let Piece::Runtime { origin, .. } = &f.choices[0][0] else {
        panic!("{f:?}")
    };
    assert_eq!(&s[origin.range.clone()], "$RANK");
    // A command of the nested text maps to the text it stands in (`$N` expanded to
    // nothing before the inner shell read it).
    assert_eq!(&s[e.span.range.clone()], "torchrun --node_rank \\$RANK --n");
}

#[test]
fn indirection_keys_and_anchored_replacement() {
    let r =
        run("A=(a b)\nV=N\nN=4\nc \"${A[@]/#/--x=}\" \"${!A[@]}\" ${!V} ${N/%/0} \"${!PRE@}\"\n");
    assert_eq!(
        r.one("c"),
        v(&["c", "--x=a", "--x=b", "0", "1", "4", "40", "<*>"])
    );
}

/// Token soups from a fixed pseudo-random sequence: no panic, bounded time.
#[test]
fn random_token_soups_never_panic() {
    const TOKENS: &[&str] = &[
        "a",
        "$X",
        "${X:-",
        "}",
        "\"",
        "'",
        "$(",
        ")",
        "(",
        "`",
        "{",
        ",",
        "..",
        "1",
        "\\",
        "\n",
        ";",
        "&&",
        "||",
        "|",
        "&",
        "<<EOF\n",
        "EOF\n",
        "<<-'E'\n",
        "E\n",
        "if ",
        "then ",
        "fi ",
        "for ",
        "in ",
        "do ",
        "done ",
        "case ",
        "esac ",
        ";;",
        "while ",
        "f() {",
        "eval ",
        "bash -c ",
        "exec_all ",
        "$((",
        "))",
        "[@]",
        "${#",
        "${!",
        "=",
        "+=",
        "A=(",
        "*",
        "?",
        "[",
        "]",
        "~",
        " ",
        "set -- ",
        "shift ",
        "local ",
        "export ",
        "unset ",
        "source ",
        "$@",
        "\"$@\"",
        "$1",
        "é",
        "\r",
        "\t",
        "${X/#/",
        "${X:1:",
        "-9223372036854775808",
        "break 3 ",
        "continue 2 ",
        "$MULTINODE_SSH_WRAPPER h ",
        "read -ra A <<< ",
        "while true; do ",
        "(( ",
        "IFS=, ",
        "${A[",
        "]}",
        ";&",
        "$((A[",
        "${!",
        "[@]/#/",
        "export -n ",
        "Y=1 f ",
        "read ",
        "let ",
        "cat > /tmp/f <<EOF\n",
        "./f ",
        "cd .. ",
    ];
    // `SOUPS=N SOUP_SEED=S` runs more of them.
    let count: usize = std::env::var("SOUPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1500);
    let mut seed: u64 = std::env::var("SOUP_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x9e37_79b9_7f4a_7c15);
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let start = Instant::now();
    for _ in 0..count {
        let len = (next() % 40) as usize;
        let mut s = String::new();
        for _ in 0..len {
            s.push_str(TOKENS[(next() % TOKENS.len() as u64) as usize]);
        }
        let _ = run(&s);
    }
    assert!(start.elapsed().as_secs() < 60 * (1 + count as u64 / 1500));
}

#[test]
fn after_a_possible_exit_commands_may_not_run() {
    let o = Options {
        unset_names: UnsetNames::Unknown,
        ..opts()
    };
    let r = run_with(
        "a\nif [ -z \"$X\" ]; then exit 1; fi\nb\n( exit 0 ); f() { return; }\n",
        &[],
        &o,
    );
    assert_eq!(r.exec("a").certainty, Certainty::Always);
    assert_eq!(r.exec("b").certainty, Certainty::Maybe);
    // An exit in a subshell or a return in a function ends only that.
    let r = run_with(
        "( if c; then exit 1; fi ); f() { if c; then return; fi; x; }; f; b\n",
        &[],
        &o,
    );
    assert_eq!(r.exec("b").certainty, Certainty::Always);
    assert_eq!(r.exec("x").certainty, Certainty::Maybe);
}

#[test]
fn ifs_assigned() {
    let r = run("A='x y'\nIFS=,\nc $A \"$A\"\nIFS=$' \\t\\n'\nc $A\nunset IFS\nc $A\nf() { local IFS=:; c $A; }\nf\nc $A\n");
    assert_eq!(
        r.of("c"),
        vec![
            v(&["c", "<*>", "x y"]),
            v(&["c", "x", "y"]),
            v(&["c", "x", "y"]),
            v(&["c", "<*>"]),
            v(&["c", "x", "y"])
        ]
    );
    // `"$*"` joins with IFS's first character.
    let r = run("set -- a b\nc \"$*\"\nIFS=,\nc \"$*\" \"$@\"\n");
    assert_eq!(r.of("c"), vec![v(&["c", "a b"]), v(&["c", "?", "a", "b"])]);
}

#[test]
fn case_fallthrough() {
    let r = run("X=a\ncase x$X in xa) c xa;& xb) c xb;; xc) c xc;; esac\n");
    assert_eq!(r.of("c"), vec![v(&["c", "xa"]), v(&["c", "xb"])]);
}

#[test]
fn arithmetic_conditions() {
    let r = run("N=2\nif (( N > 1 )); then A=multi; else A=single; fi\n(( N == 1 )) && B=one || B=more\nc $A $B\n");
    assert_eq!(r.one("c"), v(&["c", "multi", "more"]));
}

#[test]
fn heredoc_quotes_inside_expansions() {
    // The outer shell gives `c d 'e' "q" \"x\" a b $y \z` to the inner one, which runs
    // `c d e q "x" a b z`.
    let s = "bash <<EOF\nc ${U:-\"d\"} ${U:-'e'} \"q\" \\\"x\\\" $(echo \"a b\") \\$y \\\\z\nEOF\n";
    let r = run(s);
    let all = r.of("c");
    assert_eq!(all, vec![v(&["c", "d", "e", "q", "\"x\"", "<*>", "z"])]);
    assert_eq!(r.one("echo"), v(&["echo", "a b"]));
}

#[test]
fn assignments_in_front_of_a_function_call() {
    // bash: [unset] [2] [unset] [unset] [5]
    let r = run(concat!(
        "g() { Y=2; }; Y=1 g; c \"${Y-unset}\"\n",
        "h() { export Z=2; }; Z=1 h; c \"${Z-unset}\"\n",
        "k() { c \"$W\"; }; W=1 k; c \"${W-unset}\"\n",
        "m() { local V=3; }; V=1 m; c \"${V-unset}\"\n",
        "n() { export Q; }; Q=5 n; c \"${Q-unset}\"\n",
    ));
    assert_eq!(
        r.of("c"),
        vec![
            v(&["c", "unset"]),
            v(&["c", "2"]),
            v(&["c", "1"]),
            v(&["c", "unset"]),
            v(&["c", "unset"]),
            v(&["c", "5"])
        ]
    );
}

#[test]
fn read_arithmetic_elements_and_while_true() {
    let r = run(concat!(
        "read -r N <<< 5\nread A B <<< \"x  y z \"\nV=a,b,c\nIFS=, read -ra L <<< \"$V\"\n",
        "c \"$N\" \"$A\" \"$B\" \"${L[@]}\"\n",
        "read Q <<EOF\nq1 q2\nsecond\nEOF\nc \"$Q\"\n",
        "read R\nc \"$R\"\n",
        "M=(3 4)\nc $(( ${M[0]} * 2 )) $(( M[1] * 2 )) $(( M[-1] ))\n",
        "n=0\nwhile true; do n=$((n + 1)); [ $n -ge 3 ] && break; done\nc $n\n",
    ));
    // bash: [5][x][y z][a][b][c] | [q1 q2] | [] | [6][8][4] | [3]
    assert_eq!(
        r.of("c"),
        vec![
            v(&["c", "5", "x", "y z", "a", "b", "c"]),
            v(&["c", "q1 q2"]),
            v(&["c", "?"]),
            v(&["c", "6", "8", "4"]),
            v(&["c", "3"]),
        ]
    );
}

#[test]
fn array_indices_are_expanded_words() {
    let r =
        run("A=(zero one two)\ni=1\nc ${A[$i]} ${A[i+1]} ${A[-1]} ${A[\"$i\"]} ${A[$((i+1))]}\n");
    assert_eq!(r.one("c"), v(&["c", "one", "two", "two", "one", "two"]));
}

#[test]
fn defaults_apply_to_names_nothing_sets() {
    let o = Options {
        env: vec![
            (
                "GIVEN".into(),
                Initial::Known {
                    text: "2".into(),
                    origin: None,
                },
            ),
            ("LATER".into(), Initial::Unknown),
            ("RANK".into(), Initial::Runtime),
        ],
        unset_names: UnsetNames::DefaultsApply,
        ..opts()
    };
    let r = run_with(
        "NGPU=${NGPU:-\"8\"}\nc $NGPU ${GIVEN:-4} ${LATER:-4} ${A-x} ${B:+y} \"$PLAIN\" ${C:=5} $C\nsource /not/shipped.sh\nc ${D:-6}\n",
        &[],
        &o,
    );
    let calls = r.of("c");
    // The script's own default for a name nothing sets; a name the environment sets (even to
    // something not known) keeps its value; a plain expansion of an absent name stays unknown.
    // (`${B:+y}` of an absent B is empty and, unquoted, no argument at all.)
    assert_eq!(calls[0], v(&["c", "8", "2", "<*>", "x", "?", "5", "5"]));
    // After code not known ran, an absent name may have been set by it.
    assert_eq!(calls[1], v(&["c", "<*>"]));
}

#[test]
fn files_run_behind_env_and_a_remote_runner() {
    let r = run_with(
        "exec_all env NODE_RANK=\"$RANK\" M=\"$MULTINODE_NODE_IP\" \\\n  bash /opt/x.sh a.py --b 2\n",
        &[("/opt/x.sh", "torchrun --node_rank $NODE_RANK --master_addr $M -- ${@:1}\n")],
        &opts(),
    );
    // `NODE_RANK="$RANK"` was expanded by the head's shell, in front of `exec_all`.
    let t = r.one("torchrun");
    assert_eq!(t[..3], v(&["torchrun", "--node_rank", "<RANK@head>"]));
    let e =
        r.ev.execs
            .iter()
            .find(|e| argv(e).first().map(String::as_str) == Some("torchrun"))
            .unwrap();
    assert_eq!(e.site, Site::EachNode);
}

#[test]
fn white_space_ifs_splits_at_its_characters() {
    // bash's "strict mode": fields split at newlines and tabs only.
    let r = run("IFS=$'\\n\\t'\nA='x y'\nB=$'p\\tq'\nN=4\nc $A $B ${N}:${N}\nIFS=,\nc $A\n");
    let calls = r.of("c");
    assert_eq!(calls[0], v(&["c", "x y", "p", "q", "4:4"]));
    assert_eq!(
        calls[1],
        v(&["c", "<*>"]),
        "a non-white IFS is not modelled"
    );
}

#[test]
fn doubling_arrays_and_strings_stay_bounded() {
    // Each line doubles the array (or the string): 2^40 elements if nothing stopped it. The
    // bytes a copy of the variables holds count too (a command's snapshot shares them, so the
    // next change copies them).
    let r = run(&format!(
        "A=(x)\n{}c \"${{A[@]}}\"\nS=x\n{}c \"$S\"\n",
        "A+=(\"${A[@]}\")\nc\n".repeat(40),
        "S=\"$S$S\"\nc\n".repeat(60)
    ));
    assert!(r.ev.truncated);
    for e in &r.ev.execs {
        let words: usize = e
            .argv
            .iter()
            .map(|a| match a {
                Arg::Field(f) => f.choices.iter().flatten().count().max(1),
                Arg::Unknown(_) => 1,
            })
            .sum();
        assert!(words < 1_000_000, "{words} words in one command");
    }
}

#[test]
fn an_unknown_number_is_one_word() {
    // picotron's launcher string: a random port, then the string split unquoted.
    let r = run("PORT=$((1024 + RANDOM % 64511))\nL=\"torchrun --nnode=4 --rdzv_endpoint h:${PORT} --rdzv_backend c10d\"\n$L train.py\nc $((X + 1)) $(nproc)\n");
    assert_eq!(
        r.one("torchrun"),
        v(&[
            "torchrun",
            "--nnode=4",
            "--rdzv_endpoint",
            "h:?",
            "--rdzv_backend",
            "c10d",
            "train.py"
        ])
    );
    // A command substitution is not a number: its word count stays unknown.
    assert_eq!(r.one("c"), v(&["c", "1", "<*>"]));
}
