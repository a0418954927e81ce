"""ctypes mirrors of the DLPack 1.x structs, for reading (and, in tests, hand-building)
tensors from Python. Layouts are frozen by tests/test_abi_layout.cpp."""
import ctypes

c_int64_p = ctypes.POINTER(ctypes.c_int64)


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", c_int64_p), ("strides", c_int64_p),
                ("byte_offset", ctypes.c_uint64)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", DELETER)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p),
                ("deleter", DELETER), ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


# The DLPack 1.3 C exchange API (`__dlpack_c_exchange_api__`). The PYFUNCTYPE prototypes keep
# the GIL held during the call and raise the Python exception a function sets on failure.
class DLPackExchangeAPIHeader(ctypes.Structure):
    pass


DLPackExchangeAPIHeader._fields_ = [("version", DLPackVersion),
                                    ("prev_api", ctypes.POINTER(DLPackExchangeAPIHeader))]

SET_ERROR = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p)
ALLOCATOR = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.POINTER(DLTensor),
                              ctypes.POINTER(ctypes.POINTER(DLManagedTensorVersioned)),
                              ctypes.c_void_p, SET_ERROR)
FROM_PYOBJECT = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object,
                                  ctypes.POINTER(ctypes.POINTER(DLManagedTensorVersioned)))
TO_PYOBJECT = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.POINTER(DLManagedTensorVersioned),
                                ctypes.POINTER(ctypes.c_void_p))
DLTENSOR_FROM_PYOBJECT = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.POINTER(DLTensor))
CURRENT_STREAM = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.c_int32,
                                   ctypes.POINTER(ctypes.c_void_p))


class DLPackExchangeAPI(ctypes.Structure):
    _fields_ = [("header", DLPackExchangeAPIHeader),
                ("managed_tensor_allocator", ALLOCATOR),
                ("managed_tensor_from_py_object_no_sync", FROM_PYOBJECT),
                ("managed_tensor_to_py_object_no_sync", TO_PYOBJECT),
                ("dltensor_from_py_object_no_sync", DLTENSOR_FROM_PYOBJECT),
                ("current_work_stream", CURRENT_STREAM)]
