"""Copies across devices in Python (spec/python.md, PY-64..PY-66): the device spellings every
device argument takes, __dlpack__(dl_device=..., copy=...) copying host <-> GPU and GPU -> GPU
through the core's CopyTo, NumPy 2's from_dlpack(device="cpu") of a dlbridge GPU tensor, and
dlbridge.from_dlpack completing a request its producer refused.

The copy tests run in subprocesses against the fake CUDA driver and HIP runtime (tests/fakes/;
test_streams.run_with_fake: the fake's "device memory" is host memory, so values are read back
with ctypes), checking the values after every copy, the driver calls made, and that every
release runs exactly once and no device allocation is left, also when a copy call fails."""
import ctypes
import textwrap
import unittest

import dlbridge
from support import ReleaseCounter, address_of
from test_streams import run_with_fake as _run_with_fake

try:
    import numpy as np
except ImportError:  # pragma: no cover - the host lanes have NumPy
    np = None


def numpy_takes_device():
    """Whether np.from_dlpack has the array API's device= (NumPy >= 2.1), by trying it."""
    if np is None:
        return False
    try:
        np.from_dlpack(np.zeros(1), device="cpu")
    except TypeError:
        return False
    return True


def run_with_fake(test, kind, body, prefix="", **kwargs):
    """test_streams.run_with_fake with this file's helpers (HELPERS, then `prefix`) before
    `body`."""
    return _run_with_fake(test, kind, HELPERS + prefix + textwrap.dedent(body), **kwargs)


class TorchLikeDevice:
    """What dlbridge reads of a torch.device (duck-typed: torch is not needed)."""

    def __init__(self, type, index=None):  # noqa: A002 - torch's attribute names
        self.type = type
        self.index = index


