"""DLPack conformance check of a Python array library, producer and consumer side.

    python3 -m dlbridge.check TARGET [--report-only] [--markdown FILE]

TARGET is ``numpy``, ``torch``, ``dlbridge`` or ``module:factory`` (a callable returning an
iterable of ``(label, array)`` pairs or of arrays; ``module.from_dlpack``, if any, is checked
as the consumer). Rules and their meaning: spec/conformance.md.

Producer side: a matrix of arrays (dtypes x shapes x strides x zero-size x read-only x 0-d)
is exported through ``__dlpack__`` with the standard's argument combinations, and every
capsule is run through dlbridge's C++ checker (``dlbridge._check_capsule``, CONF-* rules)
without being consumed; the Python protocol rules are PYP-*.

Consumer side: the library's ``from_dlpack`` is fed dlbridge's edge-case tensors (legacy NULL
strides, negative strides, zero-size with NULL data, read-only versioned, byte_offset != 0),
each in its own subprocess so that a consumer that kills the process is reported as a
finding (PYC-*), not as a crash of the checker.

Prints one row per rule (pass / violation / warning, with an example) and exits 1 when any
rule is violated, unless --report-only.
"""
import argparse
import ctypes
import gc
import importlib
import json
import subprocess
import sys

import dlbridge

# ---------------------------------------------------------------------------------------
# ctypes mirrors of the DLPack 1.x structs (read only; the checker reads first).

from .dlpack_ctypes import (DELETER as _DELETER, DLManagedTensor as _DLManagedTensor,
                            DLManagedTensorVersioned as _DLManagedTensorVersioned,
                            DLTensor as _DLTensor, c_int64_p)

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
KDLCPU, KDLCUDA = 1, 2


def _capsule_name(capsule):
    name = _api.PyCapsule_GetName(capsule)
    return None if name is None else name.decode()


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


# ---------------------------------------------------------------------------------------
# Rules of the Python protocol (the C header's rules come from the checker itself).

PY_RULES = [
    ("PYP-DLPACK-DEVICE", "violation", "__dlpack_device__() is (int, int) and matches the capsule's device"),
    ("PYP-CAPSULE-NAME", "violation", "the capsule is 'dltensor' or 'dltensor_versioned'; legacy when max_version is None"),
    ("PYP-STREAM", "violation", "__dlpack__(stream=None) is accepted for CPU arrays"),
    ("PYP-MAX-VERSION", "violation", "__dlpack__ accepts max_version (None, (1, 0), (1, 3), (2, 0))"),
    ("PYP-VERSIONED", "warning", "max_version >= (1, 0) gets a 'dltensor_versioned' capsule (recommended)"),
    ("PYP-DL-DEVICE", "violation", "__dlpack__ accepts dl_device; the array's own device exports, another raises BufferError"),
    ("PYP-COPY", "violation", "copy=False never copies, copy=True copies (IS_COPIED when versioned)"),
    ("PYP-READ-ONLY", "violation", "read-only arrays: READ_ONLY flag when versioned; legacy export refused with BufferError"),
    ("PYP-ERROR-TYPE", "warning", "refusals raise BufferError (TypeError only for unknown arguments)"),
    ("PYC-MAX-VERSION", "warning", "from_dlpack calls __dlpack__ with max_version (DLPack >= 1.0 consumers)"),
    ("PYC-NULL-STRIDES", "violation", "a legacy tensor with NULL strides imports as C-contiguous"),
    ("PYC-NEGATIVE-STRIDES", "violation", "negative strides import zero-copy, or are refused with an exception (never a crash)"),
    ("PYC-ZERO-SIZE", "violation", "a zero-size tensor with NULL data imports with its shape"),
    ("PYC-READ-ONLY", "violation", "a read-only versioned tensor imports read-only, or is copied or refused"),
    ("PYC-BYTE-OFFSET", "violation", "element 0 is read at data + byte_offset"),
    ("PYC-RENAME", "violation", "an imported capsule is renamed 'used_dltensor[_versioned]'"),
    ("PYC-DELETER-ONCE", "violation", "the producer's deleter runs exactly once, after the import is dropped"),
]

_RANK = {"pass": 0, "note": 1, "warning": 2, "violation": 3}


