"""GPU check, copies and timings (run by tests/gpu/run.sh; spec/python.md PY-64..PY-66): values
checked after every copy dlbridge makes between the host and a CUDA device (D2H, H2D, D2D,
through __dlpack__(dl_device=..., copy=...) and dlbridge.from_dlpack(device=...)), NumPy 2's
np.from_dlpack(t, device="cpu") of a dlbridge GPU tensor, then a timing table written as a
Markdown report (the lead commits it under spec/reports/):

  - one DLPack exchange (a consumer's from_dlpack of a producer's tensor) of 4 KiB and of
    4 GiB, ordered (the consumer on another stream: an event recorded and waited on) and
    unordered (the consumer on the producer's stream), dlbridge.Tensor -> CuPy against
    PyTorch -> CuPy in the same run;
  - the D2H copy bandwidth of __dlpack__(dl_device=(1, 0)) against a plain cudaMemcpy into
    host memory of the same kind (pageable), in the same run.

Exits 1 on any wrong value or failed row, 0 otherwise; frameworks that are not installed are
skipped, not failed.

    copies.py [--report FILE]            on a machine with a GPU (PyTorch and CuPy optional)
    copies.py --fake LIBRARY [--report FILE]
                                         without one: dlbridge loads the fake CUDA driver
                                         (tests/fakes), whose "device memory" is host memory;
                                         the copy rows run unchanged, the timings on small
                                         sizes only (meaningless numbers, the code exercised).
                                         tests/python/test_gpu_script.py runs it so."""
import argparse
import ctypes
import os
import sys
import timeit
import traceback

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30


def parse():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fake", metavar="LIBRARY", help="the fake CUDA driver to load")
    parser.add_argument("--report", metavar="FILE", help="write the Markdown report here")
    return parser.parse_args()


ARGS = parse()
if ARGS.fake:  # before dlbridge is imported: it loads the driver named here
    os.environ["DLBRIDGE_CUDA_LIBRARY"] = ARGS.fake
import dlbridge  # noqa: E402

try:
    import numpy as np
except ImportError:  # pragma: no cover
    np = None

rows = []      # (name, status, detail)
timings = []   # (what, size, ordered, dlbridge_us, baseline_name, baseline_us)
copies = []    # (size, dlbridge GB/s, baseline GB/s)


class Skip(Exception):
    pass


def row(name, fn):
    try:
        rows.append((name, "PASS", fn() or ""))
    except Skip as s:
        rows.append((name, "skip", str(s)))
    except Exception as e:  # noqa: BLE001 - every failure is reported in the table
        rows.append((name, "FAIL", "%s: %s" % (type(e).__name__, e)))
        traceback.print_exc()


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def need(module):
    try:
        return __import__(module)
    except Exception as e:  # noqa: BLE001
        raise Skip("%s not importable (%s)" % (module, e))


def floats_of(address, n):
    """n float32 values read at a host address."""
    return list((ctypes.c_float * n).from_address(address))


# ---- Where device tensors come from: the fake's device memory, or a real GPU ----

class FakeDevice:
    """The fake driver's "device memory" (host memory the fake's pointer queries call device
    memory of device 0): tensors are written and read with ctypes."""

    name = "fake CUDA driver"

    def __init__(self, library):
        self.lib = ctypes.CDLL(library)
        self.lib.fake_driver_device_base.restype = ctypes.c_uint64
        self.lib.fake_driver_live_allocations.restype = ctypes.c_int
        self.base = self.lib.fake_driver_device_base() + 0x80000  # above the fake's allocator

    def tensor(self, values):
        data = (ctypes.c_float * len(values))(*values)
        ctypes.memmove(self.base, data, ctypes.sizeof(data))
        md = dlbridge.MemoryDescriptor(self.base, ctypes.sizeof(data), "cuda")
        return dlbridge.Tensor(md, "float32", (len(values),), allow_unowned=True)

    def read(self, tensor, n):
        return floats_of(tensor.data_ptr(), n)

    def live(self):
        return self.lib.fake_driver_live_allocations()