class DeviceSpellings(unittest.TestCase):
    """PY-64: one reader for every device argument: pairs, names, torch.device-likes."""

    SPELLINGS = [("cpu", (1, 0)), ("cpu:0", (1, 0)), ("cuda", (2, 0)), ("cuda:0", (2, 0)),
                 ("cuda:3", (2, 3)), ("rocm", (10, 0)), ("rocm:1", (10, 1)), ("hip", (10, 0)),
                 ("hip:2", (10, 2)), (TorchLikeDevice("cpu"), (1, 0)),
                 (TorchLikeDevice("cuda"), (2, 0)), (TorchLikeDevice("cuda", 1), (2, 1)),
                 ((2, 1), (2, 1)), ((dlbridge.kDLROCM, 0), (10, 0))]

    def test_py64_every_device_argument_takes_the_spellings(self):
        for given, pair in self.SPELLINGS:
            with self.subTest(given=given):
                space = {1: "host", 2: "cuda", 10: "hip"}[pair[0]]
                md = dlbridge.MemoryDescriptor(0x10000, 64, space)
                t = dlbridge.Tensor(md, "float32", (16,), device=given, allow_unowned=True)
                self.assertEqual(t.device, pair)
                if pair[0] != 1:
                    self.assertEqual(dlbridge.current_stream(given),
                                     dlbridge.current_stream(pair))
                    dlbridge.set_current_stream(given, 0x4000)
                    self.assertEqual(dlbridge.current_stream(pair), 0x4000)
                    dlbridge.set_current_stream(pair, None)
        # __dlpack__'s dl_device and from_dlpack's device: the host spellings, zero-copy.
        values = (ctypes.c_float * 4)(1, 2, 3, 4)
        md = dlbridge.MemoryDescriptor(address_of(values), ctypes.sizeof(values), "host")
        md.SetOwner(values)
        host = dlbridge.Tensor(md, "float32", (4,))
        for given in ("cpu", "cpu:0", TorchLikeDevice("cpu"), TorchLikeDevice("cpu", 0)):
            with self.subTest(host=given):
                out = dlbridge.from_dlpack(host.__dlpack__(dl_device=given, max_version=(1, 3)))
                self.assertEqual((out.device, out.data_ptr()), ((1, 0), address_of(values)))
                out = dlbridge.from_dlpack(host, device=given, copy=False)
                self.assertEqual((out.device, out.data_ptr()), ((1, 0), address_of(values)))

    def test_py64_refusals_name_what_was_given_and_what_is_accepted(self):
        t = dlbridge.Tensor(dlbridge.MemoryDescriptor(), "float32", (0,), allow_unowned=True)
        forms = "'cpu', 'cuda', 'cuda:N', 'rocm', 'rocm:N', 'hip', 'hip:N'"
        calls = {
            "__dlpack__: dl_device": lambda d: t.__dlpack__(dl_device=d),
            "from_dlpack: device": lambda d: dlbridge.from_dlpack(t, device=d),
            "Tensor: device": lambda d: dlbridge.Tensor(dlbridge.MemoryDescriptor(), "float32",
                                                        (0,), device=d),
            "current_stream: device": dlbridge.current_stream,
        }
        for what, call in calls.items():
            for bad in ("gpu", "cuda:", "cuda:-1", "cuda:x", "cpu:1", "CUDA", " cuda",
                        "cuda:99999999999", TorchLikeDevice("mps"), TorchLikeDevice("cpu", 2)):
                with self.subTest(what=what, bad=bad), self.assertRaises(ValueError) as cm:
                    call(bad)
                message = str(cm.exception)
                self.assertIn(what, message)
                self.assertIn(repr(bad), message)
                self.assertIn(forms, message)
                self.assertIn("torch.device", message)
            for bad in (3.5, b"cuda", object(), TorchLikeDevice("cuda", "1")):
                with self.subTest(what=what, bad=bad), self.assertRaises(TypeError) as cm:
                    call(bad)
                self.assertIn(what, str(cm.exception))
        with self.assertRaisesRegex(TypeError, "must be a device: 'cpu'"):
            dlbridge.set_current_stream(3.5, 5)

    def test_py64_pairs_beyond_64_bits_are_value_errors_naming_the_argument(self):
        t = dlbridge.Tensor(dlbridge.MemoryDescriptor(), "float32", (0,), allow_unowned=True)
        calls = {
            "__dlpack__: dl_device": lambda d: t.__dlpack__(dl_device=d),
            "from_dlpack: device": lambda d: dlbridge.from_dlpack(t, device=d),
            "Tensor: device": lambda d: dlbridge.Tensor(dlbridge.MemoryDescriptor(), "float32",
                                                        (0,), device=d),
            "current_stream: device": dlbridge.current_stream,
        }
        for what, call in calls.items():
            for bad in ((2**64, 0), (1, -2**63 - 1), (-2**70, 0), (2, 2**63),
                        (np.int64(1), 2**64) if np is not None else (1, 2**64)):
                with self.subTest(what=what, bad=bad):
                    with self.assertRaises(ValueError) as cm:
                        call(bad)
                    self.assertIn(what, str(cm.exception))
                    self.assertIn(repr(bad), str(cm.exception))

    def test_py64_ids_other_than_0_of_id_zero_types_are_value_errors_naming_the_argument(self):
        # kDLCPU (and the pinned and managed types, the device table's id_is_zero) has device 0
        # only: another id is no device, refused where the argument is read, not by CopyTo.
        md = dlbridge.MemoryDescriptor(0x10000, 64, "host")
        t = dlbridge.Tensor(md, "float32", (16,), allow_unowned=True)
        calls = {
            "__dlpack__: dl_device": lambda d: t.__dlpack__(dl_device=d),
            "from_dlpack: device": lambda d: dlbridge.from_dlpack(t, device=d),
            "Tensor: device": lambda d: dlbridge.Tensor(md, "float32", (16,), device=d,
                                                        allow_unowned=True),
            "current_stream: device": dlbridge.current_stream,
        }
        for what, call in calls.items():
            for bad in ((1, 1), (1, -1), (3, 2), (11, 1), (13, 1)):
                with self.subTest(what=what, bad=bad):
                    with self.assertRaises(ValueError) as cm:
                        call(bad)
                    message = str(cm.exception)
                    self.assertTrue(message.startswith(what), message)
                    self.assertIn(repr(bad), message)
                    self.assertIn("device_id 0", message)


