"""The DLPack Python protocol against dlbridge's own producer and consumer (versioned and
legacy), capsule rules, failed imports and the DLPack 1.3 C exchange API (spec/python.md)."""
import ctypes
import glob
import os
import re
import unittest

import dlbridge
import support
from support import (DELETER, NAMES, DLManagedTensor, DLManagedTensorVersioned, DLTensor, HandBuilt,
                     ReleaseCounter, SET_ERROR, address_of, capsule_name, capsule_pointer,
                     exchange_api, host_tensor, make_capsule, owned)

F_RO = dlbridge.FLAG_READ_ONLY
F_COPIED = dlbridge.FLAG_IS_COPIED


def floats(n):
    return (ctypes.c_float * n)(*range(n))


def read_floats(t):
    """The tensor's elements in C order, read through its descriptor and layout."""
    base = t.descriptor.GetPointer() + t.byte_offset
    out = []

    def walk(dim, offset):
        if dim == t.ndim:
            out.append(ctypes.c_float.from_address(base + offset * 4).value)
            return
        for i in range(t.shape[dim]):
            walk(dim + 1, offset + i * t.strides[dim])
    walk(0, 0)
    return out


class DlpackArguments(unittest.TestCase):
    def setUp(self):
        self.values = floats(6)
        md = dlbridge.MemoryDescriptor(address_of(self.values), 24, "host")
        md.SetOwner(self.values)  # a hold: every export here is of held memory
        self.t = dlbridge.Tensor(md, "float32", (2, 3))

    def test_py6_max_version_selects_the_capsule(self):
        self.assertEqual(capsule_name(self.t.__dlpack__()), "dltensor")
        self.assertEqual(capsule_name(self.t.__dlpack__(max_version=None)), "dltensor")
        self.assertEqual(capsule_name(self.t.__dlpack__(max_version=(0, 8))), "dltensor")
        self.assertEqual(capsule_name(self.t.__dlpack__(max_version=(1, 0))), "dltensor_versioned")
        self.assertEqual(capsule_name(self.t.__dlpack__(max_version=(2, 0))), "dltensor_versioned")
        cap = self.t.__dlpack__(max_version=(1, 3))
        m = DLManagedTensorVersioned.from_address(capsule_pointer(cap, "dltensor_versioned"))
        self.assertEqual((m.version.major, m.version.minor), dlbridge.DLPACK_VERSION)
        self.assertEqual(m.flags, 0)
        self.assertEqual(m.dl_tensor.data, address_of(self.values))

    def test_py7_malformed_arguments_raise_type_error(self):
        for kwargs in ({"max_version": "1.0"}, {"max_version": (1,)}, {"max_version": [1, 0]},
                       {"max_version": (1, "0")}, {"dl_device": 1.5}, {"dl_device": (1,)},
                       {"copy": "yes"}, {"copy": 1}, {"stream": "s"}, {"stream": 1.5},
                       {"stream": True}, {"bogus": 1}):
            with self.subTest(kwargs=kwargs), self.assertRaises(TypeError):
                self.t.__dlpack__(**kwargs)
        with self.assertRaises(TypeError):
            self.t.__dlpack__(None)

    def test_py8_read_only_refused_for_legacy_flagged_for_versioned(self):
        t = host_tensor(self.values, flags=F_RO)
        self.assertTrue(t.readonly)
        with self.assertRaises(BufferError) as cm:
            t.__dlpack__()
        self.assertEqual(cm.exception.code, "kReadOnly")
        imported = dlbridge.from_dlpack(t.__dlpack__(max_version=(1, 3)))
        self.assertTrue(imported.readonly)
        self.assertEqual(imported.descriptor.GetPointer(), address_of(self.values))

    def test_py11_a_tensor_fails_alike_whatever_the_call_asks(self):
        # read-only (refused by the legacy plan) and unowned (PY-54, after the versioned
        # plan's checks): the bare call and one with dl_device take the same path to the error
        md = dlbridge.MemoryDescriptor(address_of(self.values), 24, "host")
        t = dlbridge.Tensor(md, "float32", (6,), flags=F_RO)
        seen = set()
        for kwargs in ({}, {"stream": None}, {"dl_device": (1, 0)}, {"copy": False},
                       {"max_version": (1, 3)}, {"max_version": (1, 3), "dl_device": (1, 0)}):
            with self.subTest(kwargs=kwargs), self.assertRaises(BufferError) as cm:
                t.__dlpack__(**kwargs)
            seen.add((cm.exception.code, str(cm.exception)))
        self.assertEqual(len(seen), 1, seen)
        self.assertEqual(next(iter(seen))[0], "kNoHold")

    def test_py9_stream_rules_per_device(self):
        self.t.__dlpack__(stream=None)
        for s in (0, 1, 2, -1, 12345):
            with self.subTest(cpu=s), self.assertRaises(ValueError):
                self.t.__dlpack__(stream=s)
        cuda = dlbridge.Tensor(dlbridge.MemoryDescriptor(0x10000, 16, "cuda"), "float32", (4,), device=(2, 0),
                               allow_unowned=True)
        for s in (None, 1, 2, -1, 0x7F0000001000, 2 ** 63 - 1):
            with self.subTest(cuda=s):
                cuda.__dlpack__(stream=s)
        for s in (0, -2, 2 ** 63, 2 ** 64 - 1, -2 ** 63 - 1):  # beyond int64: not a stream value
            with self.subTest(cuda=s), self.assertRaises(ValueError):
                cuda.__dlpack__(stream=s)
        rocm = dlbridge.Tensor(dlbridge.MemoryDescriptor(0x10000, 16, "hip"), "float32", (4,), device=(10, 0),
                               allow_unowned=True)
        for s in (None, 0, -1, 3):
            with self.subTest(rocm=s):
                rocm.__dlpack__(stream=s)
        for s in (1, 2):
            with self.subTest(rocm=s), self.assertRaises(ValueError):
                rocm.__dlpack__(stream=s)

    def test_py10_refusals_name_the_host_accessible_types_of_the_table(self):
        with self.assertRaises(BufferError) as cm:
            self.t.__dlpack__(dl_device=(2, 0), copy=False)
        self.assertIn("host-accessible memory (kDLCPU, kDLCUDAHost, kDLROCMHost, kDLCUDAManaged)",
                      str(cm.exception))
        with self.assertRaises(BufferError) as cm:
            dlbridge.from_dlpack(self.t, device=(2, 0), copy=False)
        self.assertIn("host-accessible memory (kDLCPU, kDLCUDAHost, kDLROCMHost, kDLCUDAManaged)",
                      str(cm.exception))

    def test_py10_dl_device_and_copy(self):
        # Same device: zero-copy.
        same = dlbridge.from_dlpack(self.t.__dlpack__(max_version=(1, 3), dl_device=(1, 0)))
        self.assertEqual(same.descriptor.GetPointer(), address_of(self.values))
        self.assertEqual(same.flags & F_COPIED, 0)
        same = dlbridge.from_dlpack(self.t.__dlpack__(max_version=(1, 3), copy=False))
        self.assertEqual(same.descriptor.GetPointer(), address_of(self.values))
        # A device no copy reaches (no CUDA driver here; OpenCL): BufferError. kDLCPU has
        # device 0 only: (1, 1) is no device, ValueError (PY-64).
        for device in ((2, 0), (4, 0)):
            with self.subTest(device=device), self.assertRaises(BufferError):
                self.t.__dlpack__(dl_device=device)
        with self.assertRaises(ValueError):
            self.t.__dlpack__(dl_device=(1, 1))
        # copy=True always copies and says so (versioned); legacy cannot say it but still copies.
        copied = dlbridge.from_dlpack(self.t.__dlpack__(max_version=(1, 3), copy=True))
        self.assertNotEqual(copied.descriptor.GetPointer(), address_of(self.values))
        self.assertEqual(copied.flags & F_COPIED, F_COPIED)
        self.assertEqual(read_floats(copied), read_floats(self.t))
        legacy = dlbridge.from_dlpack(self.t.__dlpack__(copy=True))
        self.assertNotEqual(legacy.descriptor.GetPointer(), address_of(self.values))
        self.values[0] = 42.0
        self.assertEqual(read_floats(copied)[0], 0.0)
        # Host-accessible memory (pinned, managed) to kDLCPU: the same bytes, relabelled
        # (copy=None or False); copy=True copies.
        pinned_counter = ReleaseCounter()  # outlives `pinned`, whose release calls it
        pinned = host_tensor(self.values, counter=pinned_counter, device=(3, 0))
        self.assertEqual(pinned.__dlpack_device__(), (3, 0))
        for copy in (None, False):
            with self.subTest(copy=copy):
                moved = dlbridge.from_dlpack(pinned.__dlpack__(max_version=(1, 3), dl_device=(1, 0), copy=copy))
                self.assertEqual(moved.device, (1, 0))
                self.assertEqual(moved.flags & F_COPIED, 0)
                self.assertEqual(moved.data_ptr(), address_of(self.values))
        moved = dlbridge.from_dlpack(pinned.__dlpack__(max_version=(1, 3), dl_device=(1, 0), copy=True))
        self.assertEqual((moved.device, moved.flags & F_COPIED), ((1, 0), F_COPIED))
        self.assertNotEqual(moved.data_ptr(), address_of(self.values))
        self.assertEqual(read_floats(moved), list(self.values))
        md = dlbridge.MemoryDescriptor(address_of(self.values), 24, "cuda")
        md.SetOwner(self.values)
        managed = dlbridge.Tensor(md, "float32", (6,), device=(13, 0))
        legacy = dlbridge.from_dlpack(managed.__dlpack__(dl_device=(1, 0)))
        self.assertEqual((legacy.device, legacy.data_ptr()), ((1, 0), address_of(self.values)))
        copied = dlbridge.from_dlpack(managed.__dlpack__(max_version=(1, 3), dl_device=(1, 0), copy=True))
        self.assertEqual((copied.device, copied.flags & F_COPIED), ((1, 0), F_COPIED))
        self.assertEqual(read_floats(copied), list(self.values))
        with self.assertRaises(BufferError):  # dlbridge copies into kDLCPU memory only
            managed.__dlpack__(copy=True)
        del pinned, moved
        self.assertEqual(pinned_counter.calls, 1)
        # Device memory cannot be copied by dlbridge.
        cuda = dlbridge.Tensor(dlbridge.MemoryDescriptor(0x10000, 16, "cuda"), "float32", (4,), device=(2, 0),
                               allow_unowned=True)
        with self.assertRaises(BufferError):
            cuda.__dlpack__(copy=True)
        with self.assertRaises(BufferError):
            cuda.__dlpack__(dl_device=(1, 0))

    def test_py10_copy_of_strided_views_is_c_contiguous(self):
        values = floats(12)
        md = owned(values, 48)
        # The view [::-1, ::2] of a 3x4 matrix: element zero is the last row's first element.
        view = dlbridge.Tensor(md, "float32", (3, 2), strides=(-4, 2), byte_offset=32)
        copied = dlbridge.from_dlpack(view.__dlpack__(max_version=(1, 3), copy=True))
        self.assertEqual(copied.strides, (2, 1))
        self.assertEqual(read_floats(copied), [8.0, 10.0, 4.0, 6.0, 0.0, 2.0])
        self.assertEqual(read_floats(view), read_floats(copied))
        scalar = dlbridge.Tensor(owned(values, 4), "float32", ())
        self.assertEqual(read_floats(dlbridge.from_dlpack(scalar.__dlpack__(copy=True))), [0.0])
        empty = dlbridge.Tensor(dlbridge.MemoryDescriptor(), "float32", (0, 3), allow_unowned=True)
        self.assertEqual(dlbridge.from_dlpack(empty.__dlpack__(copy=True)).shape, (0, 3))

    def test_py11_export_checks_come_from_the_core(self):
        values = floats(8)
        md = owned(values, 24)
        t = dlbridge.Tensor(md, "float32", (7,))
        with self.assertRaises(ValueError) as cm:
            t.__dlpack__()
        self.assertEqual(cm.exception.code, "kOutOfBounds")
        t.descriptor.SetSizeInBytes(28)  # a change through the view is seen by the next export
        t.__dlpack__()
        t.descriptor.SetSizeInBytes(8)
        with self.assertRaises(ValueError):
            t.__dlpack__()
        t.descriptor.SetSizeInBytes(32)
        t.__dlpack__()
        t.flags = F_RO
        with self.assertRaises(BufferError):
            t.__dlpack__()
        t.flags = 1 << 40
        with self.assertRaises(ValueError) as cm:
            t.__dlpack__(max_version=(1, 3))
        self.assertEqual(cm.exception.code, "kInvalidFlags")


