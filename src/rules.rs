//! The rules bankwise reports under, with ids that never change (code scanning tracks alerts
//! by them), and the two ways a user narrows them: `--select`/`--ignore` and suppression
//! comments (`// NOLINT(bankwise-BW001)`). Every output and `fix` decide through here.
use crate::parse::{AccessKind, Severity, Suppression};

/// A kind of finding, with an id that never changes (code scanning tracks alerts by it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    ConflictOnLoad,
    ConflictOnStore,
    ConflictOnAtomic,
    Escape,
    UnknownBlock,
    /// A diagnostic of the front end or the analysis: a syntax error, launches that disagree,
    /// an unknown constant.
    AnalysisDiagnostic,
    /// A `NOLINT` comment that silenced nothing (reported only when selected).
    UnusedSuppression,
}

impl Rule {
    /// Every rule, in id order.
    pub const ALL: [Rule; 7] = [
        Rule::ConflictOnLoad,
        Rule::ConflictOnStore,
        Rule::ConflictOnAtomic,
        Rule::Escape,
        Rule::UnknownBlock,
        Rule::AnalysisDiagnostic,
        Rule::UnusedSuppression,
    ];

    pub const fn id(self) -> &'static str {
        match self {
            Rule::ConflictOnLoad => "BW001",
            Rule::ConflictOnStore => "BW002",
            Rule::ConflictOnAtomic => "BW003",
            Rule::Escape => "BW004",
            Rule::UnknownBlock => "BW005",
            Rule::AnalysisDiagnostic => "BW006",
            Rule::UnusedSuppression => "BW007",
        }
    }

    pub const fn name(self) -> &'static str {
        match self {
            Rule::ConflictOnLoad => "bank-conflict-load",
            Rule::ConflictOnStore => "bank-conflict-store",
            Rule::ConflictOnAtomic => "bank-conflict-atomic",
            Rule::Escape => "array-escapes-analysis",
            Rule::UnknownBlock => "block-shape-unknown",
            Rule::AnalysisDiagnostic => "analysis-diagnostic",
            Rule::UnusedSuppression => "unused-suppression",
        }
    }

    pub const fn summary(self) -> &'static str {
        match self {
            Rule::ConflictOnLoad => "Shared-memory load with bank conflicts: the warp's request takes more wavefronts than it must.",
            Rule::ConflictOnStore => "Shared-memory store with bank conflicts: the warp's request takes more wavefronts than it must.",
            Rule::ConflictOnAtomic => "Shared-memory atomic with bank conflicts: the warp's request takes more wavefronts than it must.",
            Rule::Escape => "A shared array escapes analysis (its address goes out of sight): it is left unanalysed there and never rewritten.",
            Rule::UnknownBlock => "The block shape of a kernel is unknown: its accesses are analysed under an assumed shape, which the finding names, and fixes that rest on it are unsafe; pass --block or set it in bankwise.toml.",
            Rule::AnalysisDiagnostic => "Something the analysis could not follow: a syntax error, launches that disagree, an unknown constant.",
            Rule::UnusedSuppression => "A NOLINT comment naming bankwise that silences no finding.",
        }
    }

    /// The README section that explains it (the project has no public URL to link to).
    pub const fn section(self) -> &'static str {
        match self {
            Rule::UnknownBlock => "Configuration: `bankwise.toml`",
            _ => "`bankwise check`",
        }
    }

    /// Its level in every output; a diagnostic (BW006) may be a note instead.
    pub const fn default_severity(self) -> Severity {
        Severity::Warning
    }

    /// Whether a run reports it unless told otherwise (`--select`).
    pub const fn on_by_default(self) -> bool {
        !matches!(self, Rule::UnusedSuppression)
    }

    /// The rules a `--select`/`--ignore` entry names: `ALL`, an id (`BW001`), an id prefix
    /// (`BW00`), or a name (`bank-conflict-load`).
    pub fn selected_by(selector: &str) -> Result<Vec<Rule>, String> {
        let selector = selector.trim();
        let rules: Vec<Rule> = Rule::ALL
            .into_iter()
            .filter(|rule| {
                selector.eq_ignore_ascii_case("ALL")
                    || rule.name() == selector
                    || (!selector.is_empty()
                        && rule.id().starts_with(&selector.to_ascii_uppercase()))
            })
            .collect();
        if rules.is_empty() {
            let known: Vec<String> = Rule::ALL
                .iter()
                .map(|r| format!("{} ({})", r.id(), r.name()))
                .collect();
            return Err(format!(
                "`{selector}` names no rule; the rules are ALL, {}",
                known.join(", ")
            ));
        }
        Ok(rules)
    }

    /// Whether a suppression comment's rule list (as written after `bankwise-`) names it.
    fn named_by(self, written: &str) -> bool {
        written.eq_ignore_ascii_case(self.id()) || written == self.name()
    }

    pub fn of_access(kind: AccessKind) -> Rule {
        match kind {
            AccessKind::Load => Rule::ConflictOnLoad,
            AccessKind::Store => Rule::ConflictOnStore,
            AccessKind::Atomic => Rule::ConflictOnAtomic,
        }
    }
}