class Results:
    """Per rule: the worst status seen, how often each status was seen, and one example."""

    def __init__(self, rules):
        self.rules = rules  # [(id, severity, summary)]
        self.status = {r[0]: None for r in rules}
        self.example = {}
        self.counts = {r[0]: {} for r in rules}

    def add(self, rule, status, example):
        if rule not in self.status:
            self.rules.append((rule, status, "(not in the checker's rule list)"))
            self.status[rule] = None
            self.counts[rule] = {}
        self.counts[rule][status] = self.counts[rule].get(status, 0) + 1
        current = self.status[rule]
        if current is None or _RANK[status] > _RANK[current]:
            self.status[rule] = status
            self.example[rule] = example
        elif status == current and rule not in self.example:
            self.example[rule] = example

    def violations(self):
        return [r for r, s in self.status.items() if s == "violation"]

    def rows(self):
        for rule, _sev, summary in self.rules:
            status = self.status[rule]
            counts = ", ".join("%d %s" % (n, s) for s, n in sorted(self.counts[rule].items()))
            yield (rule, status or "not exercised", summary, counts, self.example.get(rule, ""))


# ---------------------------------------------------------------------------------------
# Targets: the array matrix and the consumer of each library.

class Target:
    name = "?"
    version = "?"
    has_read_only = False
    from_dlpack = None

    def matrix(self):
        raise NotImplementedError


class NumpyTarget(Target):
    def __init__(self):
        import numpy as np
        self.np = np
        self.name, self.version = "numpy", np.__version__
        self.has_read_only = True
        self.from_dlpack = getattr(np, "from_dlpack", None)

    def matrix(self):
        np = self.np
        for dtype in ("int8", "uint16", "int64", "float16", "float32", "float64", "complex128", "bool"):
            base = np.arange(24).astype(dtype).reshape(4, 6)
            views = [("0-d", np.array(1, dtype=dtype)), ("1-d", base.reshape(-1)),
                     ("2-d C", base), ("transposed", base.T), ("every other column", base[:, ::2]),
                     ("negative strides", base[::-1, ::-1]), ("zero-size", np.zeros((2, 0, 3), dtype)),
                     ("offset view", base[1:, 2:])]
            for label, a in views:
                yield "%s %s" % (dtype, label), a
                ro = a.copy() if label != "transposed" else a.copy().T
                ro.flags.writeable = False
                yield "%s %s read-only" % (dtype, label), ro


class TorchTarget(Target):
    def __init__(self):
        import torch
        self.torch = torch
        self.name, self.version = "torch", torch.__version__.split("+")[0]
        self.from_dlpack = getattr(torch, "from_dlpack", None)
        if self.from_dlpack is None:
            from torch.utils import dlpack as tdl
            self.from_dlpack = tdl.from_dlpack

    def matrix(self):
        torch = self.torch
        for dtype in (torch.int8, torch.uint8, torch.int64, torch.float16, torch.float32,
                      torch.float64, torch.complex128, torch.bfloat16, torch.bool):
            base = torch.arange(24).to(dtype).reshape(4, 6)
            views = [("0-d", torch.tensor(1).to(dtype)), ("1-d", base.reshape(-1)), ("2-d C", base),
                     ("transposed", base.t()), ("every other column", base[:, ::2]),
                     ("zero-size", torch.zeros((2, 0, 3), dtype=dtype)), ("offset view", base[1:, 2:])]
            for label, a in views:
                yield "%s %s" % (str(dtype).replace("torch.", ""), label), a


class DlbridgeTarget(Target):
    """dlbridge.Tensor over ctypes buffers (kept alive through SetOwner)."""

    def __init__(self):
        self.name, self.version = "dlbridge", dlbridge.__version__
        self.has_read_only = True
        self.from_dlpack = dlbridge.from_dlpack

    def matrix(self):
        dtypes = [("int8", 1), ("uint16", 2), ("int64", 8), ("float16", 2), ("float32", 4),
                  ("float64", 8), ("complex128", 16), ("bfloat16", 2), ("bool", 1)]
        layouts = [("0-d", (), None, 0), ("1-d", (24,), None, 0), ("2-d C", (4, 6), None, 0),
                   ("transposed", (6, 4), (1, 6), 0), ("every other column", (4, 3), (6, 2), 0),
                   ("negative strides", (4, 6), (-6, -1), 23), ("zero-size", (2, 0, 3), None, 0),
                   ("offset view", (3, 4), (6, 1), 8)]
        for dtype, item in dtypes:
            for label, shape, strides, offset in layouts:
                for read_only in (False, True):
                    buf = (ctypes.c_ubyte * (24 * item + 256))()
                    aligned = (ctypes.addressof(buf) + 255) // 256 * 256  # the header's 256 bytes
                    md = dlbridge.MemoryDescriptor(aligned, 24 * item, "host")
                    md.SetOwner(buf)
                    t = dlbridge.Tensor(md, dtype, shape, strides=strides, byte_offset=offset * item,
                                        flags=FLAG_READ_ONLY if read_only else 0)
                    yield "%s %s%s" % (dtype, label, " read-only" if read_only else ""), t