class RealDevice:
    """A CUDA device through PyTorch (else CuPy): tensors are framework tensors imported into
    dlbridge (zero-copy), read back through the framework."""

    name = "CUDA device 0"

    def __init__(self):
        self.torch = self.cupy = None
        try:
            import torch
            if torch.cuda.is_available():
                self.torch = torch
        except Exception:  # noqa: BLE001
            pass
        try:
            import cupy
            if cupy.cuda.runtime.getDeviceCount() > 0:
                self.cupy = cupy
        except Exception:  # noqa: BLE001
            pass
        if self.torch is None and self.cupy is None:
            raise Skip("neither PyTorch with CUDA nor CuPy is importable: no way to make or "
                       "read device tensors from Python")
        self.keep = []

    def tensor(self, values):
        if self.torch is not None:
            x = self.torch.tensor(values, dtype=self.torch.float32, device="cuda:0")
        else:
            x = self.cupy.asarray(values, dtype=self.cupy.float32)
        self.keep.append(x)
        return dlbridge.from_dlpack(x)  # zero-copy; holds x

    def read(self, tensor, n):
        if self.torch is not None:
            y = self.torch.from_dlpack(tensor)
            check(y.is_cuda, "read: the tensor is not on the GPU")
            return [float(v) for v in y[:n].cpu()]
        y = self.cupy.from_dlpack(tensor)
        return [float(v) for v in self.cupy.asnumpy(y[:n])]

    def live(self):
        return 0  # the runtimes' own allocators: nothing to count


# ---- Copy rows: values checked after each copy ----

def copy_rows(device):
    values = [float(i) * 1.5 for i in range(64)]

    def d2h():
        t = device.tensor(values)
        check(t.device == (2, 0), "source on %r, expected (2, 0)" % (t.device,))
        for spelling in ((1, 0), "cpu"):
            out = dlbridge.from_dlpack(t.__dlpack__(max_version=(1, 3), dl_device=spelling))
            check(out.device == (1, 0), "D2H result on %r" % (out.device,))
            check(out.flags & dlbridge.FLAG_IS_COPIED, "D2H result not flagged IS_COPIED")
            check(floats_of(out.data_ptr(), 64) == values, "D2H values differ")
        out = dlbridge.from_dlpack(t, device="cpu")
        check(floats_of(out.data_ptr(), 64) == values, "from_dlpack(device='cpu') values differ")
        try:
            t.__dlpack__(max_version=(1, 3), dl_device=(1, 0), copy=False)
            raise AssertionError("copy=False across devices did not raise")
        except BufferError:
            pass
        return "64 float32, dl_device=(1, 0) and 'cpu', from_dlpack(device='cpu')"

    def h2d():
        data = (ctypes.c_float * 64)(*[2.0 * v for v in values])
        md = dlbridge.MemoryDescriptor(ctypes.addressof(data), ctypes.sizeof(data), "host")
        md.SetOwner(data)
        host = dlbridge.Tensor(md, "float32", (64,))
        for up in (dlbridge.from_dlpack(host.__dlpack__(max_version=(1, 3), dl_device=(2, 0))),
                   dlbridge.from_dlpack(host, device="cuda:0")):
            check(up.device == (2, 0), "H2D result on %r" % (up.device,))
            check(up.data_ptr() != ctypes.addressof(data), "H2D did not copy")
            check(device.read(up, 64) == [2.0 * v for v in values], "H2D values differ")
        return "64 float32, dl_device=(2, 0) and from_dlpack(device='cuda:0')"

    def d2d():
        t = device.tensor(values)
        out = dlbridge.from_dlpack(t.__dlpack__(max_version=(1, 3), copy=True))
        check(out.device == (2, 0), "D2D result on %r" % (out.device,))
        check(out.data_ptr() != t.data_ptr(), "D2D did not copy")
        check(device.read(out, 64) == values, "D2D values differ")
        return "64 float32, copy=True"

    def numpy_cpu():
        if np is None:
            raise Skip("NumPy not importable")
        try:
            np.from_dlpack(np.zeros(1), device="cpu")
        except TypeError:
            raise Skip("NumPy %s has no from_dlpack(device=) (NumPy >= 2.1)" % np.__version__)
        t = device.tensor(values)
        a = np.from_dlpack(t, device="cpu")
        check(a.tolist() == values, "np.from_dlpack(t, device='cpu') values differ")
        return "NumPy %s" % np.__version__

    row("copy D2H (__dlpack__ dl_device=(1, 0))", d2h)
    row("copy H2D (__dlpack__ dl_device=(2, 0))", h2d)
    row("copy D2D (__dlpack__ copy=True)", d2d)
    row("np.from_dlpack(dlbridge GPU tensor, device='cpu')", numpy_cpu)
    def none_left():
        if isinstance(device, RealDevice):
            raise Skip("counted by the fake driver only")
        check(device.live() == 0, "%d device allocations live" % device.live())

    row("no device allocation left", none_left)


