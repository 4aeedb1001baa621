/* simdbind._fastcall: the C-side fast path of eltwise() and unary() (the per-call overhead budget).
 *
 * Each entry point takes the arrays as Python objects plus the address of the C function to call (an int that
 * simdbind obtains once per library from cffi, so the bundled library and any external libSimd work alike), and
 * either makes the call and returns the result array, or returns None: "not handled". On None the Python
 * wrapper runs its ordinary path, whose checks raise the documented errors. So this file only ever *accepts*;
 * it never raises for a user error, and any doubt (an unexpected type, format, shape, stride, flag or overlap)
 * means None. It accepts exactly:
 *   - arrays whose type is exactly numpy.ndarray (not a subclass), exporting a C-contiguous buffer
 *     (PyBUF_C_CONTIGUOUS) of format "f" (native float32) and item size 4; `out` writable (PyBUF_WRITABLE);
 *   - equal shapes (ndim and every extent);
 *   - `out` that is either exactly one of the inputs it may alias (same start; the sizes are equal) or apart
 *     from every input (pointer ranges; an empty range overlaps nothing), and apart from eltwise's weights
 *     array (the kernel reads a weight after it has written part of `out`).
 * The buffers stay exported (numpy then refuses to resize them) until the C call has returned.
 *
 * The GIL is released around the C call only from RELEASE_THRESHOLD elements on. Below, the call takes well
 * under a microsecond, and releasing costs more than it gains: PyEval_SaveThread/RestoreThread are ~0.1 us, and
 * when another thread runs Python, taking the GIL back waits for that thread's switch interval (5 ms by
 * default), so a 16-float call could take milliseconds. cffi releases it on every call.
 *
 * Only the stable C API is used (Py_LIMITED_API 3.11 where available: the buffer protocol joined it in 3.11),
 * and no NumPy header: numpy.ndarray, numpy.empty and the float32 dtype are handed over once by init().
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "../csrc/simd_synet.h" /* the prototypes: every function pointer below is typed from them */

typedef void (*eltwise_fn)(const float *const *src, const float *weight, size_t count, size_t size, int type,
                           float *dst);
typedef void (*unary_fn)(const float *src, size_t size, int type, float *dst);
typedef __typeof__(&SimdSynetGatherElementsForward) gather_fn;

/* Elements from which the GIL is released around the C call (see the top of this file). */
#define RELEASE_THRESHOLD 4096
/* Most inputs of eltwise() the fast path takes (a stack array of pointers). */
#define MAX_INPUTS 16
#define ELTWISE_SUM 1
#define ELTWISE_MAX_OP 3
#define UNARY_MAX_OP 63

static PyObject *ndarray_type; /* numpy.ndarray */
static PyObject *empty_fn;     /* numpy.empty */
static PyObject *float32;      /* numpy.dtype("float32") */

static const float ONES[MAX_INPUTS] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};

/* Export `obj`'s buffer into `view` if it is an exact ndarray of native float32, C-contiguous (and writable when
 * asked). 1: exported (release it), 0: not (no error set). */
static int get_f32(PyObject *obj, Py_buffer *view, int writable)
{
    if (ndarray_type == NULL || (PyObject *)Py_TYPE(obj) != ndarray_type)
        return 0;
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0)) != 0) {
        PyErr_Clear();
        return 0;
    }
    if (view->itemsize != 4 || view->format == NULL || strcmp(view->format, "f") != 0 || view->buf == NULL
        || view->len % 4 != 0 || (writable && view->readonly)) {
        PyBuffer_Release(view);
        return 0;
    }
    return 1;
}

static int same_shape(const Py_buffer *a, const Py_buffer *b)
{
    if (a->ndim != b->ndim || a->len != b->len)
        return 0;
    for (int i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i])
            return 0;
    return 1;
}

/* Byte ranges [a, a + len) and [b, b + len) share a byte. */
static int overlap(const Py_buffer *a, const Py_buffer *b)
{
    uintptr_t pa = (uintptr_t)a->buf, pb = (uintptr_t)b->buf;
    return a->len > 0 && b->len > 0 && pa < pb + (uintptr_t)b->len && pb < pa + (uintptr_t)a->len;
}

/* A new C-contiguous float32 array of `view`'s shape (numpy.empty), exported writable into `out_view`.
 * NULL when that fails (no error set). */
static PyObject *new_like(const Py_buffer *view, Py_buffer *out_view)
{
    PyObject *shape = PyTuple_New(view->ndim);
    if (shape == NULL) {
        PyErr_Clear();
        return NULL;
    }
    for (int i = 0; i < view->ndim; i++) {
        PyObject *extent = PyLong_FromSsize_t(view->shape[i]);
        if (extent == NULL) {
            Py_DECREF(shape);
            PyErr_Clear();
            return NULL;
        }
        PyTuple_SetItem(shape, i, extent); /* steals */
    }
    PyObject *result = PyObject_CallFunctionObjArgs(empty_fn, shape, float32, NULL);
    Py_DECREF(shape);
    if (result == NULL) {
        PyErr_Clear();
        return NULL;
    }
    if (!get_f32(result, out_view, 1)) {
        Py_DECREF(result);
        return NULL;
    }
    if (!same_shape(view, out_view)) {
        PyBuffer_Release(out_view);
        Py_DECREF(result);
        return NULL;
    }
    return result;
}

