"""Streams in Python (spec/python.md, PY-57..PY-61): the producer stream a Tensor carries, the
ordering of __dlpack__ exports and of from_dlpack imports, the current stream per device, and
the cleanup when a driver call fails.

The ordering tests run in subprocesses against S1's fake CUDA driver and HIP runtime
(tests/fakes/, paths in $DLBRIDGE_FAKE_CUDA_DRIVER and $DLBRIDGE_FAKE_HIP_RUNTIME): the
subprocess points dlbridge at the fake (DLBRIDGE_CUDA_LIBRARY / DLBRIDGE_HIP_LIBRARY) before
importing it, and reads the fake's log of driver calls through ctypes."""
import ctypes
import json
import os
import subprocess
import sys
import textwrap
import threading
import unittest

import numpy as np

import dlbridge
from support import (CURRENT_STREAM, ReleaseCounter, capsule_name, exchange_api)

HERE = os.path.dirname(os.path.abspath(__file__))
FAKES = {"cuda": ("DLBRIDGE_FAKE_CUDA_DRIVER", "DLBRIDGE_CUDA_LIBRARY"),
         "hip": ("DLBRIDGE_FAKE_HIP_RUNTIME", "DLBRIDGE_HIP_LIBRARY")}

# Run in each subprocess before the test's body: the fake loaded with ctypes (the same library
# dlbridge loads), dlbridge imported after the environment points at it, and helpers.
PRELUDE = r'''
import ctypes, gc, json, os, sys
sys.path.insert(0, HERE)
fake = ctypes.CDLL(FAKE) if FAKE else None
if fake is not None:
    fake.fake_driver_log.restype = ctypes.c_char_p
    fake.fake_driver_device_base.restype = ctypes.c_uint64
    fake.fake_driver_live_events.restype = ctypes.c_int
    fake.fake_driver_fail.argtypes = [ctypes.c_char_p, ctypes.c_int]
import dlbridge
from support import ReleaseCounter, exchange_api, DLManagedTensorVersioned, DLTensor
RESULT = {}

def calls():
    """The fake's log since the last reset: (call, event, stream, flags) per line."""
    out = []
    for line in (fake.fake_driver_log() or b"").decode().splitlines():
        words = line.split()
        if not words:
            continue
        fields = dict(w.split("=", 1) for w in words[1:] if "=" in w)
        events = [w for w in words[1:] if "=" not in w and w != "->"]
        out.append((words[0], events[0] if events else None,
                    int(fields["stream"], 0) if "stream" in fields else None,
                    int(fields["flags"], 0) if "flags" in fields else None))
    return out

def ordering():
    """[("record", event, stream), ("wait", event, stream)] in call order."""
    out = []
    for name, event, stream, _flags in calls():
        if name.endswith("EventRecord"):
            out.append(("record", event, stream))
        elif name.endswith("StreamWaitEvent"):
            out.append(("wait", event, stream))
    return out

def reset():
    fake.fake_driver_reset()

def gpu_tensor(stream=None, counter=None, **kwargs):
    """A float32 tensor over the fake's device memory (device 0 of the runtime), held by
    `counter`'s release when given."""
    md = dlbridge.MemoryDescriptor(fake.fake_driver_device_base() if fake else 0x10000, 64, SPACE)
    if counter is not None:
        md.SetReleaseAddress(counter.address, 7)
    else:
        kwargs["allow_unowned"] = True
    return dlbridge.Tensor(md, "float32", (16,), stream=stream, **kwargs)
'''


OPTION = {"cuda": "DLBRIDGE_WITH_CUDA=OFF", "hip": "DLBRIDGE_WITH_HIP=OFF"}


def switched_off(kind):
    """Whether this build has the `kind` backend switched off (a supported configuration,
    e.g. without the toolkit's headers): a pointer query then says so by the option's name
    (GPU-9), and no fake runtime can be loaded, so the ordering tests cannot run."""
    md = dlbridge.MemoryDescriptor(0x10000, 64, kind)
    tensor = dlbridge.Tensor(md, "float32", (16,), allow_unowned=True)
    try:
        tensor.__dlpack_device__()
    except BufferError as error:
        return OPTION[kind] in str(error)
    return False


