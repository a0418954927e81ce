"""NumPy <-> dlbridge, both directions (spec/python.md PY-20..PY-24). NumPy 1.x speaks legacy
capsules only; NumPy >= 2 also exercises the versioned path (on the GPU machine)."""
import ctypes
import unittest
import weakref

import dlbridge
from support import ReleaseCounter, address_of

try:
    import numpy as np
except ImportError:  # pragma: no cover
    np = None

DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128", "bool"]


def numpy_has_bool_dlpack():
    try:
        np.zeros(1, dtype=bool).__dlpack__()
        return True
    except BufferError:
        return False


@unittest.skipIf(np is None, "numpy is not importable by this interpreter (scripts/setup installs python3-numpy)")
class NumpyInterop(unittest.TestCase):
    def check_zero_copy_both_ways(self, a):
        t = dlbridge.from_dlpack(a)
        self.assertEqual(t.shape, a.shape)
        if a.size:
            self.assertEqual(t.strides, tuple(s // a.itemsize for s in a.strides))
            self.assertEqual(t.descriptor.GetPointer() + t.byte_offset, a.__array_interface__["data"][0])
        b = np.from_dlpack(t)
        self.assertEqual(b.dtype, a.dtype)
        self.assertEqual(b.shape, a.shape)
        np.testing.assert_array_equal(b, a)
        if a.size:
            self.assertEqual(b.__array_interface__["data"][0], a.__array_interface__["data"][0])
            self.assertEqual(b.strides, a.strides)
        return t, b

    def test_py20_every_dtype_both_directions(self):
        bool_ok = numpy_has_bool_dlpack()
        for name in DTYPES:
            with self.subTest(dtype=name):
                a = (np.arange(6) % 2 == 1) if name == "bool" else np.arange(6).astype(name)
                a = a.reshape(2, 3)
                if name == "bool" and not bool_ok:
                    # NumPy < 1.25 cannot export or import kDLBool; dlbridge's own path is PY-17.
                    with self.assertRaises(BufferError):
                        dlbridge.from_dlpack(a)
                    md = dlbridge.MemoryDescriptor(a.ctypes.data, a.nbytes, "host")
                    with self.assertRaises((BufferError, TypeError, RuntimeError)):
                        np.from_dlpack(dlbridge.Tensor(md, "bool", (2, 3)))
                    continue
                t, b = self.check_zero_copy_both_ways(a)
                expected_code = {"i": 0, "u": 1, "f": 2, "c": 5, "b": 6}[a.dtype.kind]
                self.assertEqual(t.dl_dtype, (expected_code, a.itemsize * 8, 1))
                a[0, 0] = 1  # zero-copy: writes show through (NumPy 1.x imports are read-only)
                self.assertEqual(b[0, 0], 1)

    def test_py21_views_0d_zero_size_non_contiguous_negative_strides(self):
        base = np.arange(24, dtype=np.float64).reshape(4, 6)
        views = {
            "0-d": np.array(3.5),
            "zero-size": np.zeros((0, 3), dtype=np.float32),
            "zero-size inner": np.zeros((3, 0), dtype=np.int16),
            "columns": base[:, ::2],
            "transposed": base.T,
            "negative": base[::-1, ::-2],
            "negative 1-d": np.arange(10, dtype=np.int32)[::-3],
            "scalar slice": base[2, 3:4],
        }
        for name, view in views.items():
            with self.subTest(view=name):
                self.check_zero_copy_both_ways(view)

    def test_py21_our_strided_tensor_into_numpy(self):
        base = np.arange(12, dtype=np.float32)
        md = dlbridge.MemoryDescriptor(base.ctypes.data, base.nbytes, "host")
        md.SetOwner(base)
        t = dlbridge.Tensor(md, "float32", (3, 2), strides=(-4, 2), byte_offset=32)
        np.testing.assert_array_equal(np.from_dlpack(t), base.reshape(3, 4)[::-1, ::2])

    def test_exp17_exports_carry_element_zero_and_byte_offset_0(self):
        # spec EXP-17: data is element zero's address, byte_offset 0, for offset and
        # negative-stride views alike; NumPy reads the same elements.
        from dlbridge.dlpack_ctypes import DLManagedTensor
        from support import capsule_pointer
        base = np.arange(24, dtype=np.float32)
        cases = {
            "offset": ((2, 3), None, 8, base[2:8].reshape(2, 3)),
            "negative strides": ((3, 2), (-4, 2), 32, base.reshape(6, 4)[2::-1, ::2]),
            "negative 1-d": ((5,), (-3,), 4 * 12, base[12::-3]),
        }
        for name, (shape, strides, offset, expected) in cases.items():
            with self.subTest(view=name):
                md = dlbridge.MemoryDescriptor(base.ctypes.data, base.nbytes, "host")
                md.SetOwner(base)
                t = dlbridge.Tensor(md, "float32", shape, strides=strides, byte_offset=offset)
                np.testing.assert_array_equal(np.from_dlpack(t), expected)
                cap = t.__dlpack__()
                dl = DLManagedTensor.from_address(capsule_pointer(cap, "dltensor")).dl_tensor
                self.assertEqual(dl.data, base.ctypes.data + offset)
                self.assertEqual(dl.byte_offset, 0)
                dlbridge.from_dlpack(cap)  # consumes it: the deleter runs once

    def test_exp17_reexported_numpy_views_keep_their_elements(self):
        from dlbridge.dlpack_ctypes import DLManagedTensor
        from support import capsule_pointer
        base = np.arange(24, dtype=np.float64).reshape(4, 6)
        for name, view in {"negative": base[::-1, ::-2], "offset": base[1:, 2:],
                           "negative 1-d": np.arange(10, dtype=np.int32)[8::-3]}.items():
            with self.subTest(view=name):
                t = dlbridge.from_dlpack(view)
                if view.strides[0] < 0:
                    self.assertGreater(t.byte_offset, 0)  # element zero is above the pointer
                cap = t.__dlpack__()  # from a plan: a new tensor, element zero in data
                dl = DLManagedTensor.from_address(capsule_pointer(cap, "dltensor")).dl_tensor
                self.assertEqual(dl.data, view.__array_interface__["data"][0])
                self.assertEqual(dl.byte_offset, 0)
                back = dlbridge.from_dlpack(cap)
                np.testing.assert_array_equal(np.from_dlpack(back), view)
                np.testing.assert_array_equal(np.from_dlpack(t), view)

    def test_py22_read_only_arrays(self):
        # The capability, not the version: a NumPy whose __dlpack__ takes max_version speaks
        # versioned DLPack, which alone can say read-only.
        try:
            np.zeros(1).__dlpack__(max_version=(1, 0))
            versioned = True
        except TypeError:
            versioned = False
        a = np.arange(4, dtype=np.float32)
        a.flags.writeable = False
        if not versioned:
            with self.assertRaises(BufferError):  # NumPy 1.x refuses to export read-only arrays
                dlbridge.from_dlpack(a)
        else:
            self.assertTrue(dlbridge.from_dlpack(a).readonly)
        md = dlbridge.MemoryDescriptor(a.ctypes.data, a.nbytes, "host")
        md.SetOwner(a)
        t = dlbridge.Tensor(md, "float32", (4,), flags=dlbridge.FLAG_READ_ONLY)
        if not versioned:
            with self.assertRaises(BufferError):  # legacy capsules cannot say read-only
                np.from_dlpack(t)
        else:
            b = np.from_dlpack(t)
            self.assertFalse(b.flags.writeable)

    def test_py23_release_runs_once_whichever_side_lets_go_last(self):
        for tensor_first in (True, False):
            with self.subTest(tensor_first=tensor_first):
                counter = ReleaseCounter()
                buffer = (ctypes.c_float * 8)(*range(8))
                md = dlbridge.MemoryDescriptor(address_of(buffer), 32, "host")
                md.SetReleaseAddress(counter.address, 55)
                t = dlbridge.Tensor(md, "float32", (2, 4))
                arrays = [np.from_dlpack(t), np.from_dlpack(t)[1:]]
                if tensor_first:
                    del t
                self.assertEqual(counter.calls, 0)
                arrays.pop(0)
                self.assertEqual(counter.calls, 0)
                np.testing.assert_array_equal(arrays[0], [[4, 5, 6, 7]])
                arrays.pop()
                if not tensor_first:
                    self.assertEqual(counter.calls, 0)
                    del t
                self.assertEqual(counter.contexts, [55])

    def test_py23_imported_numpy_array_lives_until_the_tensor_goes(self):
        a = np.arange(6, dtype=np.int64)
        alive = weakref.ref(a)
        t = dlbridge.from_dlpack(a)
        del a
        self.assertIsNotNone(alive())
        b = np.from_dlpack(t)  # re-exported to NumPy: b keeps t, which keeps the original
        del t
        self.assertIsNotNone(alive())
        np.testing.assert_array_equal(b, np.arange(6))
        del b
        self.assertIsNone(alive())

    def test_py24_versioned_path_when_numpy_speaks_it(self):
        a = np.arange(4, dtype=np.float32)
        try:
            cap = a.__dlpack__(max_version=(1, 0))
        except TypeError:
            self.skipTest(f"NumPy {np.__version__} has no versioned DLPack (max_version); "
                          "the versioned path is tested against dlbridge itself (PY-17) and on the GPU machine")
        t = dlbridge.from_dlpack(cap)
        self.assertEqual(t.descriptor.GetPointer(), a.ctypes.data)
        b = np.from_dlpack(dlbridge.from_dlpack(a))
        self.assertEqual(b.ctypes.data, a.ctypes.data)
        c = np.from_dlpack(t, copy=True)
        self.assertNotEqual(c.ctypes.data, a.ctypes.data)
        np.testing.assert_array_equal(c, a)


if __name__ == "__main__":
    unittest.main()
