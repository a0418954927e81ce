"""dlbridge.MemoryDescriptor and dlbridge.Tensor construction (spec/python.md PY-1..PY-5)."""
import ctypes
import sys
import threading
import unittest

import dlbridge
from support import ReleaseCounter, address_of, host_tensor


class DescriptorApi(unittest.TestCase):
    def test_py1_seed_api_getters_setters_and_set(self):
        md = dlbridge.MemoryDescriptor()
        self.assertEqual((md.GetPointer(), md.GetSizeInBytes(), md.GetMemorySpace(), md.GetRole()),
                         (0, 0, "host", "data"))
        self.assertFalse(md.HasOwnership())
        md.Set(0x1000, 64, "cuda", "weights")
        self.assertEqual((md.GetPointer(), md.GetSizeInBytes(), md.GetMemorySpace(), md.GetRole()),
                         (0x1000, 64, "cuda", "weights"))
        md.SetPointer(0x2000)
        md.SetSizeInBytes(8)
        md.SetMemorySpace("level_zero")
        md.SetRole("grad")
        self.assertEqual((md.GetPointer(), md.GetSizeInBytes(), md.GetMemorySpace(), md.GetRole()),
                         (0x2000, 8, "level_zero", "grad"))
        md2 = dlbridge.MemoryDescriptor(0x3000, 16, "hip")
        self.assertEqual((md2.GetPointer(), md2.GetSizeInBytes(), md2.GetMemorySpace()), (0x3000, 16, "hip"))

    def test_py1_errors_map_to_python_exceptions_with_the_message(self):
        md = dlbridge.MemoryDescriptor()
        with self.assertRaises(ValueError) as cm:
            md.SetMemorySpace("opencl")
        self.assertIn('"host"', str(cm.exception))
        self.assertEqual(cm.exception.code, "kInvalidMemorySpace")
        with self.assertRaises(ValueError) as cm:
            md.SetMemorySpace("metal")
        self.assertIn("shared", str(cm.exception))
        with self.assertRaises(ValueError) as cm:
            md.Set(0, 10, "host")
        self.assertEqual(cm.exception.code, "kInvalidDescriptor")
        with self.assertRaises(ValueError):
            md.SetSizeInBytes(-1)
        with self.assertRaises(TypeError):
            md.SetPointer("0x10")
        with self.assertRaises(TypeError):
            md.SetMemorySpace(3)

    def test_py2_release_address_runs_once_and_reads_back(self):
        counter = ReleaseCounter()
        md = dlbridge.MemoryDescriptor(0x1000, 4, "host")
        md.SetReleaseAddress(counter.address, 77)
        self.assertTrue(md.HasOwnership())
        self.assertEqual((md.GetReleaseAddress(), md.GetReleaseContextAddress()), (counter.address, 77))
        md.SetReleaseAddress(0, 0)  # clears, dropping the old hold once
        self.assertEqual(counter.contexts, [77])
        self.assertFalse(md.HasOwnership())
        md.SetReleaseAddress(counter.address, 78)
        del md
        self.assertEqual(counter.contexts, [77, 78])

    def test_py2_take_release_returns_the_two_ints(self):
        counter = ReleaseCounter()
        md = dlbridge.MemoryDescriptor()
        self.assertEqual(md.TakeRelease(), (0, 0))
        md.SetReleaseAddress(counter.address, 5)
        release, context = md.TakeRelease()
        self.assertEqual((release, context), (counter.address, 5))
        self.assertFalse(md.HasOwnership())
        del md
        self.assertEqual(counter.calls, 0)  # the duty moved to us
        ctypes.CFUNCTYPE(None, ctypes.c_void_p)(release)(context)
        self.assertEqual(counter.contexts, [5])

    def test_py3_set_owner_keeps_a_python_object_alive(self):
        owner = bytearray(b"abcd")
        md = dlbridge.MemoryDescriptor(0x1000, 4, "host")
        before = sys.getrefcount(owner)
        md.SetOwner(owner)
        self.assertIs(md.GetOwner(), owner)
        self.assertTrue(md.HasOwnership())
        self.assertEqual(md.GetReleaseAddress(), 0)
        self.assertEqual(sys.getrefcount(owner), before + 1)
        md.SetOwner(None)
        self.assertEqual(sys.getrefcount(owner), before)
        self.assertFalse(md.HasOwnership())
        md.SetOwner(owner)
        del md
        self.assertEqual(sys.getrefcount(owner), before)

    def test_py3_owner_dropped_on_another_thread_takes_the_gil(self):
        owner = bytearray(16)
        before = sys.getrefcount(owner)
        md = dlbridge.MemoryDescriptor()
        md.SetOwner(owner)
        t = host_tensor((ctypes.c_float * 4)())
        # TakeRelease on an owner hold gives a pair; call it on a thread without the GIL.
        md2 = t.descriptor
        md2.SetOwner(owner)
        release, context = md2.TakeRelease()
        fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(release)  # ctypes drops the GIL for the call
        worker = threading.Thread(target=fn, args=(context,))
        worker.start()
        worker.join()
        self.assertEqual(sys.getrefcount(owner), before + 1)  # md still holds one
        del md
        self.assertEqual(sys.getrefcount(owner), before)

    def test_py4_tensor_takes_the_hold_and_keeps_the_description(self):
        counter = ReleaseCounter()
        values = (ctypes.c_float * 6)(*range(6))
        md = dlbridge.MemoryDescriptor(address_of(values), 24, "host", "data")
        md.SetReleaseAddress(counter.address, 9)
        t = dlbridge.Tensor(md, "float32", (2, 3))
        self.assertFalse(md.HasOwnership())
        self.assertEqual((md.GetPointer(), md.GetSizeInBytes(), md.GetRole()), (address_of(values), 24, "data"))
        self.assertTrue(t.descriptor.HasOwnership())
        self.assertEqual((t.dl_dtype, t.shape, t.strides, t.ndim, t.byte_offset, t.device, t.flags),
                         ((2, 32, 1), (2, 3), (3, 1), 2, 0, (dlbridge.kDLCPU, 0), 0))
        self.assertEqual(t.__dlpack_device__(), (dlbridge.kDLCPU, 0))
        del md
        self.assertEqual(counter.calls, 0)
        del t
        self.assertEqual(counter.contexts, [9])

    def test_py4_tensor_arguments_are_checked(self):
        md = dlbridge.MemoryDescriptor(0x1000, 16, "host")
        with self.assertRaises(TypeError):
            dlbridge.Tensor(md, 3.5, (2,))
        with self.assertRaises(ValueError):
            dlbridge.Tensor(md, "float128", (2,))
        with self.assertRaises(ValueError):
            dlbridge.Tensor(md, "float32", (-1,))
        with self.assertRaises(ValueError):
            dlbridge.Tensor(md, "float32", (2,), strides=(1, 1))
        with self.assertRaises(TypeError):
            dlbridge.Tensor(md, "float32", (2,), device=3.5)
        with self.assertRaises(TypeError):
            dlbridge.Tensor("not a descriptor", "float32", (2,))
        t = dlbridge.Tensor(md, (0, 16, 1), (8,))
        self.assertEqual(t.dl_dtype, (0, 16, 1))

    def test_py5_gpu_tensor_device_comes_from_device_or_is_refused(self):
        # Fake device addresses that nothing holds: the opt-in (PY-54).
        md = dlbridge.MemoryDescriptor(0x1000, 16, "cuda")
        with self.assertRaises(BufferError):
            dlbridge.Tensor(md, "float32", (4,), allow_unowned=True).__dlpack_device__()
        md = dlbridge.MemoryDescriptor(0x1000, 16, "cuda")
        self.assertEqual(dlbridge.Tensor(md, "float32", (4,), allow_unowned=True, device=(2, 1)).__dlpack_device__(), (2, 1))
        md = dlbridge.MemoryDescriptor(0x1000, 16, "host")
        self.assertEqual(dlbridge.Tensor(md, "float32", (4,), allow_unowned=True, device=(3, 0)).__dlpack_device__(), (3, 0))
        md = dlbridge.MemoryDescriptor(0x1000, 16, "host")
        with self.assertRaises(BufferError):
            dlbridge.Tensor(md, "float32", (4,), allow_unowned=True, device=(2, 0)).__dlpack_device__()
        # kDLCPU's device_id must be 0: (1, 5) is no device, refused as the argument is read
        # (PY-64), before any export could be asked.
        md = dlbridge.MemoryDescriptor(0x1000, 16, "host")
        with self.assertRaisesRegex(ValueError, r"^Tensor: device \(1, 5\) is not a device"):
            dlbridge.Tensor(md, "float32", (4,), allow_unowned=True, device=(1, 5))


if __name__ == "__main__":
    unittest.main()
