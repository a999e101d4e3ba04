/*
 * tensor_map.c: StridedMemoryView.as_tensor_map, and the object that holds
 * an encoded tensor map (strided._TensorMap), which TensorMapDescriptor
 * (strided/_tensor_map.py) wraps.
 *
 * strided._tensor_map turns the arguments into TensorMapDescriptorOptions
 * (their forms and types, with cuda.core's TypeErrors); this file reads
 * those into a strided_tensor_map_options and libstrided checks every value
 * and makes the map. A map object keeps the view whose memory its map
 * addresses alive, and holds the map inside itself at an address aligned as
 * the driver wants it, so that the 128 descriptor bytes stay where they are
 * for the object's life: a kernel argument may point at them.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "args.h"
#include "tensor_map.h"

typedef struct {
    PyObject_HEAD
    PyObject *view;          /* the StridedMemoryView the map addresses */
    strided_tensor_map *map; /* inside storage, aligned */
    unsigned char storage[sizeof(strided_tensor_map) + STRIDED_TENSOR_MAP_ALIGNMENT];
} map_object;

static PyTypeObject map_type;

/* strided._tensor_map, imported by the first call. */
static PyObject *helpers;

static PyObject *helper(const char *name)
{
    if (helpers == NULL && (helpers = PyImport_ImportModule("strided._tensor_map")) == NULL)
        return NULL;
    return PyObject_GetAttrString(helpers, name);
}

/* A new, empty map object (its map all zeros, rank 0). */
static map_object *map_new(void)
{
    if (!(map_type.tp_flags & Py_TPFLAGS_READY) && PyType_Ready(&map_type) < 0)
        return NULL;
    map_object *self = PyObject_GC_New(map_object, &map_type);
    if (self == NULL)
        return NULL;
    uintptr_t at = ((uintptr_t)self->storage + STRIDED_TENSOR_MAP_ALIGNMENT - 1) /
                   STRIDED_TENSOR_MAP_ALIGNMENT * STRIDED_TENSOR_MAP_ALIGNMENT;
    self->map = (strided_tensor_map *)(void *)at;
    memset(self->map, 0, sizeof *self->map);
    self->view = NULL;
    PyObject_GC_Track(self);
    return self;
}

/* The ints of a sequence: *out (PyMem_Free it) and its length. -1 with an
 * exception set. */
static int int64_array(PyObject *obj, const char *what, int32_t *out_n, int64_t **out)
{
    PyObject *seq = PySequence_Fast(obj, what);
    if (seq == NULL)
        return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > INT32_MAX) {
        Py_DECREF(seq);
        PyErr_Format(PyExc_OverflowError, "%s has too many entries", what);
        return -1;
    }
    int64_t *values = PyMem_Malloc((size_t)(n > 0 ? n : 1) * sizeof *values);
    if (values == NULL) {
        Py_DECREF(seq);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *index = PyNumber_Index(PySequence_Fast_GET_ITEM(seq, i));
        long long v = index != NULL ? PyLong_AsLongLong(index) : -1;
        Py_XDECREF(index);
        if (v == -1 && PyErr_Occurred()) {
            PyMem_Free(values);
            Py_DECREF(seq);
            return -1;
        }
        values[i] = v;
    }
    Py_DECREF(seq);
    *out_n = (int32_t)n;
    *out = values;
    return 0;
}

/* An int attribute of the options (an enumeration member). */
static int int_option(PyObject *opts, const char *name, int *out)
{
    PyObject *v = PyObject_GetAttrString(opts, name);
    if (v == NULL)
        return -1;
    long x = PyLong_AsLong(v);
    Py_DECREF(v);
    if (x == -1 && PyErr_Occurred())
        return -1;
    if (x < INT32_MIN || x > INT32_MAX)
        x = INT32_MAX; /* out of every enumeration: refused with its name */
    *out = (int)x;
    return 0;
}

