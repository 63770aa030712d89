//! Print the span tree of a YAML file: `cargo run -p fuzzfile_syntax --example probe FILE`.
fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: probe FILE");
        std::process::exit(2);
    };
    let bytes = std::fs::read(&path).unwrap_or_default();
    let (text, tree) = fuzzfile_syntax::parse_bytes(&bytes);
    print!("{}", fuzzfile_syntax::debug_tree(&text, &tree));
}
