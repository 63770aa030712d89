//! Output formats. Every format shows the same diagnostics; positions are 1-based lines and
//! character columns (Unicode scalar values).

pub mod github;
pub mod human;
pub mod json;
pub mod sarif;