class Lifetime(unittest.TestCase):
    def test_py12_release_runs_once_when_the_last_consumer_lets_go(self):
        for tensor_first in (True, False):
            with self.subTest(tensor_first=tensor_first):
                counter = ReleaseCounter()
                values = floats(4)
                t = host_tensor(values, counter=counter)
                consumers = [dlbridge.from_dlpack(t),                      # exchange API
                             dlbridge.from_dlpack(t.__dlpack__()),         # legacy capsule
                             dlbridge.from_dlpack(t.__dlpack__(max_version=(1, 3)))]
                if tensor_first:
                    del t
                while consumers:
                    self.assertEqual(counter.calls, 0)
                    consumers.pop()
                if not tensor_first:
                    self.assertEqual(counter.calls, 0)
                    del t
                self.assertEqual(counter.contexts, [1234])

    def test_py12_deleters_run_on_threads_without_the_gil(self):
        import threading
        counter = ReleaseCounter()
        t = host_tensor(floats(4), counter=counter)
        for kwargs in ({}, {"max_version": (1, 3)}):
            cap = t.__dlpack__(**kwargs)
            name = capsule_name(cap)
            managed = (DLManagedTensorVersioned if kwargs else DLManagedTensor).from_address(capsule_pointer(cap, name))
            ctypes.pythonapi.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_void_p]
            ctypes.pythonapi.PyCapsule_SetName(cap, ctypes.cast(NAMES[b"used_" + name.encode()], ctypes.c_void_p))
            deleter = DELETER(ctypes.cast(managed.deleter, ctypes.c_void_p).value)  # drops the GIL
            worker = threading.Thread(target=deleter, args=(ctypes.addressof(managed),))
            worker.start()
            worker.join()
            del cap
        self.assertEqual(counter.calls, 0)
        del t
        self.assertEqual(counter.calls, 1)

    def test_py67_export_blocks_are_recycled_and_never_shared_by_live_exports(self):
        import random
        rng = random.Random(67)
        values = floats(1)
        live = []  # (capsule, versioned, ndim, block address)

        def export(ndim, versioned=None):
            # up to 8 dimensions take recycled blocks, more take blocks of the C heap
            shape = tuple([1] * ndim)
            md = dlbridge.MemoryDescriptor(address_of(values), 4, "host")
            md.SetOwner(values)
            t = dlbridge.Tensor(md, "float32", shape)
            if versioned is None:
                versioned = rng.random() < 0.5
            cap = t.__dlpack__(max_version=(1, 3)) if versioned else t.__dlpack__()
            name = capsule_name(cap)
            live.append((cap, versioned, ndim, capsule_pointer(cap, name)))

        def check_live():
            addresses = [block for _, _, _, block in live]
            self.assertEqual(len(set(addresses)), len(addresses), "two live exports share a block")
            for _, versioned, ndim, block in live:
                managed = (DLManagedTensorVersioned if versioned else DLManagedTensor).from_address(block)
                t = managed.dl_tensor
                self.assertEqual((t.ndim, t.data, t.device.device_type), (ndim, address_of(values), 1))
                self.assertEqual([t.shape[i] for i in range(ndim)], [1] * ndim)
                self.assertEqual([t.strides[i] for i in range(ndim)], [1] * ndim)

        for _ in range(400):
            if live and rng.random() < 0.45:
                live.pop(rng.randrange(len(live)))  # an unconsumed capsule: its deleter ends it
            else:
                export(rng.choice([0, 1, 2, 4, 8, 9, 16, 32]))
            if len(live) > 40:  # more ends at once than the stack keeps
                del live[:30]
            check_live()

        # Ended blocks come back: the next export of up to 8 dimensions takes the same memory,
        # whatever its size (the C heap would give a 136-byte and a 168-byte block different
        # memory). No collection in between, which could end another test's leftover export.
        import gc
        gc.collect()
        gc.disable()
        try:
            del live[:]
            export(2, versioned=False)  # 136 bytes
            first = live[-1][3]
            del live[:]
            export(3, versioned=True)  # 168 bytes
            self.assertEqual(live[-1][3], first)
            del live[:]
        finally:
            gc.enable()

    def test_py13_capsule_destructor_deletes_only_unconsumed_capsules(self):
        counter = ReleaseCounter()
        t = host_tensor(floats(4), counter=counter)
        cap = t.__dlpack__(max_version=(1, 3))
        del t
        self.assertEqual(counter.calls, 0)
        del cap  # never consumed: the destructor calls the deleter
        self.assertEqual(counter.calls, 1)

        counter = ReleaseCounter()
        t = host_tensor(floats(4), counter=counter)
        cap = t.__dlpack__()
        del t
        imported = dlbridge.from_dlpack(cap)
        self.assertEqual(capsule_name(cap), "used_dltensor")
        del cap  # consumed: nothing
        self.assertEqual(counter.calls, 0)
        del imported
        self.assertEqual(counter.calls, 1)

    def test_py13_the_module_defines_no_capsule_name_destructor_cache_or_device_fact(self):
        # The protocol's names, the capsule destructor and the per-type cache are python.h's,
        # the device facts the device table's: python/src/ may only use them.
        src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python", "src")
        files = sorted(glob.glob(os.path.join(src, "*.cpp")) + glob.glob(os.path.join(src, "*.h")))
        self.assertGreater(len(files), 5)
        token = re.compile(r'"(?:\\.|[^"\\\n])*"|//[^\n]*|/\*[\s\S]*?\*/')
        for path in files:
            with open(path, encoding="utf-8") as f:
                text = f.read()
            name = os.path.basename(path)
            literals = re.findall(r'"((?:\\.|[^"\\\n])*)"', token.sub(
                lambda m: m.group(0) if m.group(0).startswith('"') else " ", text))
            code = token.sub(" ", text)  # no comments, no strings
            with self.subTest(file=name):
                for literal in ("dltensor", "dltensor_versioned", "used_dltensor",
                                "used_dltensor_versioned", "dlpack_exchange_api"):
                    self.assertNotIn(literal, literals)
                for call in re.findall(r"PyCapsule_New\(([^;]*)\);", code):
                    self.assertRegex(call, r",\s*nullptr\s*\)?$")  # no destructor of its own
                self.assertIsNone(re.search(r"\btp_version_tag\b", code),  # no type cache
                                  "%s reads version tags: use python.h's type cache" % name)
                for fact in ("kDLCUDA", "kDLCUDAHost", "kDLCUDAManaged", "kDLROCM",
                             "kDLROCMHost", "kDLOneAPI", "kDLMetal"):
                    self.assertIsNone(re.search(r"\b%s\b" % fact, code),
                                      "%s decides by %s: read the device table" % (name, fact))

    def test_py13_capsule_destructor_keeps_a_pending_exception(self):
        counter = ReleaseCounter()  # a Python (ctypes) callback runs inside the deleter

        def fail():
            t = host_tensor(floats(4), counter=counter)
            cap = t.__dlpack__(max_version=(1, 3))  # noqa: F841 (dropped while KeyError is raised)
            del t
            raise KeyError("pending")

        with self.assertRaises(KeyError) as cm:
            fail()
        self.assertEqual(cm.exception.args, ("pending",))
        self.assertEqual(counter.calls, 1)

    def test_py14_double_consumption_raises(self):
        t = host_tensor(floats(4))
        for kwargs in ({}, {"max_version": (1, 3)}):
            cap = t.__dlpack__(**kwargs)
            dlbridge.from_dlpack(cap)
            with self.assertRaises(ValueError) as cm:
                dlbridge.from_dlpack(cap)
            self.assertIn("already consumed", str(cm.exception))

    def test_py15_failed_imports_consume_once_and_mark_the_capsule(self):
        cases = [
            dict(versioned=False, dtype=(99, 32, 1)),            # unknown dtype code
            dict(versioned=False, shape=(-1,)),                  # negative extent
            dict(versioned=True, major=2),                       # another major version
            dict(versioned=True, flags=1 << 40),                 # unknown flag bits
            dict(versioned=True, device=(4, 0)),                 # OpenCL
            dict(versioned=False, data=0),                       # NULL data with elements
            dict(versioned=True, ndim=65),                       # too many dimensions
        ]
        for case in cases:
            with self.subTest(case=case):
                built = HandBuilt(**case)
                cap = built.capsule()
                with self.assertRaises((ValueError, BufferError)):
                    dlbridge.from_dlpack(cap)
                self.assertEqual(built.deletes, 1)
                self.assertTrue(capsule_name(cap).startswith("used_"))
                with self.assertRaises(ValueError):
                    dlbridge.from_dlpack(cap)
                del cap
                self.assertEqual(built.deletes, 1)
        major = HandBuilt(versioned=True, major=2)
        with self.assertRaises(BufferError) as cm:
            dlbridge.from_dlpack(major.capsule())
        self.assertEqual(cm.exception.code, "kUnsupportedVersion")

    def test_py15_rejected_before_consumption_touches_nothing(self):
        built = HandBuilt(versioned=False)
        cap = make_capsule(ctypes.addressof(built.managed), b"not_a_tensor")
        with self.assertRaises(TypeError):
            dlbridge.from_dlpack(cap)
        self.assertEqual(capsule_name(cap), "not_a_tensor")
        self.assertEqual(built.deletes, 0)
        with self.assertRaises(AttributeError):  # no producer (PY-16)
            dlbridge.from_dlpack(object())

    def test_py15_a_capsule_without_a_name_is_said_to_have_none(self):
        built = HandBuilt(versioned=False)
        cap = support._api.PyCapsule_New(ctypes.addressof(built.managed), None, None)
        with self.assertRaises(TypeError) as cm:
            dlbridge.from_dlpack(cap)
        self.assertIn("a capsule without a name is no DLPack tensor", str(cm.exception))
        self.assertNotIn("(null)", str(cm.exception))
        with self.assertRaises(ValueError) as cm:  # the checker's binding says the same
            dlbridge._check_capsule(cap)
        self.assertIn("a capsule without a name is not an unconsumed DLPack tensor",
                      str(cm.exception))
        self.assertEqual(built.deletes, 0)

    def test_py15_successful_hand_built_import_deletes_once_on_drop(self):
        built = HandBuilt(versioned=True, shape=(2, 2), strides=(2, 1))
        t = dlbridge.from_dlpack(built.capsule())
        self.assertEqual((t.shape, t.strides, t.descriptor.GetPointer()), ((2, 2), (2, 1), address_of(built.buffer)))
        self.assertEqual(built.deletes, 0)
        del t
        self.assertEqual(built.deletes, 1)


