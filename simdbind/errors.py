"""The exceptions simdbind raises. Each names the argument (or library, or function) and the rule it broke."""

from __future__ import annotations


class SimdBindError(Exception):
    """Base class of every simdbind error."""


class ArgumentError(SimdBindError, ValueError):
    """An argument breaks a rule of the function (shape, range, aliasing, ...). Raised before any C code runs."""


class DTypeError(ArgumentError, TypeError):
    """An array argument has the wrong element type (simdbind never casts arrays silently)."""


class IsaError(SimdBindError, ValueError):
    """An ISA was asked for that is unknown, unsupported by this CPU/OS, or cannot be chosen for this library."""


class LibraryError(SimdBindError, OSError):
    """A Simd shared library cannot be loaded or is not a Simd library."""


class UnsupportedLibraryError(LibraryError):
    """The library is a Simd build older than the oldest API generation simdbind supports."""


class OutOfMemoryError(SimdBindError, MemoryError):
    """The library could not allocate memory that a call needs; the call wrote nothing (no output, no `out=`)."""


class FunctionNotAvailableError(SimdBindError, NotImplementedError):
    """The loaded library does not provide this function."""


class ContextClosedError(SimdBindError, RuntimeError):
    """A context object was used after close()."""


class ContextCopyError(SimdBindError, TypeError):
    """A context object was copied or pickled: a copy would share the C context that it owns."""


class UpstreamDefectError(SimdBindError, RuntimeError):
    """The call would hit a known defect of the loaded library (memory corruption or garbage) and has no safe route."""