class FactoryTarget(Target):
    def __init__(self, spec):
        module_name, _, factory = spec.partition(":")
        module = importlib.import_module(module_name)
        self.factory = getattr(module, factory)
        self.name = spec
        self.version = str(getattr(module, "__version__", "?"))
        self.from_dlpack = getattr(module, "from_dlpack", None)

    def matrix(self):
        for i, item in enumerate(self.factory()):
            if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str):
                yield item
            else:
                yield "array %d" % i, item


def make_target(spec):
    if spec == "numpy":
        return NumpyTarget()
    if spec == "torch":
        return TorchTarget()
    if spec == "dlbridge":
        return DlbridgeTarget()
    if ":" in spec:
        return FactoryTarget(spec)
    raise SystemExit("dlbridge.check: unknown TARGET %r (numpy, torch, dlbridge or module:factory)" % spec)


def _is_read_only(array):
    flags = getattr(array, "flags", None)
    if flags is not None and hasattr(flags, "writeable"):
        return not flags.writeable
    return bool(getattr(array, "readonly", getattr(array, "read_only", False)))


# ---------------------------------------------------------------------------------------
# Producer side

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
    ("max_version=(1, 3), stream=None, dl_device=own, copy=None",
     {"max_version": (1, 3), "stream": None, "dl_device": None, "copy": None}),
]
_CHECKER_RULES = dlbridge._checker_rules()
# PYP-STREAM, PYP-MAX-VERSION: each keyword alone must be accepted (a TypeError is the finding).
_KEYWORD_RULE = {"stream": "PYP-STREAM", "max_version": "PYP-MAX-VERSION",
                 "dl_device": "PYP-DL-DEVICE", "copy": "PYP-COPY"}


def _run_checker(results, capsule, where):
    findings = dlbridge._check_capsule(capsule)
    seen = set()
    for rule, severity, message in findings:
        results.add(rule, severity, "%s: %s" % (where, message))
        seen.add(rule)
    for rule, _severity, _summary in _CHECKER_RULES:
        if rule not in seen:
            results.add(rule, "pass", where)
    return findings


def check_producer(target, results, log):
    unsupported = {}  # keyword -> the TypeError message
    for label, array in target.matrix():
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
        reference = None  # element 0's address and device of a zero-copy export
        for call, kwargs in CALLS:
            kwargs = dict(kwargs)
            if "dl_device" in kwargs and kwargs["dl_device"] is None:
                kwargs["dl_device"] = device
            where = "%s, __dlpack__(%s)" % (label, call)
            if any(k in unsupported for k in kwargs):
                continue
            foreign_device = kwargs.get("dl_device") == (KDLCUDA, 0) and device != (KDLCUDA, 0)
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
            if read_only:  # PYP-READ-ONLY
                if name == "dltensor_versioned" and not info["flags"] & FLAG_READ_ONLY and not copied:
                    results.add("PYP-READ-ONLY", "violation",
                                "%s: versioned export of a read-only array lacks READ_ONLY" % where)
                elif name == "dltensor" and not copied:
                    results.add("PYP-READ-ONLY", "violation",
                                "%s: a read-only array was exported as a writable legacy tensor" % where)
                else:
                    results.add("PYP-READ-ONLY", "pass", where)
            if kwargs.get("copy") is True:  # PYP-COPY
                if zero_size:
                    results.add("PYP-COPY", "pass", where)
                elif reference is not None and element0 == reference:
                    results.add("PYP-COPY", "violation", "%s: the export shares the array's memory" % where)
                elif name == "dltensor_versioned" and not copied:
                    results.add("PYP-COPY", "violation", "%s: a copy without IS_COPIED" % where)
                else:
                    results.add("PYP-COPY", "pass", where)
            elif kwargs.get("copy") is False:
                if reference is not None and not zero_size and element0 != reference:
                    results.add("PYP-COPY", "violation", "%s: copied although copy=False" % where)
                else:
                    results.add("PYP-COPY", "pass", where)
            elif "dl_device" in kwargs and not foreign_device:
                results.add("PYP-DL-DEVICE", "pass", where)
            elif foreign_device:  # PYP-DL-DEVICE: another device raises BufferError
                results.add("PYP-DL-DEVICE", "violation",
                            "%s: exported to %r instead of raising BufferError" % (where, info["device"]))
            del capsule  # unconsumed: the producer's capsule destructor calls the deleter
        log("  checked %s" % label)
    for key, message in unsupported.items():
        log("  %s is not accepted: %s" % (key, message))


