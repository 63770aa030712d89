//! The rule registry: every diagnostic the toolchain emits belongs to exactly one rule with a
//! stable kebab-case name, a stable code and a default severity. Documentation for each rule
//! lives next to its implementation in `fuzzfile_check::rules` and is generated into docs/rules/.

use crate::Severity;
use serde::{Serialize, Serializer};

/// Which layer finds a rule's diagnostics.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RuleCategory {
    /// The YAML text itself.
    Syntax,
    /// The shape of the Fuzzfile: keys, types, value grammars.
    Schema,
    /// Relations between parts of the file: references, the job graph.
    Semantic,
}

macro_rules! rules {
    ($( $variant:ident => ($code:literal, $name:literal, $sev:ident, $cat:ident, $summary:literal), )*) => {
        /// Every rule, in code order.
        #[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
        pub enum Rule { $( $variant, )* }

        impl Rule {
            pub const ALL: &'static [Rule] = &[ $( Rule::$variant, )* ];

            /// The stable kebab-case name (`unknown-key`).
            pub const fn name(self) -> &'static str {
                match self { $( Rule::$variant => $name, )* }
            }
            /// The stable code (`FZ010`).
            pub const fn code(self) -> &'static str {
                match self { $( Rule::$variant => $code, )* }
            }
            pub const fn default_severity(self) -> Severity {
                match self { $( Rule::$variant => Severity::$sev, )* }
            }
            pub const fn category(self) -> RuleCategory {
                match self { $( Rule::$variant => RuleCategory::$cat, )* }
            }
            /// One line saying what the rule detects.
            pub const fn summary(self) -> &'static str {
                match self { $( Rule::$variant => $summary, )* }
            }
        }
    };
}

rules! {
    YamlSyntax => ("FZ001", "yaml-syntax", Error, Syntax, "The text is not valid YAML, or exceeds the size and nesting limits"),
    UnsupportedVersion => ("FZ002", "unsupported-version", Error, Schema, "`version` is missing or is not one of the Fuzzfile versions `v1` and `v4`"),
    LegacyVersion => ("FZ003", "legacy-version", Info, Schema, "The file uses the legacy `v1` syntax; new workflows should use `v4`"),
    UnknownKey => ("FZ010", "unknown-key", Error, Schema, "A key that Fuzzball does not accept at this place and version"),
    InvalidValue => ("FZ011", "invalid-value", Error, Schema, "A value of the wrong type, or one that breaks its grammar (size, duration, URI, name, enum)"),
    MissingField => ("FZ012", "missing-field", Error, Schema, "A required key is absent"),
    DuplicateKey => ("FZ013", "duplicate-key", Error, Schema, "The same key appears twice in one mapping"),
    DeprecatedKey => ("FZ014", "deprecated-key", Warning, Schema, "A key that Fuzzball still accepts but has replaced or stopped honouring"),
    UnknownReference => ("FZ020", "unknown-reference", Error, Semantic, "A reference to a job, service, volume or file that the Fuzzfile does not define"),
    DependencyCycle => ("FZ021", "dependency-cycle", Error, Semantic, "Jobs and services that depend on each other in a cycle, so the workflow cannot start"),
    DuplicateName => ("FZ022", "duplicate-name", Error, Semantic, "A job and a service with the same name"),
    CommandAndScript => ("FZ030", "command-and-script", Warning, Schema, "A job or service sets both `command` and `script`"),
    NoCommand => ("FZ031", "no-command", Error, Schema, "A job or service sets neither `command` nor `script`"),
    PolicyRetryIgnored => ("FZ032", "policy-retry-ignored", Warning, Schema, "`policy.retry` is accepted by Fuzzball and ignored"),
}

impl Rule {
    pub fn from_name(name: &str) -> Option<Rule> {
        Rule::ALL
            .iter()
            .copied()
            .find(|r| r.name() == name || r.code().eq_ignore_ascii_case(name))
    }
}

impl Serialize for Rule {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn names_and_codes_are_unique_and_well_formed() {
        let mut names = HashSet::new();
        let mut codes = HashSet::new();
        for r in Rule::ALL {
            assert!(names.insert(r.name()), "duplicate name {}", r.name());
            assert!(codes.insert(r.code()), "duplicate code {}", r.code());
            assert!(
                r.name()
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b == b'-'),
                "{} not kebab-case",
                r.name()
            );
            assert!(
                r.code().starts_with("FZ") && r.code().len() == 5,
                "{}",
                r.code()
            );
            assert_eq!(Rule::from_name(r.name()), Some(*r));
            assert_eq!(Rule::from_name(r.code()), Some(*r));
        }
    }
}
