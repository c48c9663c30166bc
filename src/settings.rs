//! Settings as plain data, and `bankwise.toml`: block shapes, the bank model, the fix strategy
//! and macro definitions for the files beneath it. The driver (the pipeline stage) merges
//! them: the command line over the file, the file over the defaults.
//!
//! The file: The nearest file wins: beside the input, then each parent directory
//! up to the repository root (a directory holding `.git`) or the filesystem root, as
//! rustfmt.toml and .clang-tidy are found. The command line wins over the file, the file over
//! the defaults.
use crate::block::ConfigBlocks;
use crate::parse::parse_block_shape;
use crate::rules::{FilePolicy, Rule, Selection};
use crate::solve::family::{Family, AUTO};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub const CONFIG_FILE: &str = "bankwise.toml";

/// The settings that the command line and a `bankwise.toml` can both give; `None` where one
/// of them says nothing.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Settings {
    pub banks: Option<u32>,
    pub bank_width: Option<u32>,
    pub strategy: Option<StrategySetting>,
    pub smem_budget: Option<u64>,
    pub max_alu_per_wavefront: Option<u64>,
    pub unsafe_fixes: Option<bool>,
}

impl Settings {
    /// Each setting from `self`, else from `lower`.
    pub fn over(&self, lower: &Settings) -> Settings {
        Settings {
            banks: self.banks.or(lower.banks),
            bank_width: self.bank_width.or(lower.bank_width),
            strategy: self.strategy.or(lower.strategy),
            smem_budget: self.smem_budget.or(lower.smem_budget),
            max_alu_per_wavefront: self.max_alu_per_wavefront.or(lower.max_alu_per_wavefront),
            unsafe_fixes: self.unsafe_fixes.or(lower.unsafe_fixes),
        }
    }
}

/// A `--strategy` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StrategySetting {
    /// The solvers choose per array (`auto`).
    Auto,
    /// One family for every array.
    Only(Family),
}

impl StrategySetting {
    /// `auto` or a family's name.
    pub fn parse(name: &str) -> Option<StrategySetting> {
        if name == AUTO {
            return Some(StrategySetting::Auto);
        }
        Family::from_name(name)
            .filter(|f| f.selectable())
            .map(StrategySetting::Only)
    }

    /// The family every array must use, if one is forced.
    pub fn forced(self) -> Option<Family> {
        match self {
            StrategySetting::Auto => None,
            StrategySetting::Only(family) => Some(family),
        }
    }
}

/// Why a `bankwise.toml` cannot be used; each names the file, and the line or the key.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{}: cannot read: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// Not TOML, an unknown key or a value of the wrong type.
    #[error("{}{}: {message}", path.display(), line.map_or(String::new(), |l| format!(":{l}")))]
    Syntax {
        path: PathBuf,
        line: Option<usize>,
        message: String,
    },
    /// A key with a value bankwise does not take (`[bank] banks = 12`).
    #[error("{}: {setting}: {problem}", path.display())]
    Value {
        path: PathBuf,
        setting: String,
        problem: String,
    },
}

/// One `bankwise.toml`, read and checked.
#[derive(Debug, Default, Clone)]
pub struct Config {
    /// Where it was found; `None` when there is no file (all defaults).
    pub path: Option<PathBuf>,
    pub blocks: ConfigBlocks,
    pub settings: Settings,
    /// `NAME=VALUE` or `NAME`, as `-D` takes them; a `-D` of the same name wins.
    pub defines: Vec<String>,
    /// Where headers are looked for after the command line's `-I`, relative to the file.
    pub include_dirs: Vec<PathBuf>,
    /// `[lint]`: the rules reported for the files beneath it.
    pub lint: LintConfig,
}

/// `[lint]` of a `bankwise.toml`, checked: `select` and `ignore` as `--select`/`--ignore`
/// take them, and `per-file-ignores` as globs relative to the file's directory.
#[derive(Debug, Clone, Default)]
pub struct LintConfig {
    pub select: Option<Selection>,
    pub ignore: Vec<Rule>,
    /// The directory the globs are relative to.
    dir: PathBuf,
    per_file_ignores: Vec<(globset::GlobMatcher, Vec<Rule>)>,
}

