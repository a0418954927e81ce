"""Reading DLPack capsules without consuming them: the ctypes mirrors of the structs, the
capsule API, and the fields of an unconsumed capsule (after the C++ checker found it readable)."""
import ctypes

import dlbridge

from ..dlpack_ctypes import (DLManagedTensor as _DLManagedTensor,
                             DLManagedTensorVersioned as _DLManagedTensorVersioned)

_api = ctypes.pythonapi
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
_api.PyCapsule_GetName.restype = ctypes.c_char_p
_api.PyCapsule_GetName.argtypes = [ctypes.py_object]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_NAMES = {n: ctypes.create_string_buffer(n) for n in (b"dltensor", b"dltensor_versioned")}

FLAG_READ_ONLY = 1
FLAG_IS_COPIED = 2


def _capsule_name(capsule):
    name = _api.PyCapsule_GetName(capsule)
    return None if name is None else name.decode()


def _safe_read(capsule):
    """_read_capsule of a capsule the checker finds readable; None otherwise."""
    if type(capsule).__name__ != "PyCapsule" or _capsule_name(capsule) not in ("dltensor", "dltensor_versioned"):
        return None
    if any(f[0] in ("CONF-VERSION-MAJOR", "CONF-NDIM", "CONF-SHAPE-NULL", "CONF-NULL") and f[1] == "violation"
           for f in dlbridge._check_capsule(capsule)):
        return None
    return _read_capsule(capsule)


def _read_capsule(capsule):
    """Version, flags, device, data, byte_offset, shape, strides of an unconsumed capsule.
    Only call after _check_capsule found no CONF-VERSION-MAJOR/NDIM/SHAPE-NULL violation."""
    name = _capsule_name(capsule)
    address = _api.PyCapsule_GetPointer(capsule, name.encode())
    if name == "dltensor_versioned":
        m = _DLManagedTensorVersioned.from_address(address)
        version, flags = (m.version.major, m.version.minor), m.flags
    else:
        m = _DLManagedTensor.from_address(address)
        version, flags = None, 0
    t = m.dl_tensor
    shape = tuple(t.shape[i] for i in range(t.ndim)) if t.ndim else ()
    strides = tuple(t.strides[i] for i in range(t.ndim)) if t.ndim and t.strides else None
    return {"name": name, "version": version, "flags": flags,
            "device": (t.device.device_type, t.device.device_id), "data": t.data or 0,
            "byte_offset": t.byte_offset, "shape": shape, "strides": strides,
            "dtype": (t.dtype.code, t.dtype.bits, t.dtype.lanes)}