/* An int argument as a C value, or -1 with no error set when it is not an int (exact or subclass, e.g. IntEnum)
 * in [0, maximum]. */
static long small_int(PyObject *obj, long maximum)
{
    if (!PyLong_Check(obj))
        return -1;
    int overflow = 0;
    long value = PyLong_AsLongAndOverflow(obj, &overflow);
    if (value == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return -1;
    }
    return (overflow || value < 0 || value > maximum) ? -1 : value;
}

static void *address(PyObject *obj)
{
    if (!PyLong_CheckExact(obj))
        return NULL;
    void *p = PyLong_AsVoidPtr(obj);
    if (p == NULL)
        PyErr_Clear();
    return p;
}

/* weights given as a list/tuple of exact floats, or of exact ints of magnitude <= 2**24 (both convert to float32
 * exactly as numpy.asarray(weights, float32) does: one rounding, or none). 1: filled, 0: not handled. */
static int weights_from_sequence(PyObject *seq, Py_ssize_t count, float *dst)
{
    if (!(PyList_CheckExact(seq) || PyTuple_CheckExact(seq)) || PySequence_Size(seq) != count)
        return 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *item = PySequence_GetItem(seq, i);
        if (item == NULL) {
            PyErr_Clear();
            return 0;
        }
        int ok = 0;
        if (PyFloat_CheckExact(item)) {
            double v = PyFloat_AsDouble(item);
            /* finite values beyond float32 make numpy warn on the cast: leave those to it */
            if (v != v || v == HUGE_VAL || v == -HUGE_VAL || (v <= FLT_MAX && v >= -FLT_MAX)) {
                dst[i] = (float)v;
                ok = 1;
            }
        } else if (PyLong_CheckExact(item)) {
            int overflow = 0;
            long v = PyLong_AsLongAndOverflow(item, &overflow);
            if (!overflow && !(v == -1 && PyErr_Occurred()) && v <= (1L << 24) && v >= -(1L << 24)) {
                dst[i] = (float)v;
                ok = 1;
            }
            PyErr_Clear();
        }
        Py_DECREF(item);
        if (!ok)
            return 0;
    }
    return 1;
}

/* eltwise(address, inputs, weights, op, out) -> out, a new array, or None (not handled).
 * address: SimdSynetEltwiseLayerForward; inputs: a list or tuple of 2..16 arrays; weights: None, a float32
 * array of shape (count,) or a list/tuple of count numbers (op SUM only); op: 0..3; out: None or an array that may
 * be inputs[0] or inputs[1] exactly and must be apart from every other input and from the weights array. */
static PyObject *fast_eltwise(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 5)
        Py_RETURN_NONE;
    eltwise_fn fn = (eltwise_fn)address(args[0]);
    PyObject *inputs = args[1], *weights = args[2], *out = args[4];
    long op = small_int(args[3], ELTWISE_MAX_OP);
    if (fn == NULL || op < 0 || !(PyList_CheckExact(inputs) || PyTuple_CheckExact(inputs)))
        Py_RETURN_NONE;
    Py_ssize_t count = PySequence_Size(inputs);
    if (count < 2 || count > MAX_INPUTS) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    if (weights != Py_None && op != ELTWISE_SUM)
        Py_RETURN_NONE;

    Py_buffer views[MAX_INPUTS], out_view, weight_view;
    const float *srcs[MAX_INPUTS];
    float weight_values[MAX_INPUTS];
    const float *weight = op == ELTWISE_SUM ? ONES : NULL;
    int held = 0, weight_held = 0;
    PyObject *result = NULL;
    for (; held < count; held++) {
        /* a borrowed item: the list cannot change while we hold the GIL, and a GIL-free call uses only buffers */
        PyObject *item = PyList_CheckExact(inputs) ? PyList_GetItem(inputs, held) : PyTuple_GetItem(inputs, held);
        if (item == NULL) {
            PyErr_Clear();
            goto done;
        }
        if (!get_f32(item, &views[held], 0))
            goto done;
        if (held > 0 && !same_shape(&views[0], &views[held])) {
            PyBuffer_Release(&views[held]);
            goto done;
        }
        srcs[held] = (const float *)views[held].buf;
    }
    if (weights != Py_None) {
        if (get_f32(weights, &weight_view, 0)) {
            weight_held = 1;
            if (weight_view.ndim != 1 || weight_view.shape[0] != count)
                goto done;
            weight = (const float *)weight_view.buf;
        } else if (weights_from_sequence(weights, count, weight_values)) {
            weight = weight_values;
        } else {
            goto done;
        }
    }
    if (out == Py_None) {
        result = new_like(&views[0], &out_view);
        if (result == NULL)
            goto done;
    } else {
        if (!get_f32(out, &out_view, 1))
            goto done;
        if (!same_shape(&views[0], &out_view)) {
            PyBuffer_Release(&out_view);
            goto done;
        }
        if (weight_held && overlap(&out_view, &weight_view)) {
            PyBuffer_Release(&out_view);
            goto done;
        }
        for (Py_ssize_t i = 0; i < count; i++) {
            /* inputs[0] and inputs[1] may be out exactly (elementwise in place); nothing else may overlap it */
            if (overlap(&out_view, &views[i]) && !(i < 2 && out_view.buf == views[i].buf)) {
                PyBuffer_Release(&out_view);
                goto done;
            }
        }
        Py_INCREF(out);
        result = out;
    }
    size_t size = (size_t)(out_view.len / 4);
    if (size >= RELEASE_THRESHOLD) {
        Py_BEGIN_ALLOW_THREADS
        fn(srcs, weight, (size_t)count, size, (int)op, (float *)out_view.buf);
        Py_END_ALLOW_THREADS
    } else if (size > 0) {
        fn(srcs, weight, (size_t)count, size, (int)op, (float *)out_view.buf);
    }
    PyBuffer_Release(&out_view);
