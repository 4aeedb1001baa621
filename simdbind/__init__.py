"""simdbind: NumPy-first Python access to the Synet functions of the Simd library.

Functions take and return NumPy arrays and validate every argument before C runs. They call the bundled library
(our Simd-compatible implementation) unless ``SIMD_LIBRARY`` names another, or a ``library=`` is passed.
"""

from simdbind import activation
from simdbind.convolution import Convolution32f, conv2d, convert_weight
from simdbind.elementwise import eltwise, lrn, lrn_onnx, shuffle, softmax, unary
from simdbind.enums import Activation, EltwiseOperation, TensorData, TensorFormat, UnaryOperation
from simdbind.errors import (
    ArgumentError,
    ContextClosedError,
    ContextCopyError,
    DTypeError,
    FunctionNotAvailableError,
    IsaError,
    LibraryError,
    OutOfMemoryError,
    SimdBindError,
    UnsupportedLibraryError,
    UpstreamDefectError,
)
from simdbind.gather import GatherElements, gather_elements
from simdbind.inner_product import InnerProduct32f, inner_product, inner_product_8i
from simdbind.library import ISAS, Library, bundled_path, default_library, load, set_default_library
from simdbind.pooling import pooling_average, pooling_max, pooling_output_size

__version__ = "0.1.0"

__all__ = [
    "ISAS", "Library", "load", "default_library", "set_default_library", "bundled_path",
    # elementwise
    "eltwise", "unary", "softmax", "lrn", "lrn_onnx", "shuffle",
    # pooling and gather
    "pooling_average", "pooling_max", "pooling_output_size", "GatherElements", "gather_elements",
    # inner product (and the activation module shared with convolution)
    "activation", "InnerProduct32f", "inner_product", "inner_product_8i",
    # convolution
    "Convolution32f", "conv2d", "convert_weight",
    # enums and errors
    "Activation", "EltwiseOperation", "TensorData", "TensorFormat", "UnaryOperation",
    "SimdBindError", "ArgumentError", "DTypeError", "IsaError", "LibraryError", "UnsupportedLibraryError",
    "FunctionNotAvailableError", "ContextClosedError", "ContextCopyError", "OutOfMemoryError",
    "UpstreamDefectError",
]
