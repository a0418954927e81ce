#!/usr/bin/python3
"""Turns dlbridge_bench's Google Benchmark JSON into the table of docs/benchmarks.md.

    /usr/bin/python3 bench/report.py RESULTS.json            # markdown table, goals marked
    /usr/bin/python3 bench/report.py --smoke RESULTS.json    # exit 1 if a benchmark failed

Each row is a benchmark against its baseline (ratio = benchmark / baseline, CPU time per
operation, the median when the run had repetitions). The goals of the issue "Benchmarks" are
reported, never asserted: --smoke checks only that everything ran and no check inside a
benchmark (each deleter and release once per operation) failed.
"""
import argparse
import json
import statistics
import sys

NDIMS = (1, 4, 8)
SIZES = tuple(1 << s for s in range(10, 31, 5))  # 1 KiB .. 1 GiB, as bench_dlbridge.cpp
TO_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
ZERO_ALLOCS = 1e-3  # counts are exact totals over the iterations; anything above is an allocation
# Benchmarks every build has; libtorch's are optional (Debian libtorch-dev).
REQUIRED = ("Floor/", "ToDLPackVersioned/", "ToDLPack/", "FromDLPack/", "RoundTrip/",
            "ReExport/", "RoundTripBytes/", "Memcpy/")


def load(path):
    with open(path) as f:
        data = json.load(f)
    runs, errors = {}, []
    for b in data["benchmarks"]:
        name = b.get("run_name", b["name"])
        if b.get("error_occurred"):
            errors.append(f"{name}: {b.get('error_message', 'error')}")
            continue
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        entry = runs.setdefault(name, {"samples": [], "median": None, "allocs": None})
        ns = b["cpu_time"] * TO_NS[b.get("time_unit", "ns")]
        if b.get("run_type") == "aggregate":
            entry["median"] = ns
        else:
            entry["samples"].append(ns)
        if "allocs_per_op" in b:
            entry["allocs"] = b["allocs_per_op"]
        if "event_creations_per_exchange" in b:
            entry["events"] = b["event_creations_per_exchange"]
    for entry in runs.values():
        entry["ns"] = entry["median"] if entry["median"] is not None else (
            statistics.median(entry["samples"]) if entry["samples"] else None)
    return data.get("context", {}), runs, errors


def fmt_time(ns):
    if ns is None:
        return "—"
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.3g} ns"


def fmt_ratio(r):
    return "—" if r is None else f"{r:.3g}×"


def fmt_allocs(a):
    if a is None:
        return ""
    return "0" if a < ZERO_ALLOCS else f"{a:.3g}"


class Table:
    def __init__(self, runs):
        self.runs = runs
        self.rows = []
        self.met = self.missed = 0

    def section(self, title):
        self.rows.append(f"| **{title}** | | | | | | | |")

    def row(self, name, baseline, limit=None, goal_text="", zero_allocs=False):
        """limit: the goal is ratio <= limit; zero_allocs: the goal also needs 0 allocations."""
        run, base = self.runs.get(name), self.runs.get(baseline)
        if run is None or base is None:
            if run is not None or base is not None:
                missing = baseline if run is not None else name
                self.rows.append(f"| {name} | | | {baseline} | | | {goal_text} | "
                                 f"not run ({missing} missing) |")
            return
        ratio = run["ns"] / base["ns"] if run["ns"] and base["ns"] else None
        status = ""
        if limit is not None or zero_allocs:
            why = []
            if limit is not None and (ratio is None or ratio > limit):
                why.append("time")
            if zero_allocs and (run["allocs"] is None or run["allocs"] >= ZERO_ALLOCS):
                why.append("allocs")
            if why:
                self.missed += 1
                status = f"**missed** ({', '.join(why)})"
            else:
                self.met += 1
                status = "met"
        self.rows.append(f"| {name} | {fmt_time(run['ns'])} | {fmt_allocs(run['allocs'])} | "
                         f"{baseline} | {fmt_time(base['ns'])} | {fmt_ratio(ratio)} | "
                         f"{goal_text} | {status} |")


