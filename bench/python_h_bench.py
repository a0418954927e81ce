#!/usr/bin/env python3
"""Speed of dlbridge/python.h in a C++ extension against NumPy's own exchange, in one run.

    PYTHONPATH=<build>/python:<build>/tests/python_h /usr/bin/python3 bench/python_h_bench.py [--number N]

Measures (stdlib timeit, best of 5 repeats, interleaved; nanoseconds per call), with the
extension tests/python_h/python_h_raw.cpp (the raw C API):
  baseline        np.from_dlpack(ndarray)
  FromPyObject    of an ndarray (its __dlpack__, capsule, FromDLPack, NumPy's deleter)
  NoSync ndarray  FromPyObjectNoSync of an ndarray (NumPy has no exchange API: the fallback)
  NoSync Tensor   FromPyObjectNoSync of a dlbridge.Tensor (its __dlpack_c_exchange_api__: N0)
  ToCapsule       np.from_dlpack of an object whose __dlpack__ is ToCapsuleForMaxVersion of a
                  new C++ tensor (allocation, export, capsule, NumPy's import, the release)
Each ratio is against the baseline. Each measured call includes dropping its result. Nothing is
asserted: this reports (issue "Bridges").
"""
import argparse
import sys
import timeit

import numpy as np

import dlbridge
import python_h_raw


def best_ns(stmts, number, env, repeat=5):
    """Best of `repeat` for each statement, interleaved in each round so that load from other
    processes drifts over all of them alike."""
    timers = [timeit.Timer(stmt, globals=env) for stmt in stmts]
    best = [float("inf")] * len(stmts)
    for _ in range(repeat):
        for i, timer in enumerate(timers):
            best[i] = min(best[i], timer.timeit(number))
    return [b / number * 1e9 for b in best]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=100000, help="calls per repeat")
    args = parser.parse_args()

    array = np.arange(16, dtype=np.float32).reshape(4, 4)
    tensor = dlbridge.from_dlpack(np.arange(16, dtype=np.float32).reshape(4, 4))
    exporter = python_h_raw.Exporter()
    env = {"np": np, "h": python_h_raw, "array": array, "tensor": tensor, "exporter": exporter}
    cases = [
        ("np.from_dlpack(ndarray)", "np.from_dlpack(array)"),
        ("FromPyObject(ndarray)", "h.import_drop(array)"),
        ("FromPyObjectNoSync(ndarray)", "h.view_drop(array)"),
        ("FromPyObjectNoSync(dlbridge.Tensor)", "h.view_drop(tensor)"),
        ("np.from_dlpack(ToCapsule)", "np.from_dlpack(exporter)"),
    ]
    for _ in range(1000):  # warm up (type caches, allocator pools)
        for _, stmt in cases:
            eval(stmt, env)

    times = best_ns([stmt for _, stmt in cases], args.number, env)
    baseline = times[0]
    print(f"numpy {np.__version__}, dlbridge {dlbridge.__version__}, Python {sys.version.split()[0]}")
    for (name, _), ns in zip(cases, times):
        print(f"{name:38s} {ns:8.1f} ns   ratio {ns / baseline:.2f}")


if __name__ == "__main__":
    main()
