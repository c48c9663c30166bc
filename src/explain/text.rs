//! The teaching view for a terminal: 32 bank columns (or 16), at most about 110 characters
//! wide, so that it reads in any terminal of 80 to 160 columns without wrapping at 160.
use super::bankmap::{lane_list, BankMap};
use super::bits::{label, lane_bits_in, BitForm, Fields};
use super::{phases_text, plural, wrap_words, After, Explanation, View};
use std::fmt::Write;

/// Width of the row labels (`1.16`).
const LABEL: usize = 6;
/// The whole map should fit in this many columns.
const TARGET_WIDTH: usize = 150;
/// Broadcast cells listed under a map at most.
const LISTED_BROADCASTS: usize = 8;

pub fn render(e: &Explanation) -> String {
    let mut out = String::new();
    header(e, &mut out);
    let iteration = e.iteration_text();
    let place = format!("warp {}, {iteration}", e.warp);
    section(
        &mut out,
        &format!("before: `{}` as declared; {place}", e.array),
        &e.before.map,
    );
    match &e.after {
        After::Mapped { view, .. } => section(
            &mut out,
            &format!("after: `{}` through fix's map; {place}", e.array),
            &view.map,
        ),
        After::LeftAlone(_) => {
            let _ = writeln!(
                out,
                "after: none: `bankwise fix` leaves `{}` as it is (see `fix:` above)\n",
                e.array
            );
        }
    }
    index_bits(e, &mut out);
    dmm(e, &mut out);
    out
}

fn header(e: &Explanation, out: &mut String) {
    let [x, y, z] = e.block;
    let _ = writeln!(
        out,
        "{}:{}: {} `{}`",
        e.path,
        e.at,
        e.kind.as_str(),
        e.access
    );
    let _ = writeln!(
        out,
        "  array `{}` {} in `{}`, block {x}x{y}x{z} ({} warp{}); {} banks of {} bytes, {} bytes per lane",
        e.array,
        e.shape,
        e.function,
        e.warps,
        plural(u64::from(e.warps)),
        e.config.banks,
        e.config.bank_width,
        e.unit_bytes
    );
    if let Some(why) = &e.block_assumed {
        let _ = writeln!(out, "  block assumed: {why}");
    }
    let _ = writeln!(out, "  index: {} ({})", e.form, e.class);
    let _ = writeln!(
        out,
        "  check: {}-way; {} excess wavefronts per block over {} iteration{} of {} warp{}",
        e.check.conflict_degree,
        e.check.excess(),
        e.iterations,
        plural(e.iterations as u64),
        e.warps,
        plural(u64::from(e.warps))
    );
    let _ = writeln!(out, "  shown: warp {} ({})", e.warp, e.warp_choice);
    let _ = writeln!(
        out,
        "         {} ({})",
        e.iteration_text(),
        e.iteration_choice
    );
    match &e.after {
        After::Mapped {
            description,
            caution,
            view,
        } => {
            for (i, line) in description.lines().enumerate() {
                wrap(
                    out,
                    if i == 0 { "  fix: " } else { "       " },
                    "       ",
                    line,
                );
            }
            let _ = writeln!(
                out,
                "       this access: {} -> {} excess wavefronts per block",
                e.before.block_excess, view.block_excess
            );
            if let Some(caution) = caution {
                wrap(
                    out,
                    "       ",
                    "       ",
                    &format!("applied only with --unsafe-fixes: {caution}"),
                );
            }
        }
        After::LeftAlone(why) => wrap(
            out,
            "  fix: ",
            "       ",
            &format!("leaves `{}` as it is: {why}", e.array),
        ),
    }
    for note in &e.notes {
        wrap(out, "  note: ", "        ", note);
    }
    out.push('\n');
}

/// Prose lines are wrapped at this width.
const PROSE_WIDTH: usize = 100;

/// Writes `text` word-wrapped at [`PROSE_WIDTH`], the first line after `first`, the others
/// after `rest`.
fn wrap(out: &mut String, first: &str, rest: &str, text: &str) {
    let width = PROSE_WIDTH.saturating_sub(first.chars().count());
    for (i, line) in wrap_words(text, width).iter().enumerate() {
        let _ = writeln!(out, "{}{line}", if i == 0 { first } else { rest });
    }
}

/// What one cell shows: the lanes, or `*n` (a broadcast of n lanes) when `starred` or when
/// they do not fit.
fn cell_text(lanes: &[u32], cap: usize, starred: bool) -> String {
    let list = lane_list(lanes);
    if list.len() <= cap && !(starred && lanes.len() > 1) {
        list
    } else {
        format!("*{}", lanes.len())
    }
}