/* The options' data_type: None (the view's dtype decides), a
 * TensorMapDataType, or a NumPy dtype, which libstrided maps. */
static int data_type_option(PyObject *opts, strided_tensor_map_options *o)
{
    PyObject *v = PyObject_GetAttrString(opts, "data_type");
    if (v == NULL)
        return -1;
    int rc = 0;
    if (v == Py_None) {
        o->has_data_type = false;
    } else if (PyLong_Check(v)) {
        long x = PyLong_AsLong(v);
        if (x == -1 && PyErr_Occurred())
            rc = -1;
        o->has_data_type = true;
        o->data_type = (strided_tensor_map_data_type)(x < INT32_MIN || x > INT32_MAX ? INT32_MAX
                                                                                     : x);
    } else {
        PyObject *dtype = strided_py_np_dtype(v);
        PyObject *name = dtype != NULL ? PyObject_Str(dtype) : NULL;
        const char *text = name != NULL ? PyUnicode_AsUTF8(name) : NULL;
        strided_typestr info = {0};
        /* A dtype strided refuses outright (object references) has no
         * tensor-map type either; say so in the same words. */
        if (text != NULL && strided_py_dtype_info(dtype, &info) < 0) {
            PyErr_Clear();
            info.has_dtype = false;
        }
        if (text == NULL) {
            rc = -1;
        } else {
            strided_status status = strided_tensor_map_data_type_from_dtype(
                info.has_dtype ? &info.dtype : NULL, text, false, &o->data_type);
            o->has_data_type = true;
            if (status != STRIDED_OK) {
                strided_py_raise(status);
                rc = -1;
            }
        }
        Py_XDECREF(name);
        Py_XDECREF(dtype);
    }
    Py_DECREF(v);
    return rc;
}

static const char *const as_tensor_map_names[] = {"box_dim",      "options",    "element_strides",
                                                  "data_type",    "interleave", "swizzle",
                                                  "l2_promotion", "oob_fill",   NULL};

PyObject *strided_py_view_as_tensor_map(strided_py_view *self, PyObject *const *args,
                                        Py_ssize_t nargs, PyObject *kwnames)
{
    if (nargs > 1)
        return PyErr_Format(PyExc_TypeError,
                            "as_tensor_map() takes at most 1 positional argument (%zd given)",
                            nargs);
    PyObject *a[8];
    if (strided_py_bind_args("as_tensor_map", args, nargs, kwnames, as_tensor_map_names, 0, a) < 0)
        return NULL;
    for (int i = 0; i < 8; i++)
        if (a[i] == NULL)
            a[i] = Py_None;
    PyObject *coerce = helper("_coerce_options");
    if (coerce == NULL)
        return NULL;
    PyObject *opts = PyObject_Vectorcall(coerce, a, 8, NULL);
    Py_DECREF(coerce);
    if (opts == NULL)
        return NULL;

    strided_tensor_map_options o;
    memset(&o, 0, sizeof o);
    int64_t *box = NULL, *steps = NULL;
    PyObject *dtype_name = NULL, *result = NULL;
    map_object *m = NULL;
    PyObject *box_obj = PyObject_GetAttrString(opts, "box_dim");
    PyObject *steps_obj = box_obj != NULL ? PyObject_GetAttrString(opts, "element_strides") : NULL;
    int interleave = 0, swizzle = 0, l2 = 0, oob = 0;
    if (steps_obj == NULL ||
        int64_array(box_obj, "box_dim must be a tuple of ints", &o.box_ndim, &box) < 0 ||
        (steps_obj != Py_None && int64_array(steps_obj, "element_strides must be a tuple of ints",
                                             &o.element_strides_ndim, &steps) < 0) ||
        data_type_option(opts, &o) < 0 || int_option(opts, "interleave", &interleave) < 0 ||
        int_option(opts, "swizzle", &swizzle) < 0 || int_option(opts, "l2_promotion", &l2) < 0 ||
        int_option(opts, "oob_fill", &oob) < 0)
        goto done;
    o.box_dim = box;
    o.element_strides = steps;
    o.interleave = (strided_tensor_map_interleave)interleave;
    o.swizzle = (strided_tensor_map_swizzle)swizzle;
    o.l2_promotion = (strided_tensor_map_l2_promotion)l2;
    o.oob_fill = (strided_tensor_map_oob_fill)oob;
    /* A NumPy element type without a DLPack type reaches libstrided by its
     * name, for the message that refuses it. */
    if (!self->view.has_dtype) {
        PyObject *dtype = strided_py_view_dtype(self);
        if (dtype == NULL && PyErr_Occurred())
            goto done;
        if (dtype != NULL) {
            if ((dtype_name = PyObject_Str(dtype)) == NULL ||
                (o.dtype_name = PyUnicode_AsUTF8(dtype_name)) == NULL)
                goto done;
        }
    }
    if ((m = map_new()) == NULL)
        goto done;
    strided_status status = strided_tensor_map_make(&self->view, &o, m->map);
    if (status != STRIDED_OK) {
        strided_py_raise(status);
        goto done;
    }
    m->view = Py_NewRef((PyObject *)self);
    PyObject *wrap = helper("_descriptor");
    if (wrap != NULL) {
        result = PyObject_CallOneArg(wrap, (PyObject *)m);
        Py_DECREF(wrap);
    }

done:
    Py_XDECREF(m);
    Py_XDECREF(dtype_name);
    PyMem_Free(box);
    PyMem_Free(steps);
    Py_XDECREF(box_obj);
    Py_XDECREF(steps_obj);
    Py_DECREF(opts);
    return result;
}