class Producers(unittest.TestCase):
    def test_py16_max_version_fallback_for_legacy_producers(self):
        calls = []

        class Legacy:
            def __init__(self, inner):
                self.inner = inner

            def __dlpack__(self, stream=None):
                calls.append(stream)
                return self.inner.__dlpack__()

        t = host_tensor(floats(4))
        for _ in range(3):
            imported = dlbridge.from_dlpack(Legacy(t))
            self.assertEqual(imported.descriptor.GetPointer(), t.descriptor.GetPointer())
        self.assertEqual(calls, [None, None, None])

        class Modern:
            def __init__(self, inner):
                self.inner = inner

            def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
                calls.append(max_version)
                return self.inner.__dlpack__(max_version=max_version)

        calls.clear()
        imported = dlbridge.from_dlpack(Modern(t))
        self.assertEqual(calls, [(1, dlbridge.DLPACK_VERSION[1])])

        class Broken:
            def __dlpack__(self, **kwargs):
                raise RuntimeError("producer failed")

        with self.assertRaises(RuntimeError):
            dlbridge.from_dlpack(Broken())

        class NotACapsule:
            def __dlpack__(self, **kwargs):
                return 42

        with self.assertRaises(TypeError):
            dlbridge.from_dlpack(NotACapsule())

    def test_py17_versioned_round_trip_through_dlbridge_itself(self):
        values = floats(12)
        md = owned(values, 48)
        view = dlbridge.Tensor(md, "float32", (3, 2), strides=(-4, 2), byte_offset=32)
        for producer in (lambda: view, lambda: view.__dlpack__(max_version=(1, 3)), lambda: view.__dlpack__()):
            imported = dlbridge.from_dlpack(producer())
            self.assertEqual((imported.dl_dtype, imported.shape, imported.strides), ((2, 32, 1), (3, 2), (-4, 2)))
            self.assertEqual(read_floats(imported), read_floats(view))
            again = dlbridge.from_dlpack(imported)
            self.assertEqual(read_floats(again), read_floats(view))
        for dtype in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                      "float16", "float32", "float64", "bfloat16", "complex64", "complex128", "bool"):
            with self.subTest(dtype=dtype):
                md = owned(values, 48)
                t = dlbridge.Tensor(md, dtype, (2,))
                out = dlbridge.from_dlpack(t.__dlpack__(max_version=(1, 3)))
                self.assertEqual(out.dtype, t.dtype)
                self.assertEqual(out.descriptor.GetPointer(), address_of(values))


