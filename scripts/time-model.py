#!/usr/bin/env python3
"""The calibration table of `fix`'s time model (docs/time-model.md).

Usage:
  scripts/time-model.py join LABEL FEATURES.tsv TIMES.tsv [TIMES.tsv ...]
      One row per launch whose code the fix changed: what `scripts/time-features` counted
      for block 0 before and after, and the mean of the runs' median times (µs). Appends
      nothing: prints the rows (without a header) for docs/gpu-results/time-model.tsv.
  scripts/time-model.py report TABLE.tsv
      The launch-by-launch table of docs/time-model.md: the measured time after / before,
      the model's prediction (src/compiled/time.rs), its error, and the gate's decision.

The weights and the margin are the ones src/compiled/time.rs ships; the unit test there
reads the same table and checks the figures this prints.
"""
import csv
import math
import sys

WEIGHTS = {"instructions": 1, "shared_wavefronts": 4, "global_instructions": 32}
MAX_PER_MILLE = 970
# Launches shorter than this are mostly launch overhead: their times are noise.
MEANINGFUL_US = 8.0
COLUMNS = [
    "label", "program", "index", "kernel", "before_us", "after_us",
    "instructions_before", "shared_wavefronts_before", "global_instructions_before",
    "instructions_after", "shared_wavefronts_after", "global_instructions_after",
]


def join(label, features, times):
    measured = {}
    for path in times:
        for row in csv.DictReader(open(path), delimiter="\t"):
            key = (row["program"], row["index"], row["when"])
            measured.setdefault(key, []).append(float(row["median_us"]))
    counted = {}
    for row in csv.DictReader(open(features), delimiter="\t"):
        if row["instructions"] != "-":
            counted[(row["program"], row["index"], row["when"])] = row
    for (program, index, when), before in sorted(counted.items()):
        if when != "before":
            continue
        after = counted.get((program, index, "after"))
        time_before = measured.get((program, index, "before"))
        time_after = measured.get((program, index, "after"))
        if not after or not time_before or not time_after:
            continue
        names = ["instructions", "shared_wavefronts", "global_instructions"]
        if all(before[n] == after[n] for n in names):
            continue
        cells = [label, program, index, before["kernel"],
                 f"{sum(time_before) / len(time_before):.2f}",
                 f"{sum(time_after) / len(time_after):.2f}"]
        cells += [before[n] for n in names] + [after[n] for n in names]
        print("\t".join(cells))


def cost(row, when):
    return sum(w * int(row[f"{name}_{when}"]) for name, w in WEIGHTS.items())


def per_mille(before, after):
    return (after * 1000 + before // 2) // max(before, 1)


def report(table):
    rows = list(csv.DictReader(open(table), delimiter="\t"))
    print("| run | kernel | before, µs | measured | predicted | error | gate |")
    print("|---|---|--:|--:|--:|--:|---|")
    squares, meaningful = 0.0, 0
    for row in sorted(rows, key=lambda r: (r["kernel"], r["label"])):
        measured = float(row["after_us"]) / float(row["before_us"])
        predicted = per_mille(cost(row, "before"), cost(row, "after"))
        error = math.log(predicted / 1000) - math.log(measured)
        gate = "rewrite" if predicted <= MAX_PER_MILLE else "leave alone"
        if float(row["before_us"]) >= MEANINGFUL_US:
            squares += error * error
            meaningful += 1
        print(f"| {row['label']} | `{row['kernel']}` | {float(row['before_us']):.1f} | "
              f"{measured:.2f} | {predicted / 1000:.2f} | {error:+.2f} | {gate} |")
    print()
    print(f"{len(rows)} launches; root mean square of the log error over the {meaningful} "
          f"of {MEANINGFUL_US:g} µs or more: {math.sqrt(squares / meaningful):.3f}")


if __name__ == "__main__":
    if len(sys.argv) >= 5 and sys.argv[1] == "join":
        join(sys.argv[2], sys.argv[3], sys.argv[4:])
    elif len(sys.argv) == 3 and sys.argv[1] == "report":
        report(sys.argv[2])
    else:
        sys.exit(__doc__)