# The body's helpers, after test_streams' PRELUDE (fake, gpu_tensor, calls, reset).
HELPERS = r'''
import array
FLOATS = list(range(16))

# The source tensors lie in the upper half of the fake's device range: its allocator hands
# out blocks from the start, so a copy never lands on its source.
SOURCE = 0x80000

def fill_device(values=FLOATS):
    """Writes float32 values at the fake's device memory SOURCE (host memory in the fake)."""
    data = (ctypes.c_float * len(values))(*values)
    ctypes.memmove(fake.fake_driver_device_base() + SOURCE, data, ctypes.sizeof(data))

def gpu_tensor(stream=None, counter=None, **kwargs):
    """test_streams' gpu_tensor, at SOURCE."""
    md = dlbridge.MemoryDescriptor(fake.fake_driver_device_base() + SOURCE, 64, SPACE)
    if counter is not None:
        md.SetReleaseAddress(counter.address, 7)
    else:
        kwargs["allow_unowned"] = True
    return dlbridge.Tensor(md, "float32", (16,), stream=stream, **kwargs)

def read(tensor, n=16):
    """The float32 values at a tensor's element zero (any device: the fake's is host memory)."""
    return list((ctypes.c_float * n).from_address(tensor.data_ptr()))

def on_device(tensor):
    base = fake.fake_driver_device_base()
    return base <= tensor.data_ptr() < base + fake.fake_driver_device_bytes()

fake.fake_driver_device_bytes.restype = ctypes.c_size_t

def copies():
    """The fake's copy and allocation calls since the last reset, by name."""
    return [c[0] for c in calls() if "Memcpy" in c[0] or "Alloc" in c[0] or "Free" in c[0]
            or "Malloc" in c[0]]

def live():
    return fake.fake_driver_live_allocations()
fake.fake_driver_live_allocations.restype = ctypes.c_int

def host_tensor(values=FLOATS, counter=None):
    data = (ctypes.c_float * len(values))(*values)
    md = dlbridge.MemoryDescriptor(ctypes.addressof(data), ctypes.sizeof(data), "host")
    if counter is not None:
        md.SetReleaseAddress(counter.address, 9)
        host_tensor.keep.append(data)
    else:
        md.SetOwner(data)
    return dlbridge.Tensor(md, "float32", (len(values),))
host_tensor.keep = []
'''

DEVICE = {"cuda": [2, 0], "hip": [10, 0]}


