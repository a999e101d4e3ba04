/*
 * layout_type.c: strided.StridedLayout, an immutable Python value wrapping a
 * strided_layout.
 *
 * The object stores only ndim extents and ndim strides (a variable-size
 * object), so small layouts come from Python's small-object allocator. Each
 * method unpacks it into a strided_layout on the stack, calls libstrided and
 * packs the result into a new object. The class is final and has no
 * __dict__, so instances cannot change.
 */
#include <stddef.h>
#include <string.h>

#include "args.h"
#include "strided_py.h"
#include "structmember.h"

typedef struct {
    PyObject_VAR_HEAD /* ob_size is ndim */
        int itemsize;
    char implicit_strides;
    long long slice_offset;
    int64_t data[1]; /* shape[ndim] then strides[ndim] */
} LayoutObject;

static PyTypeObject LayoutType;

#define NDIM(o) ((int)Py_SIZE(o))

static void unpack(const LayoutObject *o, strided_layout *l)
{
    int n = NDIM(o);
    l->ndim = n;
    l->itemsize = o->itemsize;
    l->implicit_strides = o->implicit_strides;
    l->slice_offset = o->slice_offset;
    if (n > 0) {
        memcpy(l->shape, o->data, (size_t)n * sizeof(int64_t));
        memcpy(l->strides, o->data + n, (size_t)n * sizeof(int64_t));
    }
}

static PyObject *pack(const strided_layout *l)
{
    LayoutObject *o = PyObject_NewVar(LayoutObject, &LayoutType, l->ndim);
    if (o == NULL)
        return NULL;
    int n = l->ndim;
    o->itemsize = l->itemsize;
    o->implicit_strides = l->implicit_strides;
    o->slice_offset = l->slice_offset;
    if (n > 0) {
        memcpy(o->data, l->shape, (size_t)n * sizeof(int64_t));
        memcpy(o->data + n, l->strides, (size_t)n * sizeof(int64_t));
    }
    return (PyObject *)o;
}

/* Pack a result, or return self (a new reference) when the result equals
 * the input: the operation was a no-op, and cuda.core returns self then. */
static PyObject *pack_or_self(LayoutObject *self, const strided_layout *in,
                              const strided_layout *result)
{
    if (strided_layout_equal(in, result)) {
        Py_INCREF(self);
        return (PyObject *)self;
    }
    return pack(result);
}

static PyObject *done(strided_status status, const strided_layout *result)
{
    return status == STRIDED_OK ? pack(result) : strided_py_raise(status);
}

/* A shape or strides argument: a tuple or list of integers. Writes its
 * length; converts the items only when there are at most 64 of them (a
 * longer one is reported by libstrided from its length alone). */
static int as_int64_sequence(PyObject *obj, const char *what, int64_t *out, int *out_n)
{
    if (!PyTuple_Check(obj) && !PyList_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s must be a tuple of integers, got %.200s", what,
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(obj);
    if (n > INT_MAX) {
        PyErr_Format(PyExc_ValueError, "%s has too many elements", what);
        return -1;
    }
    if (n <= STRIDED_MAX_NDIM) {
        PyObject **items = PySequence_Fast_ITEMS(obj);
        for (Py_ssize_t i = 0; i < n; i++)
            if (strided_py_as_int64(items[i], what, (int)i, &out[i]) < 0)
                return -1;
    }
    *out_n = (int)n;
    return 0;
}

/* Axes: one integer, or a tuple or list of them (at most 64 converted). */
static int as_axes(PyObject *obj, const char *what, bool allow_scalar, int *out, int *out_n)
{
    if (allow_scalar && PyIndex_Check(obj)) {
        *out_n = 1;
        return strided_py_as_int(obj, what, -1, &out[0]);
    }
    if (!PyTuple_Check(obj) && !PyList_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s must be %sa tuple of integers, got %.200s", what,
                     allow_scalar ? "an integer or " : "", Py_TYPE(obj)->tp_name);
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(obj);
    if (n > INT_MAX) {
        PyErr_Format(PyExc_ValueError, "%s has too many elements", what);
        return -1;
    }
    if (n <= STRIDED_MAX_NDIM) {
        PyObject **items = PySequence_Fast_ITEMS(obj);
        for (Py_ssize_t i = 0; i < n; i++)
            if (strided_py_as_int(items[i], what, (int)i, &out[i]) < 0)
                return -1;
    }
    *out_n = (int)n;
    return 0;
}

/* A stride_order argument: 'C', 'F', ('K' when allow_keep) or a tuple or
 * list permutation. */
static int as_order(PyObject *obj, bool allow_keep, strided_order *order, int *perm, int *nperm)
{
    *nperm = 0;
    if (PyUnicode_Check(obj)) {
        if (PyUnicode_CompareWithASCIIString(obj, "C") == 0) {
            *order = STRIDED_ORDER_C;
            return 0;
        }
        if (PyUnicode_CompareWithASCIIString(obj, "F") == 0) {
            *order = STRIDED_ORDER_F;
            return 0;
        }
        if (allow_keep && PyUnicode_CompareWithASCIIString(obj, "K") == 0) {
            *order = STRIDED_ORDER_KEEP;
            return 0;
        }
    } else if (PyTuple_Check(obj) || PyList_Check(obj)) {
        *order = STRIDED_ORDER_PERM;
        return as_axes(obj, "stride_order", false, perm, nperm);
    }
    PyErr_Format(PyExc_ValueError,
                 allow_keep ? "The stride_order must be 'K', 'C', 'F', or a "
                              "permutation tuple. Got: %S"
                            : "The stride_order must be 'C', 'F', or a "
                              "permutation tuple. Got: %S",
                 obj);
    return -1;
}

/* A flag argument: absent gives the default, else its truth value. */
static int as_flag(PyObject *obj, int absent)
{
    return obj == NULL ? absent : PyObject_IsTrue(obj);
}

static PyObject *make_layout(PyObject *shape_obj, PyObject *strides_obj, PyObject *itemsize_obj,
                             int divide)
{
    int64_t shape[STRIDED_MAX_NDIM], strides[STRIDED_MAX_NDIM];
    int ndim, nstrides = 0, itemsize;
    if (divide < 0 || as_int64_sequence(shape_obj, "shape", shape, &ndim) < 0)
        return NULL;
    bool has_strides = strides_obj != Py_None;
    if (has_strides && as_int64_sequence(strides_obj, "strides", strides, &nstrides) < 0)
        return NULL;
    if (strided_py_as_int(itemsize_obj, "itemsize", -1, &itemsize) < 0)
        return NULL;
    strided_layout l;
    strided_status status;
    if (has_strides && nstrides != ndim) {
        /* The shape's own errors come first, as in cuda.core. */
        status = strided_layout_init(&l, ndim, shape, NULL, itemsize > 0 ? itemsize : 1);
        if (status != STRIDED_OK)
            return strided_py_raise(status);
        return PyErr_Format(PyExc_ValueError,
                            "Strides, if provided, must have the same length "
                            "as shape. Shape has %d dimensions, but strides "
                            "has %d elements.",
                            ndim, nstrides);
    }
    if (divide)
        status = strided_layout_init_byte_strides(&l, ndim, shape, has_strides ? strides : NULL,
                                                  itemsize);
    else
        status = strided_layout_init(&l, ndim, shape, has_strides ? strides : NULL, itemsize);
    return done(status, &l);
}

static const char *const init_names[] = {"shape", "strides", "itemsize", "divide_strides", NULL};

/* StridedLayout(...) through vectorcall, the fast path every call takes. */
static PyObject *layout_vectorcall(PyObject *type, PyObject *const *args, size_t nargsf,
                                   PyObject *kwnames)
{
    PyObject *a[4];
    (void)type;
    if (strided_py_bind_args("StridedLayout", args, PyVectorcall_NARGS(nargsf), kwnames, init_names,
                             3, a) < 0)
        return NULL;
    return make_layout(a[0], a[1], a[2], as_flag(a[3], 0));
}

/* StridedLayout.__new__, for callers that go through type.__call__. */
static PyObject *layout_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *shape_obj, *strides_obj, *itemsize_obj;
    int divide = 0;
    (void)type;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOO|p:StridedLayout", (char **)init_names,
                                     &shape_obj, &strides_obj, &itemsize_obj, &divide))
        return NULL;
    return make_layout(shape_obj, strides_obj, itemsize_obj, divide);
}