# ---- Timings ----

def best_us(fn, number):
    """Best of 5 repeats, microseconds per call."""
    return min(timeit.repeat(fn, number=number, repeat=5)) / number * 1e6


def exchange_timings(device, fake):
    """One exchange (a consumer's from_dlpack of a producer's tensor), 4 KiB and 4 GiB,
    ordered and unordered, dlbridge.Tensor -> CuPy against PyTorch -> CuPy."""
    sizes = [4 * KiB, 4 * GiB] if not fake else [4 * KiB, 64 * KiB]
    if fake:
        # The fake has no CuPy or PyTorch: dlbridge's own consumer takes the capsule, with the
        # consumer's stream (ordered: an event through the fake) or -1 (unordered).
        md = dlbridge.MemoryDescriptor(device.base, 64 * KiB, "cuda")
        for size in sizes:
            t = dlbridge.Tensor(md, "uint8", (size,), allow_unowned=True, stream=0x1234)
            for ordered, stream in ((True, 0x5678), (False, -1)):
                us = best_us(lambda: dlbridge.from_dlpack(t.__dlpack__(stream=stream)), 200)
                timings.append(("dlbridge.Tensor -> dlbridge (fake)", size, ordered, us,
                                "(no PyTorch/CuPy: fake run)", None))
        return "fake: code path only"
    torch, cupy = device.torch, device.cupy
    if torch is None or cupy is None:
        raise Skip("needs PyTorch and CuPy (torch %s, cupy %s)" % (torch is not None, cupy is not None))
    producer = torch.cuda.Stream()  # a non-default stream: the producer's writes are on it
    consumer = cupy.cuda.Stream(non_blocking=True)
    same = cupy.cuda.ExternalStream(producer.cuda_stream)
    for size in sizes:
        with torch.cuda.stream(producer):
            x = torch.empty(size, dtype=torch.uint8, device="cuda:0")
            md = dlbridge.MemoryDescriptor(x.data_ptr(), size, "cuda")
            md.SetOwner(x)
            t = dlbridge.Tensor(md, "uint8", (size,), stream=producer.cuda_stream)
            for ordered, stream in ((True, consumer), (False, same)):
                with stream:
                    ours = best_us(lambda: cupy.from_dlpack(t), 200)
                    # PyTorch orders its current stream (the producer) before CuPy's.
                    theirs = best_us(lambda: cupy.from_dlpack(x), 200)
                timings.append(("dlbridge.Tensor -> CuPy", size, ordered, ours,
                                "PyTorch -> CuPy", theirs))
        del x, t, md
        torch.cuda.empty_cache()
    return "%d rows" % (2 * len(sizes))


