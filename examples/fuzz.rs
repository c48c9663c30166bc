//! The fuzzer of issue 18: random but plausible kernels, and mutations of the testdata files,
//! through `check` and `fix` in-process.
//!
//! ```text
//! cargo run --release --example fuzz -- --iterations 100000 --seed 1 [--threads 2] [--only N]
//! cargo run --release --example fuzz -- --replay target/fuzz/failure-1-42.cu
//! ```
//!
//! Input `i` of seed `s` is the same on any machine and thread count, so `--only i` replays
//! it. Each input must:
//! - not panic, in the analysis or in `fix`;
//! - finish within 10 s (a watchdog aborts the run past 60 s, naming the input);
//! - never make `fix` fail its own validation (an "internal error": its output re-parsed and
//!   re-analysed must map every access as planned);
//! - fix once: `fix` on `fix`'s output changes nothing;
//! - give the input back as it was: `fix` drops it while it validates and rebuilds it from
//!   the output, for the diff;
//! - hold in every configuration: inputs with preprocessor branches (`#ifdef CFG`,
//!   `#if __CUDA_ARCH__ >= 800`) are fixed again with each branch selected (`-D CFG`,
//!   `-D __CUDA_ARCH__=800`), and in the default configuration's output, every line the
//!   fuzzer marked (`// fuzz:N`: an access in a branch, an element bound to a reference or
//!   given to a constructor) that names an array the fix rewrote must have been rewritten
//!   too; else that configuration, or what the reference reaches, would use the old layout.
//!
//! A failing input is written to `target/fuzz/` and the run exits with status 1. Each
//! thread writes the input it is on to `target/fuzz/current-N.cu` first, so that a crash no
//! handler sees (a stack overflow) leaves its input behind.
use bankwise::block::ConfigBlocks;
use bankwise::pipeline::{fix_text, FixError, FixOptions};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

const SLOW: Duration = Duration::from_secs(10);
const HUNG: Duration = Duration::from_secs(60);