static PyObject *layout_dense(PyObject *unused, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames)
{
    static const char *const names[] = {"shape", "itemsize", "stride_order", NULL};
    PyObject *a[3];
    (void)unused; /* a static method: the class is final */
    if (strided_py_bind_args("dense", args, nargs, kwnames, names, 2, a) < 0)
        return NULL;
    strided_order order = STRIDED_ORDER_C;
    int perm[STRIDED_MAX_NDIM], nperm = 0, ndim, itemsize;
    int64_t shape[STRIDED_MAX_NDIM];
    if (a[2] != NULL && as_order(a[2], false, &order, perm, &nperm) < 0)
        return NULL;
    if (as_int64_sequence(a[0], "shape", shape, &ndim) < 0 ||
        strided_py_as_int(a[1], "itemsize", -1, &itemsize) < 0)
        return NULL;
    strided_layout l;
    return done(strided_layout_init_dense(&l, ndim, shape, itemsize, order, nperm,
                                          order == STRIDED_ORDER_PERM ? perm : NULL),
                &l);
}

static PyObject *to_dense_impl(LayoutObject *self, PyObject *order_obj)
{
    strided_order order = STRIDED_ORDER_KEEP;
    int perm[STRIDED_MAX_NDIM], nperm = 0;
    if (order_obj != NULL && as_order(order_obj, true, &order, perm, &nperm) < 0)
        return NULL;
    strided_layout in, out;
    unpack(self, &in);
    /* perm is only filled (and only read) for a permutation order. */
    strided_status status =
        strided_layout_to_dense(&in, order, nperm, order == STRIDED_ORDER_PERM ? perm : NULL, &out);
    if (status != STRIDED_OK)
        return strided_py_raise(status);
    /* Only the no-op cases can give back the input itself (a freshly built
     * layout has explicit strides and is only equal when it is the same). */
    if (order != STRIDED_ORDER_PERM)
        return pack_or_self(self, &in, &out);
    return pack(&out);
}

static PyObject *layout_dense_like(PyObject *unused, PyObject *const *args, Py_ssize_t nargs,
                                   PyObject *kwnames)
{
    static const char *const names[] = {"other", "stride_order", NULL};
    PyObject *a[2];
    (void)unused;
    if (strided_py_bind_args("dense_like", args, nargs, kwnames, names, 1, a) < 0)
        return NULL;
    if (!PyObject_TypeCheck(a[0], &LayoutType)) {
        PyErr_Format(PyExc_TypeError,
                     "dense_like() argument 'other' must be "
                     "StridedLayout, not %.200s",
                     Py_TYPE(a[0])->tp_name);
        return NULL;
    }
    return to_dense_impl((LayoutObject *)a[0], a[1]);
}

static PyObject *layout_to_dense(LayoutObject *self, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames)
{
    static const char *const names[] = {"stride_order", NULL};
    PyObject *a[1];
    if (strided_py_bind_args("to_dense", args, nargs, kwnames, names, 0, a) < 0)
        return NULL;
    return to_dense_impl(self, a[0]);
}

static PyObject *int64_tuple(int n, const int64_t *v)
{
    PyObject *t = PyTuple_New(n);
    if (t == NULL)
        return NULL;
    for (int i = 0; i < n; i++) {
        PyObject *x = PyLong_FromLongLong(v[i]);
        if (x == NULL) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, i, x);
    }
    return t;
}

static PyObject *get_ndim(LayoutObject *self, void *closure)
{
    (void)closure;
    return PyLong_FromLong(NDIM(self));
}

static PyObject *get_shape(LayoutObject *self, void *closure)
{
    (void)closure;
    return int64_tuple(NDIM(self), self->data);
}

static PyObject *get_strides(LayoutObject *self, void *closure)
{
    (void)closure;
    if (self->implicit_strides)
        Py_RETURN_NONE;
    return int64_tuple(NDIM(self), self->data + NDIM(self));
}

static PyObject *get_strides_in_bytes(LayoutObject *self, void *closure)
{
    (void)closure;
    if (self->implicit_strides)
        Py_RETURN_NONE;
    strided_layout l;
    int64_t bytes[STRIDED_MAX_NDIM];
    unpack(self, &l);
    strided_status status = strided_layout_strides_in_bytes(&l, bytes);
    if (status != STRIDED_OK)
        return strided_py_raise(status);
    return int64_tuple(l.ndim, bytes);
}

static PyObject *get_stride_order(LayoutObject *self, void *closure)
{
    (void)closure;
    strided_layout l;
    int order[STRIDED_MAX_NDIM];
    unpack(self, &l);
    strided_layout_stride_order(&l, order);
    PyObject *t = PyTuple_New(l.ndim);
    if (t == NULL)
        return NULL;
    for (int i = 0; i < l.ndim; i++) {
        PyObject *x = PyLong_FromLong(order[i]);
        if (x == NULL) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, i, x);
    }
    return t;
}

static PyObject *get_volume(LayoutObject *self, void *closure)
{
    (void)closure;
    strided_layout l;
    unpack(self, &l);
    return PyLong_FromLongLong(strided_layout_volume(&l));
}