done:
    if (weight_held)
        PyBuffer_Release(&weight_view);
    for (int i = 0; i < held; i++)
        PyBuffer_Release(&views[i]);
    if (result == NULL)
        Py_RETURN_NONE;
    return result;
}

/* unary(address, x, op, out) -> out, a new array, or None (not handled).
 * address: SimdSynetUnaryOperation32f; op: the C value (simdbind has checked it); out: None or an array that is
 * x exactly or apart from it. */
static PyObject *fast_unary(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 4)
        Py_RETURN_NONE;
    unary_fn fn = (unary_fn)address(args[0]);
    PyObject *out = args[3], *result = NULL;
    long op = small_int(args[2], UNARY_MAX_OP);
    Py_buffer view, out_view;
    if (fn == NULL || op < 0 || !get_f32(args[1], &view, 0))
        Py_RETURN_NONE;
    if (out == Py_None) {
        result = new_like(&view, &out_view);
        if (result == NULL)
            goto done;
    } else {
        if (!get_f32(out, &out_view, 1))
            goto done;
        if (!same_shape(&view, &out_view) || (overlap(&out_view, &view) && out_view.buf != view.buf)) {
            PyBuffer_Release(&out_view);
            goto done;
        }
        Py_INCREF(out);
        result = out;
    }
    size_t size = (size_t)(view.len / 4);
    if (size >= RELEASE_THRESHOLD) {
        Py_BEGIN_ALLOW_THREADS
        fn((const float *)view.buf, size, (int)op, (float *)out_view.buf);
        Py_END_ALLOW_THREADS
    } else if (size > 0) {
        fn((const float *)view.buf, size, (int)op, (float *)out_view.buf);
    }
    PyBuffer_Release(&out_view);
done:
    PyBuffer_Release(&view);
    if (result == NULL)
        Py_RETURN_NONE;
    return result;
}

/* ---- plan keys -------------------------------------------------------------------------------------------
 * key(prefix, *args) -> (prefix, *args) with True/False replaced by private tags, or None when an argument is not
 * plain. A wrapper caches what its checks derived from its scalar arguments (a "plan") under this key, so a key
 * must never equal the key of arguments that the checks treat differently. Python's == does not keep types apart
 * (1 == True == 1.0, 0 == TensorFormat.NCHW), so only plain values are accepted: exact int, exact str, None, True,
 * False (as tags: never equal to an int) and exact tuples of plain values, up to 2 levels deep. Anything else
 * (floats, subclasses, NumPy scalars, lists) means None: the wrapper then checks every argument the long way.
 * `prefix` is taken as it is: the caller puts there what it read from arrays (dtype, shapes), never user
 * scalars. */
static PyObject *true_tag, *false_tag; /* object() instances: equal only to themselves */

static PyObject *plain(PyObject *obj, int depth)
{
    if (obj == Py_True)
        return Py_NewRef(true_tag);
    if (obj == Py_False)
        return Py_NewRef(false_tag);
    if (obj == Py_None || PyLong_CheckExact(obj) || PyUnicode_CheckExact(obj))
        return Py_NewRef(obj);
    if (depth < 2 && PyTuple_CheckExact(obj)) {
        Py_ssize_t n = PyTuple_Size(obj);
        PyObject *copy = PyTuple_New(n);
        if (copy == NULL)
            return NULL;
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *item = plain(PyTuple_GetItem(obj, i), depth + 1);
            if (item == NULL) {
                Py_DECREF(copy);
                return NULL;
            }
            PyTuple_SetItem(copy, i, item); /* steals */
        }
        return copy;
    }
    return NULL;
}

static PyObject *fast_key(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs < 1 || true_tag == NULL)
        Py_RETURN_NONE;
    PyObject *key = PyTuple_New(nargs);
    if (key == NULL)
        return NULL;
    PyTuple_SetItem(key, 0, Py_NewRef(args[0]));
    for (Py_ssize_t i = 1; i < nargs; i++) {
        PyObject *item = plain(args[i], 0);
        if (item == NULL) {
            Py_DECREF(key);
            PyErr_Clear();
            Py_RETURN_NONE;
        }
        PyTuple_SetItem(key, i, item);
    }
    return key;
}

/* ---- planned calls --------------------------------------------------------------------------------------------
 * call(kind, address, plan, *arrays) -> True when the C function ran, None when not handled (nothing written).
 * `plan` is a bytes object of size_t values that the wrapper derived from checked arguments once per parameter
 * tuple (layout per kind below); `arrays` are the buffers, read ones first, then the written ones (None where
 * the C function takes NULL). Per array it accepts only an exact numpy.ndarray exporting a C-contiguous buffer of
 * the planned byte length (written ones: writable), and no written buffer may share a byte with any other
 * buffer of the call. The wrapper checks the dtypes (their identity) before; everything else about the call was
 * decided by the plan's checks. */