def run_with_fake(test, kind, body, fake=True, library=None):
    """Runs `body` after PRELUDE in a fresh interpreter whose dlbridge uses the fake `kind`
    runtime (or `library`); returns the RESULT dict the body filled. Skips the test where the
    backend is switched off: test_py61_a_switched_off_backend_orders_nothing_and_says_so then
    states that build's behaviour."""
    if switched_off(kind):
        test.skipTest("this build has %s: no %s runtime is loaded, so nothing is ordered "
                      "(test_py61_a_switched_off_backend_orders_nothing_and_says_so)"
                      % (OPTION[kind], kind))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([HERE, env.get("PYTHONPATH", "")])
    fake_path = ""
    fake_env, library_env = FAKES[kind]
    if fake:
        fake_path = os.environ.get(fake_env)
        if not fake_path:
            test.fail("%s is not set: run this file through ctest (python.test_streams), which "
                      "passes the fake %s runtime's path" % (fake_env, kind))
    env[library_env] = library if library is not None else fake_path
    script = ("HERE = %r\nFAKE = %r\nSPACE = %r\n" % (HERE, fake_path, kind) + PRELUDE +
              textwrap.dedent(body) + "\nprint('RESULT ' + json.dumps(RESULT))\n")
    proc = subprocess.run([sys.executable, "-c", script], env=env, cwd=HERE,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    if proc.returncode != 0 or not lines:
        test.fail("subprocess failed (exit %d):\n%s" % (proc.returncode, proc.stdout))
    return json.loads(lines[-1][len("RESULT "):])


# The body of the ordered-export test, for either runtime: p is the producer stream, others
# are consumers ("none" stands for stream=None, the device's default).
ORDERED_EXPORT = r'''
counter = ReleaseCounter()
t = gpu_tensor(stream=P, counter=counter)
RESULT["device"] = list(t.__dlpack_device__())
for consumer in CONSUMERS:
    reset()
    kwargs = {} if consumer == "none" else {"stream": consumer}
    capsule = t.__dlpack__(max_version=(1, 3), **kwargs)
    legacy = t.__dlpack__(**kwargs)
    RESULT[str(consumer)] = {"ordering": ordering(), "live": fake.fake_driver_live_events(),
                             "creates": [c for c in calls() if "EventCreate" in c[0]],
                             "destroys": [c for c in calls() if "EventDestroy" in c[0]]}
    del capsule, legacy
del t
gc.collect()
RESULT["releases"] = len(counter.contexts)
'''


class OrderedExports(unittest.TestCase):
    """PY-58: __dlpack__(stream=s) of a tensor with producer stream p records an event on p and
    makes s wait on it; -1, equal streams and tensors without a stream order nothing."""

    def check_ordered(self, kind, producer, consumers, defaults):
        body = "P = %r\nCONSUMERS = %r\n" % (producer, consumers) + ORDERED_EXPORT
        result = run_with_fake(self, kind, body)
        self.assertEqual(result["device"], [2 if kind == "cuda" else 10, 0])
        for consumer in consumers:
            with self.subTest(kind=kind, consumer=consumer):
                got = result[str(consumer)]
                waited_on = defaults if consumer == "none" else consumer
                ordering = got["ordering"]
                # Two exports (versioned and legacy), each one record on p and one wait on s,
                # the wait on the event just recorded.
                self.assertEqual(len(ordering), 4, ordering)
                for record, wait in (ordering[0:2], ordering[2:4]):
                    self.assertEqual(record[0], "record")
                    self.assertEqual(record[2], producer)
                    self.assertEqual(wait[0], "wait")
                    self.assertEqual(wait[2], waited_on)
                    self.assertEqual(wait[1], record[1])
                # STR-10: the versioned export's event goes back to the pool and the legacy
                # export reuses it; at most one is made (reset() made the pooled one stale).
                self.assertLessEqual(len(got["creates"]), 1)
                for create in got["creates"]:
                    if create[3] is not None:  # CU_EVENT_DISABLE_TIMING / hipEventDisableTiming
                        self.assertTrue(create[3] & 0x2, create)
                self.assertEqual(len(got["destroys"]), 0)
                self.assertEqual(got["live"], 1)  # kept in the pool for the next exchange
        self.assertEqual(result["releases"], 1)

    def test_py58_ordered_export_records_on_the_producer_and_waits_on_the_consumer(self):
        self.check_ordered("cuda", 0x1234, [0x5678, 2, "none"], defaults=1)

    def test_py58_hip_ordered_export_records_on_the_producer_and_waits_on_the_consumer(self):
        self.check_ordered("hip", 0x1234, [0x5678, "none"], defaults=0)

    def test_py58_minus_one_equal_streams_and_no_producer_stream_order_nothing(self):
        for kind, default in (("cuda", 1), ("hip", 0)):
            with self.subTest(kind=kind):
                result = run_with_fake(self, kind, r'''
                t = gpu_tensor(stream=0x1234)
                default = gpu_tensor(stream=%d)
                plain = gpu_tensor()
                host = dlbridge.Tensor(dlbridge.MemoryDescriptor(0x1000, 64, "host"), "float32",
                                       (16,), allow_unowned=True)
                reset()
                t.__dlpack__(stream=-1)
                t.__dlpack__(stream=0x1234, max_version=(1, 3))
                default.__dlpack__()             # None is the default stream: equal streams
                default.__dlpack__(stream=%d)
                plain.__dlpack__(stream=0x5678)  # nothing pending
                plain.__dlpack__()
                host.__dlpack__()
                host.__dlpack__(max_version=(1, 3))
                RESULT["calls"] = [c for c in calls() if "Event" in c[0] or "Stream" in c[0]]
                RESULT["stream"] = [t.stream, default.stream, plain.stream, host.stream]
                ''' % (default, default))
                self.assertEqual(result["calls"], [])
                self.assertEqual(result["stream"], [0x1234, default, None, None])

    def test_py58_the_exchange_api_does_not_order(self):
        result = run_with_fake(self, "cuda", r'''
        t = gpu_tensor(stream=0x1234)
        dlbridge.set_current_stream((dlbridge.kDLCUDA, 0), 0x1234)  # PY-62: work is on it
        api = exchange_api()
        out = ctypes.POINTER(DLManagedTensorVersioned)()
        reset()
        RESULT["rc"] = api.managed_tensor_from_py_object_no_sync(t, ctypes.byref(out))
        RESULT["calls"] = [c for c in calls() if "Event" in c[0] or "Stream" in c[0]]
        out.contents.deleter(out)
        ''')
        self.assertEqual(result["rc"], 0)
        self.assertEqual(result["calls"], [])

    def test_py62_no_sync_refuses_work_pending_on_another_stream(self):
        result = run_with_fake(self, "cuda", r'''
        counter = ReleaseCounter()
        t = gpu_tensor(stream=0x1234, counter=counter)  # current_work_stream is 1, the default
        api = exchange_api()
        out = ctypes.POINTER(DLManagedTensorVersioned)()
        view = DLTensor()
        for name, call in (("managed", lambda: api.managed_tensor_from_py_object_no_sync(
                                t, ctypes.byref(out))),
                           ("view", lambda: api.dltensor_from_py_object_no_sync(
                                t, ctypes.byref(view)))):
            try:
                call()
                RESULT[name] = "no error"
            except BufferError as error:
                RESULT[name] = str(error)
        RESULT["out_null"] = not out
        RESULT["stream"] = t.stream
        del t
        gc.collect()
        RESULT["releases"] = len(counter.contexts)
        ''')
        for name in ("managed", "view"):
            self.assertIn("producer stream is 4660 but current_work_stream for device (2, 0) is 1",
                          result[name])
            self.assertIn("set_current_stream", result[name])
        self.assertTrue(result["out_null"])
        self.assertEqual(result["stream"], 0x1234)  # nothing moved
        self.assertEqual(result["releases"], 1)

    def test_py58_pending_writes_are_not_exported_to_the_host(self):
        md = dlbridge.MemoryDescriptor(0x10000, 64, "cuda")
        t = dlbridge.Tensor(md, "float32", (16,), device=(dlbridge.kDLCUDAManaged, 0),
                            allow_unowned=True, stream=0x1234)
        # Not the zero-copy host view: a copy, which waits for the stream (PY-65) through the
        # runtime this process lacks; copy=False refuses it.
        for kwargs in ({}, {"copy": True}):
            with self.subTest(**kwargs), self.assertRaises(BufferError) as cm:
                t.__dlpack__(max_version=(1, 3), dl_device=(1, 0), **kwargs)
            self.assertEqual(cm.exception.code, "kRuntimeUnavailable")
        with self.assertRaisesRegex(BufferError, "copy=False"):
            t.__dlpack__(max_version=(1, 3), dl_device=(1, 0), copy=False)
        # Without a producer stream the same export is the zero-copy host view (PY-10).
        free = dlbridge.Tensor(dlbridge.MemoryDescriptor(0x10000, 64, "cuda"), "float32", (16,),
                               device=(dlbridge.kDLCUDAManaged, 0), allow_unowned=True)
        capsule = free.__dlpack__(max_version=(1, 3), dl_device=(1, 0))
        self.assertEqual(capsule_name(capsule), "dltensor_versioned")


FAILED_WAIT = r'''
counter = ReleaseCounter()
t = gpu_tensor(stream=0x1234, counter=counter)
for call in CALLS:
    reset()
    fake.fake_driver_fail(call.encode(), 1)
    try:
        t.__dlpack__(stream=0x5678, max_version=(1, 3))
        RESULT[call] = "exported"
    except Exception as e:
        RESULT[call] = [type(e).__name__, str(e), getattr(e, "code", None),
                        fake.fake_driver_live_events(), len(counter.contexts)]
reset()
capsule = t.__dlpack__(stream=0x5678)  # the driver answers again: the export works
RESULT["after"] = [ordering(), fake.fake_driver_live_events()]
# The hold is untouched by the failures: it moves (no export relies on it but the capsule's).
del capsule
moved = dlbridge.Tensor(t.descriptor, "float32", (16,))
RESULT["moved_stream"] = moved.stream
del t
gc.collect()
RESULT["before_last"] = len(counter.contexts)
del moved
gc.collect()
RESULT["releases"] = len(counter.contexts)
'''


class FailedOrdering(unittest.TestCase):
    """PY-61: a driver failure while ordering is a BufferError naming the call; no capsule is
    made, the failed step's event is destroyed (a successful one goes back to the pool), and the tensor's hold is as it was (released once, later)."""

    def check_failures(self, kind, calls):
        result = run_with_fake(self, kind, "CALLS = %r\n" % (calls,) + FAILED_WAIT)
        for call in calls:
            with self.subTest(kind=kind, call=call):
                got = result[call]
                self.assertNotEqual(got, "exported")
                name, message, code, live, releases = got
                self.assertEqual(name, "BufferError")
                self.assertIn(call, message)
                self.assertEqual(code, "kRuntimeUnavailable")
                self.assertEqual(live, 0)
                self.assertEqual(releases, 0)
        ordering, live = result["after"]
        self.assertEqual([o[0] for o in ordering], ["record", "wait"])
        self.assertEqual(live, 1)  # the event is pooled for the next exchange (STR-10)
        self.assertIsNone(result["moved_stream"])  # a new Tensor states its own stream
        self.assertEqual(result["before_last"], 0)
        self.assertEqual(result["releases"], 1)

    def test_py61_a_failed_driver_call_raises_and_leaks_nothing(self):
        self.check_failures("cuda", ["cuStreamWaitEvent", "cuEventRecord", "cuEventCreate"])

    def test_py61_hip_a_failed_runtime_call_raises_and_leaks_nothing(self):
        self.check_failures("hip", ["hipStreamWaitEvent", "hipEventRecord"])

    def test_py61_without_a_driver_cpu_use_is_unaffected(self):
        result = run_with_fake(self, "cuda", r'''
        import numpy as np
        a = np.arange(6, dtype=np.float32)
        t = dlbridge.from_dlpack(a)
        back = np.from_dlpack(t)
        a[0] = 42
        RESULT["numpy"] = [float(back[0]), t.stream]
        counter = ReleaseCounter()
        g = gpu_tensor(stream=0x1234, counter=counter, device=(2, 0))
        g.__dlpack__(stream=-1)           # orders nothing: loads no driver
        g.__dlpack__(stream=0x1234)       # equal streams: nothing either
        try:
            g.__dlpack__(stream=0x5678)
            RESULT["ordered"] = "exported"
        except Exception as e:
            RESULT["ordered"] = [type(e).__name__, str(e), getattr(e, "code", None)]
        del g
        gc.collect()
        RESULT["releases"] = len(counter.contexts)
        ''', fake=False, library="/nonexistent/libcuda-missing.so.1")
        self.assertEqual(result["numpy"], [42.0, None])
        name, message, code = result["ordered"]
        self.assertEqual(name, "BufferError")
        self.assertIn("OrderStreams", message)
        self.assertIn("/nonexistent/libcuda-missing.so.1", message)
        self.assertEqual(code, "kRuntimeUnavailable")
        self.assertEqual(result["releases"], 1)

    def test_py61_a_switched_off_backend_orders_nothing_and_says_so(self):
        kinds = [kind for kind in OPTION if switched_off(kind)]
        if not kinds:
            self.skipTest("both GPU backends are built: the fakes' tests state their behaviour")
        for kind in kinds:
            with self.subTest(kind=kind):
                counter = ReleaseCounter()
                md = dlbridge.MemoryDescriptor(0x10000, 64, kind)
                md.SetReleaseAddress(counter.address, 3)
                device = (dlbridge.kDLCUDA if kind == "cuda" else dlbridge.kDLROCM, 0)
                t = dlbridge.Tensor(md, "float32", (16,), stream=0x1234, device=device)
                t.__dlpack__(stream=-1)      # STR-2: nothing to order, nothing loaded
                t.__dlpack__(stream=0x1234)
                with self.assertRaises(BufferError) as cm:
                    t.__dlpack__(stream=0x5678)
                self.assertIn("OrderStreams", str(cm.exception))
                self.assertIn(OPTION[kind], str(cm.exception))
                self.assertEqual(cm.exception.code, "kRuntimeUnavailable")
                self.assertEqual(t.stream, 0x1234)
                del t, cm
                self.assertEqual(counter.contexts, [3])

    def test_py61_a_runtime_that_cannot_be_used_is_a_buffer_error(self):
        stub = "/usr/local/cuda/targets/x86_64-linux/lib/stubs/libcuda.so"
        if not os.path.exists(stub):
            self.skipTest("no CUDA toolkit link stub at %s" % stub)
        result = run_with_fake(self, "cuda", r'''
        g = gpu_tensor(stream=0x1234, device=(2, 0))
        try:
            g.__dlpack__(stream=0x5678)
            RESULT["ordered"] = "exported"
        except Exception as e:
            RESULT["ordered"] = [type(e).__name__, str(e), getattr(e, "code", None)]
        ''', fake=False, library=stub)
        name, message, code = result["ordered"]
        self.assertEqual((name, code), ("BufferError", "kStubLibrary"), message)


class ProducerStream(unittest.TestCase):
    """PY-57: Tensor(..., stream=) and Tensor.stream."""

    def test_py57_stream_keyword_is_checked_for_the_device(self):
        def cuda(stream, **kwargs):
            md = dlbridge.MemoryDescriptor(0x10000, 64, kwargs.pop("space", "cuda"))
            return dlbridge.Tensor(md, "float32", (16,), allow_unowned=True, stream=stream,
                                   **kwargs)
        self.assertIsNone(cuda(None, device=(2, 0)).stream)
        self.assertEqual(cuda(1, device=(2, 0)).stream, 1)
        self.assertEqual(cuda(2, device=(2, 0)).stream, 2)
        self.assertEqual(cuda(0x7F0000001000).stream, 0x7F0000001000)  # no device: the space's
        self.assertEqual(cuda(0, space="hip").stream, 0)
        self.assertEqual(cuda(0x1234, space="hip", device=(10, 0)).stream, 0x1234)
        for stream, kwargs in ((0, {}), (-2, {}), (1, {"space": "hip"}), (2, {"space": "hip"})):
            with self.subTest(stream=stream, **kwargs), self.assertRaises(ValueError) as caught:
                cuda(stream, **kwargs)
            self.assertEqual(caught.exception.code, "kInvalidArgument")
            self.assertIn("Tensor: stream", str(caught.exception))
        with self.assertRaisesRegex(ValueError, "stream=-1"):
            cuda(-1)
        with self.assertRaisesRegex(ValueError, "64-bit"):
            cuda(2 ** 64 - 1)
        for bad in (True, 1.0, "1"):
            with self.subTest(bad=bad), self.assertRaises(TypeError):
                cuda(bad)
        with self.assertRaises(TypeError):  # keyword-only, like allow_unowned
            dlbridge.Tensor(dlbridge.MemoryDescriptor(0x10000, 64, "cuda"), "float32", (16,),
                            None, 0, None, 0, True, 1)
        t = cuda(0x1234)
        with self.assertRaises(AttributeError):
            t.stream = 5

    def test_py57_host_memory_has_no_stream_and_a_refusal_moves_no_hold(self):
        counter = ReleaseCounter()
        values = (ctypes.c_float * 4)()
        md = dlbridge.MemoryDescriptor(ctypes.addressof(values), 16, "host")
        md.SetReleaseAddress(counter.address, 1)
        for stream in (0, 1, 0x1234):
            with self.subTest(stream=stream), self.assertRaisesRegex(ValueError, "stream="):
                dlbridge.Tensor(md, "float32", (4,), stream=stream)
        with self.assertRaisesRegex(ValueError, "no streams"):
            dlbridge.Tensor(md, "float32", (4,), device=(1, 0), stream=1)
        self.assertTrue(md.HasOwnership())  # refused before the hold moved
        pinned = dlbridge.Tensor(dlbridge.MemoryDescriptor(0x10000, 16, "host"), "float32", (4,),
                                 device=(3, 0), allow_unowned=True, stream=0x55)
        self.assertEqual(pinned.stream, 0x55)  # CUDA's pinned host memory has its streams
        t = dlbridge.Tensor(md, "float32", (4,), stream=None)
        self.assertIsNone(t.stream)
        del t
        self.assertEqual(counter.calls, 1)


class RecordingProducer:
    """A producer on `device` whose __dlpack__ records its keywords and returns a capsule of
    a dlbridge tensor over (fake) memory of that device."""

    def __init__(self, device, legacy=False):
        self.device = device
        self.legacy = legacy
        self.calls = []
        space = {1: "host", 2: "cuda", 3: "host", 13: "cuda", 10: "hip"}[device[0]]
        self.inner = dlbridge.Tensor(dlbridge.MemoryDescriptor(0x10000, 64, space), "float32",
                                     (16,), device=device, allow_unowned=True)

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, **kwargs):
        self.calls.append(kwargs)
        if self.legacy and set(kwargs) - {"stream"}:
            raise TypeError("__dlpack__() got an unexpected keyword argument")
        return self.inner.__dlpack__(max_version=kwargs.get("max_version"))


