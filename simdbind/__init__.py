"""simdbind: NumPy-first Python access to the Synet functions of the Simd library.

Functions take and return NumPy arrays and validate every argument before C runs. They call the bundled library
(our Simd-compatible implementation) unless ``SIMD_LIBRARY`` names another, or a ``library=`` is passed.
"""

from simdbind.elementwise import eltwise
# elementwise family
from simdbind.elementwise import lrn, lrn_onnx, shuffle, softmax, unary
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
    "unary", "softmax", "lrn", "lrn_onnx", "shuffle",  # elementwise family
    "Activation", "EltwiseOperation", "TensorData", "TensorFormat", "UnaryOperation",
    "SimdBindError", "ArgumentError", "DTypeError", "IsaError", "LibraryError", "UnsupportedLibraryError",
    "FunctionNotAvailableError", "ContextClosedError", "UpstreamDefectError",
]

# -- inner-product family (and the activation module it shares with the convolution) --------------------------
from simdbind import activation  # noqa: E402
from simdbind.inner_product import InnerProduct32f, inner_product, inner_product_8i  # noqa: E402

__all__ += ["activation", "InnerProduct32f", "inner_product", "inner_product_8i"]
