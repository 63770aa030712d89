//! The template language's grammar (Go's `text/template/parse`), parsed with chumsky.

use crate::{ParseError, Template};

pub fn parse(name: &str, text: &str) -> Result<Template, Vec<ParseError>> {
    let _ = (name, text);
    Err(vec![ParseError {
        span: 0..0,
        message: "the template parser is not built yet".into(),
    }])
}
