"""Interop (spec/python.md PY-16, PY-19, PY-34...PY-43): from_dlpack through __dlpack__ with
device and copy, host-accessible memory as one memory, the error classes, the exchange API to
the letter of the DLPack 1.3 header, lenient integer arguments and the Tensor's NumPy- and
PyTorch-style attributes. Every exported descriptor here holds its memory (SetOwner or a
counted release), which is also what proves that every release runs exactly once."""
import ctypes
import enum
import unittest

import dlbridge
from support import (SET_ERROR, DLManagedTensorVersioned, DLTensor, HandBuilt, ReleaseCounter,
                     address_of, capsule_name, exchange_api)

try:
    import numpy as np
except ImportError:  # pragma: no cover - the machine has NumPy 1.24
    np = None
try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

F_COPIED = dlbridge.FLAG_IS_COPIED
VERSION = (1, dlbridge.DLPACK_VERSION[1])
HOST_ACCESSIBLE = ((dlbridge.kDLCUDAHost, "host"), (dlbridge.kDLROCMHost, "host"),
                   (dlbridge.kDLCUDAManaged, "cuda"))


def floats(n):
    return (ctypes.c_float * n)(*range(n))


def held(values, dtype="float32", shape=None, space="host", counter=None, **kwargs):
    """A dlbridge.Tensor over `values` that holds it (SetOwner, or `counter`'s release)."""
    md = dlbridge.MemoryDescriptor(address_of(values), ctypes.sizeof(values), space)
    if counter is not None:
        md.SetReleaseAddress(counter.address, 7)
    else:
        md.SetOwner(values)
    if shape is None:
        shape = (len(values),)
    return dlbridge.Tensor(md, dtype, shape, **kwargs)


def read(t):
    """The float32 elements of a C-contiguous 1-d tensor, read at its data_ptr()."""
    return list((ctypes.c_float * t.shape[0]).from_address(t.data_ptr()))


class Recording:
    """A producer wrapping a dlbridge.Tensor whose __dlpack__ takes the keywords `accepts`
    (a TypeError for any other, like an older library) and records every call."""

    def __init__(self, inner, accepts=("stream", "max_version", "dl_device", "copy"),
                 ignore_device=False):
        self.inner, self.accepts, self.ignore_device, self.calls = inner, accepts, ignore_device, []

    def __dlpack__(self, **kwargs):
        self.calls.append(dict(kwargs))
        unknown = set(kwargs) - set(self.accepts)
        if unknown:
            raise TypeError("__dlpack__() got an unexpected keyword argument %r" % unknown.pop())
        if self.ignore_device:
            kwargs.pop("dl_device", None)
        return self.inner.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.inner.__dlpack_device__()