/* The planned calls, one row a kind (its number is its row's index; the module exports CALL_<kind>). The kind's
 * only code is its run_<kind> below, the C call.
 *   plan     the size_t values of its plan
 *   reads    the arrays read, which come first; then the written ones, up to `arrays`
 *   loops    1: the plan's p[0] is a count of C calls (images or rows), made inside one ISA pin
 *   bytes    the byte length array i must have: per_image (p[0] * p[1 + i]), planned (p[1 + i]) or a function
 *   longer   the array that may be longer than its planned length (the conv buffer), or -1
 *   absent   where the C function takes NULL: which arrays may be None, under which plan (never, bias_flag, no_bytes)
 *   zero     the plan value that asks for the last array to be zeroed before the call (libraries whose kernels read
 *            dst before writing it: upstream's GEMM), or -1 */
#define PLANNED_CALLS(X) \
    /*kind          plan reads arrays loops bytes          longer absent     zero */ \
    X(POOL_AVERAGE,  16,  1,    2,     1,   per_image,     -1,    never,     -1) \
    X(POOL_MAX32F,   19,  1,    2,     1,   per_image,     -1,    never,     -1) \
    X(POOL_MAX16B,   15,  1,    2,     1,   per_image,     -1,    never,     -1) \
    X(POOL_MAX8U,    15,  1,    2,     1,   per_image,     -1,    never,     -1) \
    X(INNER_LAYER,    4,  3,    4,     1,   inner_layer,   -1,    bias_flag, -1) \
    X(INNER_8I,       4,  2,    3,     0,   inner_8i,      -1,    never,     -1) \
    X(CONV32F,        5,  1,    3,     0,   planned,        1,    never,      4) \
    X(SOFTMAX32F,     3,  1,    2,     0,   softmax,       -1,    never,     -1) \
    X(IP32F,          6,  2,    4,     0,   planned,       -1,    no_bytes,   5)

#define CALL_ENUM_(kind, ...) CALL_##kind,
enum { PLANNED_CALLS(CALL_ENUM_) CALL_KINDS };
#define MAX_ARRAYS 4
#define MAX_PLAN 19

/* The plans, laid out per kind:
 *   POOL_AVERAGE  n, src bytes, dst bytes (per image), srcC, srcH, srcW, kY, kX, sY, sX, pY, pX, dstH, dstW,
 *                 excludePad, format; arrays: src, dst
 *   POOL_MAX32F   n, src bytes, dst bytes, srcC, srcH, srcW, kC, kY, kX, sC, sY, sX, pC, pY, pX, dstC, dstH, dstW,
 *                 format; arrays: src, dst
 *   POOL_MAX16B   n, src bytes, dst bytes, srcC, srcH, srcW, kY, kX, sY, sX, pY, pX, dstH, dstW, format;
 *                 arrays: src, dst
 *   POOL_MAX8U    as POOL_MAX16B
 *   INNER_LAYER   rows, size, count, has bias; arrays: x, weight, bias or None, out
 *   INNER_8I      M, N, K, compatibility; arrays: src, weight, dst
 *   CONV32F       context, src bytes, buffer bytes (at least), dst bytes, zero dst first; arrays: src, buf, dst
 *   SOFTMAX32F    outer, count, inner; arrays: src, dst
 *   IP32F         context, A bytes, B bytes (0: NULL), buf bytes (0: NULL), C bytes, zero C first;
 *                 arrays: A, B or None, buf or None, C */

/* bytes: the byte length of array i under plan p */
static size_t bytes_per_image(const size_t *p, int i) { return p[0] * p[1 + i]; }
static size_t bytes_planned(const size_t *p, int i) { return p[1 + i]; }
static size_t bytes_inner_layer(const size_t *p, int i)
{
    const size_t sizes[4] = {p[0] * p[1] * 4, p[2] * p[1] * 4, p[2] * 4, p[0] * p[2] * 4};
    return sizes[i];
}
static size_t bytes_inner_8i(const size_t *p, int i)
{
    const size_t sizes[3] = {p[0] * p[2], p[1] * p[2], p[0] * p[1] * 4};
    return sizes[i];
}
static size_t bytes_softmax(const size_t *p, int i)
{
    (void)i;
    return p[0] * p[1] * p[2] * 4;
}

/* absent: 1 where array i may be None (the C function then gets NULL) under plan p */
static int absent_never(const size_t *p, int i)
{
    (void)p, (void)i;
    return 0;
}
static int absent_bias_flag(const size_t *p, int i) { return i == 2 && p[3] == 0; } /* the layer without bias */
static int absent_no_bytes(const size_t *p, int i) { return (i == 1 || i == 2) && p[1 + i] == 0; } /* B, buf */

