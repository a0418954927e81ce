"""The C exchange API (DLPack 1.3 ``__dlpack_c_exchange_api__``): its table and its calls on the
type's own array (PYP-EXCHANGE-API, PYP-EXCHANGE-CALLS)."""
import ctypes

from ..dlpack_ctypes import (DLManagedTensorVersioned as _DLManagedTensorVersioned,
                             DLPackExchangeAPI as _DLPackExchangeAPI,
                             DLPackExchangeAPIHeader as _DLPackExchangeAPIHeader,
                             DLTensor as _DLTensor, SET_ERROR as _SET_ERROR, c_int64_p)
from .capsules import _NAMES, _api, _capsule_name, _read_capsule, _safe_read
from .devices import KDLCPU, _device_name
from .findings import _run_checker

def _pointer(fn):
    return ctypes.cast(fn, ctypes.c_void_p).value


def check_exchange_api(by_type, results, log):
    """PYP-EXCHANGE-API, PYP-EXCHANGE-CALLS for each array type of the matrix."""
    if not by_type:
        results.add("PYP-EXCHANGE-API", "skipped", "no array of the matrix exported elements")
    for cls, (label, array, _ndim) in by_type.items():
        where = "%s (%s)" % (cls.__name__, label)
        published = getattr(cls, "__dlpack_c_exchange_api__", None)
        if published is None:
            if "__dlpack_c_exchange_api__" in getattr(array, "__dict__", {}):
                results.add("PYP-EXCHANGE-API", "violation", "%s: __dlpack_c_exchange_api__ is set on the "
                            "instance; the header says on the type" % where)
            else:
                results.add("PYP-EXCHANGE-API", "not applicable",
                            "%s: the type publishes no __dlpack_c_exchange_api__" % where)
                results.add("PYP-EXCHANGE-CALLS", "not applicable",
                            "%s: the type publishes no __dlpack_c_exchange_api__" % where)
            results.cover("producer (PYP-*)", "exchange API of %s: not published" % cls.__name__)
            continue
        results.cover("producer (PYP-*)", "exchange API of %s: table and calls" % cls.__name__)
        table = _exchange_table(published, where, results)
        if table is not None:
            _exchange_calls(table, array, where, results)
            log("  exchange API of %s: checked" % cls.__name__)


def _exchange_table(published, where, results):  # PYP-EXCHANGE-API
    """The usable (major 1) table of a published capsule, or None after reporting why."""
    rule = "PYP-EXCHANGE-API"
    if type(published).__name__ != "PyCapsule":
        results.add(rule, "violation", "%s: __dlpack_c_exchange_api__ is %r, not a PyCapsule" % (where, published))
        return None
    name = _capsule_name(published)
    if name != "dlpack_exchange_api":
        results.add(rule, "violation", "%s: the capsule is named %r, not 'dlpack_exchange_api'" % (where, name))
        return None
    address = _api.PyCapsule_GetPointer(published, b"dlpack_exchange_api")
    chain, seen = [], set()
    while address and address not in seen and len(chain) < 16:  # bounded: a loop is a finding
        seen.add(address)
        header = _DLPackExchangeAPIHeader.from_address(address)
        chain.append((address, header.version.major, header.version.minor))
        address = _pointer(header.prev_api)
    versions = ", ".join("%d.%d" % (ma, mi) for _a, ma, mi in chain)
    if address:
        results.add(rule, "violation", "%s: the prev_api chain (%s) loops or is longer than 16" % (where, versions))
        return None
    usable = [a for a, major, _minor in chain if major == 1]
    if not usable:
        results.add(rule, "violation", "%s: no table of major 1 in the prev_api chain (%s); a consumer "
                    "must check the major before using one" % (where, versions))
        return None
    table = _DLPackExchangeAPI.from_address(usable[0])
    required = ("managed_tensor_allocator", "managed_tensor_from_py_object_no_sync",
                "managed_tensor_to_py_object_no_sync", "current_work_stream")
    missing = [f for f in required if not _pointer(getattr(table, f))]
    if missing:
        results.add(rule, "violation", "%s: NULL function pointers the header requires: %s"
                    % (where, ", ".join(missing)))
        return None
    if not _pointer(table.dltensor_from_py_object_no_sync):
        results.add(rule, "note", "%s: dltensor_from_py_object_no_sync is NULL (allowed: not supported)" % where)
    else:
        results.add(rule, "pass", "%s: table %s, functions set" % (where, versions))
    return table