class FromDlpackKeywords(unittest.TestCase):
    def test_py34_device_and_copy_reach_the_producer_as_dl_device_and_copy(self):
        values = floats(4)
        p = Recording(held(values))
        self.assertEqual(dlbridge.from_dlpack(p).data_ptr(), address_of(values))
        self.assertEqual(p.calls, [{"max_version": VERSION}])
        p.calls.clear()
        out = dlbridge.from_dlpack(p, device=(dlbridge.kDLCPU, 0), copy=False)
        self.assertEqual(p.calls, [{"max_version": VERSION, "dl_device": (1, 0), "copy": False}])
        self.assertEqual(out.data_ptr(), address_of(values))
        p.calls.clear()
        out = dlbridge.from_dlpack(p, copy=True)  # the producer copies (and says so)
        self.assertEqual(p.calls, [{"max_version": VERSION, "dl_device": None, "copy": True}])
        self.assertNotEqual(out.data_ptr(), address_of(values))
        self.assertEqual((out.flags & F_COPIED, read(out)), (F_COPIED, [0.0, 1.0, 2.0, 3.0]))
        # What __dlpack_device__ returns is a device too.
        p.calls.clear()
        dlbridge.from_dlpack(p, device=p.__dlpack_device__())
        self.assertEqual(p.calls[0]["dl_device"], (1, 0))

    def test_py34_older_producers_get_the_fallback_and_the_request_is_met_here(self):
        values = floats(4)
        # A producer from before dl_device/copy: asked again with max_version alone.
        p = Recording(held(values), accepts=("stream", "max_version"))
        out = dlbridge.from_dlpack(p, copy=True)
        self.assertEqual([sorted(c) for c in p.calls],
                         [["copy", "dl_device", "max_version"], ["max_version"]])
        self.assertNotEqual(out.data_ptr(), address_of(values))  # the copy is made here
        self.assertEqual((out.flags & F_COPIED, read(out)), (F_COPIED, [0.0, 1.0, 2.0, 3.0]))
        self.assertEqual(capsule_name(p.inner.__dlpack__(max_version=VERSION)), "dltensor_versioned")
        same = dlbridge.from_dlpack(p, copy=False)
        self.assertEqual(same.data_ptr(), address_of(values))
        # A producer from before max_version: asked with no arguments, then remembered.
        class Legacy(Recording):
            pass

        legacy = Legacy(held(values), accepts=("stream",))
        out = dlbridge.from_dlpack(legacy, device=(1, 0), copy=True)
        self.assertEqual(len(legacy.calls), 3)
        self.assertEqual(legacy.calls[-1], {})
        self.assertEqual((out.flags & F_COPIED, read(out)), (F_COPIED, [0.0, 1.0, 2.0, 3.0]))
        legacy.calls.clear()
        dlbridge.from_dlpack(legacy, device=(1, 0))
        self.assertEqual(legacy.calls, [{}])
        if np is None:
            self.skipTest("NumPy cannot be imported: NumPy 1.x's legacy __dlpack__ was not checked")
        a = np.arange(4, dtype=np.float32)  # NumPy 1.24: __dlpack__(*, stream=None)
        self.assertEqual(dlbridge.from_dlpack(a, device=(1, 0), copy=False).data_ptr(), a.ctypes.data)
        copied = dlbridge.from_dlpack(a, device=(1, 0), copy=True)
        self.assertNotEqual(copied.data_ptr(), a.ctypes.data)
        self.assertEqual(read(copied), [0.0, 1.0, 2.0, 3.0])

    def test_py34_copy_true_always_copies_copy_false_never(self):
        counter = ReleaseCounter()
        values = floats(4)
        t = held(values, counter=counter)
        for copy, same in ((None, True), (False, True), (True, False)):
            with self.subTest(copy=copy):
                out = dlbridge.from_dlpack(t, copy=copy)
                self.assertEqual(out.data_ptr() == address_of(values), same)
                self.assertEqual(read(out), [0.0, 1.0, 2.0, 3.0])
                del out
        # Device memory: a request that needs a copy is refused with copy=False, and the copy
        # fails without a GPU runtime here (test_copies.py makes them through the fakes).
        gpu_counter = ReleaseCounter()
        gpu = held(floats(4), space="cuda", device=(dlbridge.kDLCUDA, 0), counter=gpu_counter)
        for kwargs in ({"device": (1, 0)}, {"device": (1, 0), "copy": False}, {"copy": True}):
            with self.subTest(gpu=kwargs), self.assertRaises(BufferError) as cm:
                dlbridge.from_dlpack(gpu, **kwargs)
            self.assertIn("copy=False" if kwargs.get("copy") is False else "CopyTo: CUDA",
                          str(cm.exception))
        # A producer that ignores dl_device and hands back device memory: copied here (which
        # fails without a driver), its capsule deleted once.
        ignoring = Recording(gpu, ignore_device=True)
        with self.assertRaises(BufferError) as cm:
            dlbridge.from_dlpack(ignoring, device=(1, 0))
        self.assertEqual(cm.exception.code, "kRuntimeUnavailable")
        del gpu, ignoring, cm
        self.assertEqual(gpu_counter.calls, 1)
        del t
        self.assertEqual(counter.contexts, [7])

    def test_py34_the_capsule_path_takes_device_and_copy_too(self):
        values = floats(4)
        t = held(values)
        out = dlbridge.from_dlpack(t.__dlpack__(max_version=VERSION), copy=True)
        self.assertNotEqual(out.data_ptr(), address_of(values))
        self.assertEqual(read(out), [0.0, 1.0, 2.0, 3.0])
        out = dlbridge.from_dlpack(t.__dlpack__(), device=(1, 0), copy=False)
        self.assertEqual(out.data_ptr(), address_of(values))

    def test_py34_arguments_are_checked(self):
        t = held(floats(4))
        for kwargs in ({"device": object()}, {"device": (1,)}, {"device": (1.0, 0)},
                       {"copy": 1}, {"copy": "no"}, {"streams": None}):
            with self.subTest(kwargs=kwargs), self.assertRaises(TypeError):
                dlbridge.from_dlpack(t, **kwargs)
        with self.assertRaises(TypeError):
            dlbridge.from_dlpack(t, (1, 0))
        with self.assertRaises(TypeError):
            dlbridge.from_dlpack()
        with self.assertRaises(ValueError):
            dlbridge.from_dlpack(t, device=(1, 2 ** 40))


