"""Shared helpers for dlbridge's Python tests: the ctypes DLPack structs, a release
counter whose address can be given to SetReleaseAddress, and hand-built capsules."""
import ctypes
import gc

import dlbridge

from dlbridge.dlpack_ctypes import (ALLOCATOR, CURRENT_STREAM, DELETER,  # noqa: F401
                                    DLTENSOR_FROM_PYOBJECT, FROM_PYOBJECT, SET_ERROR,
                                    TO_PYOBJECT, DLDataType, DLDevice, DLManagedTensor,
                                    DLManagedTensorVersioned, DLPackExchangeAPI,
                                    DLPackExchangeAPIHeader, DLPackVersion, DLTensor,
                                    c_int64_p)


_api = ctypes.pythonapi
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
_api.PyCapsule_GetName.restype = ctypes.c_char_p
_api.PyCapsule_GetName.argtypes = [ctypes.py_object]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.Py_DecRef.argtypes = [ctypes.py_object]

# Capsule names must outlive their capsules.
NAMES = {name: ctypes.create_string_buffer(name) for name in
         (b"dltensor", b"dltensor_versioned", b"used_dltensor", b"used_dltensor_versioned",
          b"not_a_tensor", b"dlpack_exchange_api")}


def make_capsule(address, name):
    """A capsule around `address` named `name`, with no destructor."""
    return _api.PyCapsule_New(address, ctypes.cast(NAMES[name], ctypes.c_void_p), None)


def capsule_name(capsule):
    return _api.PyCapsule_GetName(capsule).decode()


def capsule_pointer(capsule, name):
    return _api.PyCapsule_GetPointer(capsule, name.encode())


def address_of(obj):
    return ctypes.cast(obj, ctypes.c_void_p).value


class ReleaseCounter:
    """A C release (void (*)(void*)) built with ctypes; counts calls and their contexts."""

    def __init__(self):
        self.contexts = []
        self._fn = DELETER(self._called)
        self.address = address_of(self._fn)

    def _called(self, context):
        self.contexts.append(context)

    @property
    def calls(self):
        return len(self.contexts)


class HandBuilt:
    """A managed tensor built with ctypes whose deleter is counted (legacy or versioned)."""

    def __init__(self, versioned, shape=(4,), dtype=(2, 32, 1), data=None, strides=None,
                 major=1, minor=3, flags=0, device=(1, 0), ndim=None):
        self.deletes = 0
        self._deleter = DELETER(self._delete)
        self.buffer = (ctypes.c_float * 16)()
        n = len(shape)
        self.shape = (ctypes.c_int64 * max(n, 1))(*shape)
        self.strides = (ctypes.c_int64 * max(n, 1))(*(strides or [0] * n))
        m = DLManagedTensorVersioned() if versioned else DLManagedTensor()
        if versioned:
            m.version.major, m.version.minor, m.flags = major, minor, flags
        t = m.dl_tensor
        t.data = address_of(self.buffer) if data is None else data
        t.device.device_type, t.device.device_id = device
        t.ndim = n if ndim is None else ndim
        t.dtype.code, t.dtype.bits, t.dtype.lanes = dtype
        t.shape = ctypes.cast(self.shape, c_int64_p) if n else None
        t.strides = ctypes.cast(self.strides, c_int64_p) if strides is not None else None
        m.deleter = self._deleter
        self.managed = m
        self.name = b"dltensor_versioned" if versioned else b"dltensor"

    def _delete(self, _self):
        self.deletes += 1

    def capsule(self):
        return make_capsule(ctypes.addressof(self.managed), self.name)


def exchange_api(tensor_type=dlbridge.Tensor):
    capsule = tensor_type.__dlpack_c_exchange_api__
    return DLPackExchangeAPI.from_address(capsule_pointer(capsule, "dlpack_exchange_api"))


def owned(values, size=None, space="host"):
    """A MemoryDescriptor over the ctypes buffer `values` (`size` bytes, default all of it),
    held by a reference to `values` (exports need a hold, PY-54)."""
    md = dlbridge.MemoryDescriptor(address_of(values), ctypes.sizeof(values) if size is None else size,
                                   space)
    md.SetOwner(values)
    return md


def host_tensor(values, dtype="float32", counter=None, **kwargs):
    """A dlbridge.Tensor over a ctypes float buffer, held by `counter`'s release if given,
    else by a reference to `values`."""
    md = dlbridge.MemoryDescriptor(address_of(values), ctypes.sizeof(values), "host")
    if counter is not None:
        md.SetReleaseAddress(counter.address, 1234)
    else:
        md.SetOwner(values)
    shape = kwargs.pop("shape", (len(values),))
    return dlbridge.Tensor(md, dtype, shape, **kwargs)


def collect():
    gc.collect()


class Recording:
    """Forwards the DLPack protocol to `inner`, recording each __dlpack__'s keywords and the
    name of the capsule it returned: what a consumer asked for and got."""

    def __init__(self, inner):
        self.inner = inner
        self.calls = []

    def __dlpack_device__(self):
        return self.inner.__dlpack_device__()

    def __dlpack__(self, **kwargs):
        capsule = self.inner.__dlpack__(**kwargs)
        self.calls.append((sorted(kwargs), capsule_name(capsule)))
        return capsule