class ImportStreams(unittest.TestCase):
    """PY-59: from_dlpack passes a stream to CUDA and ROCm producers and records it."""

    def tearDown(self):
        dlbridge.set_current_stream((2, 0), None)
        dlbridge.set_current_stream((10, 0), None)

    def test_py59_default_and_explicit_streams_reach_the_producer(self):
        for device, default in (((2, 0), 1), ((13, 0), 1), ((10, 0), 0)):
            with self.subTest(device=device):
                p = RecordingProducer(device)
                t = dlbridge.from_dlpack(p)
                self.assertEqual(p.calls[-1], {"max_version": (1, dlbridge.DLPACK_VERSION[1]),
                                               "stream": default})
                self.assertEqual(t.stream, default)
                t = dlbridge.from_dlpack(p, stream=0x777)
                self.assertEqual(p.calls[-1]["stream"], 0x777)
                self.assertEqual(t.stream, 0x777)
                t = dlbridge.from_dlpack(p, stream=-1)  # the caller orders: nothing recorded
                self.assertEqual(p.calls[-1]["stream"], -1)
                self.assertIsNone(t.stream)
        p = RecordingProducer((2, 0))
        for bad in (0, -2):
            with self.subTest(bad=bad), self.assertRaises(ValueError):
                dlbridge.from_dlpack(p, stream=bad)
        with self.assertRaises(TypeError):
            dlbridge.from_dlpack(p, stream=True)
        rocm = RecordingProducer((10, 0))
        with self.assertRaises(ValueError):
            dlbridge.from_dlpack(rocm, stream=1)
        self.assertEqual(len(p.calls) + len(rocm.calls), 0)  # refused before the producer

    def test_py59_the_current_stream_is_the_default(self):
        dlbridge.set_current_stream((2, 0), 0x999)
        p = RecordingProducer((2, 0))
        self.assertEqual(dlbridge.from_dlpack(p).stream, 0x999)
        self.assertEqual(p.calls[-1]["stream"], 0x999)
        dlbridge.set_current_stream((2, 0), None)
        self.assertEqual(dlbridge.from_dlpack(p).stream, 1)

    def test_py59_cpu_and_pinned_producers_get_no_stream(self):
        for device in ((1, 0), (3, 0)):
            with self.subTest(device=device):
                p = RecordingProducer(device)
                t = dlbridge.from_dlpack(p)
                self.assertNotIn("stream", p.calls[-1])
                self.assertIsNone(t.stream)
        cpu = RecordingProducer((1, 0))
        with self.assertRaisesRegex(ValueError, "from_dlpack: stream"):
            dlbridge.from_dlpack(cpu, stream=1)
        self.assertEqual(len(cpu.calls), 0)
        pinned = RecordingProducer((3, 0))  # stream= chooses one for pinned memory too
        self.assertEqual(dlbridge.from_dlpack(pinned, stream=0x55).stream, 0x55)
        self.assertEqual(pinned.calls[-1]["stream"], 0x55)
        # device=(1, 0) is the consumer's device: the CPU, no stream (PY-35's host view).
        managed = RecordingProducer((13, 0))
        t = dlbridge.from_dlpack(managed, device=(1, 0))
        self.assertNotIn("stream", managed.calls[-1])
        self.assertEqual((t.device, t.stream), ((1, 0), None))
        a = np.arange(4, dtype=np.float32)  # NumPy's __dlpack__ is never given a stream
        self.assertIsNone(dlbridge.from_dlpack(a).stream)

    def test_py59_an_ndarray_is_known_host_memory_and_its_subclasses_are_asked(self):
        # A NumPy array's device is (kDLCPU, 0) without asking it (PY-59): stream= for it is
        # refused as for any CPU producer, and its import gets no stream.
        a = np.arange(4, dtype=np.float32)
        with self.assertRaisesRegex(ValueError, "from_dlpack: stream"):
            dlbridge.from_dlpack(a, stream=1)
        self.assertEqual((dlbridge.from_dlpack(a).device, dlbridge.from_dlpack(a).stream),
                         ((1, 0), None))
        # A subclass may say otherwise: it is asked, and its answer decides the stream.
        seen = []

        class Claims(np.ndarray):
            def __dlpack_device__(self):
                seen.append("device")
                return (2, 0)

            def __dlpack__(self, **kwargs):
                seen.append(kwargs.get("stream"))
                return RecordingProducer((2, 0)).inner.__dlpack__(
                    max_version=kwargs.get("max_version"))

        t = dlbridge.from_dlpack(np.arange(4, dtype=np.float32).view(Claims))
        self.assertEqual(seen, ["device", 1])
        self.assertEqual((t.device, t.stream), ((2, 0), 1))

    def test_py59_fallbacks_carry_the_stream(self):
        class Legacy(RecordingProducer):  # a type of its own: from_dlpack remembers it (PY-16)
            pass
        p = Legacy((2, 0), legacy=True)
        t = dlbridge.from_dlpack(p, device=(2, 0), copy=False)
        self.assertEqual(p.calls, [{"max_version": (1, dlbridge.DLPACK_VERSION[1]),
                                    "dl_device": (2, 0), "copy": False, "stream": 1},
                                   {"max_version": (1, dlbridge.DLPACK_VERSION[1]), "stream": 1},
                                   {"stream": 1}])
        self.assertEqual(t.stream, 1)
        t = dlbridge.from_dlpack(p, stream=0x321)  # asked with the stream alone from now on
        self.assertEqual(p.calls[3:], [{"stream": 0x321}])
        self.assertEqual(t.stream, 0x321)

    def test_py59_a_device_answer_out_of_32_bits_is_refused_like_device(self):
        # 2**32 + 2 read in 32 bits is kDLCUDA (2): it would be given a CUDA stream.
        for answer in ((2 ** 32 + 2, 0), (-1, 0), (2, 2 ** 31)):
            with self.subTest(answer=answer):
                p = RecordingProducer((2, 0))
                p.device = answer
                with self.assertRaisesRegex(ValueError, r"__dlpack_device__\(\) returned .*"
                                            r"out of range"):
                    dlbridge.from_dlpack(p)
                self.assertEqual(p.calls, [])  # refused before the producer's __dlpack__
                with self.assertRaisesRegex(ValueError, "out of range"):
                    dlbridge.from_dlpack(p, device=answer)  # the same refusal as device=

    def test_py59_a_device_answer_that_is_no_tuple_is_told_what_to_return(self):
        for answer in (None, "cuda", (2,), (2, "0")):
            with self.subTest(answer=answer):
                p = RecordingProducer((2, 0))
                p.device = answer
                with self.assertRaises(TypeError) as cm:
                    dlbridge.from_dlpack(p)
                message = str(cm.exception)
                self.assertIn("RecordingProducer.__dlpack_device__() returned", message)
                self.assertIn("it must return a (device_type, device_id) tuple", message)
                self.assertNotIn("None or", message)
                self.assertEqual(p.calls, [])

    def test_py59_a_capsule_takes_no_stream(self):
        p = RecordingProducer((2, 0))
        capsule = p.inner.__dlpack__(max_version=(1, 3))
        with self.assertRaisesRegex(ValueError, "capsule"):
            dlbridge.from_dlpack(capsule, stream=5)
        self.assertEqual(capsule_name(capsule), "dltensor_versioned")  # nothing consumed
        self.assertIsNone(dlbridge.from_dlpack(capsule).stream)

    def test_py59_re_export_after_import_orders_after_the_recorded_stream(self):
        result = run_with_fake(self, "cuda", r'''
        class Producer:
            def __init__(self):
                self.counter = ReleaseCounter()
                self.inner = gpu_tensor(counter=self.counter)
                self.streams = []
            def __dlpack_device__(self):
                return self.inner.__dlpack_device__()
            def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
                self.streams.append(stream)
                return self.inner.__dlpack__(max_version=max_version)
        p = Producer()
        imported = dlbridge.from_dlpack(p)
        explicit = dlbridge.from_dlpack(p, stream=0x3333)
        reset()
        capsule = imported.__dlpack__(stream=0x4444)
        RESULT["imported"] = [imported.stream, ordering()]
        reset()
        capsule2 = explicit.__dlpack__(stream=0x4444, max_version=(1, 3))
        RESULT["explicit"] = [explicit.stream, ordering(), p.streams]
        del capsule, capsule2, imported, explicit, p
        gc.collect()
        ''')
        stream, ordering = result["imported"]
        self.assertEqual(stream, 1)
        self.assertEqual([o[0] for o in ordering], ["record", "wait"])
        self.assertEqual((ordering[0][2], ordering[1][2]), (1, 0x4444))
        stream, ordering, seen = result["explicit"]
        self.assertEqual(stream, 0x3333)
        self.assertEqual((ordering[0][2], ordering[1][2]), (0x3333, 0x4444))
        self.assertEqual(seen, [1, 0x3333])


