"""Real DLPack peers beyond NumPy and PyTorch (spec/conformance.md PEER-1..PEER-3): pyarrow
arrays into dlbridge and on into NumPy and PyTorch, a nanobind extension (tests/peers/) taking and
returning nb::ndarray, and array-api-compat's from_dlpack and to_device on dlbridge tensors.

The peers are Debian unstable's (the newest lane, scripts/test-newest); where one is absent (the
Debian 12 host lane has none of them) its tests skip saying so. What a peer can do is detected
(does its __dlpack__ take max_version? is the nanobind extension built?), never read from a
version. Every release is counted: the producer's deleter (wrapped in a counting one), the
refcount of the Python object behind an Arrow buffer, nanobind's frees of the buffers it made,
and dlbridge's releases (tests/python/support.py's ReleaseCounter).
"""
import ctypes
import gc
import importlib
import os
import sys
import unittest
import weakref

import dlbridge
from support import (DELETER, DLManagedTensor, DLManagedTensorVersioned, Recording, ReleaseCounter,
                     capsule_name, capsule_pointer, host_tensor)

try:
    import numpy as np
except ImportError:  # pragma: no cover
    np = None
try:
    import torch
except ImportError:  # pragma: no cover
    torch = None
try:
    import pyarrow as pa
except ImportError:
    pa = None
try:
    import array_api_compat
except ImportError:
    array_api_compat = None


def _nanobind_peer():
    """The nanobind test extension (tests/peers/), or (None, why not)."""
    skip = os.environ.get("DLBRIDGE_NANOBIND_PEER_SKIP")
    where = os.environ.get("DLBRIDGE_NANOBIND_PEER_DIR")
    if skip:
        return None, "the nanobind peer extension is not built: " + skip
    if not where:
        return None, "DLBRIDGE_NANOBIND_PEER_DIR is not set (run through ctest)"
    sys.path.insert(0, where)
    try:
        return importlib.import_module("nanobind_peer"), ""
    except ImportError as e:
        return None, "the nanobind peer extension is not built in %s (%s)" % (where, e)
    finally:
        sys.path.remove(where)


nbp, NANOBIND_SKIP = _nanobind_peer()


def speaks_versioned(obj):
    """Whether a peer's __dlpack__ takes max_version (versioned DLPack)."""
    try:
        obj.__dlpack__(max_version=(1, 0))
    except TypeError:
        return False
    return True


class CountedCapsule:
    """A producer's capsule whose managed tensor's deleter is replaced by one that counts its
    calls and then calls the producer's own: exactly-once, counted at the DLPack boundary."""

    def __init__(self, capsule):
        self.capsule = capsule
        self.name = capsule_name(capsule)
        struct = DLManagedTensorVersioned if self.name == "dltensor_versioned" else DLManagedTensor
        self.managed = struct.from_address(capsule_pointer(capsule, self.name))
        # A copy of the pointer: the field's own object would read the replaced one.
        self.original = DELETER(ctypes.cast(self.managed.deleter, ctypes.c_void_p).value)
        self.calls = 0
        self._deleter = DELETER(self._delete)
        self.managed.deleter = self._deleter

    def _delete(self, address):
        self.calls += 1
        self.original(address)




# pyarrow's numeric types, with NumPy's and dlbridge's name for each.
ARROW_NUMERIC = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                 "float16", "float32", "float64"]


@unittest.skipIf(pa is None or np is None, "pyarrow is not installed (python3-pyarrow: Debian "
                 "unstable; the newest lane, scripts/test-newest)")
