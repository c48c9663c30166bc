#!/usr/bin/env python3
"""The table of docs/gpu.md from a `scripts/gpu-check run` directory.

Usage: scripts/gpu-report.py CASES.tsv RESULTS [MORE_RESULTS ...]

Per launch: whether every buffer came out identical, the oracle's excess wavefronts (loads
and stores; the CPU emulation of tests/oracle.rs) before -> after fix, Nsight Compute's bank
conflicts of shared loads and stores on the GPU before -> after, the warp-level shared load
and store instructions it executed (nvcc may merge neighbouring accesses into one 64- or
128-bit instruction, or stop merging them), the kernel's duration on
its one block (ncu, clocks as the card ran them). Then, where `scripts/gpu-check run` timed
them, a second table: the median time of one launch of many blocks (CUDA events), one column
per RESULTS directory given (runs differ: a launch of a few microseconds is mostly overhead),
and the ratio of the runs' mean after to their mean before. Last, with the timings and the
profile, the price of each rewrite: the ALU instructions it adds per block (the shared
instructions the original executed times `fix`'s mean ALU instructions per rewritten access)
per excess wavefront it removes (the oracle's), beside that time ratio, cheapest first.
"""
import csv
import sys
from collections import defaultdict
from pathlib import Path

CONFLICTS_LD = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
CONFLICTS_ST = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"
DURATION = "gpu__time_duration.sum"
SHARED_LD = "smsp__sass_inst_executed_op_shared_ld.sum"
SHARED_ST = "smsp__sass_inst_executed_op_shared_st.sum"


def read_tsv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def number(text):
    try:
        return float(text.replace(",", ""))
    except (AttributeError, ValueError):
        return None


def ncu_metrics(path):
    """{(program, when): [ {metric: value} per launch, in launch order ]}"""
    rows = [line for line in Path(path).read_text(errors="replace").splitlines() if line.startswith('"')]
    by_launch = defaultdict(dict)
    order = defaultdict(list)
    for row in csv.DictReader(rows):
        process = Path(row.get("Process Name", "")).name
        program, _, when = process.rpartition(".")
        key = (program, when)
        launch_id = row.get("ID")
        if launch_id not in by_launch[key]:
            by_launch[key][launch_id] = {}
            order[key].append(launch_id)
        by_launch[key][launch_id][row.get("Metric Name")] = number(row.get("Metric Value"))
    return {key: [by_launch[key][i] for i in ids] for key, ids in order.items()}


def launch_metric(ncu, program, when, launch, name):
    """Nsight's `name` for launch `launch` of `program` `when` (before/after), or None."""
    launches = ncu.get((program, when), [])
    return launches[launch].get(name) if launch < len(launches) else None


def shared_instructions(ncu, program, when, launch):
    """The shared loads and stores the launch executed, or None."""
    loads = launch_metric(ncu, program, when, launch, SHARED_LD)
    stores = launch_metric(ncu, program, when, launch, SHARED_ST)
    return None if loads is None or stores is None else loads + stores


def oracle_excess(case, when):
    """The oracle's excess wavefronts of loads and stores, `when` before or after."""
    return int(case[f"oracle_ld_{when}"]) + int(case[f"oracle_st_{when}"])


def arrow(before, after, digits=0):
    def show(value):
        if value is None:
            return "–"
        return f"{value:.{digits}f}" if digits else f"{int(round(value))}"

    return f"{show(before)} → {show(after)}"


