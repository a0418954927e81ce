"""dlbridge.vtk: VTK arrays to and from DLPack from Python, zero copy (spec/bridges.md, "VTK").

``export(array)`` gives a ``dlbridge.Tensor`` over a vtkDataArray's values that holds the array,
for any DLPack consumer (``numpy.from_dlpack``, ``torch.from_dlpack``, ...).
``adopt(obj)`` gives a new vtkDataArray over the memory of any DLPack producer, and drops the
producer's hold exactly when VTK deletes the array.

The same rules as the C++ bridge (``dlbridge/vtk.h``): AOS arrays of VTK's numeric types, the
shape always ``(tuples, components)``; adopted tensors on the host, C-contiguous, 1-D or 2-D
(components last), writable. Needs VTK's Python wrapping (Debian ``python3-vtk9``, or the
``vtk`` wheel); only ``vtkmodules.vtkCommonCore`` is imported.
"""
import ctypes

from . import _dlbridge

try:
    from vtkmodules import vtkCommonCore as _vtk
except ImportError as error:  # pragma: no cover - depends on the machine
    raise ImportError("dlbridge.vtk needs VTK's Python wrapping (vtkmodules.vtkCommonCore): "
                      "install Debian's python3-vtk9 or `pip install vtk`") from error

__all__ = ["export", "adopt", "export_components", "adopt_components", "describe",
           "vtk_to_dlpack", "dlpack_to_vtk", "DLPackArray", "supported_device_types",
           "RefusedBuffer", "RefusedDtype"]


class RefusedBuffer(BufferError, ValueError):
    """A buffer dlbridge.vtk cannot take as it is (device, read-only, layout): a BufferError, as
    the array API and DLPack's Python spec name it, and a ValueError, as VTK's own
    dlpack_support raises it, so code written for either catches it (see VTK-17)."""


class RefusedDtype(BufferError, TypeError):
    """A dtype VTK has no array of: a BufferError (the array API) and a TypeError (VTK's
    dlpack_support), see VTK-17."""

_FLOATS = {_vtk.VTK_FLOAT: "float32", _vtk.VTK_DOUBLE: "float64"}
_INTEGERS = (_vtk.VTK_CHAR, _vtk.VTK_SIGNED_CHAR, _vtk.VTK_UNSIGNED_CHAR, _vtk.VTK_SHORT,
             _vtk.VTK_UNSIGNED_SHORT, _vtk.VTK_INT, _vtk.VTK_UNSIGNED_INT, _vtk.VTK_LONG,
             _vtk.VTK_UNSIGNED_LONG, _vtk.VTK_LONG_LONG, _vtk.VTK_UNSIGNED_LONG_LONG,
             _vtk.VTK_ID_TYPE)
# Adopt's VTK type per dtype: int8 is VTK_SIGNED_CHAR (VTK_CHAR means text); 64-bit integers
# are vtkTypeInt64Array / vtkTypeUInt64Array, whichever C type this build gives them.
_ADOPT_TYPES = {
    "int8": _vtk.VTK_SIGNED_CHAR, "int16": _vtk.VTK_SHORT, "int32": _vtk.VTK_INT,
    "int64": _vtk.vtkTypeInt64Array().GetDataType(),
    "uint8": _vtk.VTK_UNSIGNED_CHAR, "uint16": _vtk.VTK_UNSIGNED_SHORT,
    "uint32": _vtk.VTK_UNSIGNED_INT, "uint64": _vtk.vtkTypeUInt64Array().GetDataType(),
    "float32": _vtk.VTK_FLOAT, "float64": _vtk.VTK_DOUBLE,
}

# Device types whose memory the CPU reads where it lies (the device table's host_accessible,
# kDLCPU aside): CUDA and ROCm pinned host memory, CUDA managed memory.
_HOST_ACCESSIBLE = (_dlbridge.kDLCUDAHost, _dlbridge.kDLROCMHost, _dlbridge.kDLCUDAManaged)


