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

    /// Its page in the user guide (`docs/guide/src/rules/BW001.md`), as `bankwise rule`
    /// prints it and SARIF's `help` carries it: what it finds, an example before and after,
    /// and how to select or silence it.
    pub fn page(self) -> String {
        let default = if self.on_by_default() {
            "Reported by default."
        } else {
            "Reported only when selected (`--select`, or `select` in `bankwise.toml`)."
        };
        format!(
            "# {id} {name}\n\n{summary}\n\n## What it finds\n\n{full}\n\n## Example\n\n{help}\n\n\
             ## Selecting and silencing\n\n{default} `--select {id}` reports only it and \
             `--ignore {id}` leaves it out (`--ignore {name}` too), on the command line or in \
             `bankwise.toml`'s `[lint]`; `// NOLINT(bankwise-{id})` on a line silences it there \
             (see [Rules and suppression](../rules.md)).\n",
            id = self.id(),
            name = self.name(),
            summary = self.summary(),
            full = self.full_description(),
            help = self.help_markdown(),
        )
    }

    /// What the rule finds and what to do about it, in a paragraph.
    pub const fn full_description(self) -> &'static str {
        match self {
            Rule::ConflictOnLoad | Rule::ConflictOnStore | Rule::ConflictOnAtomic => {
                "Shared memory has 32 banks of 4 bytes; when lanes of one warp touch different \
                 words in the same bank, the hardware serves them one after the other. The \
                 finding gives the conflict degree, two lanes that collide, and the excess \
                 wavefronts per block as Nsight Compute counts them \
                 (l1tex__data_bank_conflicts_pipe_lsu_mem_shared_*). `bankwise fix` rewrites \
                 the array through a proven bijective map (padding or an XOR swizzle) when \
                 every access of it is analysed; its fix rides on the first such result."
            }
            Rule::Escape => {
                "A pointer to the array leaves what the analysis follows (a cast to another \
                 type, a call to a function this file does not define, a store to memory, \
                 inline assembly, an element passed to a function-like macro whose body \
                 takes its address or casts it, such as `FETCH_FLOAT4(Bs[r][c])`). Accesses \
                 through it are not simulated, and `bankwise fix` never rewrites the array, \
                 since it could not prove that every access moves with the map."
            }
            Rule::UnknownBlock => {
                "No launch, `__launch_bounds__`, `--block` or `bankwise.toml` gives the \
                 kernel's block shape, so its accesses are analysed under the shape the code \
                 suggests, which the message names. Conflicts found under it are real for \
                 that shape only, and fixes resting on it are unsafe (applied only with \
                 --unsafe-fixes)."
            }
            Rule::AnalysisDiagnostic => {
                "Something the front end or the analysis could not follow or found suspect: \
                 a syntax error, launches that disagree on a block shape, an unknown \
                 constant, a shift by 32 or more, a header not found. The message says what \
                 and, where there is one, the flag that resolves it."
            }
            Rule::UnusedSuppression => {
                "A NOLINT, NOLINTNEXTLINE or NOLINTBEGIN comment that names bankwise but \
                 silences no finding: the conflict it was written for is gone, or it sits on \
                 the wrong line. Reported only when selected (--select BW007)."
            }
        }
    }

    /// Help in Markdown, with a small example of code that triggers the rule and of code
    /// that does not.
    pub const fn help_markdown(self) -> &'static str {
        match self {
            Rule::ConflictOnLoad | Rule::ConflictOnStore | Rule::ConflictOnAtomic => {
                "Lanes that touch different words of one bank are served one after the \
                 other.\n\nBefore (32-way: a column of a 32x32 tile lies in one bank):\n\n\
                 ```cuda\n__shared__ float tile[32][32];\n\
                 out[i] = tile[threadIdx.x][k];\n```\n\n\
                 After `bankwise fix` (an XOR swizzle; a pad column `[32][33]` also works):\n\n\
                 ```cuda\n__shared__ float tile[32][32];\n\
                 out[i] = tile[threadIdx.x][k ^ threadIdx.x];\n```\n\n\
                 Silence one finding with `// NOLINT(bankwise-BW001)` on the access."
            }
            Rule::Escape => {
                "The array's address goes out of sight, so it is never rewritten.\n\n\
                 Before:\n\n```cuda\n__shared__ float buf[256];\n\
                 consume((void *)buf);   // a function this file does not define\n```\n\n\
                 After (define the function in the file, or pass an element index):\n\n\
                 ```cuda\n__device__ void consume(float *p) { /* ... */ }\n\
                 consume(buf);\n```"
            }
            Rule::UnknownBlock => {
                "The kernel's block shape is assumed.\n\nBefore (launched elsewhere, e.g. \
                 from a library):\n\n```cuda\n__global__ void k(float *o) { /* ... */ }\n\
                 ```\n\nAfter (any of these):\n\n```cuda\n\
                 __global__ void __launch_bounds__(256) k(float *o) { /* ... */ }\n\
                 // bankwise: block=32x8\n```\n\nor `--block k=32x8`, or `[block] k = [32, \
                 8]` in bankwise.toml."
            }
            Rule::AnalysisDiagnostic => {
                "Read the message: it names what could not be followed.\n\n\
                 Before:\n\n```cuda\n__shared__ float t[TILE][TILE];   // TILE comes \
                 from the build\n```\n\nAfter: pass the build's definitions, `-D TILE=32`, \
                 or `--compile-commands build/compile_commands.json`."
            }
            Rule::UnusedSuppression => {
                "Remove the comment, or move it to the line of the finding.\n\n\
                 Before:\n\n```cuda\nout[t] = s[t];   // NOLINT(bankwise-BW001): no \
                 conflict here any more\n```\n\nAfter:\n\n```cuda\nout[t] = s[t];\n```"
            }
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
    /// The rules `--ignore` left out, which a file's own `select` does not bring back.
    ignored: Vec<Rule>,
}