/* _replace_address(view): the same map for view's memory. */
static PyObject *map_replace_address(map_object *self, PyObject *view)
{
    if (!PyObject_TypeCheck(view, &strided_py_view_type))
        return PyErr_Format(PyExc_TypeError,
                            "replace_address: expected a StridedMemoryView, got %.200s",
                            Py_TYPE(view)->tp_name);
    const strided_view *v = &((strided_py_view *)view)->view;
    strided_status status = strided_tensor_map_replace_address(self->map, v, self->map);
    if (status != STRIDED_OK)
        return strided_py_raise(status);
    Py_SETREF(self->view, Py_NewRef(view));
    Py_RETURN_NONE;
}

static PyObject *get_address(map_object *self, void *closure)
{
    (void)closure;
    return PyLong_FromVoidPtr(self->map->descriptor);
}

static PyObject *get_global_address(map_object *self, void *closure)
{
    (void)closure;
    return PyLong_FromUnsignedLongLong(self->map->global_address);
}

static PyObject *get_view(map_object *self, void *closure)
{
    (void)closure;
    return Py_NewRef(self->view != NULL ? self->view : Py_None);
}

/* An int field of the map, at the offset closure names. Every one of them
 * (rank, device and the enumerations) is an int. */
static PyObject *get_int(map_object *self, void *closure)
{
    int v;
    memcpy(&v, (const char *)self->map + (size_t)(uintptr_t)closure, sizeof v);
    return PyLong_FromLong(v);
}

/* The arrays, in the driver's order: closure says which. */
enum { GLOBAL_DIM, GLOBAL_STRIDES, BOX_DIM, ELEMENT_STRIDES };

static PyObject *get_array(map_object *self, void *closure)
{
    const strided_tensor_map *m = self->map;
    int which = (int)(uintptr_t)closure;
    int n = which == GLOBAL_STRIDES ? m->rank - 1 : m->rank;
    PyObject *t = PyTuple_New(n > 0 ? n : 0);
    for (int i = 0; t != NULL && i < n; i++) {
        unsigned long long v = which == GLOBAL_DIM       ? m->global_dim[i]
                               : which == GLOBAL_STRIDES ? m->global_strides[i]
                               : which == BOX_DIM        ? m->box_dim[i]
                                                         : m->element_strides[i];
        PyObject *x = PyLong_FromUnsignedLongLong(v);
        if (x == NULL)
            Py_CLEAR(t);
        else
            PyTuple_SET_ITEM(t, i, x);
    }
    return t;
}

