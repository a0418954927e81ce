"""dlbridge: zero-copy DLPack exchange of memory descriptors.

The package re-exports the CPython extension ``dlbridge._dlbridge`` (python/src/module.cpp)
so that ``dlbridge.Tensor``, ``dlbridge.from_dlpack`` and the constants live at the top
level, and adds pure-Python tools beside it (``python3 -m dlbridge.check``,
spec/conformance.md)."""
from . import _dlbridge

globals().update({name: getattr(_dlbridge, name) for name in dir(_dlbridge)
                  if not name.startswith("__")})
__version__ = _dlbridge.__version__
__all__ = [name for name in dir(_dlbridge) if not name.startswith("_")]
