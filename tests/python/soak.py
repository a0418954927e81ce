"""PY-56: a bounded soak of the Python module (run by .ci/run; not a unittest file).

Repeats exchanges of every kind — versioned and legacy capsules, NumPy and PyTorch both
directions, the DLPack 1.3 exchange API, copies, failed imports, re-exports, the live-export
refusals and collected ownership cycles — for --seconds, then fails (exit 1) when the resident
set grew by more than --max-growth-mib between the end of the warm-up and the end, or when a
counted release or deleter ran other than exactly once per tensor.

    PYTHONPATH=<build>/python /usr/bin/python3 tests/python/soak.py --seconds 60
"""
import argparse
import ctypes
import gc
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import dlbridge  # noqa: E402
from support import (DELETER, DLManagedTensorVersioned, HandBuilt, address_of,  # noqa: E402
                     exchange_api)

try:
    import torch
except ImportError:  # the soak still covers everything else
    torch = None


def rss_kib():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS in /proc/self/status")


class Releases:
    """A C release that checks exactly-once in bounded memory: the contexts not yet released."""

    def __init__(self):
        self.pending = set()
        self.made = 0
        self.wrong = 0  # calls for a context never made or already released
        self._fn = DELETER(self._called)
        self.address = address_of(self._fn)

    def next_context(self):
        self.made += 1
        self.pending.add(self.made)
        return self.made

    def _called(self, context):
        try:
            self.pending.remove(context)
        except KeyError:
            self.wrong += 1


class Soak:
    def __init__(self):
        self.releases = Releases()
        self.failed_imports = []  # HandBuilt tensors given to failing imports
        self.api = exchange_api()
        self.values = (ctypes.c_float * 64)(*range(64))

    def counted(self, shape=(8, 8)):
        md = dlbridge.MemoryDescriptor(address_of(self.values), ctypes.sizeof(self.values), "host")
        md.SetReleaseAddress(self.releases.address, self.releases.next_context())
        return dlbridge.Tensor(md, "float32", shape)

    def check(self, condition, what):
        if not condition:
            raise AssertionError(what)

    def round(self):
        t = self.counted()
        # Capsules, both kinds, into dlbridge; re-exports of the imports.
        for capsule in (t.__dlpack__(max_version=(1, 3)), t.__dlpack__()):
            imported = dlbridge.from_dlpack(capsule)
            again = dlbridge.from_dlpack(imported)
            self.check(again.descriptor.GetPointer() == address_of(self.values), "re-export pointer")
        del capsule, imported, again  # each import holds an export of t until it goes
        # An unconsumed capsule dropped: its destructor deletes it.
        t.__dlpack__(max_version=(1, 3))
        # NumPy both directions, and dlbridge's import of NumPy's array exported again.
        a = np.from_dlpack(t)
        self.check(a[1, 1] == 9.0, "numpy import")
        back = dlbridge.from_dlpack(np.arange(6, dtype=np.float32))
        self.check(np.from_dlpack(back)[5] == 5.0, "numpy re-export")
        # The hold rule: refused while NumPy reads the memory.
        try:
            dlbridge.Tensor(t.descriptor, "float32", (8, 8))
            raise AssertionError("the hold moved out while an export was live")
        except BufferError:
            pass
        del a, back
        # The exchange API, both ways.
        out = ctypes.POINTER(DLManagedTensorVersioned)()
        self.check(self.api.managed_tensor_from_py_object_no_sync(t, ctypes.byref(out)) == 0, "api")
        obj = ctypes.c_void_p()
        self.check(self.api.managed_tensor_to_py_object_no_sync(out, ctypes.byref(obj)) == 0, "api")
        imported = ctypes.cast(obj, ctypes.py_object).value
        ctypes.pythonapi.Py_DecRef(imported)  # the function returned a new reference
        del imported
        # Copies, both kinds.
        dlbridge.from_dlpack(t.__dlpack__(max_version=(1, 3), copy=True))
        dlbridge.from_dlpack(t.__dlpack__(copy=True))
        # PyTorch both directions.
        if torch is not None:
            x = torch.from_dlpack(t)
            self.check(float(x[0, 3]) == 3.0, "torch import")
            y = dlbridge.from_dlpack(torch.arange(6, dtype=torch.float32))
            self.check(torch.from_dlpack(y)[5] == 5.0, "torch re-export")
            del x, y
        # A failed import: the deleter runs once.
        bad = HandBuilt(versioned=True, dtype=(2, 33, 1))
        try:
            dlbridge.from_dlpack(bad.capsule())
            raise AssertionError("a bad dtype was imported")
        except (ValueError, BufferError):
            pass
        self.failed_imports.append(bad)
        if len(self.failed_imports) > 64:
            self.check(all(b.deletes == 1 for b in self.failed_imports), "failed import deletes")
            self.failed_imports.clear()
        # A hold moved out through a view once nothing relies on it.
        moved = dlbridge.Tensor(t.descriptor, "float32", (8, 8))
        del t
        # An ownership cycle, freed by the collector.
        moved.descriptor.SetOwner([moved])
        del moved

    def run(self, seconds, warmup, max_growth_mib):
        start = time.monotonic()
        baseline = None
        rounds = 0
        while True:
            elapsed = time.monotonic() - start
            if baseline is None and elapsed >= warmup:
                gc.collect()
                baseline = rss_kib()
            if elapsed >= seconds:
                break
            self.round()
            rounds += 1
            if rounds % 200 == 0:
                gc.collect()
        gc.collect()
        end = rss_kib()
        self.check(all(b.deletes == 1 for b in self.failed_imports), "failed import deletes")
        # Every counted tensor released exactly once.
        problems = []
        if self.releases.pending or self.releases.wrong:
            problems.append("releases: %d of %d tensors not released, %d calls for no tensor"
                            % (len(self.releases.pending), self.releases.made, self.releases.wrong))
        growth_mib = (end - baseline) / 1024.0
        if growth_mib > max_growth_mib:
            problems.append("resident set grew by %.1f MiB after the warm-up (limit %.1f)"
                            % (growth_mib, max_growth_mib))
        print("soak: %d rounds in %.0f s, %d counted tensors, RSS %d -> %d KiB%s"
              % (rounds, seconds, self.releases.made, baseline, end,
                 "" if torch is not None else " (no torch)"))
        for problem in problems:
            print("soak: FAILED: " + problem)
        return 1 if problems else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--warmup", type=float, default=None,
                        help="seconds before the baseline RSS (default: a fifth of --seconds)")
    parser.add_argument("--max-growth-mib", type=float, default=8.0)
    args = parser.parse_args()
    warmup = args.seconds / 5.0 if args.warmup is None else args.warmup
    return Soak().run(args.seconds, warmup, args.max_growth_mib)


if __name__ == "__main__":
    sys.exit(main())