#define PREDICATE_GETTER(name)                                     \
    static PyObject *get_##name(LayoutObject *self, void *closure) \
    {                                                              \
        (void)closure;                                             \
        strided_layout l;                                          \
        unpack(self, &l);                                          \
        return PyBool_FromLong(strided_layout_##name(&l));         \
    }
PREDICATE_GETTER(is_unique)
PREDICATE_GETTER(is_contiguous_c)
PREDICATE_GETTER(is_contiguous_f)
PREDICATE_GETTER(is_contiguous_any)
PREDICATE_GETTER(is_dense)
#undef PREDICATE_GETTER

static PyObject *get_offset_bounds(LayoutObject *self, void *closure)
{
    (void)closure;
    strided_layout l;
    int64_t lo, hi;
    unpack(self, &l);
    strided_layout_offset_bounds(&l, &lo, &hi);
    return Py_BuildValue("(LL)", (long long)lo, (long long)hi);
}

static PyObject *get_min_offset(LayoutObject *self, void *closure)
{
    (void)closure;
    strided_layout l;
    int64_t lo;
    unpack(self, &l);
    strided_layout_offset_bounds(&l, &lo, NULL);
    return PyLong_FromLongLong(lo);
}

static PyObject *get_max_offset(LayoutObject *self, void *closure)
{
    (void)closure;
    strided_layout l;
    int64_t hi;
    unpack(self, &l);
    strided_layout_offset_bounds(&l, NULL, &hi);
    return PyLong_FromLongLong(hi);
}

static PyObject *get_slice_offset_in_bytes(LayoutObject *self, void *closure)
{
    (void)closure;
    strided_layout l;
    int64_t bytes;
    unpack(self, &l);
    strided_status status = strided_layout_slice_offset_in_bytes(&l, &bytes);
    if (status != STRIDED_OK)
        return strided_py_raise(status);
    return PyLong_FromLongLong(bytes);
}

static PyObject *layout_required_size_in_bytes(LayoutObject *self, PyObject *unused)
{
    (void)unused;
    strided_layout l;
    int64_t size;
    unpack(self, &l);
    strided_status status = strided_layout_required_size_in_bytes(&l, &size);
    if (status != STRIDED_OK)
        return strided_py_raise(status);
    return PyLong_FromLongLong(size);
}

static PyObject *layout_flattened_axis_mask(LayoutObject *self, PyObject *unused)
{
    (void)unused;
    strided_layout l;
    uint64_t mask;
    unpack(self, &l);
    strided_status status = strided_layout_flattened_axis_mask(&l, &mask);
    if (status != STRIDED_OK)
        return strided_py_raise(status);
    return PyLong_FromUnsignedLongLong(mask);
}

static PyObject *layout_reshaped(LayoutObject *self, PyObject *shape_obj)
{
    int64_t shape[STRIDED_MAX_NDIM];
    int ndim;
    if (as_int64_sequence(shape_obj, "shape", shape, &ndim) < 0)
        return NULL;
    strided_layout l;
    unpack(self, &l);
    return done(strided_layout_reshape(&l, ndim, shape, &l), &l);
}

static PyObject *layout_permuted(LayoutObject *self, PyObject *axes_obj)
{
    int axes[STRIDED_MAX_NDIM], naxes;
    if (as_axes(axes_obj, "axis_order", false, axes, &naxes) < 0)
        return NULL;
    strided_layout l;
    unpack(self, &l);
    return done(strided_layout_permute(&l, naxes, axes, &l), &l);
}

static PyObject *layout_flattened(LayoutObject *self, PyObject *const *args, Py_ssize_t nargs,
                                  PyObject *kwnames)
{
    static const char *const names[] = {"start_axis", "end_axis", "mask", NULL};
    PyObject *a[3];
    if (strided_py_bind_args("flattened", args, nargs, kwnames, names, 0, a) < 0)
        return NULL;
    strided_layout l;
    unpack(self, &l);
    strided_status status;
    if (a[2] != NULL && a[2] != Py_None) {
        uint64_t mask;
        if (strided_py_as_uint64(a[2], "mask", &mask) < 0)
            return NULL;
        status = strided_layout_flatten_mask(&l, mask, &l);
    } else {
        int start = 0, end = -1;
        if ((a[0] && strided_py_as_int(a[0], "start_axis", -1, &start) < 0) ||
            (a[1] && strided_py_as_int(a[1], "end_axis", -1, &end) < 0))
            return NULL;
        status = strided_layout_flatten(&l, start, end, &l);
    }
    return done(status, &l);
}

static PyObject *layout_squeezed(LayoutObject *self, PyObject *unused)
{
    (void)unused;
    strided_layout l;
    unpack(self, &l);
    return done(strided_layout_squeeze(&l, &l), &l);
}

static PyObject *layout_unsqueezed(LayoutObject *self, PyObject *axis_obj)
{
    int axes[STRIDED_MAX_NDIM], naxes;
    if (as_axes(axis_obj, "axis", true, axes, &naxes) < 0)
        return NULL;
    if (naxes == 0) {
        Py_INCREF(self);
        return (PyObject *)self;
    }
    strided_layout l;
    unpack(self, &l);
    return done(strided_layout_unsqueeze(&l, naxes, axes, &l), &l);
}

static PyObject *layout_broadcast_to(LayoutObject *self, PyObject *shape_obj)
{
    int64_t shape[STRIDED_MAX_NDIM];
    int ndim;
    if (as_int64_sequence(shape_obj, "shape", shape, &ndim) < 0)
        return NULL;
    strided_layout l;
    unpack(self, &l);
    return done(strided_layout_broadcast(&l, ndim, shape, &l), &l);
}

static PyObject *layout_repacked(LayoutObject *self, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames)
{
    static const char *const names[] = {"itemsize", "data_ptr", "axis", "keep_dim", NULL};
    PyObject *a[4];
    int itemsize, axis = -1;
    int64_t data_ptr = 0;
    if (strided_py_bind_args("repacked", args, nargs, kwnames, names, 1, a) < 0)
        return NULL;
    int keep_dim = as_flag(a[3], 1);
    if (keep_dim < 0 || strided_py_as_int(a[0], "itemsize", -1, &itemsize) < 0 ||
        (a[1] && strided_py_as_int64(a[1], "data_ptr", -1, &data_ptr) < 0) ||
        (a[2] && strided_py_as_int(a[2], "axis", -1, &axis) < 0))
        return NULL;
    if (itemsize == self->itemsize) {
        Py_INCREF(self);
        return (PyObject *)self;
    }
    strided_layout l;
    unpack(self, &l);
    return done(strided_layout_repack(&l, itemsize, (intptr_t)data_ptr, axis, keep_dim, &l), &l);
}

static PyObject *layout_max_compatible_itemsize(LayoutObject *self, PyObject *const *args,
                                                Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"max_itemsize", "data_ptr", "axis", NULL};
    PyObject *a[3];
    int max_itemsize = 16, axis = -1, result;
    int64_t data_ptr = 0;
    if (strided_py_bind_args("max_compatible_itemsize", args, nargs, kwnames, names, 0, a) < 0)
        return NULL;
    if ((a[0] && strided_py_as_int(a[0], "max_itemsize", -1, &max_itemsize) < 0) ||
        (a[1] && strided_py_as_int64(a[1], "data_ptr", -1, &data_ptr) < 0) ||
        (a[2] && strided_py_as_int(a[2], "axis", -1, &axis) < 0))
        return NULL;
    strided_layout l;
    unpack(self, &l);
    strided_status status =
        strided_layout_max_compatible_itemsize(&l, max_itemsize, (intptr_t)data_ptr, axis, &result);
    if (status != STRIDED_OK)
        return strided_py_raise(status);
    return PyLong_FromLong(result);
}