class HostAccessibleMemory(unittest.TestCase):
    def test_py10_host_accessible_memory_exports_to_kdlcpu_without_a_copy(self):
        for device_type, space in HOST_ACCESSIBLE:
            with self.subTest(device_type=device_type):
                counter = ReleaseCounter()
                values = floats(4)
                t = held(values, space=space, device=(device_type, 0), counter=counter)
                for kwargs in ({}, {"max_version": VERSION}, {"max_version": VERSION, "copy": False}):
                    out = dlbridge.from_dlpack(t.__dlpack__(dl_device=(1, 0), **kwargs))
                    self.assertEqual((out.device, out.data_ptr()), ((1, 0), address_of(values)))
                    self.assertEqual(out.flags & F_COPIED, 0)
                copied = dlbridge.from_dlpack(t.__dlpack__(dl_device=(1, 0), copy=True, max_version=VERSION))
                self.assertNotEqual(copied.data_ptr(), address_of(values))
                self.assertEqual((copied.device, read(copied)), ((1, 0), [0.0, 1.0, 2.0, 3.0]))
                with self.assertRaises(BufferError):
                    t.__dlpack__(dl_device=(2, 0))
                for bad in ((1, 1), (device_type, 1)):  # no device (PY-64)
                    with self.assertRaises(ValueError):
                        t.__dlpack__(dl_device=bad)
                del t, out
                self.assertEqual(counter.calls, 1)

    def test_py35_host_accessible_producers_reach_the_cpu_for_numpy(self):
        for device_type, space in HOST_ACCESSIBLE:
            for ignore_device in (False, True):
                with self.subTest(device_type=device_type, ignore_device=ignore_device):
                    counter = ReleaseCounter()
                    values = floats(4)
                    producer = Recording(held(values, space=space, device=(device_type, 0),
                                              counter=counter), ignore_device=ignore_device)
                    self.assertEqual(dlbridge.from_dlpack(producer).device, (device_type, 0))
                    out = dlbridge.from_dlpack(producer, device=(dlbridge.kDLCPU, 0))
                    self.assertEqual((out.device, out.descriptor.GetMemorySpace()), ((1, 0), "host"))
                    self.assertEqual(out.data_ptr(), address_of(values))
                    if np is not None:
                        a = np.from_dlpack(out)
                        self.assertEqual(a.ctypes.data, address_of(values))
                        self.assertEqual(a.tolist(), [0.0, 1.0, 2.0, 3.0])
                        values[1] = 42.0
                        self.assertEqual(a[1], 42.0)
                        del a
                    if not ignore_device:  # (copy=True alone is for the tensor's own device)
                        copied = dlbridge.from_dlpack(producer, device=(1, 0), copy=True)
                        self.assertNotEqual(copied.data_ptr(), address_of(values))
                        self.assertEqual(copied.device, (1, 0))
                        del copied
                    del producer, out
                    self.assertEqual(counter.calls, 1)
        if np is None:
            self.skipTest("NumPy cannot be imported: the NumPy reads were not checked")

    def test_py35_a_host_accessible_capsule_imports_as_host_memory(self):
        values = floats(4)
        t = held(values, space="cuda", device=(dlbridge.kDLCUDAManaged, 0))
        out = dlbridge.from_dlpack(t.__dlpack__(max_version=VERSION), device=(1, 0))
        self.assertEqual((out.device, out.data_ptr()), ((1, 0), address_of(values)))
        again = dlbridge.from_dlpack(out.__dlpack__())  # exports as the host memory it now is
        self.assertEqual(again.device, (1, 0))