class DlpackCopies(unittest.TestCase):
    """PY-10, PY-65: __dlpack__(dl_device=..., copy=...) across devices, values checked."""

    def check_round_trip(self, kind):
        result = run_with_fake(self, kind, r'''
        counter = ReleaseCounter()
        fill_device()
        t = gpu_tensor(counter=counter)
        RESULT["device"] = list(t.device)
        out = {}
        for name, kwargs in (("d2h", {"dl_device": (1, 0)}), ("d2h_named", {"dl_device": "cpu"}),
                             ("d2h_copy", {"dl_device": (1, 0), "copy": True}),
                             ("d2d", {"copy": True}), ("d2d_legacy", {"copy": True, "v": 0})):
            reset()
            legacy = kwargs.pop("v", 1) == 0
            capsule = t.__dlpack__(**kwargs) if legacy else t.__dlpack__(max_version=(1, 3), **kwargs)
            got = dlbridge.from_dlpack(capsule)
            out[name] = {"device": list(got.device), "values": read(got),
                         "copied": bool(got.flags & dlbridge.FLAG_IS_COPIED),
                         "on_device": on_device(got), "same": got.data_ptr() == t.data_ptr(),
                         "calls": copies()}
            del capsule, got
            out[name]["live_after"] = live()
        # H2D: host memory to the device, then the copy's values read back through a D2H copy.
        reset()
        host = host_tensor([2.0 * v for v in FLOATS])
        up = dlbridge.from_dlpack(host.__dlpack__(max_version=(1, 3), dl_device=tuple(RESULT["device"])))
        down = dlbridge.from_dlpack(up.__dlpack__(max_version=(1, 3), dl_device=(1, 0)))
        out["h2d"] = {"device": list(up.device), "values": read(up), "on_device": on_device(up),
                      "back": read(down), "back_device": list(down.device),
                      "copied": bool(up.flags & dlbridge.FLAG_IS_COPIED), "calls": copies(),
                      "live": live()}
        del up, down
        out["h2d"]["live_after"] = live()
        # copy=False never copies: a request only a copy meets is a BufferError.
        for name, kwargs in (("d2h_no_copy", {"dl_device": (1, 0)}),
                             ("h2d_no_copy", {"dl_device": tuple(RESULT["device"]), "host": 1})):
            source = host if kwargs.pop("host", 0) else t
            try:
                source.__dlpack__(max_version=(1, 3), copy=False, **kwargs)
                out[name] = "no error"
            except BufferError as error:
                out[name] = str(error)
        RESULT["out"] = out
        del t, host
        gc.collect()
        RESULT["releases"] = counter.contexts
        RESULT["live"] = live()
        ''')
        device = DEVICE[kind]
        self.assertEqual(result["device"], device)
        out = result["out"]
        floats = [float(v) for v in range(16)]
        for name in ("d2h", "d2h_named", "d2h_copy"):
            with self.subTest(kind=kind, copy=name):
                got = out[name]
                self.assertEqual(got["device"], [1, 0])
                self.assertEqual(got["values"], floats)
                self.assertFalse(got["on_device"])
                self.assertTrue(got["copied"])
                self.assertTrue(any("DtoH" in c or "Memcpy" in c for c in got["calls"]), got["calls"])
                self.assertEqual(got["live_after"], 0)
        for name in ("d2d", "d2d_legacy"):
            with self.subTest(kind=kind, copy=name):
                got = out[name]
                self.assertEqual(got["device"], device)
                self.assertEqual(got["values"], floats)
                self.assertTrue(got["on_device"])
                self.assertFalse(got["same"])
                self.assertEqual(got["copied"], name == "d2d")  # legacy capsules cannot say
                self.assertEqual(got["live_after"], 0)
        h2d = out["h2d"]
        self.assertEqual(h2d["device"], device)
        self.assertTrue(h2d["on_device"])
        self.assertTrue(h2d["copied"])
        self.assertEqual(h2d["values"], [2.0 * v for v in floats])
        self.assertEqual((h2d["back"], h2d["back_device"]), ([2.0 * v for v in floats], [1, 0]))
        self.assertEqual(h2d["live"], 1)  # the device copy, until it goes
        self.assertEqual(h2d["live_after"], 0)
        for name in ("d2h_no_copy", "h2d_no_copy"):
            self.assertIn("copy=False", out[name])
            self.assertIn("needs a copy", out[name])
        self.assertEqual(result["releases"], [7])  # the source's release, once
        self.assertEqual(result["live"], 0)

    def test_py65_cuda_copies_d2h_h2d_d2d_with_values(self):
        self.check_round_trip("cuda")

    def test_py65_hip_copies_d2h_h2d_d2d_with_values(self):
        self.check_round_trip("hip")

    def test_py65_a_copy_waits_for_the_pending_stream_and_uses_the_consumers(self):
        result = run_with_fake(self, "cuda", r'''
        fill_device()
        t = gpu_tensor(stream=0x1234)
        reset()
        got = dlbridge.from_dlpack(t.__dlpack__(max_version=(1, 3), dl_device=(1, 0)))
        RESULT["d2h"] = {"values": read(got), "calls": [c[:3] for c in calls()]}
        reset()
        got = dlbridge.from_dlpack(t.__dlpack__(max_version=(1, 3), copy=True, stream=0x5678))
        RESULT["d2d"] = {"values": read(got), "calls": [c[:3] for c in calls()],
                         "stream": got.stream}
        RESULT["events"] = fake.fake_driver_live_events()
        del got
        # Pinned host memory with writes pending: not the zero-copy host view (PY-10) but a
        # copy by the host, after the host waited for the stream.
        data = (ctypes.c_float * 16)(*FLOATS)
        md = dlbridge.MemoryDescriptor(ctypes.addressof(data), 64, "host")
        md.SetOwner(data)
        pinned = dlbridge.Tensor(md, "float32", (16,), device=(dlbridge.kDLCUDAHost, 0),
                                 stream=0x1234)
        reset()
        got = dlbridge.from_dlpack(pinned.__dlpack__(max_version=(1, 3), dl_device=(1, 0)))
        RESULT["pinned"] = {"values": read(got), "calls": [c[:3] for c in calls()],
                            "same": got.data_ptr() == ctypes.addressof(data)}
        reset()
        plain = dlbridge.Tensor(dlbridge.MemoryDescriptor(ctypes.addressof(data), 64, "host"),
                                "float32", (16,), device=(dlbridge.kDLCUDAHost, 0),
                                allow_unowned=True)
        view = dlbridge.from_dlpack(plain.__dlpack__(max_version=(1, 3), dl_device=(1, 0)))
        RESULT["view"] = [view.data_ptr() == ctypes.addressof(data), calls()]
        del got, view
        RESULT["live"] = live()
        ''')
        floats = [float(v) for v in range(16)]
        for name in ("d2h", "d2d"):
            with self.subTest(copy=name):
                got = result[name]
                self.assertEqual(got["values"], floats)
                names = [c[0] for c in got["calls"]]
                # The producer stream is waited for before the copy reads (an event recorded on
                # it, waited on by the copy's stream, or the stream synchronised).
                waits = [i for i, c in enumerate(got["calls"])
                         if ("EventRecord" in c[0] and c[2] == 0x1234)
                         or ("Synchronize" in c[0] and c[2] in (0x1234, None))]
                copies_at = [i for i, n in enumerate(names) if "Memcpy" in n]
                self.assertTrue(waits, got["calls"])
                if copies_at:
                    self.assertLess(waits[0], copies_at[0], got["calls"])
        pinned = result["pinned"]
        self.assertEqual(pinned["values"], floats)
        self.assertFalse(pinned["same"])
        self.assertIn(["cuStreamSynchronize", None, 0x1234], pinned["calls"])
        self.assertEqual(result["view"], [True, []])  # nothing pending: the same bytes
        # The device copy was queued on the consumer's stream.
        self.assertTrue(any("Memcpy" in c[0] and c[2] == 0x5678 for c in result["d2d"]["calls"])
                        or any("StreamWaitEvent" in c[0] and c[2] == 0x5678
                               for c in result["d2d"]["calls"]), result["d2d"]["calls"])
        self.assertIsNone(result["d2d"]["stream"])  # complete: nothing pending on a stream
        self.assertLessEqual(result["events"], 1)  # at most the device's pooled event (STR-10)
        self.assertEqual(result["live"], 0)

    def test_py65_a_failed_copy_raises_buffer_error_and_leaks_nothing(self):
        result = run_with_fake(self, "cuda", r'''
        counter = ReleaseCounter()
        fill_device()
        t = gpu_tensor(counter=counter)
        host = host_tensor()
        out = {}
        for call, source, kwargs in FAILURES:
            reset()
            fake.fake_driver_fail(call.encode(), 2 if "Alloc" in call else 1)
            tensor = t if source == "device" else host
            try:
                tensor.__dlpack__(max_version=(1, 3), **kwargs)
                out[call] = {"error": "no error"}
            except BufferError as error:
                out[call] = {"error": "BufferError", "message": str(error), "code": error.code}
            except MemoryError as error:
                out[call] = {"error": "MemoryError", "message": str(error), "code": error.code}
            out[call]["live"] = live()
            out[call]["events"] = fake.fake_driver_live_events()
            out[call]["depth"] = fake.fake_driver_context_depth()
            del tensor
        # After the failures the same copies work.
        RESULT["after"] = read(dlbridge.from_dlpack(t.__dlpack__(dl_device=(1, 0))))
        RESULT["out"] = out
        del t, host
        gc.collect()
        RESULT["releases"] = counter.contexts
        RESULT["live"] = live()
        ''' .replace("FAILURES", repr(CUDA_FAILURES)))
        for call, _source, _kwargs in CUDA_FAILURES:
            with self.subTest(call=call):
                got = result["out"][call]
                self.assertEqual((got["error"], got["code"]), ("BufferError", "kRuntimeUnavailable"))
                self.assertIn(call, got["message"])
                self.assertEqual(got["live"], 0)
                self.assertEqual(got["events"], 0)
                self.assertEqual(got["depth"], 0)
        self.assertEqual(result["after"], [float(v) for v in range(16)])
        self.assertEqual(result["releases"], [7])
        self.assertEqual(result["live"], 0)

    def test_py65_without_a_runtime_a_device_copy_is_a_buffer_error(self):
        values = (ctypes.c_float * 4)(1, 2, 3, 4)
        counter = ReleaseCounter()
        md = dlbridge.MemoryDescriptor(address_of(values), ctypes.sizeof(values), "host")
        md.SetReleaseAddress(counter.address, 5)
        t = dlbridge.Tensor(md, "float32", (4,))
        result = run_with_fake(self, "cuda", r'''
        md = dlbridge.MemoryDescriptor(0x1000, 16, "host")
        t = dlbridge.Tensor(md, "float32", (4,), allow_unowned=True)
        try:
            t.__dlpack__(dl_device="cuda")
            RESULT["error"] = "no error"
        except BufferError as error:
            RESULT["error"] = error.code
        ''', library="/nonexistent/libcuda.so.1")
        self.assertEqual(result["error"], "kRuntimeUnavailable")
        del t
        self.assertEqual(counter.calls, 1)