impl Default for Selection {
    fn default() -> Self {
        Selection {
            enabled: Rule::ALL
                .into_iter()
                .filter(|r| r.on_by_default())
                .collect(),
            ignored: Vec::new(),
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
        let mut ignored = Vec::new();
        for entry in entries(ignore) {
            ignored.extend(Rule::selected_by(&entry)?);
        }
        enabled.retain(|r| !ignored.contains(r));
        enabled.sort_by_key(|r| r.id());
        enabled.dedup();
        Ok(Selection { enabled, ignored })
    }

    pub fn enables(&self, rule: Rule) -> bool {
        self.enabled.contains(&rule)
    }

    /// This run's selection for one file under its `bankwise.toml`'s `[lint]`: the file's
    /// `select` stands in for the default unless the command line selected, and what the
    /// file and its `per-file-ignores` leave out is left out.
    /// This run's selection for one file under its `bankwise.toml`'s `[lint]`, as ruff
    /// layers them: the file's `select` and `ignore` apply unless the command line selected
    /// (`--select` wins over the file, as a later selection does), and what the file's
    /// `per-file-ignores` leave out is left out whatever the command line says.
    pub fn for_file(&self, policy: &FilePolicy, command_line_selects: bool) -> Selection {
        let mut enabled = match (&policy.select, command_line_selects) {
            (Some(select), false) => select.enabled.clone(),
            _ => self.enabled.clone(),
        };
        let left_out = |r: &Rule| {
            self.ignored.contains(r)
                || (!command_line_selects && policy.ignore.contains(r))
                || policy.per_file_ignore.contains(r)
        };
        enabled.retain(|r| !left_out(r));
        Selection {
            enabled,
            ignored: self.ignored.clone(),
        }
    }
}

/// What a file's `bankwise.toml` says of the rules reported for it (`[lint]`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FilePolicy {
    /// `select`: the rules reported when the command line selects none.
    pub select: Option<Selection>,
    /// `ignore`.
    pub ignore: Vec<Rule>,
    /// The `per-file-ignores` whose glob matches the file.
    pub per_file_ignore: Vec<Rule>,
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