/* Convert position pos of an index expression (-1: the whole key). */
static int as_index(PyObject *item, int pos, strided_index *out)
{
    if (PySlice_Check(item)) {
        PySliceObject *slice = (PySliceObject *)item;
        if (strided_py_reject_bool(slice->start, "slice start", -1) < 0 ||
            strided_py_reject_bool(slice->stop, "slice stop", -1) < 0 ||
            strided_py_reject_bool(slice->step, "slice step", -1) < 0)
            return -1;
        Py_ssize_t start, stop, step;
        if (PySlice_Unpack(item, &start, &stop, &step) < 0)
            return -1;
        /* Unpack has already put Python's defaults in place of None. */
        *out = strided_index_slice(start, stop, step);
        return 0;
    }
    if (PyIndex_Check(item)) {
        int64_t v;
        if (strided_py_as_int64(item, "index", pos, &v) < 0)
            return -1;
        *out = strided_index_at(v);
        return 0;
    }
    PyErr_Format(PyExc_TypeError, "Invalid slice: %S. Expected slice instance or integer.", item);
    return -1;
}

static PyObject *layout_sliced(LayoutObject *self, PyObject *key)
{
    PyObject *tuple = PyTuple_Check(key) ? Py_NewRef(key) : PyTuple_Pack(1, key);
    if (tuple == NULL)
        return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(tuple);
    strided_index indices[STRIDED_MAX_NDIM];
    strided_layout l;
    unpack(self, &l);
    /* More positions than axes is reported by libstrided from the count
     * alone, before any position is read. */
    if (n <= l.ndim) {
        for (Py_ssize_t i = 0; i < n; i++) {
            int pos = PyTuple_Check(key) ? (int)i : -1;
            if (as_index(PyTuple_GET_ITEM(tuple, i), pos, &indices[i]) < 0) {
                Py_DECREF(tuple);
                return NULL;
            }
        }
    }
    Py_DECREF(tuple);
    int count = n > INT_MAX ? INT_MAX : (int)n;
    return done(strided_layout_slice(&l, count, indices, &l), &l);
}

static PyObject *layout_coalesced(LayoutObject *self, PyObject *unused)
{
    (void)unused;
    strided_layout l;
    unpack(self, &l);
    return done(strided_layout_coalesce(&l, &l), &l);
}

static PyObject *layout_format(LayoutObject *self, PyObject *unused)
{
    (void)unused;
    strided_layout l;
    char text[256];
    unpack(self, &l);
    size_t n = strided_layout_format(&l, text, sizeof text);
    if (n < sizeof text)
        return PyUnicode_FromStringAndSize(text, (Py_ssize_t)n);
    char *big = PyMem_Malloc(n + 1);
    if (big == NULL)
        return PyErr_NoMemory();
    strided_layout_format(&l, big, n + 1);
    PyObject *s = PyUnicode_FromStringAndSize(big, (Py_ssize_t)n);
    PyMem_Free(big);
    return s;
}

static PyObject *layout_format_grid(LayoutObject *self, PyObject *unused)
{
    (void)unused;
    strided_layout l;
    size_t n;
    unpack(self, &l);
    strided_status status = strided_layout_format_grid(&l, NULL, 0, &n);
    if (status != STRIDED_OK)
        return strided_py_raise(status);
    char *text = PyMem_Malloc(n + 1);
    if (text == NULL)
        return PyErr_NoMemory();
    strided_layout_format_grid(&l, text, n + 1, NULL);
    PyObject *s = PyUnicode_FromStringAndSize(text, (Py_ssize_t)n);
    PyMem_Free(text);
    return s;
}

static PyObject *layout_richcompare(PyObject *a, PyObject *b, int op)
{
    if ((op != Py_EQ && op != Py_NE) || !PyObject_TypeCheck(a, &LayoutType) ||
        !PyObject_TypeCheck(b, &LayoutType))
        Py_RETURN_NOTIMPLEMENTED;
    strided_layout x, y;
    unpack((LayoutObject *)a, &x);
    unpack((LayoutObject *)b, &y);
    bool equal = strided_layout_equal(&x, &y);
    return PyBool_FromLong(op == Py_EQ ? equal : !equal);
}

static Py_hash_t layout_hash(LayoutObject *self)
{
    strided_layout l;
    unpack(self, &l);
    Py_hash_t h = (Py_hash_t)strided_layout_hash(&l);
    return h == -1 ? -2 : h;
}

static PyObject *layout_repr(LayoutObject *self)
{
    PyObject *shape = get_shape(self, NULL);
    PyObject *strides = shape ? get_strides(self, NULL) : NULL;
    PyObject *r = NULL;
    if (strides != NULL) {
        if (self->slice_offset != 0)
            r = PyUnicode_FromFormat(
                "StridedLayout(shape=%R, strides=%R, itemsize=%d, _slice_offset=%lld)", shape,
                strides, self->itemsize, self->slice_offset);
        else
            r = PyUnicode_FromFormat("StridedLayout(shape=%R, strides=%R, itemsize=%d)", shape,
                                     strides, self->itemsize);
    }
    Py_XDECREF(shape);
    Py_XDECREF(strides);
    return r;
}

