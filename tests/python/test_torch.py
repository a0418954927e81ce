"""PyTorch <-> dlbridge, both directions (spec/python.md PY-25..PY-28). PyTorch 1.x speaks
legacy capsules only (`__dlpack__(stream=None)`, no max_version)."""
import ctypes
import unittest

import dlbridge
from support import ReleaseCounter, address_of, capsule_name

try:
    import torch
    import torch.utils.dlpack
    TORCH_ERROR = None
except Exception as e:  # pragma: no cover
    torch = None
    TORCH_ERROR = e

# uint16/32/64 have no PyTorch 1.x tensors; they are covered through NumPy (PY-20).
DTYPES = ["int8", "int16", "int32", "int64", "uint8", "float16", "float32", "float64",
          "complex64", "complex128", "bool"]


@unittest.skipIf(torch is None, f"torch is not importable by this interpreter ({TORCH_ERROR}); "
                                "scripts/setup installs python3-torch")
class TorchInterop(unittest.TestCase):
    def test_py25_every_dtype_both_directions(self):
        for name in DTYPES:
            with self.subTest(dtype=name):
                dtype = getattr(torch, name)
                x = (torch.arange(6) % 2).to(dtype).reshape(2, 3)
                try:
                    torch.utils.dlpack.to_dlpack(x)
                except RuntimeError:
                    # PyTorch 1.x cannot export bool through DLPack; dlbridge's own path is PY-17.
                    self.assertEqual(name, "bool")
                    with self.assertRaises(RuntimeError):
                        dlbridge.from_dlpack(x)
                    continue
                t = dlbridge.from_dlpack(x)  # __dlpack__(max_version=...) -> TypeError -> retry
                self.assertEqual(t.shape, (2, 3))
                self.assertEqual(t.descriptor.GetPointer() + t.byte_offset, x.data_ptr())
                y = torch.from_dlpack(t)
                self.assertEqual(y.dtype, dtype)
                self.assertEqual(y.data_ptr(), x.data_ptr())
                self.assertTrue(torch.equal(y, x))

    def test_py26_strided_views_and_0d(self):
        base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
        for name, view in {"columns": base[:, ::2], "transposed": base.t(), "0-d": torch.tensor(2.5),
                           "zero-size": torch.zeros(0, 3), "offset": base[1:, 2:]}.items():
            with self.subTest(view=name):
                t = dlbridge.from_dlpack(view)
                self.assertEqual(t.shape, tuple(view.shape))
                if view.numel():
                    self.assertEqual(t.strides, tuple(view.stride()))
                y = torch.from_dlpack(t)
                self.assertTrue(torch.equal(y, view))
                if view.numel():  # a zero-size tensor's strides mean nothing
                    self.assertEqual(y.stride(), view.stride())
                    self.assertEqual(y.data_ptr(), view.data_ptr())

    def test_exp17_offset_tensors_reach_torch_at_element_zero(self):
        # PyTorch ignores byte_offset: dlbridge exports element zero in data (spec EXP-17).
        base = torch.arange(16, dtype=torch.float32)
        for name, (shape, strides, offset) in {
                "offset": ((2, 3), None, 8),
                "offset, every other column": ((2, 3), (6, 2), 4),
                "offset, transposed": ((3, 2), (1, 4), 12)}.items():
            with self.subTest(view=name):
                md = dlbridge.MemoryDescriptor(base.data_ptr(), 64, "host")
                md.SetOwner(base)
                t = dlbridge.Tensor(md, "float32", shape, strides=strides, byte_offset=offset)
                y = torch.from_dlpack(t)
                item = offset // 4
                expected = base.as_strided(shape, strides or (shape[1], 1), item)
                self.assertEqual(y.tolist(), expected.tolist())
                self.assertEqual(y.data_ptr(), base.data_ptr() + offset)
        md = dlbridge.MemoryDescriptor(base.data_ptr(), 64, "host")
        md.SetOwner(base)
        y = torch.from_dlpack(dlbridge.Tensor(md, "float32", (2, 3), byte_offset=8))
        self.assertEqual(y.tolist(), [[2, 3, 4], [5, 6, 7]])  # the example

    def test_exp17_reexported_torch_views_keep_their_elements(self):
        base = torch.arange(24, dtype=torch.float64).reshape(4, 6)
        for name, view in {"offset": base[1:, 2:], "offset columns": base[2:, 1::2],
                           "offset transposed": base[1:, 3:].t()}.items():
            with self.subTest(view=name):
                t = dlbridge.from_dlpack(view)
                # A new dlbridge tensor over the imported bytes, held by the import: exported
                # from a plan, not handed back.
                md = dlbridge.MemoryDescriptor(t.descriptor.GetPointer(),
                                               t.descriptor.GetSizeInBytes(), "host")
                md.SetOwner(t)
                again = dlbridge.Tensor(md, "float64", t.shape, strides=t.strides,
                                        byte_offset=t.byte_offset)
                y = torch.from_dlpack(again)
                self.assertEqual(y.tolist(), view.tolist())
                self.assertEqual(y.data_ptr(), view.data_ptr())
                z = torch.from_dlpack(t)
                self.assertEqual(z.tolist(), view.tolist())

    # Negative strides are not sent to PyTorch: PyTorch 1.13's from_dlpack throws a C++
    # exception through a noexcept frame for them and aborts the process (std::terminate).
    # They are covered with NumPy (PY-21) and dlbridge itself (PY-17).

    def test_py27_release_runs_once_whichever_side_lets_go_last(self):
        for tensor_first in (True, False):
            with self.subTest(tensor_first=tensor_first):
                counter = ReleaseCounter()
                buffer = (ctypes.c_float * 4)(1, 2, 3, 4)
                md = dlbridge.MemoryDescriptor(address_of(buffer), 16, "host")
                md.SetReleaseAddress(counter.address, 66)
                t = dlbridge.Tensor(md, "float32", (4,))
                y = torch.from_dlpack(t)
                if tensor_first:
                    del t
                self.assertEqual(counter.calls, 0)
                y.add_(1)  # writable and shared
                self.assertEqual(list(buffer), [2.0, 3.0, 4.0, 5.0])
                del y
                if not tensor_first:
                    self.assertEqual(counter.calls, 0)
                    del t
                self.assertEqual(counter.contexts, [66])

    def test_py27_imported_torch_tensor_lives_until_the_dlbridge_tensor_goes(self):
        x = torch.arange(6, dtype=torch.float64)
        t = dlbridge.from_dlpack(x)
        ptr = x.data_ptr()
        del x
        y = torch.from_dlpack(t)
        del t
        self.assertEqual(y.data_ptr(), ptr)
        self.assertEqual(y.tolist(), [0.0, 1.0, 2.0, 3.0, 4.0, 5.0])

    def test_py28_capsules_consumed_on_either_side_cannot_be_consumed_again(self):
        counter = ReleaseCounter()
        buffer = (ctypes.c_float * 4)()
        md = dlbridge.MemoryDescriptor(address_of(buffer), 16, "host")
        md.SetReleaseAddress(counter.address, 1)
        t = dlbridge.Tensor(md, "float32", (4,))
        cap = t.__dlpack__()
        del t
        y = torch.utils.dlpack.from_dlpack(cap)
        self.assertEqual(capsule_name(cap), "used_dltensor")
        with self.assertRaises(ValueError):
            dlbridge.from_dlpack(cap)
        del cap, y
        self.assertEqual(counter.calls, 1)

        cap = torch.utils.dlpack.to_dlpack(torch.ones(3))
        imported = dlbridge.from_dlpack(cap)
        self.assertEqual(imported.shape, (3,))
        with self.assertRaises(ValueError):
            dlbridge.from_dlpack(cap)
        with self.assertRaises(RuntimeError):
            torch.utils.dlpack.from_dlpack(cap)


if __name__ == "__main__":
    unittest.main()
