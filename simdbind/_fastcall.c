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
#include <stdint.h>
#include <string.h>

typedef void (*eltwise_fn)(const float *const *src, const float *weight, size_t count, size_t size, int type,
                           float *dst);
typedef void (*unary_fn)(const float *src, size_t size, int type, float *dst);

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
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"eltwise", (PyCFunction)(void (*)(void))fast_eltwise, METH_FASTCALL,
     "eltwise(address, inputs, weights, op, out) -> array, or None when not handled (see _fastcall.c)"},
    {"unary", (PyCFunction)(void (*)(void))fast_unary, METH_FASTCALL,
     "unary(address, x, op, out) -> array, or None when not handled (see _fastcall.c)"},
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
    return m;
}
