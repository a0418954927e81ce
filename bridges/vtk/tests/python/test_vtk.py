"""VTK <-> DLPack from Python through dlbridge.vtk (spec/bridges.md VTK-9, VTK-10): zero copy
(addresses compared) and exact lifetimes (the VTK array dies when its last consumer lets go; an
adopted producer is released exactly when VTK deletes the array)."""
import ctypes
import gc
import unittest

import dlbridge
from support import ReleaseCounter, address_of

try:
    from vtkmodules import vtkCommonCore as vtk
    import dlbridge.vtk as dvtk
    VTK_ERROR = None
except Exception as e:  # pragma: no cover
    vtk = None
    VTK_ERROR = e

try:
    import numpy as np
except Exception:  # pragma: no cover
    np = None
try:
    import torch
except Exception:  # pragma: no cover
    torch = None


def pointer_of(array):
    """The address VTK reports for element zero (its mangled `_<hex>_p_void`)."""
    text = array.GetVoidPointer(0)
    return int(text[1:text.index("_p_")], 16)


class DeleteCounter:
    """Counts vtkCommand::DeleteEvent on the arrays it observes (holds no array)."""

    def __init__(self):
        self.deletes = 0

    def observe(self, array):
        array.AddObserver(vtk.vtkCommand.DeleteEvent, self._deleted)

    def _deleted(self, caller, event):
        self.deletes += 1


def filled(cls, tuples, components):
    array = cls()
    array.SetNumberOfComponents(components)
    array.SetNumberOfTuples(tuples)
    for i in range(tuples * components):
        array.SetValue(i, i % 100)
    return array


@unittest.skipIf(vtk is None, f"VTK's Python wrapping is not importable ({VTK_ERROR}); "
                              "scripts/setup installs python3-vtk9")
class VtkExport(unittest.TestCase):
    CLASSES = {
        "vtkSignedCharArray": "int8", "vtkUnsignedCharArray": "uint8", "vtkShortArray": "int16",
        "vtkUnsignedShortArray": "uint16", "vtkIntArray": "int32", "vtkUnsignedIntArray": "uint32",
        "vtkLongLongArray": "int64", "vtkUnsignedLongLongArray": "uint64",
        "vtkTypeInt64Array": "int64", "vtkTypeUInt64Array": "uint64",
        "vtkFloatArray": "float32", "vtkDoubleArray": "float64",
    }

    def test_vtk9_every_numeric_array_exports_zero_copy(self):
        for name, dtype in self.CLASSES.items():
            with self.subTest(array=name):
                array = filled(getattr(vtk, name), 5, 3)
                tensor = dvtk.export(array)
                self.assertEqual(tensor.dtype, dtype)
                self.assertEqual(tensor.shape, (5, 3))
                self.assertEqual(tensor.data_ptr(), pointer_of(array))
                if np is not None:
                    view = np.from_dlpack(tensor)
                    self.assertEqual(view.ctypes.data, pointer_of(array))
                    self.assertEqual(view[4, 2], array.GetComponent(4, 2))

    def test_vtk9_platform_widths_and_one_component(self):
        self.assertEqual(dvtk.export(vtk.vtkIdTypeArray()).dtype,
                         "int%d" % (8 * vtk.vtkIdTypeArray().GetDataTypeSize()))
        self.assertEqual(dvtk.export(vtk.vtkLongArray()).dtype,
                         "int%d" % (8 * ctypes.sizeof(ctypes.c_long)))
        char = dvtk.export(vtk.vtkCharArray()).dtype
        self.assertEqual(char, "int8" if vtk.vtkCharArray().GetDataTypeMin() < 0 else "uint8")
        scalars = filled(vtk.vtkFloatArray, 4, 1)
        self.assertEqual(dvtk.export(scalars).shape, (4, 1))
        self.assertEqual(dvtk.export(vtk.vtkDoubleArray()).shape, (0, 1))

    def test_vtk9_refuses_non_numeric_soa_and_non_arrays(self):
        strings = vtk.vtkStringArray()
        strings.InsertNextValue("a")
        with self.assertRaisesRegex(BufferError, "vtkStringArray of string is not numeric"):
            dvtk.export(strings)
        with self.assertRaisesRegex(BufferError, "vtkBitArray packs 8 values per byte"):
            dvtk.export(vtk.vtkBitArray())
        soa = vtk.vtkSOADataArrayTemplate["float32"]()
        soa.SetNumberOfComponents(2)
        soa.SetNumberOfTuples(3)
        with self.assertRaisesRegex(BufferError, "not one interleaved \\(AOS\\) block"):
            dvtk.export(soa)
        with self.assertRaisesRegex(TypeError, "expected a vtkDataArray, got list"):
            dvtk.export([1.0, 2.0])

    def test_vtk14_messages_name_template_arrays_as_vtk_users_write_them(self):
        soa = vtk.vtkSOADataArrayTemplate["float64"]()
        soa.SetNumberOfComponents(2)
        with self.assertRaisesRegex(BufferError, "^dlbridge.vtk.export: "
                                    "vtkSOADataArrayTemplate<double>'s values"):
            dvtk.export(soa)

    @unittest.skipIf(np is None, "numpy is not importable")
    def test_vtk9_the_array_lives_until_the_last_numpy_consumer(self):
        counter = DeleteCounter()
        array = filled(vtk.vtkDoubleArray, 6, 2)
        counter.observe(array)
        address = pointer_of(array)
        first = np.from_dlpack(dvtk.export(array))
        second = np.from_dlpack(dvtk.export(array))
        del array
        gc.collect()
        self.assertEqual(counter.deletes, 0)
        self.assertEqual(first.ctypes.data, address)
        self.assertEqual(first[5, 1], 11.0)
        del first
        gc.collect()
        self.assertEqual(counter.deletes, 0)
        del second
        gc.collect()
        self.assertEqual(counter.deletes, 1)

    @unittest.skipIf(torch is None, "torch is not importable")
    def test_vtk9_the_array_lives_until_the_torch_consumer(self):
        counter = DeleteCounter()
        array = filled(vtk.vtkFloatArray, 4, 3)
        counter.observe(array)
        address = pointer_of(array)
        consumer = torch.from_dlpack(dvtk.export(array))
        del array
        gc.collect()
        self.assertEqual(counter.deletes, 0)
        self.assertEqual(consumer.data_ptr(), address)
        self.assertEqual(consumer[3, 2].item(), 11.0)
        consumer[0, 0] = 42.0  # one memory: the VTK array sees torch's writes
        del consumer
        gc.collect()
        self.assertEqual(counter.deletes, 1)


