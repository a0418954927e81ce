"""Producer side: every array of the matrix through __dlpack__ with the standard's argument
combinations, every capsule through the C++ checker, and the stream values per device."""
from .capsules import FLAG_IS_COPIED, FLAG_READ_ONLY, _capsule_name, _read_capsule
from .devices import KDLCPU, KDLCUDA, KDLROCM, _NO_ADDRESS_DEVICES, _device_name
from .exchange import check_exchange_api
from .findings import _run_checker
from .targets import _is_read_only

CALLS = [  # single keywords first: a TypeError on one of them says the keyword is unknown
    ("no arguments", {}),
    ("stream=None", {"stream": None}),
    ("max_version=None", {"max_version": None}),
    ("max_version=(1, 0)", {"max_version": (1, 0)}),
    ("max_version=(1, 3)", {"max_version": (1, 3)}),
    ("max_version=(2, 0)", {"max_version": (2, 0)}),
    ("copy=None", {"copy": None}),
    ("copy=False", {"copy": False}),
    ("copy=True", {"copy": True}),
    ("dl_device=own", {"dl_device": None}),  # filled per array
    ("dl_device=(kDLCUDA, 0)", {"dl_device": (KDLCUDA, 0)}),
    ("max_version=(1, 3), copy=False", {"max_version": (1, 3), "copy": False}),
    ("max_version=(1, 3), copy=True", {"max_version": (1, 3), "copy": True}),
    ("max_version=(1, 3), dl_device=own", {"max_version": (1, 3), "dl_device": None}),
    ("max_version=(1, 3), dl_device=(kDLCUDA, 0), copy=False",
     {"max_version": (1, 3), "dl_device": (KDLCUDA, 0), "copy": False}),
    ("max_version=(1, 3), stream=None, dl_device=own, copy=None",
     {"max_version": (1, 3), "stream": None, "dl_device": None, "copy": None}),
]
# PYP-STREAM, PYP-MAX-VERSION: each keyword alone must be accepted (a TypeError is the finding).
_KEYWORD_RULE = {"stream": "PYP-STREAM", "max_version": "PYP-MAX-VERSION",
                 "dl_device": "PYP-DL-DEVICE", "copy": "PYP-COPY"}


