"""The exceptions simdbind raises. Each names the argument (or library, or function) and the rule it broke."""

from __future__ import annotations


class SimdBindError(Exception):
    """Base class of every simdbind error.

    Examples
    --------
    >>> try:
    ...     simdbind.unary([1.0], "exp", library="bundled")
    ... except simdbind.SimdBindError as error:
    ...     print(type(error).__name__)
    ArgumentError
    """


class ArgumentError(SimdBindError, ValueError):
    """An argument breaks a rule of the function (shape, range, aliasing, ...). Raised before any C code runs.

    Also a :class:`ValueError`. The message names the argument and the rule; nothing is written on error.

    Examples
    --------
    >>> x = np.zeros(4, np.float32)
    >>> simdbind.eltwise([x, x], "sum", out=np.zeros(3, np.float32))
    Traceback (most recent call last):
    ...
    simdbind.errors.ArgumentError: out: must have shape (4,), got (3,)
    """


class DTypeError(ArgumentError, TypeError):
    """An array argument has the wrong element type (simdbind never casts arrays silently).

    Also an :class:`ArgumentError` and a :class:`TypeError`.

    Examples
    --------
    >>> simdbind.unary(np.zeros(4), "exp")                     # float64 where float32 is required
    Traceback (most recent call last):
    ...
    simdbind.errors.DTypeError: x: must have dtype float32, got float64
    """


class IsaError(SimdBindError, ValueError):
    """An ISA was asked for that is unknown, unsupported by this CPU/OS, or cannot be chosen for this library.

    Examples
    --------
    >>> simdbind.load("bundled").set_isa("avx1024")
    Traceback (most recent call last):
    ...
    simdbind.errors.IsaError: isa: must be one of base, sse41, avx2, avx512bw, avx512vnni, got 'avx1024'
    """


class LibraryError(SimdBindError, OSError):
    """A Simd shared library cannot be loaded or is not a Simd library.

    Also an :class:`OSError`.

    Examples
    --------
    >>> simdbind.load("bundled", mode="fast")
    Traceback (most recent call last):
    ...
    simdbind.errors.LibraryError: mode: must be 'api' or 'abi', got 'fast'
    """


class UnsupportedLibraryError(LibraryError):
    """The library is a Simd build older than the oldest API generation simdbind supports (v7.0.160).

    The inner-product and convolution signatures changed in v7.0.160, so calls into an older build would pass the
    wrong arguments; such a library is refused at load time.

    Examples
    --------
    >>> issubclass(simdbind.UnsupportedLibraryError, simdbind.LibraryError)
    True
    """


class OutOfMemoryError(SimdBindError, MemoryError):
    """The library could not allocate memory that a call needs; the call wrote nothing (no output, no `out=`).

    Also a :class:`MemoryError`. The bundled library reports each failed allocation (``SimdBindLastError``), and the
    wrappers raise this instead of returning what the call could not compute.

    Examples
    --------
    >>> issubclass(simdbind.OutOfMemoryError, MemoryError)
    True
    """


class FunctionNotAvailableError(SimdBindError, NotImplementedError):
    """The loaded library does not provide this function.

    Also a :class:`NotImplementedError`. The message names the function and the library.

    Examples
    --------
    >>> simdbind.load("bundled").function("SimdNoSuchFunction")
    Traceback (most recent call last):
    ...
    simdbind.errors.FunctionNotAvailableError: SimdNoSuchFunction is not provided by the bundled library ...
    """


class ContextClosedError(SimdBindError, RuntimeError):
    """A context object was used after close().

    Examples
    --------
    >>> ip = simdbind.InnerProduct32f(1, 1, 1, weight=np.ones((1, 1), np.float32))
    >>> ip.close()
    >>> ip.forward(np.ones((1, 1), np.float32))
    Traceback (most recent call last):
    ...
    simdbind.errors.ContextClosedError: InnerProduct32f: the context is closed
    """


class ContextCopyError(SimdBindError, TypeError):
    """A context object was copied or pickled: a copy would share the C context that it owns.

    Create a second context with the same arguments instead.

    Examples
    --------
    >>> import copy
    >>> ip = simdbind.InnerProduct32f(1, 1, 1, weight=np.ones((1, 1), np.float32))
    >>> copy.copy(ip)
    Traceback (most recent call last):
    ...
    simdbind.errors.ContextCopyError: InnerProduct32f: a context cannot be copied or pickled: ...
    """


class UpstreamDefectError(SimdBindError, RuntimeError):
    """The call would hit a known defect of the loaded library (memory corruption or garbage) and has no safe route.

    Raised only for external (upstream) libraries, for the versions that the defect's catalogue entry names; the
    bundled library never raises it.

    Examples
    --------
    >>> issubclass(simdbind.UpstreamDefectError, RuntimeError)
    True
    """