static PyGetSetDef layout_getset[] = {
    {"ndim", (getter)get_ndim, NULL, "The number of dimensions, 0 to 64.", NULL},
    {"shape", (getter)get_shape, NULL, "The extents, a tuple of ints.", NULL},
    {"strides", (getter)get_strides, NULL,
     "The strides in elements, a tuple of ints.\n"
     "\n"
     "None for a layout made without strides (implicit C-contiguous strides).",
     NULL},
    {"strides_in_bytes", (getter)get_strides_in_bytes, NULL,
     "The strides in bytes (strides times itemsize).\n"
     "\n"
     "None for a layout made without strides.",
     NULL},
    {"stride_order", (getter)get_stride_order, NULL,
     "The axes from the largest absolute stride to the smallest.\n"
     "\n"
     "Ties go to the larger extent, then to the lower axis; for implicit strides it\n"
     "is the identity.",
     NULL},
    {"volume", (getter)get_volume, NULL,
     "The number of elements: the product of the extents (1 for 0-d).", NULL},
    {"is_unique", (getter)get_is_unique, NULL,
     "Whether no two elements share an offset.\n"
     "\n"
     "A cheap test that may say False for some unique interleaved layouts, but is\n"
     "exact for every layout obtained from a dense one by permuting, slicing,\n"
     "squeezing, unsqueezing, reshaping and flattening; False for a layout of\n"
     "elements with an axis of stride 0 and extent above 1, True for one of no\n"
     "elements.",
     NULL},
    {"is_contiguous_c", (getter)get_is_contiguous_c, NULL,
     "Whether the layout is C-contiguous.\n"
     "\n"
     "NumPy's relaxed rule: extent-1 axes are ignored, and a layout of no elements\n"
     "is contiguous. The slice offset does not matter.",
     NULL},
    {"is_contiguous_f", (getter)get_is_contiguous_f, NULL,
     "Whether the layout is F-contiguous.\n"
     "\n"
     "NumPy's relaxed rule, as for is_contiguous_c.",
     NULL},
    {"is_contiguous_any", (getter)get_is_contiguous_any, NULL,
     "Whether the layout is contiguous in some order of its axes.\n"
     "\n"
     "Permuted by its stride_order, it is C-contiguous: no gaps, and no negative or\n"
     "zero strides on axes of extent above 1.",
     NULL},
    {"is_dense", (getter)get_is_dense, NULL,
     "Whether the elements fill offsets 0 to volume - 1.\n"
     "\n"
     "Contiguous in some order (is_contiguous_any) with slice offset 0.",
     NULL},
    {"offset_bounds", (getter)get_offset_bounds, NULL,
     "The smallest and largest element offset, a pair of ints.\n"
     "\n"
     "The slice offset is included; ``(0, -1)`` for a layout of no elements.",
     NULL},
    {"min_offset", (getter)get_min_offset, NULL,
     "The smallest element offset (0 for a layout of no elements).", NULL},
    {"max_offset", (getter)get_max_offset, NULL,
     "The largest element offset (-1 for a layout of no elements).", NULL},
    {"slice_offset_in_bytes", (getter)get_slice_offset_in_bytes, NULL,
     "The slice offset in bytes: slice_offset times itemsize.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMemberDef layout_members[] = {
    {"itemsize", T_INT, offsetof(LayoutObject, itemsize), READONLY,
     "The size of an element in bytes."},
    {"slice_offset", T_LONGLONG, offsetof(LayoutObject, slice_offset), READONLY,
     "The element offset of index (0, ..., 0) from the base pointer.\n"
     "\n"
     "Made by slicing; format() shows it after the strides."},
    {NULL, 0, 0, 0, NULL},
};

#define KW (METH_FASTCALL | METH_KEYWORDS)

static PyMethodDef layout_methods[] = {
    {"dense", (PyCFunction)(void (*)(void))layout_dense, KW | METH_STATIC,
     "dense(shape, itemsize, stride_order='C')\n"
     "--\n"
     "\n"
     "A dense layout of a shape, with explicit strides.\n"
     "\n"
     "Parameters\n"
     "----------\n"
     "shape : tuple or list of int\n"
     "    The extents, each >= 0.\n"
     "itemsize : int\n"
     "    Bytes per element, > 0.\n"
     "stride_order : {'C', 'F'} or tuple or list of int, optional\n"
     "    'C' (the last axis fastest), 'F' (the first axis fastest), or a\n"
     "    permutation of the axes from the slowest to the fastest (negative axes\n"
     "    count from the end), which becomes the result's stride_order.\n"
     "\n"
     "Returns\n"
     "-------\n"
     "StridedLayout\n"
     "    The dense layout, with slice offset 0; its strides are all 0 when an\n"
     "    extent is 0.\n"
     "\n"
     "Raises\n"
     "------\n"
     "TypeError\n"
     "    If shape is not a tuple or list of integers.\n"
     "ValueError\n"
     "    If stride_order is none of these or not a permutation of the axes, or\n"
     "    for the shape and itemsize the constructor refuses.\n"
     "OverflowError\n"
     "    If the volume does not fit in int64.\n"
     "\n"
     "Examples\n"
     "--------\n"
     ">>> strided.StridedLayout.dense((2, 3), 4).format()\n"
     "'(2,3):(3,1)'\n"
     ">>> strided.StridedLayout.dense((2, 3, 4), 1, (2, 0, 1)).format()\n"
     "'(2,3,4):(3,1,6)'"},
    {"dense_like", (PyCFunction)(void (*)(void))layout_dense_like, KW | METH_STATIC,
     "dense_like(other, stride_order='K')\n"
     "--\n"
     "\n"
     "A dense layout with the shape and itemsize of another.\n"
     "\n"
     "Parameters\n"
     "----------\n"
     "other : StridedLayout\n"
     "    The layout whose shape and itemsize are taken.\n"
     "stride_order : {'K', 'C', 'F'} or tuple or list of int, optional\n"
     "    'K' keeps other's stride_order; 'C', 'F' or a permutation as for\n"
     "    dense().\n"
     "\n"
     "Returns\n"
     "-------\n"
     "StridedLayout\n"
     "    A dense layout with slice offset 0: other itself when it is already\n"
     "    dense in the order asked ('K', 'C' or 'F').\n"
     "\n"
     "Raises\n"
     "------\n"
     "TypeError\n"
     "    If other is not a StridedLayout.\n"
     "ValueError\n"
     "    If stride_order is none of these or not a permutation of the axes.\n"
     "\n"
     "Examples\n"
     "--------\n"
     ">>> t = strided.StridedLayout.dense((4, 6), 4).permuted((1, 0))\n"
     ">>> strided.StridedLayout.dense_like(t[::2, 1:]).format()\n"
     "'(3,3):(1,3)'\n"
     ">>> strided.StridedLayout.dense_like(t) is t\n"
     "True"},
    {"to_dense", (PyCFunction)(void (*)(void))layout_to_dense, KW,
     "to_dense($self, /, stride_order='K')\n"
     "--\n"
     "\n"
     "The dense layout with this shape and itemsize, in a stride order.\n"
     "\n"
     "``StridedLayout.dense_like(self, stride_order)``: the layout to allocate for\n"
     "a dense copy of this one.\n"
     "\n"
     "Parameters\n"
     "----------\n"
     "stride_order : {'K', 'C', 'F'} or tuple or list of int, optional\n"
     "    'K' keeps this layout's stride_order; 'C', 'F' or a permutation of the\n"
     "    axes from the slowest to the fastest.\n"
     "\n"
     "Returns\n"
     "-------\n"
     "StridedLayout\n"
     "    A dense layout with slice offset 0, or this layout when it is already\n"
     "    dense in the order asked ('K', 'C' or 'F').\n"
     "\n"
     "Raises\n"
     "------\n"
     "ValueError\n"
     "    If stride_order is none of these or not a permutation of the axes.\n"
     "\n"
     "Examples\n"
     "--------\n"
     ">>> layout = strided.StridedLayout.dense((4, 6), 4)[::-1, ::2]\n"
     ">>> layout.to_dense().format()\n"
     "'(4,3):(3,1)'\n"
     ">>> layout.to_dense(\"F\").format()\n"
     "'(4,3):(1,4)'"},
    {"required_size_in_bytes", (PyCFunction)layout_required_size_in_bytes, METH_NOARGS,
     "required_size_in_bytes($self, /)\n"
     "--\n"
     "\n"
     "The bytes a buffer needs from the base pointer to hold every element.\n"
     "\n"
     "Returns\n"
     "-------\n"
     "int\n"
     "    ``(max_offset + 1) * itemsize``, or 0 for a layout of no elements.\n"
     "\n"
     "Raises\n"
     "------\n"
     "ValueError\n"
     "    If the layout reaches a negative offset (the size would be\n"
     "    ambiguous).\n"
     "OverflowError\n"
     "    If the size does not fit in int64.\n"
     "\n"
     "Examples\n"
     "--------\n"
     ">>> strided.StridedLayout.dense((4, 6), 4)[1:, ::2].required_size_in_bytes()\n"
     "92"},
    {"flattened_axis_mask", (PyCFunction)layout_flattened_axis_mask, METH_NOARGS,
     "flattened_axis_mask($self, /)\n"
     "--\n"
     "\n"
     "The axes flattened() would merge, as a bit mask.\n"
     "\n"
     "Bit ``j`` set means that axis ``j`` joins the group of axis ``j - 1``\n"
     "(extent-1 axes never block a merge). Masks of layouts with the same number\n"
     "of dimensions combine with ``&``, so that ``flattened(mask=m)`` flattens\n"
     "them alike.\n"
     "\n"
     "Returns\n"
     "-------\n"
     "int\n"
     "    The mask; bit 0 is never set.\n"
     "\n"
     "Raises\n"
     "------\n"
     "OverflowError\n"
     "    If a product of a stride and an extent needed for the decision does\n"
     "    not fit in int64.\n"
     "\n"
     "Examples\n"
     "--------\n"
     ">>> bin(strided.StridedLayout.dense((2, 3, 4), 4)[:, :2].flattened_axis_mask())\n"
     "'0b100'"},
    {"reshaped", (PyCFunction)layout_reshaped, METH_O,
     "reshaped($self, shape, /)\n"
     "--\n"
     "\n"
     "The same elements in a new shape, without moving them.\n"
     "\n"
     "NumPy's no-copy rule (``a.reshape(shape, copy=False)``): the reshape\n"
     "succeeds exactly when the strides can express the new shape.\n"
     "\n"
     "Parameters\n"
     "----------\n"
     "shape : tuple or list of int\n"
     "    The new extents, with the same volume; one of them may be -1, to be\n"
     "    inferred.\n"
     "\n"
     "Returns\n"
     "-------\n"
     "StridedLayout\n"
     "    The reshaped layout, with the same itemsize and slice offset.\n"
     "\n"
     "Raises\n"
     "------\n"
     "TypeError\n"
     "    If shape is not a tuple or list of integers.\n"
     "ValueError\n"
     "    If the shape is invalid (extents below -1, a second -1, more than 64)\n"
     "    or has another volume, or the strides cannot express it without a copy\n"
     "    (\"Layout strides are incompatible with the new shape\").\n"
     "OverflowError\n"
     "    If the new volume or a stride does not fit in int64.\n"
     "\n"
     "Examples\n"
     "--------\n"
     ">>> strided.StridedLayout.dense((4, 6), 4).reshaped((2, -1)).format()\n"
     "'(2,12):(12,1)'\n"
     ">>> strided.StridedLayout.dense((4, 6), 4).permuted((1, 0)).reshaped((24,))\n"
     "Traceback (most recent call last):\n"
     "    ...\n"
     "ValueError: Layout strides are incompatible with the new shape: cannot view (6,4):(1,6) as "
     "(24,) without a copy"},
    {"permuted", (PyCFunction)layout_permuted, METH_O,
     "permuted($self, axis_order, /)\n"
     "--\n"
     "\n"
     "The layout with its axes reordered (``numpy.transpose``).\n"
     "\n"
     "Parameters\n"
     "----------\n"
     "axis_order : tuple or list of int\n"
     "    A permutation of the axes: axis ``i`` of the result is axis\n"
     "    ``axis_order[i]`` of this layout.\n"
     "\n"
     "Returns\n"
     "-------\n"
     "StridedLayout\n"
     "\n"
     "Raises\n"
     "------\n"
     "TypeError\n"
     "    If axis_order is not a tuple or list of integers.\n"
     "ValueError\n"
     "    If axis_order does not name every axis exactly once.\n"
     "\n"
     "Examples\n"
     "--------\n"
     ">>> strided.StridedLayout.dense((2, 3, 4), 4).permuted((2, 0, 1)).format()\n"
     "'(4,2,3):(1,12,4)'"},
    {"flattened", (PyCFunction)(void (*)(void))layout_flattened, KW,
     "flattened($self, /, start_axis=0, end_axis=-1, mask=None)\n"
     "--\n"
     "\n"
     "The layout with contiguous neighbouring axes merged.\n"
     "\n"
     "An axis in ``[start_axis, end_axis]`` merges into the axis on its left when\n"
     "the two step through memory as one (C index order); a 0-d layout becomes\n"
     "``(1,):(1,)``.\n"
     "\n"
     "Parameters\n"
     "----------\n"
     "start_axis, end_axis : int, optional\n"
     "    The inclusive range of axes to merge (negative axes count from the\n"
     "    end); ignored when mask is given.\n"
     "mask : int, optional\n"
     "    The axes allowed to merge instead: bit ``j`` lets axis ``j`` join the\n"
     "    axis on its left (see flattened_axis_mask()); bit 0 and bits beyond the\n"
     "    last axis are ignored.\n"
     "\n"
     "Returns\n"
     "-------\n"
     "StridedLayout\n"
     "\n"
     "Raises\n"
     "------\n"
     "TypeError\n"
     "    If an argument is not an integer.\n"
     "ValueError\n"
     "    If an axis is out of range, or start_axis comes after end_axis.\n"
     "OverflowError\n"
     "    If mask is negative or beyond 64 bits, or a stride product does not\n"
     "    fit in int64.\n"
     "\n"
     "Examples\n"
     "--------\n"
     ">>> layout = strided.StridedLayout.dense((2, 3, 4), 4)[:, :, ::2]\n"
     ">>> layout.format()\n"
     "'(2,3,2):(12,4,2)'\n"
     ">>> layout.flattened().format()\n"
     "'(12,):(2,)'\n"
     ">>> layout.flattened(mask=0b10).format()\n"
     "'(6,2):(4,2)'"},
    {"squeezed", (PyCFunction)layout_squeezed, METH_NOARGS,
     "squeezed($self, /)\n"
     "--\n"
     "\n"
     "The layout without its extent-1 axes (``numpy.squeeze``).\n"
     "\n"
     "Returns\n"
     "-------\n"
     "StridedLayout\n"
     "    The layout; one of no elements becomes ``(0,):(0,)``.\n"
     "\n"
     "Examples\n"
     "--------\n"
     ">>> strided.StridedLayout.dense((1, 3, 1), 4).squeezed().format()\n"
     "'(3,):(1,)'"},
    {"unsqueezed", (PyCFunction)layout_unsqueezed, METH_O,
     "unsqueezed($self, axis, /)\n"
     "--\n"
     "\n"
     "The layout with extent-1 axes inserted (``numpy.expand_dims``).\n"
     "\n"
     "Parameters\n"
     "----------\n"
     "axis : int or tuple or list of int\n"
     "    The positions of the new axes in the result (negative positions count\n"
     "    from its end).\n"
     "\n"
     "Returns\n"
     "-------\n"
     "StridedLayout\n"
     "    The layout, or this layout itself for an empty tuple.\n"
     "\n"
     "Raises\n"
     "------\n"
     "TypeError\n"
     "    If axis is not an integer or a tuple or list of integers.\n"
     "ValueError\n"
     "    If a position is out of range or repeated, or the result would have\n"
     "    more than 64 dimensions.\n"
     "OverflowError\n"
     "    If a new stride does not fit in int64.\n"
     "\n"
     "Examples\n"
     "--------\n"
     ">>> strided.StridedLayout.dense((2, 3), 4).unsqueezed((0, -1)).format()\n"
     "'(1,2,3,1):(6,3,1,1)'"},
    {"broadcast_to", (PyCFunction)layout_broadcast_to, METH_O,
     "broadcast_to($self, shape, /)\n"
     "--\n"
     "\n"
     "The layout broadcast to a shape (``numpy.broadcast_to``).\n"
     "\n"
     "The shapes are aligned on the right; an extent-1 axis takes any extent with\n"
     "stride 0, and new leading axes get stride 0.\n"
     "\n"
     "Parameters\n"
     "----------\n"
     "shape : tuple or list of int\n"
     "    The shape to broadcast to, with at least as many axes.\n"
     "\n"
     "Returns\n"
     "-------\n"
     "StridedLayout\n"
     "\n"
     "Raises\n"
     "------\n"
     "TypeError\n"
     "    If shape is not a tuple or list of integers.\n"
     "ValueError\n"
     "    If shape has fewer axes or a negative extent, more than 64 axes, or an\n"
     "    extent the layout cannot be broadcast to.\n"
     "OverflowError\n"
     "    If the new volume does not fit in int64.\n"
     "\n"
     "Examples\n"
     "--------\n"
     ">>> strided.StridedLayout.dense((3, 1), 4).broadcast_to((2, 3, 5)).format()\n"
     "'(2,3,5):(0,1,0)'"},
    {"repacked", (PyCFunction)(void (*)(void))layout_repacked, KW,
     "repacked($self, /, itemsize, data_ptr=0, axis=-1, keep_dim=True)\n"
     "--\n"
     "\n"
     "The same bytes seen as elements of another size, along a stride-1 axis.\n"
     "\n"
     "Packing (a larger itemsize) divides the axis' extent, the other strides and\n"
     "the slice offset by ``itemsize / self.itemsize``; unpacking multiplies\n"
     "them. The two itemsizes must divide one another, so that the bytes stay\n"
     "the same.\n"
     "\n"
     "Parameters\n"
     "----------\n"
     "itemsize : int\n"
     "    The new itemsize; this layout's own returns this layout.\n"
     "data_ptr : int, optional\n"
     "    Packing only: the address the layout will be used with, which must be\n"
     "    aligned to the new itemsize (0: no constraint).\n"
     "axis : int, optional\n"
     "    The axis whose stride must be 1 (negative axes count from the end).\n"
     "keep_dim : bool, optional\n"
     "    Packing only: False drops the axis when its extent becomes 1.\n"
     "\n"
     "Returns\n"
     "-------\n"
     "StridedLayout\n"
     "\n"
     "Raises\n"
     "------\n"
     "TypeError\n"
     "    If an argument is not an integer.\n"
     "ValueError\n"
     "    If a rule of the repack is broken (the axis' stride is not 1, an\n"
     "    extent, a stride, the slice offset or data_ptr is not divisible, the\n"
     "    itemsizes do not divide one another), or the axis is out of range.\n"
     "OverflowError\n"
     "    If an argument does not fit, or unpacking overflows int64.\n"
     "\n"
     "Examples\n"
     "--------\n"
     ">>> strided.StridedLayout.dense((4, 6), 2).repacked(4).format()\n"
     "'(4,3):(3,1)'\n"
     ">>> strided.StridedLayout.dense((4, 2), 2).repacked(4, keep_dim=False).format()\n"
     "'(4,):(1,)'"},
    {"max_compatible_itemsize", (PyCFunction)(void (*)(void))layout_max_compatible_itemsize, KW,
     "max_compatible_itemsize($self, /, max_itemsize=16, data_ptr=0, axis=-1)\n"
     "--\n"
     "\n"
     "The largest itemsize repacked() accepts along an axis.\n"
     "\n"
     "Parameters\n"
     "----------\n"
     "max_itemsize : int, optional\n"
     "    The largest itemsize to consider, at least this layout's itemsize.\n"
     "data_ptr : int, optional\n"
     "    The address the layout will be used with (0: no constraint).\n"
     "axis : int, optional\n"
     "    The axis whose stride must be 1 (negative axes count from the end).\n"
     "\n"
     "Returns\n"
     "-------\n"
     "int\n"
     "    A multiple of the itemsize that divides max_itemsize, the address, the\n"
     "    slice offset, the axis' extent and every other stride (in bytes); the\n"
     "    itemsize itself when the axis' stride is not 1 or its extent is 0.\n"
     "\n"
     "Raises\n"
     "------\n"
     "TypeError\n"
     "    If an argument is not an integer.\n"
     "ValueError\n"
     "    If max_itemsize is not positive or below the itemsize, or the axis is\n"
     "    out of range (always for a 0-d layout).\n"
     "OverflowError\n"
     "    If an argument does not fit.\n"
     "\n"
     "Examples\n"
     "--------\n"
     ">>> strided.StridedLayout.dense((4, 6), 2).max_compatible_itemsize()\n"
     "4\n"
     ">>> strided.StridedLayout.dense((4, 8), 2).max_compatible_itemsize()\n"
     "16"},
    {"sliced", (PyCFunction)layout_sliced, METH_O,
     "sliced($self, slices, /)\n"
     "--\n"
     "\n"
     "The layout of a basic indexing expression (``layout[slices]``).\n"
     "\n"
     "NumPy's basic indexing without Ellipsis and None: position ``k`` of the key\n"
     "applies to axis ``k``; an integer (anything with ``__index__``) removes its\n"
     "axis, a slice keeps it; the axes after the key are kept whole. The slice\n"
     "offset moves to the first element selected.\n"
     "\n"
     "Parameters\n"
     "----------\n"
     "slices : int, slice or tuple of them\n"
     "    The key.\n"
     "\n"
     "Returns\n"
     "-------\n"
     "StridedLayout\n"
     "\n"
     "Raises\n"
     "------\n"
     "TypeError\n"
     "    If a position of the key is neither an integer nor a slice.\n"
     "ValueError\n"
     "    If the key has more positions than the layout has axes, an integer is\n"
     "    out of range, or a step is 0.\n"
     "OverflowError\n"
     "    If a stride times a step, or the offset, does not fit in int64.\n"
     "\n"
     "Examples\n"
     "--------\n"
     ">>> layout = strided.StridedLayout.dense((4, 6), 4)\n"
     ">>> layout.sliced((slice(1, 3), 2)).format()\n"
     "'(2,):(6,)+8'\n"
     ">>> layout[::-1, 1::2].format()\n"
     "'(4,3):(-6,2)+19'"},
    {"coalesced", (PyCFunction)layout_coalesced, METH_NOARGS,
     "coalesced($self, /)\n"
     "--\n"
     "\n"
     "The layout with the fewest axes that maps every index to the same offset.\n"
     "\n"
     "CuTe's coalesce: the layout of the same C-order walk through memory with\n"
     "extent-1 axes dropped and neighbours with ``strides[i] == strides[i + 1] *\n"
     "shape[i + 1]`` merged.\n"
     "\n"
     "Returns\n"
     "-------\n"
     "StridedLayout\n"
     "    The coalesced layout; one of no elements becomes ``(0,):(0,)``, one of\n"
     "    one element a 0-d layout.\n"
     "\n"
     "Examples\n"
     "--------\n"
     ">>> strided.StridedLayout.dense((2, 3), 4)[::-1, ::-1].coalesced().format()\n"
     "'(6,):(-1,)+5'"},
    {"format", (PyCFunction)layout_format, METH_NOARGS,
     "format($self, /)\n"
     "--\n"
     "\n"
     "The layout as text: ``'(shape):(strides)'``.\n"
     "\n"
     "Returns\n"
     "-------\n"
     "str\n"
     "    For example ``'(4,6):(6,1)'``, ``'(5,):(1,)'`` or ``'():()'``, with the\n"
     "    signed slice offset appended when it is not 0: ``'(2,):(1,)-3'``.\n"
     "\n"
     "Examples\n"
     "--------\n"
     ">>> strided.StridedLayout.dense((4, 6), 4)[1:, ::-2].format()\n"
     "'(3,3):(6,-2)+11'"},
    {"format_grid", (PyCFunction)layout_format_grid, METH_NOARGS,
     "format_grid($self, /)\n"
     "--\n"
     "\n"
     "The element offsets of a layout of at most 2 dimensions, drawn as a grid.\n"
     "\n"
     "Returns\n"
     "-------\n"
     "str\n"
     "    A header line with format(), then the column indices and one boxed row\n"
     "    per index of axis 0 (a 1-d layout is one row, a 0-d layout one cell).\n"
     "\n"
     "Raises\n"
     "------\n"
     "ValueError\n"
     "    If the layout has more than 2 dimensions, or the grid would have more\n"
     "    than 2**20 cells (counting a header row and column).\n"
     "\n"
     "Examples\n"
     "--------\n"
     ">>> print(strided.StridedLayout.dense((2, 3), 4).permuted((1, 0)).format_grid())\n"
     "(3,2):(1,3)\n"
     "    0   1\n"
     "  +---+---+\n"
     "0 | 0 | 3 |\n"
     "  +---+---+\n"
     "1 | 1 | 4 |\n"
     "  +---+---+\n"
     "2 | 2 | 5 |\n"
     "  +---+---+"},
    {NULL, NULL, 0, NULL},
};

static PyMappingMethods layout_mapping = {
    .mp_subscript = (binaryfunc)layout_sliced,
};

static PyTypeObject LayoutType = {
    /* Kept as written: clang-format would join the next line to the macro. */
    /* clang-format off */
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "strided.StridedLayout",
    /* clang-format on */
    .tp_doc = "StridedLayout(shape, strides, itemsize, divide_strides=False)\n"
              "--\n"
              "\n"
              "An immutable n-dimensional strided layout.\n"
              "\n"
              "A layout says where the elements of an array lie: the element at index\n"
              "``i`` is ``slice_offset + sum(i[k] * strides[k])`` elements of ``itemsize``\n"
              "bytes from the base pointer. Strides count elements and may be negative or\n"
              "zero; a layout has 0 to 64 dimensions. Layouts are hashable and compare\n"
              "equal when shape, strides (implicit or explicit), itemsize and slice offset\n"
              "all match; every method returns a new layout, or the layout itself when\n"
              "nothing changes. ``layout[key]`` is ``layout.sliced(key)``. The class is\n"
              "cuda.core's ``_StridedLayout`` (``strided._StridedLayout`` is the same\n"
              "class).\n"
              "\n"
              "Parameters\n"
              "----------\n"
              "shape : tuple or list of int\n"
              "    The extents, each >= 0.\n"
              "strides : tuple or list of int, or None\n"
              "    One stride per axis, in elements (in bytes with ``divide_strides``);\n"
              "    None for implicit C-contiguous strides, which the layout remembers\n"
              "    (its ``strides`` is None then).\n"
              "itemsize : int\n"
              "    Bytes per element, > 0.\n"
              "divide_strides : bool, optional\n"
              "    Whether strides are in bytes (as NumPy's ``a.strides``) and are to be\n"
              "    divided by itemsize.\n"
              "\n"
              "Raises\n"
              "------\n"
              "TypeError\n"
              "    If shape or strides is not a tuple or list of integers, or an argument\n"
              "    is missing.\n"
              "ValueError\n"
              "    If there are more than 64 extents, an extent is negative, itemsize is\n"
              "    not positive, strides and shape differ in length, or (with\n"
              "    divide_strides) a stride is not a multiple of itemsize.\n"
              "OverflowError\n"
              "    If a value does not fit in int64 (itemsize: in a C int), or the volume\n"
              "    or an element's byte offset does not.\n"
              "\n"
              "Examples\n"
              "--------\n"
              ">>> import strided\n"
              ">>> layout = strided.StridedLayout((2, 3), None, 4)\n"
              ">>> layout\n"
              "StridedLayout(shape=(2, 3), strides=None, itemsize=4)\n"
              ">>> layout.stride_order, layout.is_contiguous_c\n"
              "((0, 1), True)\n"
              ">>> strided.StridedLayout((2, 3), (12, 4), 4, divide_strides=True).strides\n"
              "(3, 1)\n"
              ">>> layout[1, ::-1]\n"
              "StridedLayout(shape=(3,), strides=(-1,), itemsize=4, _slice_offset=5)",
    .tp_basicsize = offsetof(LayoutObject, data),
    .tp_itemsize = sizeof(int64_t) * 2,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = layout_new,
    .tp_vectorcall = layout_vectorcall,
    .tp_repr = (reprfunc)layout_repr,
    .tp_hash = (hashfunc)layout_hash,
    .tp_richcompare = layout_richcompare,
    .tp_as_mapping = &layout_mapping,
    .tp_methods = layout_methods,
    .tp_members = layout_members,
    .tp_getset = layout_getset,
};

PyTypeObject *strided_py_layout_type(void)
{
    return &LayoutType;
}

int strided_py_layout_from(PyObject *obj, strided_layout *out)
{
    if (!PyObject_TypeCheck(obj, &LayoutType)) {
        PyErr_Format(PyExc_TypeError, "expected a strided.StridedLayout, got %.200s",
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    unpack((const LayoutObject *)obj, out);
    return 0;
}

PyObject *strided_py_layout_new(const strided_layout *l)
{
    return pack(l);
}

int strided_py_add_layout_type(PyObject *module)
{
    if (PyType_Ready(&LayoutType) < 0)
        return -1;
    if (PyModule_AddObjectRef(module, "StridedLayout", (PyObject *)&LayoutType) < 0)
        return -1;
    return PyModule_AddObjectRef(module, "_StridedLayout", (PyObject *)&LayoutType);
}