class DeviceAgreement(unittest.TestCase):
    def test_py36_dlpack_device_agrees_with_dlpack_for_every_combination(self):
        types = [None] + sorted({getattr(dlbridge, n) for n in dir(dlbridge) if n.startswith("kDL")})
        checked = 0
        for space in ("host", "cuda", "hip", "level_zero"):
            for device_type in types:
                for device_id in (0, 1):
                    device = None if device_type is None else (device_type, device_id)
                    if device is None and device_id:
                        continue
                    try:
                        t = held(floats(4), space=space, device=device)
                    except ValueError:  # PY-64: id 1 of a type whose id is always 0
                        self.assertEqual(device_id, 1)
                        continue
                    try:
                        expected = t.__dlpack_device__()
                    except Exception as e:  # noqa: BLE001 - the class is what is compared
                        expected = type(e)
                    for kwargs in ({}, {"max_version": VERSION}):
                        with self.subTest(space=space, device=device, **kwargs):
                            try:
                                capsule = t.__dlpack__(**kwargs)
                            except Exception as e:  # noqa: BLE001
                                self.assertEqual(type(e), expected)
                                continue
                            self.assertIsInstance(expected, tuple)
                            name = capsule_name(capsule)
                            ptr = ctypes.pythonapi.PyCapsule_GetPointer(capsule, name.encode())
                            m = (DLManagedTensorVersioned if kwargs else
                                 __import__("support").DLManagedTensor).from_address(ptr)
                            got = (m.dl_tensor.device.device_type, m.dl_tensor.device.device_id)
                            self.assertEqual(got, expected)
                            if expected != (1, 0):
                                # A dl_device equal to __dlpack_device__ exports as it does.
                                t.__dlpack__(dl_device=expected, **kwargs)
                            checked += 1
        self.assertGreater(checked, 10)


class ErrorClasses(unittest.TestCase):
    def test_py16_no_producer_is_an_attribute_error(self):
        for obj in (object(), 3, [1.0], None):
            with self.subTest(obj=obj), self.assertRaises(AttributeError) as cm:
                dlbridge.from_dlpack(obj)
            self.assertIn("__dlpack__", str(cm.exception))

    def test_py16_the_methods_are_looked_up_on_the_type_not_the_instance(self):
        # As NumPy's from_dlpack and Python's special methods: instance attributes of a plain
        # object make no producer, and an instance attribute does not replace the type's method.
        values = floats(4)
        t = held(values)

        class Plain:
            pass

        plain = Plain()
        plain.__dlpack__ = t.__dlpack__
        plain.__dlpack_device__ = t.__dlpack_device__
        for kwargs in ({}, {"device": (1, 0)}, {"copy": False}):
            with self.subTest(**kwargs):
                with self.assertRaises(AttributeError) as cm:
                    dlbridge.from_dlpack(plain, **kwargs)
                self.assertIn("has no __dlpack__ method", str(cm.exception))

        class Producer:
            def __init__(self, inner):
                self.inner = inner

            def __dlpack__(self, **kwargs):
                return self.inner.__dlpack__(**kwargs)

            def __dlpack_device__(self):
                return self.inner.__dlpack_device__()

        def refuse(*args, **kwargs):
            raise AssertionError("the instance's attribute was called")

        producer = Producer(t)
        producer.__dlpack__ = refuse
        producer.__dlpack_device__ = refuse
        out = dlbridge.from_dlpack(producer)
        self.assertEqual(out.data_ptr(), address_of(values))

    def test_py40_unknown_dtype_code_is_a_buffer_error_bad_bits_a_value_error(self):
        for dtype, error, code in (((99, 32, 1), BufferError, "kUnsupportedDtype"),
                                   ((2, 7, 1), ValueError, "kInvalidDtype"),
                                   ((2, 32, 0), ValueError, "kInvalidDtype")):
            for versioned in (False, True):
                with self.subTest(dtype=dtype, versioned=versioned):
                    built = HandBuilt(versioned=versioned, dtype=dtype, strides=(1,))
                    with self.assertRaises(error) as cm:
                        dlbridge.from_dlpack(built.capsule())
                    self.assertEqual(cm.exception.code, code)
                    self.assertEqual(built.deletes, 1)
        built = HandBuilt(versioned=True, device=(4, 0), strides=(1,))  # an unknown device, as before
        with self.assertRaises(BufferError):
            dlbridge.from_dlpack(built.capsule())
        self.assertEqual(built.deletes, 1)