@unittest.skipIf(vtk is None, f"VTK's Python wrapping is not importable ({VTK_ERROR}); "
                              "scripts/setup installs python3-vtk9")
class VtkAdopt(unittest.TestCase):
    def assertIsA(self, array, name):
        """The array is a `name` (VTK 9.6 makes the sized subclasses, vtkTypeFloat32Array for
        a vtkFloatArray; older VTK the plain class): the class a user's code tests for."""
        self.assertTrue(array.IsA(name), "%s is not a %s" % (array.GetClassName(), name))

    def counted_tensor(self, counter, values, dtype="float32", shape=None):
        """A dlbridge.Tensor over `values` (a ctypes array) whose release `counter` counts."""
        descriptor = dlbridge.MemoryDescriptor(address_of(values), ctypes.sizeof(values), "host")
        descriptor.SetReleaseAddress(counter.address, 0)
        return dlbridge.Tensor(descriptor, dtype, shape or (len(values),))

    def test_vtk10_release_runs_exactly_when_vtk_deletes_the_array(self):
        counter = ReleaseCounter()
        values = (ctypes.c_float * 6)(1, 2, 3, 4, 5, 6)
        producer = self.counted_tensor(counter, values, shape=(3, 2))
        array = dvtk.adopt(producer)
        del producer
        gc.collect()
        self.assertIsA(array, "vtkFloatArray")
        self.assertEqual((array.GetNumberOfTuples(), array.GetNumberOfComponents()), (3, 2))
        self.assertEqual(pointer_of(array), address_of(values))
        self.assertEqual(array.GetComponent(2, 1), 6.0)
        self.assertEqual(counter.calls, 0)
        # Held by C++ only (a vtkCollection): the Python wrapper's death changes nothing.
        collection = vtk.vtkCollection()
        collection.AddItem(array)
        del array
        gc.collect()
        self.assertEqual(counter.calls, 0)
        collection.RemoveAllItems()  # VTK deletes the array: the release runs now, once
        self.assertEqual(counter.calls, 1)
        del collection
        gc.collect()
        self.assertEqual(counter.calls, 1)

    def test_vtk10_a_shallow_copy_keeps_the_memory_after_the_adopted_array_goes(self):
        # ShallowCopy shares VTK's buffer: the hold must follow the buffer, not the first array.
        counter = ReleaseCounter()
        values = (ctypes.c_float * 6)(1, 2, 3, 4, 5, 6)
        array = dvtk.adopt(self.counted_tensor(counter, values, shape=(3, 2)))
        copy = vtk.vtkFloatArray()
        copy.ShallowCopy(array)
        self.assertEqual(pointer_of(copy), address_of(values))
        del array
        gc.collect()
        self.assertEqual(counter.calls, 0)  # the copy still reads the producer's memory
        self.assertEqual(copy.GetComponent(2, 1), 6.0)
        del copy
        gc.collect()
        self.assertEqual(counter.calls, 1)

    @unittest.skipIf(np is None, "numpy is not importable")
    def test_vtk10_numpy_producer(self):
        import sys
        x = np.arange(12, dtype=np.int32).reshape(4, 3)
        references = sys.getrefcount(x)
        array = dvtk.adopt(x)
        self.assertIsA(array, "vtkIntArray")
        self.assertEqual(pointer_of(array), x.ctypes.data)
        x[3, 2] = 99
        self.assertEqual(array.GetComponent(3, 2), 99.0)
        self.assertGreater(sys.getrefcount(x), references)  # the producer is held
        del array
        gc.collect()
        self.assertEqual(sys.getrefcount(x), references)  # released with the array

    @unittest.skipIf(torch is None, "torch is not importable")
    def test_vtk10_torch_producer_and_id_type(self):
        ids = torch.arange(8, dtype=torch.int64)
        array = dvtk.adopt(ids, id_type=True)
        self.assertIsA(array, "vtkIdTypeArray")
        self.assertEqual(pointer_of(array), ids.data_ptr())
        self.assertEqual(array.GetValue(7), 7)
        plain = dvtk.adopt(torch.ones(2, 3, dtype=torch.float64))
        self.assertIsA(plain, "vtkDoubleArray")
        self.assertEqual(plain.GetNumberOfComponents(), 3)

    def test_vtk10_refusals_drop_the_import_at_once(self):
        cases = [
            ((4, 1, 1), "float32", None, ValueError, "ndim is 3; accepted: 1"),
            ((4,), "float16", None, BufferError, "dtype 'float16' has no VTK array"),
            ((2, 2), "float32", (1, 2), ValueError, "not C-contiguous"),
            ((4,), "float32", "readonly", BufferError, "the tensor is read-only"),
        ]
        for shape, dtype, extra, error, text in cases:
            with self.subTest(text=text):
                counter = ReleaseCounter()
                values = (ctypes.c_float * 4)()
                descriptor = dlbridge.MemoryDescriptor(address_of(values), 16, "host")
                descriptor.SetReleaseAddress(counter.address, 0)
                strides = extra if isinstance(extra, tuple) else None
                producer = dlbridge.Tensor(descriptor, dtype, shape, strides)
                if extra == "readonly":
                    producer.flags = dlbridge.FLAG_READ_ONLY
                with self.assertRaisesRegex(error, text):
                    dvtk.adopt(producer)
                del producer
                gc.collect()
                self.assertEqual(counter.calls, 1)

    def test_vtk11_a_kept_refusal_does_not_keep_the_producer(self):
        # The caller keeps the exception (and so its traceback and the frames in it), as a
        # logging handler or a retry loop would: the producer must be released all the same.
        for shape, dtype, error in (((4, 1, 1), "float32", ValueError),
                                    ((4,), "float16", BufferError)):
            with self.subTest(dtype=dtype, shape=shape):
                counter = ReleaseCounter()
                values = (ctypes.c_float * 4)()

                class Producer:
                    # Each export is the only hold of a fresh tensor: the counter counts the
                    # import's drop, not this object's (which the traceback may keep).
                    def __dlpack__(self, **kwargs):
                        descriptor = dlbridge.MemoryDescriptor(address_of(values), 16, "host")
                        descriptor.SetReleaseAddress(counter.address, 0)
                        return dlbridge.Tensor(descriptor, dtype, shape).__dlpack__(**kwargs)

                    def __dlpack_device__(self):
                        return (dlbridge.kDLCPU, 0)

                producer = Producer()
                kept = None
                try:
                    dvtk.adopt(producer)
                except error as raised:
                    kept = raised
                self.assertIsNotNone(kept)
                self.assertIsNotNone(kept.__traceback__)
                del producer
                gc.collect()
                self.assertEqual(counter.calls, 1)
                del kept

    def test_vtk12_pinned_and_managed_memory_is_adopted_as_host_memory(self):
        # kDLCUDAHost / kDLROCMHost (space host) and kDLCUDAManaged (space cuda) over host
        # memory: no GPU runtime is asked, the array reads the producer's memory in place.
        for device, space in (((dlbridge.kDLCUDAHost, 0), "host"),
                              ((dlbridge.kDLROCMHost, 0), "host"),
                              ((dlbridge.kDLCUDAManaged, 0), "cuda")):
            with self.subTest(device=device):
                counter = ReleaseCounter()
                values = (ctypes.c_float * 4)(1, 2, 3, 4)
                descriptor = dlbridge.MemoryDescriptor(address_of(values), 16, space)
                descriptor.SetReleaseAddress(counter.address, 0)
                producer = dlbridge.Tensor(descriptor, "float32", (4,), device=device)
                array = dvtk.adopt(producer)
                del producer
                gc.collect()
                self.assertEqual(pointer_of(array), address_of(values))
                self.assertEqual(array.GetValue(3), 4.0)
                self.assertEqual(counter.calls, 0)
                del array
                gc.collect()
                self.assertEqual(counter.calls, 1)

    def viskores_or_skip(self):
        """VTK's Viskores filters and this build's adopt(viskores=True), or skip the test."""
        try:
            from vtkmodules import vtkAcceleratorsVTKmFilters as filters
        except ImportError:
            self.skipTest("this VTK has no Viskores accelerators (VTK 9.6 and later)")
        from dlbridge import _vtk_adopt
        if not hasattr(_vtk_adopt, "adopt_viskores"):
            self.skipTest("dlbridge was built without the Viskores bridge")
        return filters

    def contour_radii(self, make, to_list, holds):
        """A sphere's squared-distance field made by `make(values)` (NumPy or PyTorch, n**3 in
        VTK's x-fastest order) goes into vtkImageData as an adopted vtkmDataArray and through
        vtkmContour at r = 5: the radii of the surface's points, and `holds(source)` before the
        adoption, during it and after VTK let go."""
        filters = self.viskores_or_skip()
        from vtkmodules.vtkCommonDataModel import vtkImageData
        n = 16
        axis = [i - 7.5 for i in range(n)]
        field = [x * x + y * y + z * z for z in axis for y in axis for x in axis]
        source = make([v + 1000.0 for v in field])  # wrong values first
        counts = [holds(source)]
        array = dvtk.adopt(source, viskores=True)
        counts.append(holds(source))
        array.SetName("d2")
        self.assertIn("vtkmDataArray", array.GetClassName())  # VTK names templates by typeid
        to_list(source, field)  # the right values, written by the producer after adoption
        image = vtkImageData()
        image.SetDimensions(n, n, n)
        image.SetOrigin(-7.5, -7.5, -7.5)
        image.GetPointData().SetScalars(array)
        contour = filters.vtkmContour()
        contour.SetInputData(image)
        contour.SetInputArrayToProcess(0, 0, 0, 0, "d2")  # point data
        contour.SetValue(0, 25.0)
        contour.Update()
        points = contour.GetOutput().GetPoints()
        self.assertIsNotNone(points)
        radii = [sum(c * c for c in points.GetPoint(i)) ** 0.5
                 for i in range(points.GetNumberOfPoints())]
        del array, image, contour, points
        gc.collect()
        counts.append(holds(source))
        return radii, counts

    def check_sphere_and_release(self, radii, counts):
        self.assertGreater(len(radii), 100)
        self.assertLess(max(abs(r - 5.0) for r in radii), 0.1)  # the surface is the sphere
        before, during, after = counts
        self.assertGreater(during, before)  # the adoption holds the producer
        self.assertEqual(after, before)  # released once: back to where it was

    @unittest.skipIf(np is None, "numpy is not importable")
    def test_vtk18_a_vtkmdataarray_exports_where_viskores_holds_it(self):
        self.viskores_or_skip()
        x = np.arange(12, dtype=np.float64).reshape(4, 3)
        array = dvtk.adopt(x, viskores=True)
        out = dvtk.export(array)
        view = np.from_dlpack(out)
        self.assertEqual(view.shape, (4, 3))
        self.assertEqual(view.__array_interface__["data"][0], x.__array_interface__["data"][0])
        (data,) = dvtk.describe(array)
        self.assertEqual((data.GetRole(), data.GetPointer()),
                         ("data", x.__array_interface__["data"][0]))

    @unittest.skipIf(np is None, "numpy is not importable")
    def test_vtk13_numpy_through_vtkmcontour_zero_copy_released_once(self):
        import sys

        def write(x, values):
            x[:] = values
        self.check_sphere_and_release(*self.contour_radii(
            lambda v: np.array(v, dtype=np.float32), write, sys.getrefcount))

    @unittest.skipIf(torch is None, "torch is not importable")
    def test_vtk13_torch_through_vtkmcontour_zero_copy_released_once(self):
        if not hasattr(torch.Tensor, "_use_count"):
            self.skipTest("this PyTorch does not report its tensors' use count")

        def write(x, values):
            x.copy_(torch.tensor(values, dtype=torch.float32))
        self.check_sphere_and_release(*self.contour_radii(
            lambda v: torch.tensor(v, dtype=torch.float32), write, lambda x: x._use_count()))

    def test_vtk15_struct_of_arrays_both_ways_from_python(self):
        soa = vtk.vtkSOADataArrayTemplate["float64"]()
        soa.SetNumberOfComponents(3)
        soa.SetNumberOfTuples(4)
        for t in range(4):
            for c in range(3):
                soa.SetComponent(t, c, 10.0 * c + t)
        parts = dvtk.export_components(soa)
        self.assertEqual([p.descriptor.GetRole() for p in parts],
                         ["component_0", "component_1", "component_2"])
        self.assertEqual([p.shape for p in parts], [(4,)] * 3)
        if np is not None:  # strided where VTK stores the values interleaved (VTK 9.3+)
            self.assertEqual(np.from_dlpack(parts[2]).tolist(), [20.0, 21.0, 22.0, 23.0])
        with self.assertRaisesRegex(ValueError, "not a struct-of-arrays"):
            dvtk.export_components(vtk.vtkFloatArray())
        # In: one counted producer per component; each released once, when VTK frees it.
        counters = [ReleaseCounter() for _ in range(5)]
        keep = []
        producers = []
        for c, counter in enumerate(counters):
            values = (ctypes.c_float * 3)(c, c + 0.5, c + 0.25)
            keep.append(values)
            descriptor = dlbridge.MemoryDescriptor(address_of(values), 12, "host")
            descriptor.SetReleaseAddress(counter.address, 0)
            producers.append(dlbridge.Tensor(descriptor, "float32", (3,)))
        array = dvtk.adopt_components(producers)
        del producers
        gc.collect()
        self.assertEqual(array.GetNumberOfComponents(), 5)
        self.assertEqual(array.GetComponent(1, 4), 4.5)
        self.assertEqual([c.calls for c in counters], [0] * 5)
        del array
        gc.collect()
        self.assertEqual([c.calls for c in counters], [1] * 5)
        # As adopt: pinned memory is host memory (VTK-12), and a read-only component is refused
        # with both conventions' class, every import dropped.
        counters = [ReleaseCounter() for _ in range(2)]
        made = []
        for counter, device in zip(counters, ((dlbridge.kDLCUDAHost, 0), (dlbridge.kDLCPU, 0))):
            values = (ctypes.c_float * 3)(1, 2, 3)
            keep.append(values)
            descriptor = dlbridge.MemoryDescriptor(address_of(values), 12, "host")
            descriptor.SetReleaseAddress(counter.address, 0)
            made.append(dlbridge.Tensor(descriptor, "float32", (3,), device=device))
        made[1].flags = dlbridge.FLAG_READ_ONLY
        kept = None
        try:
            dvtk.adopt_components(made)
        except dvtk.RefusedBuffer as raised:
            kept = raised
        self.assertIsInstance(kept, ValueError)
        del made, kept  # the traceback holds the call's arguments (the producers) until then
        gc.collect()
        self.assertEqual([c.calls for c in counters], [1, 1])

    def test_vtk16_describe_gives_real_storage_holding_the_array(self):
        import sys
        aos = vtk.vtkFloatArray()
        aos.SetNumberOfComponents(2)
        aos.SetNumberOfTuples(3)
        before = sys.getrefcount(aos)
        (data,) = dvtk.describe(aos)
        self.assertEqual((data.GetRole(), data.GetSizeInBytes(), data.GetMemorySpace()),
                         ("data", 24, "host"))
        self.assertEqual(data.GetPointer(), pointer_of(aos))
        self.assertTrue(data.HasOwnership())
        self.assertGreater(sys.getrefcount(aos), before)  # the descriptor holds the array
        del data
        gc.collect()
        self.assertEqual(sys.getrefcount(aos), before)
        # Component arrays VTK keeps as they are (SOA storage in every VTK).
        x = memoryview(bytearray(12)).cast("i")
        y = memoryview(bytearray(12)).cast("i")
        soa = vtk.vtkSOADataArrayTemplate["int32"]()
        soa.SetNumberOfComponents(2)
        soa.SetArray(0, x, 3, True, True)
        soa.SetArray(1, y, 3, True, True)
        described = dvtk.describe(soa)
        self.assertEqual([d.GetRole() for d in described], ["component_0", "component_1"])
        self.assertEqual(described[1].GetPointer(),
                         ctypes.addressof(ctypes.c_char.from_buffer(y)))
        self.assertEqual(dvtk.describe(vtk.vtkBitArray()), [])

    def test_vtk17_the_names_vtks_own_dlpack_support_uses(self):
        source = filled(vtk.vtkFloatArray, 3, 2)
        legacy = dvtk.vtk_to_dlpack(source)
        versioned = dvtk.vtk_to_dlpack(source, versioned=True)
        self.assertIn("dltensor", repr(legacy))
        self.assertIn("dltensor_versioned", repr(versioned))
        with self.assertRaisesRegex(ValueError, "device_id is 1"):
            dvtk.vtk_to_dlpack(source, device_id=1)
        back = dvtk.dlpack_to_vtk(dlbridge.from_dlpack(legacy), name="velocity")
        self.assertEqual(back.GetName(), "velocity")
        self.assertEqual(pointer_of(back), pointer_of(source))
        producer = dvtk.DLPackArray(source)
        self.assertEqual(producer.__dlpack_device__(), (dlbridge.kDLCPU, 0))
        if np is not None:
            view = np.from_dlpack(producer)
            self.assertEqual(view.shape, (3, 2))
            self.assertEqual(view.__array_interface__["data"][0], pointer_of(source))
        types = dvtk.supported_device_types()
        self.assertTrue({dlbridge.kDLCPU, dlbridge.kDLCUDAHost, dlbridge.kDLCUDAManaged} <= types)
        self.assertNotIn(dlbridge.kDLOneAPI, types)
        # Refusals satisfy both conventions: the array API's BufferError and VTK's classes.
        values = (ctypes.c_float * 4)()
        descriptor = dlbridge.MemoryDescriptor(address_of(values), 16, "host")
        descriptor.SetOwner(values)
        read_only = dlbridge.Tensor(descriptor, "float32", (4,))
        read_only.flags = dlbridge.FLAG_READ_ONLY
        with self.assertRaises(ValueError) as caught:
            dvtk.dlpack_to_vtk(read_only)
        self.assertIsInstance(caught.exception, BufferError)
        descriptor = dlbridge.MemoryDescriptor(address_of(values), 16, "host")
        descriptor.SetOwner(values)
        with self.assertRaises(TypeError) as caught:
            dvtk.dlpack_to_vtk(dlbridge.Tensor(descriptor, "float16", (8,)))
        self.assertIsInstance(caught.exception, BufferError)

    def test_vtk10_round_trip_shares_memory_and_lifetimes(self):
        counter = DeleteCounter()
        source = filled(vtk.vtkFloatArray, 3, 2)
        counter.observe(source)
        address = pointer_of(source)
        adopted = dvtk.adopt(dvtk.export(source))
        self.assertEqual(pointer_of(adopted), address)
        del source
        gc.collect()
        self.assertEqual(counter.deletes, 0)
        self.assertEqual(adopted.GetComponent(2, 1), 5.0)
        del adopted
        gc.collect()
        self.assertEqual(counter.deletes, 1)


if __name__ == "__main__":
    unittest.main()