impl LintConfig {
    /// The policy for the file at `path`.
    pub fn policy_for(&self, path: &Path) -> FilePolicy {
        let mut per_file_ignore = Vec::new();
        if !self.per_file_ignores.is_empty() {
            let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
            let dir = std::path::absolute(&self.dir).unwrap_or_else(|_| self.dir.clone());
            let relative = absolute.strip_prefix(&dir).unwrap_or(&absolute);
            for (glob, rules) in &self.per_file_ignores {
                if glob.is_match(relative) {
                    per_file_ignore.extend(rules.iter().copied());
                }
            }
        }
        FilePolicy {
            select: self.select.clone(),
            ignore: self.ignore.clone(),
            per_file_ignore,
        }
    }
}

/// The file as written. Unknown keys are errors, so that a misspelt key is never ignored.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct FileSyntax {
    #[serde(default)]
    block: HashMap<String, ShapeValue>,
    #[serde(default)]
    bank: BankSection,
    #[serde(default)]
    fix: FixSection,
    #[serde(default)]
    defines: Vec<String>,
    #[serde(default)]
    include_dirs: Vec<PathBuf>,
    #[serde(default)]
    lint: LintSection,
}

#[derive(serde::Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct LintSection {
    select: Option<Vec<String>>,
    #[serde(default)]
    ignore: Vec<String>,
    #[serde(default, rename = "per-file-ignores")]
    per_file_ignores: std::collections::BTreeMap<String, Vec<String>>,
}

/// A block shape as a `bankwise.toml` writes it.
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum ShapeValue {
    List(Vec<u32>),
    Text(String),
}

#[derive(serde::Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct BankSection {
    banks: Option<u32>,
    bank_width: Option<u32>,
}

#[derive(serde::Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct FixSection {
    strategy: Option<String>,
    smem_budget: Option<u64>,
    max_alu_per_wavefront: Option<u64>,
    unsafe_fixes: Option<bool>,
}