# A copy call of each kind failing once: the allocation, and the copies of each direction.
CUDA_FAILURES = [("cuMemAlloc", "host", {"dl_device": (2, 0)}),
                 ("cuMemcpyHtoDAsync", "host", {"dl_device": (2, 0)}),
                 ("cuMemcpyDtoHAsync", "device", {"dl_device": (1, 0)}),
                 ("cuMemcpyDtoDAsync", "device", {"copy": True}),
                 ("cuStreamSynchronize", "device", {"dl_device": "cpu"})]


class NumPyFromDevice(unittest.TestCase):
    """PY-65: NumPy 2's from_dlpack(x, device="cpu") asks dlbridge for dl_device=(1, 0) and
    gets a host copy of a GPU tensor."""

    @unittest.skipIf(not numpy_takes_device(),
                     "this NumPy's from_dlpack has no device= (NumPy < 2.1): "
                     "test_py65_cuda_copies_d2h_h2d_d2d_with_values covers the copy itself")
    def test_py65_numpy_from_dlpack_device_cpu_of_a_gpu_tensor(self):
        result = run_with_fake(self, "cuda", r'''
        import numpy as np
        counter = ReleaseCounter()
        fill_device()
        t = gpu_tensor(counter=counter)
        a = np.from_dlpack(t, device="cpu")
        RESULT["values"] = a.tolist()
        RESULT["device"] = str(a.device)
        RESULT["writeable"] = bool(a.flags.writeable)
        try:
            np.from_dlpack(t, device="cpu", copy=False)
            RESULT["no_copy"] = "no error"
        except (BufferError, ValueError) as error:
            RESULT["no_copy"] = type(error).__name__
        del a, t
        gc.collect()
        RESULT["releases"] = counter.contexts
        RESULT["live"] = live()
        ''')
        self.assertEqual(result["values"], [float(v) for v in range(16)])
        self.assertEqual(result["device"], "cpu")
        self.assertTrue(result["writeable"])
        self.assertEqual(result["no_copy"], "BufferError")
        self.assertEqual(result["releases"], [7])
        self.assertEqual(result["live"], 0)