/// The first suppression that silences `rule` on `line`.
pub fn silencing(suppressions: &[Suppression], line: usize, rule: Rule) -> Option<&Suppression> {
    suppressions.iter().find(|s| {
        s.covers(line) && (s.rules.is_empty() || s.rules.iter().any(|w| rule.named_by(w)))
    })
}

/// The rules a run reports: the defaults, or `--select`'s, less `--ignore`'s.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    enabled: Vec<Rule>,
}

impl Default for Selection {
    fn default() -> Self {
        Selection {
            enabled: Rule::ALL
                .into_iter()
                .filter(|r| r.on_by_default())
                .collect(),
        }
    }
}

impl Selection {
    /// From the command line's lists (each entry may hold several, comma-separated).
    pub fn new(select: &[String], ignore: &[String]) -> Result<Self, String> {
        let entries = |list: &[String]| -> Vec<String> {
            list.iter()
                .flat_map(|l| l.split(','))
                .map(str::trim)
                .filter(|e| !e.is_empty())
                .map(str::to_string)
                .collect()
        };
        let mut enabled = if select.is_empty() {
            Selection::default().enabled
        } else {
            let mut rules = Vec::new();
            for entry in entries(select) {
                rules.extend(Rule::selected_by(&entry)?);
            }
            rules
        };
        for entry in entries(ignore) {
            let ignored = Rule::selected_by(&entry)?;
            enabled.retain(|r| !ignored.contains(r));
        }
        enabled.sort_by_key(|r| r.id());
        enabled.dedup();
        Ok(Selection { enabled })
    }

    pub fn enables(&self, rule: Rule) -> bool {
        self.enabled.contains(&rule)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_name_rules_by_id_prefix_and_name() {
        assert_eq!(Rule::selected_by("BW001"), Ok(vec![Rule::ConflictOnLoad]));
        assert_eq!(Rule::selected_by("bw00").map(|r| r.len()), Ok(7));
        assert_eq!(
            Rule::selected_by("array-escapes-analysis"),
            Ok(vec![Rule::Escape])
        );
        assert!(Rule::selected_by("E501").is_err());
        let selection = Selection::new(&["BW00".into()], &["BW004,BW005".into()]).unwrap();
        assert!(selection.enables(Rule::ConflictOnLoad));
        assert!(!selection.enables(Rule::Escape));
        assert!(selection.enables(Rule::UnusedSuppression));
        assert!(!Selection::default().enables(Rule::UnusedSuppression));
    }

    #[test]
    fn a_suppression_names_rules_by_id_or_name() {
        let at = crate::parse::Location { line: 3, col: 1 };
        let some = Suppression {
            at,
            first_line: 3,
            last_line: 3,
            rules: vec!["bank-conflict-store".into(), "BW004".into()],
        };
        let all = Suppression {
            rules: Vec::new(),
            ..some.clone()
        };
        let list = [some];
        assert!(silencing(&list, 3, Rule::ConflictOnStore).is_some());
        assert!(silencing(&list, 3, Rule::Escape).is_some());
        assert!(silencing(&list, 3, Rule::ConflictOnLoad).is_none());
        assert!(silencing(&list, 4, Rule::ConflictOnStore).is_none());
        assert!(silencing(&[all], 3, Rule::ConflictOnLoad).is_some());
    }
}