def check_producer(target, results, log):
    unsupported = {}  # keyword -> the TypeError message
    by_device, by_type = {}, {}  # device type / array type -> (label, array, has elements)
    arrays = calls = 0
    for label, array in target.matrix():
        arrays += 1
        try:  # PYP-DLPACK-DEVICE: (int, int), and the capsule's device (below)
            device = tuple(array.__dlpack_device__())
            ok = len(device) == 2 and all(isinstance(v, int) for v in device)
        except Exception as e:  # noqa: BLE001 - any failure is a finding
            results.add("PYP-DLPACK-DEVICE", "violation", "%s: __dlpack_device__() raised %r" % (label, e))
            continue
        if not ok:
            results.add("PYP-DLPACK-DEVICE", "violation", "%s: __dlpack_device__() is %r" % (label, device))
            continue
        read_only = target.has_read_only and _is_read_only(array)
        by_device.setdefault(device[0], (label, array))
        reference = None  # element 0's address and device of a zero-copy export
        for call, kwargs in CALLS:
            kwargs = dict(kwargs)
            if "dl_device" in kwargs and kwargs["dl_device"] is None:
                kwargs["dl_device"] = device
            where = "%s, __dlpack__(%s)" % (label, call)
            if any(k in unsupported for k in kwargs):
                continue
            foreign_device = kwargs.get("dl_device") == (KDLCUDA, 0) and device != (KDLCUDA, 0)
            calls += 1
            try:
                capsule = array.__dlpack__(**kwargs)
            except TypeError as e:
                if len(kwargs) == 1:
                    key = next(iter(kwargs))
                    unsupported[key] = str(e)
                    results.add(_KEYWORD_RULE[key], "violation", "%s raised TypeError: %s" % (where, e))
                else:
                    results.add("PYP-ERROR-TYPE", "warning", "%s raised TypeError: %s" % (where, e))
                continue
            except BufferError as e:  # PYP-ERROR-TYPE: refusals are BufferError
                mv = kwargs.get("max_version")
                if foreign_device:
                    results.add("PYP-DL-DEVICE", "pass", where)
                    results.add("PYP-ERROR-TYPE", "pass", where)
                elif read_only and (mv is None or mv[0] < 1):
                    results.add("PYP-READ-ONLY", "pass", "%s refused: %s" % (where, e))
                    results.add("PYP-ERROR-TYPE", "pass", where)
                elif kwargs.get("copy") is False:
                    results.add("PYP-COPY", "pass", "%s refused: %s" % (where, e))
                    results.add("PYP-ERROR-TYPE", "pass", where)
                elif read_only:
                    results.add("PYP-READ-ONLY", "warning",
                                "%s refused a read-only array even for a versioned capsule: %s" % (where, e))
                else:
                    results.add("PYP-ERROR-TYPE", "warning", "%s raised BufferError: %s" % (where, e))
                continue
            except Exception as e:  # noqa: BLE001
                if foreign_device:
                    results.add("PYP-DL-DEVICE", "violation",
                                "%s raised %s, not BufferError: %s" % (where, type(e).__name__, e))
                else:
                    results.add("PYP-ERROR-TYPE", "warning",
                                "%s raised %s: %s" % (where, type(e).__name__, e))
                continue
            for k in kwargs:
                if k in ("stream", "max_version"):
                    results.add(_KEYWORD_RULE[k], "pass", where)
                if k == "copy" and kwargs[k] is None:
                    results.add("PYP-COPY", "pass", where)
            name = _capsule_name(capsule) if type(capsule).__name__ == "PyCapsule" else None
            if name not in ("dltensor", "dltensor_versioned"):  # PYP-CAPSULE-NAME
                results.add("PYP-CAPSULE-NAME", "violation", "%s returned %r" % (where, capsule))
                continue
            legacy_expected = kwargs.get("max_version") is None
            if legacy_expected and name != "dltensor":
                results.add("PYP-CAPSULE-NAME", "violation",
                            "%s returned a %r capsule; a consumer without max_version reads legacy" % (where, name))
            else:
                results.add("PYP-CAPSULE-NAME", "pass", where)
            mv = kwargs.get("max_version")
            if mv is not None and mv[0] >= 1:  # PYP-VERSIONED
                results.add("PYP-VERSIONED", "pass" if name == "dltensor_versioned" else "warning",
                            "%s gave %r" % (where, name))
            findings = _run_checker(results, capsule, where)
            if any(f[0] in ("CONF-VERSION-MAJOR", "CONF-NDIM", "CONF-SHAPE-NULL", "CONF-NULL")
                   and f[1] == "violation" for f in findings):
                continue
            info = _read_capsule(capsule)
            element0 = (info["data"] + info["byte_offset"]) if info["data"] else 0
            if info["device"] != device:
                results.add("PYP-DLPACK-DEVICE", "violation", "%s: capsule device %r, __dlpack_device__ %r"
                            % (where, info["device"], device))
            else:
                results.add("PYP-DLPACK-DEVICE", "pass", where)
            if reference is None and kwargs.get("copy") is not True:
                reference = element0
            zero_size = 0 in info["shape"]
            copied = info["flags"] & FLAG_IS_COPIED or zero_size or (
                kwargs.get("copy") is True and reference is not None and element0 != reference)
            if not zero_size and not read_only:  # the exchange API probe's array: 1-d or more first
                if type(array) not in by_type or (not by_type[type(array)][2] and info["shape"]):
                    by_type[type(array)] = (label, array, len(info["shape"]))
            _check_byte_offset(results, info, copied, where)
            if read_only:  # PYP-READ-ONLY
                if name == "dltensor_versioned" and not info["flags"] & FLAG_READ_ONLY and not copied:
                    results.add("PYP-READ-ONLY", "violation",
                                "%s: versioned export of a read-only array lacks READ_ONLY" % where)
                elif name == "dltensor" and not copied:
                    results.add("PYP-READ-ONLY", "violation",
                                "%s: a read-only array was exported as a writable legacy tensor" % where)
                else:
                    results.add("PYP-READ-ONLY", "pass", where)
            if foreign_device:  # PYP-DL-DEVICE: another device raises BufferError
                results.add("PYP-DL-DEVICE", "violation",
                            "%s: exported to %r instead of raising BufferError" % (where, info["device"]))
            elif kwargs.get("copy") is True:  # PYP-COPY
                if zero_size:
                    results.add("PYP-COPY", "pass", where)
                elif reference is not None and element0 == reference:
                    results.add("PYP-COPY", "violation", "%s: the export shares the array's memory" % where)
                elif name == "dltensor_versioned" and not info["flags"] & FLAG_IS_COPIED:
                    results.add("PYP-COPY", "violation", "%s: a copy without IS_COPIED" % where)
                else:
                    results.add("PYP-COPY", "pass", where)
            elif kwargs.get("copy") is False:
                if reference is not None and not zero_size and element0 != reference:
                    results.add("PYP-COPY", "violation", "%s: copied although copy=False" % where)
                elif info["flags"] & FLAG_IS_COPIED:
                    results.add("PYP-COPY", "violation", "%s: IS_COPIED set although copy=False" % where)
                else:
                    results.add("PYP-COPY", "pass", where)
            elif "dl_device" in kwargs:
                results.add("PYP-DL-DEVICE", "pass", where)
            del capsule  # unconsumed: the producer's capsule destructor calls the deleter
        log("  checked %s" % label)
    for key, message in unsupported.items():
        log("  %s is not accepted: %s" % (key, message))
    devices = ", ".join(_device_name(d) for d in sorted(by_device)) or "none"
    for label, array in target.device_samples():
        by_device.setdefault(tuple(array.__dlpack_device__())[0], (label + " (stream probes only)", array))
    results.cover("producer (PYP-*)", "%d arrays (types: %s; devices: %s), %d __dlpack__ calls"
                  % (arrays, ", ".join(sorted({t.__name__ for t in by_type})) or "none", devices, calls))
    check_streams(by_device, "stream" in unsupported, results)
    check_exchange_api(by_type, results, log)


