//! RULE-PENDING: documentation and detection are written with the rule.

use super::Context;
use fuzzfile_diagnostics::Diagnostic;

pub fn check(_ctx: &Context<'_>, _out: &mut Vec<Diagnostic>) {}
