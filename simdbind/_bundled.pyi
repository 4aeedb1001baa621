"""Types of the compiled cffi module of the bundled library (built by build_simd.py)."""

from typing import Any

ffi: Any
lib: Any