struct Args {
    iterations: u64,
    seed: u64,
    threads: usize,
    only: Option<u64>,
    /// `--replay FILE`: run the checks on that file's text (a kept failure, a case of one's
    /// own) and nothing else.
    replay: Option<PathBuf>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        iterations: 1000,
        seed: 1,
        threads: std::thread::available_parallelism().map_or(1, usize::from),
        only: None,
        replay: None,
    };
    let mut given = std::env::args().skip(1);
    while let Some(flag) = given.next() {
        let mut value = || {
            given
                .next()
                .and_then(|v| v.parse::<u64>().ok())
                .ok_or(format!("{flag} needs a number"))
        };
        match flag.as_str() {
            "--iterations" => args.iterations = value()?,
            "--seed" => args.seed = value()?,
            "--threads" => args.threads = value()?.max(1) as usize,
            "--only" => args.only = Some(value()?),
            "--replay" => {
                args.replay = Some(PathBuf::from(given.next().ok_or("--replay needs a file")?))
            }
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok(args)
}

fn main() -> std::process::ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(why) => {
            eprintln!("fuzz: {why}");
            return std::process::ExitCode::from(2);
        }
    };
    if let Some(file) = &args.replay {
        let text = match std::fs::read_to_string(file) {
            Ok(text) => text,
            Err(err) => {
                eprintln!("fuzz: {}: {err}", file.display());
                return std::process::ExitCode::from(2);
            }
        };
        return match run_one(&text) {
            Ok(()) => {
                println!("fuzz: {}: no failure", file.display());
                std::process::ExitCode::SUCCESS
            }
            Err(why) => {
                println!("fuzz: {}: {why}", file.display());
                std::process::ExitCode::from(1)
            }
        };
    }
    let out = PathBuf::from("target/fuzz");
    if let Err(err) = std::fs::create_dir_all(&out) {
        eprintln!("fuzz: {}: {err}", out.display());
        return std::process::ExitCode::from(2);
    }
    let corpus = testdata_texts(Path::new("testdata"));
    let indices: Vec<u64> = match args.only {
        Some(i) => vec![i],
        None => (0..args.iterations).collect(),
    };
    let started = Instant::now();
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    let done = AtomicU64::new(0);
    let finished = AtomicBool::new(false);
    // Per thread: the input it runs and when it started (ms since `started`; u64::MAX idle).
    let running: Vec<(AtomicU64, AtomicU64)> = (0..args.threads)
        .map(|_| (AtomicU64::new(0), AtomicU64::new(u64::MAX)))
        .collect();
    std::thread::scope(|scope| {
        scope.spawn(|| watchdog(&running, started, &finished, args.seed));
        let workers: Vec<_> = (0..args.threads)
            .map(|t| {
                let (next, failures, done, running, corpus, indices, out) =
                    (&next, &failures, &done, &running, &corpus, &indices, &out);
                std::thread::Builder::new()
                    .stack_size(64 << 20)
                    .spawn_scoped(scope, move || {
                        while let Some(&i) = indices.get(next.fetch_add(1, Ordering::Relaxed)) {
                            let text = input(args.seed, i, corpus);
                            let _ = std::fs::write(out.join(format!("current-{t}.cu")), &text);
                            running[t].0.store(i, Ordering::Relaxed);
                            let at = started.elapsed().as_millis() as u64;
                            running[t].1.store(at, Ordering::Relaxed);
                            if let Err(why) = run_one(&text) {
                                let path = out.join(format!("failure-{}-{i}.cu", args.seed));
                                let _ = std::fs::write(&path, &text);
                                if let Ok(mut list) = failures.lock() {
                                    list.push(format!("input {i}: {why} ({})", path.display()));
                                }
                            }
                            running[t].1.store(u64::MAX, Ordering::Relaxed);
                            done.fetch_add(1, Ordering::Relaxed);
                        }
                    })
                    .expect("a worker thread")
            })
            .collect();
        for worker in workers {
            let _ = worker.join();
        }
        finished.store(true, Ordering::Relaxed);
    });
    let failures = failures.into_inner().unwrap_or_default();
    let count = done.load(Ordering::Relaxed);
    println!(
        "fuzz: {count} inputs (seed {}) in {:.1} s: {} failures",
        args.seed,
        started.elapsed().as_secs_f64(),
        failures.len()
    );
    for failure in &failures {
        println!("  {failure}");
    }
    if failures.is_empty() {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::from(1)
    }
}

/// Aborts the run when an input has run longer than [`HUNG`], naming it.
fn watchdog(
    running: &[(AtomicU64, AtomicU64)],
    started: Instant,
    finished: &AtomicBool,
    seed: u64,
) {
    while !finished.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(500));
        let now = started.elapsed().as_millis() as u64;
        for (t, (input, since)) in running.iter().enumerate() {
            let since = since.load(Ordering::Relaxed);
            if since != u64::MAX && now.saturating_sub(since) > HUNG.as_millis() as u64 {
                eprintln!(
                    "fuzz: input {} (seed {seed}) has run for over {} s: see \
                     target/fuzz/current-{t}.cu",
                    input.load(Ordering::Relaxed),
                    HUNG.as_secs()
                );
                std::process::abort();
            }
        }
    }
}

/// `check` and `fix` on one input, with the checks of the module's documentation.
fn run_one(text: &str) -> Result<(), String> {
    let started = Instant::now();
    let outcome = std::panic::catch_unwind(|| fix_once(text));
    let result = match outcome {
        Ok(result) => result,
        Err(panic) => Err(format!(
            "panic: {}",
            panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default()
        )),
    };
    let elapsed = started.elapsed();
    if result.is_ok() && elapsed > SLOW {
        return Err(format!("took {:.1} s", elapsed.as_secs_f64()));
    }
    result
}

fn fix_once(text: &str) -> Result<(), String> {
    fix_in(text, &[])?;
    for (macro_name, define) in [("CFG", "CFG"), ("__CUDA_ARCH__", "__CUDA_ARCH__=800")] {
        if text.contains(macro_name) {
            fix_in(text, &[define.to_string()]).map_err(|why| format!("-D {define}: {why}"))?;
        }
    }
    Ok(())
}

