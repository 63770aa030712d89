//! Analysis findings as LSP diagnostics: the same findings, messages and severities as
//! `fuzzlint check`, with the rule code and a link to the rule's documentation.

use crate::position::Lines;
use fuzzfile_check::{Diagnostic, Rule, Severity};
use lsp_types::{
    CodeDescription, DiagnosticRelatedInformation, DiagnosticSeverity, DiagnosticTag, Location,
    NumberOrString, Uri,
};

/// Where the rule documentation lives: `docs/rules/<name>.md` of the repository named in the
/// workspace manifest, on its main branch, or where `FUZZLINT_DOCS_URL` puts it
/// (`fuzzfile_diagnostics::docs`). The documents are generated from the rules' source and
/// checked for freshness by a test, so the link always matches the rule.
pub fn rule_doc_url(rule: Rule) -> String {
    fuzzfile_diagnostics::docs::rule_doc_url(rule)
}

pub const SOURCE: &str = "fuzzlint";

pub fn severity(s: Severity) -> DiagnosticSeverity {
    match s {
        Severity::Error => DiagnosticSeverity::ERROR,
        Severity::Warning => DiagnosticSeverity::WARNING,
        Severity::Info => DiagnosticSeverity::INFORMATION,
    }
}

/// Rules whose findings the editor may show as unnecessary (faded) or deprecated (struck).
fn tags(rule: Rule) -> Option<Vec<DiagnosticTag>> {
    match rule {
        Rule::UnusedSuppression => Some(vec![DiagnosticTag::UNNECESSARY]),
        Rule::DeprecatedKey | Rule::TorchDistributedLaunchDeprecated | Rule::PolicyRetryIgnored => {
            Some(vec![DiagnosticTag::DEPRECATED])
        }
        _ => None,
    }
}

pub fn to_lsp(d: &Diagnostic, lines: &Lines<'_>, uri: &Uri) -> lsp_types::Diagnostic {
    let mut message = d.message.clone();
    if let Some(help) = &d.help {
        message.push_str("\nhelp: ");
        message.push_str(help);
    }
    let related: Vec<DiagnosticRelatedInformation> = d
        .labels
        .iter()
        .map(|l| DiagnosticRelatedInformation {
            location: Location::new(uri.clone(), lines.range(l.range)),
            message: l.message.clone(),
        })
        .collect();
    lsp_types::Diagnostic {
        range: lines.range(d.range),
        severity: Some(severity(d.severity)),
        code: Some(NumberOrString::String(d.rule.code().to_owned())),
        code_description: rule_doc_url(d.rule)
            .parse()
            .ok()
            .map(|href| CodeDescription { href }),
        source: Some(SOURCE.to_owned()),
        message,
        related_information: (!related.is_empty()).then_some(related),
        tags: tags(d.rule),
        data: Some(serde_json::Value::String(d.rule.name().to_owned())),
    }
}