def _check_byte_offset(results, info, copied, where):  # PYP-BYTE-OFFSET
    """Element zero in data, byte_offset 0, on address devices (copies too)."""
    device_type = info["device"][0]
    if device_type in _NO_ADDRESS_DEVICES:
        results.add("PYP-BYTE-OFFSET", "not applicable",
                    "%s: %s data is a handle, not an address; byte_offset is how it locates "
                    "element zero" % (where, _NO_ADDRESS_DEVICES[device_type]))
    elif info["byte_offset"] == 0:
        results.add("PYP-BYTE-OFFSET", "pass", where)
    else:
        results.add("PYP-BYTE-OFFSET", "warning",
                    "%s: data %#x with byte_offset %d%s: consumers that ignore byte_offset (PyTorch) "
                    "read the wrong elements; put element zero in data" % (
                        where, info["data"], info["byte_offset"], " (a copy)" if copied else ""))


# PYP-STREAM-VALUES: (accepted, refused) stream values per device type, from the array API's
# __dlpack__ stream notes. Stream pointers (> 2) are not probed: only a real stream of the
# caller's would be valid, and a made-up one may crash a GPU library.
_STREAMS = {KDLCPU: ((None,), (0, 1, 2, -1, 3)),
            KDLCUDA: ((None, 1, 2, -1), (0,)),
            KDLROCM: ((None, 0, -1), (1, 2))}


def check_streams(by_device, stream_unsupported, results):
    rule = "PYP-STREAM-VALUES"
    for device_type in (KDLCPU, KDLCUDA, KDLROCM):
        if device_type not in by_device:
            results.add(rule, "not applicable", "%s: the target's matrix has no %s array"
                        % (_device_name(device_type), _device_name(device_type)))
    if stream_unsupported:
        results.add(rule, "skipped", "__dlpack__ does not accept stream (see PYP-STREAM)")
        return
    for device_type, (label, array) in sorted(by_device.items()):
        name = _device_name(device_type)
        if device_type not in _STREAMS:
            results.add(rule, "not applicable", "%s (%s): the standard fixes stream values for CPU, "
                        "CUDA and ROCm only" % (label, name))
            continue
        accepted, refused = _STREAMS[device_type]
        tried = []
        for value in accepted + refused:
            where = "%s (%s), __dlpack__(stream=%r)" % (label, name, value)
            tried.append(repr(value))
            try:
                capsule = array.__dlpack__(stream=value)
            except Exception as e:  # noqa: BLE001 - the standard names no class for a refusal
                if value in refused:
                    results.add(rule, "pass", "%s refused: %s: %s" % (where, type(e).__name__, e))
                elif value is None:
                    results.add(rule, "violation", "%s raised %s: %s" % (where, type(e).__name__, e))
                else:  # other values than None are optional (array API: implementation-dependent)
                    results.add(rule, "warning", "%s refused a value the standard allows: %s: %s"
                                % (where, type(e).__name__, e))
                continue
            del capsule
            if value in refused:
                results.add(rule, "violation", "%s was accepted; the standard %s" % (
                    where, "accepts only None on CPU" if device_type == KDLCPU else
                    "disallows it for %s" % name))
            else:
                results.add(rule, "pass", where)
        if device_type != KDLCPU:
            results.add(rule, "skipped", "%s (%s): stream pointers (> 2) need a real stream of the "
                        "caller's; not probed" % (label, name))
        results.cover("producer (PYP-*)", "stream values on %s: %s" % (name, ", ".join(tried)))