/// The checks of the module's documentation in the configuration `defines` give.
fn fix_in(text: &str, defines: &[String]) -> Result<(), String> {
    let path = Path::new("fuzz.cu");
    let mut options = FixOptions {
        unsafe_fixes: true,
        ..FixOptions::default()
    };
    options.analysis.defines = defines.to_vec();
    let config = ConfigBlocks::default();
    let fixed = match fix_text(path, text, &options, &config) {
        Ok(fixed) => fixed,
        Err(FixError::Internal { message, .. }) => {
            return Err(format!("internal error: {message}"))
        }
        Err(_) => return Ok(()),
    };
    if fixed.original != text {
        return Err("fix gives back another input than it was given".into());
    }
    if !fixed.changed() {
        return Ok(());
    }
    every_marked_line_rewritten(text, fixed.output(), defines)?;
    match fix_text(path, fixed.output(), &options, &config) {
        Ok(again) if again.changed() => Err("fix changes its own output".into()),
        Ok(_) => Ok(()),
        Err(FixError::Internal { message, .. }) => {
            Err(format!("internal error on fix's output: {message}"))
        }
        Err(why) => Err(format!("fix's output is refused: {why}")),
    }
}

/// The oracle of every configuration: each line of `input` marked `// fuzz:N` that names an
/// array `output` rewrote (`A[`) is changed in `output`.
fn every_marked_line_rewritten(
    input: &str,
    output: &str,
    defines: &[String],
) -> Result<(), String> {
    let rewritten: Vec<&str> = identifiers_of_subscripts(input)
        .into_iter()
        .filter(|name| {
            let marker = format!("// bankwise: `{name}` ");
            // A padded declaration moves every element of every configuration with it: its
            // accesses keep their text.
            let padded = format!("{marker}is padded");
            let only_padded = output.matches(&marker).count() == output.matches(&padded).count();
            // Lines are matched to arrays by name: a name declared twice (a shadowed array,
            // another kernel's) says nothing of which array a line names.
            output.contains(&marker)
                && !only_padded
                && !input.contains(&marker)
                && !declared_twice_in_a_function(input, name)
        })
        .collect();
    if rewritten.is_empty() {
        return Ok(());
    }
    let output_lines: Vec<&str> = output.lines().collect();
    let input_lines: Vec<&str> = input.lines().collect();
    let blocks = top_level_blocks(&input_lines);
    let outside = outside_functions(&input_lines);
    // Where the parser gave up, braces and lines say nothing of the function.
    let broken: std::collections::HashSet<usize> = bankwise::parse::analyse_source(input, defines)
        .syntax_errors
        .iter()
        .filter_map(|at| blocks.get(at.line.saturating_sub(1)).copied())
        .collect();
    for (n, (line, outside)) in input_lines.iter().zip(outside).enumerate() {
        let Some(at) = line.find("// fuzz:") else {
            continue;
        };
        // A declaration keeps its line under most maps; a statement a mutation moved out
        // of every function, into a comment or a directive is no code.
        let code = code_of(line).trim_start();
        if outside
            || broken.contains(&blocks[n])
            || line.contains("__shared__")
            || code.is_empty()
            || code.starts_with('#')
        {
            continue;
        }
        let marker = &line[at..];
        // `&a[i]`, and `T *p = a[i]` on a row of `a`, make a pointer, which the rewrite maps
        // where it is used, not here.
        let makes_pointer = |name: &str| {
            let code = &line[..at];
            code.contains(&format!("&{name}["))
                || code
                    .split_once(&format!("= {name}["))
                    .is_some_and(|(target, _)| target.contains('*'))
        };
        let Some(name) = rewritten
            .iter()
            .find(|name| names_subscript(&line[..at], name) && !makes_pointer(name))
        else {
            continue;
        };
        // A function copied for the rewrite keeps its original beside the copy: one of
        // them changed is enough.
        let after: Vec<&&str> = output_lines
            .iter()
            .filter(|l| l.ends_with(marker))
            .collect();
        if after.iter().any(|l| **l != *line) {
            continue;
        }
        // Unchanged, the line is wrong when the rewritten array is declared above it in its
        // function (not another kernel's `extern __shared__` of the same name, not a name
        // used before its declaration), or when its function was copied for the rewrite.
        let declaration = (0..n).rev().find(|&d| {
            blocks[d] == blocks[n]
                && code_of(input_lines[d]).contains("__shared__")
                && names_subscript(code_of(input_lines[d]), name)
        });
        let rewritten_here = declaration.is_some_and(|d| {
            // The rewrite puts its marker above the declaration, and may change it. The
            // declaration is looked for in the output from its function's first line on (a
            // kernel's header, identical headers paired in order); without one, identical
            // declarations (one per kernel) pair up in order.
            let marker = format!("// bankwise: `{name}` ");
            let marked = |k: usize| k > 0 && output_lines[k - 1].contains(&marker);
            let header = (0..d)
                .rev()
                .take_while(|&h| blocks[h] == blocks[d])
                .find(|&h| input_lines[h].contains("__global__"));
            let nth_equal = |text: &str, before: usize| {
                let occurrence = input_lines[..before].iter().filter(|l| **l == text).count();
                output_lines
                    .iter()
                    .enumerate()
                    .filter(|(_, l)| **l == text)
                    .nth(occurrence)
                    .map(|(k, _)| k)
            };
            match header {
                Some(h) => {
                    let Some(start) = nth_equal(input_lines[h], h) else {
                        return true;
                    };
                    output_lines
                        .iter()
                        .enumerate()
                        .skip(start)
                        .find(|(k, l)| {
                            **l == input_lines[d]
                                || (marked(*k)
                                    && l.contains("__shared__")
                                    && names_subscript(l, name))
                        })
                        .is_none_or(|(k, _)| marked(k))
                }
                None => nth_equal(input_lines[d], d).is_none_or(marked),
            }
        });
        // A statement that only names a row (`cube[i];` on a three-dimensional cube) reads
        // no element: nothing there for a rewrite to map.
        let rank = declaration.map_or(0, |d| {
            let declared = code_of(input_lines[d]);
            declared.find(&format!("{name}[")).map_or(0, |at| {
                declared[at..]
                    .split(';')
                    .next()
                    .unwrap_or("")
                    .matches('[')
                    .count()
            })
        });
        let statement = code.trim_end();
        let names_a_row = statement.starts_with(&format!("{name}["))
            && statement.ends_with("];")
            && !statement.contains('=')
            && statement.matches('[').count() < rank;
        let in_input = input_lines.iter().filter(|l| l.ends_with(marker)).count();
        if !names_a_row && (rewritten_here || after.len() > in_input) {
            return Err(format!(
                "`{name}` is rewritten but this line keeps the old layout: {}",
                line.trim()
            ));
        }
    }
    Ok(())
}

