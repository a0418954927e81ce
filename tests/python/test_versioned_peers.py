"""Versioned DLPack with real peers (spec/python.md PY-63): NumPy >= 2 and PyTorch >= 2 ask
for and hand out "dltensor_versioned" capsules. Each test detects the capability (does the
peer's __dlpack__ take max_version?) and states the behaviour for it; a peer without it is
covered by test_numpy.py and test_torch.py's legacy paths."""
import ctypes
import gc
import unittest

import dlbridge
from support import (DLManagedTensorVersioned, Recording, ReleaseCounter, address_of, capsule_name,
                     capsule_pointer)

try:
    import numpy as np
except ImportError:  # pragma: no cover
    np = None

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None


def speaks_versioned(obj):
    """Whether a peer's __dlpack__ takes max_version (versioned DLPack, 2023 onwards)."""
    try:
        obj.__dlpack__(max_version=(1, 0))
    except TypeError:
        return False
    return True


NUMPY_VERSIONED = np is not None and speaks_versioned(np.zeros(1))
TORCH_VERSIONED = torch is not None and speaks_versioned(torch.zeros(1))




def flags_of(capsule):
    """The flags of a "dltensor_versioned" capsule's managed tensor."""
    pointer = capsule_pointer(capsule, "dltensor_versioned")
    return DLManagedTensorVersioned.from_address(pointer).flags


def host_tensor(values, read_only=False):
    array = np.asarray(values, dtype=np.float32)
    tensor = dlbridge.from_dlpack(array)
    if read_only:
        tensor.flags = dlbridge.FLAG_READ_ONLY
    return array, tensor


@unittest.skipIf(not NUMPY_VERSIONED, "this NumPy speaks legacy DLPack only (test_numpy.py)")
class NumpyVersioned(unittest.TestCase):
    def test_py63_numpy_asks_dlbridge_for_a_versioned_capsule(self):
        array, tensor = host_tensor([1, 2, 3, 4])
        producer = Recording(tensor)
        out = np.from_dlpack(producer)
        self.assertEqual(out.ctypes.data, array.ctypes.data)  # zero copy
        keywords, name = producer.calls[0]
        self.assertIn("max_version", keywords)
        self.assertEqual(name, "dltensor_versioned")
        self.assertTrue(out.flags.writeable)

    def test_py63_dlbridge_takes_numpys_versioned_capsule(self):
        array = np.arange(6, dtype=np.float64).reshape(2, 3)[:, ::2]
        capsule = array.__dlpack__(max_version=(1, 3))
        self.assertEqual(capsule_name(capsule), "dltensor_versioned")
        tensor = dlbridge.from_dlpack(capsule)
        self.assertEqual(capsule_name(capsule), "used_dltensor_versioned")
        self.assertEqual((tensor.shape, tensor.strides), ((2, 2), (3, 2)))
        self.assertEqual(tensor.data_ptr(), array.ctypes.data)
        np.testing.assert_array_equal(np.from_dlpack(tensor), array)

    def test_py63_read_only_reaches_numpy_both_ways(self):
        _, tensor = host_tensor([1, 2, 3], read_only=True)
        out = np.from_dlpack(tensor)
        self.assertFalse(out.flags.writeable)  # the flag, not a copy: the same memory
        self.assertEqual(out.ctypes.data, tensor.data_ptr())
        frozen = np.arange(3, dtype=np.int32)
        frozen.flags.writeable = False
        self.assertTrue(dlbridge.from_dlpack(frozen).readonly)

    def test_py63_numpys_device_and_copy_negotiation(self):
        array, tensor = host_tensor([5, 6, 7])
        producer = Recording(tensor)
        same = np.from_dlpack(producer, device="cpu", copy=False)
        self.assertEqual(same.ctypes.data, array.ctypes.data)
        copied = np.from_dlpack(producer, copy=True)
        self.assertNotEqual(copied.ctypes.data, array.ctypes.data)
        np.testing.assert_array_equal(copied, array)
        copied[0] = 0
        self.assertEqual(array[0], 5)  # a real copy
        asked = [keywords for keywords, _ in producer.calls]
        self.assertIn("dl_device", asked[0])
        self.assertIn("copy", asked[1])
        # NumPy's own copy=True reaches dlbridge as dl_device/copy, and comes back marked.
        back = dlbridge.from_dlpack(array, copy=True)
        self.assertNotEqual(back.data_ptr(), array.ctypes.data)
        self.assertTrue(back.flags & dlbridge.FLAG_IS_COPIED)


@unittest.skipIf(not TORCH_VERSIONED, "this PyTorch speaks legacy DLPack only (test_torch.py)")
class TorchVersioned(unittest.TestCase):
    def test_py63_torch_asks_dlbridge_for_a_versioned_capsule(self):
        array, tensor = host_tensor([1, 2, 3, 4])
        producer = Recording(tensor)
        out = torch.from_dlpack(producer)
        self.assertEqual(out.data_ptr(), array.ctypes.data)
        keywords, name = producer.calls[0]
        self.assertIn("max_version", keywords)
        self.assertEqual(name, "dltensor_versioned")
        out[0] = 9
        self.assertEqual(array[0], 9)  # one memory

    def test_py63_dlbridge_takes_torchs_versioned_capsule(self):
        base = torch.arange(12, dtype=torch.int16).reshape(3, 4)
        view = base[1:, 1::2]
        capsule = view.__dlpack__(max_version=(1, 3))
        self.assertEqual(capsule_name(capsule), "dltensor_versioned")
        tensor = dlbridge.from_dlpack(capsule)
        self.assertEqual((tensor.shape, tensor.strides), ((2, 2), (4, 2)))
        self.assertEqual(tensor.data_ptr(), view.data_ptr())
        self.assertFalse(tensor.readonly)
        self.assertTrue(torch.equal(torch.from_dlpack(tensor), view))

    def test_py63_read_only_data_reaches_torch_flagged_and_is_released_once(self):
        # dlbridge's capsule says read-only (the flag is set; PY-22). What PyTorch does with it
        # is its own choice: a refusal must be a clear error with nothing kept; PyTorch 2.14
        # takes the memory and ignores the flag (spec/reports/torch-2.14.md, the peer's).
        counter = ReleaseCounter()
        buffer = (ctypes.c_float * 2)(1, 2)
        md = dlbridge.MemoryDescriptor(address_of(buffer), 8, "host")
        md.SetReleaseAddress(counter.address, 4)
        tensor = dlbridge.Tensor(md, "float32", (2,), flags=dlbridge.FLAG_READ_ONLY)
        capsule = tensor.__dlpack__(max_version=(1, 3))
        self.assertTrue(flags_of(capsule) & dlbridge.FLAG_READ_ONLY)
        del capsule
        try:
            out = torch.from_dlpack(tensor)
        except (BufferError, RuntimeError) as error:
            self.assertRegex(str(error).lower(), "read.?only")
        else:
            self.assertEqual(out.data_ptr(), address_of(buffer))
            del out
        del tensor, md
        gc.collect()
        self.assertEqual(counter.contexts, [4])
        # PyTorch's own read-only export reaches dlbridge with the flag set.
        wrapper = getattr(torch.utils.dlpack, "ReadOnlyTensorWrapper", None)
        if wrapper is not None:
            base = torch.ones(3)
            imported = dlbridge.from_dlpack(wrapper(base))
            self.assertTrue(imported.readonly)
            self.assertEqual(imported.data_ptr(), base.data_ptr())


if __name__ == "__main__":
    unittest.main()
