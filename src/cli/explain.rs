//! `bankwise explain`: the teaching view of one access.
use super::{write_file, write_stdout, AnalysisArgs, EXIT_INPUT_ERROR};
use bankwise::explain::{explain_file, parse_iteration, Query};
use bankwise::pipeline::FixOptions;
use bankwise::settings::Settings;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct ExplainArgs {
    /// The `.cu`/`.cuh` file.
    file: PathBuf,
    /// The line of the access (1-based).
    #[arg(long)]
    line: usize,
    /// The column of the access, when the line has several (1-based, as `check` prints).
    #[arg(long)]
    col: Option<usize>,
    /// The warp to show (default: the one with the most excess wavefronts).
    #[arg(long)]
    warp: Option<u32>,
    /// The loop iteration to show, as loop values (default: the first with the worst excess).
    #[arg(long, value_name = "NAME=VALUE[,NAME=VALUE]")]
    iteration: Option<String>,
    /// Also draw the bank maps as an SVG heat map into OUT (`-`: the SVG goes to stdout,
    /// and the text to stderr).
    #[arg(long, value_name = "OUT")]
    svg: Option<PathBuf>,
    #[command(flatten)]
    analysis: AnalysisArgs,
}

pub fn run(args: ExplainArgs) -> ExitCode {
    match explain(&args) {
        Ok(text) if write_stdout(&text) => ExitCode::SUCCESS,
        Ok(_) => ExitCode::from(EXIT_INPUT_ERROR),
        Err(message) => {
            bankwise::say!("bankwise: error: {message}");
            ExitCode::from(EXIT_INPUT_ERROR)
        }
    }
}

/// The text to print, the SVG written.
fn explain(args: &ExplainArgs) -> Result<String, String> {
    let options = FixOptions {
        analysis: args.analysis.options(Settings::default())?,
        ..FixOptions::default()
    };
    let query = Query {
        line: args.line,
        col: args.col,
        warp: args.warp,
        iteration: match &args.iteration {
            Some(text) => parse_iteration(text)?,
            None => Vec::new(),
        },
    };
    if !args.file.is_file() {
        return Err(format!("{}: no such file", args.file.display()));
    }
    let explanation = explain_file(&args.file, &options, &query).map_err(|e| e.to_string())?;
    if args.svg.as_deref() == Some(std::path::Path::new("-")) {
        // stdout holds one document: the SVG; the text goes beside it.
        let _ = std::io::Write::write_all(&mut std::io::stderr(), explanation.text().as_bytes());
        return Ok(explanation.svg());
    }
    if let Some(out) = &args.svg {
        write_file(out, explanation.svg().as_bytes(), None)
            .map_err(|message| format!("{}: {message}", out.display()))?;
        bankwise::say!("bankwise: wrote {}", out.display());
    }
    Ok(explanation.text())
}
