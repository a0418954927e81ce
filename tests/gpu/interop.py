"""GPU check, Python part (run by tests/gpu/run.sh when the dlbridge module was built):
CUDA tensors go PyTorch -> dlbridge -> PyTorch, CuPy -> dlbridge -> CuPy, and across, through
DLPack, zero-copy. Prints a table; exits 1 on any failure. Frameworks that are not installed
are skipped, not failed."""
import sys
import traceback

import dlbridge

rows = []


def row(name, fn):
    try:
        detail = fn()
        rows.append((name, "PASS", detail or ""))
    except _Skip as s:
        rows.append((name, "skip", str(s)))
    except Exception as e:  # noqa: BLE001 - every failure is reported in the table
        rows.append((name, "FAIL", "%s: %s" % (type(e).__name__, e)))
        traceback.print_exc()


class _Skip(Exception):
    pass


def need(module):
    try:
        return __import__(module)
    except Exception as e:  # noqa: BLE001
        raise _Skip("%s not importable (%s)" % (module, e))


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def torch_roundtrip(index):
    torch = need("torch")
    if not torch.cuda.is_available() or torch.cuda.device_count() <= index:
        raise _Skip("no cuda:%d for torch" % index)
    x = torch.arange(1024, dtype=torch.float32, device="cuda:%d" % index)
    t = dlbridge.from_dlpack(x)
    check(tuple(t.device) == (2, index), "device %r, expected (2, %d)" % (t.device, index))
    check(t.descriptor.GetMemorySpace() == "cuda", "space %s" % t.descriptor.GetMemorySpace())
    check(t.descriptor.GetPointer() <= x.data_ptr(), "pointer")
    y = torch.from_dlpack(t)
    check(y.data_ptr() == x.data_ptr(), "torch.from_dlpack copied: %x vs %x" % (y.data_ptr(), x.data_ptr()))
    check(y.device == x.device, "device %s vs %s" % (y.device, x.device))
    y[0] = 42.0
    torch.cuda.synchronize()
    check(float(x[0]) == 42.0, "write through the round trip not seen")
    return "t.device=%s ptr=%#x" % (tuple(t.device), x.data_ptr())


def cupy_roundtrip(index):
    cupy = need("cupy")
    if cupy.cuda.runtime.getDeviceCount() <= index:
        raise _Skip("no device %d for cupy" % index)
    with cupy.cuda.Device(index):
        a = cupy.arange(1024, dtype=cupy.float32)
        t = dlbridge.from_dlpack(a)
        check(tuple(t.device) == (2, index), "device %r" % (t.device,))
        b = cupy.from_dlpack(t)
        check(b.data.ptr == a.data.ptr, "cupy.from_dlpack copied")
        b[0] = 7.0
        cupy.cuda.runtime.deviceSynchronize()
        check(float(a[0]) == 7.0, "write through the round trip not seen")
        return "t.device=%s ptr=%#x" % (tuple(t.device), a.data.ptr)


def torch_to_cupy():
    torch, cupy = need("torch"), need("cupy")
    if not torch.cuda.is_available():
        raise _Skip("torch has no CUDA")
    x = torch.ones(256, dtype=torch.float32, device="cuda:0")
    b = cupy.from_dlpack(dlbridge.from_dlpack(x))
    check(b.data.ptr == x.data_ptr(), "copied")
    check(float(b.sum()) == 256.0, "values")
    return "ptr=%#x" % x.data_ptr()


def cupy_to_torch():
    torch, cupy = need("torch"), need("cupy")
    a = cupy.full(256, 3.0, dtype=cupy.float32)
    y = torch.from_dlpack(dlbridge.from_dlpack(a))
    check(y.data_ptr() == a.data.ptr, "copied")
    check(y.is_cuda and float(y.sum()) == 768.0, "values")
    return "ptr=%#x" % a.data.ptr


def torch_pinned():
    torch = need("torch")
    if not torch.cuda.is_available():
        raise _Skip("torch has no CUDA")
    x = torch.arange(64, dtype=torch.float32).pin_memory()
    t = dlbridge.from_dlpack(x)
    check(t.descriptor.GetMemorySpace() == "host", "space %s" % t.descriptor.GetMemorySpace())
    y = torch.from_dlpack(t)
    check(y.data_ptr() == x.data_ptr() and not y.is_cuda, "pinned host tensor changed")
    return "t.device=%s" % (tuple(t.device),)


row("torch cuda:0 -> dlbridge -> torch", lambda: torch_roundtrip(0))
row("torch cuda:1 -> dlbridge -> torch", lambda: torch_roundtrip(1))
row("cupy dev 0 -> dlbridge -> cupy", lambda: cupy_roundtrip(0))
row("cupy dev 1 -> dlbridge -> cupy", lambda: cupy_roundtrip(1))
row("torch -> dlbridge -> cupy", torch_to_cupy)
row("cupy -> dlbridge -> torch", cupy_to_torch)
row("torch pinned cpu -> dlbridge -> torch", torch_pinned)

print()
print("| %-40s | %-4s | %s" % ("python interop", "ok", "detail"))
print("|%s|%s|%s" % ("-" * 42, "-" * 6, "-" * 40))
for name, ok, detail in rows:
    print("| %-40s | %-4s | %s" % (name, ok, detail))
failed = sum(1 for r in rows if r[1] == "FAIL")
print("\npython interop: %d rows, %d failed, %d skipped" % (len(rows), failed, sum(1 for r in rows if r[1] == "skip")))
sys.exit(1 if failed else 0)