# The Itanium ABI's codes for the scalar types VTK instantiates its array templates with.
_MANGLED_SCALARS = {"f": "float", "d": "double", "c": "char", "a": "signed char",
                    "h": "unsigned char", "s": "short", "t": "unsigned short", "i": "int",
                    "j": "unsigned int", "l": "long", "m": "unsigned long", "x": "long long",
                    "y": "unsigned long long"}


def _class_name(array):
    # VTK's template classes (see VTK-14) report a mangled typeid name from GetClassName()
    # ("23vtkSOADataArrayTemplateIfE"); messages give the name a VTK user writes.
    name = array.GetClassName()
    digits = len(name) - len(name.lstrip("0123456789"))
    if digits:
        length = int(name[:digits])
        base, rest = name[digits:digits + length], name[digits + length:]
        if len(rest) == 3 and rest[0] == "I" and rest[2] == "E" and rest[1] in _MANGLED_SCALARS:
            return "%s<%s>" % (base, _MANGLED_SCALARS[rest[1]])
        return type(array).__name__
    return name


def _dtype_of(array):
    # The dtypes of VTK's numeric types (see VTK-1), per this platform's widths; the
    # signedness of VTK_CHAR is the platform's char (VTK's own minimum says which).
    vtk_type = array.GetDataType()
    if vtk_type in _FLOATS:
        return _FLOATS[vtk_type]
    if vtk_type in _INTEGERS:
        signed = array.GetDataTypeMin() < 0
        return "%sint%d" % ("" if signed else "u", 8 * array.GetDataTypeSize())
    if vtk_type == _vtk.VTK_BIT:
        raise BufferError("dlbridge.vtk.export: a vtkBitArray packs 8 values per byte and DLPack "
                          "has no bit-packed type; copy the values into a vtkUnsignedCharArray")
    raise BufferError("dlbridge.vtk.export: %s of %s is not numeric; DLPack carries numbers only"
                      % (_class_name(array), array.GetDataTypeAsString()))


def export(array):
    """A ``dlbridge.Tensor`` over ``array``'s values, zero copy, holding ``array``.

    The data pointer is ``array.GetVoidPointer(0)``, the shape ``(GetNumberOfTuples(),
    GetNumberOfComponents())`` even for one component, host memory. The tensor (and every DLPack
    tensor exported from it) keeps ``array`` alive; the array is released when the last of them
    goes. Raises TypeError for an object that is not a VTK array, BufferError for a non-numeric
    array (vtkStringArray, vtkBitArray) and for an array whose values are not one interleaved
    block (SOA or implicit arrays: DeepCopy them into an AOS array first).
    """
    if not isinstance(array, _vtk.vtkAbstractArray):
        raise TypeError("dlbridge.vtk.export: expected a vtkDataArray, got %s"
                        % type(array).__name__)
    if not isinstance(array, _vtk.vtkDataArray):
        _dtype_of(array)  # raises with the array's class and type
    if "vtkmDataArray" in array.GetClassName():
        return _export_viskores(array, "export")
    dtype = _dtype_of(array)
    # One interleaved block only (see VTK-2): GetVoidPointer would copy anything else.
    if not array.HasStandardMemoryLayout():
        raise BufferError("dlbridge.vtk.export: %s's values are not one interleaved (AOS) block; "
                          "DeepCopy it into an AOS array (e.g. vtkFloatArray) first"
                          % _class_name(array))
    shape = (array.GetNumberOfTuples(), array.GetNumberOfComponents())
    nbytes = shape[0] * shape[1] * array.GetDataTypeSize()
    address = 0
    if nbytes:
        view = memoryview(array)  # VTK's buffer is the array's own memory: no copy
        address = ctypes.addressof(ctypes.c_char.from_buffer(view))
    descriptor = _dlbridge.MemoryDescriptor(address, nbytes if address else 0, "host")
    # VTK-9: the descriptor holds the Python wrapper, and through it the VTK array.
    descriptor.SetOwner(array)
    return _dlbridge.Tensor(descriptor, dtype, shape)


