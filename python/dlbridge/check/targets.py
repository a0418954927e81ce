"""Targets: the array matrix each library exports and the consumer it imports with."""
import ctypes
import importlib

import dlbridge

from .capsules import FLAG_READ_ONLY, _safe_read
from .devices import KDLCUDA, KDLROCM

class Target:
    name = "?"
    version = "?"
    has_read_only = False
    from_dlpack = None
    consumer = None  # the --consumer spec, when one was given

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


FACTORY_CONTRACT = """\
module:factory  any importable module and a callable in it (or an attribute path such as
                pkg.mod:Arrays.make). Called with no arguments, it returns an iterable (a list,
                a tuple, a generator) of the arrays to check, each either an array (an object
                with __dlpack__) or a (label, array) pair; a single array is refused even when
                it is iterable itself (a pyarrow.Array is). The consumer checked is
                --consumer if given, else the factory's own from_dlpack attribute, else the
                module's from_dlpack; without one the consumer side is not applicable."""

EXAMPLE_FACTORY = """\
# my_arrays.py, then: python3 -m dlbridge.check my_arrays:arrays --markdown report.md
import numpy as np
import mylib                      # the library under test

def arrays():
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    yield "float32 2-d", mylib.asarray(base)
    yield "float32 transposed", mylib.asarray(base).T
    yield "int8 empty", mylib.zeros((0, 3), dtype="int8")

from_dlpack = mylib.from_dlpack   # or: --consumer mylib.interop:from_dlpack"""


class FactoryError(ValueError):
    """A factory that breaks FACTORY_CONTRACT; the message says what it returned and what is
    expected (the command prints it and exits 2)."""


def _type_name(obj):
    t = type(obj)
    return t.__name__ if t.__module__ == "builtins" else "%s.%s" % (t.__module__, t.__qualname__)


def _resolve(spec, what):
    """module:attr.path -> the object; FactoryError naming `what` when it cannot be found."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise FactoryError("%s %r is not of the form module:attribute" % (what, spec))
    try:
        obj = importlib.import_module(module_name)
    except ImportError as e:
        raise FactoryError("%s %r: cannot import %s (%s)" % (what, spec, module_name, e)) from None
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise FactoryError("%s %r: %s has no attribute %r" % (what, spec, module_name, attr)) from None
    return obj


class FactoryTarget(Target):
    def __init__(self, spec):
        module_name = spec.partition(":")[0]
        self.factory = _resolve(spec, "TARGET")
        if not callable(self.factory):
            raise FactoryError("TARGET %r is a %s, not a callable returning arrays.\n%s" % (
                spec, _type_name(self.factory), FACTORY_CONTRACT))
        module = importlib.import_module(module_name)
        self.name = spec
        self.version = str(getattr(module, "__version__", "?"))
        # One module may hold several fake targets: a factory's own from_dlpack comes first.
        self.from_dlpack = getattr(self.factory, "from_dlpack", None) or getattr(module, "from_dlpack", None)
        self.has_read_only = True  # read-only arrays are found by _is_read_only, through DLPack too

    # CHK-1: the factory's contract (FACTORY_CONTRACT), checked before any array is.
    def validate(self):
        """Calls the factory once and checks what it returned (CHK-1): a FactoryError saying
        what came back and what is expected, else the (label, array) list."""
        result = self.factory()
        if hasattr(result, "__dlpack__"):
            # A single array: iterating it would check its elements (a pyarrow.Array yields
            # scalars), not the array.
            raise FactoryError(
                "the factory %s returned a single array (%s), not an iterable of arrays: return "
                "[array] or [(label, array), ...]\n%s" % (self.name, _type_name(result), FACTORY_CONTRACT))
        if isinstance(result, (str, bytes)) or not hasattr(result, "__iter__"):
            raise FactoryError("the factory %s returned %s, which is not an iterable of arrays\n%s" % (
                self.name, _type_name(result), FACTORY_CONTRACT))
        items = []
        for i, item in enumerate(result):
            if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str):
                label, array = item
            else:
                label, array = "array %d" % i, item
            if not hasattr(array, "__dlpack__"):
                raise FactoryError(
                    "the factory %s: item %d is %s, which has no __dlpack__ (each item must be an "
                    "array or a (label, array) pair)\n%s" % (self.name, i, _type_name(array), FACTORY_CONTRACT))
            items.append((label, array))
        if not items:
            raise FactoryError("the factory %s returned no arrays\n%s" % (self.name, FACTORY_CONTRACT))
        if self.version == "?":  # a factory module of its own: the arrays' package's version
            package = type(items[0][1]).__module__.split(".")[0]
            try:
                version = getattr(importlib.import_module(package), "__version__", None)
            except Exception:  # noqa: BLE001 - no package to ask: the version stays unknown
                version = None
            if version is not None:
                self.version = "(%s %s)" % (package, version)
        return items

    def matrix(self):
        return iter(self.validate())


# CHK-3: --consumer names the from_dlpack the consumer side checks.
def load_consumer(target, spec):
    """--consumer module:attr (CHK-3): the from_dlpack the consumer side checks, for a library
    whose from_dlpack is not where the target would look (torch.utils.dlpack, an extension's
    function, a namespace of array-api-compat)."""
    consumer = _resolve(spec, "--consumer")
    if not callable(consumer):
        raise FactoryError("--consumer %r is a %s, not a callable" % (spec, _type_name(consumer)))
    target.from_dlpack = consumer
    target.consumer = spec
    return target


def make_target(spec, consumer=None):
    if spec == "numpy":
        target = NumpyTarget()
    elif spec == "torch":
        target = TorchTarget()
    elif spec == "dlbridge":
        target = DlbridgeTarget()
    elif ":" in spec:
        target = FactoryTarget(spec)
    else:
        raise FactoryError("unknown TARGET %r: numpy, torch, dlbridge or module:factory\n%s" % (
            spec, FACTORY_CONTRACT))
    return load_consumer(target, consumer) if consumer else target


# CHK-4: read-only arrays are found through DLPack when their type has no flag of its own.
def _is_read_only(array):
    """Whether an array is read-only: its own flag (NumPy's flags.writeable, a readonly or
    read_only attribute), else what it says through DLPack (CHK-4): the READ_ONLY flag of its
    versioned capsule, for arrays whose type has no such attribute (nanobind's nb_ndarray)."""
    flags = getattr(array, "flags", None)
    if flags is not None and hasattr(flags, "writeable"):
        return not flags.writeable
    for name in ("readonly", "read_only"):
        value = getattr(array, name, None)
        if isinstance(value, bool):
            return value
    try:
        capsule = array.__dlpack__(max_version=(1, 3))
    except Exception:  # noqa: BLE001 - a legacy-only or refusing producer says nothing here
        return False
    info = _safe_read(capsule)  # not consumed: its destructor runs the deleter
    return bool(info and info["version"] and info["flags"] & FLAG_READ_ONLY)
