#!/usr/bin/env python3
"""Speed of dlbridge's Python DLPack exchange against NumPy's own, in one run.

    PYTHONPATH=<build>/python /usr/bin/python3 bench/python_bench.py [--rounds R] [--number N] [--check]
                                                                     [--smoke] [--nanobind-dir DIR]
    /usr/bin/python3 bench/python_bench.py --lanes [--rounds R] [--number N]

--lanes builds the Python module optimised in both CI lanes, as pip builds it (libdlbridge static
inside the extension, see PY-31), and runs this script in each:
the host (Debian 12: Python 3.11, NumPy 1.24; build/bench-python) and the newest stack
(scripts/test-newest's Debian unstable root: Python 3.14, NumPy 2.x; build/newest-bench-python),
one after the other, each lane's ratios from its own interleaved run.

Measures (stdlib timeit) R rounds of N calls of each statement, the statements interleaved in
every round (their order alternating), so that each round's timings share the machine's
load and clock of that moment:
  baseline   np.from_dlpack(ndarray)
  export     np.from_dlpack(dlbridge.Tensor)      -> ratio export / baseline
  import     dlbridge.from_dlpack(ndarray)        -> ratio import / baseline
and, where the peer is installed (issue 35; else a line says why it is skipped), the other DLPack
speakers in the same rounds, each as a ratio against the same baseline:
  pyarrow    np.from_dlpack(pa.Array), dlbridge.from_dlpack(pa.Array)   (pyarrow's export)
  nanobind   an nb::ndarray parameter taking an ndarray and a dlbridge.Tensor; an nb::ndarray
             returned (a view, no allocation) into np.from_dlpack and dlbridge.from_dlpack
             (tests/peers/nanobind_peer, found on PYTHONPATH or in --nanobind-dir)
A ratio is the median over the rounds of that round's ratio (a busy or throttled moment slows
the whole round, not one statement); the nanoseconds are each statement's fastest round.
Goal (issue 22): the export and import ratios <= 1.0 on both lanes. --check exits 1 when one is
above it (the peers' ratios are measured, not goals). Each measured call includes dropping its
result, so deleters and releases are timed too. --smoke: a few short rounds, to check that every
lane runs (nothing about time is asserted).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import timeit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_lanes(rounds, number):
    """Builds the module (Release) in each lane and runs this script there; returns 1 if
    either lane failed to build or run."""
    # DLBRIDGE_BUILD_BENCHMARKS configures tests/peers (the nanobind peer, where nanobind is).
    configure = ("cmake -S . -B {b} -G Ninja -DCMAKE_BUILD_TYPE=Release -DDLBRIDGE_BUILD_TESTS=OFF "
                 "-DDLBRIDGE_BUILD_BENCHMARKS=ON "
                 "-DDLBRIDGE_BUILD_EXAMPLES=OFF -DDLBRIDGE_BUILD_BRIDGES=OFF -DBUILD_SHARED_LIBS=OFF "
                 ">/dev/null && "
                 "cmake --build {b} --target dlbridge_python >/dev/null && "
                 "{{ cmake --build {b} --target nanobind_peer >/dev/null 2>&1 || true; }} && "
                 "PYTHONPATH={b}/python:{b}/tests/peers {py} bench/python_bench.py --rounds {r} --number {n}")
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


def peers(nanobind_dir):
    """(name, statements, env, skip reason) for each peer lane; statements are (label, code)."""
    lanes = []
    try:
        import pyarrow as pa
    except ImportError as e:
        lanes.append(("pyarrow", [], {}, "pyarrow is not installed (%s)" % e))
    else:
        arrow = pa.array(np.arange(16, dtype=np.float32))
        lanes.append(("pyarrow %s" % pa.__version__, [
            ("np.from_dlpack(pa.Array)", "np.from_dlpack(arrow)"),
            ("dlbridge.from_dlpack(pa.Array)", "dlbridge.from_dlpack(arrow)")], {"arrow": arrow}, None))
    if nanobind_dir:
        sys.path.insert(0, nanobind_dir)
    try:
        import nanobind_peer as nbp
    except ImportError as e:
        lanes.append(("nanobind", [], {}, "the nanobind peer extension is not built or not on "
                      "PYTHONPATH (tests/peers; %s)" % e))
    else:
        try:
            import nanobind
            version = " " + nanobind.__version__
        except (ImportError, AttributeError):
            version = ""
        lanes.append(("nanobind" + version, [
            ("nb::ndarray takes ndarray", "nbp.take(array)"),
            ("nb::ndarray takes dlbridge.Tensor", "nbp.take(tensor)"),
            ("np.from_dlpack(nb::ndarray returned)", "np.from_dlpack(nbp.view())"),
            ("dlbridge.from_dlpack(nb::ndarray returned)", "dlbridge.from_dlpack(nbp.view())")],
            {"nbp": nbp}, None))
    return lanes


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=500, help="interleaved rounds")
    parser.add_argument("--number", type=int, default=2000, help="calls per statement and round")
    parser.add_argument("--check", action="store_true", help="exit 1 if a ratio exceeds the goal")
    parser.add_argument("--smoke", action="store_true", help="a few short rounds: every lane runs")
    parser.add_argument("--json", help="also write the ratios here (scripts/figures --python)")
    parser.add_argument("--nanobind-dir", default=os.environ.get("DLBRIDGE_NANOBIND_PEER_DIR"),
                        help="where nanobind_peer was built (<build>/tests/peers)")
    args = parser.parse_args()
    if args.smoke:
        args.rounds, args.number = 3, 20

    array = np.arange(16, dtype=np.float32).reshape(4, 4)
    tensor = dlbridge.from_dlpack(np.arange(16, dtype=np.float32).reshape(4, 4))
    env = {"np": np, "dlbridge": dlbridge, "array": array, "tensor": tensor}
    lanes = peers(args.nanobind_dir)
    stmts = ["np.from_dlpack(array)", "np.from_dlpack(tensor)", "dlbridge.from_dlpack(array)"]
    for _name, statements, lane_env, skip in lanes:
        if skip is None:
            env.update(lane_env)
            stmts += [code for _label, code in statements]

    # Warm up (type caches, allocator pools).
    warm = [compile(code, "<warm-up>", "eval") for code in stmts]
    for _ in range(1000 if not args.smoke else 10):
        for code in warm:
            eval(code, env)  # noqa: S307 - the benchmark's own statements

    samples = paired_rounds(stmts, args.rounds, args.number, env)
    baseline, export, imported = samples[:3]
    ratio = [statistics.median(x / b for x, b in zip(s, baseline)) for s in samples]
    export_ratio, import_ratio = ratio[1], ratio[2]

    print(f"numpy {np.__version__}, dlbridge {dlbridge.__version__}, Python {sys.version.split()[0]}"
          f"; {args.rounds} rounds of {args.number} calls")
    print(f"np.from_dlpack(ndarray)          {min(baseline):8.1f} ns")
    print(f"np.from_dlpack(dlbridge.Tensor)  {min(export):8.1f} ns   ratio {export_ratio:.2f}")
    print(f"dlbridge.from_dlpack(ndarray)    {min(imported):8.1f} ns   ratio {import_ratio:.2f}")
    i = 3
    for name, statements, _env, skip in lanes:
        if skip is not None:
            print(f"{name}: skipped: {skip}")
            continue
        print(f"{name}, in the same rounds, against np.from_dlpack(ndarray):")
        for label, _code in statements:
            print(f"  {label:42s} {min(samples[i]):8.1f} ns   ratio {ratio[i]:.2f}")
            i += 1
    print(f"goal: the export and import ratios <= {GOAL}")
    if args.json:
        rows = [{"label": "np.from_dlpack(dlbridge.Tensor)", "ratio": export_ratio},
                {"label": "dlbridge.from_dlpack(ndarray)", "ratio": import_ratio}]
        i = 3
        for _name, statements, _env, skip in lanes:
            if skip is None:
                for label, _code in statements:
                    rows.append({"label": label, "ratio": ratio[i]})
                    i += 1
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"ratios": rows}, fh, indent=1)
    if args.check and max(export_ratio, import_ratio) > GOAL:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
