//! `bankwise solve`: the solvers on raw warp address sets.
use super::{print_output, Format, EXIT_INPUT_ERROR};
use bankwise::solve::raw;
use clap::ValueEnum;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct SolveArgs {
    /// One warp request's word addresses, comma-separated; repeat for more requests.
    #[arg(long = "addresses", value_name = "A,B,...", required = true)]
    addresses: Vec<String>,
    /// Number of banks (a power of two); 4-byte words.
    #[arg(long, default_value_t = 32)]
    banks: u32,
    /// Address bits (default: what the largest address needs).
    #[arg(long)]
    address_bits: Option<u32>,
    #[arg(long, value_enum)]
    method: SolveMethod,
    /// Combine pairs of address bits with XOR (bit-vector XOR for `exhaustive`, XOR-linear
    /// maps for `exact`).
    #[arg(long)]
    xor: bool,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

#[derive(Clone, Copy, ValueEnum)]
enum SolveMethod {
    /// Every bit-vector permutation, or with --xor the pruned bit-vector XOR search.
    Exhaustive,
    /// The Givargis heuristic.
    Gh,
    /// The Minimum Imbalance Heuristic.
    Mih,
    /// The best bitwise permutation, or with --xor the best XOR-linear map.
    Exact,
}

pub fn run(args: SolveArgs) -> ExitCode {
    let sets: Result<Vec<Vec<i64>>, String> = args
        .addresses
        .iter()
        .map(|list| {
            list.split(',')
                .map(|a| {
                    a.trim().parse::<i64>().map_err(|_| {
                        format!("--addresses {list}: `{}` is not an address", a.trim())
                    })
                })
                .collect()
        })
        .collect();
    let method = match args.method {
        SolveMethod::Exhaustive => raw::Method::Exhaustive,
        SolveMethod::Gh => raw::Method::Givargis,
        SolveMethod::Mih => raw::Method::Mih,
        SolveMethod::Exact => raw::Method::Exact,
    };
    let solution = sets.and_then(|sets| {
        raw::solve_addresses(&sets, args.banks, args.address_bits, method, args.xor)
    });
    let solution = match solution {
        Ok(solution) => solution,
        Err(message) => {
            bankwise::say!("bankwise: error: {message}");
            return ExitCode::from(EXIT_INPUT_ERROR);
        }
    };
    let output = match args.format {
        Format::Text => Ok(solution.to_text()),
        Format::Json => serde_json::to_string_pretty(&solution.report()).map(|j| j + "\n"),
    };
    print_output(output)
}