def _adopter():
    # See VTK-10: the hold goes through the C++ bridge's Adopt, which VTK's free function drops
    # when the buffer goes (shared by ShallowCopy), not when one Python array does.
    try:
        from . import _vtk_adopt
    except ImportError as error:
        raise ImportError("dlbridge.vtk.adopt needs dlbridge._vtk_adopt, which is built with "
                          "dlbridge where CMake finds the VTK bridge and VTK's Python wrapping "
                          "(Debian libvtk9-dev and python3-vtk9); export() works without it"
                          ) from error
    return _vtk_adopt


def _viskores_adopter():
    # The C++ bridge's AdoptViskores (see VTK-13), compiled into dlbridge._vtk_adopt where the
    # Viskores bridge and VTK's AcceleratorsVTKmCore were found.
    function = getattr(_adopter(), "adopt_viskores", None)
    if function is None:
        raise ImportError("dlbridge.vtk.adopt(viskores=True) needs a dlbridge built with its "
                          "Viskores bridge against a VTK with AcceleratorsVTKmCore (VTK 9.6 "
                          "or later, e.g. Debian's libvtk9-dev 9.6); adopt(obj) gives a plain "
                          "vtkDataArray")
    return function


def adopt(obj, *, id_type=False, viskores=False):
    """A new vtkDataArray over the memory of ``obj``, any DLPack producer, zero copy.

    ``obj`` is imported with ``dlbridge.from_dlpack`` (the whole ``__dlpack__`` protocol). A 1-D
    tensor of n elements gives n tuples of one component, a 2-D (n, c) one n tuples of c
    components. The producer's hold is dropped exactly when VTK frees the array's memory (the
    last reference, from Python or C++, to the array and to every array that shares its buffer
    through ShallowCopy), never before: the memory is the producer's for as long as VTK reads it. ``id_type=True`` gives a vtkIdTypeArray for a signed integer dtype of
    vtkIdType's width. Raises BufferError for memory that is not on the CPU, read-only tensors
    and dtypes VTK has no array of; ValueError for ndim other than 1 or 2 and non-contiguous
    layouts; ImportError where dlbridge was built without ``dlbridge._vtk_adopt`` (see below).
    On any error the producer's tensor is dropped at once (nothing was adopted).

    ``viskores=True`` gives a ``vtkmDataArray`` instead (VTK 9.6 and later with its Viskores
    accelerators): the memory becomes a Viskores buffer that VTK's accelerated filters
    (``vtkmodules.vtkAcceleratorsVTKmFilters``: vtkmContour, vtkmThreshold, ...) read where it
    lies, and the producer is released when Viskores drops the buffer. Raises ImportError where
    this dlbridge was built without it (no Viskores bridge, or a VTK without
    AcceleratorsVTKmCore).
    """
    tensor = _import(obj)
    # VTK-11: a refusal drops the import before it is raised. The exception's traceback holds
    # this frame, and with it every local: a tensor still named here would keep the producer
    # held for as long as the caller keeps the exception.
    refusal = _refusal(tensor, viskores)
    if refusal is not None:
        del tensor
        raise refusal
    try:
        if viskores:
            return _viskores_adopter()(tensor)
        return _adopter().adopt(tensor, bool(id_type))
    except BaseException:
        del tensor
        raise


def _import(obj):
    # VTK-12: pinned and managed memory is host memory at the same address: imported as
    # (kDLCPU, 0) by dlbridge's own rules, never copied (copy=False). A producer is asked for it
    # directly (so it orders its pending work for a host reader); a capsule is relabelled.
    host = (_dlbridge.kDLCPU, 0)
    device = getattr(type(obj), "__dlpack_device__", None)
    if device is not None and tuple(device(obj))[0] in _HOST_ACCESSIBLE:
        return _dlbridge.from_dlpack(obj, device=host, copy=False)
    tensor = _dlbridge.from_dlpack(obj)
    if tensor.device[0] in _HOST_ACCESSIBLE:
        tensor = _dlbridge.from_dlpack(tensor, device=host, copy=False)
    return tensor