/// For each line, the top-level block (a function, with the lines before it) it is in:
/// braces counted, those in comments and literals too (a generated or mutated input may
/// miscount; the oracle then only compares more lines).
fn top_level_blocks(lines: &[&str]) -> Vec<usize> {
    let mut depth: i64 = 0;
    let mut block = 0;
    lines
        .iter()
        .map(|line| {
            let here = block;
            for c in code_of(line).chars() {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth <= 0 {
                            depth = 0;
                            block += 1;
                        }
                    }
                    _ => {}
                }
            }
            here
        })
        .collect()
}

/// `line` before its `//` comment, if any (braces in comments are no code).
fn code_of(line: &str) -> &str {
    line.find("//").map_or(line, |at| &line[..at])
}

/// For each line, whether it starts outside every brace.
fn outside_functions(lines: &[&str]) -> Vec<bool> {
    let mut depth: i64 = 0;
    lines
        .iter()
        .map(|line| {
            let outside = depth <= 0;
            let code = code_of(line);
            depth += code.matches('{').count() as i64 - code.matches('}').count() as i64;
            outside
        })
        .collect()
}

/// Whether one function of `text` declares the shared array `name` more than once (one
/// shadowing the other, or one per preprocessor branch).
fn declared_twice_in_a_function(text: &str, name: &str) -> bool {
    let lines: Vec<&str> = text.lines().collect();
    let blocks = top_level_blocks(&lines);
    let mut seen = std::collections::HashSet::new();
    lines.iter().zip(&blocks).any(|(line, block)| {
        let code = code_of(line);
        code.contains("__shared__") && names_subscript(code, name) && !seen.insert(*block)
    })
}