class Pyarrow(unittest.TestCase):
    def arrow(self, dtype, n=10, offset=0, length=None):
        """A pyarrow array over a NumPy buffer (values 0..n-1), sliced, and that buffer."""
        base = np.arange(n).astype(dtype)
        array = pa.Array.from_buffers(pa.from_numpy_dtype(base.dtype), n,
                                      [None, pa.py_buffer(base)])
        if offset or length is not None:
            array = array.slice(offset, length)
        return array, base

    def test_peer1_every_numeric_type_imports_zero_copy(self):
        for dtype in ARROW_NUMERIC:
            with self.subTest(dtype=dtype):
                array, base = self.arrow(dtype)
                tensor = dlbridge.from_dlpack(array)
                self.assertEqual(tensor.dtype, dtype)
                self.assertEqual(tensor.shape, (10,))
                self.assertEqual(tensor.data_ptr(), base.ctypes.data)  # zero copy
                self.assertFalse(tensor.readonly)
                out = np.from_dlpack(tensor)
                self.assertEqual(out.ctypes.data, base.ctypes.data)
                np.testing.assert_array_equal(out, base)

    def test_peer1_sliced_arrays_keep_their_offset(self):
        for dtype in ("int16", "float64"):
            with self.subTest(dtype=dtype):
                array, base = self.arrow(dtype, n=10, offset=3, length=4)
                self.assertEqual(array.offset, 3)
                tensor = dlbridge.from_dlpack(array)
                self.assertEqual(tensor.shape, (4,))
                self.assertEqual(tensor.data_ptr(), base.ctypes.data + 3 * base.itemsize)
                np.testing.assert_array_equal(np.from_dlpack(tensor), base[3:7])

    def test_peer1_empty_arrays_keep_their_shape(self):
        for dtype in ("int8", "float32"):
            with self.subTest(dtype=dtype):
                tensor = dlbridge.from_dlpack(pa.array([], type=pa.from_numpy_dtype(np.dtype(dtype))))
                self.assertEqual(tensor.shape, (0,))
                self.assertEqual(np.from_dlpack(tensor).shape, (0,))

    def test_peer1_nulls_and_booleans_are_refused_with_pyarrows_reason(self):
        # pyarrow refuses in __dlpack__ (nulls) and already in __dlpack_device__ (bit-packed
        # booleans), with ArrowTypeError (a TypeError, not the standard's BufferError: the
        # peer's finding, spec/reports/pyarrow-25.0.0.md); dlbridge passes the reason on.
        cases = [(pa.array([1, None, 3], type=pa.int32()), "nulls"),
                 (pa.array([True, False]), "boolean")]
        for array, reason in cases:
            with self.subTest(reason=reason):
                with self.assertRaises(TypeError) as caught:
                    dlbridge.from_dlpack(array)
                self.assertIn(reason, str(caught.exception))

    def test_peer1_the_producer_is_released_exactly_once(self):
        array, base = self.arrow("float32")
        holders = sys.getrefcount(base)
        capsule = array.__dlpack__()  # pyarrow speaks legacy only: "dltensor"
        self.assertEqual(capsule_name(capsule), "dltensor")
        counted = CountedCapsule(capsule)
        del array
        gc.collect()
        tensor = dlbridge.from_dlpack(capsule)
        self.assertEqual(capsule_name(capsule), "used_dltensor")
        del capsule
        out = np.from_dlpack(tensor)
        del tensor
        self.assertEqual(counted.calls, 0)  # NumPy still holds dlbridge's export
        self.assertGreater(sys.getrefcount(base), holders - 2)
        np.testing.assert_array_equal(out, np.arange(10, dtype=np.float32))
        del out
        gc.collect()
        self.assertEqual(counted.calls, 1)
        # The Arrow buffer's hold on the NumPy array went with it (the array and its buffer
        # object were the other holders, dropped above).
        self.assertLessEqual(sys.getrefcount(base), holders)

    def test_peer1_the_python_object_behind_the_buffer_goes_when_the_last_consumer_does(self):
        base = np.arange(6, dtype=np.float32)
        gone = weakref.ref(base)
        array = pa.Array.from_buffers(pa.float32(), 6, [None, pa.py_buffer(base)])
        del base
        tensor = dlbridge.from_dlpack(array)
        del array
        gc.collect()
        self.assertIsNotNone(gone())
        del tensor
        gc.collect()
        self.assertIsNone(gone())

    def test_peer1_dlbridge_asks_versioned_then_falls_back_to_legacy(self):
        array, _base = self.arrow("int32")
        producer = Recording(array)
        dlbridge.from_dlpack(producer)
        if speaks_versioned(array):  # a later pyarrow
            self.assertEqual(producer.calls[0][1], "dltensor_versioned")
        else:
            self.assertEqual([name for _k, name in producer.calls], ["dltensor"])

    @unittest.skipIf(torch is None, "PyTorch is not installed")
    def test_peer1_on_into_pytorch(self):
        for dtype in ARROW_NUMERIC:
            with self.subTest(dtype=dtype):
                if not hasattr(torch, dtype):
                    self.skipTest("this PyTorch has no %s" % dtype)
                array, base = self.arrow(dtype)
                out = torch.from_dlpack(dlbridge.from_dlpack(array))
                self.assertEqual(out.data_ptr(), base.ctypes.data)
                self.assertEqual(out.tolist(), base.tolist())


