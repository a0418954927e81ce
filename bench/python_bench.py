#!/usr/bin/env python3
"""Speed of dlbridge's Python DLPack exchange against NumPy's own, in one run.

    PYTHONPATH=<build>/python /usr/bin/python3 bench/python_bench.py [--rounds R] [--number N] [--check]
    /usr/bin/python3 bench/python_bench.py --lanes [--rounds R] [--number N]

--lanes builds the Python module optimised in both CI lanes, as pip builds it (libdlbridge static
inside the extension, see PY-31), and runs this script in each:
the host (Debian 12: Python 3.11, NumPy 1.24; build/bench-python) and the newest stack
(scripts/test-newest's Debian unstable root: Python 3.14, NumPy 2.x; build/newest-bench-python),
one after the other, each lane's ratios from its own interleaved run.

Measures (stdlib timeit) R rounds of N calls of each statement, the statements interleaved in
every round (their order alternating), so that each round's three timings share the machine's
load and clock of that moment:
  baseline   np.from_dlpack(ndarray)
  export     np.from_dlpack(dlbridge.Tensor)      -> ratio export / baseline
  import     dlbridge.from_dlpack(ndarray)        -> ratio import / baseline
A ratio is the median over the rounds of that round's ratio (a busy or throttled moment slows
the whole round, not one statement); the nanoseconds are each statement's fastest round.
Goal (issue 22): both ratios <= 1.0 on both lanes. --check exits 1 when a ratio is above it.
Each measured call includes dropping its result, so deleters and releases are timed too.
"""
import argparse
import os
import statistics
import subprocess
import sys
import timeit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_lanes(rounds, number):
    """Builds the module (Release) in each lane and runs this script there; returns 1 if
    either lane failed to build or run."""
    configure = ("cmake -S . -B {b} -G Ninja -DCMAKE_BUILD_TYPE=Release -DDLBRIDGE_BUILD_TESTS=OFF "
                 "-DDLBRIDGE_BUILD_EXAMPLES=OFF -DDLBRIDGE_BUILD_BRIDGES=OFF -DBUILD_SHARED_LIBS=OFF "
                 ">/dev/null && "
                 "cmake --build {b} --target dlbridge_python >/dev/null && "
                 "PYTHONPATH={b}/python {py} bench/python_bench.py --rounds {r} --number {n}")
    lanes = [("host (Debian 12)", ["bash", "-c", "scripts/setup >/dev/null && " + configure.format(
                 b="build/bench-python", py="/usr/bin/python3", r=rounds, n=number)]),
             ("newest (Debian unstable)", ["scripts/test-newest", "--", "bash", "-c", configure.format(
                 b="build/newest-bench-python", py="python3", r=rounds, n=number)])]
    status = 0
    for name, command in lanes:
        print("== lane: %s" % name, flush=True)
        status |= subprocess.call(command, cwd=ROOT)
    return 1 if status else 0


if "--lanes" in sys.argv[1:]:
    _lane_args = argparse.ArgumentParser()
    _lane_args.add_argument("--lanes", action="store_true")
    _lane_args.add_argument("--rounds", type=int, default=500)
    _lane_args.add_argument("--number", type=int, default=2000)
    _lanes = _lane_args.parse_args()
    sys.exit(run_lanes(_lanes.rounds, _lanes.number))

import numpy as np  # noqa: E402 (--lanes needs neither)

import dlbridge  # noqa: E402

GOAL = 1.0


def paired_rounds(stmts, rounds, number, env):
    """Nanoseconds per call of each statement in each round, the statements interleaved in
    every round and their order reversed every other round."""
    timers = [timeit.Timer(stmt, globals=env) for stmt in stmts]
    samples = [[] for _ in stmts]
    for r in range(rounds):
        order = range(len(timers)) if r % 2 == 0 else reversed(range(len(timers)))
        for i in order:
            samples[i].append(timers[i].timeit(number) / number * 1e9)
    return samples


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=500, help="interleaved rounds")
    parser.add_argument("--number", type=int, default=2000, help="calls per statement and round")
    parser.add_argument("--check", action="store_true", help="exit 1 if a ratio exceeds the goal")
    args = parser.parse_args()

    array = np.arange(16, dtype=np.float32).reshape(4, 4)
    tensor = dlbridge.from_dlpack(np.arange(16, dtype=np.float32).reshape(4, 4))
    env = {"np": np, "dlbridge": dlbridge, "array": array, "tensor": tensor}

    # Warm up (type caches, allocator pools).
    for _ in range(1000):
        np.from_dlpack(array)
        np.from_dlpack(tensor)
        dlbridge.from_dlpack(array)

    baseline, export, imported = paired_rounds(
        ["np.from_dlpack(array)", "np.from_dlpack(tensor)", "dlbridge.from_dlpack(array)"],
        args.rounds, args.number, env)
    export_ratio = statistics.median(e / b for e, b in zip(export, baseline))
    import_ratio = statistics.median(i / b for i, b in zip(imported, baseline))

    print(f"numpy {np.__version__}, dlbridge {dlbridge.__version__}, Python {sys.version.split()[0]}"
          f"; {args.rounds} rounds of {args.number} calls")
    print(f"np.from_dlpack(ndarray)          {min(baseline):8.1f} ns")
    print(f"np.from_dlpack(dlbridge.Tensor)  {min(export):8.1f} ns   ratio {export_ratio:.2f}")
    print(f"dlbridge.from_dlpack(ndarray)    {min(imported):8.1f} ns   ratio {import_ratio:.2f}")
    print(f"goal: both ratios <= {GOAL}")
    if args.check and max(export_ratio, import_ratio) > GOAL:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
