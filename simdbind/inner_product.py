"""Inner products: the FP32 context (``SimdSynetInnerProduct32f*``), the one-vector layer
(``SimdSynetInnerProductLayerForward``) and the uint8 x int8 product (``SimdSynetInnerProduct8i``).

Upstream facts the wrappers handle:

* The Init ``bias`` flag does nothing upstream; a bias is applied iff one is given. Here ``bias=None`` means no
  bias, and the flag passed to C says the same.
* ``internal`` (whether the library copied the weights) depends on the library, ISA and host. Whatever it says,
  the context keeps its own read-only copies of weight, bias and params alive until it is closed.
* Upstream's ``transB && M == 1 && Identity`` path reads the SetParams weight even when ``constB`` is false
  (and crashes on NULL). :class:`InnerProduct32f` passes the current ``B`` to SetParams before each such Forward,
  so the defect cannot be reached through it (on upstream libraries; the bundled one reads Forward's B).
* Upstream's Base GEMM reads C before writing it; outputs handed to upstream libraries are zeroed first.
* Upstream's non-constant transposed B with ``K`` in 1-3 or 5-7 reads up to 3 floats *before* B when ``M >= 2``,
  or ``M == 1`` with an activation (found by this suite; docs/upstream.md): a NaN or Inf there turns whole output
  columns into NaN.
  Such a B reaches upstream libraries behind a zeroed guard.
* v7.0.160 returns NaN in every row for N == 1 with a constant transposed B and a bias; such contexts are created
  with transB = 0, which reads the same (1, K) memory as a (K, 1) B.

Each of these routes lives in :mod:`simdbind._routes`, taken for the upstream versions its catalogue entry names.
* Default upstream builds always saturate int8 pairs (``library.capabilities["int8_precise"]`` is False);
  :func:`inner_product_8i` still returns exact results in precise mode there by splitting ``src`` into 4-bit halves
  whose pair sums cannot saturate (two calls).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from simdbind import _routes
from simdbind._checks import FloatArray, flag, input_array, library_arg, output_array, reported_size, size_arg
from simdbind._fastpath import CALL, F32, c_address, make_plan, pack_plan, plan_key, planned_call, remember, run_planned
from simdbind._context import NativeContext
from simdbind._routes import behind_gemm_guard
from simdbind.activation import ActivationSpec, as_spec, resolve
from simdbind.enums import did_you_mean
from simdbind.errors import ArgumentError
from simdbind.library import Library, check_memory, one_isa

__all__ = ["InnerProduct32f", "inner_product", "inner_product_8i", "COMPATIBILITY_8I"]

#: SimdSynetCompatibility values of the 8i field (``SimdSynetCompatibilityType``) by name.
COMPATIBILITY_8I = {"precise": 0, "overflow": 4, "narrowed": 8}

_ndarray = np.ndarray


def _private(array: np.ndarray) -> np.ndarray:
    """A read-only private copy: later changes to the caller's array cannot reach the context."""
    copy = np.array(array, dtype=array.dtype, order="C", copy=True)
    copy.flags.writeable = False
    return copy


def _matrix(value: Any, name: str, shape: tuple[int, int], dtype: Any) -> np.ndarray:
    array = input_array(value, name, dtype)
    if array.shape != shape:
        raise ArgumentError(f"{name}: must have shape {shape}, got {array.shape}")
    return array