@unittest.skipIf(nbp is None, NANOBIND_SKIP)
class Nanobind(unittest.TestCase):
    """dlbridge tensors into nb::ndarray parameters and nanobind's arrays back into dlbridge."""

    def counted(self, rows=3, cols=4, read_only=False, layout="c"):
        values = (ctypes.c_float * (rows * cols))(*range(rows * cols))
        counter = ReleaseCounter()
        shape, strides = {"c": ((rows, cols), None), "t": ((cols, rows), (1, cols)),
                          "step2": ((rows, (cols + 1) // 2), (cols, 2))}[layout]
        tensor = host_tensor(values, counter=counter, shape=shape, strides=strides,
                             flags=dlbridge.FLAG_READ_ONLY if read_only else 0)
        return tensor, values, counter

    def test_peer2_dlbridge_into_nanobind_versioned_and_legacy(self):
        for how in ("tensor", "versioned capsule", "legacy capsule"):
            with self.subTest(how=how):
                tensor, values, counter = self.counted()
                producer = Recording(tensor)
                make = {"tensor": lambda: producer,
                        "versioned capsule": lambda: tensor.__dlpack__(max_version=(1, 3)),
                        "legacy capsule": lambda: tensor.__dlpack__()}[how]
                address, shape, strides, dtype, device = nbp.describe(make())
                self.assertEqual((address, shape, strides), (ctypes.addressof(values), (3, 4), (4, 1)))
                self.assertEqual((dtype, device), ((2, 32, 1), (1, 0)))
                if how == "tensor":  # nanobind asks for the newest it knows, and gets it
                    self.assertIn("max_version", producer.calls[0][0])
                    self.assertEqual(producer.calls[0][1], "dltensor_versioned")
                nbp.hold(make())
                del make, producer, tensor
                gc.collect()
                self.assertEqual(counter.calls, 0)  # nanobind holds the import
                nbp.release_held()
                gc.collect()
                self.assertEqual(counter.calls, 1)

    def test_peer2_read_only_tensors_reach_only_read_only_parameters(self):
        tensor, values, counter = self.counted(read_only=True)
        self.assertEqual(nbp.describe(tensor)[0], ctypes.addressof(values))  # nb::ro: accepted
        with self.assertRaises(TypeError):
            nbp.describe_writable(tensor)  # READ_ONLY versioned capsule: refused
        with self.assertRaises(TypeError):
            nbp.fill(tensor, 1.0)
        self.assertEqual(list(values), list(range(12)))  # nothing written
        # A legacy consumer cannot be told: dlbridge refuses the legacy export (PY-8).
        with self.assertRaises(BufferError):
            tensor.__dlpack__()
        del tensor
        gc.collect()
        self.assertEqual(counter.calls, 1)

    def test_peer2_strided_tensors_are_read_and_written_through_their_strides(self):
        for layout, expect in (("t", [0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11]),
                               ("step2", [0, 2, 4, 6, 8, 10])):
            with self.subTest(layout=layout):
                tensor, values, counter = self.counted(layout=layout)
                _address, shape, strides, _d, _v = nbp.describe(tensor)
                self.assertEqual((shape, strides), (tensor.shape, tensor.strides))
                self.assertEqual(nbp.values(tensor), [float(v) for v in expect])
                nbp.fill(tensor, -1.0)
                written = [i for i, v in enumerate(values) if v == -1.0]
                self.assertEqual(written, sorted(expect))
                del tensor
                gc.collect()
                self.assertEqual(counter.calls, 1)

    def test_peer2_nanobinds_arrays_into_dlbridge_versioned_and_legacy(self):
        for make, versioned in ((nbp.make, True), (nbp.make_capsule, False)):
            for layout in ("c", "t", "step2"):
                with self.subTest(make=make.__name__, layout=layout):
                    freed = nbp.freed()
                    array = make(3, 4, layout)
                    if versioned:
                        self.assertTrue(speaks_versioned(array))
                        producer = Recording(array)
                        tensor = dlbridge.from_dlpack(producer)
                        self.assertEqual(producer.calls[0][1], "dltensor_versioned")
                        del producer
                    else:
                        self.assertEqual(capsule_name(array), "dltensor")
                        tensor = dlbridge.from_dlpack(array)
                    address, shape, strides, _d, _v = nbp.describe(tensor)
                    self.assertEqual((tensor.data_ptr(), tensor.shape, tensor.strides),
                                     (address, shape, strides))
                    self.assertFalse(tensor.readonly)
                    expected = {"c": np.arange(12).reshape(3, 4), "t": np.arange(12).reshape(3, 4).T,
                                "step2": np.arange(12).reshape(3, 4)[:, ::2]}[layout]
                    out = np.from_dlpack(tensor)
                    np.testing.assert_array_equal(out, expected)
                    self.assertEqual(out.ctypes.data, address)
                    del array, tensor
                    gc.collect()
                    self.assertEqual(nbp.freed(), freed)  # NumPy still holds it
                    del out
                    gc.collect()
                    self.assertEqual(nbp.freed(), freed + 1)

    def test_peer2_nanobinds_read_only_arrays(self):
        freed = nbp.freed()
        tensor = dlbridge.from_dlpack(nbp.make_read_only(2, 3))
        self.assertTrue(tensor.readonly)  # versioned: READ_ONLY kept
        with self.assertRaises(BufferError):
            tensor.__dlpack__()  # and not handed on to a legacy consumer as writable
        del tensor
        gc.collect()
        # nanobind's legacy capsule of read-only data carries no flag (legacy capsules have
        # none) instead of being refused: dlbridge cannot know (the peer's finding).
        legacy = dlbridge.from_dlpack(nbp.make_read_only_capsule(2, 3))
        self.assertFalse(legacy.readonly)
        del legacy
        gc.collect()
        self.assertEqual(nbp.freed(), freed + 2)

    def test_peer2_a_tensor_handed_through_nanobind_comes_back_itself(self):
        tensor, _values, counter = self.counted()
        back = nbp.echo(tensor)  # nanobind returns the object it imported from
        self.assertIs(back, tensor)
        capsule_back = nbp.echo(tensor.__dlpack__(max_version=(1, 3)))  # no object: an nb_ndarray
        again = dlbridge.from_dlpack(capsule_back)
        self.assertEqual(again.data_ptr(), tensor.data_ptr())
        del back, tensor, capsule_back
        gc.collect()
        self.assertEqual(counter.calls, 0)
        del again
        gc.collect()
        self.assertEqual(counter.calls, 1)


@unittest.skipIf(array_api_compat is None or np is None,
                 "array-api-compat is not installed (python3-array-api-compat: Debian unstable; "
                 "the newest lane, scripts/test-newest)")
class ArrayApiCompat(unittest.TestCase):
    def test_peer3_from_dlpack_of_dlbridge_tensors(self):
        import array_api_compat.numpy as xnp
        values = (ctypes.c_float * 4)(1, 2, 3, 4)
        counter = ReleaseCounter()
        tensor = host_tensor(values, counter=counter)
        out = xnp.from_dlpack(tensor)
        self.assertEqual(out.ctypes.data, ctypes.addressof(values))
        copied = xnp.from_dlpack(tensor, copy=True) if _takes_copy(xnp.from_dlpack) else None
        if copied is not None:
            self.assertNotEqual(copied.ctypes.data, ctypes.addressof(values))
        del tensor, out, copied
        gc.collect()
        self.assertEqual(counter.calls, 1)

    @unittest.skipIf(torch is None, "PyTorch is not installed")
    def test_peer3_torch_namespace_from_dlpack(self):
        import array_api_compat.torch as xtorch
        values = (ctypes.c_float * 4)(1, 2, 3, 4)
        counter = ReleaseCounter()
        tensor = host_tensor(values, counter=counter)
        out = xtorch.from_dlpack(tensor)
        self.assertEqual(out.data_ptr(), ctypes.addressof(values))
        self.assertEqual(out.tolist(), [1, 2, 3, 4])
        del tensor, out
        gc.collect()
        self.assertEqual(counter.calls, 1)

    def test_peer3_to_device_of_the_import_and_of_the_tensor(self):
        import array_api_compat.numpy as xnp
        values = (ctypes.c_float * 4)(1, 2, 3, 4)
        counter = ReleaseCounter()
        tensor = host_tensor(values, counter=counter)
        self.assertEqual(array_api_compat.device(tensor), tensor.__dlpack_device__())
        # The imported array is the namespace's array: to_device("cpu") keeps the memory.
        out = array_api_compat.to_device(xnp.from_dlpack(tensor), "cpu")
        self.assertEqual(out.ctypes.data, ctypes.addressof(values))
        # dlbridge.Tensor is an exchange type, not an array-API array: array_namespace refuses
        # it and to_device, which falls back to the array's own to_device method, has none to
        # call. Moving it is from_dlpack(tensor, device=...) on the consumer's side.
        with self.assertRaises(TypeError):
            array_api_compat.array_namespace(tensor)
        with self.assertRaises(AttributeError):
            array_api_compat.to_device(tensor, "cpu")
        del tensor, out
        gc.collect()
        self.assertEqual(counter.calls, 1)


def _takes_copy(from_dlpack):
    """Whether a from_dlpack takes copy= (array API 2023.12): detected from its signature."""
    import inspect
    try:
        return "copy" in inspect.signature(from_dlpack).parameters
    except (TypeError, ValueError):
        return False


if __name__ == "__main__":
    unittest.main()