/* run: the C call of a kind, fn being the function, p the plan and b the buffers */
static void run_POOL_AVERAGE(void *fn, const size_t *p, void *const *b)
{
    for (size_t i = 0; i < p[0]; i++)
        ((__typeof__(&SimdSynetPoolingAverage))fn)((const float *)((const char *)b[0] + i * p[1]), p[3], p[4], p[5],
            p[6], p[7], p[8], p[9], p[10], p[11], (float *)((char *)b[1] + i * p[2]), p[12], p[13], (SimdBool)p[14],
            (SimdTensorFormatType)p[15]);
}
static void run_POOL_MAX32F(void *fn, const size_t *p, void *const *b)
{
    for (size_t i = 0; i < p[0]; i++)
        ((__typeof__(&SimdSynetPoolingMax32f))fn)((const float *)((const char *)b[0] + i * p[1]), p[3], p[4], p[5],
            p[6], p[7], p[8], p[9], p[10], p[11], p[12], p[13], p[14], (float *)((char *)b[1] + i * p[2]), p[15],
            p[16], p[17], (SimdTensorFormatType)p[18]);
}
static void run_POOL_MAX16B(void *fn, const size_t *p, void *const *b)
{
    for (size_t i = 0; i < p[0]; i++)
        ((__typeof__(&SimdSynetPoolingMax16b))fn)((const uint16_t *)((const char *)b[0] + i * p[1]), p[3], p[4],
            p[5], p[6], p[7], p[8], p[9], p[10], p[11], (uint16_t *)((char *)b[1] + i * p[2]), p[12], p[13],
            (SimdTensorFormatType)p[14]);
}
static void run_POOL_MAX8U(void *fn, const size_t *p, void *const *b)
{
    for (size_t i = 0; i < p[0]; i++)
        ((__typeof__(&SimdSynetPoolingMax8u))fn)((const uint8_t *)((const char *)b[0] + i * p[1]), p[3], p[4],
            p[5], p[6], p[7], p[8], p[9], p[10], p[11], (uint8_t *)((char *)b[1] + i * p[2]), p[12], p[13],
            (SimdTensorFormatType)p[14]);
}
static void run_INNER_LAYER(void *fn, const size_t *p, void *const *b)
{
    for (size_t i = 0; i < p[0]; i++)
        ((__typeof__(&SimdSynetInnerProductLayerForward))fn)((const float *)b[0] + i * p[1], (const float *)b[1],
            (const float *)b[2], p[2], p[1], (float *)b[3] + i * p[2]);
}
static void run_INNER_8I(void *fn, const size_t *p, void *const *b)
{
    ((__typeof__(&SimdSynetInnerProduct8i))fn)(p[0], p[1], p[2], (const uint8_t *)b[0], (const int8_t *)b[1],
        (int32_t *)b[2], (SimdSynetCompatibilityType)p[3]);
}
static void run_CONV32F(void *fn, const size_t *p, void *const *b)
{
    ((__typeof__(&SimdSynetConvolution32fForward))fn)((void *)p[0], (const float *)b[0], (float *)b[1],
        (float *)b[2]);
}
static void run_SOFTMAX32F(void *fn, const size_t *p, void *const *b)
{
    ((__typeof__(&SimdSynetSoftmax32f))fn)((const float *)b[0], p[0], p[1], p[2], (float *)b[1]);
}
static void run_IP32F(void *fn, const size_t *p, void *const *b)
{
    ((__typeof__(&SimdSynetInnerProduct32fForward))fn)((void *)p[0], (const float *)b[0], (const float *)b[1],
        (float *)b[2], (float *)b[3]);
}

static const struct call_kind {
    const char *name; /* the module's constant */
    Py_ssize_t plan;
    int reads, arrays, loops, longer, zero;
    size_t (*bytes)(const size_t *p, int i);
    int (*absent)(const size_t *p, int i);
    void (*run)(void *fn, const size_t *p, void *const *b);
} CALLS[CALL_KINDS] = {
#define CALL_ROW_(kind, plan, reads, arrays, loops, bytes, longer, absent, zero) \
    {"CALL_" #kind, plan, reads, arrays, loops, longer, zero, bytes_##bytes, absent_##absent, run_##kind},
    PLANNED_CALLS(CALL_ROW_)
};
#define CALL_LIMITS_(kind, plan, reads, arrays, ...) \
    _Static_assert(plan <= MAX_PLAN && arrays <= MAX_ARRAYS && reads <= arrays, #kind ": plan or arrays too long");
PLANNED_CALLS(CALL_LIMITS_)

/* Export `obj` (an exact ndarray, C-contiguous) into `view`; 1: exported, 0: not (no error set). */
static int get_any(PyObject *obj, Py_buffer *view, int writable)
{
    if (ndarray_type == NULL || (PyObject *)Py_TYPE(obj) != ndarray_type)
        return 0;
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0)) != 0) {
        PyErr_Clear();
        return 0;
    }
    if (view->buf == NULL && view->len > 0) {
        PyBuffer_Release(view);
        return 0;
    }
    return 1;
}

/* Every index of `view` (int32 or int64) in [-count, count). */
static int indices_in_range(const Py_buffer *view, size_t item, size_t count)
{
    Py_ssize_t n = view->len / (Py_ssize_t)item;
    int64_t high = (int64_t)count, low = -high;
    if (item == 4) {
        const int32_t *p = (const int32_t *)view->buf;
        int32_t lo = INT32_MAX, hi = INT32_MIN;
        for (Py_ssize_t i = 0; i < n; i++) {
            lo = p[i] < lo ? p[i] : lo;
            hi = p[i] > hi ? p[i] : hi;
        }
        return n == 0 || (lo >= low && hi < high);
    }
    const int64_t *p = (const int64_t *)view->buf;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (Py_ssize_t i = 0; i < n; i++) {
        lo = p[i] < lo ? p[i] : lo;
        hi = p[i] > hi ? p[i] : hi;
    }
    return n == 0 || (lo >= low && hi < high);
}

