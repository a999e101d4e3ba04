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

strided_py_view *strided_py_view_new(strided_view *v, PyObject *exporting_obj, PyObject *layout,
                                     PyObject *base, PyObject *dtype)
{
    strided_py_view *self = PyObject_GC_New(strided_py_view, &strided_py_view_type);
    if (self == NULL) {
        strided_py_release_buffer(v->buffer);
        return NULL;
    }
    self->view = *v;
    self->exporting_obj = Py_XNewRef(exporting_obj);
    self->layout = Py_XNewRef(layout);
    self->base = Py_XNewRef(base);
    self->dtype = Py_XNewRef(dtype);
    self->hold = NULL;
    self->weakrefs = NULL;
    PyObject_GC_Track(self);
    return self;
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
    strided_status status = strided_view_from_buffer(strided_py_buffer_of(buffer), &layout,
                                                     has_dl ? &info.dtype : NULL, readonly, &v);
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
    if (self->base == NULL)
        self->base = strided_py_buffer_new_held(strided_buffer_retain(self->view.buffer), NULL,
                                                self->exporting_obj, self->hold);
    return self->base;
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
    if (dtype_arg != NULL) {
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
    status = strided_view_view(&self->view, &layout, has_dl ? &info.dtype : NULL, &v);
    if (status != STRIDED_OK) {
        strided_py_raise(status);
        goto fail;
    }
    PyObject *result = (PyObject *)strided_py_view_joined(
        strided_py_view_new(&v, base, layout_obj, base, dtype), self->hold); /* the same C buffer */
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
    /* The C buffer's reference to the object behind the memory is the
     * hold's to report, once for all the views and Buffers sharing it. */
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
    strided_py_hold_leave(hold);
    strided_py_release_buffer(b);
    view_clear(self);
    PyObject_GC_Del(self);
}

static PyGetSetDef view_getset[] = {
    {"ptr", (getter)get_ptr, NULL, "The address of the element at index (0,...,0).", NULL},
    {"device_ptr", (getter)get_device_ptr, NULL,
     "The address at which a device reaches that element (0 when no device can).", NULL},
    {"shape", (getter)get_shape, NULL, "The extents.", NULL},
    {"strides", (getter)get_strides, NULL,
     "The strides in elements, or None for C order given without strides.", NULL},
    {"size", (getter)get_size, NULL, "The number of elements.", NULL},
    {"dtype", (getter)get_dtype, NULL, "The numpy dtype, or None when unknown.", NULL},
    {"device_id", (getter)get_device_id, NULL,
     "The device of the memory; -1 for host memory not bound to a device.", NULL},
    {"is_device_accessible", (getter)get_is_device_accessible, NULL,
     "Whether a CUDA device can reach the memory.", NULL},
    {"readonly", (getter)get_readonly, NULL, "Whether the view refuses writes.", NULL},
    {"exporting_obj", (getter)get_exporting_obj, NULL,
     "The producer object, or the Buffer for from_buffer and view() results.", NULL},
    {"layout", (getter)get_layout, NULL, "The StridedLayout.", NULL},
    {"_layout", (getter)get_layout, NULL, "The StridedLayout (cuda.core's name).", NULL},
    {"buffer", (getter)get_buffer, NULL,
     "The Buffer the view was made from, or None for an imported view.", NULL},
    {"__array_interface__", (getter)strided_py_view_array_interface, NULL,
     "NumPy's array interface (version 3), for host-accessible views.", NULL},
    {"__cuda_array_interface__", (getter)strided_py_view_cuda_array_interface, NULL,
     "The CUDA Array Interface (version 3), for views a CUDA device can access.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

#define KW (METH_FASTCALL | METH_KEYWORDS)

static PyMethodDef view_methods[] = {
    {"from_buffer", (PyCFunction)(void (*)(void))view_from_buffer, KW | METH_CLASS,
     "from_buffer(buffer, shape, strides=None, *, itemsize=None, dtype=None, "
     "is_readonly=False)\nfrom_buffer(buffer, layout, dtype=None, is_readonly=False)\n\n"
     "A view of a Buffer: through a shape, strides in elements and an itemsize or "
     "dtype, or through a StridedLayout (then view.layout is layout)."},
    {"from_dlpack", (PyCFunction)(void (*)(void))strided_py_view_from_dlpack, KW | METH_CLASS,
     "from_dlpack(obj, stream_ptr=None)\n--\n\n"
     "A view of a DLPack producer. For CPU and CUDA tensors stream_ptr must be given "
     "(-1: no synchronisation)."},
    {"from_array_interface", (PyCFunction)strided_py_view_from_array_interface, METH_O | METH_CLASS,
     "from_array_interface(obj)\n--\n\nA view of an object with NumPy's "
     "__array_interface__ (version 3)."},
    {"from_cuda_array_interface", (PyCFunction)(void (*)(void))strided_py_view_from_cai,
     KW | METH_CLASS,
     "from_cuda_array_interface(obj, stream_ptr=None)\n--\n\n"
     "A view of an object with a __cuda_array_interface__ (version 3). stream_ptr is "
     "the consumer stream (-1: no synchronisation); it waits on the device for the "
     "producer's stream."},
    {"from_any_interface", (PyCFunction)(void (*)(void))strided_py_view_from_any, KW | METH_CLASS,
     "from_any_interface(obj, stream_ptr=None)\n--\n\n"
     "from_dlpack when obj speaks DLPack, else from_cuda_array_interface, else "
     "from_array_interface (host memory: stream_ptr orders nothing)."},
    {"_exchange_protocol", (PyCFunction)strided_py_view_exchange_protocol, METH_O | METH_CLASS,
     "_exchange_protocol(obj)\n--\n\n'dlpack', 'cai' or 'array': the protocol "
     "from_any_interface takes for obj (BufferError for none)."},
    {"view", (PyCFunction)(void (*)(void))view_view, KW,
     "view(layout=None, dtype=None)\n--\n\n"
     "Another view of the same memory; both None returns self."},
    {"copy_from", (PyCFunction)(void (*)(void))strided_py_view_copy_from, KW,
     "copy_from(other, stream=None, allocator=None, blocking=None)\n--\n\n"
     "Copy the elements of view other into this view (other is broadcast to this "
     "shape; same dtype; no conversion). Between host memory the copy runs on the "
     "host and is complete on return; with device memory it is queued on stream "
     "(required), blocking by default only between host and device. allocator: "
     "where temporaries come from: None (defaults), a CopyAllocatorOptions or a "
     "dict with the keys 'host' and 'device' naming memory resources; each "
     "temporary is one allocate(nbytes, stream=stream) call."},
    {"copy_to", (PyCFunction)(void (*)(void))strided_py_view_copy_to, KW,
     "copy_to(other, stream=None, allocator=None, blocking=None)\n--\n\n"
     "other.copy_from(self, ...)."},
    {"__dlpack__", (PyCFunction)(void (*)(void))strided_py_view_dunder_dlpack, KW,
     "__dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None)\n--\n\n"
     "Export as a DLPack capsule (versioned when max_version >= (1, 0)). dl_device: "
     "None or the view's own device, or (1, 0) for the CPU: device memory then goes "
     "by a copy into host memory, complete on return. copy: None copies only then, "
     "False refuses to, True always copies (into new memory of the same kind, dense "
     "in C order; on the consumer's stream for device memory). A copy is writable "
     "and flagged IS_COPIED."},
    {"__dlpack_device__", (PyCFunction)strided_py_view_dunder_dlpack_device, METH_NOARGS,
     "__dlpack_device__()\n--\n\n(device_type, device_id) of the exported tensor."},
    {"as_tensor_map", (PyCFunction)(void (*)(void))strided_py_view_as_tensor_map, KW,
     "as_tensor_map(box_dim=None, *, options=None, element_strides=None, data_type=None, "
     "interleave=None, swizzle=None, l2_promotion=None, oob_fill=None)\n--\n\n"
     "A TensorMapDescriptor of this view for the current device: box_dim and the keywords, "
     "or options (a TensorMapDescriptorOptions or a dict), in the view's axis order."},
    {NULL, NULL, 0, NULL},
};

PyTypeObject strided_py_view_type = {
    /* Kept as written: clang-format would join the next line to the macro. */
    /* clang-format off */
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "strided.StridedMemoryView",
    /* clang-format on */
    .tp_doc = "A strided view of memory: a pointer, a StridedLayout, a dtype and a "
              "device, made by from_dlpack, from_cuda_array_interface, "
              "from_array_interface, from_any_interface, from_buffer or view(). "
              "StridedMemoryView(obj, stream_ptr) is the deprecated form of "
              "from_any_interface.",
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