class CurrentStream(unittest.TestCase):
    """PY-60: the current stream per device, and the exchange API's current_work_stream."""

    def tearDown(self):
        for device in ((2, 0), (2, 1), (10, 0)):
            dlbridge.set_current_stream(device, None)

    def work_stream(self, device):
        api = exchange_api()
        out = ctypes.c_void_p(0xDEAD)
        self.assertEqual(api.current_work_stream(device[0], device[1], ctypes.byref(out)), 0)
        return out.value

    def test_py60_defaults_and_set_streams(self):
        self.assertEqual(dlbridge.current_stream((2, 0)), 1)
        self.assertEqual(dlbridge.current_stream((10, 0)), 0)
        self.assertIsNone(dlbridge.current_stream((1, 0)))
        self.assertIsNone(dlbridge.current_stream((14, 0)))
        self.assertEqual(self.work_stream((2, 0)), 1)   # CU_STREAM_LEGACY
        self.assertIsNone(self.work_stream((10, 0)))    # ROCm's null stream
        self.assertIsNone(self.work_stream((1, 0)))     # kDLCPU: no streams
        dlbridge.set_current_stream((2, 0), 0x999)
        self.assertEqual(dlbridge.current_stream((2, 0)), 0x999)
        self.assertEqual(dlbridge.current_stream((13, 0)), 0x999)  # CUDA's types share streams
        self.assertEqual(dlbridge.current_stream((2, 1)), 1)       # per device id
        self.assertEqual(self.work_stream((2, 0)), 0x999)
        dlbridge.set_current_stream((2, 1), 2)
        self.assertEqual(self.work_stream((2, 1)), 2)              # CU_STREAM_PER_THREAD
        dlbridge.set_current_stream((10, 0), 0x4242)
        self.assertEqual(self.work_stream((10, 0)), 0x4242)
        seen = []
        thread = threading.Thread(target=lambda: seen.append(dlbridge.current_stream((2, 0))))
        thread.start()
        thread.join()
        self.assertEqual(seen, [0x999])  # process-wide, not per thread
        dlbridge.set_current_stream((2, 0), None)
        self.assertEqual(dlbridge.current_stream((2, 0)), 1)
        dlbridge.set_current_stream((1, 0), None)  # nothing to reset

    def test_py60_bad_values_are_refused(self):
        for device, stream in (((2, 0), 0), ((2, 0), -1), ((2, 0), -2), ((10, 0), 1),
                               ((1, 0), 1), ((14, 0), 3), ((2, 0), 2 ** 64)):
            with self.subTest(device=device, stream=stream), self.assertRaises(ValueError):
                dlbridge.set_current_stream(device, stream)
        for bad in (((2, 0), True), ((2,), 1), (b"cuda", 1)):
            with self.subTest(bad=bad), self.assertRaises(TypeError):
                dlbridge.set_current_stream(*bad)
        with self.assertRaises(ValueError):
            dlbridge.current_stream((2, -1))
        self.assertEqual(dlbridge.current_stream((2, 0)), 1)  # unchanged by the refusals
        with self.assertRaises(TypeError):
            dlbridge.set_current_stream((2, 0))

    def test_py60_a_device_of_none_is_told_the_pair_it_must_be(self):
        # current_stream and set_current_stream take no None device: the refusal must not
        # offer None (it did: "must be None or a tuple"), and says what the pair is.
        for call in (lambda: dlbridge.current_stream(None),
                     lambda: dlbridge.set_current_stream(None, 5)):
            with self.assertRaises(TypeError) as cm:
                call()
            message = str(cm.exception)
            self.assertIn("device must be a device: ", message)
            self.assertIn("a (device_type, device_id) pair of integers", message)
            self.assertNotIn("None or", message)
            self.assertTrue(message.endswith("not None"), message)

    def test_py60_refusals_name_the_stream_device_types_of_the_table(self):
        with self.assertRaises(ValueError) as cm:
            dlbridge.set_current_stream((1, 0), 5)
        self.assertIn("(CUDA: kDLCUDA, kDLCUDAHost, kDLCUDAManaged; ROCm: kDLROCM, kDLROCMHost)",
                      str(cm.exception))

    def test_py60_a_null_out_pointer_is_ignored(self):
        api = exchange_api()
        self.assertEqual(api.current_work_stream(2, 0, None), 0)
        self.assertTrue(CURRENT_STREAM)


if __name__ == "__main__":
    unittest.main()
