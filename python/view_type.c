/*
 * view_type.c: strided.StridedMemoryView, the Python face of a strided_view:
 * the type, its properties, from_buffer, view() and the object's lifetime
 * (view.h says what the view files share and who owns what).
 */
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "tensor_map.h"
#include "view.h"

PyObject *strided_py_view_dtype(strided_py_view *self)
{
    if (self->dtype == NULL && self->view.has_dtype)
        self->dtype = strided_py_numpy_dtype_of(self->view.dtype);
    return self->dtype;
}

/* View objects dealloc gave back, for the next imports: a view object is
 * over 1 KB (its layout holds 64 axes), past the allocator's fast path, and
 * allocating and freeing it was a tenth of an import. As CPython keeps its
 * lists: untracked objects, made new again with PyObject_Init. Not in a
 * free-threaded build, where nothing guards the list. */
#ifndef Py_GIL_DISABLED
#define FREE_VIEWS 8
static strided_py_view *free_views[FREE_VIEWS];
static int free_view_count;
#endif

static strided_py_view *view_alloc(void)
{
#ifndef Py_GIL_DISABLED
    if (free_view_count > 0) {
        strided_py_view *self = free_views[--free_view_count];
        PyObject_Init((PyObject *)self, &strided_py_view_type);
        return self;
    }
#endif
    return PyObject_GC_New(strided_py_view, &strided_py_view_type);
}

static void view_free(strided_py_view *self)
{
#ifndef Py_GIL_DISABLED
    if (free_view_count < FREE_VIEWS && Py_IS_TYPE(self, &strided_py_view_type)) {
        free_views[free_view_count++] = self;
        return;
    }
#endif
    PyObject_GC_Del(self);
}

/* *out = *v without the unused axes of its layout (a whole strided_view is
 * over 1 KiB, and an import stores one per call). */
static void view_store(strided_view *out, const strided_view *v)
{
    _Static_assert(offsetof(strided_view, has_dtype) ==
                       offsetof(strided_view, layout) + sizeof(strided_layout),
                   "the layout is followed by has_dtype and the fields after it");
    const size_t head = offsetof(strided_view, layout) + offsetof(strided_layout, shape);
    const size_t tail = offsetof(strided_view, has_dtype);
    const size_t axes = (size_t)v->layout.ndim * sizeof(int64_t);
    memcpy(out, v, head);
    memcpy(out->layout.shape, v->layout.shape, axes);
    memcpy(out->layout.strides, v->layout.strides, axes);
    memcpy((char *)out + tail, (const char *)v + tail, sizeof *out - tail);
}

strided_py_view *strided_py_view_new(strided_view *v, PyObject *exporting_obj, PyObject *layout,
                                     PyObject *base, PyObject *dtype)
{
    strided_py_view *self = view_alloc();
    if (self == NULL) {
        strided_py_release_buffer(v->buffer);
        return NULL;
    }
    view_store(&self->view, v);
    self->exporting_obj = Py_XNewRef(exporting_obj);
    self->layout = Py_XNewRef(layout);
    self->base = Py_XNewRef(base);
    self->dtype = Py_XNewRef(dtype);
    self->hold = NULL;
    self->hidden = NULL;
    self->weakrefs = NULL;
    PyObject_GC_Track(self);
    return self;
}

PyObject *strided_py_view_hiding(strided_py_view *self, PyObject *hidden)
{
    if (self != NULL)
        self->hidden = hidden;
    return (PyObject *)self;
}

int strided_py_view_hold(strided_py_view *self, PyObject **out)
{
    if (self->hidden != NULL) {
        /* A collection during the allocation still finds the view
         * reporting the reference itself. */
        PyObject *hold = strided_py_hold_new(self->view.buffer, self->hidden);
        if (hold == NULL)
            return -1;
        self->hold = strided_py_hold_join(hold);
        self->hidden = NULL;
        Py_DECREF(hold);
    }
    *out = self->hold;
    return 0;
}

strided_py_view *strided_py_view_joined(strided_py_view *self, PyObject *hold)
{
    if (self != NULL)
        self->hold = strided_py_hold_join(hold);
    return self;
}

PyObject *strided_py_view_joined_new(strided_py_view *self, PyObject *hold)
{
    if (self == NULL) {
        Py_XDECREF(hold);
        return NULL;
    }
    if (hold == NULL) {
        Py_DECREF(self);
        return NULL;
    }
    strided_py_view_joined(self, hold);
    Py_DECREF(hold);
    return (PyObject *)self;
}

PyObject *strided_py_int64_tuple(int n, const int64_t *v, int64_t scale)
{
    PyObject *t = PyTuple_New(n);
    if (t == NULL)
        return NULL;
    for (int i = 0; i < n; i++) {
        PyObject *x = PyLong_FromLongLong(v[i] * scale);
        if (x == NULL) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, i, x);
    }
    return t;
}

static const char *const from_buffer_names[] = {"buffer", "shape",       "strides", "itemsize",
                                                "dtype",  "is_readonly", NULL};
static const char *const from_layout_names[] = {"buffer", "layout", "dtype", "is_readonly", NULL};

/* from_buffer in both of cuda.core's forms: (buffer, shape, strides=None,
 * *, itemsize=None, dtype=None, is_readonly=False), and (buffer, layout,
 * dtype=None, is_readonly=False), chosen by a StridedLayout as second
 * argument (positional or layout=). */