class InnerProduct32f(NativeContext):
    """``C = act(A @ B' + bias)`` with a C context (``SimdSynetInnerProduct32f*``).

    Parameters
    ----------
    M, N, K
        ``A`` is (M, K), ``C`` is (M, N); ``B`` is (K, N), or (N, K) with ``trans_b`` (then ``B' = B.T``). All >= 1.
    trans_b
        B is stored as (N, K) (a weight matrix with one row per output).
    const_b
        B is the constant ``weight`` given here (the library may pack it); otherwise each :meth:`forward` takes B.
    bias
        None, or N float32 values added to each row of ``A @ B'``.
    activation, params
        An :class:`~simdbind.activation.ActivationSpec` (``simdbind.activation.leaky_relu(0.1)``), or a name with
        its params in C order (``"restrict_range", params=[0, 6]``); prelu needs N slopes.
    weight
        B when ``const_b`` (required then, refused otherwise).
    library
        The Simd library (default: :func:`simdbind.default_library`).

    Raises
    ------
    ArgumentError
        M, N or K not an int >= 1, an unknown activation or params that do not fit it (not finite, a prelu
        without N slopes), `weight` missing with ``const_b`` (or given without it) or of the wrong shape, or a
        `bias` that is not N values.
    DTypeError
        `weight`, `bias` or `params` that is not float32 (or convertible, for the lists).
    FunctionNotAvailableError
        The library lacks the ``SimdSynetInnerProduct32f*`` functions.

    See Also
    --------
    inner_product : the one-vector layer without a context.

    Notes
    -----
    The object is thread-safe (calls are serialised by a lock: upstream contexts are not reentrant) and releases
    the C context on :meth:`close`, at the end of a ``with`` block, or when garbage collected. It cannot be copied
    or pickled (:class:`~simdbind.errors.ContextCopyError`): create another one instead. It keeps private read-only
    copies of weight, bias and params for its whole life. ``internal_buffer_size`` and ``external_buffer_size``
    are the library's buffer sizes in floats; ``isa`` is the ISA the context was created at.

    Examples
    --------
    >>> from simdbind import activation as act
    >>> W = np.array([[1, 2], [3, 4], [-5, 6]], np.float32)       # (N, K): one row per output
    >>> ip = simdbind.InnerProduct32f(2, 3, 2, trans_b=True, weight=W, bias=np.ones(3, np.float32),
    ...                               activation=act.relu())
    >>> ip.forward(np.array([[1, 1], [2, 0]], np.float32))      # relu(A @ W.T + 1)
    array([[4., 8., 2.],
           [3., 7., 0.]], dtype=float32)
    >>> with simdbind.InnerProduct32f(1, 2, 2, const_b=False, activation="restrict_range", params=[0, 6]) as ip2:
    ...     ip2(np.array([[1, 2]], np.float32), np.array([[1, 3], [1, 3]], np.float32))  # B (K, N) per call
    array([[3., 6.]], dtype=float32)
    """

    def __init__(self, M: int, N: int, K: int, *, trans_b: bool = False, const_b: bool = True, bias: Any = None,
                 activation: str | int | ActivationSpec = "identity", params: Any = None, weight: Any = None,
                 library: Library | None = None) -> None:
        self.M, self.N, self.K = (size_arg(M, "M", minimum=1), size_arg(N, "N", minimum=1),
                                  size_arg(K, "K", minimum=1))
        self.trans_b, self.const_b = flag(trans_b, "trans_b"), flag(const_b, "const_b")
        self.activation = as_spec(activation, params)
        act_value, act_params = resolve(self.activation, None, self.N)
        self._b_shape = (self.N, self.K) if self.trans_b else (self.K, self.N)
        self._bias = None if bias is None else _private(self._vector(bias, "bias"))
        self._params = act_params
        if self.const_b:
            if weight is None:
                raise ArgumentError(f"weight: required when const_b=True (a {self._b_shape} float32 matrix)")
            self._weight: np.ndarray | None = _private(_matrix(weight, "weight", self._b_shape, np.float32))
        else:
            if weight is not None:
                raise ArgumentError("weight: only with const_b=True; pass B to forward() instead")
            self._weight = None
        self.library = library_arg(library)
        self._params = _routes.ip32f_activation_params(self.library, act_value, self._params)
        ffi = self.library.ffi
        self._ffi = ffi
        # ip32f-transb-m1-identity-uses-setparams-weight: upstream's transB && M == 1 && Identity path reads
        # SetParams' weight, even when !constB.
        self._defect_route = (_routes.IP32F_TRANSB_M1_IDENTITY.taken(self.library) and self.trans_b and self.M == 1
                              and act_value == 0 and not self.const_b)
        # A (1, K) B is the same memory as a (K, 1) one: the route creates the context without transB.
        c_trans_b = self.trans_b and not (_routes.IP32F_N1_TRANSB_CONST_BIAS.taken(self.library) and self.N == 1
                                          and self.const_b and self._bias is not None)
        # The same kernels read before a constant B (the copy SetParams keeps a pointer to) and before A; what
        # they read of A does not reach the result, but A at the start of a mapped page would fault.
        guard_b = _routes.b_guard_route(self.library, self.M, self.K, self.trans_b, activated=act_value != 0)
        self._guard_a = guard_b
        self._guard_b = guard_b and not self.const_b
        if guard_b and self._weight is not None:
            self._weight = behind_gemm_guard(self._weight)
            self._weight.flags.writeable = False
        self._zero_out = _routes.IP32F_GEMM_READS_C.taken(self.library)
        self._forward = self.library.function("SimdSynetInnerProduct32fForward")
        self._set_params = self.library.function("SimdSynetInnerProduct32fSetParams")
        init = self.library.function("SimdSynetInnerProduct32fInit")
        release = self.library.function("SimdRelease")
        with one_isa(self.library):  # the ISA Init fixes for the context (bundled) is the one recorded
            isa = self.library.isa  # upstream picks its best
            pointer = init(self.M, self.N, self.K, int(c_trans_b), int(self.const_b), int(self._bias is not None),
                           act_value)
        if pointer == ffi.NULL:
            check_memory(self.library, "SimdSynetInnerProduct32fInit")
            raise ArgumentError(f"{self.library.kind} library refused SimdSynetInnerProduct32fInit("
                                f"{self.M}, {self.N}, {self.K}, ...)")
        handle = ffi.gc(pointer, release)
        self._ptr_bias = ffi.NULL if self._bias is None else ffi.from_buffer("float[]", self._bias)
        self._ptr_params = ffi.NULL if self._params is None else ffi.from_buffer("float[]", self._params)
        self._current_b: np.ndarray | None = None
        self._internal = False
        self._apply_params(handle, self._weight)
        self.internal_buffer_size, self.external_buffer_size = (
            reported_size(self.library.function(name)(handle), name, self.library)
            for name in ("SimdSynetInnerProduct32fInternalBufferSize", "SimdSynetInnerProduct32fExternalBufferSize"))
        # The planned forward (see "plans" in _fastpath.py) where no route changes the call.
        address = c_address(self.library, "SimdSynetInnerProduct32fForward")
        plain = not (self._defect_route or self._guard_b)
        self._fast_plan = None if not (plain and address) else (CALL["CALL_IP32F"], address, pack_plan(
            int(ffi.cast("uintptr_t", pointer)), 4 * self.M * self.K, 0 if self.const_b else 4 * self.K * self.N,
            4 * self.external_buffer_size, 4 * self.M * self.N, int(self._zero_out)))
        self._own(handle, isa=isa, serialised=True)

    def _fast_forward(self, A: Any, B: Any, out: Any) -> Any:
        """:meth:`forward` as one planned call, or None when an argument is not what the plan takes."""
        plan, handle = self._fast_plan, self._handle
        if plan is None or handle is None or type(A) is not _ndarray or A.dtype is not F32 or A.shape != (
                self.M, self.K):
            return None
        if B is not None and (type(B) is not _ndarray or B.dtype is not F32 or B.shape != self._b_shape):
            return None
        if out is None:
            result = np.zeros((self.M, self.N), F32)
        elif type(out) is _ndarray and out.dtype is F32 and out.shape == (self.M, self.N):
            result = out
        else:
            return None
        scratch = np.zeros(self.external_buffer_size, F32) if self.external_buffer_size else None
        with self._lock:  # type: ignore[union-attr]  # an InnerProduct32f context always serialises its calls
            done = planned_call(plan[0], plan[1], plan[2], A, B, scratch, result)
        return result if done else None

    # -- helpers ---------------------------------------------------------------------------------------------
    def _vector(self, value: Any, name: str) -> np.ndarray:
        array = input_array(value, name, np.float32)
        if array.shape != (self.N,):
            raise ArgumentError(f"{name}: must have shape ({self.N},) (one value per output column), got "
                                f"{array.shape}")
        return array

    def _apply_params(self, handle: Any, weight: np.ndarray | None) -> None:
        """SetParams with `weight` (kept alive by self._current_b while the context may read it)."""
        ffi = self._ffi
        internal = ffi.new("SimdBool *")
        self._current_b = weight
        w = ffi.NULL if weight is None else ffi.from_buffer("float[]", weight)
        self._set_params(handle, w, internal, self._ptr_bias, self._ptr_params)
        check_memory(self.library, "SimdSynetInnerProduct32fSetParams")  # its copies of bias and params
        self._internal = bool(internal[0])

    # -- public ----------------------------------------------------------------------------------------------
    @property
    def internal(self) -> bool:
        """Whether the library copied (packed) the weights at SetParams (library-, ISA- and host-dependent).

        Whatever it says, the context keeps its own read-only copy of the weight alive until it is closed.

        Examples
        --------
        >>> ip = simdbind.InnerProduct32f(1, 2, 2, weight=np.eye(2, dtype=np.float32))
        >>> isinstance(ip.internal, bool)
        True
        """
        return self._internal

    @property
    def weight(self) -> np.ndarray | None:
        """The context's read-only copy of the constant B (None when const_b is False).

        Examples
        --------
        >>> ip = simdbind.InnerProduct32f(1, 2, 2, weight=np.eye(2, dtype=np.float32))
        >>> ip.weight.flags.writeable
        False
        """
        return self._weight

    @property
    def bias(self) -> np.ndarray | None:
        """The context's read-only copy of the bias (None without one).

        Examples
        --------
        >>> ip = simdbind.InnerProduct32f(1, 2, 2, weight=np.eye(2, dtype=np.float32), bias=[0.5, -0.5])
        >>> ip.bias
        array([ 0.5, -0.5], dtype=float32)
        """
        return self._bias

    def forward(self, A: ArrayLike, B: ArrayLike | None = None, *, out: FloatArray | None = None) -> FloatArray:
        """``act(A @ B' + bias)`` as an (M, N) float32 array (also the context's ``__call__``).

        Parameters
        ----------
        A : array_like
            (M, K) float32.
        B : array_like, optional
            Given iff ``const_b`` is False: (K, N), or (N, K) with ``trans_b``.
        out : numpy.ndarray, optional
            A C-contiguous writeable (M, N) float32 array that overlaps no input.

        Returns
        -------
        numpy.ndarray
            `out`, or a new (M, N) float32 array.

        Raises
        ------
        DTypeError
            `A`, `B` or `out` that is not float32.
        ArgumentError
            A shape other than the context's, `B` given to a context with a constant weight (or missing from
            one without), or a bad `out`.
        ContextClosedError
            The context was closed.

        Examples
        --------
        >>> ip = simdbind.InnerProduct32f(1, 2, 3, weight=np.arange(6, dtype=np.float32).reshape(3, 2))
        >>> ip.forward(np.array([[1, 1, 1]], np.float32))           # A (1, 3) @ B (3, 2)
        array([[6., 9.]], dtype=float32)
        >>> ip.forward(np.ones((1, 4), np.float32))
        Traceback (most recent call last):
        ...
        simdbind.errors.ArgumentError: A: must have shape (1, 3), got (1, 4)
        """
        found = self._fast_forward(A, B, out)
        if found is not None:
            return found  # type: ignore[no-any-return]
        a = _matrix(A, "A", (self.M, self.K), np.float32)
        if self.const_b:
            if B is not None:
                raise ArgumentError("B: must be None, the context has a constant weight (const_b=True)")
            b = None
        else:
            if B is None:
                raise ArgumentError(f"B: required when const_b=False (a {self._b_shape} float32 matrix)")
            b = _matrix(B, "B", self._b_shape, np.float32)
        inputs = [("A", a), ("B", b)]
        if self._guard_b and b is not None:
            b = behind_gemm_guard(b)
        if self._guard_a:
            a = behind_gemm_guard(a)
        if out is None:
            out = np.zeros((self.M, self.N), np.float32)
        else:
            out = output_array(out, "out", (self.M, self.N), np.float32, inputs)
            if self._zero_out:
                out.fill(0.0)  # ip32f-base-gemm-reads-c: upstream's Base GEMM reads C before writing it
        ffi = self._ffi
        assert self._lock is not None  # an InnerProduct32f context always serialises its calls
        with self._lock:
            context = self._live()
            if self._defect_route:
                self._apply_params(context, b)  # make Forward's B the one upstream will read
            buf = ffi.NULL
            if self.external_buffer_size:
                scratch = np.zeros(self.external_buffer_size, np.float32)
                buf = ffi.from_buffer("float[]", scratch)
            self._forward(context, ffi.from_buffer("float[]", a), ffi.NULL if b is None else ffi.from_buffer(
                "float[]", b), buf, ffi.from_buffer("float[]", out, require_writable=True))
            if self._defect_route:
                self._apply_params(context, None)
        return out

    __call__ = forward

    def _key(self) -> str:
        return (f"M={self.M} N={self.N} K={self.K} trans_b={self.trans_b} const_b={self.const_b} "
                f"bias={self._bias is not None} activation={self.activation!r}")