fn section(out: &mut String, title: &str, map: &BankMap) {
    let _ = writeln!(out, "{title}");
    let banks = map.banks as usize;
    let cap = ((TARGET_WIDTH - LABEL) / banks.max(1))
        .saturating_sub(1)
        .max(3);
    let rows = map.labelled_rows();
    let cells = || rows.iter().flat_map(|(_, cells, _)| cells.iter().flatten());
    // One broadcast that does not fit stars them all, so that a map reads one way.
    let starred = cells().any(|cell| lane_list(&cell.lanes).len() > cap);
    let width = cells()
        .map(|cell| cell_text(&cell.lanes, cap, starred).len())
        .max()
        .unwrap_or(0)
        .max(2);
    let mut line = format!("{:>LABEL$}", "bank");
    for bank in 0..banks {
        let _ = write!(line, " {bank:>width$}");
    }
    let _ = writeln!(out, "{line}");
    let mut broadcasts = Vec::new();
    for (label, cells, _) in &rows {
        let mut line = format!("{label:>LABEL$}");
        for (bank, cell) in cells.iter().enumerate() {
            let text = match cell {
                Some(cell) => {
                    let text = cell_text(&cell.lanes, cap, starred);
                    if text.starts_with('*') {
                        broadcasts.push(format!(
                            "{text} in bank {bank}, wavefront {label}: lanes {}",
                            lane_list(&cell.lanes)
                        ));
                    }
                    text
                }
                None => ".".to_string(),
            };
            let _ = write!(line, " {text:>width$}");
        }
        let _ = writeln!(out, "{line}");
    }
    if let Some(phases) = phases_text(map) {
        // Broken after a phase's comma, never inside `n = lanes a-b`.
        let mut line = String::new();
        for item in phases.split_inclusive(", ") {
            if !line.is_empty() && line.chars().count() + item.chars().count() > PROSE_WIDTH {
                let _ = writeln!(out, "{}", line.trim_end());
                line = "  ".to_string();
            }
            line.push_str(item);
        }
        let _ = writeln!(out, "{line}");
    }
    if !broadcasts.is_empty() {
        let _ = writeln!(out, "*n: n lanes read one word (a broadcast, no conflict):");
        for b in broadcasts.iter().take(LISTED_BROADCASTS) {
            let _ = writeln!(out, "  {b}");
        }
        if broadcasts.len() > LISTED_BROADCASTS {
            let _ = writeln!(out, "  … and {} more", broadcasts.len() - LISTED_BROADCASTS);
        }
    }
    let cost = map.cost;
    let _ = writeln!(
        out,
        "degree {}: {} wavefront{}, ideal {}, excess {}\n",
        cost.conflict_degree,
        cost.wavefronts,
        plural(u64::from(cost.wavefronts)),
        cost.ideal_wavefronts,
        cost.excess()
    );
}

fn index_bits(e: &Explanation, out: &mut String) {
    let unit = if e.unit_bytes == e.config.bank_width {
        "one bank word".to_string()
    } else {
        format!("{} bytes", e.unit_bytes)
    };
    let _ = writeln!(
        out,
        "index bits (Lloyd's index-digit notation): the index of `{}` in units of {unit}",
        e.array
    );
    let Some(fields) = e.fields else {
        let _ = writeln!(
            out,
            "  {}-byte units: the bank is not a bit field of the index\n",
            e.unit_bytes
        );
        return;
    };
    let lanes = if e.thread_names {
        "thread-index bits"
    } else {
        "lane bits (the block's x extent is not a power of two)"
    };
    let _ = writeln!(
        out,
        "  lane bits of warp {}: {} ({lanes})\n  0/1: the same for every lane; ~: inverted; ^: XOR; +: mixed by carries",
        e.warp,
        e.lane_names.join(" ")
    );
    let mut rows: Vec<(&str, &View)> = vec![("before", &e.before)];
    // A record split into member arrays has no bits in the declared units.
    if let Some(view) = e.mapped().filter(|v| !v.bits.is_empty()) {
        rows.push(("after", view));
    }
    let labels: Vec<Vec<String>> = rows
        .iter()
        .map(|(_, v)| v.bits.iter().map(|b| label(*b, &e.lane_names)).collect())
        .collect();
    let width = labels
        .iter()
        .flatten()
        .map(String::len)
        .max()
        .unwrap_or(1)
        .max(2);
    let bits: Vec<u32> = (0..fields.width).rev().collect();
    let separator = |bit: u32| {
        if bit + 1 == fields.bank && bit + 1 < fields.width {
            " |"
        } else if fields.word > 0 && bit + 1 == fields.word {
            " :"
        } else {
            ""
        }
    };
    let mut line = format!("{:<8}", "bit");
    for &bit in &bits {
        let _ = write!(line, "{} {bit:>width$}", separator(bit));
    }
    let _ = writeln!(out, "{}", line.trim_end());
    for ((name, _), labels) in rows.iter().zip(&labels) {
        let mut line = format!("{name:<8}");
        for (&bit, text) in bits.iter().zip(labels) {
            let _ = write!(line, "{} {text:>width$}", separator(bit));
        }
        let _ = writeln!(out, "{line}");
    }
    let fields_text = if fields.word > 0 {
        format!(
            "bits {}-{} pick the bank, {}-0 the byte in the word, the rest the row",
            fields.bank - 1,
            fields.word,
            fields.word - 1
        )
    } else {
        format!("bits {}-0 pick the bank, the rest the row", fields.bank - 1)
    };
    let words = e.unit_bytes / e.config.bank_width.max(1);
    let fields_text = if words > 1 {
        format!("{fields_text} (a unit covers {words} banks)")
    } else {
        fields_text
    };
    let _ = writeln!(out, "  {fields_text}");
    for ((name, view), _) in rows.iter().zip(&labels) {
        let _ = writeln!(out, "  {name}: {}", where_lane_bits_go(e, view, &fields));
    }
    out.push('\n');
}