static PyObject *view_from_buffer(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                  PyObject *kwnames)
{
    (void)cls;
    PyTypeObject *layout_type = strided_py_layout_type();
    bool layout_form = nargs >= 2 && PyObject_TypeCheck(args[1], layout_type);
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t k = 0; k < nkw; k++)
        if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, k), "layout") == 0)
            layout_form = true;

    PyObject *a[6];
    PyObject *layout_obj = NULL, *buffer = NULL, *dtype_arg, *readonly_arg;
    if (layout_form) {
        if (strided_py_bind_args("from_buffer", args, nargs, kwnames, from_layout_names, 2, a) < 0)
            return NULL;
        if (!PyObject_TypeCheck(a[1], layout_type))
            return PyErr_Format(PyExc_TypeError,
                                "from_buffer: layout must be a StridedLayout, got %.200s",
                                Py_TYPE(a[1])->tp_name);
        layout_obj = Py_NewRef(a[1]);
        dtype_arg = a[2];
        readonly_arg = a[3];
    } else {
        if (nargs > 3)
            return PyErr_Format(PyExc_TypeError,
                                "from_buffer() takes at most 3 positional arguments "
                                "(%zd given)",
                                nargs);
        if (strided_py_bind_args("from_buffer", args, nargs, kwnames, from_buffer_names, 2, a) < 0)
            return NULL;
        dtype_arg = a[4];
        readonly_arg = a[5];
    }
    int readonly = readonly_arg ? PyObject_IsTrue(readonly_arg) : 0;
    if (readonly < 0) {
        Py_XDECREF(layout_obj);
        return NULL;
    }
    PyObject *dtype = NULL;
    strided_typestr info;
    if (strided_py_as_dtype(dtype_arg, &dtype, &info) < 0) {
        Py_XDECREF(layout_obj);
        return NULL;
    }

    if (!layout_form) {
        PyObject *itemsize_obj = a[3] && a[3] != Py_None ? a[3] : NULL;
        if (itemsize_obj == NULL && dtype == NULL) {
            PyErr_SetString(PyExc_ValueError, "Either itemsize or dtype must be specified");
            return NULL;
        }
        PyObject *dtype_size = NULL;
        if (dtype != NULL && (dtype_size = PyObject_GetAttrString(dtype, "itemsize")) == NULL)
            goto fail;
        if (itemsize_obj != NULL && dtype_size != NULL) {
            int eq = PyObject_RichCompareBool(itemsize_obj, dtype_size, Py_EQ);
            if (eq <= 0) {
                if (eq == 0)
                    PyErr_Format(PyExc_ValueError,
                                 "itemsize (%S) does not match dtype.itemsize (%S)", itemsize_obj,
                                 dtype_size);
                Py_DECREF(dtype_size);
                goto fail;
            }
        }
        layout_obj = PyObject_CallFunctionObjArgs((PyObject *)layout_type, a[1],
                                                  a[2] ? a[2] : Py_None,
                                                  itemsize_obj ? itemsize_obj : dtype_size, NULL);
        Py_XDECREF(dtype_size);
        if (layout_obj == NULL)
            goto fail;
    }

    strided_layout layout;
    if (strided_py_layout_from(layout_obj, &layout) < 0)
        goto fail;
    /* A dtype without a DLPack type reaches the C view as its size only. */
    bool has_dl = dtype != NULL && info.has_dtype;
    if (dtype != NULL && !has_dl &&
        strided_view_check_itemsize(&layout, info.itemsize) != STRIDED_OK) {
        strided_py_raise(strided_view_check_itemsize(&layout, info.itemsize));
        goto fail;
    }
    /* A cuda.core Buffer (any Buffer-like object) is taken through a
     * strided Buffer over its memory, which view() works on. */
    buffer = strided_py_buffer_arg(a[0], "buffer");
    if (buffer == NULL)
        goto fail;
    strided_view v;
    /* ml_dtypes' sub-byte types are padded: numpy has no other way. */
    strided_status status = strided_view_from_buffer_ex(strided_py_buffer_of(buffer), &layout,
                                                        has_dl ? &info.dtype : NULL, info.padded,
                                                        readonly, &v);
    if (status != STRIDED_OK) {
        strided_py_raise(status);
        goto fail;
    }
    /* Kept across view_new, where a collection may run code that closes
     * the Buffer: the new view's reference must still be counted. */
    PyObject *hold = Py_XNewRef(strided_py_buffer_hold(buffer));
    PyObject *result = (PyObject *)strided_py_view_joined(
        strided_py_view_new(&v, a[0], layout_obj, buffer, dtype), hold);
    Py_XDECREF(hold);
    Py_DECREF(buffer);
    Py_DECREF(layout_obj);
    Py_XDECREF(dtype);
    return result;

fail:
    Py_XDECREF(buffer);
    Py_XDECREF(layout_obj);
    Py_XDECREF(dtype);
    return NULL;
}

/* The Buffer view() works on (borrowed): the exporting Buffer, or a
 * memoised Buffer over the view's C buffer (for an import: the producer's
 * footprint) whose owner is the exporting object. */
static PyObject *view_base(strided_py_view *self)
{
    PyObject *hold;
    if (self->base == NULL && strided_py_view_hold(self, &hold) == 0)
        self->base = strided_py_buffer_new_held(strided_buffer_retain(self->view.buffer), NULL,
                                                self->exporting_obj, hold);
    return self->base;
}

static const char *const relaned_names[] = {"lanes", NULL};

static PyObject *view_relaned(strided_py_view *self, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames)
{
    PyObject *a[1];
    if (strided_py_bind_args("relaned", args, nargs, kwnames, relaned_names, 1, a) < 0)
        return NULL;
    int lanes = 0;
    if (strided_py_as_int(a[0], "lanes", -1, &lanes) < 0)
        return NULL;
    PyObject *base = view_base(self);
    if (base == NULL)
        return NULL;
    strided_view v;
    strided_status status = strided_view_relane(&self->view, lanes, &v);
    if (status != STRIDED_OK)
        return strided_py_raise(status);
    /* view_base made the hold, if the view reported its memory's itself. */
    return (PyObject *)strided_py_view_joined(strided_py_view_new(&v, base, NULL, base, NULL),
                                              self->hold);
}

static const char *const view_names[] = {"layout", "dtype", NULL};

static PyObject *view_view(strided_py_view *self, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames)
{
    PyObject *a[2];
    if (strided_py_bind_args("view", args, nargs, kwnames, view_names, 0, a) < 0)
        return NULL;
    PyObject *layout_obj = a[0] == Py_None ? NULL : a[0];
    PyObject *dtype_arg = a[1] == Py_None ? NULL : a[1];
    if (layout_obj == NULL && dtype_arg == NULL)
        return Py_NewRef(self);

    strided_layout layout = self->view.layout;
    if (layout_obj != NULL && strided_py_layout_from(layout_obj, &layout) < 0)
        return NULL;
    PyObject *dtype = NULL;
    strided_typestr info = {0};
    bool has_dl;
    if (dtype_arg != NULL && strided_py_pair_dtype(dtype_arg, &info.dtype)) {
        /* Pairs of a sub-byte type, which NumPy cannot name: packed, one
         * byte a pair, and no numpy dtype. */
        has_dl = true;
    } else if (dtype_arg != NULL) {
        if (strided_py_as_dtype(dtype_arg, &dtype, &info) < 0)
            return NULL;
        has_dl = info.has_dtype;
    } else {
        /* The current dtype, whose itemsize must then fit the layout. */
        has_dl = self->view.has_dtype;
        info.dtype = self->view.dtype;
        dtype = Py_XNewRef(self->dtype);
        if (dtype != NULL && !has_dl && strided_py_dtype_info(dtype, &info) < 0)
            goto fail;
    }
    /* A dtype without a DLPack type reaches the C view as its size only. */
    strided_status status;
    if (dtype != NULL && !has_dl &&
        (status = strided_view_check_itemsize(&layout, info.itemsize)) != STRIDED_OK) {
        strided_py_raise(status);
        goto fail;
    }
    PyObject *base = view_base(self);
    if (base == NULL)
        goto fail;
    strided_view v;
    /* A numpy dtype's sub-byte type is padded; the view's own keeps its
     * form. */
    bool padded = dtype_arg != NULL ? info.padded : self->view.padded;
    status = strided_view_view_ex(&self->view, &layout, has_dl ? &info.dtype : NULL, padded, &v);
    if (status != STRIDED_OK) {
        strided_py_raise(status);
        goto fail;
    }
    PyObject *result = (PyObject *)strided_py_view_joined(
        strided_py_view_new(&v, base, layout_obj, base, dtype), self->hold); /* as in relaned */
    Py_XDECREF(dtype);
    return result;

fail:
    Py_XDECREF(dtype);
    return NULL;
}