def _refusal(tensor, viskores):
    # VTK-10: what adopt accepts, as the C++ Adopt (see VTK-5); the error to raise, or None.
    # Viskores takes the devices its adapters read (the C++ bridge checks them, see VSK-2).
    if tensor.device[0] != _dlbridge.kDLCPU and not viskores:
        return RefusedBuffer("dlbridge.vtk.adopt: the tensor is on device %r; a vtkDataArray "
                           "holds host memory only: copy it to the host first" % (tensor.device,))
    if tensor.ndim not in (1, 2):
        return ValueError("dlbridge.vtk.adopt: ndim is %d; accepted: 1 (one component) or 2 "
                          "(tuples, components)" % tensor.ndim)
    if not tensor.is_contiguous():
        return ValueError("dlbridge.vtk.adopt: the layout is not C-contiguous; a vtkDataArray "
                          "stores its tuples one after another: copy the tensor first")
    if tensor.readonly:
        return RefusedBuffer("dlbridge.vtk.adopt: the tensor is read-only and a vtkDataArray is "
                           "always writable; copy it first")
    if tensor.dtype not in _ADOPT_TYPES:
        return RefusedDtype("dlbridge.vtk.adopt: dtype %r has no VTK array; accepted: %s"
                           % (tensor.dtype, ", ".join(sorted(_ADOPT_TYPES))))
    return None


def _tensors_with_roles(pairs):
    # The extension's (capsule, role) pairs as dlbridge.Tensor objects (DLPack carries no role).
    tensors = []
    for capsule, role in pairs:
        tensor = _dlbridge.from_dlpack(capsule)
        tensor.descriptor.SetRole(role)
        tensors.append(tensor)
    return tensors


def _export_viskores(array, who):
    # The extension's ExportViskores (see VTK-18): a vtkmDataArray read where Viskores holds it,
    # never copied to the host; `export` takes one interleaved buffer, `export_components` all.
    function = getattr(_adopter(), "export_viskores", None)
    if function is None:
        raise ImportError("dlbridge.vtk.%s of a vtkmDataArray needs a dlbridge built with its "
                          "Viskores bridge against this VTK" % who)
    tensors = _tensors_with_roles(function(array))
    if who == "export":
        if len(tensors) != 1:
            what = ("computed, not stored (an implicit Viskores array)" if not tensors
                    else "stored one buffer per component")
            del tensors  # see VTK-11: a kept exception must not keep the exports alive
            raise RefusedBuffer("dlbridge.vtk.export: this vtkmDataArray's values are %s; use "
                                "export_components for one tensor per component" % what)
        return tensors[0]
    return tensors


def export_components(array):
    """One ``dlbridge.Tensor`` per component of a struct-of-arrays array
    (``vtkSOADataArrayTemplate``), zero copy: tensor c is component c's values, 1-D, role
    ``"component_c"``; each holds the array until its last consumer lets go (see VTK-15).
    Raises ValueError for an AOS array (use ``export``) and TypeError for a non-array; needs
    ``dlbridge._vtk_adopt``, as ``adopt`` does."""
    if "vtkmDataArray" in array.GetClassName():
        return _export_viskores(array, "export_components")
    return _tensors_with_roles(_adopter().export_components(array))