# Producers that cannot meet a request: one that refuses dl_device and copy with BufferError
# (as the array API tells it to), and one from before those keywords.
PRODUCERS = r'''
class Refusing:
    def __init__(self, inner):
        self.inner = inner
        self.calls = []
    def __dlpack_device__(self):
        return self.inner.__dlpack_device__()
    def __dlpack__(self, **kwargs):
        self.calls.append(sorted(kwargs))
        if kwargs.get("dl_device") not in (None, self.inner.__dlpack_device__()) or kwargs.get("copy"):
            raise BufferError("Refusing: no copies here")
        kwargs.pop("dl_device", None)
        kwargs.pop("copy", None)
        return self.inner.__dlpack__(**kwargs)

class Legacy:
    def __init__(self, inner):
        self.inner = inner
        self.calls = []
    def __dlpack_device__(self):
        return self.inner.__dlpack_device__()
    def __dlpack__(self, stream=None):
        self.calls.append(stream)
        return self.inner.__dlpack__(stream=stream)
'''


class FromDlpackCompletes(unittest.TestCase):
    """PY-66: dlbridge.from_dlpack(x, device=..., copy=...) meets what the producer did not."""

    def test_py66_refusing_and_legacy_producers_are_copied_here(self):
        for kind in ("cuda", "hip"):
            with self.subTest(kind=kind):
                result = run_with_fake(self, kind, prefix=PRODUCERS, body=r'''
                counter = ReleaseCounter()
                fill_device()
                t = gpu_tensor(counter=counter)
                host = host_tensor([3.0 * v for v in FLOATS])
                out = {}
                for name, producer, kwargs in (
                        ("refusing_d2h", Refusing(t), {"device": "cpu"}),
                        ("legacy_d2h", Legacy(t), {"device": (1, 0)}),
                        ("refusing_d2d", Refusing(t), {"copy": True}),
                        ("legacy_d2d", Legacy(t), {"copy": True}),
                        ("refusing_h2d", Refusing(host), {"device": tuple(t.device)}),
                        ("legacy_h2d", Legacy(host), {"device": tuple(t.device)}),
                        ("legacy_h2d_copy_false", Legacy(host),
                         {"device": tuple(t.device), "copy": False})):
                    reset()
                    try:
                        got = dlbridge.from_dlpack(producer, **kwargs)
                    except BufferError as error:
                        out[name] = {"error": str(error), "calls": producer.calls}
                        continue
                    out[name] = {"device": list(got.device), "values": read(got),
                                 "on_device": on_device(got), "calls": producer.calls,
                                 "copied": bool(got.flags & dlbridge.FLAG_IS_COPIED),
                                 "same": got.data_ptr() in (t.data_ptr(), host.data_ptr())}
                    del got
                    out[name]["live"] = live()
                RESULT["out"] = out
                del t, host
                gc.collect()
                RESULT["releases"] = counter.contexts
                RESULT["live"] = live()
                ''')
                device = DEVICE[kind]
                out = result["out"]
                floats = [float(v) for v in range(16)]
                expect = {"refusing_d2h": ([1, 0], floats, False),
                          "legacy_d2h": ([1, 0], floats, False),
                          "refusing_d2d": (device, floats, True),
                          "legacy_d2d": (device, floats, True),
                          "refusing_h2d": (device, [3.0 * v for v in floats], True),
                          "legacy_h2d": (device, [3.0 * v for v in floats], True)}
                for name, (where, values, on_device) in expect.items():
                    with self.subTest(kind=kind, producer=name):
                        got = out[name]
                        self.assertNotIn("error", got)
                        self.assertEqual(got["device"], where)
                        self.assertEqual(got["values"], values)
                        self.assertEqual(got["on_device"], on_device)
                        self.assertTrue(got["copied"])
                        self.assertFalse(got["same"])
                        self.assertEqual(got["live"], 0)
                # The refusing producer was asked with dl_device/copy first, then for its own.
                self.assertEqual(out["refusing_d2h"]["calls"][0], ["copy", "dl_device", "max_version"])
                # (with the stream of its own device: the current one, PY-59)
                self.assertEqual(out["refusing_d2h"]["calls"][-1], ["max_version", "stream"])
                self.assertIn("copy=False", out["legacy_h2d_copy_false"]["error"])
                self.assertEqual(result["releases"], [7])
                self.assertEqual(result["live"], 0)

    def test_py66_a_failed_copy_after_import_releases_the_import_once(self):
        result = run_with_fake(self, "cuda", prefix=PRODUCERS, body=r'''
        counter = ReleaseCounter()
        fill_device()
        t = gpu_tensor(counter=counter)
        reset()
        fake.fake_driver_fail(b"cuMemcpyDtoHAsync", 1)
        try:
            dlbridge.from_dlpack(Legacy(t), device="cpu")
            RESULT["error"] = "no error"
        except BufferError as error:
            RESULT["error"] = error.code
        RESULT["refs"] = sys.getrefcount(t)
        RESULT["live"] = live()
        del t
        gc.collect()
        RESULT["releases"] = counter.contexts
        ''')
        self.assertEqual(result["error"], "kRuntimeUnavailable")
        self.assertEqual(result["refs"], 2)  # no export of t is left (the capsule's went)
        self.assertEqual(result["live"], 0)
        self.assertEqual(result["releases"], [7])


if __name__ == "__main__":
    unittest.main()