def build(runs):
    t = Table(runs)
    t.section("Export + deleter (goal: ≤ 1.5× the floor)")
    for api, floor in (("ToDLPackVersioned", "versioned"), ("ToDLPack", "legacy")):
        for hold in ("owner", "release"):
            for n in NDIMS:
                t.row(f"{api}/{hold}/ndim:{n}", f"Floor/{floor}/ndim:{n}", 1.5, "≤ 1.5×")
    t.section("Import + release (goal: ≤ 0.5× the floor, 0 allocations)")
    for form in ("versioned", "legacy"):
        for n in NDIMS:
            t.row(f"FromDLPack/{form}/ndim:{n}", f"Floor/{form}/ndim:{n}", 0.5,
                  "≤ 0.5×, 0 allocs", zero_allocs=True)
    t.section("Round trip: export, import, drop "
              "(goal: ≤ 2× the floor, ≥ 30× faster than libtorch)")
    for hold in ("owner", "release"):
        for n in NDIMS:
            t.row(f"RoundTrip/{hold}/ndim:{n}", f"Floor/versioned/ndim:{n}", 2.0, "≤ 2×")
            t.row(f"RoundTrip/{hold}/ndim:{n}", f"Torch/RoundTrip/ndim:{n}", 1 / 30,
                  "≤ 1/30 (≥ 30× faster)")
    t.section("Re-export of an unchanged import (goal: ≤ 0.5× the floor, 0 allocations)")
    for form in ("versioned", "legacy"):
        for n in NDIMS:
            t.row(f"ReExport/{form}/ndim:{n}", f"Floor/{form}/ndim:{n}", 0.5,
                  "≤ 0.5×, 0 allocs", zero_allocs=True)
    t.section("Zero copy: host round trip by size, beside memcpy (goal: 1 GiB ≤ 1.1× 1 KiB)")
    first = f"RoundTripBytes/bytes:{SIZES[0]}"
    for size in SIZES[1:]:
        last = size == SIZES[-1]
        t.row(f"RoundTripBytes/bytes:{size}", first, 1.1 if last else None,
              "≤ 1.1×" if last else "")
    for size in SIZES:
        t.row(f"RoundTripBytes/bytes:{size}", f"Memcpy/bytes:{size}")
    t.section("Bridges: an exchange through each bridge beside the framework's own view of "
              "the same memory (information: the bridge's overhead as a number)")
    for bridge in ("eigen", "opencv", "vtk", "torch", "viskores", "mdspan"):
        t.row(f"Bridge/{bridge}/exchange", f"Bridge/{bridge}/floor")
        t.row(f"Bridge/{bridge}/exchange", "RoundTrip/owner/ndim:1")
    t.section("libtorch's own DLPack exchange (information)")
    for n in NDIMS:
        t.row(f"Torch/toDLPack/ndim:{n}", f"Floor/legacy/ndim:{n}")
        t.row(f"Torch/RoundTrip/ndim:{n}", f"Floor/versioned/ndim:{n}")
        t.row(f"ToDLPack/owner/ndim:{n}", f"Torch/toDLPack/ndim:{n}")
    return t


def header(context, runs):
    reps = max((len(r["samples"]) for r in runs.values()), default=1)
    how = "median of the repetitions" if any(r["median"] is not None for r in runs.values()) \
        else f"median of {reps} run(s)"
    lines = [
        f"Machine: {context.get('cpu_model', '?')}, {context.get('num_cpus', '?')} CPUs "
        f"(nproc), {context.get('mhz_per_cpu', '?')} MHz, load average "
        f"{', '.join(f'{x:.2f}' for x in context.get('load_avg', [])) or '?'}; "
        f"{context.get('date', '?')}.",
        f"Build: {context.get('compiler', '?')}, dlbridge {context.get('dlbridge_version', '?')}, "
        f"DLPack header {context.get('dlpack_header', '?')}, libtorch baseline: "
        f"{context.get('torch_baseline', '?')}; Google Benchmark's own library build: "
        f"{context.get('library_build_type', '?')}.",
        f"Times: CPU time per operation, {how}. Floor = `malloc`+`free` of the export block's "
        "size (sizeof(managed struct) + release, context, owner reference + 2·ndim·8 bytes). "
        "allocs/op counts every heap allocation of the benchmark's thread (interposed "
        "`malloc` family and `operator new`).",
        "",
        "| Benchmark | time/op | allocs/op | Baseline | baseline time/op | ratio | goal | |",
        "|---|---:|---:|---|---:|---:|---|---|",
    ]
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", help="Google Benchmark JSON (--benchmark_out)")
    parser.add_argument("--smoke", action="store_true",
                        help="check that every benchmark ran without error; print no table")
    args = parser.parse_args()
    context, runs, errors = load(args.results)
    absent = [p for p in REQUIRED if not any(name.startswith(p) for name in runs)]
    if args.smoke:
        for e in errors:
            print(f"bench smoke: FAILED {e}", file=sys.stderr)
        for p in absent:
            print(f"bench smoke: no benchmark {p}* ran", file=sys.stderr)
        torch = "with" if any(n.startswith("Torch/") for n in runs) else "without"
        print(f"bench smoke: {len(runs)} benchmarks ran ({torch} libtorch), "
              f"{len(errors)} failed")
        return 1 if errors or absent else 0
    table = build(runs)
    print("\n".join(header(context, runs) + table.rows))
    print()
    print(f"Goals met: {table.met} of {table.met + table.missed} rows.")
    order = runs.get("OrderStreams/fake_cuda")
    if order is not None and order.get("events") is not None:
        # STR-10: pooled events; before the pool every exchange created (and destroyed) one.
        goal = "met" if order["events"] == 0 else "missed"
        print(f"OrderStreams on the fake CUDA driver: {fmt_time(order['ns'])} per exchange, "
              f"{order['events']:g} event creations per exchange (goal 0: {goal}; was 1)")
    for e in errors:
        print(f"FAILED: {e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