static PyObject *get_ptr(strided_py_view *self, void *closure)
{
    (void)closure;
    return PyLong_FromVoidPtr(strided_view_ptr(&self->view));
}

static PyObject *get_device_ptr(strided_py_view *self, void *closure)
{
    (void)closure;
    return PyLong_FromSize_t(strided_view_device_ptr(&self->view));
}

static PyObject *get_shape(strided_py_view *self, void *closure)
{
    (void)closure;
    return strided_py_int64_tuple(self->view.layout.ndim, self->view.layout.shape, 1);
}

static PyObject *get_strides(strided_py_view *self, void *closure)
{
    (void)closure;
    if (self->view.layout.implicit_strides)
        Py_RETURN_NONE;
    return strided_py_int64_tuple(self->view.layout.ndim, self->view.layout.strides, 1);
}

static PyObject *get_size(strided_py_view *self, void *closure)
{
    (void)closure;
    return PyLong_FromLongLong(strided_layout_volume(&self->view.layout));
}

static PyObject *get_element_bits(strided_py_view *self, void *closure)
{
    (void)closure;
    int bits = strided_view_packed_bits(&self->view);
    return PyLong_FromLong(bits > 0 ? bits : 8L * self->view.layout.itemsize);
}

static PyObject *get_padded(strided_py_view *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(self->view.padded);
}

static PyObject *get_dtype(strided_py_view *self, void *closure)
{
    (void)closure;
    PyObject *dtype = strided_py_view_dtype(self);
    if (dtype == NULL && PyErr_Occurred())
        return NULL;
    return Py_NewRef(dtype ? dtype : Py_None);
}

static PyObject *get_device_id(strided_py_view *self, void *closure)
{
    (void)closure;
    return PyLong_FromLong(self->view.home_device);
}

static PyObject *get_is_device_accessible(strided_py_view *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(self->view.device_accessible);
}

static PyObject *get_readonly(strided_py_view *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(self->view.readonly);
}

static PyObject *get_exporting_obj(strided_py_view *self, void *closure)
{
    (void)closure;
    return Py_NewRef(self->exporting_obj ? self->exporting_obj : Py_None);
}

static PyObject *get_layout(strided_py_view *self, void *closure)
{
    (void)closure;
    if (self->layout == NULL)
        self->layout = strided_py_layout_new(&self->view.layout);
    return Py_XNewRef(self->layout);
}

static PyObject *get_buffer(strided_py_view *self, void *closure)
{
    (void)closure;
    bool of_buffer = self->base != NULL && self->base == self->exporting_obj;
    return Py_NewRef(of_buffer ? self->base : Py_None);
}

/* "module.Class" of obj's type, as cuda.core's repr shows it. */
static PyObject *type_name(PyObject *obj)
{
    PyObject *type = (PyObject *)Py_TYPE(obj);
    PyObject *module = PyObject_GetAttrString(type, "__module__");
    PyObject *name = PyObject_GetAttrString(type, "__qualname__");
    PyObject *result = NULL;
    if (module != NULL && name != NULL)
        result = PyUnicode_FromFormat("%U.%U", module, name);
    Py_XDECREF(module);
    Py_XDECREF(name);
    return result;
}

static PyObject *view_repr(strided_py_view *self)
{
    PyObject *dtype = strided_py_view_dtype(self);
    if (dtype == NULL && PyErr_Occurred())
        return NULL;
    PyObject *shape = get_shape(self, NULL), *strides = get_strides(self, NULL);
    PyObject *dtype_name = dtype ? type_name(dtype) : PyUnicode_FromString("None");
    PyObject *exporter = type_name(self->exporting_obj ? self->exporting_obj : Py_None);
    PyObject *result = NULL;
    if (shape != NULL && strides != NULL && dtype_name != NULL && exporter != NULL)
        result = PyUnicode_FromFormat(
            /* cuda.core's layout: each field under the first, 18 columns in. */
            "StridedMemoryView(ptr=%llu,\n"
            "                  shape=%S,\n"
            "                  strides=%S,\n"
            "                  itemsize=%d,\n"
            "                  dtype=%U,\n"
            "                  device_id=%d,\n"
            "                  is_device_accessible=%s,\n"
            "                  readonly=%s,\n"
            "                  exporting_obj=%U)",
            (unsigned long long)(uintptr_t)strided_view_ptr(&self->view), shape, strides,
            (int)self->view.layout.itemsize, dtype_name, (int)self->view.home_device,
            self->view.device_accessible ? "True" : "False", self->view.readonly ? "True" : "False",
            exporter);
    Py_XDECREF(shape);
    Py_XDECREF(strides);
    Py_XDECREF(dtype_name);
    Py_XDECREF(exporter);
    return result;
}

static int view_traverse(strided_py_view *self, visitproc visit, void *arg)
{
    Py_VISIT(self->exporting_obj);
    Py_VISIT(self->layout);
    Py_VISIT(self->base);
    Py_VISIT(self->dtype);
    /* The C buffer's reference to the object behind the memory: the view
     * reports it while it holds the buffer alone (any other holder makes
     * the reference external); once shared, the hold reports it, once for
     * all the views and Buffers sharing it. */
    if (self->hidden != NULL && strided_buffer_use_count(self->view.buffer) == 1)
        Py_VISIT(self->hidden);
    Py_VISIT(self->hold);
    return 0;
}

/* The buffer reference and the hold stay until the view is freed: a view
 * has no closed state, so its memory must outlive it. A cycle through the
 * memory is broken by the other objects' references (these, the owner's or
 * exporter's attributes); its memory goes when the last holder is freed. */