class ExchangeApiLetter(unittest.TestCase):
    def setUp(self):
        self.api = exchange_api()
        self.errors = []
        self.set_error = SET_ERROR(lambda ctx, kind, msg: self.errors.append((kind.decode(), msg.decode())))

    def prototype(self, shape, dtype=(2, 32, 1), device_type=1):
        self.shape = (ctypes.c_int64 * len(shape))(*shape)
        proto = DLTensor()
        proto.ndim, proto.shape = len(shape), ctypes.cast(self.shape, ctypes.POINTER(ctypes.c_int64))
        proto.dtype.code, proto.dtype.bits, proto.dtype.lanes = dtype
        proto.device.device_type = device_type
        return proto

    def junk_out(self):
        return ctypes.cast(ctypes.c_void_p(0x1000), ctypes.POINTER(DLManagedTensorVersioned))

    def test_py37_failures_leave_out_null_and_call_set_error_once(self):
        for proto, field in ((self.prototype((4,), device_type=2), "kDLCPU"),
                             (self.prototype((2 ** 62, 16)), "prototype->shape[1]"),
                             (self.prototype((2 ** 61,), dtype=(2, 64, 1)), "prototype->dtype"),
                             (self.prototype((2 ** 62,), dtype=(0, 4, 1)), "prototype->dtype"),
                             (self.prototype((3,), dtype=(99, 8, 1)), "dtype.code")):
            with self.subTest(field=field):
                self.errors.clear()
                out = self.junk_out()
                rc = self.api.managed_tensor_allocator(ctypes.byref(proto), ctypes.byref(out), None, self.set_error)
                self.assertEqual(rc, -1)
                self.assertFalse(out)  # NULL
                self.assertEqual(len(self.errors), 1)
                self.assertIn(field, self.errors[0][1])
                self.assertEqual(self.errors[0][0], "BufferError" if field in ("kDLCPU", "dtype.code") else "ValueError")
        out = self.junk_out()
        with self.assertRaises(TypeError):
            self.api.managed_tensor_from_py_object_no_sync(object(), ctypes.byref(out))
        self.assertFalse(out)

    def test_py37_a_null_set_error_never_crashes(self):
        null = ctypes.cast(None, SET_ERROR)
        out = self.junk_out()
        proto = self.prototype((4,), device_type=2)
        # The GIL is held (PYFUNCTYPE): the error goes to Python's error indicator.
        with self.assertRaises(BufferError):
            self.api.managed_tensor_allocator(ctypes.byref(proto), ctypes.byref(out), None, null)
        self.assertFalse(out)
        proto = self.prototype((2 ** 62, 16))
        with self.assertRaisesRegex(ValueError, r"shape\[1\]"):
            self.api.managed_tensor_allocator(ctypes.byref(proto), ctypes.byref(out), None, null)
        # Success still works with it.
        proto = self.prototype((2, 3))
        self.assertEqual(self.api.managed_tensor_allocator(ctypes.byref(proto), ctypes.byref(out), None, null), 0)
        self.assertTrue(out.contents.dl_tensor.data)
        out.contents.deleter(out)


class LenientIntegers(unittest.TestCase):
    def test_py43_index_objects_and_int_enums_are_accepted(self):
        class Kind(enum.Enum):
            CPU = 1
            NAME = "cpu"

        class IntKind(enum.IntEnum):
            CPU = 1

        values = floats(4)
        t = held(values)
        devices = [(IntKind.CPU, 0), (Kind.CPU, 0), (True, False)]
        versions = [(IntKind.CPU, 3)]
        if np is not None:
            devices += [(np.int32(1), np.int64(0)), (np.uint8(1), np.intp(0))]
            versions += [(np.int64(1), np.int16(3))]
        for device in devices:
            with self.subTest(device=device):
                self.assertEqual(dlbridge.from_dlpack(t.__dlpack__(dl_device=device)).data_ptr(), address_of(values))
                self.assertEqual(dlbridge.from_dlpack(t, device=device).data_ptr(), address_of(values))
                self.assertEqual(dlbridge.Tensor(dlbridge.MemoryDescriptor(), "float32", (0,), device=device).device, (1, 0))
        for version in versions:
            with self.subTest(version=version):
                self.assertEqual(capsule_name(t.__dlpack__(max_version=version)), "dltensor_versioned")
        for bad in ((Kind.NAME, 0), (1.0, 0), (1, "0"), (1, None)):
            with self.subTest(bad=bad), self.assertRaises(TypeError):
                t.__dlpack__(dl_device=bad)
        if np is None:
            self.skipTest("NumPy cannot be imported: NumPy integers were not checked")