/// Whether `text` subscripts `name` (`name[`, not `xname[`).
fn names_subscript(text: &str, name: &str) -> bool {
    text.match_indices(&format!("{name}[")).any(|(at, _)| {
        !text[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// The identifiers written before a `[` in `text`.
fn identifiers_of_subscripts(text: &str) -> Vec<&str> {
    let mut names: Vec<&str> = text
        .match_indices('[')
        .filter_map(|(at, _)| {
            let before = &text[..at];
            let start = before
                .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .map_or(0, |p| p + 1);
            let name = &before[start..];
            (!name.is_empty() && !name.starts_with(|c: char| c.is_ascii_digit())).then_some(name)
        })
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// Input `i` of `seed`: a generated kernel, or (one in three) a mutated testdata file.
fn input(seed: u64, i: u64, corpus: &[String]) -> String {
    let mut rng = fastrand::Rng::with_seed(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ i);
    if !corpus.is_empty() && rng.u8(0..3) == 0 {
        let base = rng.usize(0..corpus.len());
        mutate(&mut rng, &corpus[base])
    } else {
        generate(&mut rng)
    }
}

fn testdata_texts(dir: &Path) -> Vec<String> {
    let mut texts = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        for path in paths {
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "cu") {
                texts.extend(std::fs::read_to_string(&path).ok());
            }
        }
    }
    texts
}

const TOKENS: &[&str] = &[
    "[",
    "]",
    "(",
    ")",
    "{",
    "}",
    ";",
    ",",
    "__shared__ ",
    "threadIdx.x",
    "threadIdx.y",
    "blockDim.x",
    "#define X X\n",
    "#define Y(a) Y(a)\n",
    "0x7fffffff",
    "-1",
    "<<<",
    ">>>",
    "template <int N> ",
    "*",
    "&",
    "reinterpret_cast<float4 *>",
    "(uint4 *)",
    "extern ",
    "__syncthreads();",
    "for (;;) ",
    "while (1) ",
    "\r",
    "\n#if 0\n",
    "\n#endif\n",
    "/*",
    "*/",
    "\"",
    "'",
    "\\\n",
    "sizeof(",
    "::",
    "<",
    ">",
    "...",
];

/// `text` with one to four random edits: a range deleted or repeated, a token inserted, a
/// number replaced, two lines swapped.
fn mutate(rng: &mut fastrand::Rng, text: &str) -> String {
    let mut bytes = text.as_bytes().to_vec();
    for _ in 0..rng.usize(1..=4) {
        if bytes.is_empty() {
            break;
        }
        let at = rng.usize(0..bytes.len());
        let len = rng.usize(0..64).min(bytes.len() - at);
        match rng.u8(0..7) {
            5 => bytes = in_branches(rng, &bytes),
            6 => bytes = bound_to_reference(rng, &bytes),
            0 => {
                bytes.drain(at..at + len);
            }
            1 => {
                let copy = bytes[at..at + len].to_vec();
                bytes.splice(at..at, copy);
            }
            2 => {
                let token = TOKENS[rng.usize(0..TOKENS.len())].as_bytes().to_vec();
                bytes.splice(at..at, token);
            }
            3 => {
                let digits = bytes[at..]
                    .iter()
                    .position(u8::is_ascii_digit)
                    .map(|p| at + p);
                if let Some(start) = digits {
                    let end = bytes[start..]
                        .iter()
                        .position(|b| !b.is_ascii_alphanumeric())
                        .map_or(bytes.len(), |p| start + p);
                    let number = [
                        "0",
                        "1",
                        "3",
                        "31",
                        "33",
                        "1024",
                        "65536",
                        "2147483647",
                        "4294967296",
                        "9223372036854775807",
                        "0x80000000",
                    ][rng.usize(0..11)];
                    bytes.splice(start..end, number.bytes());
                }
            }
            _ => {
                let lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
                if lines.len() > 2 {
                    let (a, b) = (rng.usize(0..lines.len()), rng.usize(0..lines.len()));
                    let mut lines: Vec<Vec<u8>> = lines.iter().map(|l| l.to_vec()).collect();
                    lines.swap(a, b);
                    bytes = lines.join(&b'\n');
                }
            }
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// One line of `bytes` that subscripts something, by index, if any.
fn subscripting_line(rng: &mut fastrand::Rng, lines: &[Vec<u8>]) -> Option<usize> {
    let candidates: Vec<usize> = (0..lines.len())
        .filter(|&i| {
            lines[i].contains(&b'[') && lines[i].ends_with(b";") && !lines[i].starts_with(b"#")
        })
        .collect();
    (!candidates.is_empty()).then(|| candidates[rng.usize(0..candidates.len())])
}

/// `bytes` with a line that subscripts something put in both branches of a conditional,
/// the second copy with its first number changed, each line marked for the oracle.
fn in_branches(rng: &mut fastrand::Rng, bytes: &[u8]) -> Vec<u8> {
    let mut lines: Vec<Vec<u8>> = bytes.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
    let Some(i) = subscripting_line(rng, &lines) else {
        return bytes.to_vec();
    };
    let line = String::from_utf8_lossy(&lines[i]).into_owned();
    let other = match line.find(|c: char| c.is_ascii_digit()) {
        Some(at) => format!("{}1{}", &line[..at], &line[at..]),
        None => line.clone(),
    };
    let condition = [
        "#ifdef CFG",
        "#ifndef CFG",
        "#if __CUDA_ARCH__ >= 800",
        "#if defined(CFG) && CFG > 1",
    ][rng.usize(0..4)];
    let n = rng.u32(0..1_000_000);
    let text = format!("{condition}\n{line} // fuzz:{n}a\n#else\n{other} // fuzz:{n}b\n#endif");
    lines[i] = text.into_bytes();
    lines.join(&b'\n')
}

/// `bytes` with an element that a line subscripts bound to a reference or given to a
/// constructor on the line after, marked for the oracle.
fn bound_to_reference(rng: &mut fastrand::Rng, bytes: &[u8]) -> Vec<u8> {
    let mut lines: Vec<Vec<u8>> = bytes.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
    let Some(i) = subscripting_line(rng, &lines) else {
        return bytes.to_vec();
    };
    let line = String::from_utf8_lossy(&lines[i]).into_owned();
    let Some(element) = first_element(&line) else {
        return bytes.to_vec();
    };
    let n = rng.u32(0..1_000_000);
    let binding = match rng.u8(0..4) {
        0 => format!("auto &fuzz_r{n} = {element}; fuzz_r{n} += 1;"),
        1 => format!("FuzzRef fuzz_r{n}({element});"),
        2 => format!("FuzzRef fuzz_r{n}{{{element}}};"),
        _ => format!("cuda::atomic_ref<float, cuda::thread_scope_block> fuzz_r{n}({element});"),
    };
    // After the line: it may declare the array.
    lines.insert(i + 1, format!("{binding} // fuzz:{n}").into_bytes());
    lines.join(&b'\n')
}

/// The first `name[…]…[…]` in `line`, brackets balanced.
fn first_element(line: &str) -> Option<&str> {
    let open = line.find('[')?;
    let start = line[..open]
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map_or(0, |p| p + 1);
    if start == open {
        return None;
    }
    let mut depth = 0;
    let mut end = None;
    for (k, c) in line[open..].char_indices() {
        match c {
            '[' => depth += 1,
            ']' => {
                depth -= 1;
                if depth == 0 {
                    end = Some(open + k + 1);
                    if !line[open + k + 1..].starts_with('[') {
                        break;
                    }
                }
            }
            _ if depth == 0 => break,
            _ => {}
        }
    }
    end.map(|end| &line[start..end])
}

const TYPES: &[(&str, &str)] = &[
    ("float", "1.0f"),
    ("double", "1.0"),
    ("int", "1"),
    ("char", "1"),
    ("short", "1"),
    ("float2", "make_float2(1.0f, 2.0f)"),
    ("float4", "make_float4(1.0f, 2.0f, 3.0f, 4.0f)"),
    ("Rec", "Rec{1.0f, 2}"),
];

/// A plausible kernel: shared arrays of any element type and rank, affine and non-affine
/// subscripts, loops, macros, templates, pointers, vector casts, and a launch or annotation.
fn generate(rng: &mut fastrand::Rng) -> String {
    let mut out = String::from(
        "struct Rec { float v; int k; };\n\
         struct FuzzRef { float &v; __device__ FuzzRef(float &x) : v(x) {} };\n",
    );
    let tile = [8, 16, 17, 32, 33, 64][rng.usize(0..6)];
    let rows = [1, 2, 4, 8, 32][rng.usize(0..5)];
    out.push_str(&format!("#define TILE {tile}\n#define ROWS {rows}\n"));
    out.push_str("#define IDX(a, b) ((a) * TILE + (b))\n");
    // Template helpers the arrays may be passed to with explicit template arguments, one
    // through a namespace (issue 17, item 6).
    // Declaration specifiers behind macros, as RAFT, tiny-cuda-nn and ggml write them
    // (issue 17, item 1), for the helpers and the kernel's parameters.
    let specifiers = rng.bool();
    let (device, restrict) = match specifiers {
        true => {
            out.push_str(
                "#define DEVQ inline __device__\n#define RQ __restrict__\n#define APIQ\n\
                 APIQ void host_note(const char *text);\n",
            );
            ("DEVQ", "RQ")
        }
        false => ("__device__", ""),
    };
    out.push_str(&format!(
        "template <typename E, int W>\n{device} void put(E *p, int i, E v) {{ p[(i * W) % 16] = v; }}\n\
         namespace nsf {{\ntemplate <typename E, int W>\n\
         {device} void put2(E *p, int i, E v) {{ p[(i * W) % 16] = v; }}\n}}\n",
    ));
    let template = rng.u8(0..4) == 0;
    let (bx, by) = (
        [8, 16, 32, 64, 128, 256][rng.usize(0..6)],
        [1, 2, 4, 8][rng.usize(0..4)],
    );
    let launched = rng.bool();
    if !launched {
        out.push_str(&format!("// bankwise: block={bx}x{by}\n"));
    }
    if template {
        out.push_str("template <int N>\n");
    }
    out.push_str(&format!(
        "__global__ void k(float *out, const float * {restrict} in, int n)\n{{\n"
    ));
    let arrays: Vec<(String, &str, Vec<String>)> = (0..rng.usize(1..=3))
        .map(|a| {
            let (ty, _) = TYPES[rng.usize(0..TYPES.len())];
            let rank = rng.usize(1..=3);
            let extents = (0..rank)
                .map(|_| match rng.u8(0..6) {
                    0 => "TILE".to_string(),
                    1 => "TILE + 1".to_string(),
                    2 => "ROWS".to_string(),
                    3 if template => "N".to_string(),
                    _ => [2, 4, 8, 16, 32, 33, 64][rng.usize(0..7)].to_string(),
                })
                .collect();
            (format!("s{a}"), ty, extents)
        })
        .collect();
    for (name, ty, extents) in &arrays {
        let dims: String = extents.iter().map(|e| format!("[{e}]")).collect();
        out.push_str(&format!("    __shared__ {ty} {name}{dims};\n"));
    }
    out.push_str("    int tx = threadIdx.x, ty = threadIdx.y;\n    float acc = 0;\n");
    for _ in 0..rng.usize(1..=8) {
        let (name, ty, extents) = &arrays[rng.usize(0..arrays.len())];
        let value = TYPES.iter().find(|(t, _)| t == ty).map_or("1", |(_, v)| v);
        let subscript = |rng: &mut fastrand::Rng, var: &str| -> String {
            extents
                .iter()
                .map(|e| format!("[({}) % ({e})]", index(rng, var, 2)))
                .collect()
        };
        let member = match *ty {
            "float2" | "float4" => ".x",
            "Rec" => ".v",
            _ => "",
        };
        let first: String = extents.iter().map(|_| "[0]").collect();
        let width = match rng.u8(0..4) {
            0 if template => "N".to_string(),
            _ => [1, 2, 17, 32][rng.usize(0..4)].to_string(),
        };
        let marker = rng.u32(0..1_000_000);
        let statement = match rng.u8(0..14) {
            11 => {
                let condition =
                    ["#ifdef CFG", "#ifndef CFG", "#if __CUDA_ARCH__ >= 800"][rng.usize(0..3)];
                format!(
                    "\n{condition}\n    {name}{} = {value}; // fuzz:{marker}a\n#else\n    \
                     acc += (float){name}{}{member}; // fuzz:{marker}b\n#endif",
                    subscript(rng, "tx"),
                    subscript(rng, "ty")
                )
            }
            12 => format!(
                "{{ auto &r = {name}{}; r = {value}; }} // fuzz:{marker}",
                subscript(rng, "tx")
            ),
            13 if *ty == "float" => format!(
                "FuzzRef r{marker}({name}{}); acc += r{marker}.v; // fuzz:{marker}",
                subscript(rng, "tx")
            ),
            9 => format!("put<{ty}, {width}>(&{name}{first}, tx, {value});"),
            10 => format!("nsf::put2<{ty}, {width}>(&{name}{first}, tx, {value});"),
            0 => format!("{name}{} = {value};", subscript(rng, "tx")),
            1 => format!(
                "for (int j = 0; j < {}; j += {})\n        {name}{} = {value};",
                [4, 8, 32, 64][rng.usize(0..4)],
                [1, 2, 8][rng.usize(0..3)],
                subscript(rng, "j")
            ),
            2 => format!("acc += (float){name}{}{member};", subscript(rng, "tx")),
            3 => format!(
                "if (tx < {}) {name}{}{member} += 1;",
                rng.usize(1..64),
                subscript(rng, "tx")
            ),
            4 => "__syncthreads();".to_string(),
            5 => format!(
                "{{ {ty} *p = &{name}{}; p[0] = {value}; }}",
                subscript(rng, "tx")
            ),
            6 if *ty == "float" && extents.len() == 1 => {
                format!("acc += reinterpret_cast<float4 *>({name})[tx % 4].x;")
            }
            7 => format!(
                "{{ int v = tx;\n        while (v > 3) v >>= 1;\n        {name}{} = {value}; }}",
                subscript(rng, "v")
            ),
            _ => format!(
                "acc += (float){name}{}{member};",
                subscript(rng, "IDX(ty, tx)")
            ),
        };
        out.push_str(&format!("    {statement}\n"));
    }
    out.push_str("    out[blockIdx.x * blockDim.x + tx] = acc;\n}\n");
    if template {
        out.push_str(&format!(
            "template __global__ void k<{}>(float *, const float *, int);\n",
            [4, 16, 32][rng.usize(0..3)]
        ));
    }
    if launched {
        let name = if template { "k<16>" } else { "k" };
        out.push_str(&format!(
            "\nint main()\n{{\n    dim3 threads({bx}, {by});\n    \
             {name}<<<64, threads>>>(nullptr, nullptr, 0);\n    return 0;\n}}\n"
        ));
    }
    out
}

/// An index over `var`: affine or not, up to `depth` operators deep.
fn index(rng: &mut fastrand::Rng, var: &str, depth: u32) -> String {
    if depth == 0 || rng.u8(0..3) == 0 {
        return match rng.u8(0..5) {
            0 => var.to_string(),
            1 => "ty".to_string(),
            2 => rng.u32(0..64).to_string(),
            3 => "tx".to_string(),
            _ => "(int)in[tx]".to_string(),
        };
    }
    let op = ["+", "-", "*", "/", "%", "^", "&", "|", ">>", "<<"][rng.usize(0..10)];
    let right = match op {
        ">>" | "<<" => rng.u32(0..6).to_string(),
        "/" | "%" => rng.u32(1..40).to_string(),
        _ => index(rng, var, depth - 1),
    };
    format!("({} {op} {right})", index(rng, var, depth - 1))
}