def adopt_components(producers, *, id_type=False):
    """A new struct-of-arrays vtkDataArray (``vtkSOADataArrayTemplate``) whose component c is
    ``producers[c]``'s memory, zero copy: one 1-D DLPack producer per component, all of one dtype
    and length, any number of them. Each producer is released exactly when VTK frees its
    component; pinned and managed memory as host memory (see VTK-12). On a refusal
    (``RefusedBuffer``, ``RefusedDtype``, ValueError) every import is dropped before the
    exception leaves and nothing is adopted (see VTK-15)."""
    tensors = [_import(producer) for producer in producers]  # pinned, managed: see VTK-12
    refusals = [_refusal(tensor, False) for tensor in tensors]
    refusal = next((r for r in refusals if r is not None), None)
    if refusal is not None:
        del tensors  # see VTK-11: the imports drop before the exception leaves
        raise refusal
    try:
        return _adopter().adopt_components(tensors, bool(id_type))
    except BaseException:
        del tensors
        raise


def describe(array):
    """The buffers ``array`` really owns, as ``dlbridge.MemoryDescriptor`` objects that each
    hold the array: one ``"data"`` buffer for an AOS array, ``"component_0"``, ... for a
    struct-of-arrays array, and an empty list for anything else (implicit, mapped, bit and
    string arrays): a description is a view of real storage, never a flattened temporary
    (see VTK-16)."""
    descriptors = []
    for pointer, size, role in _adopter().buffers(array):
        descriptor = _dlbridge.MemoryDescriptor(pointer, size, "host")
        descriptor.SetRole(role)
        descriptor.SetOwner(array)
        descriptors.append(descriptor)
    return descriptors


# VTK-17: the names VTK's own dlpack_support module (unreleased upstream) gives the same jobs,
# built on the functions above so that the rules stay theirs.

def vtk_to_dlpack(array, device_id=0, versioned=False):
    """A DLPack capsule over ``array``'s values (``export``): ``"dltensor"``, or with
    ``versioned`` a ``"dltensor_versioned"`` one. A VTK array here is host memory, so
    ``device_id`` must be 0 (ValueError otherwise: the id is never reported unchecked)."""
    if device_id != 0:
        raise ValueError("dlbridge.vtk.vtk_to_dlpack: device_id is %r, but a vtkDataArray's "
                         "values are host memory, whose device id is 0" % (device_id,))
    tensor = export(array)
    if versioned:
        return tensor.__dlpack__(max_version=tuple(_dlbridge.DLPACK_VERSION))
    return tensor.__dlpack__()


def dlpack_to_vtk(obj, name=None):
    """A new vtkDataArray over the memory of ``obj`` (a DLPack producer or capsule), as
    ``adopt`` makes it, named ``name`` when given. Refusals raise ``RefusedBuffer`` or
    ``RefusedDtype`` (both conventions' classes) or ValueError."""
    array = adopt(obj)
    if name is not None:
        array.SetName(name)
    return array


class DLPackArray:
    """A DLPack producer over a vtkDataArray (``export``): ``__dlpack__`` and
    ``__dlpack_device__`` with the whole protocol (``stream``, ``max_version``, ``dl_device``,
    ``copy``), as a ``dlbridge.Tensor`` answers them. ``device_id`` as ``vtk_to_dlpack``."""

    def __init__(self, array, device_id=0):
        if device_id != 0:
            raise ValueError("dlbridge.vtk.DLPackArray: device_id is %r, but a vtkDataArray's "
                             "values are host memory, whose device id is 0" % (device_id,))
        self._tensor = export(array)
        self.array = array

    def __dlpack__(self, **kwargs):
        return self._tensor.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._tensor.__dlpack_device__()


def supported_device_types():
    """The DLPack device types ``adopt`` takes in this build: kDLCPU and the types whose memory
    the CPU reads where it lies (pinned, managed; see VTK-12), plus, where ``adopt(x,
    viskores=True)`` is built, the types its Viskores adapters read on this machine."""
    types = {_dlbridge.kDLCPU} | set(_HOST_ACCESSIBLE)
    try:
        viskores = getattr(_adopter(), "viskores_device_types", None)
    except ImportError:
        viskores = None
    if viskores is not None:
        types |= set(viskores())
    return types