class TensorAttributes(unittest.TestCase):
    def test_py38_numpy_and_pytorch_style_attributes(self):
        values = floats(12)
        t = held(values, shape=(3, 4))
        self.assertEqual((t.dtype, t.dl_dtype, t.itemsize, t.nbytes), ("float32", (2, 32, 1), 4, 48))
        self.assertEqual((t.data_ptr(), t.is_contiguous(), t.device), (address_of(values), True, (1, 0)))
        view = held(values, shape=(2, 2), strides=(1, 4), byte_offset=8)
        self.assertEqual((view.data_ptr(), view.is_contiguous(), view.nbytes), (address_of(values) + 8, False, 16))
        for dtype, itemsize in (("complex128", 16), ("bool", 1), ("float16x4", 8), ("bfloat16", 2)):
            with self.subTest(dtype=dtype):
                x = dlbridge.Tensor(dlbridge.MemoryDescriptor(), dtype, (0, 3))
                self.assertEqual((x.dtype, x.itemsize, x.nbytes), (dtype, itemsize, 0))
        self.assertEqual(dlbridge.Tensor(dlbridge.MemoryDescriptor(), (99, 8), (1,)).dtype, "(99, 8, 1)")
        self.assertEqual(held(floats(4), device=(dlbridge.kDLCUDAHost, 0)).device, (3, 0))
        self.assertEqual(held(floats(4), space="cuda", device=(2, 1)).device, (2, 1))
        with self.assertRaises(BufferError):  # a GPU space says its ordinal or cannot be asked
            held(floats(4), space="cuda").device  # noqa: B018
        if np is not None:
            self.assertEqual(np.from_dlpack(t).nbytes, t.nbytes)
            self.assertEqual(np.from_dlpack(t).itemsize, t.itemsize)

    def test_py39_dtype_arguments_accept_numpy_and_torch_dtypes(self):
        if np is None:
            self.skipTest("NumPy cannot be imported")
        md = dlbridge.MemoryDescriptor()
        for dtype, name in ((np.float32, "float32"), (np.dtype("int16"), "int16"), (np.bool_, "bool"),
                            (np.complex64, "complex64"), (np.dtype(np.uint64), "uint64"),
                            (np.dtype("<f8") if np.little_endian else np.dtype(">f8"), "float64")):
            with self.subTest(dtype=dtype):
                self.assertEqual(dlbridge.Tensor(md, dtype, (0,)).dtype, name)
        with self.assertRaisesRegex(ValueError, "byte order"):
            dlbridge.Tensor(md, np.dtype(">f4" if np.little_endian else "<f4"), (0,))
        with self.assertRaises(ValueError):
            dlbridge.Tensor(md, np.dtype("V8"), (0,))
        with self.assertRaises(TypeError):
            dlbridge.Tensor(md, float, (0,))
        if torch is None:
            self.skipTest("torch cannot be imported: torch dtypes were not checked")
        for dtype, name in ((torch.float32, "float32"), (torch.bfloat16, "bfloat16"),
                            (torch.bool, "bool"), (torch.int8, "int8")):
            with self.subTest(dtype=dtype):
                self.assertEqual(dlbridge.Tensor(md, dtype, (0,)).dtype, name)

    def test_py41_byte_strides_get_a_hint(self):
        values = floats(12)
        t = held(values, shape=(3, 4), strides=(16, 4))  # NumPy's byte strides of a 3x4 float32
        with self.assertRaises(ValueError) as cm:
            t.__dlpack__()
        self.assertEqual(cm.exception.code, "kOutOfBounds")
        self.assertIn("strides=(4, 1)", str(cm.exception))
        t = held(values, shape=(3, 4), strides=(5, 1))  # out of bounds, not byte strides
        with self.assertRaises(ValueError) as cm:
            t.__dlpack__()
        self.assertNotIn("count elements", str(cm.exception))
        self.assertNotIn("strides=(", str(cm.exception))

    def test_py42_messages_give_python_advice(self):
        t = held(floats(4), flags=dlbridge.FLAG_READ_ONLY)
        with self.assertRaises(BufferError) as cm:
            t.__dlpack__()
        self.assertIn("max_version=(1, 0)", str(cm.exception))
        self.assertNotIn("ToDLPackVersioned", str(cm.exception))
        with self.assertRaises(BufferError) as cm:
            held(floats(4), space="cuda").__dlpack__()
        self.assertIn("device=(kDLCUDA, 0) to dlbridge.Tensor", str(cm.exception))
        self.assertNotIn("::", str(cm.exception))


