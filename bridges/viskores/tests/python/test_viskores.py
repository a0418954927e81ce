"""The Viskores bridge from Python (spec/bridges.md, VSK-1): a NumPy array and a PyTorch tensor
go into a Viskores ArrayHandle zero copy (dlbridge::viskores through the test extension
_viskores_roundtrip), a Viskores worklet doubles them in place and Viskores' Reduce sums them,
the handle comes back out through DLPack over the same memory, and each producer is released
exactly once, after the last consumer lets go."""
import gc
import unittest

import numpy as np

import _viskores_roundtrip as vsk
import dlbridge

try:
    import torch
except ImportError:  # the bridge is still tested with NumPy
    torch = None


def address(array):
    return array.__array_interface__["data"][0]


class ViskoresRoundTrip(unittest.TestCase):
    def run_round_trip(self, values, data_pointer, versioned):
        before = vsk.releases()
        total, capsule = vsk.adopt_twice(values, versioned)
        self.assertEqual(total, 2.0 * sum(range(6)))
        # The export is a view of the producer's memory: NumPy and dlbridge see the same bytes.
        back = np.from_dlpack(dlbridge.from_dlpack(capsule))
        self.assertEqual(address(back), data_pointer)
        self.assertEqual(back.tolist(), [0.0, 2.0, 4.0, 6.0, 8.0, 10.0])
        values[0] = 42.0  # one memory: a write through the producer shows in the export
        self.assertEqual(back[0], 42.0)
        self.assertEqual(vsk.releases(), before)  # the export still holds the handle
        del capsule, back
        gc.collect()
        self.assertEqual(vsk.releases(), before + 1)
        return before

    def test_vsk1_numpy_through_viskores_and_back(self):
        for versioned in (False, True):
            with self.subTest(versioned=versioned):
                a = np.arange(6, dtype=np.float64)
                self.run_round_trip(a, address(a), versioned)
                self.assertEqual(a.tolist(), [42.0, 2.0, 4.0, 6.0, 8.0, 10.0])

    @unittest.skipIf(torch is None, "PyTorch is not installed")
    def test_vsk1_torch_through_viskores_and_back(self):
        x = torch.arange(6, dtype=torch.float64)
        self.run_round_trip(x, x.data_ptr(), False)
        self.assertEqual(x.tolist(), [42.0, 2.0, 4.0, 6.0, 8.0, 10.0])

    def test_vsk5_a_refused_producer_is_released_once_and_raises(self):
        a = np.arange(6, dtype=np.float32)  # the extension adopts float64 only
        before = vsk.releases()
        with self.assertRaisesRegex(ValueError, "dtype is float32 but"):
            vsk.adopt_twice(a, False)
        gc.collect()
        # The refusal left the hold in the tensor, which dropped it once on the way out.
        self.assertEqual(vsk.releases(), before + 1)


if __name__ == "__main__":
    unittest.main()