class ExchangeApi(unittest.TestCase):
    def test_py18_type_publishes_one_static_exchange_api(self):
        capsule = dlbridge.Tensor.__dlpack_c_exchange_api__
        self.assertEqual(capsule_name(capsule), "dlpack_exchange_api")
        self.assertEqual(capsule_pointer(capsule, "dlpack_exchange_api"),
                         capsule_pointer(dlbridge.Tensor.__dlpack_c_exchange_api__, "dlpack_exchange_api"))
        api = exchange_api()
        self.assertEqual((api.header.version.major, api.header.version.minor), dlbridge.DLPACK_VERSION)
        self.assertFalse(api.header.prev_api)
        for name in ("managed_tensor_allocator", "managed_tensor_from_py_object_no_sync",
                     "managed_tensor_to_py_object_no_sync", "dltensor_from_py_object_no_sync",
                     "current_work_stream"):
            self.assertTrue(getattr(api, name), name)

    def test_py18_functions_of_the_table(self):
        api = exchange_api()
        values = floats(6)
        t = host_tensor(values, shape=(2, 3))
        out = ctypes.POINTER(DLManagedTensorVersioned)()
        self.assertEqual(api.managed_tensor_from_py_object_no_sync(t, ctypes.byref(out)), 0)
        self.assertEqual(out.contents.dl_tensor.data, address_of(values))
        self.assertEqual(out.contents.version.major, 1)
        obj = ctypes.c_void_p()
        self.assertEqual(api.managed_tensor_to_py_object_no_sync(out, ctypes.byref(obj)), 0)
        imported = ctypes.cast(obj, ctypes.py_object).value
        ctypes.pythonapi.Py_DecRef(imported)  # the function returned a new reference
        self.assertIsInstance(imported, dlbridge.Tensor)
        self.assertEqual(imported.descriptor.GetPointer(), address_of(values))

        view = DLTensor()
        self.assertEqual(api.dltensor_from_py_object_no_sync(t, ctypes.byref(view)), 0)
        self.assertEqual((view.data, view.ndim, view.shape[0], view.shape[1], view.strides[0]),
                         (address_of(values), 2, 2, 3, 3))
        with self.assertRaises(TypeError):
            api.dltensor_from_py_object_no_sync(object(), ctypes.byref(view))

        stream = ctypes.c_void_p(1)
        self.assertEqual(api.current_work_stream(1, 0, ctypes.byref(stream)), 0)
        self.assertIsNone(stream.value)

        errors = []
        set_error = SET_ERROR(lambda ctx, kind, msg: errors.append((kind.decode(), msg.decode())))
        proto = DLTensor()
        shape = (ctypes.c_int64 * 2)(3, 5)
        proto.ndim, proto.shape = 2, ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
        proto.dtype.code, proto.dtype.bits, proto.dtype.lanes = 2, 64, 1
        proto.device.device_type = 1
        allocated = ctypes.POINTER(DLManagedTensorVersioned)()
        self.assertEqual(api.managed_tensor_allocator(ctypes.byref(proto), ctypes.byref(allocated), None, set_error), 0)
        self.assertEqual([allocated.contents.dl_tensor.strides[i] for i in range(2)], [5, 1])
        self.assertTrue(allocated.contents.dl_tensor.data)
        allocated.contents.deleter(ctypes.addressof(allocated.contents))
        proto.device.device_type = 2
        self.assertEqual(api.managed_tensor_allocator(ctypes.byref(proto), ctypes.byref(allocated), None, set_error), -1)
        self.assertEqual(errors[0][0], "BufferError")

    def test_py19_from_dlpack_calls_dlpack_never_the_exchange_api(self):
        calls = []

        class Counted(dlbridge.Tensor):
            def __dlpack__(self, **kwargs):
                calls.append(kwargs)
                return super().__dlpack__(**kwargs)

        class Refusing(dlbridge.Tensor):  # the inherited table would export; __dlpack__ refuses
            def __dlpack__(self, **kwargs):
                raise BufferError("refused by the producer")

        values = floats(4)

        def make(cls):
            return cls(owned(values, 16), "float32", (4,))

        self.assertEqual(dlbridge.from_dlpack(make(Counted)).data_ptr(), address_of(values))
        self.assertEqual(calls, [{"max_version": (1, dlbridge.DLPACK_VERSION[1])}])
        self.assertTrue(Refusing.__dlpack_c_exchange_api__)
        with self.assertRaisesRegex(BufferError, "refused by the producer"):
            dlbridge.from_dlpack(make(Refusing))
        # dlbridge's own table stays published and usable (PY-18).
        out = ctypes.POINTER(DLManagedTensorVersioned)()
        self.assertEqual(exchange_api().managed_tensor_from_py_object_no_sync(make(Counted), ctypes.byref(out)), 0)
        self.assertEqual(out.contents.dl_tensor.data, address_of(values))
        out.contents.deleter(out)


if __name__ == "__main__":
    unittest.main()
