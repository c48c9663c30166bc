//! The bank maps as an SVG heat map, before above after: one `rect` per bank per wavefront,
//! coloured by how many lanes that bank serves in that wavefront, the lane numbers written
//! in it, a tooltip (`title`) with the word and every lane. Each map is a
//! `<g class="bank-map">` holding exactly banks × rows rects; the legend's swatches lie
//! outside the maps.
use super::bankmap::{lane_list, BankMap};
use super::{phases_text, wrap_words, After, Explanation};
use std::fmt::Write;

const CELL_W: usize = 26;
const CELL_H: usize = 18;
/// Room for the row labels left of the grid.
const LEFT: usize = 48;
const MARGIN: usize = 16;
/// Text longer than this many characters does not fit a cell: `*n` instead.
const CELL_CHARS: usize = 5;
/// Prose in the SVG is wrapped at this many characters.
const WRAP_CHARS: usize = 110;
/// Width of the legend's swatches and their explanation.
const LEGEND_WIDTH: usize = 6 * 64 + 360;

/// Fill colours by lanes served, with the smallest count each applies to.
const SCALE: [(usize, &str, &str); 6] = [
    (0, "#f4f4f4", "0"),
    (1, "#c6dbef", "1"),
    (2, "#9ecae1", "2"),
    (3, "#6baed6", "3-4"),
    (5, "#3182bd", "5-8"),
    (9, "#08519c", "9+"),
];
const EXCESS_COLOUR: &str = "#c0392b";

fn fill(lanes: usize) -> &'static str {
    SCALE
        .iter()
        .rev()
        .find(|(from, _, _)| lanes >= *from)
        .map_or(SCALE[0].1, |(_, colour, _)| colour)
}

/// XML text and attribute values.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}

/// One map with the lines of text above it.
struct Drawn<'a> {
    id: &'static str,
    title: String,
    lines: Vec<String>,
    map: &'a BankMap,
}

impl Drawn<'_> {
    /// Height of its block: title, lines, bank numbers, rows, gap.
    fn height(&self) -> usize {
        (2 + self.lines.len()) * LINE + self.map.rows() * CELL_H + 24
    }
}

/// Height of a line of text.
const LINE: usize = 16;

/// About how wide `chars` characters of monospace text at `size` pixels are.
fn text_width(chars: usize, size: usize) -> usize {
    chars * size * 62 / 100
}

fn summary(map: &BankMap) -> String {
    let cost = map.cost;
    format!(
        "degree {}: {} wavefront{}, ideal {}, excess {}",
        cost.conflict_degree,
        cost.wavefronts,
        if cost.wavefronts == 1 { "" } else { "s" },
        cost.ideal_wavefronts,
        cost.excess()
    )
}

pub fn render(e: &Explanation) -> String {
    let banks = e.before.map.banks as usize;
    let place = format!("warp {}, {}", e.warp, e.iteration_text());
    let mut maps = vec![Drawn {
        id: "before",
        title: format!("before: `{}` as declared ({place})", e.array),
        lines: std::iter::once(summary(&e.before.map))
            .chain(phases_text(&e.before.map))
            .collect(),
        map: &e.before.map,
    }];
    let mut left_alone = None;
    match &e.after {
        After::Mapped {
            description, view, ..
        } => maps.push(Drawn {
            id: "after",
            title: format!("after: `{}` through fix's map ({place})", e.array),
            lines: description
                .lines()
                .map(str::to_string)
                .chain(std::iter::once(summary(&view.map)))
                .chain(phases_text(&view.map))
                .collect(),
            map: &view.map,
        }),
        After::LeftAlone(why) => {
            left_alone = Some(wrap_words(
                &format!("after: none: fix leaves `{}` as it is: {why}", e.array),
                WRAP_CHARS,
            ))
        }
    }
    let [x, y, z] = e.block;
    let heading = [
        (
            13,
            format!("{}:{}: {} `{}`", e.path, e.at, e.kind.as_str(), e.access),
        ),
        (
            11,
            format!(
                "`{}` {} in `{}`, block {x}x{y}x{z}; {} banks of {} bytes",
                e.array, e.shape, e.function, e.config.banks, e.config.bank_width
            ),
        ),
        (11, format!("index {} ({})", e.form, e.class)),
    ];
    let widest_text = heading
        .iter()
        .map(|(size, text)| text_width(text.chars().count(), *size))
        .chain(maps.iter().flat_map(|m| {
            std::iter::once(text_width(m.title.chars().count(), 12)).chain(
                m.lines
                    .iter()
                    .map(|line| text_width(line.chars().count(), 11)),
            )
        }))
        .chain(
            left_alone
                .iter()
                .flatten()
                .map(|t| text_width(t.chars().count(), 12)),
        )
        .max()
        .unwrap_or(0);
    let width = (LEFT + banks * CELL_W).max(widest_text).max(LEGEND_WIDTH) + 2 * MARGIN;
    let title_height = heading.len() * LINE + 12;
    let legend_height = 56;
    let height = title_height
        + maps.iter().map(Drawn::height).sum::<usize>()
        + left_alone
            .as_ref()
            .map_or(0, |lines| lines.len() * LINE + 12)
        + legend_height;
    let mut out = String::new();
    let _ = writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#);
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="DejaVu Sans Mono, Menlo, Consolas, monospace">"#
    );
    let _ = writeln!(
        out,
        "<title>bankwise explain: {}</title>",
        escape(&heading[0].1)
    );
    let _ = writeln!(
        out,
        r#"<rect class="background" x="0" y="0" width="{width}" height="{height}" fill="white"/>"#
    );
    for (i, (size, text)) in heading.iter().enumerate() {
        let weight = if i == 0 { r#" font-weight="bold""# } else { "" };
        let _ = writeln!(
            out,
            r#"<text x="{MARGIN}" y="{}" font-size="{size}"{weight}>{}</text>"#,
            (i + 1) * LINE + 4,
            escape(text)
        );
    }
    let mut top = title_height;
    for drawn in &maps {
        draw_map(&mut out, drawn, top);
        top += drawn.height();
    }
    if let Some(lines) = left_alone {
        for (i, text) in lines.iter().enumerate() {
            let _ = writeln!(
                out,
                r#"<text x="{MARGIN}" y="{}" font-size="12">{}</text>"#,
                top + (i + 1) * LINE,
                escape(text)
            );
        }
        top += lines.len() * LINE + 12;
    }
    legend(&mut out, top);
    out.push_str("</svg>\n");
    out
}