# ---------------------------------------------------------------------------------------
# Consumer side: dlbridge's edge-case tensors, one subprocess per probe.

PROBES = ["null-strides-legacy", "negative-strides", "zero-size-null-data", "read-only-versioned",
          "byte-offset"]
# One probe per rule, checked in run_probe: PYC-NULL-STRIDES, PYC-NEGATIVE-STRIDES, PYC-ZERO-SIZE,
# PYC-READ-ONLY, PYC-BYTE-OFFSET.
_PROBE_RULE = {"null-strides-legacy": "PYC-NULL-STRIDES", "negative-strides": "PYC-NEGATIVE-STRIDES",
               "zero-size-null-data": "PYC-ZERO-SIZE", "read-only-versioned": "PYC-READ-ONLY",
               "byte-offset": "PYC-BYTE-OFFSET"}


class EdgeProducer:
    """A producer object whose __dlpack__ returns one hand-built edge-case capsule."""

    def __init__(self, kind):
        self.kind = kind
        self.deletes = 0
        self.calls = []
        self.capsules = []
        self._deleter = _DELETER(self._delete)
        self.buffer = (ctypes.c_float * 64)()
        for i in range(64):
            self.buffer[i] = float(i)
        self.base = ctypes.addressof(self.buffer)
        self.shape = (ctypes.c_int64 * 3)()
        self.strides = (ctypes.c_int64 * 3)()
        self.legacy = _DLManagedTensor()
        self.versioned = _DLManagedTensorVersioned()
        # what the import must show: shape, strides (None: not checked), element 0's address
        if kind == "null-strides-legacy":
            self._fill((3, 4), None, self.base, 0)
            self.expect = ((3, 4), (4, 1), self.base)
        elif kind == "negative-strides":
            self._fill((3, 4), (-4, -1), self.base, 11 * 4)
            self.expect = ((3, 4), (-4, -1), self.base + 44)
        elif kind == "zero-size-null-data":
            self._fill((2, 0, 3), (3, 3, 1), None, 0)
            self.expect = ((2, 0, 3), None, None)
        elif kind == "read-only-versioned":
            self._fill((4,), (1,), self.base, 0)
            self.versioned.flags = FLAG_READ_ONLY
            self.expect = ((4,), (1,), self.base)
        elif kind == "byte-offset":
            self._fill((2, 3), (3, 1), self.base, 8 * 4)
            self.expect = ((2, 3), (3, 1), self.base + 32)

    def _fill(self, shape, strides, data, byte_offset):
        for i, v in enumerate(shape):
            self.shape[i] = v
        for i, v in enumerate(strides or ()):
            self.strides[i] = v
        for m in (self.legacy, self.versioned):
            t = m.dl_tensor
            t.data = data
            t.device.device_type, t.device.device_id = KDLCPU, 0
            t.ndim = len(shape)
            t.dtype.code, t.dtype.bits, t.dtype.lanes = 2, 32, 1
            t.shape = ctypes.cast(self.shape, c_int64_p)
            t.strides = ctypes.cast(self.strides, c_int64_p) if strides is not None else None
            t.byte_offset = byte_offset
            m.deleter = self._deleter
        self.versioned.version.major, self.versioned.version.minor = 1, 3

    def _delete(self, _self):
        self.deletes += 1

    def __dlpack_device__(self):
        return (KDLCPU, 0)

    def __dlpack__(self, **kwargs):
        self.calls.append(dict(kwargs))
        mv = kwargs.get("max_version")
        versioned = mv is not None and mv[0] >= 1 and self.kind != "null-strides-legacy"
        if self.kind == "read-only-versioned" and not versioned:
            raise BufferError("a read-only tensor cannot be exported as a legacy DLManagedTensor")
        if versioned:
            capsule = _api.PyCapsule_New(ctypes.addressof(self.versioned),
                                         ctypes.addressof(_NAMES[b"dltensor_versioned"]), None)
        else:
            capsule = _api.PyCapsule_New(ctypes.addressof(self.legacy),
                                         ctypes.addressof(_NAMES[b"dltensor"]), None)
        self.capsules.append(capsule)
        return capsule