@unittest.skipIf(torch is None, "torch cannot be imported")
class TorchRefusals(unittest.TestCase):
    def test_py19_torch_refusals_in_its_dlpack_are_kept(self):
        for x in (torch.ones(3, requires_grad=True), torch.tensor([1j, 2j]).conj()):
            with self.subTest(x=x), self.assertRaises((RuntimeError, BufferError)):
                dlbridge.from_dlpack(x)
        x = torch.arange(4, dtype=torch.float32)
        out = dlbridge.from_dlpack(x, device=(1, 0))  # PyTorch 1.13: the no-argument fallback
        self.assertEqual(out.data_ptr(), x.data_ptr())
        copied = dlbridge.from_dlpack(x, copy=True)
        self.assertNotEqual(copied.data_ptr(), x.data_ptr())
        self.assertEqual(read(copied), [0.0, 1.0, 2.0, 3.0])


class ReviewRegressions(unittest.TestCase):
    """Cases a second reader found: each failed before its fix."""

    def test_py10_dl_device_items_that_change_the_tensor_leave_no_dangling_plan(self):
        # dl_device's __index__ runs user code that prepares the tensor's plans again; the copy
        # must still describe the tensor (before: a freed plan, shape (0,)*10 and 0 bytes).
        values = floats(64)
        t = held(values, shape=(2,) * 6 + (1,) * 4)

        class ChangesTheTensor:
            def __index__(self):
                t.flags = 0
                return 1

        copied = dlbridge.from_dlpack(
            t.__dlpack__(max_version=(1, 3), copy=True, dl_device=(ChangesTheTensor(), 0)))
        self.assertEqual(copied.shape, (2,) * 6 + (1,) * 4)
        self.assertEqual(copied.nbytes, 256)
        self.assertEqual(list((ctypes.c_float * 64).from_address(copied.data_ptr())),
                         [float(i) for i in range(64)])

    def test_py10_copies_of_padded_sub_byte_managed_memory_keep_the_padding(self):
        # Padded uint4 (one element per byte) on managed memory copied to the host: the copy is
        # packed (HC-4) from the padded bytes (before: the bytes were read as packed nibbles).
        padded = 1 << 2  # DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED
        packed = {}
        for device, space in [((1, 0), "host"), ((13, 0), "cuda")]:
            raw = (ctypes.c_uint8 * 4)(1, 2, 3, 4)
            t = held(raw, "uint4", (4,), space=space, device=device, flags=padded)
            capsule = t.__dlpack__(max_version=(1, 3), copy=True, dl_device=(1, 0))
            copied = dlbridge.from_dlpack(capsule)
            packed[device] = bytes((ctypes.c_uint8 * copied.nbytes).from_address(copied.data_ptr()))
        self.assertEqual(packed[(1, 0)], bytes([0x21, 0x43]))
        self.assertEqual(packed[(13, 0)], packed[(1, 0)])

    def test_py34_copy_true_without_device_stays_on_the_datas_device(self):
        # device=None: the result is on x's device (array API); no copy allocates pinned or
        # managed memory (CopyTo's targets), so such data asks for device=(1, 0) too.
        for device in [(3, 0), (13, 0)]:
            producer = HandBuilt(True, device=device, strides=[1])
            with self.assertRaisesRegex(BufferError, "accepted targets: kDLCPU"):
                dlbridge.from_dlpack(producer.capsule(), copy=True)
            self.assertEqual(producer.deletes, 1)
            producer = HandBuilt(True, device=device, strides=[1])
            copied = dlbridge.from_dlpack(producer.capsule(), device=(1, 0), copy=True)
            self.assertEqual(copied.device, (1, 0))
            self.assertEqual(producer.deletes, 1)  # the copy no longer needs the producer

    def test_py34_copy_true_of_a_producer_without_a_deleter_copies(self):
        # A NULL deleter is legal (IMP-3); copy=True always copies (before: BufferError kNoHold).
        producer = HandBuilt(True, strides=[1])
        producer.managed.deleter = type(producer.managed.deleter)()
        copied = dlbridge.from_dlpack(producer.capsule(), copy=True)
        self.assertNotEqual(copied.data_ptr(), producer.managed.dl_tensor.data)
        self.assertTrue(copied.descriptor.HasOwnership())


if __name__ == "__main__":
    unittest.main()