def copy_timings(device, fake):
    """D2H copy bandwidth: __dlpack__(dl_device=(1, 0)) against a plain cudaMemcpy into
    pageable host memory of the same size, in the same run."""
    sizes = [4 * KiB, 64 * MiB, 1 * GiB] if not fake else [4 * KiB, 64 * KiB]
    for size in sizes:
        if fake:
            md = dlbridge.MemoryDescriptor(device.base, size, "cuda")
            t = dlbridge.Tensor(md, "uint8", (size,), allow_unowned=True)
            baseline = None
        else:
            torch, cupy = device.torch, device.cupy
            if cupy is None and torch is None:
                raise Skip("needs CuPy or PyTorch")
            if cupy is not None:
                src = cupy.ones(size, dtype=cupy.uint8)
                ptr, keep = src.data.ptr, src
            else:
                src = torch.ones(size, dtype=torch.uint8, device="cuda:0")
                ptr, keep = src.data_ptr(), src
            md = dlbridge.MemoryDescriptor(ptr, size, "cuda")
            md.SetOwner(keep)
            t = dlbridge.Tensor(md, "uint8", (size,))
            out = dlbridge.from_dlpack(t.__dlpack__(max_version=(1, 3), dl_device=(1, 0)))
            check(bytes((ctypes.c_uint8 * 16).from_address(out.data_ptr())) == b"\x01" * 16,
                  "D2H copy of %d bytes: wrong values" % size)
            del out
            # Into new pageable host memory each time, as dlbridge's copy is (its page faults
            # are part of both numbers).
            if cupy is not None:
                def plain():
                    host = np.empty(size, dtype=np.uint8)
                    cupy.cuda.runtime.memcpy(host.ctypes.data, ptr, size, 2)  # DeviceToHost
            else:
                def plain():
                    torch.from_numpy(np.empty(size, dtype=np.uint8)).copy_(src)  # cudaMemcpy
            number = max(1, min(200, (64 * MiB) // size))
            baseline = size / (best_us(plain, number) * 1e-6) / 1e9
        number = max(1, min(200, (64 * MiB) // size))
        ours = size / (best_us(lambda: t.__dlpack__(max_version=(1, 3), dl_device=(1, 0)),
                               number) * 1e-6) / 1e9
        copies.append((size, ours, baseline))
    return "%d sizes" % len(sizes)


def human(size):
    for unit, scale in (("GiB", GiB), ("MiB", MiB), ("KiB", KiB)):
        if size >= scale:
            return "%g %s" % (size / scale, unit)
    return "%d B" % size


def report(device, fake):
    lines = ["# GPU copies and exchanges: dlbridge against the frameworks' own, one run", ""]
    lines.append("Machine: %s; Python %s; NumPy %s; dlbridge %s.%s" % (
        device.name, sys.version.split()[0], np.__version__ if np else "none",
        dlbridge.__version__, " FAKE DRIVER: the timings are meaningless, the rows check the code "
        "paths." if fake else ""))
    lines += ["", "| check | result | detail |", "|---|---|---|"]
    lines += ["| %s | %s | %s |" % r for r in rows]
    lines += ["", "One exchange (a consumer's from_dlpack), microseconds per call (best of 5):", "",
              "| exchange | size | ordered | µs | baseline | µs |", "|---|---|---|---|---|---|"]
    for what, size, ordered, us, base, base_us in timings:
        lines.append("| %s | %s | %s | %.2f | %s | %s |" % (
            what, human(size), "yes" if ordered else "no", us, base,
            "%.2f" % base_us if base_us is not None else "-"))
    lines += ["", "D2H copy bandwidth, GB/s (best of 5): `__dlpack__(dl_device=(1, 0))` "
              "against a plain cudaMemcpy, each into new pageable host memory:", "",
              "| size | dlbridge | cudaMemcpy |", "|---|---|---|"]
    for size, ours, base in copies:
        lines.append("| %s | %.2f | %s |" % (human(size), ours,
                                             "%.2f" % base if base is not None else "-"))
    return "\n".join(lines) + "\n"


def main():
    fake = bool(ARGS.fake)
    try:
        device = FakeDevice(ARGS.fake) if fake else RealDevice()
    except Skip as s:
        print("gpu copies: skipped: %s" % s)
        return 0
    copy_rows(device)
    row("timing: exchanges 4 KiB / 4 GiB, ordered / unordered", lambda: exchange_timings(device, fake))
    row("timing: D2H copy bandwidth", lambda: copy_timings(device, fake))
    text = report(device, fake)
    print(text)
    if ARGS.report:
        with open(ARGS.report, "w", encoding="utf-8") as f:
            f.write(text)
        print("gpu copies: report written to %s" % ARGS.report)
    failed = [r for r in rows if r[1] == "FAIL"]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