/* The bundled library's SimdBindPinIsa and SimdBindUnpinIsa, given by pin_isa() once it is loaded (NULL before):
   a planned call made of several C calls (a batch, image by image or row by row) runs them inside one pin, so that
   a set_isa on another thread cannot give its parts two ISAs. Calls of other libraries are pinned too, harmlessly
   (the pin is the bundled library's thread-local state; those libraries never change their ISA). */
struct isa_pin {
    int (*pin)(void);
    void (*unpin)(int);
};
/* One pointer, read once by run() (which runs without the GIL): a registration on another thread meanwhile can never
   pair one library's pin with another's unpin. A pair replaced is not freed, as a run may still hold it; there is
   one per library registered. */
static struct isa_pin *_Atomic isa_pin_fns;

static void run(const struct call_kind *call, void *fn, const size_t *p, void *const *b)
{
    struct isa_pin *const pin = call->loops && p[0] > 1 ? isa_pin_fns : NULL;
    const int token = pin != NULL ? pin->pin() : -1;
    call->run(fn, p, b);
    if (pin != NULL)
        pin->unpin(token);
}

/* pin_isa(address of SimdBindPinIsa, address of SimdBindUnpinIsa): see isa_pin_fns. */
static PyObject *fast_pin_isa(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    void *pin = nargs == 2 ? address(args[0]) : NULL, *unpin = nargs == 2 ? address(args[1]) : NULL;
    if (pin == NULL || unpin == NULL) {
        PyErr_SetString(PyExc_TypeError, "pin_isa(pin address, unpin address) takes two non-zero addresses");
        return NULL;
    }
    struct isa_pin *current = isa_pin_fns;
    if (current != NULL && (void *)current->pin == pin && (void *)current->unpin == unpin)
        Py_RETURN_NONE;
    struct isa_pin *pair = PyMem_Malloc(sizeof *pair);
    if (pair == NULL)
        return PyErr_NoMemory();
    pair->pin = (int (*)(void))pin;
    pair->unpin = (void (*)(int))unpin;
    isa_pin_fns = pair;
    Py_RETURN_NONE;
}

/* Bytes of work from which the GIL is released around the C call (see RELEASE_THRESHOLD). */
#define RELEASE_BYTES (RELEASE_THRESHOLD * 4)

static PyObject *fast_call(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs < 3)
        Py_RETURN_NONE;
    long kind = small_int(args[0], CALL_KINDS - 1);
    void *fn = address(args[1]);
    if (kind < 0 || fn == NULL || !PyBytes_CheckExact(args[2]) || nargs != 3 + CALLS[kind].arrays
        || PyBytes_Size(args[2]) != CALLS[kind].plan * (Py_ssize_t)sizeof(size_t))
        Py_RETURN_NONE;
    const struct call_kind *call = &CALLS[kind];
    size_t p[MAX_PLAN];
    memcpy(p, PyBytes_AsString(args[2]), (size_t)call->plan * sizeof(size_t));
    int count = call->arrays, reads = call->reads, held[MAX_ARRAYS] = {0}, ok = 1;
    Py_buffer views[MAX_ARRAYS];
    void *bufs[MAX_ARRAYS] = {NULL};
    size_t total = 0;
    for (int i = 0; i < count && ok; i++) {
        PyObject *obj = args[3 + i];
        if (obj == Py_None) {
            ok = call->absent(p, i); /* NULL only where the C function takes it and the plan says so */
            continue;
        }
        size_t bytes = call->bytes(p, i);
        ok = get_any(obj, &views[i], i >= reads);
        if (!ok)
            break;
        held[i] = 1;
        size_t len = (size_t)views[i].len;
        ok = i == call->longer ? len >= bytes : len == bytes;
        bufs[i] = views[i].buf;
        total += len;
    }
    for (int i = reads; i < count && ok; i++) /* a written buffer shares no byte with any other */
        for (int j = 0; j < count && ok; j++)
            if (j != i && held[i] && held[j])
                ok = !overlap(&views[i], &views[j]);
    /* libraries whose kernels read dst before writing it (upstream's GEMM) get it zeroed, once every check passed */
    if (ok && call->zero >= 0 && p[call->zero])
        memset(bufs[count - 1], 0, (size_t)views[count - 1].len);
    if (ok) {
        if (total >= RELEASE_BYTES) {
            Py_BEGIN_ALLOW_THREADS
            run(call, fn, p, bufs);
            Py_END_ALLOW_THREADS
        } else {
            run(call, fn, p, bufs);
        }
    }
    for (int i = 0; i < count; i++)
        if (held[i])
            PyBuffer_Release(&views[i]);
    if (!ok)
        Py_RETURN_NONE;
    Py_RETURN_TRUE;
}