/// `tx0 tx1 in the bank bits; tx2 tx3 tx4 only in the row bits`.
fn where_lane_bits_go(e: &Explanation, view: &View, fields: &Fields) -> String {
    let skip = (fields.width - fields.bank) as usize;
    let (rows, low) = view.bits.split_at(skip.min(view.bits.len()));
    let (bank_forms, word_forms) =
        low.split_at(((fields.bank - fields.word) as usize).min(low.len()));
    let in_bank = lane_bits_in(bank_forms);
    // With phases of fewer lanes than a warp, the high lane bits pick the phase: lanes
    // that differ in them are served apart and never conflict.
    let phase_bits = e.lanes_per_phase.max(1).trailing_zeros();
    let phase = (e.lane_names.len() as u32)
        .checked_sub(phase_bits)
        .filter(|&n| n > 0)
        .map_or(0, |n| ((1u32 << n) - 1) << phase_bits);
    let in_row = lane_bits_in(rows) & !in_bank & !phase;
    let names = |mask: u32| -> String {
        let names: Vec<&str> = (0..e.lane_names.len())
            .filter(|b| mask & (1 << b) != 0)
            .map(|b| e.lane_names[b].as_str())
            .collect();
        names.join(" ")
    };
    let mixed = view.bits.contains(&BitForm::Mixed);
    let mut parts = vec![match in_bank {
        0 => "no lane bit in the bank bits".to_string(),
        mask => format!("{} in the bank bits", names(mask)),
    }];
    if in_row != 0 {
        parts.push(format!("{} only in the row bits", names(in_row)));
    }
    if phase != 0 {
        let verb = if phase.count_ones() == 1 {
            "picks"
        } else {
            "pick"
        };
        parts.push(format!("{} {verb} the phase", names(phase)));
    }
    let in_word = lane_bits_in(word_forms) & !in_bank & !in_row & !phase;
    if in_word != 0 {
        parts.push(format!(
            "{} only in the byte-in-word bits (one word: no conflict)",
            names(in_word)
        ));
    }
    if mixed {
        parts.push("carries mix lane bits (+)".to_string());
    } else {
        // Lane bits the active lanes vary in but no index bit holds: those lanes read the
        // same word.
        let lanes: Vec<u32> = view
            .map
            .phases
            .iter()
            .flat_map(|p| p.rows.iter().flatten().flatten())
            .flat_map(|cell| cell.lanes.iter().copied())
            .collect();
        let varying = lanes
            .first()
            .map_or(0, |first| lanes.iter().fold(0, |m, l| m | (l ^ first)));
        let nowhere = varying & !(in_bank | in_row | phase | in_word);
        if nowhere != 0 {
            parts.push(format!(
                "{} in no bit (lanes that differ only there read one word)",
                names(nowhere)
            ));
        }
    }
    parts.join("; ")
}

fn dmm(e: &Explanation, out: &mut String) {
    let at = if e.iteration.is_empty() {
        String::new()
    } else {
        format!(" at {}", e.iteration_text())
    };
    let _ = writeln!(
        out,
        "DMM (Nakano): congestion = the most distinct words one bank serves in a phase;\n  through a pipeline of latency l, the block's warps{at} take f + l - 1 time units\n  (f: their congestions summed)"
    );
    let mut rows: Vec<(&str, &View)> = vec![("before", &e.before)];
    if let Some(view) = e.mapped() {
        rows.push(("after", view));
    }
    for (name, view) in rows {
        let own = view.congestions.get(e.warp as usize).copied().unwrap_or(0);
        let f: u64 = view.congestions.iter().map(|&c| u64::from(c)).sum();
        let _ = writeln!(
            out,
            "  {:<7} warp {} congestion {own}; all warps {}; f = {f}, time {}",
            format!("{name}:"),
            e.warp,
            congestion_list(&view.congestions),
            time_text(f)
        );
    }
}

/// `32 x8` for equal congestions, else the list (cut after 16).
fn congestion_list(congestions: &[u32]) -> String {
    match congestions {
        [] => "none".to_string(),
        [first, rest @ ..] if rest.iter().all(|c| c == first) => {
            format!("{first} x{}", congestions.len())
        }
        _ => {
            let shown: Vec<String> = congestions.iter().take(16).map(u32::to_string).collect();
            let more = if congestions.len() > 16 { " …" } else { "" };
            format!("{}{more}", shown.join(" "))
        }
    }
}

/// `f + l − 1` with f known: `255 + l`; 0 when nothing is dispatched.
fn time_text(f: u64) -> String {
    match f {
        0 => "0".to_string(),
        1 => "l".to_string(),
        f => format!("{} + l", f - 1),
    }
}