def main():
    cases_path, results = sys.argv[1], Path(sys.argv[2])
    cases = read_tsv(cases_path)
    identical = {(r["program"], r["index"]): r["identical"] for r in read_tsv(results / "identical.tsv")}
    ncu = ncu_metrics(results / "ncu.csv") if (results / "ncu.csv").exists() else {}
    runs = [results] + [Path(more) for more in sys.argv[3:]]
    times = [timings(run / "times.tsv") for run in runs if (run / "times.tsv").exists()]

    print(
        "| file | kernel | block | identical | oracle ld+st | Nsight ld | Nsight st | "
        "shared instructions | duration, ns |"
    )
    print("|---|---|---|---|--:|--:|--:|--:|--:|")
    totals = defaultdict(float)
    same = 0
    for case in cases:
        program, index = case["program"], case["index"]
        launch = int(index)

        def metric(when, name):
            return launch_metric(ncu, program, when, launch, name)

        def shared(when):
            return shared_instructions(ncu, program, when, launch)

        oracle_before, oracle_after = oracle_excess(case, "before"), oracle_excess(case, "after")
        values = {
            "oracle_before": oracle_before,
            "oracle_after": oracle_after,
            "ld_before": metric("before", CONFLICTS_LD),
            "ld_after": metric("after", CONFLICTS_LD),
            "st_before": metric("before", CONFLICTS_ST),
            "st_after": metric("after", CONFLICTS_ST),
        }
        for name, value in values.items():
            totals[name] += value or 0
        verdict = identical.get((program, index), "–")
        same += verdict == "yes"
        print(
            f"| {short_name(program)} | `{case['kernel']}` | {case['block']} | {verdict} | "
            f"{arrow(oracle_before, oracle_after)} | "
            f"{arrow(values['ld_before'], values['ld_after'])} | "
            f"{arrow(values['st_before'], values['st_after'])} | "
            f"{arrow(shared('before'), shared('after'))} | "
            f"{arrow(metric('before', DURATION), metric('after', DURATION))} |"
        )
    print(
        f"| **all {len(cases)}** | | | {same} yes | "
        f"{arrow(totals['oracle_before'], totals['oracle_after'])} | "
        f"{arrow(totals['ld_before'], totals['ld_after'])} | "
        f"{arrow(totals['st_before'], totals['st_after'])} | | |"
    )
    if times:
        print()
        print_times(cases, times)
        if ncu:
            print()
            print_prices(cases, ncu, times)


def time_ratio(program, index, times):
    """The runs' mean time after over their mean before, or None."""
    befores = [t[(program, "before", index)] for t in times if t.get((program, "before", index))]
    afters = [t[(program, "after", index)] for t in times if t.get((program, "after", index))]
    if not befores or not afters:
        return None
    return (sum(afters) / len(afters)) / (sum(befores) / len(befores))


def print_prices(cases, ncu, times):
    rows = []
    for case in cases:
        program, index = case["program"], case["index"]
        alu = number(case.get("fix_alu"))
        shared = shared_instructions(ncu, program, "before", int(index))
        if alu is None or shared is None:
            continue
        removed = oracle_excess(case, "before") - oracle_excess(case, "after")
        added = shared * alu
        price = added / removed if removed > 0 else float("inf")
        rows.append((price, short_name(program), case["kernel"], alu, shared, removed, time_ratio(program, index, times)))
    print("| file | kernel | ALU per access | shared instructions | wavefronts removed | ALU added per wavefront | time after / before |")
    print("|---|---|--:|--:|--:|--:|--:|")
    for price, name, kernel, alu, shared, removed, ratio in sorted(rows, key=lambda r: r[0]):
        shown = "–" if ratio is None else f"{ratio:.2f}"
        print(f"| {name} | `{kernel}` | {alu:.2f} | {int(shared)} | {removed} | {price:.2f} | {shown} |")


def timings(path):
    """{(program, when, index): median µs of one launch}"""
    return {(r["program"], r["when"], r["index"]): number(r["median_us"]) for r in read_tsv(path)}


def short_name(program):
    return program.removeprefix("testdata_").removesuffix("_cu").replace("suite_", "suite/")


def print_times(cases, times):
    runs = "".join(f" run {n + 1}, µs |" for n in range(len(times)))
    print(f"| file | kernel |{runs} after / before |")
    print("|---|---|" + "--:|" * (len(times) + 1))
    for case in cases:
        program, index = case["program"], case["index"]
        medians = [(run.get((program, "before", index)), run.get((program, "after", index))) for run in times]
        cells = "".join(f" {arrow(before, after, 1)} |" for before, after in medians)
        ratio = time_ratio(program, index, times)
        ratio = "–" if ratio is None else f"{ratio:.2f}"
        print(f"| {short_name(program)} | `{case['kernel']}` |{cells} {ratio} |")


if __name__ == "__main__":
    main()
