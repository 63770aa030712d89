//! The functions a template calls: Go's builtins (`text/template/funcs.go`) and slim-sprig's.

/// The deterministic random source of `randInt` and friends: splitmix64 from
/// [`crate::RenderOptions::seed`].
#[derive(Clone, Debug)]
pub struct Random {
    state: u64,
}

impl Random {
    pub fn new(seed: u64) -> Self {
        Random { state: seed }
    }

    /// splitmix64 (Steele, Lea, Flood 2014).
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// Every function name a template may call. Go's parser rejects any other name at parse time
/// (`function "x" not defined`), so the parser asks [`is_defined`].
pub const NAMES: &[&str] = &[
    // Go builtins (text/template/funcs.go builtins()).
    "and", "call", "html", "index", "slice", "js", "len", "not", "or", "print", "printf",
    "println", "urlquery", "eq", "ge", "gt", "le", "lt", "ne",
    // slim-sprig, those the catalog uses (research notes, part 5.2).
    "trim", "fail", "hasPrefix", "randInt", "substr", "splitList", "base", "list",
    "trimPrefix", "trimSuffix", "default", "join", "toString", "add", "max", "trimAll",
    "b64enc", "int", "now", "unixEpoch", "lower", "toJson", "empty", "mul", "sub", "append",
    "dict", "replace",
];

pub fn is_defined(name: &str) -> bool {
    NAMES.contains(&name)
}
