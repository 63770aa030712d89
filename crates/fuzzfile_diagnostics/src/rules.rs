//! The rule registry: every diagnostic the toolchain emits belongs to exactly one rule with a
//! stable kebab-case name, a stable code and a default severity. Each rule declares these
//! beside its documentation and its check in `fuzzfile_check::rules`; the `Rule` table
//! (`rules_generated.rs`) is generated from those declarations, and docs/rules/ from the
//! documentation.

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
    /// GPU launches, NCCL settings and cluster facts.
    Gpu,
    /// The checker's own settings (suppressions).
    Meta,
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

// The table of every rule (variant => code, name, default severity, category, summary) is
// generated from each rule's `declare_rule!` block in `fuzzfile_check::rules`; the model
// builder emits these values too, which is why the enum lives here.
include!("rules_generated.rs");

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
