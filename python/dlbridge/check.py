"""DLPack conformance check of a Python array library, producer and consumer side.

    python3 -m dlbridge.check TARGET [--report-only] [--allow RULE,...] [--markdown FILE]

TARGET is ``numpy``, ``torch``, ``dlbridge`` or ``module:factory`` (a callable returning an
iterable of ``(label, array)`` pairs or of arrays; the consumer checked is the factory's own
``from_dlpack`` attribute if it has one, else ``module.from_dlpack``, if any). Rules and their
meaning: spec/conformance.md.

Producer side: a matrix of arrays (dtypes x shapes x strides x zero-size x read-only x 0-d)
is exported through ``__dlpack__`` with the standard's argument combinations, and every
capsule is run through dlbridge's C++ checker (``dlbridge._check_capsule``, CONF-* rules)
without being consumed; the Python protocol rules are PYP-*: keywords, capsule names, the
device, copies, read-only, where element zero is (``byte_offset``), the stream values of each
device the matrix has, and the C exchange API when the array's type publishes one.

Consumer side: the library's ``from_dlpack`` is fed dlbridge's edge-case producers (legacy NULL
strides, negative strides, zero-size with NULL data, read-only versioned, byte_offset != 0,
pinned and managed memory, the ``device``/``copy`` keywords, inputs it must refuse with the
standard's exception classes), each in its own subprocess so that a consumer that kills the
process is reported as a finding (PYC-*), not as a crash of the checker; every capsule handed
out is audited for exactly one deleter call, on success and on failure.

Prints one row per rule (pass, a finding: note / warning / violation, not applicable with the
reason, skipped, or not exercised; with an example and the standard's rule it checks), then
what was covered per area with counts, and exits 1 when any rule is violated, unless
--report-only (or the rule is listed in --allow).
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
                            DLPackExchangeAPI as _DLPackExchangeAPI,
                            DLPackExchangeAPIHeader as _DLPackExchangeAPIHeader,
                            DLTensor as _DLTensor, SET_ERROR as _SET_ERROR, c_int64_p)

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
KDLCPU, KDLCUDA, KDLCUDAHOST, KDLROCM, KDLCUDAMANAGED = 1, 2, 3, 10, 13
KDLHEXAGON = 16  # a device type no Python array library imports (the unsupported-device probe)
# Device types whose data is an opaque handle (cl_mem, VkBuffer, MTLBuffer, WGPUBuffer): the
# element cannot be put into data by address arithmetic, so byte_offset is how they locate it.
_HANDLE_DEVICES = {4: "kDLOpenCL", 7: "kDLVulkan", 8: "kDLMetal", 15: "kDLWebGPU"}
_DEVICE_NAMES = {1: "kDLCPU", 2: "kDLCUDA", 3: "kDLCUDAHost", 4: "kDLOpenCL", 7: "kDLVulkan",
                 8: "kDLMetal", 9: "kDLVPI", 10: "kDLROCM", 11: "kDLROCMHost", 12: "kDLExtDev",
                 13: "kDLCUDAManaged", 14: "kDLOneAPI", 15: "kDLWebGPU", 16: "kDLHexagon",
                 17: "kDLMAIA", 18: "kDLTrn"}


def _device_name(device_type):
    return _DEVICE_NAMES.get(device_type, "device type %d" % device_type)


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


# ---------------------------------------------------------------------------------------
# Rules of the Python protocol (the C header's rules come from the checker itself).

PY_RULES = [
    ("PYP-DLPACK-DEVICE", "violation", "__dlpack_device__() is (int, int) and matches the capsule's device"),
    ("PYP-CAPSULE-NAME", "violation", "the capsule is 'dltensor' or 'dltensor_versioned'; legacy when max_version is None"),
    ("PYP-STREAM", "violation", "__dlpack__(stream=None) is accepted"),
    ("PYP-STREAM-VALUES", "violation", "per device: CPU only None; CUDA None/1/2/-1, never 0; ROCm None/0/-1, never 1 or 2"),
    ("PYP-MAX-VERSION", "violation", "__dlpack__ accepts max_version (None, (1, 0), (1, 3), (2, 0))"),
    ("PYP-VERSIONED", "warning", "max_version >= (1, 0) gets a 'dltensor_versioned' capsule (recommended)"),
    ("PYP-DL-DEVICE", "violation", "__dlpack__ accepts dl_device; the array's own device exports, another raises BufferError"),
    ("PYP-COPY", "violation", "copy=False never copies (BufferError when it must), copy=True copies (IS_COPIED when versioned)"),
    ("PYP-READ-ONLY", "violation", "read-only arrays: READ_ONLY flag when versioned; legacy export refused with BufferError"),
    ("PYP-ERROR-TYPE", "warning", "refusals raise BufferError (TypeError only for unknown arguments)"),
    ("PYP-BYTE-OFFSET", "warning", "exports put element zero in data with byte_offset 0 (address devices)"),
    ("PYP-EXCHANGE-API", "violation", "__dlpack_c_exchange_api__ on the type: capsule name, a major-1 table in the prev_api chain, functions set"),
    ("PYP-EXCHANGE-CALLS", "violation", "the exchange API's functions called on the type's own array agree with __dlpack__"),
    ("PYC-MAX-VERSION", "warning", "from_dlpack calls __dlpack__ with max_version (DLPack >= 1.0 consumers)"),
    ("PYC-KEYWORDS", "violation", "from_dlpack(x, *, device=None, copy=None): copy=False shares, copy=True copies, device= accepted"),
    ("PYC-ERROR-CLASS", "warning", "AttributeError for a non-producer, BufferError for unknown dtypes/devices and propagated from __dlpack__, TypeError for bad types"),
    ("PYC-NULL-STRIDES", "violation", "a legacy tensor with NULL strides imports as C-contiguous"),
    ("PYC-NEGATIVE-STRIDES", "violation", "negative strides import zero-copy, or are refused with an exception (never a crash)"),
    ("PYC-ZERO-SIZE", "violation", "a zero-size tensor with NULL data imports with its shape"),
    ("PYC-READ-ONLY", "violation", "a read-only versioned tensor imports read-only, or is copied or refused"),
    ("PYC-BYTE-OFFSET", "violation", "element 0 is read at data + byte_offset (addresses and element values)"),
    ("PYC-PINNED-MANAGED", "warning", "kDLCUDAHost and kDLCUDAManaged tensors import to the CPU zero-copy with their values"),
    ("PYC-RENAME", "violation", "an imported capsule is renamed 'used_dltensor[_versioned]'"),
    ("PYC-DELETER-ONCE", "violation", "each capsule's deleter runs exactly once (consumed: after the drop; refused: never by the consumer)"),
]

# The standard's rule each PYP/PYC rule checks (array API 2024.12 `__dlpack__`/`from_dlpack`,
# the DLPack Python specification, the DLPack 1.3 header), printed in the Markdown report.
CITES = {
    "PYP-DLPACK-DEVICE": "array API __dlpack_device__: returns (device_type, device_id) of the array's DLDevice",
    "PYP-CAPSULE-NAME": "DLPack python_spec: the capsule is named \"dltensor\" or \"dltensor_versioned\"; max_version=None: legacy",
    "PYP-STREAM": "array API __dlpack__: stream=None must be accepted (the default)",
    "PYP-STREAM-VALUES": "array API __dlpack__ stream: CPU only None; CUDA None, 1, 2, >2, -1 (0 disallowed); ROCm None, 0, >2, -1 (1, 2 not supported)",
    "PYP-MAX-VERSION": "array API 2023.12 __dlpack__(*, stream, max_version, dl_device, copy)",
    "PYP-VERSIONED": "array API __dlpack__ max_version: returning that version is recommended",
    "PYP-DL-DEVICE": "array API __dlpack__ dl_device: export there, or raise BufferError if the producer cannot",
    "PYP-COPY": "array API __dlpack__ copy: True always copies (IS_COPIED), False never copies (BufferError if needed)",
    "PYP-READ-ONLY": "DLPack python_spec / header: READ_ONLY on versioned capsules; BufferError for a legacy consumer",
    "PYP-ERROR-TYPE": "array API __dlpack__: BufferError when the data cannot be exported as asked",
    "PYP-BYTE-OFFSET": "de-facto convention (NumPy, PyTorch, CuPy): element zero in data, byte_offset 0; PyTorch ignores byte_offset on import",
    "PYP-EXCHANGE-API": "DLPack 1.3 header: a PyCapsule \"dlpack_exchange_api\" on the type; check the major; prev_api chain; functions non-NULL",
    "PYP-EXCHANGE-CALLS": "DLPack 1.3 header: managed_tensor_from_py_object_no_sync returns an owning tensor or -1 with an exception; current_work_stream(kDLCPU) may give NULL",
    "PYC-MAX-VERSION": "array API from_dlpack / python_spec: the consumer passes the highest max_version it supports",
    "PYC-KEYWORDS": "array API 2023.12 from_dlpack(x, /, *, device=None, copy=None): copy=True always copies, False never copies",
    "PYC-ERROR-CLASS": "array API 2023.12 from_dlpack Raises: AttributeError without __dlpack__; BufferError from __dlpack__ must propagate; python_spec: BufferError for an unsupported device",
    "PYC-NULL-STRIDES": "DLPack header: NULL strides mean C-contiguous (legacy and < 1.2)",
    "PYC-NEGATIVE-STRIDES": "DLPack header / python_spec: strided arrays, negative strides included, are valid input",
    "PYC-ZERO-SIZE": "DLPack header: a zero-size tensor should have NULL data",
    "PYC-READ-ONLY": "DLPack header: a READ_ONLY tensor must not be written by the consumer",
    "PYC-BYTE-OFFSET": "DLPack header: byte_offset is the offset in bytes from data to the beginning of the tensor",
    "PYC-PINNED-MANAGED": "array API 2023.12 from_dlpack device: memory accessible to the interpreter is importable to the CPU; pinned and managed memory is host-accessible",
    "PYC-RENAME": "DLPack python_spec: a consumed capsule is renamed used_dltensor[_versioned]",
    "PYC-DELETER-ONCE": "DLPack header / python_spec: the consumer calls the deleter once; an unconsumed capsule's destructor does",
}

_RANK = {"not applicable": -2, "skipped": -1, "pass": 0, "note": 1, "warning": 2, "violation": 3}
FINDINGS = ("note", "warning", "violation")


def _area(rule):
    return {"CONF": "C structs (CONF-*)", "PYP": "producer (PYP-*)", "PYC": "consumer (PYC-*)"}.get(
        rule.split("-")[0], "other")


class Results:
    """Per rule: the worst status seen, how often each status was seen, and one example.
    "not applicable" and "skipped" (each with its reason) rank below pass, so a rule that was
    exercised somewhere shows what it found."""

    def __init__(self, rules):
        self.rules = list(rules)  # [(id, severity, summary)]
        self.status = {r[0]: None for r in self.rules}
        self.example = {}
        self.counts = {r[0]: {} for r in self.rules}
        self.covered = {}  # area -> [what was probed]
        self.reasons = {}  # area -> {"not applicable: why": times}

    def add(self, rule, status, example):
        if rule not in self.status:
            self.rules.append((rule, status, "(not in the checker's rule list)"))
            self.status[rule] = None
            self.counts[rule] = {}
        self.counts[rule][status] = self.counts[rule].get(status, 0) + 1
        if status in ("not applicable", "skipped"):
            why = example.split(": ", 1)[-1] if rule != "PYP-STREAM-VALUES" else example
            key = "%s %s: %s" % (rule, status, why)
            reasons = self.reasons.setdefault(_area(rule), {})
            reasons[key] = reasons.get(key, 0) + 1
        current = self.status[rule]
        if current is None or _RANK[status] > _RANK[current]:
            self.status[rule] = status
            self.example[rule] = example
        elif status == current and rule not in self.example:
            self.example[rule] = example

    def cover(self, area, what):
        items = self.covered.setdefault(area, [])
        if what not in items:
            items.append(what)

    def violations(self):
        return [r for r, s in self.status.items() if s == "violation"]

    def rows(self):
        for rule, _sev, summary in self.rules:
            status = self.status[rule]
            counts = ", ".join("%d %s" % (n, s) for s, n in sorted(self.counts[rule].items()))
            yield (rule, status or "not exercised", summary, counts, self.example.get(rule, ""))

    def summary(self):
        """Lines: per area, what was probed and how many rules ended in each result."""
        lines = []
        for area in ("C structs (CONF-*)", "producer (PYP-*)", "consumer (PYC-*)"):
            tally = {}
            for rule, status, _s, _c, _e in self.rows():
                if _area(rule) == area:
                    key = "finding (%s)" % status if status in FINDINGS else status
                    tally[key] = tally.get(key, 0) + 1
            counts = ", ".join("%d %s" % (n, k) for k, n in sorted(tally.items()))
            lines.append("%s: %s" % (area, counts or "no rules"))
            for what in self.covered.get(area, []):
                lines.append("  - %s" % what)
            for why, n in sorted(self.reasons.get(area, {}).items()):
                lines.append("  - %s%s" % (why, " (%d times)" % n if n > 1 else ""))
        return lines


# ---------------------------------------------------------------------------------------
# Targets: the array matrix and the consumer of each library.

class Target:
    name = "?"
    version = "?"
    has_read_only = False
    from_dlpack = None

    def matrix(self):
        raise NotImplementedError

    def device_samples(self):
        """(label, array) on devices the matrix lacks, for the stream probes only (their
        exports must not touch the memory, so no device is needed)."""
        return iter(())


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

    def device_samples(self):
        # Exports only describe device memory, so made-up device addresses are enough here.
        for kind, device in (("cuda", (KDLCUDA, 0)), ("hip", (KDLROCM, 0))):
            md = dlbridge.MemoryDescriptor(0x100000, 16, kind)
            md.SetOwner(self)
            yield "float32 (4,) %s" % kind, dlbridge.Tensor(md, "float32", (4,), device=device)


class FactoryTarget(Target):
    def __init__(self, spec):
        module_name, _, factory = spec.partition(":")
        module = importlib.import_module(module_name)
        self.factory = getattr(module, factory)
        self.name = spec
        self.version = str(getattr(module, "__version__", "?"))
        # One module may hold several fake targets: a factory's own from_dlpack comes first.
        self.from_dlpack = getattr(self.factory, "from_dlpack", None) or getattr(module, "from_dlpack", None)

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
    ("max_version=(1, 3), dl_device=(kDLCUDA, 0), copy=False",
     {"max_version": (1, 3), "dl_device": (KDLCUDA, 0), "copy": False}),
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
    if device_type in _HANDLE_DEVICES:
        results.add("PYP-BYTE-OFFSET", "not applicable",
                    "%s: %s data is a handle; byte_offset is how it locates element zero"
                    % (where, _HANDLE_DEVICES[device_type]))
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


# ---------------------------------------------------------------------------------------
# Consumer side: hand-built edge-case producers, one subprocess per probe.

# kind -> (rule, what the probe feeds from_dlpack)
PROBES = {
    "null-strides-legacy": ("PYC-NULL-STRIDES", "a legacy (3, 4) float32 with NULL strides"),
    "negative-strides": ("PYC-NEGATIVE-STRIDES", "(3, 4) float32 with strides (-4, -1)"),
    "zero-size-null-data": ("PYC-ZERO-SIZE", "(2, 0, 3) with NULL data"),
    "read-only-versioned": ("PYC-READ-ONLY", "a READ_ONLY versioned (4,) float32"),
    "byte-offset": ("PYC-BYTE-OFFSET", "(2, 3) float32 at data + byte_offset 32, values compared"),
    "pinned": ("PYC-PINNED-MANAGED", "a kDLCUDAHost (2, 3) float32 (host memory), to the CPU"),
    "managed": ("PYC-PINNED-MANAGED", "a kDLCUDAManaged (2, 3) float32 (host memory), to the CPU"),
    "keywords": ("PYC-KEYWORDS", "copy=None/False/True, device=None and the import's own device"),
    "error-non-producer": ("PYC-ERROR-CLASS", "object() (no __dlpack__): AttributeError"),
    "error-dtype": ("PYC-ERROR-CLASS", "dtype code 42 (unknown): BufferError"),
    "error-device": ("PYC-ERROR-CLASS", "a kDLHexagon tensor (unsupported device): BufferError"),
    "error-producer-raises": ("PYC-ERROR-CLASS", "__dlpack__ raises BufferError: propagated"),
    "error-not-capsule": ("PYC-ERROR-CLASS", "__dlpack__ returns an int: TypeError"),
    "error-bad-copy": ("PYC-ERROR-CLASS", "copy='yes' (not a bool): TypeError"),
}
_PROBE_RULE = {kind: rule for kind, (rule, _what) in PROBES.items()}
# Checked in probe_findings (one edge case each): PYC-NULL-STRIDES, PYC-NEGATIVE-STRIDES,
# PYC-ZERO-SIZE, PYC-READ-ONLY, PYC-BYTE-OFFSET (addresses and values), PYC-PINNED-MANAGED;
# PYC-DELETER-ONCE in EdgeProducer.audit, PYC-KEYWORDS in _probe_keywords, PYC-ERROR-CLASS in
# _probe_error.

# The tensor each kind exports: shape, strides (None: NULL), element zero's offset in elements,
# whether that offset goes to byte_offset (else into data), device type, dtype code, flags.
_EDGE_DEFAULT = {"shape": (2, 3), "strides": (3, 1), "offset": 0, "in_byte_offset": False,
                 "device": KDLCPU, "code": 2, "flags": 0, "legacy_only": False, "null_data": False}
_EDGES = {
    "null-strides-legacy": {"shape": (3, 4), "strides": None, "legacy_only": True},
    "negative-strides": {"shape": (3, 4), "strides": (-4, -1), "offset": 11},
    "zero-size-null-data": {"shape": (2, 0, 3), "strides": (3, 3, 1), "null_data": True},
    "read-only-versioned": {"shape": (4,), "strides": (1,), "flags": FLAG_READ_ONLY},
    "byte-offset": {"offset": 8, "in_byte_offset": True},
    "pinned": {"device": KDLCUDAHOST},
    "managed": {"device": KDLCUDAMANAGED},
    "error-dtype": {"code": 42},
    "error-device": {"device": KDLHEXAGON},
}


def _indices(shape):
    if 0 in shape:
        return []
    out = [()]
    for n in shape:
        out = [i + (k,) for i in out for k in range(n)]
    return out


class EdgeProducer:
    """A producer whose __dlpack__ hands out one hand-built capsule per call (fresh managed
    struct each time, so each capsule's deleter calls are counted on their own). It honours
    max_version (legacy / versioned), copy=True (a copy with IS_COPIED) and dl_device (its own
    device; kDLCPU for host-accessible pinned or managed memory; else BufferError)."""

    def __init__(self, kind):
        self.kind = kind
        self.edge = dict(_EDGE_DEFAULT, **_EDGES.get(kind, {}))
        e = self.edge
        self.calls, self.capsules, self.deletes, self._keep = [], [], {}, []
        self._deleter = _DELETER(self._delete)
        self.buffer = (ctypes.c_float * 64)(*range(64))
        self.base = ctypes.addressof(self.buffer)
        self.shape = (ctypes.c_int64 * 3)(*e["shape"])
        self.strides = (ctypes.c_int64 * 3)(*(e["strides"] or ()))
        strides = e["strides"] or _contiguous(e["shape"])
        self.element0 = None if e["null_data"] else self.base + 4 * e["offset"]
        # what the import must show: shape, strides (None: not checked), element 0, values
        self.expect = (e["shape"], None if 0 in e["shape"] else strides, self.element0)
        self.values = [float(e["offset"] + sum(i * st for i, st in zip(idx, strides)))
                       for idx in _indices(e["shape"])[:8]]

    def _delete(self, managed):
        self.deletes[managed] = self.deletes.get(managed, 0) + 1

    def __dlpack_device__(self):
        return (self.edge["device"], 0)

    def __dlpack__(self, **kwargs):
        self.calls.append(dict(kwargs))
        e = self.edge
        if self.kind == "error-producer-raises":
            raise BufferError("this producer cannot export its data (the probe's own refusal)")
        if self.kind == "error-not-capsule":
            return 12345
        mv = kwargs.get("max_version")
        versioned = mv is not None and mv[0] >= 1 and not e["legacy_only"]
        if e["flags"] & FLAG_READ_ONLY and not versioned:
            raise BufferError("a read-only tensor cannot be exported as a legacy DLManagedTensor")
        device = e["device"]
        wanted = kwargs.get("dl_device")
        if wanted is not None and tuple(wanted) != (device, 0):
            if tuple(wanted) == (KDLCPU, 0) and device in (KDLCUDAHOST, KDLCUDAMANAGED):
                device = KDLCPU  # host-accessible memory: the same bytes, as kDLCPU
            else:
                raise BufferError("cannot export a %s tensor to %r" % (_device_name(device), tuple(wanted)))
        flags = e["flags"]
        data = None if e["null_data"] else self.base + (0 if e["in_byte_offset"] else 4 * e["offset"])
        if kwargs.get("copy") is True and data is not None:
            copy = (ctypes.c_float * 64)(*self.buffer)
            self._keep.append(copy)
            data = ctypes.addressof(copy) + (data - self.base)
            flags |= FLAG_IS_COPIED
        return self._capsule(versioned, data, device, flags)

    def _capsule(self, versioned, data, device, flags):
        e = self.edge
        m = _DLManagedTensorVersioned() if versioned else _DLManagedTensor()
        t = m.dl_tensor
        t.data = data
        t.device.device_type, t.device.device_id = device, 0
        t.ndim = len(e["shape"])
        t.dtype.code, t.dtype.bits, t.dtype.lanes = e["code"], 32, 1
        t.shape = ctypes.cast(self.shape, c_int64_p)
        t.strides = ctypes.cast(self.strides, c_int64_p) if e["strides"] is not None else None
        t.byte_offset = 4 * e["offset"] if e["in_byte_offset"] else 0
        m.deleter = self._deleter
        if versioned:
            m.version.major, m.version.minor, m.flags = 1, 3, flags
        self._keep.append(m)
        self.deletes[ctypes.addressof(m)] = 0
        name = b"dltensor_versioned" if versioned else b"dltensor"
        capsule = _api.PyCapsule_New(ctypes.addressof(m), ctypes.addressof(_NAMES[name]), None)
        self.capsules.append((capsule, name.decode(), ctypes.addressof(m)))
        return capsule

    def audit(self, alive):
        """PYC-DELETER-ONCE for every capsule handed out, once the consumer let go of the import
        (alive=False), or while it still holds it (alive=True: no deleter may have run yet).
        A consumed (renamed) capsule's deleter runs once, by the consumer; an unconsumed one's
        never by the consumer: its destructor runs it, which the audit then does itself."""
        out = []
        for capsule, name, managed in self.capsules:
            now, n = _capsule_name(capsule), self.deletes[managed]
            if alive:
                if now == "used_" + name and n:
                    out.append(("PYC-DELETER-ONCE", "violation",
                                "the deleter ran %d time(s) while the import was alive" % n))
                continue
            if now == "used_" + name:
                out.append(("PYC-DELETER-ONCE", "pass" if n == 1 else "violation",
                            "consumed %r capsule: the deleter ran %d time(s) after the import was dropped"
                            % (name, n)))
            elif now == name:
                out.append(("PYC-DELETER-ONCE", "pass" if n == 0 else "violation",
                            "unconsumed %r capsule: the consumer ran its deleter %d time(s) without "
                            "renaming it (its destructor runs it)" % (name, n)))
                if n == 0:
                    self._deleter(managed)  # what the capsule's destructor does
            else:
                out.append(("PYC-DELETER-ONCE", "violation", "the capsule was renamed %r" % now))
        return out


def _describe_import(result):
    """Shape, strides (elements), element 0's address and device type of an imported array:
    read through its own __dlpack__ (versioned first, so read-only imports can answer), else
    __array_interface__ or torch-style data_ptr()/stride(). Raises BufferError when none works."""
    for kwargs in ({"max_version": (1, 3)}, {}):
        try:
            capsule = result.__dlpack__(**kwargs)
        except Exception:  # noqa: BLE001 - a legacy or refusing __dlpack__: try the next way
            continue
        info = _safe_read(capsule)
        if info is None:
            continue
        element0 = (info["data"] + info["byte_offset"]) if info["data"] else None
        strides = info["strides"] or _contiguous(info["shape"])
        return info["shape"], strides, element0, info["device"][0]
    ai = getattr(result, "__array_interface__", None)
    if ai is not None:
        shape = tuple(ai["shape"])
        item = int(ai["typestr"][2:])
        strides = tuple(b // item for b in ai["strides"]) if ai.get("strides") else _contiguous(shape)
        return shape, strides, ai["data"][0] or None, KDLCPU
    if hasattr(result, "data_ptr") and hasattr(result, "stride"):
        device = KDLCUDA if getattr(result, "is_cuda", False) else KDLCPU
        return tuple(result.shape), tuple(result.stride()), result.data_ptr() or None, device
    raise BufferError("the imported object can be described neither by __dlpack__, "
                      "__array_interface__ nor data_ptr()/stride()")


def _contiguous(shape):
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def _read_values(shape, strides, element0, count):
    """The first `count` float32 elements (row-major order) of a host-memory import."""
    return [ctypes.c_float.from_address(element0 + 4 * sum(i * s for i, s in zip(idx, strides))).value
            for idx in _indices(shape)[:count]]


def _import_problems(producer, got):
    """What an import got wrong: shape, strides, element 0 and the element values."""
    shape, strides, element0 = producer.expect
    got_shape, got_strides, got0, got_device = got
    problems = []
    if tuple(got_shape) != shape:
        problems.append("shape %r, expected %r" % (got_shape, shape))
    elif strides is not None and got_strides is not None:
        if [i for i, n in enumerate(shape) if n > 1 and got_strides[i] != strides[i]]:
            problems.append("strides %r, expected %r" % (got_strides, strides))
    if element0 is not None and got0 != element0:
        problems.append("element 0 at %#x, expected %#x (data + byte_offset)" % (got0 or 0, element0))
    if not problems[:1] or problems[0].startswith("element 0"):  # the layout is right: read it
        if got0 and got_device in (KDLCPU, KDLCUDAHOST, KDLCUDAMANAGED) and producer.values:
            values = _read_values(got_shape, got_strides, got0, len(producer.values))
            if values != producer.values:
                problems.append("values %r, expected %r" % (values, producer.values))
    return problems


def probe_findings(kind, target):
    """One probe into target.from_dlpack; a list of (rule, status, message)."""
    if kind == "keywords":
        return _probe_keywords(target)
    if kind.startswith("error-"):
        return _probe_error(kind, target)
    out = []
    producer = EdgeProducer(kind)
    rule = _PROBE_RULE[kind]
    try:
        result = target.from_dlpack(producer)
    except Exception as e:  # noqa: BLE001
        status = "warning" if kind in ("negative-strides", "read-only-versioned", "pinned", "managed") else "violation"
        if kind == "read-only-versioned" and not any(c.get("max_version") for c in producer.calls):
            status = "warning"
        out.append((rule, status, "from_dlpack raised %s: %s" % (type(e).__name__, e)))
        result = None
    mv = [c.get("max_version") for c in producer.calls]  # PYC-MAX-VERSION
    out.append(("PYC-MAX-VERSION", "pass" if any(v is not None for v in mv) else "warning",
                "__dlpack__ was called with %s" % (producer.calls,)))
    if result is not None:
        got = None
        try:
            got = _describe_import(result)
        except BufferError as e:
            if kind != "read-only-versioned":
                out.append((rule, "warning", "the imported array cannot be re-exported to check it: %s" % e))
        if got is not None:
            problems = _import_problems(producer, got)
            if kind in ("pinned", "managed") and len(problems) == 1 and problems[0].startswith("element 0") \
                    and _values_ok(producer, got):
                out.append((rule, "warning", "imported a copy (%s); zero-copy expected for "
                            "host-accessible memory" % "; ".join(problems)))
            elif problems:
                out.append((rule, "violation", "; ".join(problems)))
            elif kind != "read-only-versioned":
                out.append((rule, "pass", "imported %r zero-copy%s" % (
                    producer.expect[0], " with the right values" if producer.values else "")))
        if kind == "read-only-versioned":
            shared = got is None or got[2] is None or got[2] == producer.expect[2]
            if shared and not _is_read_only(result) and got is not None:
                out.append((rule, "violation", "imported a READ_ONLY tensor as writable shared memory"))
            else:
                out.append((rule, "pass", "read-only kept (or copied)"))
        names = [_capsule_name(c[0]) for c in producer.capsules]
        if names and names[-1] in ("used_dltensor", "used_dltensor_versioned"):  # PYC-RENAME
            out.append(("PYC-RENAME", "pass", "capsule renamed %r" % names[-1]))
        else:
            out.append(("PYC-RENAME", "violation", "capsule names after import: %r" % names))
        out.extend(producer.audit(alive=True))
        del result
    gc.collect()
    out.extend(producer.audit(alive=False))
    return out


def _values_ok(producer, got):
    shape, strides, got0, device = got
    if not got0 or device not in (KDLCPU, KDLCUDAHOST, KDLCUDAMANAGED):
        return False
    return _read_values(shape, strides, got0, len(producer.values)) == producer.values


def _probe_keywords(target):
    """PYC-KEYWORDS: from_dlpack(x, *, device=None, copy=None) on plain CPU producers."""
    rule, out, unsupported, own_device = "PYC-KEYWORDS", [], set(), None
    first = EdgeProducer("plain")  # a plain import first: the device object the library uses
    try:
        own_device = getattr(target.from_dlpack(first), "device", None)
    except Exception as e:  # noqa: BLE001 - reported by the other probes; here only the device
        out.append((rule, "skipped", "from_dlpack(x) without keywords failed (%s), so its device "
                    "object is unknown" % type(e).__name__))
    gc.collect()
    out.extend(first.audit(alive=False))
    cases = [("copy=None", {"copy": None}, "reuse"), ("copy=False", {"copy": False}, "share"),
             ("copy=True", {"copy": True}, "copy"), ("device=None", {"device": None}, "reuse"),
             ("device=<the import's .device>", None, "share")]
    for label, kwargs, expect in cases:
        if kwargs is None:
            if own_device is None:
                out.append((rule, "skipped", "%s: the imported array has no .device" % label))
                continue
            kwargs = {"device": own_device}
        if set(kwargs) & unsupported:
            continue
        producer = EdgeProducer("plain")
        try:
            result = target.from_dlpack(producer, **kwargs)
        except TypeError as e:
            unsupported |= set(kwargs)
            out.append((rule, "violation", "from_dlpack(x, %s) raised TypeError: %s (array API 2023.12: "
                        "from_dlpack(x, /, *, device=None, copy=None))" % (label, e)))
            continue
        except Exception as e:  # noqa: BLE001 - a plain CPU tensor can always be imported so
            out.append((rule, "violation", "from_dlpack(x, %s) raised %s: %s" % (label, type(e).__name__, e)))
            gc.collect()
            out.extend(producer.audit(alive=False))
            continue
        try:
            got = _describe_import(result)
        except BufferError as e:
            out.append((rule, "warning", "from_dlpack(x, %s): cannot inspect the import: %s" % (label, e)))
            got = None
        if got is not None:
            shared = got[2] == producer.element0
            values = _values_ok(producer, got)
            if expect == "share" and not shared:
                out.append((rule, "violation", "from_dlpack(x, %s) copied (element 0 at %#x, the producer's "
                            "at %#x); it must not" % (label, got[2] or 0, producer.element0)))
            elif expect == "copy" and shared:
                out.append((rule, "violation", "from_dlpack(x, %s) shares the producer's memory; it must "
                            "always copy" % label))
            elif not values:
                out.append((rule, "violation", "from_dlpack(x, %s): wrong element values" % label))
            elif expect == "reuse" and not shared:
                out.append((rule, "warning", "from_dlpack(x, %s) copied although the memory could be "
                            "reused (the standard: reuse if possible)" % label))
            else:
                out.append((rule, "pass", "from_dlpack(x, %s) %s" % (label, "shared" if shared else "copied")))
        del result
        gc.collect()
        out.extend(producer.audit(alive=False))
    return out


# kind -> (the argument from_dlpack gets, keyword arguments, the expected class, the class when
# the expected one is not raised: warning / violation)
_ERROR_CASES = {
    "error-non-producer": (AttributeError, "warning"),
    "error-dtype": (BufferError, "warning"),
    "error-device": (BufferError, "warning"),
    "error-producer-raises": (BufferError, "violation"),
    "error-not-capsule": (TypeError, "warning"),
    "error-bad-copy": (TypeError, "warning"),
}


def _probe_error(kind, target):
    """PYC-ERROR-CLASS: an input the consumer must refuse, and the class it raises."""
    rule, (expected, otherwise) = "PYC-ERROR-CLASS", _ERROR_CASES[kind]
    what = PROBES[kind][1]
    producer = None if kind == "error-non-producer" else EdgeProducer(kind)
    arg = object() if producer is None else producer
    kwargs = {"copy": "yes"} if kind == "error-bad-copy" else {}
    out = []
    if kwargs:  # a TypeError only says something if copy=None itself is accepted
        plain = EdgeProducer("plain")
        try:
            del_me = target.from_dlpack(plain, copy=None)
            del del_me
        except TypeError as e:
            gc.collect()
            return [(rule, "skipped", "%s: from_dlpack does not take copy= at all (%s; see PYC-KEYWORDS)"
                     % (what, e))] + plain.audit(alive=False)
        except Exception:  # noqa: BLE001 - copy=None is accepted; the import's fate is another probe's
            pass
        gc.collect()
        out.extend(plain.audit(alive=False))
    try:
        result = target.from_dlpack(arg, **kwargs)
    except expected as e:
        out.append((rule, "pass", "%s: %s: %s" % (what, type(e).__name__, e)))
    except Exception as e:  # noqa: BLE001
        status = otherwise
        if kind == "error-non-producer" and isinstance(e, TypeError):
            status = "warning"  # the class before the array API's 2023.12 revision
        out.append((rule, status, "%s: raised %s instead: %s" % (what, type(e).__name__, e)))
    else:
        status = "warning" if kind == "error-bad-copy" else "violation"
        out.append((rule, status, "%s: from_dlpack accepted it and returned %s" % (what, type(result).__name__)))
        del result
    gc.collect()
    if producer is not None:
        out.extend(producer.audit(alive=False))
    return out


def run_probe(kind, target):
    """In the child: one probe's findings as one JSON line."""
    print("DLBRIDGE-PROBE " + json.dumps(probe_findings(kind, target)))
    sys.stdout.flush()


def check_consumer(target, spec, results, log, isolate=True, kinds=None):
    """Every probe (or `kinds`) into target.from_dlpack: each in a subprocess of this command
    (isolate; spec names the target there), or in this process (tests of fake consumers)."""
    if target.from_dlpack is None:
        log("  %s has no from_dlpack: consumer side not checked" % target.name)
        for rule, _sev, _summary in PY_RULES:
            if rule.startswith("PYC-"):
                results.add(rule, "not applicable", "%s has no from_dlpack" % target.name)
        return
    for kind in kinds or PROBES:
        rule, what = PROBES[kind]
        results.cover("consumer (PYC-*)", "%s: %s" % (kind, what))
        if not isolate:
            for r, status, message in probe_findings(kind, target):
                results.add(r, status, "%s: %s" % (kind, message))
            continue
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
        lines = ["| rule | result | what it checks | the standard | counts | example |",
                 "|---|---|---|---|---|---|"]
        for rule, status, summary, counts, example in results.rows():
            lines.append("| %s | %s | %s | %s | %s | %s |" % (
                rule, status, summary, CITES.get(rule, "DLPack 1.3 header (spec/conformance.md)"),
                counts, example.replace("|", "\\|")))
        lines += ["", "## Coverage", ""] + ["- " + l if not l.startswith("  ") else "  " + l
                                            for l in results.summary()]
        return header, "\n".join(lines)
    lines = [header, ""]
    for rule, status, _summary, _counts, example in results.rows():
        lines.append("%-22s %-15s %s" % (rule, status, example))
    lines += ["", "Coverage:"] + ["  " + l for l in results.summary()]
    return header, "\n".join(lines)


def check(target, spec=None, isolate=True, log=lambda _msg: None):
    """Both sides of `target` (a Target); the Results. spec names the target for the consumer
    probes' subprocesses (isolate), else they run in this process."""
    results = Results(list(dlbridge._checker_rules()) + list(PY_RULES))
    check_producer(target, results, log)
    check_consumer(target, spec, results, log, isolate=isolate and spec is not None)
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m dlbridge.check", description=__doc__.split("\n\n")[0])
    parser.add_argument("target", help="numpy, torch, dlbridge or module:factory")
    parser.add_argument("--report-only", action="store_true", help="exit 0 even with violations")
    parser.add_argument("--allow", default="", metavar="RULE,...",
                        help="violations of these rules are reported but do not fail the run")
    parser.add_argument("--markdown", metavar="FILE", help="also write the table as Markdown")
    parser.add_argument("--probe", help=argparse.SUPPRESS)
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    args = parser.parse_args(argv)
    target = make_target(args.target)
    if args.probe:
        run_probe(args.probe, target)
        return 0
    log = (lambda _msg: None) if args.quiet else (lambda msg: print(msg, file=sys.stderr))
    results = check(target, args.target, log=log)
    header, text = render(target, results, markdown=False)
    print(text)
    if args.markdown:
        _h, table = render(target, results, markdown=True)
        with open(args.markdown, "w") as f:
            f.write("# %s\n\n%s\n" % (header, table))
    bad = results.violations()
    allowed = {r.strip() for r in args.allow.split(",") if r.strip()}
    if bad:
        print("\nviolations: %s" % ", ".join(bad))
    failing = [r for r in bad if r not in allowed]
    if bad and not failing:
        print("(all allowed by --allow)")
    return 0 if args.report_only or not failing else 1


if __name__ == "__main__":
    sys.exit(main())
