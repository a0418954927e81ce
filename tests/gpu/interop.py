"""GPU check, Python part (run by tests/gpu/run.sh when the dlbridge module was built):
CUDA tensors go PyTorch -> dlbridge -> PyTorch, CuPy -> dlbridge -> CuPy, and across, through
DLPack, zero-copy. Then the race case (spec/streams.md STR-9): a slow kernel writes a buffer on
a non-blocking stream, the buffer crosses dlbridge as Tensor(..., stream=producer) to
torch.from_dlpack and cupy.from_dlpack on other streams, and the consumer checks the final
values. Prints tables; exits 1 on any failure. Frameworks that are not installed are skipped,
not failed.

    interop.py                     every row, the race rows ordered by dlbridge
    DLBRIDGE_GPU_RACE_ORDERING=off interop.py --race-only
                                   the race rows alone, the tensor made without stream= (so
                                   nothing orders the consumer): they must see stale values
                                   (exit 0), else "race not observed, check inconclusive"
                                   (exit 3)"""
import os
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


RACE_VALUE = 0x2A2A2A2A
RACE_ELEMENTS = 1 << 22  # 16 MiB of int32
RACE_SLEEP_CYCLES = 400_000_000  # torch.cuda._sleep: about 0.2 s at 2 GHz
race_rows = []


def race(consumer_name, ordering):
    """One exchange: torch's slow kernel (torch.cuda._sleep, then fill_) is pending on a
    non-blocking producer stream when the buffer crosses dlbridge; the consumer imports it on
    its own non-blocking stream and copies it at once. Returns the stale elements it saw."""
    torch = need("torch")
    if not torch.cuda.is_available():
        raise _Skip("torch has no CUDA")
    if consumer_name == "cupy":
        cupy = need("cupy")
    dev = torch.device("cuda:0")
    torch.cuda.set_device(dev)
    producer = torch.cuda.Stream(device=dev)  # PyTorch's pool streams are non-blocking
    x = torch.zeros(RACE_ELEMENTS, dtype=torch.int32, device=dev)
    torch.cuda.synchronize()  # the stale value, 0, is in place everywhere
    with torch.cuda.stream(producer):
        torch.cuda._sleep(RACE_SLEEP_CYCLES)
        x.fill_(RACE_VALUE)
    md = dlbridge.MemoryDescriptor(x.data_ptr(), x.numel() * x.element_size(), "cuda")
    md.SetOwner(x)
    extra = {"stream": producer.cuda_stream} if ordering else {}
    t = dlbridge.Tensor(md, "int32", (RACE_ELEMENTS,), device=(2, 0), **extra)
    if consumer_name == "torch":
        consumer = torch.cuda.Stream(device=dev)
        with torch.cuda.stream(consumer):
            y = torch.from_dlpack(t)  # calls t.__dlpack__(stream=<consumer>)
            copy = y.clone()
            stale = int((copy != RACE_VALUE).sum().item())  # syncs the consumer stream
        where = "torch stream %#x" % consumer.cuda_stream
    else:
        consumer = cupy.cuda.Stream(non_blocking=True)
        with consumer:
            a = cupy.from_dlpack(t)  # calls t.__dlpack__(stream=<consumer>)
            copy = a.copy()
            stale = int((copy != RACE_VALUE).sum())
            consumer.synchronize()
        where = "cupy stream %#x" % consumer.ptr
    producer.synchronize()
    after = int((x != RACE_VALUE).sum().item())
    check(after == 0, "the writer did not leave the final value (%d elements differ)" % after)
    return stale, "producer %#x, consumer %s" % (producer.cuda_stream, where)


def race_row(consumer_name, ordering):
    name = "slow torch writer -> dlbridge (%s) -> %s" % (
        "stream=producer" if ordering else "ordering OFF", consumer_name)
    try:
        stale, detail = race(consumer_name, ordering)
    except _Skip as s:
        race_rows.append((name, "skip", "-", str(s)))
        return
    except Exception as e:  # noqa: BLE001 - every failure is reported in the table
        race_rows.append((name, "FAIL", "-", "%s: %s" % (type(e).__name__, e)))
        traceback.print_exc()
        return
    seen = "%d/%d" % (stale, RACE_ELEMENTS)
    if ordering:
        verdict = "PASS" if stale == 0 else "FAIL"
        text = "consumer saw the final values" if stale == 0 else "consumer read before the writer finished"
    else:
        verdict = "race" if stale else "inconclusive"
        text = "race observed: the check can see a race" if stale else "race not observed, check inconclusive"
    race_rows.append((name, verdict, seen, "%s (%s)" % (text, detail)))


def print_race_table():
    print()
    print("| %-52s | %-12s | %-17s | %s" % ("race case", "verdict", "stale at consumer", "detail"))
    print("|%s|%s|%s|%s" % ("-" * 54, "-" * 14, "-" * 19, "-" * 40))
    for name, verdict, seen, detail in race_rows:
        print("| %-52s | %-12s | %-17s | %s" % (name, verdict, seen, detail))


race_only = "--race-only" in sys.argv[1:]
race_ordering = os.environ.get("DLBRIDGE_GPU_RACE_ORDERING", "on") != "off"
if race_only:
    race_row("torch", race_ordering)
    race_row("cupy", race_ordering)
    print_race_table()
    failed = sum(1 for r in race_rows if r[1] == "FAIL")
    inconclusive = sum(1 for r in race_rows if r[1] == "inconclusive")
    print("\npython race case (%s): %d rows, %d failed, %d inconclusive" % (
        "ordered" if race_ordering else "ordering off", len(race_rows), failed, inconclusive))
    sys.exit(1 if failed else 3 if inconclusive else 0)

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

race_row("torch", race_ordering)
race_row("cupy", race_ordering)
print_race_table()
race_failed = sum(1 for r in race_rows if r[1] in ("FAIL", "inconclusive"))
print("python race case (%s): %d rows, %d failed" % (
    "ordered" if race_ordering else "ordering off", len(race_rows), race_failed))
sys.exit(1 if failed or race_failed else 0)