#define INT_FIELD(name, doc)                                                          \
    {                                                                                 \
#name, (getter)get_int, NULL, doc, (void *)offsetof(strided_tensor_map, name) \
    }
#define ARRAY_FIELD(name, which, doc)                                   \
    {                                                                   \
#name, (getter)get_array, NULL, doc, (void *)(uintptr_t)(which) \
    }

static PyGetSetDef map_getset[] = {
    {"address", (getter)get_address, NULL,
     "The host address of the 128 descriptor bytes (128-byte aligned, fixed for the object's "
     "life).",
     NULL},
    {"global_address", (getter)get_global_address, NULL,
     "The device address of the view's element (0,...,0).", NULL},
    {"view", (getter)get_view, NULL, "The StridedMemoryView the map addresses.", NULL},
    INT_FIELD(rank, "The number of dimensions."),
    INT_FIELD(device, "The CUDA device the map was made for."),
    INT_FIELD(data_type, "The TensorMapDataType value."),
    INT_FIELD(interleave, "The TensorMapInterleave value."),
    INT_FIELD(swizzle, "The TensorMapSwizzle value."),
    INT_FIELD(l2_promotion, "The TensorMapL2Promotion value."),
    INT_FIELD(oob_fill, "The TensorMapOOBFill value."),
    ARRAY_FIELD(global_dim, GLOBAL_DIM, "The extents, innermost first."),
    ARRAY_FIELD(global_strides, GLOBAL_STRIDES,
                "The strides in bytes of dimensions 1..rank-1, innermost first."),
    ARRAY_FIELD(box_dim, BOX_DIM, "The box, innermost first."),
    ARRAY_FIELD(element_strides, ELEMENT_STRIDES, "The element strides, innermost first."),
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef map_methods[] = {
    {"_replace_address", (PyCFunction)map_replace_address, METH_O,
     "_replace_address(view)\n--\n\nThe same map for the memory of view (a "
     "StridedMemoryView)."},
    {NULL, NULL, 0, NULL},
};

/* The 128 descriptor bytes, read-only. */
static int map_getbuffer(map_object *self, Py_buffer *view, int flags)
{
    return PyBuffer_FillInfo(view, (PyObject *)self, self->map->descriptor,
                             STRIDED_TENSOR_MAP_BYTES, 1, flags);
}

static PyBufferProcs map_as_buffer = {
    .bf_getbuffer = (getbufferproc)map_getbuffer,
};

static int map_traverse(map_object *self, visitproc visit, void *arg)
{
    Py_VISIT(self->view);
    return 0;
}

static int map_clear(map_object *self)
{
    Py_CLEAR(self->view);
    return 0;
}

static void map_dealloc(map_object *self)
{
    PyObject_GC_UnTrack(self);
    map_clear(self);
    PyObject_GC_Del(self);
}

static PyTypeObject map_type = {
    /* Kept as written: clang-format would join the next line to the macro. */
    /* clang-format off */
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "strided._TensorMap",
    /* clang-format on */
    .tp_doc = "A tiled tensor map of a StridedMemoryView: the driver's 128-byte descriptor "
              "(the buffer protocol gives it) and what it was encoded from. "
              "TensorMapDescriptor wraps it.",
    .tp_basicsize = sizeof(map_object),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_dealloc = (destructor)map_dealloc,
    .tp_traverse = (traverseproc)map_traverse,
    .tp_clear = (inquiry)map_clear,
    .tp_as_buffer = &map_as_buffer,
    .tp_methods = map_methods,
    .tp_getset = map_getset,
};
