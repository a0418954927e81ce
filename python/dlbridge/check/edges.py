"""Consumer side, the producers: hand-built edge-case capsules (one kind per probe), each
deleter call counted so that the audit can say whether the consumer ran it exactly once."""
import ctypes

from ..dlpack_ctypes import (DELETER as _DELETER, DLManagedTensor as _DLManagedTensor,
                             DLManagedTensorVersioned as _DLManagedTensorVersioned, c_int64_p)
from .capsules import FLAG_IS_COPIED, FLAG_READ_ONLY, _NAMES, _api, _capsule_name
from .devices import HOST_ACCESSIBLE, KDLCPU, KDLCUDAHOST, KDLCUDAMANAGED, KDLHEXAGON, _device_name

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
            if tuple(wanted) == (KDLCPU, 0) and device in HOST_ACCESSIBLE:
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


def _contiguous(shape):
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))