def _exchange_calls(table, array, where, results):  # PYP-EXCHANGE-CALLS (and the two below)
    rule = "PYP-EXCHANGE-CALLS"
    reference = None  # what __dlpack__ exports (versioned, else legacy), to compare with
    for kwargs in ({"max_version": (1, 3)}, {}):
        try:
            reference = _safe_read(array.__dlpack__(**kwargs))
            break
        except Exception:  # noqa: BLE001 - a legacy __dlpack__, or none: compare with nothing
            continue
    out = ctypes.POINTER(_DLManagedTensorVersioned)()
    try:
        rc = table.managed_tensor_from_py_object_no_sync(array, ctypes.byref(out))
    except Exception as e:  # noqa: BLE001 - failure with a Python exception set is allowed
        results.add(rule, "warning", "%s: managed_tensor_from_py_object_no_sync failed on the type's own "
                    "array: %s: %s" % (where, type(e).__name__, e))
        rc = None
    if rc is not None and rc != 0:
        results.add(rule, "violation", "%s: managed_tensor_from_py_object_no_sync returned %d without "
                    "setting a Python exception" % (where, rc))
    elif rc == 0 and not out:
        results.add(rule, "violation", "%s: managed_tensor_from_py_object_no_sync returned 0 and no tensor" % where)
    elif rc == 0:
        managed = ctypes.addressof(out.contents)
        view = _api.PyCapsule_New(managed, ctypes.addressof(_NAMES[b"dltensor_versioned"]), None)
        findings = _run_checker(results, view, "%s, managed_tensor_from_py_object_no_sync" % where)
        if any(f[1] == "violation" for f in findings):
            results.add(rule, "violation", "%s: managed_tensor_from_py_object_no_sync's tensor: %s"
                        % (where, "; ".join(f[2] for f in findings if f[1] == "violation")))
        else:
            got = _read_capsule(view)
            mine, theirs = (got["data"] + got["byte_offset"], got["shape"]), _first_element(reference)
            if theirs is not None and mine != theirs:
                results.add(rule, "warning", "%s: managed_tensor_from_py_object_no_sync describes %#x %r, "
                            "__dlpack__ %#x %r" % ((where,) + mine + theirs))
            else:
                results.add(rule, "pass", "%s: managed_tensor_from_py_object_no_sync gave version %r, shape %r"
                            % (where, got["version"], got["shape"]))
        del view
        if out.contents.deleter:  # the caller owns the tensor: its deleter, exactly once
            out.contents.deleter(managed)
        _exchange_view(table, array, where, results, reference)
    _exchange_stream_and_allocator(table, array, where, results)


def _first_element(info):
    """(element zero's address, shape) of a read capsule, or None."""
    return None if info is None else (info["data"] + info["byte_offset"], info["shape"])


def _exchange_view(table, array, where, results, reference):
    rule = "PYP-EXCHANGE-CALLS"
    if not _pointer(table.dltensor_from_py_object_no_sync):
        return
    view = _DLTensor()
    try:
        rc = table.dltensor_from_py_object_no_sync(array, ctypes.byref(view))
    except Exception as e:  # noqa: BLE001
        results.add(rule, "warning", "%s: dltensor_from_py_object_no_sync failed: %s: %s" % (where, type(e).__name__, e))
        return
    if rc != 0:
        results.add(rule, "violation", "%s: dltensor_from_py_object_no_sync returned %d without an exception" % (where, rc))
        return
    shape = tuple(view.shape[i] for i in range(view.ndim)) if 0 < view.ndim <= 64 and view.shape else ()
    mine, theirs = ((view.data or 0) + view.byte_offset, shape), _first_element(reference)
    if theirs is not None and mine != theirs:
        results.add(rule, "warning", "%s: dltensor_from_py_object_no_sync describes %#x %r, __dlpack__ %#x %r"
                    % ((where,) + mine + theirs))
    else:
        results.add(rule, "pass", "%s: dltensor_from_py_object_no_sync agrees with __dlpack__" % where)


def _exchange_stream_and_allocator(table, array, where, results):
    rule = "PYP-EXCHANGE-CALLS"
    device = tuple(array.__dlpack_device__())
    if device[0] != KDLCPU:  # would ask the device's runtime for its stream
        results.add(rule, "skipped", "%s: current_work_stream and the allocator are called for kDLCPU "
                    "arrays only (this one is on %s)" % (where, _device_name(device[0])))
        return
    stream = ctypes.c_void_p(1)
    try:
        rc = table.current_work_stream(KDLCPU, 0, ctypes.byref(stream))
        results.add(rule, "pass" if rc == 0 else "violation",
                    "%s: current_work_stream(kDLCPU, 0) returned %d, stream %r" % (where, rc, stream.value))
    except Exception as e:  # noqa: BLE001
        results.add(rule, "violation", "%s: current_work_stream(kDLCPU, 0) failed: %s: %s"
                    "; the header lets a CPU producer give NULL" % (where, type(e).__name__, e))
    errors = []
    set_error = _SET_ERROR(lambda _ctx, kind, message: errors.append((kind, message)))
    proto, extents = _DLTensor(), (ctypes.c_int64 * 2)(2, 3)
    proto.ndim, proto.shape = 2, ctypes.cast(extents, c_int64_p)
    proto.dtype.code, proto.dtype.bits, proto.dtype.lanes = 2, 32, 1
    proto.device.device_type = KDLCPU
    out = ctypes.POINTER(_DLManagedTensorVersioned)()
    try:
        rc = table.managed_tensor_allocator(ctypes.byref(proto), ctypes.byref(out), None, set_error)
    except Exception as e:  # noqa: BLE001
        results.add(rule, "warning", "%s: managed_tensor_allocator raised %s: %s (errors go through SetError)"
                    % (where, type(e).__name__, e))
        return
    if rc == 0 and out:
        t = out.contents.dl_tensor
        shape = tuple(t.shape[i] for i in range(t.ndim)) if t.ndim == 2 and t.shape else None
        results.add(rule, "pass" if shape == (2, 3) and t.data else "violation",
                    "%s: managed_tensor_allocator(2x3 float32, kDLCPU) gave shape %r, data %#x"
                    % (where, shape, t.data or 0))
        if out.contents.deleter:
            out.contents.deleter(ctypes.addressof(out.contents))
    elif rc == 0:
        results.add(rule, "violation", "%s: managed_tensor_allocator returned 0 and no tensor" % where)
    else:
        results.add(rule, "pass" if errors else "violation",
                    "%s: managed_tensor_allocator refused a kDLCPU tensor (%s)" % (
                        where, "SetError: %r" % (errors[0],) if errors else "without calling SetError"))

