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

from simdbind._context import clear_plan_caches
from simdbind.errors import FunctionNotAvailableError, IsaError, LibraryError, UnsupportedLibraryError

#: ISA names of the bundled library, lowest first (the index is the C-side ISA number).
ISAS = ("base", "sse41", "avx2", "avx512bw", "avx512vnni")

#: Oldest upstream release whose signatures simdbind's declarations match (InnerProduct32fInit/Forward changed in
#: v7.0.160, Softmax32f and GatherElements appeared there).
MINIMUM_VERSION = (7, 0, 160)

_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")


@dataclass
class Library:
    """One loaded Simd library. Create it with :func:`load`."""

    path: str
    kind: str  # "bundled" or "external"
    mode: str  # "api" (compiled cffi module) or "abi" (ffi.dlopen)
    ffi: Any
    lib: Any
    version: str = ""
    generation: str = ""
    capabilities: dict[str, Any] = field(default_factory=dict)
    _functions: dict[str, Any] = field(default_factory=dict, repr=False)
    #: Per-library lookups for the wrappers' fast paths (:func:`simdbind._checks.bindings`), made on first use.
    _bindings: Any = field(default=None, repr=False, compare=False)

    # -- functions -------------------------------------------------------------------------------------------
    def function(self, name: str) -> Any:
        """The C function `name`, or :class:`FunctionNotAvailableError` if this library lacks it."""
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
        try:
            self.function(name)
        except FunctionNotAvailableError:
            return False
        return True

    # -- ISA -------------------------------------------------------------------------------------------------
    @property
    def isas_supported(self) -> tuple[str, ...]:
        """ISAs this library can be switched to on this machine (the bundled library), or () for external ones."""
        if self.kind != "bundled":
            return ()
        return tuple(name for i, name in enumerate(ISAS) if self.lib.SimdBindIsaSupported(i))

    @property
    def isa(self) -> str:
        """The ISA the next call uses. External libraries choose it themselves; this reports their best ISA."""
        if self.kind == "bundled":
            return ISAS[self.lib.SimdBindGetIsa()]
        return _best_upstream_isa(self)

    def set_isa(self, name: str) -> None:
        """Select the ISA of later calls (process-wide for the bundled library). Unsupported names raise."""
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
        """Run a block at ISA `name`, then restore the previous one. Not meant for concurrent use."""
        previous = self.isa
        self.set_isa(name)
        try:
            yield
        finally:
            self.set_isa(previous)

    @property
    def raw(self) -> Any:
        """Every function the library's header declares, NumPy-aware (:mod:`simdbind.upstream.raw`)."""
        from simdbind.upstream.raw import raw

        return raw(self)

    # -- general functions -----------------------------------------------------------------------------------
    @property
    def cpu_model(self) -> str:
        if not self.has("SimdCpuDesc"):
            return "unknown"
        desc = self.function("SimdCpuDesc")(self.ffi.cast("SimdCpuDescType", 0))
        return self.ffi.string(desc).decode(errors="replace") if desc != self.ffi.NULL else "unknown"

    @property
    def threads(self) -> int:
        """Threads of GEMM-based calls (1 when the library cannot tell)."""
        return int(self.function("SimdGetThreadNumber")()) if self.has("SimdGetThreadNumber") else 1

    def set_threads(self, count: int) -> int:
        """Set the thread count of GEMM-based calls; returns what the library kept (it clamps to the CPU)."""
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            from simdbind.errors import ArgumentError

            raise ArgumentError(f"count: must be an int >= 1, got {count!r}")
        self.function("SimdSetThreadNumber")(count)
        return self.threads

    def describe(self) -> dict[str, Any]:
        """Everything `simdbind info` prints, as data (also recorded in conformance reports)."""
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


def _best_upstream_isa(library: Library) -> str:
    """What upstream dispatches to: its best ISA that SimdCpuInfo reports enabled (the SimdCpuInfoType values of
    v7.0.160 and later, upstream's SimdLib.h)."""
    if not library.has("SimdCpuInfo"):
        return "unknown"
    info = library.function("SimdCpuInfo")
    for name, value in (("avx512vnni", 10), ("avx512bw", 9), ("avx2", 8), ("sse41", 7)):
        # None of upstream's Synet functions has Avx512vnni code (none dispatches there), so it reports as avx512bw.
        if info(library.ffi.cast("SimdCpuInfoType", value)):
            return "avx512bw" if name == "avx512vnni" else name
    return "base"


# -- loading ---------------------------------------------------------------------------------------------------
_default: Library | None = None
_default_lock = threading.Lock()


def bundled_path() -> str:
    """File of the bundled library (the compiled cffi module, which exports the Simd symbols)."""
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
            "GatherElements appeared in v7.0.160, so calls would pass the wrong arguments (README, \"Libraries, "
            "modes and ISAs\")"
        )
    library.generation = "7.1" if library.has("SimdSynetPoolingMax16b") else "7.0"
    library.capabilities["int8_precise"] = _detect_int8_precise(library)


def _detect_int8_precise(library: Library) -> bool | None:
    """Does SimdSynetInnerProduct8i honour 8iPrecise? Default upstream builds (SIMD_INT8_DEBUG off) always saturate
    pairs (``ip8i-compatibility-ignored-default-build`` in simdbind/conformance/deviations/README.md).

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
    """The library that functions use when no ``library=`` is given (loaded on first use, see :func:`load`)."""
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = load()
    return _default


def set_default_library(library: Library | str | os.PathLike[str] | None) -> Library:
    """Make `library` (a Library, or anything :func:`load` takes) the default; returns it."""
    global _default
    new = library if isinstance(library, Library) else load(library)
    with _default_lock:
        _default = new
    return new
