#!/usr/bin/env python3
"""bench/instructions' tables: instructions per operation from callgrind's dumps.

    instructions_report.py --parse DIR RUNS           one "name Ir-per-op" line per dump
    instructions_report.py --after FILE [--before FILE --before-name R] [--runs N] [--docs MD]
                           [--torch-unavailable]

--torch-unavailable: the libtorch process failed under valgrind (and ran without it), so its
rows say so instead of counts.
--docs rewrites the section of MD between <!-- instructions:begin --> and
<!-- instructions:end --> with the tables. The goals (issue 17) are reported, never asserted.
"""
import argparse
import glob
import re
import sys

NDIMS = [1, 2, 4, 8, 16, 32, 64]
OPS = [
    ("floor", "`malloc` + `free` of the export block (the floor)"),
    ("export", "export + deleter"),
    ("import", "import + release"),
    ("roundtrip", "round trip (export, import, drop)"),
    ("reexport", "re-export of an unchanged import + deleter"),
    ("torch_export", "libtorch `at::toDLPack` + deleter"),
    ("torch_import", "libtorch `at::fromDLPack` + drop"),
    ("torch_roundtrip", "libtorch `at::fromDLPack(at::toDLPack(t))` + drop"),
]
# (operation, goal in instructions at ndim 4)
GOALS = [("import", 200), ("export", 300), ("roundtrip", 400), ("reexport", 300)]
BEGIN, END = "<!-- instructions:begin -->", "<!-- instructions:end -->"


def parse(directory, runs):
    for path in sorted(glob.glob(directory + "/out.*"), key=lambda p: int(p.rsplit(".", 1)[1])):
        text = open(path).read()
        name = re.search(r"^desc: Trigger: Client Request: (\S+)", text, re.M)
        total = re.search(r"^(?:totals|summary): (\d+)", text, re.M)
        if name and total:
            print(f"{name.group(1)} {int(total.group(1)) / runs:.1f}")


def load(path):
    counts = {}
    for line in open(path):
        name, value = line.split()
        counts[name] = float(value)
    return counts


def cell(after, before, key):
    a = after.get(key)
    if a is None:
        return "—"
    if before is None:
        return f"{a:,.0f}"
    b = before.get(key)
    return f"{a:,.0f}" if b is None else f"{b:,.0f} → {a:,.0f}"


TORCH_UNAVAILABLE = "unavailable (valgrind cannot run libtorch here)"


def tables(after, before, before_name, runs, torch_unavailable=False):
    out = []
    head = "dlbridge" if before is None else f"`{before_name}` → this tree"
    out.append(f"Instructions per operation ({head}; callgrind, {runs} runs each, "
               "`bench/instructions_ops.cpp` says what each operation includes):")
    out.append("")
    out.append("| operation | " + " | ".join(f"ndim {n}" for n in NDIMS) + " |")
    out.append("|---|" + "---:|" * len(NDIMS))
    for op, label in OPS:
        cells = [cell(after, before, f"{op}/ndim:{n}") for n in NDIMS]
        if torch_unavailable and op.startswith("torch_"):
            cells = [TORCH_UNAVAILABLE] + ["—"] * (len(NDIMS) - 1)
        elif all(c == "—" for c in cells):
            continue
        out.append(f"| {label} | " + " | ".join(cells) + " |")
    out.append("")
    out.append("By buffer size (1-d uint8; the 1 GiB range is described, never touched):")
    out.append("")
    out.append("| operation | 1 KiB | 1 GiB |")
    out.append("|---|---:|---:|")
    for op, label in OPS[1:5]:
        out.append(f"| {label} | {cell(after, before, f'{op}/bytes:1KiB')} | "
                   f"{cell(after, before, f'{op}/bytes:1GiB')} |")
    out.append("")
    out.append("Goals (issue 17, ndim 4; reported, not asserted):")
    out.append("")
    out.append("| goal | measured | |")
    out.append("|---|---:|---|")
    floor = after.get("floor/ndim:4", 0)
    for op, goal in GOALS:
        value = after.get(f"{op}/ndim:4")
        if value is None:
            continue
        label = dict(OPS)[op]
        extra = f" ({value / floor:.2f}× the floor)" if op == "export" and floor else ""
        out.append(f"| {label} ≤ {goal} | {value:,.0f}{extra} | "
                   f"{'met' if value <= goal else 'missed'} |")
    if floor and "export/ndim:4" in after:
        ratio = after["export/ndim:4"] / floor
        out.append(f"| export ≤ 2.2× the floor | {ratio:.2f}× | {'met' if ratio <= 2.2 else 'missed'} |")
    for op, label in OPS[1:5]:
        lo, hi = after.get(f"{op}/ndim:1"), after.get(f"{op}/ndim:64")
        if lo is not None and hi is not None:
            out.append(f"| {label}: slope per dimension (ndim 1 → 64) | {(hi - lo) / 63:.1f} | |")
    for op, label in OPS[1:5]:
        small, big = after.get(f"{op}/bytes:1KiB"), after.get(f"{op}/bytes:1GiB")
        if small is not None and big is not None:
            out.append(f"| {label}: 1 GiB against 1 KiB | {big - small:+.0f} | "
                       f"{'flat' if abs(big - small) <= 2 else 'not flat'} |")
    torch = after.get("torch_roundtrip/ndim:4")
    if torch and "roundtrip/ndim:4" in after:
        out.append(f"| round trip against libtorch's | {torch / after['roundtrip/ndim:4']:.1f}× "
                   "fewer | |")
    return "\n".join(out)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--parse", nargs=2, metavar=("DIR", "RUNS"))
    parser.add_argument("--after")
    parser.add_argument("--before")
    parser.add_argument("--before-name", default="before")
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--docs")
    parser.add_argument("--torch-unavailable", action="store_true")
    args = parser.parse_args()
    if args.parse:
        parse(args.parse[0], int(args.parse[1]))
        return 0
    after = load(args.after)
    if not after:
        print("bench/instructions: callgrind wrote no counts", file=sys.stderr)
        return 1
    before = load(args.before) if args.before else None
    text = tables(after, before, args.before_name, args.runs, args.torch_unavailable)
    print(text)
    if args.docs:
        doc = open(args.docs).read()
        if BEGIN not in doc or END not in doc:
            print(f"bench/instructions: {args.docs} has no {BEGIN} … {END} section", file=sys.stderr)
            return 1
        head, rest = doc.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        open(args.docs, "w").write(head + BEGIN + "\n" + text + "\n" + END + tail)
    return 0


if __name__ == "__main__":
    sys.exit(main())
