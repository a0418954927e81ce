#!/usr/bin/env python3
"""Speed of dlbridge's Python DLPack exchange against NumPy's own, in one run.

    PYTHONPATH=<build>/python /usr/bin/python3 bench/python_bench.py [--number N] [--check]
    /usr/bin/python3 bench/python_bench.py --lanes [--number N]

--lanes builds the Python module optimised in both CI lanes and runs this script in each:
the host (Debian 12: Python 3.11, NumPy 1.24; build/bench-python) and the newest stack
(scripts/test-newest's Debian unstable root: Python 3.14, NumPy 2.x; build/newest-bench-python),
one after the other, each lane's ratios from its own interleaved run.

Measures (stdlib timeit, best of 5 repeats, interleaved; nanoseconds per call):
  baseline   np.from_dlpack(ndarray)
  export     np.from_dlpack(dlbridge.Tensor)      -> ratio export / baseline
  import     dlbridge.from_dlpack(ndarray)        -> ratio import / baseline
Goal (issue 22): both ratios <= 1.0 on both lanes. --check exits 1 when a ratio is above it.
Each measured call includes dropping its result, so deleters and releases are timed too.
"""
import argparse
import os
import subprocess
import sys
import timeit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_lanes(number):
    """Builds the module (Release) in each lane and runs this script there; returns 1 if
    either lane failed to build or run."""
    configure = ("cmake -S . -B {b} -G Ninja -DCMAKE_BUILD_TYPE=Release -DDLBRIDGE_BUILD_TESTS=OFF "
                 "-DDLBRIDGE_BUILD_EXAMPLES=OFF -DDLBRIDGE_BUILD_BRIDGES=OFF >/dev/null && "
                 "cmake --build {b} --target dlbridge_python >/dev/null && "
                 "PYTHONPATH={b}/python {py} bench/python_bench.py --number {n}")
    lanes = [("host (Debian 12)", ["bash", "-c", "scripts/setup >/dev/null && " + configure.format(
                 b="build/bench-python", py="/usr/bin/python3", n=number)]),
             ("newest (Debian unstable)", ["scripts/test-newest", "--", "bash", "-c", configure.format(
                 b="build/newest-bench-python", py="python3", n=number)])]
    status = 0
    for name, command in lanes:
        print("== lane: %s" % name, flush=True)
        status |= subprocess.call(command, cwd=ROOT)
    return 1 if status else 0


if "--lanes" in sys.argv[1:]:
    _lane_args = argparse.ArgumentParser()
    _lane_args.add_argument("--lanes", action="store_true")
    _lane_args.add_argument("--number", type=int, default=200000)
    sys.exit(run_lanes(_lane_args.parse_args().number))

import numpy as np  # noqa: E402 (--lanes needs neither)

import dlbridge  # noqa: E402

GOAL = 1.0


def best_ns(stmts, number, env, repeat=5):
    """Best of `repeat` for each statement, the statements interleaved in each round so that
    load from other processes drifts over all of them alike."""
    timers = [timeit.Timer(stmt, globals=env) for stmt in stmts]
    best = [float("inf")] * len(stmts)
    for _ in range(repeat):
        for i, timer in enumerate(timers):
            best[i] = min(best[i], timer.timeit(number))
    return [b / number * 1e9 for b in best]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=200000, help="calls per repeat")
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

    baseline, export, imported = best_ns(
        ["np.from_dlpack(array)", "np.from_dlpack(tensor)", "dlbridge.from_dlpack(array)"],
        args.number, env)

    print(f"numpy {np.__version__}, dlbridge {dlbridge.__version__}, Python {sys.version.split()[0]}")
    print(f"np.from_dlpack(ndarray)          {baseline:8.1f} ns")
    print(f"np.from_dlpack(dlbridge.Tensor)  {export:8.1f} ns   ratio {export / baseline:.2f}")
    print(f"dlbridge.from_dlpack(ndarray)    {imported:8.1f} ns   ratio {imported / baseline:.2f}")
    print(f"goal: both ratios <= {GOAL}")
    if args.check and max(export, imported) / baseline > GOAL:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
