"""Loading a Simd library: the bundled one (cffi API mode) or any libSimd by path (cffi ABI mode).

A :class:`Library` knows what it loaded (path, kind, mode, version, API generation, capabilities), hands out its
C functions by name (raising :class:`FunctionNotAvailableError` for the ones it lacks) and, for the bundled
library, selects the ISA its calls use.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import re
import threading
from dataclasses import dataclass, field
from typing import Any, Iterator

from simdbind._abi import ffi as _abi_ffi
from simdbind._context import clear_plan_caches
from simdbind._elf import check_shared_library
from simdbind.errors import (FunctionNotAvailableError, IsaError, LibraryError, OutOfMemoryError,
                             UnsupportedLibraryError)

#: ISA names of the bundled library, lowest first (the index is the C-side ISA number): the names of the enum
#: ``sb_isa_id`` of csrc/internal/isa_list.h, ``SB_ISA_AVX2`` -> ``"avx2"``.
ISAS: tuple[str, ...] = tuple(name.removeprefix("SB_ISA_").lower()
                              for _, name in sorted(_abi_ffi.typeof("sb_isa_id").elements.items()))

#: Oldest upstream release whose signatures simdbind's declarations match (InnerProduct32fInit/Forward changed in
#: v7.0.160, Softmax32f and GatherElements appeared there).
MINIMUM_VERSION = (7, 0, 160)

_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")


@dataclass
class Library:
    """One loaded Simd library. Create it with :func:`load`.

    Every function of simdbind takes one as ``library=`` (default: :func:`default_library`). A library knows what it
    loaded, hands out its C functions by name, and, for the bundled library, selects the ISA its calls use.

    Attributes
    ----------
    path : str
        The file that was loaded (for the bundled library, its compiled cffi module).
    kind : str
        ``"bundled"`` (this package's implementation) or ``"external"`` (any other Simd build).
    mode : str
        ``"api"`` (the compiled cffi module, direct calls) or ``"abi"`` (``ffi.dlopen``, as upstream builds are loaded).
    ffi, lib
        The cffi ``FFI`` object and the library object whose attributes are the C functions.
    version : str
        ``SimdVersion()``, e.g. ``"7.1.162"``.
    generation : str
        The API generation the declarations follow: ``"7.0"`` (v7.0.160) or ``"7.1"`` (v7.1.161 and later).
    capabilities : dict
        What was found at load time, e.g. ``{"int8_precise": True}``: whether ``SimdSynetInnerProduct8i`` honours
        ``SimdSynetCompatibility8iPrecise`` (upstream's default build always saturates int16 pairs).

    Examples
    --------
    >>> lib = simdbind.load("bundled")
    >>> lib.kind, lib.mode
    ('bundled', 'api')
    >>> lib.capabilities["int8_precise"]
    True
    """

    path: str
    kind: str  # "bundled" or "external"
    mode: str  # "api" (compiled cffi module) or "abi" (ffi.dlopen)
    ffi: Any
    lib: Any
    version: str = ""
    generation: str = ""
    capabilities: dict[str, Any] = field(default_factory=dict)
    _functions: dict[str, Any] = field(default_factory=dict, repr=False)
    #: Per-library lookups for the wrappers' fast paths (:func:`simdbind._fastpath.bindings`), made on first use.
    _bindings: Any = field(default=None, repr=False, compare=False)

    # -- functions -------------------------------------------------------------------------------------------
    def function(self, name: str) -> Any:
        """The C function `name` of this library.

        Parameters
        ----------
        name : str
            The C name, e.g. ``"SimdSynetEltwiseLayerForward"``.

        Returns
        -------
        object
            The cffi function (looked up once, then cached).

        Raises
        ------
        FunctionNotAvailableError
            This library does not export `name`.

        Examples
        --------
        >>> lib = simdbind.load("bundled")
        >>> version = lib.function("SimdVersion")
        >>> lib.ffi.string(version()).decode() == lib.version
        True
        >>> lib.function("SimdNoSuchFunction")
        Traceback (most recent call last):
        ...
        simdbind.errors.FunctionNotAvailableError: SimdNoSuchFunction is not provided by the bundled library ...
        """
        fn = self._functions.get(name)
        if fn is None:
            try:
                fn = getattr(self.lib, name)
            except (AttributeError, self.ffi.error):  # API mode: AttributeError; ABI mode: ffi.error
                raise FunctionNotAvailableError(
                    f"{name} is not provided by the {self.kind} library {self.path}"
                ) from None
            self._functions[name] = fn
        return fn

    def has(self, name: str) -> bool:
        """Whether this library exports the C function `name`.

        Parameters
        ----------
        name : str
            The C name.

        Returns
        -------
        bool
            True when :meth:`function` would return it, False when it would raise.

        Examples
        --------
        >>> lib = simdbind.load("bundled")
        >>> lib.has("SimdSynetSoftmax32f"), lib.has("SimdNoSuchFunction")
        (True, False)
        """
        try:
            self.function(name)
        except FunctionNotAvailableError:
            return False
        return True

    # -- ISA -------------------------------------------------------------------------------------------------
    @property
    def isas_supported(self) -> tuple[str, ...]:
        """ISAs this library can be switched to on this machine (the bundled library), or ``()`` for external ones.

        A subset of :data:`simdbind.ISAS`, lowest first, decided by CPUID and XGETBV (what the CPU and the OS can run).

        Examples
        --------
        >>> lib = simdbind.load("bundled")
        >>> lib.isas_supported[:1]
        ('base',)
        """
        if self.kind != "bundled":
            return ()
        return tuple(name for i, name in enumerate(ISAS) if self.lib.SimdBindIsaSupported(i))

    @property
    def isa(self) -> str:
        """The ISA the next call uses.

        External libraries choose it themselves (upstream dispatches to its best compiled-in ISA); this reports the
        best ISA they report enabled. A context keeps the ISA of its creation (its own ``isa``).

        Examples
        --------
        >>> lib = simdbind.load("bundled")
        >>> lib.isa in lib.isas_supported
        True
        """
        if self.kind == "bundled":
            return ISAS[int(self.lib.SimdBindGetIsa())]
        return _best_upstream_isa(self)

    def set_isa(self, name: str) -> None:
        """Select the ISA of later calls (process-wide: free functions and contexts created afterwards; an
        operation already running on another thread finishes at its own ISA, see :func:`one_isa`).

        ``SIMDBIND_ISA=NAME`` in the environment does the same when the bundled library is loaded. There is never a
        silent fallback: an ISA this machine cannot run is an error.

        Parameters
        ----------
        name : str
            One of :data:`simdbind.ISAS`: ``"base"`` (portable C), ``"sse41"``, ``"avx2"`` (with FMA),
            ``"avx512bw"`` or ``"avx512vnni"`` (the int8 inner product uses VNNI there; other functions run their
            avx512bw code).

        Returns
        -------
        None

        Raises
        ------
        IsaError
            An unknown name, an ISA this CPU or OS cannot run, or an external library (whose ISA cannot be chosen).

        Examples
        --------
        >>> lib = simdbind.load("bundled")
        >>> previous = lib.isa
        >>> lib.set_isa("base")
        >>> lib.isa
        'base'
        >>> lib.set_isa(previous)
        >>> lib.set_isa("neon")
        Traceback (most recent call last):
        ...
        simdbind.errors.IsaError: isa: must be one of base, sse41, avx2, avx512bw, avx512vnni, got 'neon'
        """
        if self.kind != "bundled":
            raise IsaError(
                f"isa: the ISA of the external library {self.path} cannot be chosen (upstream always dispatches "
                "to its best compiled-in ISA); run a separately built library instead"
            )
        if name not in ISAS:
            raise IsaError(f"isa: must be one of {', '.join(ISAS)}, got {name!r}")
        previous = self.lib.SimdBindGetIsa()
        if self.lib.SimdBindSetIsa(ISAS.index(name)) != 0:
            supported = ", ".join(self.isas_supported)
            raise IsaError(f"isa: {name} is not supported by this CPU/OS (supported: {supported})")
        if self.lib.SimdBindGetIsa() != previous:
            clear_plan_caches()  # the one-shot functions' cached contexts were made at the previous ISA

    @contextlib.contextmanager
    def use_isa(self, name: str) -> Iterator[None]:
        """Run a block at ISA `name`, then restore the previous one. Not meant for concurrent use.

        Parameters
        ----------
        name : str
            An ISA of :attr:`isas_supported`.

        Returns
        -------
        contextlib.AbstractContextManager
            A context manager; the ISA is set on entry and restored on exit, also when the block raises.

        Raises
        ------
        IsaError
            As :meth:`set_isa`.

        Examples
        --------
        >>> lib = simdbind.load("bundled")
        >>> before = lib.isa
        >>> with lib.use_isa("base"):
        ...     y = simdbind.unary(np.array([4.0, 9.0], np.float32), "sqrt", library=lib)
        >>> y, lib.isa == before
        (array([2., 3.], dtype=float32), True)
        """
        previous = self.isa
        self.set_isa(name)
        try:
            yield
        finally:
            self.set_isa(previous)

    @property
    def raw(self) -> Any:
        """Every function the library's header declares, NumPy-aware (:mod:`simdbind.upstream.raw`).

        For a build made by ``simdbind upstream build``, from the declarations of its own ``SimdLib.h``, kept beside
        it; for any other library, ``simdbind.upstream.raw.raw(library, header=PATH)`` reads a header you name.
        Pointer parameters take arrays of the matching element type (writeable where the pointer is not const),
        scalars take numbers, the header's enums are IntEnums; sizes are NOT checked at this level.

        Raises
        ------
        LibraryError
            The library has no declarations beside it (the bundled library, a build made by hand).

        Examples
        --------
        >>> simdbind.load("bundled").raw
        Traceback (most recent call last):
        ...
        simdbind.errors.LibraryError: raw: ... has no declarations beside it (cdef.h): ...
        """
        from simdbind.upstream.raw import raw

        return raw(self)

    # -- general functions -----------------------------------------------------------------------------------
    @property
    def cpu_model(self) -> str:
        """The CPU's model name as the library reports it (``SimdCpuDesc``), or ``"unknown"``.

        Examples
        --------
        >>> isinstance(simdbind.load("bundled").cpu_model, str)
        True
        """
        if not self.has("SimdCpuDesc"):
            return "unknown"
        desc = self.function("SimdCpuDesc")(self.ffi.cast("SimdCpuDescType", 0))
        return self.ffi.string(desc).decode(errors="replace") if desc != self.ffi.NULL else "unknown"

    @property
    def threads(self) -> int:
        """Threads of the GEMM, convolution and int8 calls (``SimdGetThreadNumber``; 1 when the library cannot tell).

        Examples
        --------
        >>> simdbind.load("bundled").threads >= 1
        True
        """
        return int(self.function("SimdGetThreadNumber")()) if self.has("SimdGetThreadNumber") else 1

    def set_threads(self, count: int) -> int:
        """Set the thread count of the GEMM, convolution and int8 calls (``SimdSetThreadNumber``).

        A call splits its work into one part per thread; the split depends only on the sizes and the thread count,
        so results never depend on which thread ran a part. Workers are kept between calls and spin for 1 ms before
        they sleep.

        Parameters
        ----------
        count : int
            Threads, at least 1.

        Returns
        -------
        int
            The count the library kept (it clamps to the CPUs available).

        Raises
        ------
        ArgumentError
            `count` is not an int of at least 1.
        FunctionNotAvailableError
            The library has no ``SimdSetThreadNumber``.

        Examples
        --------
        >>> lib = simdbind.load("bundled")
        >>> before = lib.threads
        >>> lib.set_threads(1)
        1
        >>> lib.set_threads(0)
        Traceback (most recent call last):
        ...
        simdbind.errors.ArgumentError: count: must be >= 1, got 0
        >>> lib.set_threads(before) == before
        True
        """
        from simdbind._checks import size_arg  # _checks imports this module

        self.function("SimdSetThreadNumber")(size_arg(count, "count", minimum=1))
        return self.threads

    def describe(self) -> dict[str, Any]:
        """Everything ``simdbind info`` prints, as data (also recorded in conformance reports).

        Returns
        -------
        dict
            ``path``, ``kind``, ``mode``, ``version``, ``generation``, ``cpu_model``, ``isas_supported``, ``isa``,
            ``threads`` and ``capabilities``.

        Examples
        --------
        >>> info = simdbind.load("bundled").describe()
        >>> info["kind"], info["generation"]
        ('bundled', '7.1')
        """
        return {
            "path": self.path,
            "kind": self.kind,
            "mode": self.mode,
            "version": self.version,
            "generation": self.generation,
            "cpu_model": self.cpu_model,
            "isas_supported": list(self.isas_supported) or [self.isa],
            "isa": self.isa,
            "threads": self.threads,
            "capabilities": dict(self.capabilities),
        }


def one_isa(library: Any) -> "_IsaPin":
    """A context manager in which this thread's calls of the bundled library all run at the ISA selected on entry,
    whatever another thread sets meanwhile (``SimdBindPinIsa``): a wrapper that makes several C calls for one result
    (a batch, image by image) runs them inside, so that the result comes from one ISA. Nothing for external
    libraries, whose ISA never changes, or objects that only stand in for a Library."""
    return _IsaPin(library.lib if type(library) is Library and library.kind == "bundled" else None)


def check_memory(library: Any, function: str) -> None:
    """Raise :class:`OutOfMemoryError` (a MemoryError) when the last call of `function` on this thread failed for
    memory: the bundled library reports it with ``SimdBindLastError`` (csrc/internal/memory.h); upstream has no
    such report."""
    lib = getattr(library, "lib", None)
    if getattr(library, "kind", "") == "bundled" and lib is not None and lib.SimdBindLastError() != 0:
        raise OutOfMemoryError(f"{function}: the bundled library {library.path} could not allocate the memory it "
                               "needs; nothing was written")


class _IsaPin:
    """``with one_isa(library):``; one object per use, so that threads never share a token."""

    __slots__ = ("_lib", "_token")

    def __init__(self, lib: Any) -> None:
        self._lib = lib
        self._token = -1

    def __enter__(self) -> None:
        if self._lib is not None:
            # An exception that Python delivers between the pin and the end of __enter__ (a Ctrl-C's handler runs
            # there) skips __exit__: the depth read first lets the handler below undo the pin whatever the point.
            self._token = self._lib.SimdBindIsaPinDepth()
            try:
                self._lib.SimdBindPinIsa()
            except BaseException:
                self._lib.SimdBindUnpinIsa(self._token)
                raise

    def __exit__(self, *exc: object) -> None:
        if self._lib is not None:
            self._lib.SimdBindUnpinIsa(self._token)


def _best_upstream_isa(library: Library) -> str:
    """What upstream dispatches to: its best ISA that SimdCpuInfo reports enabled (the SimdCpuInfoType values of
    v7.0.160 and later, upstream's SimdLib.h)."""
    if not library.has("SimdCpuInfo"):
        return "unknown"
    info = library.function("SimdCpuInfo")
    # The members of SimdCpuInfoType that name an ISA: SimdCpuInfoAvx2 -> "avx2".
    members = {member.removeprefix("SimdCpuInfo").lower(): value
               for value, member in library.ffi.typeof("SimdCpuInfoType").elements.items()}
    for name in reversed(ISAS):
        # None of upstream's Synet functions has Avx512vnni code (none dispatches there), so it reports as avx512bw.
        if name in members and info(library.ffi.cast("SimdCpuInfoType", members[name])):
            return "avx512bw" if name == "avx512vnni" else name
    return ISAS[0]


# -- loading ---------------------------------------------------------------------------------------------------
_default: Library | None = None
_default_lock = threading.Lock()


def bundled_path() -> str:
    """File of the bundled library (the compiled cffi module, which exports the Simd symbols).

    Returns
    -------
    str
        An absolute path; :func:`load` of it in ``mode="abi"`` loads the bundled library as an external one would be.

    Examples
    --------
    >>> import os
    >>> os.path.isfile(simdbind.bundled_path())
    True
    """
    from simdbind import _bundled

    return os.path.abspath(_bundled.__file__)


def load(path: str | os.PathLike[str] | None = None, *, mode: str | None = None) -> Library:
    """Load a Simd library.

    Parameters
    ----------
    path
        ``None``: the library named by the environment variable ``SIMD_LIBRARY``, else the bundled one.
        ``"bundled"``: the bundled library. ``"upstream"`` / ``"upstream@REF"``: a build of Simd cached by
        ``simdbind upstream build`` (the newest of the default release, or of a tag, branch or commit). Any other
        value: the path of a Simd shared library, or a bare name
        (``"libSimd.so"``, ``"Simd"``) found as the dynamic loader finds it (LD_LIBRARY_PATH, the ldconfig cache,
        the system directories).
    mode
        ``"api"`` or ``"abi"``. The bundled library defaults to ``"api"`` (direct calls); ``"abi"`` loads the same
        file through ``ffi.dlopen``, exactly as an upstream build is loaded. Paths always use ``"abi"``.

    Raises
    ------
    LibraryError
        The file cannot be loaded or is not a Simd library.
    UnsupportedLibraryError
        The library predates v7.0.160.
    IsaError
        ``SIMDBIND_ISA`` names an ISA this machine or library cannot run.

    Returns
    -------
    Library
        The loaded library. A library loaded by path stays mapped until the process ends, as an extension module
        does (contexts' finalizers and the library's worker threads may run its code until then).

    Examples
    --------
    >>> lib = simdbind.load("bundled")              # load() alone: SIMD_LIBRARY if set, else this
    >>> abi = simdbind.load("bundled", mode="abi")  # the bundled library through ffi.dlopen
    >>> abi.kind, abi.mode, abi.version == lib.version
    ('bundled', 'abi', True)
    >>> simdbind.load("no-such-libSimd.so")
    Traceback (most recent call last):
    ...
    simdbind.errors.LibraryError: ...
    """
    if path is None:
        path = os.environ.get("SIMD_LIBRARY") or "bundled"
    from simdbind.upstream.names import resolve

    path = resolve(os.fspath(path))  # "upstream" / "upstream@REF": a cached build (simdbind upstream build)
    if mode not in (None, "api", "abi"):
        raise LibraryError(f"mode: must be 'api' or 'abi', got {mode!r}")
    if path == "bundled" and mode != "abi":
        from simdbind import _bundled

        library = Library(bundled_path(), "bundled", "api", _bundled.ffi, _bundled.lib)
    else:
        if mode == "api":
            raise LibraryError(f"mode: 'api' is only available for the bundled library, not {path!r}")
        library = _dlopen(bundled_path() if path == "bundled" else path)
    _identify(library)
    _apply_isa_override(library)
    return library


def _dlopen(path: str) -> Library:
    from simdbind._abi import ffi

    full_path = os.path.abspath(path) if os.path.exists(path) else _find_by_name(path)
    if full_path is None:
        where = "" if os.sep in path else (", and the dynamic loader finds no library of that name (LD_LIBRARY_PATH, "
                                           "the ldconfig cache, the system directories)")
        raise LibraryError(f"path: no such file: {path}{where}")
    check_shared_library(full_path)
    try:
        lib = ffi.dlopen(full_path)
    except OSError as error:
        raise LibraryError(f"path: cannot load {path}: {error}") from None
    _pin(full_path)
    library = Library(full_path, "external", "abi", ffi, lib)
    if library.has("SimdBindGetIsa"):  # only the bundled library exports the simdbind extension
        library.kind = "bundled"
    return library


def _find_by_name(name: str) -> str | None:
    """The file the dynamic loader opens for a bare library name (``"libSimd.so"``, ``"Simd"``), or None.

    dlopen searches LD_LIBRARY_PATH, the ldconfig cache and the system directories for a name without a slash;
    ctypes.util.find_library also maps a short name ("Simd") to its file name. The file is then found among the
    process's mappings, so that the Library's path is the real file.
    """
    if os.sep in name or (os.altsep and os.altsep in name):
        return None
    short = re.sub(r"^lib|\.so(\.\d+)*$|\.dylib$|\.dll$", "", name)
    candidates = [name, f"lib{short}.so"]
    found = ctypes.util.find_library(short) if short else None
    if found:
        candidates.append(found)
    for candidate in candidates:
        try:
            ctypes.CDLL(candidate)
        except OSError:
            continue
        return _mapped_file(candidate) or candidate
    return None


def _mapped_file(name: str) -> str | None:
    """The absolute path of the mapped file whose name is `name` (Linux: /proc/self/maps), or None."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            files = {line.split(None, 5)[5].strip() for line in maps if len(line.split(None, 5)) == 6}
    except OSError:
        return None
    base = os.path.basename(name)
    return next((f for f in sorted(files) if os.path.basename(f) == base and os.path.isabs(f)), None)


#: Libraries loaded by path, kept mapped until the process ends (see _pin).
_PINNED: dict[str, ctypes.CDLL] = {}


def _pin(path: str) -> None:
    """Keep the file mapped for the life of the process, as an extension module is.

    cffi unmaps a dlopen-ed library when its lib object is collected. At interpreter exit that can come before the
    finalizers of contexts made from it, whose SimdRelease then jumps into unmapped code (SIGSEGV at exit), and the
    library's own worker threads run its code for as long as the process lives. ctypes never unloads what it
    opened, so one more reference through it keeps the mapping.
    """
    if path not in _PINNED:
        _PINNED[path] = ctypes.CDLL(path)


def _identify(library: Library) -> None:
    """Version, API generation (from the symbols present) and capabilities; refuse pre-v7.0.160 libraries."""
    if not library.has("SimdVersion"):
        raise LibraryError(f"path: {library.path} does not export SimdVersion: not a Simd library")
    library.version = library.ffi.string(library.function("SimdVersion")()).decode(errors="replace")
    match = _VERSION.search(library.version)
    numbers = tuple(int(x) for x in match.groups()) if match else None
    old_api = library.has("SimdSynetSoftmaxLayerForward") and not library.has("SimdSynetSoftmax32f")
    if (numbers is not None and numbers < MINIMUM_VERSION) or old_api:
        raise UnsupportedLibraryError(
            f"{library.path}: Simd {library.version} predates v7.0.160, the oldest supported release: "
            "SimdSynetInnerProduct32fInit/Forward changed their signatures and SimdSynetSoftmax32f and "
            "GatherElements appeared in v7.0.160, so calls would pass the wrong arguments (manual, \"Libraries, "
            "modes and ISAs\")"
        )
    library.generation = "7.1" if library.has("SimdSynetPoolingMax16b") else "7.0"
    library.capabilities["int8_precise"] = _detect_int8_precise(library)


def _detect_int8_precise(library: Library) -> bool | None:
    """Does SimdSynetInnerProduct8i honour 8iPrecise? Default upstream builds (SIMD_INT8_DEBUG off) always saturate
    pairs (``ip8i-compatibility-ignored-default-build`` in simdbind/conformance/families/README.md).

    255*127 + 255*127 = 64770 exactly, 32767 with int16 saturation of the pair. None if the function is absent.
    """
    if not library.has("SimdSynetInnerProduct8i"):
        return None
    ffi = library.ffi
    src = ffi.new("uint8_t[2]", [255, 255])
    weight = ffi.new("int8_t[2]", [127, 127])
    dst = ffi.new("int32_t[1]")
    library.function("SimdSynetInnerProduct8i")(1, 1, 2, src, weight, dst, 0)
    return bool(dst[0] == 64770)


def _apply_isa_override(library: Library) -> None:
    name = os.environ.get("SIMDBIND_ISA", "").strip().lower()
    if name and library.kind == "bundled":
        try:
            library.set_isa(name)
        except IsaError as error:
            raise IsaError(f"SIMDBIND_ISA={name}: {error}") from None


def default_library() -> Library:
    """The library that functions use when no ``library=`` is given.

    Loaded on first use by ``load()``: the library named by ``SIMD_LIBRARY``, else the bundled one.

    Returns
    -------
    Library
        The same object on every call, until :func:`set_default_library` replaces it.

    Raises
    ------
    LibraryError, UnsupportedLibraryError, IsaError
        As :func:`load`, on first use.

    Examples
    --------
    >>> simdbind.default_library() is simdbind.default_library()
    True
    """
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = load()
    return _default


def set_default_library(library: Library | str | os.PathLike[str] | None) -> Library:
    """Make `library` the default of every function called without ``library=``.

    Parameters
    ----------
    library : Library, str, os.PathLike or None
        A loaded library, or anything :func:`load` takes (``None``: ``SIMD_LIBRARY``, else the bundled library).

    Returns
    -------
    Library
        The new default.

    Raises
    ------
    LibraryError, UnsupportedLibraryError, IsaError
        As :func:`load`, when `library` is not a :class:`Library`.

    Examples
    --------
    >>> previous = simdbind.default_library()
    >>> abi = simdbind.set_default_library(simdbind.load("bundled", mode="abi"))
    >>> simdbind.default_library().mode
    'abi'
    >>> _ = simdbind.set_default_library(previous)
    """
    global _default
    new = library if isinstance(library, Library) else load(library)
    with _default_lock:
        _default = new
    return new