impl Config {
    /// The configuration of `input`: the file `explicit` (`--config PATH`) when given, else
    /// the nearest `bankwise.toml` above `input`.
    pub fn for_input(input: &Path, explicit: Option<&Path>) -> Result<Config, ConfigError> {
        match explicit {
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
                    path: path.to_path_buf(),
                    source,
                })?;
                Config::parse(&text, path)
            }
            None => Config::find(input),
        }
    }

    /// The nearest `bankwise.toml` above `input` (a file), or the defaults when there is none.
    pub fn find(input: &Path) -> Result<Config, ConfigError> {
        let dir = match input.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir,
            _ => Path::new("."),
        };
        // Absolute, so that the search goes on above the current directory.
        let start = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        let cwd = std::env::current_dir().and_then(std::fs::canonicalize).ok();
        for dir in start.ancestors() {
            let candidate = dir.join(CONFIG_FILE);
            if candidate.is_file() {
                // Shown relative to the current directory when it lies beneath it.
                let shown = cwd
                    .as_deref()
                    .and_then(|cwd| candidate.strip_prefix(cwd).ok())
                    .map_or_else(|| candidate.clone(), Path::to_path_buf);
                let text =
                    std::fs::read_to_string(&candidate).map_err(|source| ConfigError::Read {
                        path: shown.clone(),
                        source,
                    })?;
                return Config::parse(&text, &shown);
            }
            if dir.join(".git").exists() {
                break;
            }
        }
        Ok(Config::default())
    }

    /// Reads the text of a `bankwise.toml`; `path` names it in errors and in block sources.
    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let value = |setting: String, problem: &str| ConfigError::Value {
            path: path.to_path_buf(),
            setting,
            problem: problem.to_string(),
        };
        let file: FileSyntax = toml::from_str(text).map_err(|err| ConfigError::Syntax {
            path: path.to_path_buf(),
            line: err
                .span()
                .map(|span| text[..span.start.min(text.len())].matches('\n').count() + 1),
            message: err.message().trim_end().to_string(),
        })?;
        if let Some(banks) = file.bank.banks.filter(|b| ![16, 32].contains(b)) {
            return Err(value(format!("[bank] banks = {banks}"), "must be 16 or 32"));
        }
        if let Some(width) = file.bank.bank_width.filter(|w| ![4, 8].contains(w)) {
            return Err(value(
                format!("[bank] bank_width = {width}"),
                "must be 4 or 8",
            ));
        }
        let strategy = match file.fix.strategy.as_deref() {
            None => None,
            Some(name) => Some(StrategySetting::parse(name).ok_or_else(|| {
                value(
                    format!("[fix] strategy = \"{name}\""),
                    &format!(
                        "must be one of {}",
                        Family::strategy_names().collect::<Vec<_>>().join(", ")
                    ),
                )
            })?),
        };
        if let Some(bad) = file
            .defines
            .iter()
            .find(|d| d.split('=').next().unwrap_or("").trim().is_empty())
        {
            return Err(value(format!("defines: \"{bad}\""), "the name is empty"));
        }
        let mut blocks = ConfigBlocks {
            path: Some(path.to_path_buf()),
            ..ConfigBlocks::default()
        };
        for (kernel, shape) in file.block {
            let text = match shape {
                ShapeValue::List(dims) => dims
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join("x"),
                ShapeValue::Text(text) => text,
            };
            let shape =
                parse_block_shape(&text).map_err(|e| value(format!("[block] {kernel}"), &e))?;
            if kernel == "*" {
                blocks.all = Some(shape);
            } else {
                blocks.per_kernel.insert(kernel, shape);
            }
        }
        let beside = path.parent().unwrap_or(Path::new(""));
        let rules = |key: String, list: &[String]| -> Result<Vec<Rule>, ConfigError> {
            let mut rules = Vec::new();
            for entry in list {
                rules.extend(Rule::selected_by(entry).map_err(|e| value(key.clone(), &e))?);
            }
            Ok(rules)
        };
        let mut lint = LintConfig {
            select: match &file.lint.select {
                Some(select) => Some(
                    Selection::new(select, &[]).map_err(|e| value("[lint] select".into(), &e))?,
                ),
                None => None,
            },
            ignore: rules("[lint] ignore".into(), &file.lint.ignore)?,
            dir: beside.to_path_buf(),
            per_file_ignores: Vec::new(),
        };
        for (pattern, list) in &file.lint.per_file_ignores {
            let key = format!("[lint.per-file-ignores] \"{pattern}\"");
            let glob = globset::GlobBuilder::new(pattern)
                .literal_separator(false)
                .build()
                .map_err(|e| value(key.clone(), &e.kind().to_string()))?;
            lint.per_file_ignores
                .push((glob.compile_matcher(), rules(key, list)?));
        }
        Ok(Config {
            lint,
            path: Some(path.to_path_buf()),
            include_dirs: file.include_dirs.iter().map(|d| beside.join(d)).collect(),
            blocks,
            settings: Settings {
                banks: file.bank.banks,
                bank_width: file.bank.bank_width,
                strategy,
                smem_budget: file.fix.smem_budget,
                max_alu_per_wavefront: file.fix.max_alu_per_wavefront,
                unsafe_fixes: file.fix.unsafe_fixes,
            },
            defines: file.defines,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Config, String> {
        Config::parse(text, Path::new("dir/bankwise.toml")).map_err(|e| e.to_string())
    }

    #[test]
    fn every_key() {
        let config = parse(
            "defines = [\"TILE=32\", \"FAST\"]\n\
             [block]\ntiled = [32, 8, 1]\nother = \"16x16\"\n\"*\" = [128]\n\
             [bank]\nbanks = 16\nbank_width = 8\n\
             [fix]\nstrategy = \"padding\"\nsmem_budget = 8192\nmax_alu_per_wavefront = 4\nunsafe_fixes = true\n",
        )
        .unwrap();
        assert_eq!(config.blocks.per_kernel["tiled"], [32, 8, 1]);
        assert_eq!(config.blocks.per_kernel["other"], [16, 16, 1]);
        assert_eq!(config.blocks.all, Some([128, 1, 1]));
        assert_eq!(
            config.settings,
            Settings {
                banks: Some(16),
                bank_width: Some(8),
                strategy: Some(StrategySetting::Only(Family::Padding)),
                smem_budget: Some(8192),
                max_alu_per_wavefront: Some(4),
                unsafe_fixes: Some(true),
            }
        );
        assert_eq!(config.defines, ["TILE=32", "FAST"]);
        assert_eq!(parse("").unwrap().settings, Settings::default());
    }

    #[test]
    fn unknown_keys_and_bad_values_are_errors_naming_file_and_key() {
        for (text, expected) in [
            (
                "[bank]\nbankz = 16\n",
                "dir/bankwise.toml:2: unknown field `bankz`",
            ),
            (
                "colour = 1\n",
                "dir/bankwise.toml:1: unknown field `colour`",
            ),
            ("[fix]\nbudget = 1\n", "unknown field `budget`"),
            (
                "[bank]\nbanks = 12\n",
                "[bank] banks = 12: must be 16 or 32",
            ),
            (
                "[bank]\nbank_width = 2\n",
                "[bank] bank_width = 2: must be 4 or 8",
            ),
            ("[bank]\nbanks = -1\n", "dir/bankwise.toml:2: invalid value"),
            (
                "[fix]\nstrategy = \"fast\"\n",
                "[fix] strategy = \"fast\": must be one of auto, ",
            ),
            (
                "[fix]\nsmem_budget = \"lots\"\n",
                "invalid type: string \"lots\"",
            ),
            (
                "[fix]\nunsafe_fixes = 1\n",
                "invalid type: integer `1`, expected a boolean",
            ),
            ("defines = [\"=3\"]\n", "defines: \"=3\": the name is empty"),
            ("[block]\nk = [0]\n", "dir/bankwise.toml: [block] k:"),
            ("[block\n", "dir/bankwise.toml:1:"),
        ] {
            let err = parse(text).unwrap_err();
            assert!(err.contains(expected), "{text:?}: {err}");
            assert!(err.starts_with("dir/bankwise.toml"), "{text:?}: {err}");
        }
    }

    #[test]
    fn the_nearest_file_wins_and_the_search_stops_at_the_repository() {
        let root = tempfile::tempdir().unwrap();
        let repo = root.path().join("repo");
        let kernels = repo.join("src/kernels");
        std::fs::create_dir_all(&kernels).unwrap();
        std::fs::create_dir(repo.join(".git")).unwrap();
        let input = kernels.join("k.cu");
        std::fs::write(root.path().join(CONFIG_FILE), "[bank]\nbanks = 16\n").unwrap();
        assert_eq!(Config::find(&input).unwrap().path, None, "above .git");
        std::fs::write(repo.join(CONFIG_FILE), "[bank]\nbank_width = 8\n").unwrap();
        let found = Config::find(&input).unwrap();
        assert_eq!(found.settings.bank_width, Some(8));
        assert!(found.path.unwrap().ends_with("repo/bankwise.toml"));
        std::fs::write(kernels.join(CONFIG_FILE), "[fix]\nsmem_budget = 64\n").unwrap();
        let nearest = Config::find(&input).unwrap();
        // The nearest file is the whole configuration: files are not merged.
        assert_eq!(nearest.settings.smem_budget, Some(64));
        assert_eq!(nearest.settings.bank_width, None);
        std::fs::write(kernels.join(CONFIG_FILE), "[fix]\nbudget = 64\n").unwrap();
        let err = Config::find(&input).unwrap_err().to_string();
        assert!(
            err.contains("kernels/bankwise.toml:2: unknown field `budget`"),
            "{err}"
        );
    }
}
