# Type stubs for the package: __init__.py re-exports everything of the extension
# dlbridge._dlbridge (described in _dlbridge.pyi), so these are the same names.
from . import _dlbridge as _dlbridge
from ._dlbridge import DLPACK_VERSION as DLPACK_VERSION
from ._dlbridge import FLAG_IS_COPIED as FLAG_IS_COPIED
from ._dlbridge import FLAG_READ_ONLY as FLAG_READ_ONLY
from ._dlbridge import MemoryDescriptor as MemoryDescriptor
from ._dlbridge import Tensor as Tensor
from ._dlbridge import __version__ as __version__
from ._dlbridge import _check_capsule as _check_capsule
from ._dlbridge import _checker_rules as _checker_rules
from ._dlbridge import _device_table as _device_table
from ._dlbridge import _python_advice as _python_advice
from ._dlbridge import _raise_error as _raise_error
from ._dlbridge import current_stream as current_stream
from ._dlbridge import from_dlpack as from_dlpack
from ._dlbridge import kDLCPU as kDLCPU
from ._dlbridge import kDLCUDA as kDLCUDA
from ._dlbridge import kDLCUDAHost as kDLCUDAHost
from ._dlbridge import kDLCUDAManaged as kDLCUDAManaged
from ._dlbridge import kDLOneAPI as kDLOneAPI
from ._dlbridge import kDLROCM as kDLROCM
from ._dlbridge import kDLROCMHost as kDLROCMHost
from ._dlbridge import set_current_stream as set_current_stream

__all__ = [
    "DLPACK_VERSION", "FLAG_IS_COPIED", "FLAG_READ_ONLY", "MemoryDescriptor", "Tensor",
    "current_stream", "from_dlpack", "kDLCPU", "kDLCUDA", "kDLCUDAHost", "kDLCUDAManaged",
    "kDLOneAPI", "kDLROCM", "kDLROCMHost", "set_current_stream",
]