static int view_clear(strided_py_view *self)
{
    Py_CLEAR(self->exporting_obj);
    Py_CLEAR(self->layout);
    Py_CLEAR(self->base);
    Py_CLEAR(self->dtype);
    return 0;
}

static void view_dealloc(strided_py_view *self)
{
    PyObject_GC_UnTrack(self);
    if (self->weakrefs != NULL)
        PyObject_ClearWeakRefs((PyObject *)self);
    strided_buffer *b = self->view.buffer;
    PyObject *hold = self->hold;
    self->view.buffer = NULL;
    self->hold = NULL;
    self->hidden = NULL;
    strided_py_hold_leave(hold);
    strided_py_release_buffer(b);
    view_clear(self);
    view_free(self);
}

static PyGetSetDef view_getset[] = {
    {"ptr", (getter)get_ptr, NULL, "The host address of the element at index (0, ..., 0), an int.",
     NULL},
    {"device_ptr", (getter)get_device_ptr, NULL,
     "The address at which a device reaches the element at index (0, ..., 0).\n"
     "\n"
     "0 when no device can reach the memory; it differs from ptr only for\n"
     "registered memory whose device address differs.",
     NULL},
    {"shape", (getter)get_shape, NULL, "The extents, a tuple of ints.", NULL},
    {"strides", (getter)get_strides, NULL,
     "The strides in elements, a tuple of ints.\n"
     "\n"
     "None for C order given without strides.",
     NULL},
    {"size", (getter)get_size, NULL, "The number of elements.", NULL},
    {"dtype", (getter)get_dtype, NULL,
     "The element type, a numpy.dtype, or None when the view has none.\n"
     "\n"
     "bfloat16, the float8 types and the sub-byte types (float4_e2m1fn,\n"
     "float6_*, int4, ...; padded or packed alike) come from ml_dtypes; without\n"
     "it, and for pairs of sub-byte values (float4_e2m1fn_x2), which have no\n"
     "numpy dtype, NotImplementedError says what the type is.",
     NULL},
    {"element_bits", (getter)get_element_bits, NULL,
     "The bits one element occupies in memory, an int.\n"
     "\n"
     "8 times the itemsize, but for packed sub-byte elements that are not whole\n"
     "bytes: 4 for float4_e2m1fn and int4, 6 for the float6 types, 12 for their\n"
     "pairs, 1 or 2 for the small ints. Their layout has itemsize 1 and its\n"
     "offsets count elements (docs/subbyte.md).",
     NULL},
    {"padded", (getter)get_padded, NULL,
     "Whether a sub-byte dtype is stored one element per byte, a bool.\n"
     "\n"
     "True for ml_dtypes' arrays and DLPack tensors with the\n"
     "IS_SUBBYTE_TYPE_PADDED flag; False for packed views (DLPack's default)\n"
     "and every other dtype.",
     NULL},
    {"device_id", (getter)get_device_id, NULL,
     "The device of the memory, an int.\n"
     "\n"
     "-1 for host memory bound to no device.",
     NULL},
    {"is_device_accessible", (getter)get_is_device_accessible, NULL,
     "Whether a CUDA device can reach the memory.", NULL},
    {"readonly", (getter)get_readonly, NULL, "Whether the view refuses writes (copy_from into it).",
     NULL},
    {"exporting_obj", (getter)get_exporting_obj, NULL,
     "The object the view was made from.\n"
     "\n"
     "The producer of an import, or the Buffer of from_buffer and view().",
     NULL},
    {"layout", (getter)get_layout, NULL, "The StridedLayout of the view.", NULL},
    {"_layout", (getter)get_layout, NULL, "The StridedLayout of the view (cuda.core's name).",
     NULL},
    {"buffer", (getter)get_buffer, NULL,
     "The Buffer the view was made from, or None.\n"
     "\n"
     "None for a view imported from a producer.",
     NULL},
    {"__array_interface__", (getter)strided_py_view_array_interface, NULL,
     "NumPy's array interface (version 3), a dict.\n"
     "\n"
     "Raises AttributeError for memory the host cannot reach, ValueError for a view\n"
     "without a dtype.",
     NULL},
    {"__cuda_array_interface__", (getter)strided_py_view_cuda_array_interface, NULL,
     "The CUDA Array Interface (version 3), a dict.\n"
     "\n"
     "The data entry is the device address, and stream is None (the view has no\n"
     "pending work). Raises AttributeError for memory no device can reach,\n"
     "ValueError for a view without a dtype.",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

#define KW (METH_FASTCALL | METH_KEYWORDS)

static PyMethodDef view_methods[] = {
    {"get_ipc_descriptor", (PyCFunction)(void (*)(void))strided_py_view_get_ipc_descriptor, KW,
     "get_ipc_descriptor($self, /, *, stream=None)\n"
     "--\n"
     "\n"
     "An IPCViewDescriptor for another process: the view's buffer (shared as\n"
     "Buffer.ipc_descriptor shares it), origin, layout, dtype, device and read-only\n"
     "flag, in strided's versioned format (docs/ipc.md).\n"
     "\n"
     "With a stream, an interprocess event is recorded on it and travels with the\n"
     "descriptor: from_ipc_descriptor makes the importer's stream wait on it, so the\n"
     "consumer's work follows the producer's without a host synchronization. The\n"
     "descriptor object keeps the event: keep it until every consumer has imported.\n"
     "The view's memory must stay alive while another process uses it."},
    {"from_ipc_descriptor", (PyCFunction)(void (*)(void))strided_py_view_from_ipc_descriptor,
     KW | METH_CLASS,
     "from_ipc_descriptor(descriptor, mr=None, *, stream=None)\n"
     "--\n"
     "\n"
     "The view another process exported (get_ipc_descriptor), over its memory mapped\n"
     "into this process: mr is the mapped resource of the exporter's pool for a pool\n"
     "allocation (DeviceMemoryResource.from_allocation_handle), None for legacy IPC;\n"
     "stream (None: the legacy default stream) waits on the descriptor's event and\n"
     "is the deallocation stream of a pool allocation. Raises ValueError for a\n"
     "truncated, corrupted, foreign or misdirected descriptor, RuntimeError when the\n"
     "driver refuses it."},
    {"__reduce__", (PyCFunction)strided_py_view_reduce, METH_NOARGS,
     "__reduce__($self, /)\n--\n\nPickle as the buffer's memory resource and the view "
     "descriptor: unpickling imports the view in the receiving process."},
    {"from_buffer", (PyCFunction)(void (*)(void))view_from_buffer, KW | METH_CLASS,
     "from_buffer(buffer, shape, strides=None, *, itemsize=None, dtype=None, is_readonly=False)\n"
     "from_buffer(buffer, layout, dtype=None, is_readonly=False)\n"
     "\n"
     "A view of a Buffer's memory, through a shape or a StridedLayout.\n"
     "\n"
     "The layout's offsets count from the Buffer's address; every element must\n"
     "lie inside the Buffer (a layout of no elements always does).\n"
     "\n"
     "Parameters\n"
     "----------\n"
     "buffer : Buffer\n"
     "    The memory (or a Buffer-like object such as a cuda.core Buffer, whose\n"
     "    memory is used in place and kept alive). The view holds the memory;\n"
     "    closing the Buffer leaves the view valid.\n"
     "shape : tuple or list of int\n"
     "    The extents (first form).\n"
     "strides : tuple or list of int, optional\n"
     "    The strides in elements (first form); None for C order.\n"
     "itemsize : int, optional\n"
     "    Bytes per element (first form); taken from dtype when not given.\n"
     "layout : StridedLayout\n"
     "    The layout (second form); the view's layout is then this object.\n"
     "dtype : numpy.dtype or anything numpy.dtype() takes, optional\n"
     "    The element type; without it the view has no dtype (and cannot be\n"
     "    exported through DLPack). Its size must be the itemsize.\n"
     "is_readonly : bool, optional\n"
     "    Whether the view refuses writes.\n"
     "\n"
     "Returns\n"
     "-------\n"
     "StridedMemoryView\n"
     "\n"
     "Raises\n"
     "------\n"
     "TypeError\n"
     "    If buffer is not a Buffer, layout is not a StridedLayout, shape or\n"
     "    strides is not a tuple or list of integers, dtype holds Python objects,\n"
     "    or more than 3 arguments are given by position (first form).\n"
     "ValueError\n"
     "    If neither itemsize nor dtype is given, they disagree, the layout is\n"
     "    invalid or reaches outside the Buffer.\n"
     "OverflowError\n"
     "    If a value does not fit in int64.\n"
     "RuntimeError\n"
     "    If the Buffer is closed.\n"
     "\n"
     "Examples\n"
     "--------\n"
     ">>> buf = strided.HostMemoryResource().allocate(48)\n"
     ">>> v = strided.StridedMemoryView.from_buffer(buf, (3, 4), dtype=\"float32\")\n"
     ">>> v.shape, v.strides, v.dtype, v.buffer is buf\n"
     "((3, 4), None, dtype('float32'), True)\n"
     ">>> layout = strided.StridedLayout.dense((4, 3), 4, \"F\")\n"
     ">>> strided.StridedMemoryView.from_buffer(buf, layout, \"int32\").layout is layout\n"
     "True"},
    {"from_dlpack", (PyCFunction)(void (*)(void))strided_py_view_from_dlpack, KW | METH_CLASS,
     "from_dlpack($type, /, obj, stream_ptr=None)\n"
     "--\n"
     "\n"
     "A view of the memory of a DLPack producer.\n"
     "\n"
     "Calls ``obj.__dlpack_device__()``, then ``obj.__dlpack__(stream=...,\n"
     "max_version=(1, 3))`` (again without max_version for producers that predate\n"
     "it), and takes the tensor over: its deleter runs once, when the last holder\n"
     "of the memory lets go. The producer judges the stream it is handed, and\n"
     "what it raises passes on (NumPy takes only -1). A torch.Tensor is read\n"
     "through its own accessors, with the same stream rule.\n"
     "\n"
     "Parameters\n"
     "----------\n"
     "obj : object\n"
     "    The producer: an object with ``__dlpack__`` and ``__dlpack_device__``.\n"
     "stream_ptr : int, optional\n"
     "    The stream on which the memory will be used: -1 for no ordering, 0 for\n"
     "    the legacy default stream, or a stream handle. None is refused for CPU\n"
     "    and CUDA producers (pass -1 for host memory) and taken for CUDA host and\n"
     "    managed memory.\n"
     "\n"
     "Returns\n"
     "-------\n"
     "StridedMemoryView\n"
     "\n"
     "Raises\n"
     "------\n"
     "TypeError\n"
     "    If obj has no ``__dlpack__`` or ``__dlpack_device__``, or stream_ptr is\n"
     "    not an integer.\n"
     "ValueError\n"
     "    If stream_ptr is below -1, for a torch.Tensor.\n"
     "BufferError\n"
     "    If the producer's tensor is refused (device, element type, layout), or\n"
     "    stream_ptr is None for a CPU or CUDA producer.\n"
     "AssertionError\n"
     "    If the producer broke the protocol (no capsule, a tensor elsewhere than\n"
     "    ``__dlpack_device__()`` said).\n"
     "\n"
     "Examples\n"
     "--------\n"
     ">>> import numpy as np\n"
     ">>> v = strided.StridedMemoryView.from_dlpack(np.eye(3), stream_ptr=-1)\n"
     ">>> v.shape, v.dtype, v.readonly\n"
     "((3, 3), dtype('float64'), False)"},
    {"from_array_interface", (PyCFunction)strided_py_view_from_array_interface, METH_O | METH_CLASS,
     "from_array_interface($type, obj, /)\n"
     "--\n"
     "\n"
     "A view of the host memory an object's ``__array_interface__`` describes.\n"
     "\n"
     "Only version 3 of NumPy's array interface is read. The view keeps obj and\n"
     "its interface dict alive while the memory is in use, and reports device_id\n"
     "-1.\n"
     "\n"
     "Parameters\n"
     "----------\n"
     "obj : object\n"
     "    An object with ``__array_interface__``.\n"
     "\n"
     "Returns\n"
     "-------\n"
     "StridedMemoryView\n"
     "\n"
     "Raises\n"
     "------\n"
     "TypeError\n"
     "    If obj has no ``__array_interface__``, or its entries have the wrong\n"
     "    types.\n"
     "ValueError\n"
     "    If an entry is missing or invalid (version, shape, strides).\n"
     "BufferError\n"
     "    If what it describes cannot be taken: a mask, Python objects, another\n"
     "    byte order.\n"
     "OverflowError\n"
     "    If a value does not fit in int64.\n"
     "\n"
     "Examples\n"
     "--------\n"
     ">>> import numpy as np\n"
     ">>> v = strided.StridedMemoryView.from_array_interface(np.int16(7))\n"
     ">>> v.shape, v.dtype\n"
     "((), dtype('int16'))"},
    {"from_cuda_array_interface", (PyCFunction)(void (*)(void))strided_py_view_from_cai,
     KW | METH_CLASS,
     "from_cuda_array_interface($type, /, obj, stream_ptr=None)\n"
     "--\n"
     "\n"
     "A view of the memory an object's ``__cuda_array_interface__`` describes.\n"
     "\n"
     "Only version 3 is read. When the dict names a producer stream and\n"
     "stream_ptr is another stream, the consumer stream waits for the producer's\n"
     "work on the device (an event; the host never blocks).\n"
     "\n"
     "Parameters\n"
     "----------\n"
     "obj : object\n"
     "    An object with ``__cuda_array_interface__``.\n"
     "stream_ptr : int, optional\n"
     "    The stream on which the memory will be used: -1 for no ordering, 0 for\n"
     "    the legacy default stream, or a stream handle.\n"
     "\n"
     "Returns\n"
     "-------\n"
     "StridedMemoryView\n"
     "\n"
     "Raises\n"
     "------\n"
     "TypeError\n"
     "    If obj has no ``__cuda_array_interface__``, its entries have the wrong\n"
     "    types, or stream_ptr is not an integer.\n"
     "ValueError\n"
     "    If an entry is missing or invalid, or stream_ptr is below -1.\n"
     "BufferError\n"
     "    If what it describes cannot be taken (a mask, memory no device can\n"
     "    reach, Python objects), or stream_ptr is None.\n"
     "RuntimeError\n"
     "    When the CUDA driver fails."},
    {"from_any_interface", (PyCFunction)(void (*)(void))strided_py_view_from_any, KW | METH_CLASS,
     "from_any_interface($type, /, obj, stream_ptr=None)\n"
     "--\n"
     "\n"
     "A view of an object's memory, by the protocol it speaks.\n"
     "\n"
     "from_dlpack when obj has ``__dlpack__`` and ``__dlpack_device__``, else\n"
     "from_cuda_array_interface, else from_array_interface (host memory: there\n"
     "stream_ptr, when given, is only checked).\n"
     "\n"
     "Parameters\n"
     "----------\n"
     "obj : object\n"
     "    The producer.\n"
     "stream_ptr : int, optional\n"
     "    As for from_dlpack.\n"
     "\n"
     "Returns\n"
     "-------\n"
     "StridedMemoryView\n"
     "\n"
     "Raises\n"
     "------\n"
     "BufferError\n"
     "    If obj speaks none of the protocols; otherwise what the import raises.\n"
     "\n"
     "Examples\n"
     "--------\n"
     ">>> import numpy as np\n"
     ">>> strided.StridedMemoryView.from_any_interface(np.zeros((2, 5)), -1).size\n"
     "10"},
    {"_exchange_protocol", (PyCFunction)strided_py_view_exchange_protocol, METH_O | METH_CLASS,
     "_exchange_protocol($type, obj, /)\n"
     "--\n"
     "\n"
     "The protocol from_any_interface takes for obj.\n"
     "\n"
     "Returns\n"
     "-------\n"
     "str\n"
     "    'dlpack', 'cai' or 'array'.\n"
     "\n"
     "Raises\n"
     "------\n"
     "BufferError\n"
     "    If obj speaks none of them."},
    {"view", (PyCFunction)(void (*)(void))view_view, KW,
     "view($self, /, layout=None, dtype=None)\n"
     "--\n"
     "\n"
     "Another view of the same memory, through another layout or dtype.\n"
     "\n"
     "The new layout's offsets count from the same place as this view's, and\n"
     "every element must lie inside the memory this view was made from.\n"
     "\n"
     "Parameters\n"
     "----------\n"
     "layout : StridedLayout, optional\n"
     "    The new layout (None: this view's).\n"
     "dtype : numpy.dtype or anything numpy.dtype() takes, optional\n"
     "    The new element type (None: this view's), whose size must be the\n"
     "    layout's itemsize. ml_dtypes' sub-byte types are padded (one element\n"
     "    a byte). A str naming pairs of a sub-byte type, which NumPy cannot\n"
     "    name (\"float4_e2m1fn_x2\", as PyTorch spells it), gives packed pairs,\n"
     "    one byte each, and no numpy dtype; relaned(1) then sees them as single\n"
     "    packed elements.\n"
     "\n"
     "Returns\n"
     "-------\n"
     "StridedMemoryView\n"
     "    The new view, or this view itself when both are None.\n"
     "\n"
     "Raises\n"
     "------\n"
     "TypeError\n"
     "    If layout is not a StridedLayout, or dtype holds Python objects.\n"
     "ValueError\n"
     "    If the itemsize and the dtype disagree, or the layout reaches outside\n"
     "    the memory.\n"
     "\n"
     "Examples\n"
     "--------\n"
     ">>> import numpy as np\n"
     ">>> v = strided.StridedMemoryView.from_dlpack(np.arange(6, dtype=np.int32), -1)\n"
     ">>> np.from_dlpack(v.view(v.layout[::-2])).tolist()\n"
     "[5, 3, 1]\n"
     ">>> v.view(dtype=np.uint32).dtype\n"
     "dtype('uint32')"},
    {"relaned", (PyCFunction)(void (*)(void))view_relaned, KW,
     "relaned($self, /, lanes)\n"
     "--\n"
     "\n"
     "The same memory as a view of the same packed sub-byte type in other lanes.\n"
     "\n"
     "PyTorch's float4_e2m1fn_x2 (lanes 2: one byte a pair, shape and strides\n"
     "counting pairs) and DLPack's float4_e2m1fn (lanes 1: 4 bits an element)\n"
     "spell one tensor two ways. From lanes 2 to 1 every stride doubles and the\n"
     "last axis's extent doubles, (4, 3) pairs becoming (4, 6) elements (or the\n"
     "pairs spread along a new last axis of 2 when the last axis does not have\n"
     "stride 1); from lanes 1 to 2 the reverse.\n"
     "\n"
     "Parameters\n"
     "----------\n"
     "lanes : int\n"
     "    1 or 2.\n"
     "\n"
     "Returns\n"
     "-------\n"
     "StridedMemoryView\n"
     "    A new view of the same memory.\n"
     "\n"
     "Raises\n"
     "------\n"
     "ValueError\n"
     "    If the view is not of a packed sub-byte type, lanes is not 1 or 2, or\n"
     "    the elements do not pair up (the last axis needs stride 1 and an even\n"
     "    extent, the other strides and the offset must be even)."},
    {"copy_from", (PyCFunction)(void (*)(void))strided_py_view_copy_from, KW,
     "copy_from($self, /, other, stream=None, allocator=None, blocking=None)\n"
     "--\n"
     "\n"
     "Copy the elements of another view into this one.\n"
     "\n"
     "Every element of other goes to the element of this view at the same index;\n"
     "other is broadcast to this view's shape (NumPy's rules) and must have the\n"
     "same dtype: elements are copied as bytes, without conversion. Everything is\n"
     "checked before the first byte is written; the views may overlap. Between\n"
     "host-accessible memory the host copies, after the work queued on stream,\n"
     "complete on return; with device memory on either side the copy is queued on\n"
     "stream.\n"
     "\n"
     "Parameters\n"
     "----------\n"
     "other : StridedMemoryView\n"
     "    The source.\n"
     "stream : int or object with ``__cuda_stream__``, optional\n"
     "    The stream (None: none; required when a device is involved).\n"
     "allocator : CopyAllocatorOptions or dict, optional\n"
     "    Where the temporaries of the copy (pinned staging buffers, device\n"
     "    temporaries) come from: None for the defaults, a CopyAllocatorOptions,\n"
     "    or a dict with the keys 'host' and 'device' naming memory resources\n"
     "    (None: the default for that side). Each temporary is one\n"
     "    ``allocate(nbytes, stream=stream)`` call, closed on that stream when\n"
     "    the copy no longer needs it.\n"
     "blocking : bool, optional\n"
     "    Whether the copy is complete on return. None: only between host and\n"
     "    device memory (host copies always are).\n"
     "\n"
     "Raises\n"
     "------\n"
     "TypeError\n"
     "    If the other view is not a StridedMemoryView, stream is not a stream, or\n"
     "    allocator is none of its forms.\n"
     "ValueError\n"
     "    If the dtypes or itemsizes differ, the source cannot be broadcast to the\n"
     "    destination's shape, the destination is read-only or has overlapping\n"
     "    elements, allocator has another key, or a copy that needs a device has\n"
     "    no stream.\n"
     "NotImplementedError\n"
     "    If this build cannot do the copy on a device.\n"
     "MemoryError\n"
     "    If a temporary cannot be allocated.\n"
     "RuntimeError\n"
     "    Without a CUDA driver where one is needed, or when the driver fails.\n"
     "\n"
     "Examples\n"
     "--------\n"
     ">>> import numpy as np\n"
     ">>> a = np.arange(6, dtype=np.float32).reshape(2, 3)\n"
     ">>> b = np.zeros((3, 2), np.float32)\n"
     ">>> dst = strided.StridedMemoryView.from_dlpack(b, stream_ptr=-1)\n"
     ">>> dst.copy_from(strided.StridedMemoryView.from_dlpack(a.T, stream_ptr=-1))\n"
     ">>> b.tolist()\n"
     "[[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]"},
    {"copy_to", (PyCFunction)(void (*)(void))strided_py_view_copy_to, KW,
     "copy_to($self, /, other, stream=None, allocator=None, blocking=None)\n"
     "--\n"
     "\n"
     "Copy the elements of this view into another: ``other.copy_from(self, ...)``.\n"
     "\n"
     "Parameters\n"
     "----------\n"
     "other : StridedMemoryView\n"
     "    The destination.\n"
     "stream : int or object with ``__cuda_stream__``, optional\n"
     "    The stream (None: none; required when a device is involved).\n"
     "allocator : CopyAllocatorOptions or dict, optional\n"
     "    Where the temporaries of the copy (pinned staging buffers, device\n"
     "    temporaries) come from: None for the defaults, a CopyAllocatorOptions,\n"
     "    or a dict with the keys 'host' and 'device' naming memory resources\n"
     "    (None: the default for that side). Each temporary is one\n"
     "    ``allocate(nbytes, stream=stream)`` call, closed on that stream when\n"
     "    the copy no longer needs it.\n"
     "blocking : bool, optional\n"
     "    Whether the copy is complete on return. None: only between host and\n"
     "    device memory (host copies always are).\n"
     "\n"
     "Raises\n"
     "------\n"
     "TypeError\n"
     "    If the other view is not a StridedMemoryView, stream is not a stream, or\n"
     "    allocator is none of its forms.\n"
     "ValueError\n"
     "    If the dtypes or itemsizes differ, the source cannot be broadcast to the\n"
     "    destination's shape, the destination is read-only or has overlapping\n"
     "    elements, allocator has another key, or a copy that needs a device has\n"
     "    no stream.\n"
     "NotImplementedError\n"
     "    If this build cannot do the copy on a device.\n"
     "MemoryError\n"
     "    If a temporary cannot be allocated.\n"
     "RuntimeError\n"
     "    Without a CUDA driver where one is needed, or when the driver fails.\n"
     "\n"
     "Examples\n"
     "--------\n"
     ">>> import numpy as np\n"
     ">>> b = np.zeros(3, np.int64)\n"
     ">>> src = strided.StridedMemoryView.from_dlpack(np.array([7]), stream_ptr=-1)\n"
     ">>> src.copy_to(strided.StridedMemoryView.from_dlpack(b, stream_ptr=-1))\n"
     ">>> b.tolist()\n"
     "[7, 7, 7]"},
    {"__dlpack__", (PyCFunction)(void (*)(void))strided_py_view_dunder_dlpack, KW,
     "__dlpack__($self, /, *, stream=None, max_version=None, dl_device=None, copy=None)\n"
     "--\n"
     "\n"
     "Export the view as a DLPack capsule.\n"
     "\n"
     "The tensor holds the view's memory until its consumer lets go; it has the\n"
     "view's dtype, shape and strides, and is read-only when the view is.\n"
     "\n"
     "Parameters\n"
     "----------\n"
     "stream : int, optional\n"
     "    The consumer's stream, checked by DLPack's rules (None; -1 for host\n"
     "    memory; -1, 1, 2 or a handle, never 0, for device memory). A view has\n"
     "    no work of its own in flight: only a copy uses it.\n"
     "max_version : tuple of two ints, optional\n"
     "    The newest DLPack version the consumer takes: a versioned capsule when\n"
     "    it is at least ``(1, 0)``, else a legacy one.\n"
     "dl_device : tuple of two ints, optional\n"
     "    None or the view's own device, or ``(1, 0)`` for the CPU: device memory\n"
     "    then goes by a copy into host memory, complete on return.\n"
     "copy : bool, optional\n"
     "    None copies only when that is the one way to reach dl_device, False\n"
     "    refuses to, True always copies. A copy is new memory of the device's\n"
     "    kind, dense in C order, writable, and a versioned capsule flags it\n"
     "    IS_COPIED; for device memory it runs on the consumer's stream.\n"
     "\n"
     "Returns\n"
     "-------\n"
     "PyCapsule\n"
     "\n"
     "Raises\n"
     "------\n"
     "TypeError\n"
     "    If an argument is given by position.\n"
     "BufferError\n"
     "    If stream, dl_device, copy or max_version is refused, or the dtype has\n"
     "    no DLPack type (none, structured, another byte order).\n"
     "MemoryError\n"
     "    If a copy cannot be allocated.\n"
     "RuntimeError\n"
     "    When the CUDA driver fails during a copy.\n"
     "\n"
     "Examples\n"
     "--------\n"
     ">>> import numpy as np\n"
     ">>> v = strided.StridedMemoryView.from_dlpack(np.arange(3.0), stream_ptr=-1)\n"
     ">>> np.from_dlpack(v).tolist()\n"
     "[0.0, 1.0, 2.0]"},
    {"__dlpack_device__", (PyCFunction)strided_py_view_dunder_dlpack_device, METH_NOARGS,
     "__dlpack_device__($self, /)\n"
     "--\n"
     "\n"
     "The DLPack device of the exported tensor.\n"
     "\n"
     "Returns\n"
     "-------\n"
     "tuple of two ints\n"
     "    ``(device_type, device_id)``: ``(1, 0)`` for host memory, ``(2, id)``\n"
     "    for device memory, ``(3, 0)`` for pinned and ``(13, 0)`` for managed\n"
     "    memory."},
    {"as_tensor_map", (PyCFunction)(void (*)(void))strided_py_view_as_tensor_map, KW,
     "as_tensor_map($self, /, box_dim=None, *, options=None, element_strides=None, data_type=None, "
     "interleave=None, swizzle=None, l2_promotion=None, oob_fill=None)\n"
     "--\n"
     "\n"
     "A tiled tensor map of this view, for the GPU's tensor memory accelerator.\n"
     "\n"
     "The map is made for the device current on the calling thread (device 0\n"
     "when none is), for GPUs of compute capability 9.0 and later. Give either\n"
     "box_dim and the keywords, or options; box_dim and element_strides are in\n"
     "the view's axis order, the outermost first.\n"
     "\n"
     "Parameters\n"
     "----------\n"
     "box_dim : tuple of int, optional\n"
     "    The extent of the box (tile) along each axis, 1 to 256.\n"
     "options : TensorMapDescriptorOptions or dict, optional\n"
     "    All the options at once, instead of the other arguments.\n"
     "element_strides : tuple of int, optional\n"
     "    The step along each axis, 1 to 8 (None: 1).\n"
     "data_type : TensorMapDataType or numpy.dtype, optional\n"
     "    The element type (None: the view's dtype).\n"
     "interleave : TensorMapInterleave, optional\n"
     "swizzle : TensorMapSwizzle, optional\n"
     "l2_promotion : TensorMapL2Promotion, optional\n"
     "oob_fill : TensorMapOOBFill, optional\n"
     "    The driver's options (None: NONE).\n"
     "\n"
     "Returns\n"
     "-------\n"
     "TensorMapDescriptor\n"
     "    The descriptor, which keeps this view, and so the memory, alive.\n"
     "\n"
     "Raises\n"
     "------\n"
     "TypeError\n"
     "    If both options and other arguments are given, neither box_dim nor\n"
     "    options, or an argument of the wrong type (an enumeration given as an\n"
     "    int).\n"
     "ValueError\n"
     "    If a rule of the map is broken: memory no device can reach or\n"
     "    misaligned, a rank outside 1 to 5, a box or stride out of range, strides\n"
     "    the map cannot express, an element type without a tensor-map type, a\n"
     "    view on another device.\n"
     "RuntimeError\n"
     "    Without a CUDA driver, or when the driver fails."},
    {NULL, NULL, 0, NULL},
};

PyTypeObject strided_py_view_type = {
    /* Kept as written: clang-format would join the next line to the macro. */
    /* clang-format off */
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "strided.StridedMemoryView",
    /* clang-format on */
    .tp_doc = "StridedMemoryView(obj=None, stream_ptr=None)\n"
              "--\n"
              "\n"
              "A strided view of memory: an address, a StridedLayout, a dtype and a device.\n"
              "\n"
              "A view is made by from_dlpack, from_cuda_array_interface,\n"
              "from_array_interface, from_any_interface, from_buffer or view(), never\n"
              "reaches outside the memory it was made from, and holds that memory (the\n"
              "producer's, or the Buffer's) until the last view and the last DLPack\n"
              "tensor exported from it are gone. Views export through DLPack and the\n"
              "array interfaces, and copy_from / copy_to copy between any two of them.\n"
              "The class is cuda.core's ``StridedMemoryView``.\n"
              "\n"
              "Constructing one directly, ``StridedMemoryView(obj, stream_ptr)``, is\n"
              "deprecated (DeprecationWarning): it is from_any_interface, and a view of no\n"
              "elements at address 0 without obj.\n"
              "\n"
              "Parameters\n"
              "----------\n"
              "obj : object, optional\n"
              "    Deprecated: the producer, as for from_any_interface.\n"
              "stream_ptr : int, optional\n"
              "    Deprecated: as for from_any_interface.\n"
              "\n"
              "Examples\n"
              "--------\n"
              ">>> import numpy as np\n"
              ">>> import strided\n"
              ">>> a = np.arange(24, dtype=np.float32).reshape(4, 6)[:, ::2]\n"
              ">>> v = strided.StridedMemoryView.from_dlpack(a, stream_ptr=-1)\n"
              ">>> v.shape, v.strides, v.dtype, v.device_id\n"
              "((4, 3), (6, 2), dtype('float32'), -1)\n"
              ">>> w = v.view(v.layout[::-1])\n"
              ">>> np.from_dlpack(w)[0].tolist()\n"
              "[18.0, 20.0, 22.0]",
    .tp_basicsize = sizeof(strided_py_view),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_dealloc = (destructor)view_dealloc,
    .tp_traverse = (traverseproc)view_traverse,
    .tp_clear = (inquiry)view_clear,
    .tp_repr = (reprfunc)view_repr,
    .tp_weaklistoffset = offsetof(strided_py_view, weakrefs),
    .tp_methods = view_methods,
    .tp_getset = view_getset,
    .tp_new = strided_py_view_tp_new,
};

int strided_py_add_view_type(PyObject *module)
{
    if (strided_py_init_view_import() < 0 || PyType_Ready(&strided_py_view_type) < 0 ||
        strided_py_add_dlpack_exchange_api(&strided_py_view_type) < 0)
        return -1;
    return PyModule_AddObjectRef(module, "StridedMemoryView", (PyObject *)&strided_py_view_type);
}