def inner_product(x: ArrayLike, weight: ArrayLike, bias: ArrayLike | None = None, *, out: FloatArray | None = None,
                  library: Library | None = None) -> FloatArray:
    """``weight @ x + bias`` for one vector, or for each row of a batch (``SimdSynetInnerProductLayerForward``).

    Parameters
    ----------
    x
        float32 (size,) or (batch, size).
    weight
        float32 (count, size): one row per output.
    bias
        None or float32 (count,).
    out
        Optional float32 (count,) or (batch, count); must not overlap an input.
    library
        The Simd library to call (default: :func:`simdbind.default_library`).

    Returns
    -------
    numpy.ndarray
        `out`, or a new float32 (count,) or (batch, count) array.

    Raises
    ------
    DTypeError
        An input or `out` that is not float32.
    ArgumentError
        Shapes that do not match (x's last axis must be weight's second), or a bad `out`.
    FunctionNotAvailableError
        The library lacks the C function.

    Examples
    --------
    >>> w = np.array([[1, 2, 3], [0, 1, 0]], np.float32)
    >>> simdbind.inner_product(np.array([1, 1, 1], np.float32), w, bias=np.array([10, 20], np.float32))
    array([16., 21.], dtype=float32)
    """
    key = None
    if type(x) is _ndarray and type(weight) is _ndarray and plan_key is not None:  # see "plans" in _fastpath.py
        if bias is None:
            key = plan_key((x.dtype, weight.dtype), "inner_product", x.shape, weight.shape)
            found = run_planned(library, key, out, x, weight, None)
        elif type(bias) is _ndarray:
            key = plan_key((x.dtype, weight.dtype, bias.dtype), "inner_product", x.shape, weight.shape, bias.shape)
            found = run_planned(library, key, out, x, weight, bias)
        else:
            found = None
        if found is not None:
            return found  # type: ignore[no-any-return]
    w = input_array(weight, "weight", np.float32)
    if w.ndim != 2 or w.shape[0] < 1 or w.shape[1] < 1:
        raise ArgumentError(f"weight: must be a non-empty (count, size) matrix, got shape {w.shape}")
    count, size = w.shape
    src = input_array(x, "x", np.float32)
    if src.ndim not in (1, 2) or src.shape[-1] != size:
        raise ArgumentError(f"x: must have shape ({size},) or (batch, {size}) to match weight {w.shape}, "
                            f"got {src.shape}")
    b = None
    if bias is not None:
        b = input_array(bias, "bias", np.float32)
        if b.shape != (count,):
            raise ArgumentError(f"bias: must have shape ({count},), got {b.shape}")
    shape = (count,) if src.ndim == 1 else (src.shape[0], count)
    out = output_array(out, "out", shape, np.float32, [("x", src), ("weight", w), ("bias", b)])
    library = library_arg(library)
    ffi = library.ffi
    fn = library.function("SimdSynetInnerProductLayerForward")
    pw = ffi.from_buffer("float[]", w)
    pb = ffi.NULL if b is None else ffi.from_buffer("float[]", b)
    rows_in, rows_out = src.reshape(-1, size), out.reshape(-1, count)
    with one_isa(library):  # one row per call: every row at the same ISA
        for i in range(rows_in.shape[0]):
            fn(ffi.from_buffer("float[]", rows_in[i]), pw, pb, count, size,
               ffi.from_buffer("float[]", rows_out[i], require_writable=True))
    if key is not None:
        remember(library, key, make_plan(library, "CALL_INNER_LAYER", "SimdSynetInnerProductLayerForward", out,
                                         rows_in.shape[0], size, count, int(b is not None)))
    return out


