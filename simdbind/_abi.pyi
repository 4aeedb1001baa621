"""Types of the generated cffi ABI-mode declarations (built by build_simd.py)."""

from typing import Any

ffi: Any