/* ---- gather ----------------------------------------------------------------------------------------------------
 * gather(plan, handle, lock, data, indices, out) -> out, a new array, or None when not handled (nothing written).
 * The whole planned call of GatherElements.forward (and so of gather_elements on a cached context) in one C call:
 * the checks, the lock and the kernel. In Python they cost more than the kernel and more than torch.gather itself.
 *   plan:    (address of SimdSynetGatherElementsForward, bytes, data dtype, index dtype, index shape, constant
 *            index or None); bytes: size_t values context, rank, srcCount, index item size (4 or 8), then the
 *            data shape and the index shape (rank values each). The wrapper derives it from checked arguments.
 *   handle:  the context's ffi.gc pointer, None once closed (not handled). Holding it for the call keeps the C
 *            context alive until the call returns, however another thread closes the context meanwhile.
 *   lock:    the context's threading.Lock: held around the range check and the C call, taken as `with lock` takes
 *            it (blocking, the GIL released while waiting; an exception raised while waiting, e.g.
 *            KeyboardInterrupt, propagates with nothing written and the lock not held).
 * It accepts exactly: data an exact ndarray whose dtype is the plan's dtype object and whose shape is the plan's,
 * C-contiguous; indices the same with the index dtype and shape, or None when the plan has a constant index (the
 * context's own read-only copy, range-checked when it was copied, is passed instead); out None (a new zeroed array
 * of the index shape and data dtype) or an exact ndarray of that dtype and shape, C-contiguous, writable, sharing
 * no byte with data or indices; and every index in [-srcCount, srcCount), checked under the lock right before the
 * C call (upstream's kernel reads out of bounds otherwise). */
#define GATHER_MAX_RANK 8
static PyObject *lock_type, *str_dtype, *str_acquire, *str_release;

/* `obj` exported into `view` when it is an exact ndarray whose dtype is `dtype` (identity) and whose shape is
 * `shape` (`rank` extents). 1: exported, 0: not (no error set). */
static int get_planned(PyObject *obj, PyObject *dtype, const size_t *shape, size_t rank, Py_buffer *view,
                       int writable)
{
    if (ndarray_type == NULL || (PyObject *)Py_TYPE(obj) != ndarray_type)
        return 0;
    PyObject *found = PyObject_GetAttr(obj, str_dtype);
    if (found == NULL) {
        PyErr_Clear();
        return 0;
    }
    int same = found == dtype;
    Py_DECREF(found);
    if (!same || !get_any(obj, view, writable))
        return 0;
    int ok = view->ndim == (int)rank && view->shape != NULL;
    for (size_t i = 0; ok && i < rank; i++)
        ok = view->shape[i] == (Py_ssize_t)shape[i];
    if (!ok)
        PyBuffer_Release(view);
    return ok;
}

static PyObject *fast_gather(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 6 || lock_type == NULL)
        Py_RETURN_NONE;
    PyObject *plan = args[0], *handle = args[1], *lock = args[2], *data = args[3], *indices = args[4];
    PyObject *out = args[5];
    if (!PyTuple_CheckExact(plan) || PyTuple_Size(plan) != 6 || handle == Py_None
        || (PyObject *)Py_TYPE(lock) != lock_type)
        Py_RETURN_NONE;
    gather_fn fn = (gather_fn)address(PyTuple_GetItem(plan, 0));
    PyObject *packed = PyTuple_GetItem(plan, 1), *data_dtype = PyTuple_GetItem(plan, 2);
    PyObject *index_dtype = PyTuple_GetItem(plan, 3), *index_shape = PyTuple_GetItem(plan, 4);
    PyObject *constant = PyTuple_GetItem(plan, 5);
    if (fn == NULL || !PyBytes_CheckExact(packed) || PyBytes_Size(packed) < 4 * (Py_ssize_t)sizeof(size_t))
        Py_RETURN_NONE;
    size_t p[4 + 2 * GATHER_MAX_RANK];
    memcpy(p, PyBytes_AsString(packed), 4 * sizeof(size_t));
    size_t rank = p[1], item = p[3];
    if (rank < 1 || rank > GATHER_MAX_RANK || (item != 4 && item != 8)
        || PyBytes_Size(packed) != (Py_ssize_t)((4 + 2 * rank) * sizeof(size_t)))
        Py_RETURN_NONE;
    memcpy(p, PyBytes_AsString(packed), (4 + 2 * rank) * sizeof(size_t));
    const size_t *data_shape = p + 4, *idx_shape = p + 4 + rank;

    Py_buffer data_view, index_view, out_view;
    PyObject *result = NULL;
    int out_held = 0, failed = 0;
    int checked = constant != Py_None; /* the constant index was range-checked when the context copied it */
    if (checked && indices != Py_None)
        Py_RETURN_NONE;
    if (!get_planned(data, data_dtype, data_shape, rank, &data_view, 0))
        Py_RETURN_NONE;
    if (!get_planned(checked ? constant : indices, index_dtype, idx_shape, rank, &index_view, 0)) {
        PyBuffer_Release(&data_view);
        Py_RETURN_NONE;
    }
    if (out == Py_None) {
        result = PyObject_CallFunctionObjArgs(empty_fn, index_shape, data_dtype, NULL);
        if (result == NULL)
            PyErr_Clear();
        else if ((out_held = get_planned(result, data_dtype, idx_shape, rank, &out_view, 1)))
            memset(out_view.buf, 0, (size_t)out_view.len); /* as numpy.zeros: a library may leave some unwritten */
        else
            Py_CLEAR(result);
    } else if ((out_held = get_planned(out, data_dtype, idx_shape, rank, &out_view, 1))) {
        if (!overlap(&out_view, &data_view) && !overlap(&out_view, &index_view))
            result = Py_NewRef(out);
    }
    if (result != NULL && out_view.len > 0) {
        PyObject *held = PyObject_CallMethodObjArgs(lock, str_acquire, NULL);
        if (held == NULL) {
            failed = 1;
        } else {
            Py_DECREF(held);
            if (checked || indices_in_range(&index_view, item, p[2])) {
                if (data_view.len + index_view.len + out_view.len >= RELEASE_BYTES) {
                    Py_BEGIN_ALLOW_THREADS
                    fn((void *)p[0], (const uint8_t *)data_view.buf, (const uint8_t *)index_view.buf,
                       (uint8_t *)out_view.buf);
                    Py_END_ALLOW_THREADS
                } else {
                    fn((void *)p[0], (const uint8_t *)data_view.buf, (const uint8_t *)index_view.buf,
                       (uint8_t *)out_view.buf);
                }
            } else {
                Py_CLEAR(result); /* the ordinary path names the index out of range */
            }
            PyObject *released = PyObject_CallMethodObjArgs(lock, str_release, NULL);
            if (released == NULL)
                failed = 1;
            Py_XDECREF(released);
        }
    }
    if (out_held)
        PyBuffer_Release(&out_view);
    PyBuffer_Release(&index_view);
    PyBuffer_Release(&data_view);
    if (failed) {
        Py_XDECREF(result);
        return NULL;
    }
    if (result == NULL)
        Py_RETURN_NONE;
    return result;
}