def _describe_import(result):
    """Shape, strides (elements) and element 0's address of an imported array: read through
    its own __dlpack__ (versioned first, so read-only imports can answer), else
    __array_interface__ or torch-style data_ptr()/stride(). Raises BufferError when none works."""
    for kwargs in ({"max_version": (1, 3)}, {}):
        try:
            capsule = result.__dlpack__(**kwargs)
        except (TypeError, BufferError):
            continue
        if any(f[2] == "violation" for f in dlbridge._check_capsule(capsule)):
            continue
        info = _read_capsule(capsule)
        element0 = (info["data"] + info["byte_offset"]) if info["data"] else None
        strides = info["strides"] or _contiguous(info["shape"])
        return info["shape"], strides, element0
    ai = getattr(result, "__array_interface__", None)
    if ai is not None:
        shape = tuple(ai["shape"])
        item = int(ai["typestr"][2:])
        strides = tuple(b // item for b in ai["strides"]) if ai.get("strides") else _contiguous(shape)
        return shape, strides, ai["data"][0] or None
    if hasattr(result, "data_ptr") and hasattr(result, "stride"):
        return tuple(result.shape), tuple(result.stride()), result.data_ptr() or None
    raise BufferError("the imported object can be described neither by __dlpack__, "
                      "__array_interface__ nor data_ptr()/stride()")


def _contiguous(shape):
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def run_probe(kind, target):
    """In the child: one edge case into target.from_dlpack; prints JSON findings."""
    out = []
    producer = EdgeProducer(kind)
    rule = _PROBE_RULE[kind]
    try:
        result = target.from_dlpack(producer)
    except Exception as e:  # noqa: BLE001
        status = "warning" if kind in ("negative-strides", "read-only-versioned") else "violation"
        if kind == "read-only-versioned" and not any(c.get("max_version") for c in producer.calls):
            status = "warning"
        out.append((rule, status, "from_dlpack raised %s: %s" % (type(e).__name__, e)))
        result = None
    mv = [c.get("max_version") for c in producer.calls]  # PYC-MAX-VERSION
    out.append(("PYC-MAX-VERSION", "pass" if any(v is not None for v in mv) else "warning",
                "__dlpack__ was called with %s" % (producer.calls,)))
    if result is not None:
        shape, strides, element0 = producer.expect
        got_shape, got_strides, got0 = None, None, None
        try:
            got_shape, got_strides, got0 = _describe_import(result)
        except BufferError as e:
            if kind != "read-only-versioned":
                out.append((rule, "warning", "the imported array cannot be re-exported to check it: %s" % e))
        if got_shape is not None:
            problems = []
            if tuple(got_shape) != shape:
                problems.append("shape %r, expected %r" % (got_shape, shape))
            if strides is not None and 0 not in shape and got_strides is not None:
                bad = [i for i, n in enumerate(shape) if n > 1 and got_strides[i] != strides[i]]
                if bad:
                    problems.append("strides %r, expected %r" % (got_strides, strides))
            if element0 is not None and got0 != element0:
                problems.append("element 0 at %#x, expected %#x (data + byte_offset)" % (got0 or 0, element0))
            if problems:
                out.append((rule, "violation", "; ".join(problems)))
            elif kind != "read-only-versioned":
                out.append((rule, "pass", "imported %r zero-copy" % (shape,)))
        if kind == "read-only-versioned":
            shared = got0 is None or got0 == producer.expect[2]
            if shared and not _is_read_only(result) and got_shape is not None:
                out.append((rule, "violation", "imported a READ_ONLY tensor as writable shared memory"))
            else:
                out.append((rule, "pass", "read-only kept (or copied)"))
        names = [_capsule_name(c) for c in producer.capsules]
        if names and names[-1] in ("used_dltensor", "used_dltensor_versioned"):  # PYC-RENAME
            out.append(("PYC-RENAME", "pass", "capsule renamed %r" % names[-1]))
        else:
            out.append(("PYC-RENAME", "violation", "capsule names after import: %r" % names))
        if producer.deletes != 0:  # PYC-DELETER-ONCE: none while alive, one after the drop
            out.append(("PYC-DELETER-ONCE", "violation",
                        "the deleter ran %d time(s) while the import was alive" % producer.deletes))
        del result
        gc.collect()
        out.append(("PYC-DELETER-ONCE", "pass" if producer.deletes == 1 else "violation",
                    "the deleter ran %d time(s) after the import was dropped" % producer.deletes))
    print("DLBRIDGE-PROBE " + json.dumps(out))
    sys.stdout.flush()


def check_consumer(target, spec, results, log):
    if target.from_dlpack is None:
        log("  %s has no from_dlpack: consumer side not checked" % target.name)
        return
    for kind in PROBES:
        rule = _PROBE_RULE[kind]
        proc = subprocess.run([sys.executable, "-m", "dlbridge.check", "--probe", kind, spec],
                              capture_output=True, text=True, timeout=120)
        line = [l for l in proc.stdout.splitlines() if l.startswith("DLBRIDGE-PROBE ")]
        if proc.returncode != 0 or not line:
            how = ("killed by signal %d" % -proc.returncode if proc.returncode < 0
                   else "exit status %d" % proc.returncode)
            tail = (proc.stderr.strip().splitlines() or [""])[-1][:200]
            results.add(rule, "violation", "%s: from_dlpack ended the process (%s) %s" % (kind, how, tail))
            log("  probe %s: process ended (%s)" % (kind, how))
            continue
        for r, status, message in json.loads(line[-1][len("DLBRIDGE-PROBE "):]):
            results.add(r, status, "%s: %s" % (kind, message))
        log("  probe %s: done" % kind)


# ---------------------------------------------------------------------------------------

def render(target, results, markdown):
    header = "DLPack conformance of %s %s (dlbridge %s, DLPack header %d.%d)" % (
        target.name, target.version, dlbridge.__version__, *dlbridge.DLPACK_VERSION)
    if markdown:
        lines = ["| rule | result | what it checks | counts | example |", "|---|---|---|---|---|"]
        for rule, status, summary, counts, example in results.rows():
            lines.append("| %s | %s | %s | %s | %s |" % (rule, status, summary, counts,
                                                       example.replace("|", "\\|")))
        return header, "\n".join(lines)
    lines = [header, ""]
    for rule, status, _summary, _counts, example in results.rows():
        lines.append("%-22s %-13s %s" % (rule, status, example))
    return header, "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m dlbridge.check", description=__doc__.split("\n\n")[0])
    parser.add_argument("target", help="numpy, torch, dlbridge or module:factory")
    parser.add_argument("--report-only", action="store_true", help="exit 0 even with violations")
    parser.add_argument("--markdown", metavar="FILE", help="also write the table as Markdown")
    parser.add_argument("--probe", help=argparse.SUPPRESS)
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    args = parser.parse_args(argv)
    target = make_target(args.target)
    if args.probe:
        run_probe(args.probe, target)
        return 0
    log = (lambda _msg: None) if args.quiet else (lambda msg: print(msg, file=sys.stderr))
    rules = list(dlbridge._checker_rules()) + list(PY_RULES)
    results = Results(rules)
    check_producer(target, results, log)
    check_consumer(target, args.target, results, log)
    header, text = render(target, results, markdown=False)
    print(text)
    if args.markdown:
        _h, table = render(target, results, markdown=True)
        with open(args.markdown, "w") as f:
            f.write("# %s\n\n%s\n" % (header, table))
    bad = results.violations()
    if bad:
        print("\nviolations: %s" % ", ".join(bad))
    return 0 if args.report_only or not bad else 1


if __name__ == "__main__":
    sys.exit(main())
