"""A simulation's field through VTK's Viskores-accelerated contour filter, zero copy both ways.

A PyTorch tensor (or a NumPy array, with --numpy) holds a squared-distance field on a 24^3
grid. dlbridge.vtk.adopt(..., viskores=True) hands its memory to Viskores as a vtkmDataArray,
vtkmContour extracts the sphere r = 8 from it, and the surface's points come back out through
DLPack as a NumPy view of VTK's own buffer. Each step prints what happened; the producer is
released once, when VTK and Viskores let go. Needs VTK 9.6 with its Viskores accelerators
(Debian's libvtk9-dev and python3-vtk9) and a dlbridge built against it:

    PYTHONPATH=build/dev/python python3 examples/vtk_viskores_contour.py [--numpy]
"""
import gc
import sys

import numpy as np

import dlbridge
import dlbridge.vtk
from vtkmodules.vtkAcceleratorsVTKmFilters import vtkmContour
from vtkmodules.vtkCommonDataModel import vtkImageData

N = 24
RADIUS = 8.0


def field_values():
    axis = np.arange(N, dtype=np.float32) - (N - 1) / 2.0
    z, y, x = np.meshgrid(axis, axis, axis, indexing="ij")  # VTK's order: x fastest
    return (x * x + y * y + z * z).ravel()


def make_producer(use_numpy):
    """The field, its address, and how many holders it has now (references to the NumPy
    array; uses of the PyTorch tensor, where PyTorch reports them)."""
    values = field_values()
    if use_numpy:
        return values, values.__array_interface__["data"][0], lambda: sys.getrefcount(values)
    import torch
    tensor = torch.from_numpy(values.copy())
    count = tensor._use_count if hasattr(tensor, "_use_count") else None
    return tensor, tensor.data_ptr(), count


def main():
    use_numpy = "--numpy" in sys.argv[1:]
    producer, address, holders = make_producer(use_numpy)
    kind = "NumPy array" if use_numpy else "PyTorch tensor"
    before = holders() if holders else None
    print("1. the simulation's field: a %s of %d float32 values at 0x%x"
          % (kind, N ** 3, address))

    field = dlbridge.vtk.adopt(producer, viskores=True)
    field.SetName("d2")
    print("2. adopted as a vtkmDataArray (%d tuples), no copy: Viskores reads 0x%x"
          % (field.GetNumberOfTuples(), address))
    if holders:
        print("   the %s now has %d more holder(s): the adoption" % (kind, holders() - before))

    image = vtkImageData()
    image.SetDimensions(N, N, N)
    image.SetOrigin(-(N - 1) / 2.0, -(N - 1) / 2.0, -(N - 1) / 2.0)
    image.GetPointData().SetScalars(field)
    contour = vtkmContour()
    contour.SetInputData(image)
    contour.SetInputArrayToProcess(0, 0, 0, 0, "d2")
    contour.SetValue(0, RADIUS * RADIUS)
    contour.Update()
    surface = contour.GetOutput()
    print("3. vtkmContour at r = %g: %d points, %d cells"
          % (RADIUS, surface.GetNumberOfPoints(), surface.GetNumberOfCells()))

    points = np.from_dlpack(dlbridge.vtk.export(surface.GetPoints().GetData()))
    radii = np.sqrt((points.astype(np.float64) ** 2).sum(axis=1))
    print("4. the surface's points out through DLPack: %s %s at 0x%x (VTK's buffer), "
          "radius %.3f to %.3f" % (points.dtype, points.shape,
                                   points.__array_interface__["data"][0], radii.min(),
                                   radii.max()))
    if abs(radii - RADIUS).max() > 0.1:
        raise SystemExit("the contour is not the sphere r = %g" % RADIUS)

    del field, image, contour, surface, points
    gc.collect()
    if holders:
        released = holders() == before
        print("5. VTK and Viskores let go: the %s's holders are back to where they were (%s)"
              % (kind, "released exactly once" if released else "STILL HELD"))
        if not released:
            raise SystemExit(1)


if __name__ == "__main__":
    main()
