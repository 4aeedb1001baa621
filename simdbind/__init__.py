"""simdbind: NumPy-first Python access to the Synet functions of the Simd library.

Functions take and return NumPy arrays and validate every argument before C runs. They call the bundled library
(our Simd-compatible implementation) unless ``SIMD_LIBRARY`` names another, or a ``library=`` is passed.
"""

from simdbind.elementwise import eltwise
from simdbind.enums import Activation, EltwiseOperation, TensorData, TensorFormat, UnaryOperation
from simdbind.errors import (
    ArgumentError,
    ContextClosedError,
    DTypeError,
    FunctionNotAvailableError,
    IsaError,
    LibraryError,
    SimdBindError,
    UnsupportedLibraryError,
    UpstreamDefectError,
)
from simdbind.library import ISAS, Library, bundled_path, default_library, load, set_default_library

__version__ = "0.1.0"

__all__ = [
    "ISAS", "Library", "load", "default_library", "set_default_library", "bundled_path",
    "eltwise",
    "Activation", "EltwiseOperation", "TensorData", "TensorFormat", "UnaryOperation",
    "SimdBindError", "ArgumentError", "DTypeError", "IsaError", "LibraryError", "UnsupportedLibraryError",
    "FunctionNotAvailableError", "ContextClosedError", "UpstreamDefectError",
]

# -- convolution family ------------------------------------------------------------------------------------------
from simdbind.convolution import Convolution32f, conv2d, convert_weight  # noqa: E402

__all__ += ["Convolution32f", "conv2d", "convert_weight"]