/* init(numpy.ndarray, numpy.empty, numpy.dtype("float32")): called once by simdbind on import. */
static PyObject *fast_init(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "init(ndarray, empty, float32) takes 3 arguments");
        return NULL;
    }
    PyObject *old[3] = {ndarray_type, empty_fn, float32};
    ndarray_type = Py_NewRef(args[0]);
    empty_fn = Py_NewRef(args[1]);
    float32 = Py_NewRef(args[2]);
    for (int i = 0; i < 3; i++)
        Py_XDECREF(old[i]);
    if (true_tag == NULL) {
        true_tag = PyObject_CallNoArgs((PyObject *)&PyBaseObject_Type);
        false_tag = PyObject_CallNoArgs((PyObject *)&PyBaseObject_Type);
        if (true_tag == NULL || false_tag == NULL)
            return NULL;
    }
    if (lock_type == NULL) {
        PyObject *thread = PyImport_ImportModule("_thread");
        PyObject *type = thread == NULL ? NULL : PyObject_GetAttrString(thread, "LockType");
        Py_XDECREF(thread);
        str_dtype = PyUnicode_InternFromString("dtype");
        str_acquire = PyUnicode_InternFromString("acquire");
        str_release = PyUnicode_InternFromString("release");
        if (type == NULL || str_dtype == NULL || str_acquire == NULL || str_release == NULL) {
            Py_XDECREF(type);
            return NULL;
        }
        lock_type = type; /* set last: fast_gather runs only once everything it needs is here */
    }
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"eltwise", (PyCFunction)(void (*)(void))fast_eltwise, METH_FASTCALL,
     "eltwise(address, inputs, weights, op, out) -> array, or None when not handled (see _fastcall.c)"},
    {"unary", (PyCFunction)(void (*)(void))fast_unary, METH_FASTCALL,
     "unary(address, x, op, out) -> array, or None when not handled (see _fastcall.c)"},
    {"key", (PyCFunction)(void (*)(void))fast_key, METH_FASTCALL,
     "key(prefix, *args) -> a plan cache key of plain arguments, or None (see _fastcall.c)"},
    {"call", (PyCFunction)(void (*)(void))fast_call, METH_FASTCALL,
     "call(kind, address, plan, *arrays) -> True, or None when not handled (see _fastcall.c)"},
    {"gather", (PyCFunction)(void (*)(void))fast_gather, METH_FASTCALL,
     "gather(plan, handle, lock, data, indices, out) -> array, or None when not handled (see _fastcall.c)"},
    {"pin_isa", (PyCFunction)(void (*)(void))fast_pin_isa, METH_FASTCALL,
     "pin_isa(address of SimdBindPinIsa, address of SimdBindUnpinIsa): the pin of multi-call plans"},
    {"init", (PyCFunction)(void (*)(void))fast_init, METH_FASTCALL,
     "init(numpy.ndarray, numpy.empty, numpy.dtype('float32'))"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "simdbind._fastcall",
    "C-side fast path of simdbind.eltwise and simdbind.unary (returns None when a call is not handled).", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__fastcall(void)
{
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && PyModule_AddIntConstant(m, "RELEASE_THRESHOLD", RELEASE_THRESHOLD) != 0) {
        Py_DECREF(m);
        return NULL;
    }
    if (m != NULL && PyModule_AddIntConstant(m, "MAX_INPUTS", MAX_INPUTS) != 0) {
        Py_DECREF(m);
        return NULL;
    }
    for (int i = 0; i < CALL_KINDS && m != NULL; i++) {
        if (PyModule_AddIntConstant(m, CALLS[i].name, i) != 0) {
            Py_DECREF(m);
            return NULL;
        }
    }
    return m;
}
