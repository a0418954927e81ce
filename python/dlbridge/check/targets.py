"""Targets: the array matrix each library exports and the consumer it imports with."""
import ctypes
import importlib

import dlbridge

from .capsules import FLAG_READ_ONLY
from .devices import KDLCUDA, KDLROCM

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