fn draw_map(out: &mut String, drawn: &Drawn, top: usize) {
    let map = drawn.map;
    let banks = map.banks as usize;
    let _ = writeln!(
        out,
        r#"<g class="bank-map" id="{}" data-banks="{banks}" data-rows="{}">"#,
        drawn.id,
        map.rows()
    );
    let _ = writeln!(
        out,
        r#"<text x="{MARGIN}" y="{}" font-size="12" font-weight="bold">{}</text>"#,
        top + 14,
        escape(&drawn.title)
    );
    for (i, line) in drawn.lines.iter().enumerate() {
        let _ = writeln!(
            out,
            r#"<text x="{MARGIN}" y="{}" font-size="11">{}</text>"#,
            top + 14 + (i + 1) * LINE,
            escape(line)
        );
    }
    let grid_left = MARGIN + LEFT;
    let grid_top = top + (2 + drawn.lines.len()) * LINE;
    let _ = writeln!(
        out,
        r##"<text x="{MARGIN}" y="{}" font-size="9" fill="#555">bank</text>"##,
        grid_top - 5
    );
    for bank in 0..banks {
        let _ = writeln!(
            out,
            r##"<text x="{}" y="{}" font-size="9" text-anchor="middle" fill="#555">{bank}</text>"##,
            grid_left + bank * CELL_W + CELL_W / 2,
            grid_top - 5
        );
    }
    for (r, (label, cells, excess)) in map.labelled_rows().iter().enumerate() {
        let y = grid_top + r * CELL_H;
        let colour = if *excess { EXCESS_COLOUR } else { "#333333" };
        let _ = writeln!(
            out,
            r#"<text x="{}" y="{}" font-size="9" text-anchor="end" fill="{colour}">{label}</text>"#,
            grid_left - 6,
            y + CELL_H / 2 + 3
        );
        for (bank, cell) in cells.iter().enumerate() {
            let x = grid_left + bank * CELL_W;
            let lanes = cell.as_ref().map_or(0, |c| c.lanes.len());
            let tip = match cell {
                Some(cell) => format!(
                    "bank {bank}, wavefront {label}: word {}, lane{} {}",
                    cell.word,
                    if lanes == 1 { "" } else { "s" },
                    lane_list(&cell.lanes)
                ),
                None => format!("bank {bank}, wavefront {label}: idle"),
            };
            let _ = writeln!(
                out,
                r##"<rect x="{x}" y="{y}" width="{CELL_W}" height="{CELL_H}" fill="{}" stroke="#ffffff" stroke-width="1"><title>{}</title></rect>"##,
                fill(lanes),
                escape(&tip)
            );
            if let Some(cell) = cell {
                let list = lane_list(&cell.lanes);
                let text = if list.len() <= CELL_CHARS {
                    list
                } else {
                    format!("*{lanes}")
                };
                let size = if text.len() <= 3 { 10 } else { 8 };
                let ink = if lanes >= 5 { "#ffffff" } else { "#000000" };
                let _ = writeln!(
                    out,
                    r#"<text x="{}" y="{}" font-size="{size}" text-anchor="middle" fill="{ink}">{}</text>"#,
                    x + CELL_W / 2,
                    y + CELL_H / 2 + 4,
                    escape(&text)
                );
            }
        }
    }
    out.push_str("</g>\n");
}

fn legend(out: &mut String, top: usize) {
    let _ = writeln!(out, r#"<g class="legend">"#);
    let _ = writeln!(
        out,
        r#"<text x="{MARGIN}" y="{}" font-size="10">lanes a bank serves in a wavefront (one word; several lanes: a broadcast, *n when they do not fit):</text>"#,
        top + 12
    );
    for (i, (_, colour, text)) in SCALE.iter().enumerate() {
        let x = MARGIN + i * 64;
        let _ = writeln!(
            out,
            r##"<rect x="{x}" y="{}" width="{CELL_W}" height="{CELL_H}" fill="{colour}" stroke="#999999" stroke-width="0.5"/>"##,
            top + 20
        );
        let _ = writeln!(
            out,
            r#"<text x="{}" y="{}" font-size="10">{text}</text>"#,
            x + CELL_W + 4,
            top + 33
        );
    }
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}" font-size="10" fill="{EXCESS_COLOUR}">row numbers in red: excess wavefronts (bank conflicts)</text>"#,
        MARGIN + SCALE.len() * 64,
        top + 33
    );
    out.push_str("</g>\n");
}