def _compatibility(value: Any) -> int:
    if isinstance(value, str) and value.strip().lower() in COMPATIBILITY_8I:
        return COMPATIBILITY_8I[value.strip().lower()]
    names = ", ".join(repr(n) for n in COMPATIBILITY_8I)
    raise ArgumentError(f"compatibility: must be one of {names}, got {value!r}"
                        f"{did_you_mean(value, list(COMPATIBILITY_8I))}")


def inner_product_8i(src_u8: ArrayLike, weight_i8: ArrayLike, compatibility: str = "precise", *,
                     out: NDArray[np.int32] | None = None, emulate_precise: bool = True,
                     library: Library | None = None) -> NDArray[np.int32]:
    """``src @ weight.T`` with uint8 x int8 -> int32 (``SimdSynetInnerProduct8i``).

    Parameters
    ----------
    src_u8
        uint8 (K,) or (M, K).
    weight_i8
        int8 (N, K): one row per output.
    compatibility
        ``"precise"``: every product summed exactly (int32 wraps past 2**31, as in C). ``"overflow"`` and
        ``"narrowed"``: the products of each pair (2m, 2m+1) along K are summed and clamped to int16 first (SSSE3
        pmaddubsw semantics); with ``"narrowed"`` data (src <= 180, ``|weight| <= 90``) the clamp never triggers.
    out
        Optional int32 (N,) or (M, N).
    emulate_precise
        On a library that always saturates (``library.capabilities["int8_precise"]`` is False, upstream's default
        build) compute precise mode exactly anyway, with two calls on the 4-bit halves of src. False passes the
        request straight to the library (what the conformance suite checks).
    library
        The Simd library to call (default: :func:`simdbind.default_library`).

    Returns
    -------
    numpy.ndarray
        `out`, or a new int32 (N,) or (M, N) array.

    Raises
    ------
    DTypeError
        `src_u8` not uint8, `weight_i8` not int8, or `out` not int32.
    ArgumentError
        Shapes that do not match, an unknown `compatibility`, a non-bool `emulate_precise`, or a bad `out`.
    FunctionNotAvailableError
        The library lacks the C function.

    Examples
    --------
    >>> src = np.array([255, 255], np.uint8)
    >>> w = np.array([[127, 127], [-128, 1]], np.int8)
    >>> simdbind.inner_product_8i(src, w, "precise")             # exact
    array([ 64770, -32385], dtype=int32)
    >>> simdbind.inner_product_8i(src, w, "overflow")            # the pair sum saturates to int16
    array([ 32767, -32385], dtype=int32)
    """
    key = None
    if type(src_u8) is _ndarray and type(weight_i8) is _ndarray and plan_key is not None:  # "plans", _fastpath.py
        key = plan_key((src_u8.dtype, weight_i8.dtype), "inner_product_8i", src_u8.shape, weight_i8.shape,
                       compatibility, emulate_precise)
        found = run_planned(library, key, out, src_u8, weight_i8)
        if found is not None:
            return found  # type: ignore[no-any-return]
    w = input_array(weight_i8, "weight_i8", np.int8)
    if w.ndim != 2 or w.shape[0] < 1 or w.shape[1] < 1:
        raise ArgumentError(f"weight_i8: must be a non-empty (N, K) int8 matrix, got shape {w.shape}")
    N, K = w.shape
    src = input_array(src_u8, "src_u8", np.uint8)
    if src.ndim not in (1, 2) or src.shape[-1] != K or (src.ndim == 2 and src.shape[0] < 1):
        raise ArgumentError(f"src_u8: must have shape ({K},) or (M, {K}) to match weight_i8 {w.shape}, "
                            f"got {src.shape}")
    compat = _compatibility(compatibility)
    emulate_precise = flag(emulate_precise, "emulate_precise")
    M = 1 if src.ndim == 1 else src.shape[0]
    shape = (N,) if src.ndim == 1 else (M, N)
    out = output_array(out, "out", shape, np.int32, [("src_u8", src), ("weight_i8", w)])
    library = library_arg(library)
    ffi = library.ffi
    fn = library.function("SimdSynetInnerProduct8i")
    pw = ffi.from_buffer("int8_t[]", w)
    dst = ffi.from_buffer("int32_t[]", out, require_writable=True)
    if compat == 0 and emulate_precise and library.capabilities.get("int8_precise") is False:
        # |pair| <= 2 * 15 * 128 < 32768 for 4-bit halves: the saturating kernel is exact on them.
        low, high = src & np.uint8(15), src >> np.uint8(4)
        part = np.empty(shape, np.int32)
        with one_isa(library):
            fn(M, N, K, ffi.from_buffer("uint8_t[]", high), pw, dst, compat)
            fn(M, N, K, ffi.from_buffer("uint8_t[]", low), pw, ffi.from_buffer("int32_t[]", part), compat)
        with np.errstate(over="ignore"):
            out *= np.int32(16)
            out += part
        return out
    fn(M, N, K, ffi.from_buffer("uint8_t[]", src), pw, dst, compat)
    if key is not None:
        remember(library, key, make_plan(library, "CALL_INNER_8I", "SimdSynetInnerProduct8i", out, M, N, K, compat))
    return out
