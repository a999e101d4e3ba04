/*
 * view_type.c: strided.StridedMemoryView, the Python face of a strided_view.
 *
 * A view object holds one strided_view (and with it one reference to the C
 * buffer), the Python object that exported the memory, and what it has
 * memoised: the StridedLayout object (the one given to from_buffer, so that
 * view.layout is layout), the numpy dtype, and the Buffer that view() works
 * on. The C library checks every layout against the buffer and owns
 * imported DLPack tensors; this file converts arguments, numpy dtypes and
 * capsules.
 *
 * Ownership: an imported DLPack tensor belongs to the view's C buffer from
 * the moment strided_view_import_dlpack is called (its deleter runs once,
 * when the last view, derived view, wrapper Buffer or exported tensor lets
 * go); the consumed capsule is renamed and loses its destructor. An
 * array-interface import is made the same way, from a tensor this file
 * builds, whose deleter drops the reference to the exporting object. An
 * exported tensor holds its own reference to the C buffer, not to the view
 * object.
 *
 * Where the C buffer's release holds a Python object (an interface or
 * torch import's exporting object; a Buffer's owner or Python memory
 * resource), the view joins the memory's hold (hold.c), through which the
 * garbage collector learns of that reference. An exported tensor still
 * alive holds the C buffer where the collector cannot see, so a cycle
 * through the memory is kept until the tensor goes.
 */
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "strided_py.h"

typedef struct {
    PyObject_HEAD
    strided_view view;       /* one buffer reference; buffer NULL when unset */
    PyObject *exporting_obj; /* the producer, or the Buffer */
    PyObject *layout;        /* StridedLayout: given or memoised; or NULL */
    PyObject *base;          /* the Buffer view() works on; or NULL */
    PyObject *dtype;         /* numpy dtype: given or memoised; or NULL */
    PyObject *hold;          /* the memory's hold (hold.c), joined; or NULL
                              * when the C buffer holds no Python object */
    int device_id;
    bool device_accessible;
    PyObject *weakrefs;
} ViewObject;

static PyTypeObject ViewType;

/* ---- dtypes ---------------------------------------------------------- */

/* The view's numpy dtype (borrowed, memoised), or NULL without an
 * exception for a view that has none, or NULL with one. */
static PyObject *view_dtype(ViewObject *self)
{
    if (self->dtype == NULL && self->view.has_dtype)
        self->dtype = strided_py_numpy_dtype_of(self->view.dtype);
    return self->dtype;
}

/* ---- Construction ------------------------------------------------------- */

/* A new view object taking v (its buffer reference); the object fields
 * are new references. On failure v is released. */
static ViewObject *view_new(strided_view *v, PyObject *exporting_obj, PyObject *layout,
                            PyObject *base, PyObject *dtype, int device_id,
                            bool device_accessible)
{
    ViewObject *self = PyObject_GC_New(ViewObject, &ViewType);
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
    self->device_id = device_id;
    self->device_accessible = device_accessible;
    self->weakrefs = NULL;
    PyObject_GC_Track(self);
    return self;
}

/* self (may be NULL), counted in hold (may be NULL), the hold of the memory
 * its buffer reference is to: a view of a Buffer, or another view of the
 * same C buffer, shares that object's hold. */
static ViewObject *joined(ViewObject *self, PyObject *hold)
{
    if (self != NULL)
        self->hold = strided_py_hold_join(hold);
    return self;
}

/* self (not NULL) joined to hold, a new hold made for it (taken); NULL,
 * with self dropped, when making the hold failed. */
static PyObject *joined_new(ViewObject *self, PyObject *hold)
{
    if (hold == NULL) {
        Py_DECREF(self);
        return NULL;
    }
    joined(self, hold);
    Py_DECREF(hold);
    return (PyObject *)self;
}

/* Raise a failed import as BufferError (the producer's tensor was
 * unusable), keeping MemoryError for allocation failures. */
static PyObject *raise_import(strided_status status)
{
    if (status == STRIDED_ERR_OUT_OF_MEMORY || status == STRIDED_ERR_CUDA ||
        status == STRIDED_ERR_NO_CUDA_DRIVER)
        return strided_py_raise(status);
    PyErr_SetString(PyExc_BufferError, strided_last_error_reason());
    return NULL;
}

static const char *const from_buffer_names[] = {"buffer", "shape", "strides", "itemsize",
                                                "dtype", "is_readonly", NULL};
static const char *const from_layout_names[] = {"buffer", "layout", "dtype",
                                                "is_readonly", NULL};

/* from_buffer in both forms (spec §4.7, D9): a StridedLayout as second
 * argument (positional or layout=) selects the #1283 form. */
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
    PyObject *layout_obj = NULL, *dtype_arg, *readonly_arg;
    if (layout_form) {
        if (strided_py_bind_args("from_buffer", args, nargs, kwnames, from_layout_names, 2,
                                 a) < 0)
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
        if (strided_py_bind_args("from_buffer", args, nargs, kwnames, from_buffer_names, 2,
                                 a) < 0)
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
    bool has_dl = false;
    strided_dtype dl;
    if (strided_py_as_dtype(dtype_arg, &dtype, &has_dl, &dl) < 0) {
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
                                 "itemsize (%S) does not match dtype.itemsize (%S)",
                                 itemsize_obj, dtype_size);
                Py_DECREF(dtype_size);
                goto fail;
            }
        }
        layout_obj = PyObject_CallFunctionObjArgs(
            (PyObject *)layout_type, a[1], a[2] ? a[2] : Py_None,
            itemsize_obj ? itemsize_obj : dtype_size, NULL);
        Py_XDECREF(dtype_size);
        if (layout_obj == NULL)
            goto fail;
    }

    strided_layout layout;
    if (strided_py_layout_from(layout_obj, &layout) < 0)
        goto fail;
    if (dtype != NULL && !has_dl && strided_py_check_np_itemsize(dtype, layout.itemsize) < 0)
        goto fail;
    strided_buffer *b = strided_py_buffer_of(a[0]);
    if (b == NULL)
        goto fail;
    strided_view v;
    strided_status status = strided_view_from_buffer(b, &layout, has_dl ? &dl : NULL,
                                                     readonly, &v);
    if (status != STRIDED_OK) {
        strided_py_raise(status);
        goto fail;
    }
    strided_memory_info info = strided_buffer_memory_info(b);
    /* Kept across view_new, where a collection may run code that closes
     * the Buffer: the new view's reference must still be counted. */
    PyObject *hold = Py_XNewRef(strided_py_buffer_hold(a[0]));
    PyObject *result = (PyObject *)joined(
        view_new(&v, a[0], layout_obj, a[0], dtype, info.device_id, info.device_accessible),
        hold);
    Py_XDECREF(hold);
    Py_DECREF(layout_obj);
    Py_XDECREF(dtype);
    return result;

fail:
    Py_XDECREF(layout_obj);
    Py_XDECREF(dtype);
    return NULL;
}

/* The view's device as from_dlpack reports it (spec §4.3 step 2), the
 * device __dlpack_device__() named, and the stream to pass to the
 * producer. Returns -1 with an exception set. */
static int dlpack_consumer(PyObject *device, PyObject *stream_ptr, int *out_id,
                           bool *out_accessible, strided_device *out_device,
                           PyObject **out_stream)
{
    long type, id;
    if (!PyTuple_Check(device) || PyTuple_GET_SIZE(device) != 2) {
        PyErr_Format(PyExc_TypeError,
                     "__dlpack_device__() must return a (device_type, device_id) "
                     "tuple, got %R",
                     device);
        return -1;
    }
    type = PyLong_AsLong(PyTuple_GET_ITEM(device, 0));
    if (type == -1 && PyErr_Occurred())
        return -1;
    id = PyLong_AsLong(PyTuple_GET_ITEM(device, 1));
    if (id == -1 && PyErr_Occurred())
        return -1;
    bool needs_stream;
    /* cuda.core asserts these (spec §4.3 step 2). */
    if ((type == STRIDED_DEVICE_CPU && id != 0) || (type == STRIDED_DEVICE_CUDA && id < 0)) {
        PyErr_Format(PyExc_AssertionError,
                     "__dlpack_device__() returned device id %ld for device type %ld; "
                     "a CPU device must have id 0 and a CUDA device a non-negative id",
                     id, type);
        return -1;
    }
    out_device->device_type = (int32_t)type;
    out_device->device_id = (int32_t)id;
    switch (type) {
    case STRIDED_DEVICE_CPU:
        *out_id = -1;
        *out_accessible = false;
        needs_stream = true;
        break;
    case STRIDED_DEVICE_CUDA:
        *out_id = (int)id;
        *out_accessible = true;
        needs_stream = true;
        break;
    case STRIDED_DEVICE_CUDA_HOST:
    case STRIDED_DEVICE_CUDA_MANAGED:
        *out_id = (int)id;
        *out_accessible = true;
        needs_stream = false;
        break;
    default:
        PyErr_SetString(PyExc_BufferError, "device not supported");
        return -1;
    }
    if (stream_ptr == Py_None && needs_stream) {
        PyErr_SetString(PyExc_BufferError, "stream=None is ambiguous with view()");
        return -1;
    }
    *out_stream = Py_NewRef(Py_None);
    if (stream_ptr == Py_None)
        return 0;
    PyObject *s = strided_py_index(stream_ptr, "stream_ptr", -1);
    if (s == NULL)
        return -1;
    /* 0 passes no stream; for CPU, -1 ("no synchronisation") neither. An
     * exact int converts without error; overflow is just another handle. */
    int overflow;
    long long value = PyLong_AsLongLongAndOverflow(s, &overflow);
    if (overflow == 0 && (value == 0 || (type == STRIDED_DEVICE_CPU && value == -1))) {
        Py_DECREF(s);
        return 0;
    }
    Py_SETREF(*out_stream, s);
    return 0;
}

/* Names and constants of the DLPack calls, made once (interned: calls
 * look them up without hashing new strings). */
static PyObject *name_dlpack, *name_dlpack_device, *name_cai, *kw_stream,
    *kw_stream_max_version, *our_max_version;

static int init_call_names(void)
{
    name_dlpack = PyUnicode_InternFromString("__dlpack__");
    name_dlpack_device = PyUnicode_InternFromString("__dlpack_device__");
    name_cai = PyUnicode_InternFromString("__cuda_array_interface__");
    kw_stream = Py_BuildValue("(s)", "stream");
    kw_stream_max_version = Py_BuildValue("(ss)", "stream", "max_version");
    our_max_version =
        Py_BuildValue("(ii)", STRIDED_DLPACK_MAJOR_VERSION, STRIDED_DLPACK_MINOR_VERSION);
    if (name_dlpack == NULL || name_dlpack_device == NULL || name_cai == NULL ||
        kw_stream == NULL ||
        kw_stream_max_version == NULL || our_max_version == NULL)
        return -1;
    return 0;
}

/* obj.__dlpack__(stream=stream, max_version=(1, 3)), retried without
 * max_version for producers that predate it. */
static PyObject *call_dlpack(PyObject *obj, PyObject *stream)
{
    PyObject *args[3] = {obj, stream, our_max_version};
    PyObject *capsule = PyObject_VectorcallMethod(name_dlpack, args, 1, kw_stream_max_version);
    if (capsule == NULL && PyErr_ExceptionMatches(PyExc_TypeError)) {
        PyErr_Clear();
        capsule = PyObject_VectorcallMethod(name_dlpack, args, 1, kw_stream);
    }
    return capsule;
}

static int consumer_stream(PyObject *stream_ptr, void **out, bool *sync);

/* The release callback of interface imports: the exporting object, kept
 * alive while the memory is in use. May run on any thread. */
static void release_exporter(void *context, void *ptr, size_t size)
{
    (void)ptr;
    (void)size;
    if (strided_py_can_call_python()) {
        PyGILState_STATE gil = PyGILState_Ensure();
        Py_DECREF((PyObject *)context);
        PyGILState_Release(gil);
    }
}

/* The view of the memory at ptr seen through l, made for an exporting
 * object that the memory holds a reference to until the last holder lets
 * go (release_exporter). device NULL: classify the memory. */
static int wrap_exporter(PyObject *obj, void *ptr, const strided_layout *l,
                         const strided_dtype *dl, bool readonly,
                         const strided_device *device, strided_view *out)
{
    strided_status status = strided_view_wrap(ptr, l, dl, readonly, device, release_exporter,
                                              Py_NewRef(obj), out);
    if (status != STRIDED_OK) {
        Py_DECREF(obj);
        strided_py_raise(status);
        return -1;
    }
    return 0;
}

/* The view object of a wrap_exporter view v (taken over), with a new hold
 * for the memory's hidden reference to obj, which tells the collector of
 * it (hold.c). */
static PyObject *exporter_view_new(strided_view *v, PyObject *obj, PyObject *dtype,
                                   int device_id, bool device_accessible)
{
    ViewObject *self = view_new(v, obj, NULL, NULL, dtype, device_id, device_accessible);
    if (self == NULL)
        return NULL;
    return joined_new(self, strided_py_hold_new(self->view.buffer, obj));
}

/* from_dlpack of a plain torch tensor, read through its accessors
 * (torch_view.c) with DLPack's stream rule done here: the consumer stream
 * waits for torch's current stream. Sets *result (NULL with an exception)
 * and returns 1, or returns 0 when the tensor must go by DLPack. */
static int view_from_torch(PyObject *t, PyObject *stream_ptr, PyObject **result)
{
    strided_py_torch_tensor d;
    *result = NULL;
    int rc = strided_py_torch_describe(t, &d);
    if (rc <= 0)
        return rc < 0 ? 1 : 0;
    if (stream_ptr == Py_None) {
        PyErr_SetString(PyExc_BufferError, "stream=None is ambiguous with view()");
        return 1;
    }
    bool cuda = d.device.device_type == STRIDED_DEVICE_CUDA;
    void *consumer = NULL, *producer = NULL;
    bool sync = false;
    if (consumer_stream(stream_ptr, &consumer, &sync) < 0)
        return 1;
    if (cuda && sync) {
        strided_status status;
        if (strided_py_torch_current_stream((int)d.device.device_id, &producer) < 0)
            return 1;
        status = strided_stream_wait(consumer, producer, (int)d.device.device_id);
        if (status != STRIDED_OK) {
            strided_py_raise(status);
            return 1;
        }
    }
    strided_view v;
    if (wrap_exporter(t, d.ptr, &d.layout, &d.dtype, false, &d.device, &v) == 0)
        *result = exporter_view_new(&v, t, NULL, cuda ? (int)d.device.device_id : -1, cuda);
    return 1;
}

static const char *const from_dlpack_names[] = {"obj", "stream_ptr", NULL};

/* After obj.<name>(...) failed in from_dlpack: an AttributeError because
 * obj has no such method is the caller's TypeError. Returns NULL. */
static PyObject *not_dlpack(PyObject *obj, PyObject *name)
{
    strided_py_retype_missing_attribute(
        obj, name,
        "StridedMemoryView.from_dlpack() expects an object with __dlpack__ and "
        "__dlpack_device__, got %.200s",
        Py_TYPE(obj)->tp_name);
    return NULL;
}

static PyObject *view_from_dlpack(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                  PyObject *kwnames)
{
    (void)cls;
    PyObject *a[2];
    if (strided_py_bind_args("from_dlpack", args, nargs, kwnames, from_dlpack_names, 1, a) <
        0)
        return NULL;
    PyObject *obj = a[0], *stream_ptr = a[1] ? a[1] : Py_None;
    PyObject *result;
    if (strided_py_is_torch_tensor(obj) && view_from_torch(obj, stream_ptr, &result))
        return result;
    PyObject *device = PyObject_CallMethodNoArgs(obj, name_dlpack_device);
    if (device == NULL)
        return not_dlpack(obj, name_dlpack_device);
    int device_id;
    bool accessible;
    strided_device said;
    PyObject *stream = NULL;
    int rc = dlpack_consumer(device, stream_ptr, &device_id, &accessible, &said, &stream);
    Py_DECREF(device);
    if (rc < 0) {
        Py_XDECREF(stream);
        return NULL;
    }
    PyObject *capsule = call_dlpack(obj, stream);
    Py_DECREF(stream);
    if (capsule == NULL)
        return not_dlpack(obj, name_dlpack);

    bool versioned;
    const char *used;
    if (PyCapsule_IsValid(capsule, STRIDED_DLPACK_CAPSULE_VERSIONED)) {
        versioned = true;
        used = STRIDED_DLPACK_CAPSULE_USED_VERSIONED;
    } else if (PyCapsule_IsValid(capsule, STRIDED_DLPACK_CAPSULE)) {
        versioned = false;
        used = STRIDED_DLPACK_CAPSULE_USED;
    } else {
        PyErr_Format(PyExc_AssertionError,
                     "__dlpack__() returned %.200s, not an unconsumed \"dltensor\" or "
                     "\"dltensor_versioned\" capsule",
                     Py_TYPE(capsule)->tp_name);
        Py_DECREF(capsule);
        return NULL;
    }
    void *managed = PyCapsule_GetPointer(capsule, versioned ? STRIDED_DLPACK_CAPSULE_VERSIONED
                                                            : STRIDED_DLPACK_CAPSULE);
    /* From here on the tensor belongs to libstrided, also when the import
     * fails: mark the capsule consumed and take away its destructor, so
     * that nothing but the library calls the deleter. */
    if (managed == NULL || PyCapsule_SetName(capsule, used) < 0 ||
        PyCapsule_SetDestructor(capsule, NULL) < 0) {
        Py_DECREF(capsule);
        return NULL;
    }
    Py_DECREF(capsule);
    strided_view v;
    strided_status status = strided_view_import_dlpack(managed, versioned, &v);
    if (status != STRIDED_OK)
        return raise_import(status);
    /* The tensor must be where __dlpack_device__() said (robustness.md B8
     * row 10): the view reports the one and exports the other. The ids of
     * CUDA host and managed memory name no device, so only CUDA's count. */
    if (v.device.device_type != said.device_type ||
        (said.device_type == STRIDED_DEVICE_CUDA && v.device.device_id != said.device_id)) {
        /* Release first: the producer's deleter may run Python code, which
         * must not find an exception pending. */
        strided_py_release_buffer(v.buffer);
        PyErr_Format(PyExc_BufferError,
                     "__dlpack_device__() returned (%d, %d) but the tensor's "
                     "dl_tensor.device is (%d, %d)",
                     (int)said.device_type, (int)said.device_id, (int)v.device.device_type,
                     (int)v.device.device_id);
        return NULL;
    }
    ViewObject *self = view_new(&v, obj, NULL, NULL, NULL, device_id, accessible);
    /* A strided view's tensor holds its C buffer: chain the holds, so that
     * a cycle through both memories can be collected (hold.c). */
    PyObject *inner = Py_IS_TYPE(obj, &ViewType) ? ((ViewObject *)obj)->hold : NULL;
    if (self == NULL || inner == NULL)
        return (PyObject *)self;
    return joined_new(self, strided_py_hold_new_chained(self->view.buffer, inner));
}

/* ---- Array interfaces -------------------------------------------------- */

/* What an array interface dict (NumPy's or CUDA's, v3) describes. */
typedef struct {
    void *ptr;             /* element (0,...,0) */
    bool readonly;
    PyObject *dtype;       /* numpy dtype of typestr; new reference */
    bool has_dl;           /* dl is set: the dtype has a DLPack equivalent */
    strided_dtype dl;
    strided_layout layout; /* shape, byte strides / itemsize */
} ArrayDesc;

/* The interface dicts' keys, interned once (PyDict_GetItemString would
 * make and hash a new string each time). */
enum { K_VERSION, K_MASK, K_DATA, K_SHAPE, K_STRIDES, K_TYPESTR, K_STREAM, K_COUNT };
static const char *const key_names[K_COUNT] = {"version", "mask", "data", "shape",
                                                "strides", "typestr", "stream"};
static PyObject *keys[K_COUNT];

static int init_keys(void)
{
    for (int k = 0; k < K_COUNT; k++)
        if ((keys[k] = PyUnicode_InternFromString(key_names[k])) == NULL)
            return -1;
    return 0;
}

/* "attr['key']" of either interface, for messages; K_COUNT is data[0]. */
#define KEY_LABELS(attr)                                                          \
    {attr "['version']", attr "['mask']",    attr "['data']",   attr "['shape']", \
     attr "['strides']", attr "['typestr']", attr "['stream']", attr "['data'][0]"}
static const char *const key_labels[2][K_COUNT + 1] = {KEY_LABELS("__array_interface__"),
                                                       KEY_LABELS("__cuda_array_interface__")};
#undef KEY_LABELS

static const char *key_label(const char *attr, int key)
{
    return key_labels[strcmp(attr, "__cuda_array_interface__") == 0][key];
}

/* d[key] (borrowed), or NULL: with ValueError naming the interface attr
 * when required, else without an exception when absent. */
static PyObject *dict_get(PyObject *d, const char *attr, int key, bool required)
{
    PyObject *v = PyDict_GetItemWithError(d, keys[key]);
    if (v == NULL && required && !PyErr_Occurred())
        PyErr_Format(PyExc_ValueError, "%s is missing the required key '%s'", attr,
                     key_names[key]);
    return v;
}

static int dict_item(PyObject *dict, const char *attr, int key, PyObject **out)
{
    *out = dict_get(dict, attr, key, true);
    return *out == NULL ? -1 : 0;
}

/* The ints of a tuple or list named what. */
static int int64_sequence(PyObject *obj, const char *what, int64_t *out, int *out_n)
{
    if (!PyTuple_Check(obj) && !PyList_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s must be a tuple of ints, got %.200s", what,
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(obj);
    if (n > STRIDED_MAX_NDIM) {
        PyErr_Format(PyExc_ValueError, "%s has %zd elements; at most %d are supported",
                     what, n, STRIDED_MAX_NDIM);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (strided_py_as_int64(PySequence_Fast_GET_ITEM(obj, i), what, (int)i, &out[i]) < 0)
            return -1;
    *out_n = (int)n;
    return 0;
}

/* obj.<attr> as a dict of version 3 or later without a mask (the checks
 * cuda.core makes first, with its messages). New reference. */
static PyObject *interface_dict(PyObject *obj, const char *attr, const char *name)
{
    PyObject *d = PyObject_GetAttrString(obj, attr), *item;
    if (d == NULL) {
        bool cai = strcmp(attr, "__cuda_array_interface__") == 0;
        strided_py_retype_attribute_error(
            "StridedMemoryView.%s() expects an object with %s, got %.200s",
            cai ? "from_cuda_array_interface" : "from_array_interface", attr,
            Py_TYPE(obj)->tp_name);
        return NULL;
    }
    if (!PyDict_Check(d)) {
        PyErr_Format(PyExc_TypeError, "%s must be a dict, got %.200s", attr,
                     Py_TYPE(d)->tp_name);
        goto fail;
    }
    int64_t version;
    if (dict_item(d, attr, K_VERSION, &item) < 0 ||
        strided_py_as_int64(item, key_label(attr, K_VERSION), -1, &version) < 0)
        goto fail;
    if (version < 3) {
        PyErr_Format(PyExc_BufferError, "only %s v3 or above is supported", name);
        goto fail;
    }
    item = dict_get(d, attr, K_MASK, false);
    if (item == NULL && PyErr_Occurred())
        goto fail;
    if (item != NULL && item != Py_None) {
        PyErr_SetString(PyExc_BufferError, "mask is not supported");
        goto fail;
    }
    return d;
fail:
    Py_DECREF(d);
    return NULL;
}

/* Read data, typestr, shape and strides (in bytes) of an interface dict.
 * On success out->dtype is a new reference. */
static int array_desc(PyObject *d, const char *attr, ArrayDesc *out)
{
    PyObject *item;
    int readonly;
    if (dict_item(d, attr, K_DATA, &item) < 0)
        return -1;
    if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 2) {
        PyErr_Format(PyExc_TypeError, "%s['data'] must be a (ptr, readonly) tuple", attr);
        return -1;
    }
    if (strided_py_as_address(PyTuple_GET_ITEM(item, 0), key_label(attr, K_COUNT),
                              &out->ptr) < 0 ||
        (readonly = PyObject_IsTrue(PyTuple_GET_ITEM(item, 1))) < 0)
        return -1;
    out->readonly = readonly;
    int64_t shape[STRIDED_MAX_NDIM], strides[STRIDED_MAX_NDIM];
    int ndim, nstrides = 0;
    if (dict_item(d, attr, K_SHAPE, &item) < 0 ||
        int64_sequence(item, key_label(attr, K_SHAPE), shape, &ndim) < 0)
        return -1;
    item = dict_get(d, attr, K_STRIDES, false);
    if (item == NULL && PyErr_Occurred())
        return -1;
    bool has_strides = item != NULL && item != Py_None;
    if (has_strides && int64_sequence(item, key_label(attr, K_STRIDES), strides, &nstrides) < 0)
        return -1;
    if (has_strides && nstrides != ndim) {
        PyErr_Format(PyExc_ValueError, "%s has %d strides for %d dimensions", attr,
                     nstrides, ndim);
        return -1;
    }
    if (dict_item(d, attr, K_TYPESTR, &item) < 0)
        return -1;
    if (!PyUnicode_Check(item)) {
        PyErr_Format(PyExc_TypeError, "%s must be a str, got %.200s",
                     key_label(attr, K_TYPESTR), Py_TYPE(item)->tp_name);
        return -1;
    }
    PyObject *dtype = strided_py_interface_dtype(item, d);
    if (dtype == NULL)
        return -1;
    long itemsize = 0;
    int found = strided_py_dl_dtype_of(dtype, &out->dl);
    if (found < 0 || strided_py_dtype_int_attr(dtype, "itemsize", &itemsize) < 0)
        goto fail;
    /* Byte strides to element strides, with libstrided's checks ("strides
     * must be divisible by itemsize"). */
    strided_status status = strided_layout_init_byte_strides(
        &out->layout, ndim, shape, has_strides ? strides : NULL, (int)itemsize);
    if (status != STRIDED_OK) {
        strided_py_raise(status);
        goto fail;
    }
    out->has_dl = found == 1;
    out->dtype = dtype;
    return 0;
fail:
    Py_DECREF(dtype);
    return -1;
}

/* wrap_exporter of what an interface dict described. */
static int wrap_desc(const ArrayDesc *d, PyObject *obj, const strided_device *device,
                     strided_view *out)
{
    return wrap_exporter(obj, d->ptr, &d->layout, d->has_dl ? &d->dl : NULL, d->readonly,
                         device, out);
}

static PyObject *view_from_array_interface(PyObject *cls, PyObject *obj)
{
    (void)cls;
    PyObject *ai = interface_dict(obj, "__array_interface__", "NumPy Array Interface");
    if (ai == NULL)
        return NULL;
    ArrayDesc d;
    int rc = array_desc(ai, "__array_interface__", &d);
    Py_DECREF(ai);
    if (rc < 0)
        return NULL;
    /* Host memory, not bound to a device (spec D2); no driver call. */
    strided_device cpu = {STRIDED_DEVICE_CPU, 0};
    strided_view v;
    PyObject *result = NULL;
    if (wrap_desc(&d, obj, &cpu, &v) == 0)
        result = exporter_view_new(&v, obj, d.dtype, -1, false);
    Py_DECREF(d.dtype);
    return result;
}

/* A stream_ptr argument of the import functions: -1 (*sync false: order
 * nothing) or a CUstream handle (0 is the legacy default stream). */
static int consumer_stream(PyObject *stream_ptr, void **out, bool *sync)
{
    PyObject *n = strided_py_index(stream_ptr, "stream_ptr", -1);
    if (n == NULL)
        return -1;
    int overflow = 0;
    long long value = PyLong_AsLongLongAndOverflow(n, &overflow);
    unsigned long long handle = 0;
    if (overflow > 0)
        handle = PyLong_AsUnsignedLongLong(n);
    Py_DECREF(n);
    if (PyErr_Occurred())
        return -1;
    if (overflow < 0 || (overflow == 0 && value < -1)) {
        PyErr_Format(PyExc_ValueError,
                     "stream_ptr must be -1 (no synchronisation) or a CUDA stream "
                     "handle, got %R",
                     stream_ptr);
        return -1;
    }
    *sync = overflow > 0 || value != -1;
    *out = (void *)(uintptr_t)(overflow > 0 ? handle : (unsigned long long)value);
    return 0;
}

static const char *const from_cai_names[] = {"obj", "stream_ptr", NULL};

/* spec §4.4. The device comes from the pointer (the current device for a
 * NULL pointer, i.e. an empty array); the consumer stream waits, on the
 * device, for the stream the producer named. */
static PyObject *view_from_cai(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames)
{
    (void)cls;
    PyObject *a[2];
    if (strided_py_bind_args("from_cuda_array_interface", args, nargs, kwnames,
                             from_cai_names, 1, a) < 0)
        return NULL;
    PyObject *obj = a[0], *stream_ptr = a[1] ? a[1] : Py_None;
    PyObject *cai = interface_dict(obj, "__cuda_array_interface__", "CUDA Array Interface");
    if (cai == NULL)
        return NULL;
    ArrayDesc d = {0};
    strided_view v = {0};
    PyObject *result = NULL, *producer_obj;
    void *consumer = NULL, *producer = NULL;
    bool sync = false;
    if (stream_ptr == Py_None) {
        PyErr_SetString(PyExc_BufferError, "stream=None is ambiguous with view()");
        goto done;
    }
    if (consumer_stream(stream_ptr, &consumer, &sync) < 0)
        goto done;
    producer_obj = dict_get(cai, "__cuda_array_interface__", K_STREAM, false);
    if (producer_obj == NULL && PyErr_Occurred())
        goto done;
    if (sync && producer_obj != NULL && producer_obj != Py_None) {
        int64_t p;
        if (strided_py_as_int64(producer_obj, key_label("__cuda_array_interface__", K_STREAM),
                                -1, &p) < 0)
            goto done;
        /* CAI v3: 0 is disallowed (ambiguous); 1 and 2 are the legacy and
         * per-thread default streams. */
        if (p <= 0) {
            PyErr_Format(PyExc_AssertionError,
                         "__cuda_array_interface__['stream'] must be a positive "
                         "stream handle, got %lld",
                         (long long)p);
            goto done;
        }
        producer = (void *)(uintptr_t)p;
    }
    if (array_desc(cai, "__cuda_array_interface__", &d) < 0)
        goto done;

    strided_status status;
    int device_id = 0;
    strided_device device = {STRIDED_DEVICE_CUDA, 0};
    if (d.ptr == NULL) {
        /* No memory to ask about: the current device (cuda.core's rule). */
        if ((status = strided_current_device(&device_id)) != STRIDED_OK) {
            strided_py_raise(status);
            goto done;
        }
        device.device_id = device_id;
        if (wrap_desc(&d, obj, &device, &v) < 0)
            goto done;
    } else {
        if (wrap_desc(&d, obj, NULL, &v) < 0)
            goto done;
        strided_memory_info info = strided_buffer_memory_info(v.buffer);
        if (!info.device_accessible) {
            PyErr_Format(PyExc_BufferError,
                         "__cuda_array_interface__['data'] %p is not memory a CUDA "
                         "device can access",
                         d.ptr);
            goto done;
        }
        device_id = info.device_id;
        if (device_id < 0 && (status = strided_current_device(&device_id)) != STRIDED_OK) {
            strided_py_raise(status);
            goto done;
        }
    }
    if (producer != NULL &&
        (status = strided_stream_wait(consumer, producer, device_id)) != STRIDED_OK) {
        strided_py_raise(status);
        goto done;
    }
    result = exporter_view_new(&v, obj, d.dtype, device_id, true);
    v.buffer = NULL; /* view_new took it, or released it */
done:
    strided_py_release_buffer(v.buffer);
    Py_XDECREF(d.dtype);
    Py_DECREF(cai);
    return result;
}

/* ---- Any interface, and the deprecated constructor ------------------- */

/* 1 when obj has the attribute, 0 when it raises AttributeError (a
 * property may say "not for this object" so), -1 for any other error. */
static int has_attr(PyObject *obj, PyObject *name)
{
    PyObject *value = PyObject_GetAttr(obj, name);
    if (value != NULL) {
        Py_DECREF(value);
        return 1;
    }
    if (!PyErr_ExceptionMatches(PyExc_AttributeError))
        return -1;
    PyErr_Clear();
    return 0;
}

/* 1 when obj speaks DLPack (both methods), 0 when it has a CUDA Array
 * Interface instead; -1 with BufferError when it has neither. */
static int pick_protocol(PyObject *obj)
{
    int dlpack = has_attr(obj, name_dlpack);
    if (dlpack > 0)
        dlpack = has_attr(obj, name_dlpack_device);
    if (dlpack != 0)
        return dlpack;
    int cai = has_attr(obj, name_cai);
    if (cai > 0)
        return 0;
    if (cai == 0)
        PyErr_SetString(PyExc_BufferError,
                        "the input object does not support any data exchange protocol");
    return -1;
}

static const char *const from_any_names[] = {"obj", "stream_ptr", NULL};

static PyObject *view_from_any(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames)
{
    PyObject *a[2];
    if (strided_py_bind_args("from_any_interface", args, nargs, kwnames, from_any_names, 1,
                             a) < 0)
        return NULL;
    PyObject *call[2] = {a[0], a[1] ? a[1] : Py_None};
    switch (pick_protocol(a[0])) {
    case 1:
        return view_from_dlpack(cls, call, 2, NULL);
    case 0:
        return view_from_cai(cls, call, 2, NULL);
    default:
        return NULL;
    }
}

/* StridedMemoryView(obj=None, stream_ptr=None): deprecated (spec §4.2).
 * No object gives a view of no elements at address 0. */
static PyObject *view_tp_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"obj", "stream_ptr", NULL};
    PyObject *obj = Py_None, *stream_ptr = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OO:StridedMemoryView", names, &obj,
                                     &stream_ptr))
        return NULL;
    if (PyErr_WarnFormat(PyExc_DeprecationWarning, 1,
                         "Constructing a StridedMemoryView directly from a %.200s is "
                         "deprecated; use StridedMemoryView.from_any_interface(obj, "
                         "stream_ptr) (or from_dlpack, from_cuda_array_interface, "
                         "from_array_interface) instead",
                         Py_TYPE(obj)->tp_name) < 0)
        return NULL;
    if (obj == Py_None) {
        strided_layout empty;
        strided_view v;
        strided_device cpu = {STRIDED_DEVICE_CPU, 0};
        strided_status status = strided_layout_init(&empty, 1, (int64_t[]){0}, NULL, 1);
        if (status == STRIDED_OK)
            status = strided_view_wrap(NULL, &empty, NULL, false, &cpu, NULL, NULL, &v);
        if (status != STRIDED_OK)
            return strided_py_raise(status);
        return (PyObject *)view_new(&v, NULL, NULL, NULL, NULL, -1, false);
    }
    PyObject *call[2] = {obj, stream_ptr};
    switch (pick_protocol(obj)) {
    case 1:
        return view_from_dlpack((PyObject *)type, call, 2, NULL);
    case 0:
        return view_from_cai((PyObject *)type, call, 2, NULL);
    default:
        return NULL;
    }
}

/* ---- view() ------------------------------------------------------------- */

/* The Buffer view() works on (borrowed): the exporting Buffer, or a
 * memoised Buffer over the view's C buffer (for an import: the producer's
 * footprint) whose owner is the exporting object. */
static PyObject *view_base(ViewObject *self)
{
    if (self->base == NULL)
        self->base = strided_py_buffer_new_held(strided_buffer_retain(self->view.buffer),
                                                NULL, self->exporting_obj, self->hold);
    return self->base;
}

static const char *const view_names[] = {"layout", "dtype", NULL};

static PyObject *view_view(ViewObject *self, PyObject *const *args, Py_ssize_t nargs,
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
    bool has_dl = false;
    strided_dtype dl;
    if (dtype_arg != NULL) {
        if (strided_py_as_dtype(dtype_arg, &dtype, &has_dl, &dl) < 0)
            return NULL;
    } else {
        /* The current dtype, whose itemsize must then fit the layout. */
        has_dl = self->view.has_dtype;
        dl = self->view.dtype;
        dtype = Py_XNewRef(self->dtype);
    }
    if (dtype != NULL && !has_dl && strided_py_check_np_itemsize(dtype, layout.itemsize) < 0)
        goto fail;
    PyObject *base = view_base(self);
    if (base == NULL)
        goto fail;
    strided_view v;
    strided_status status = strided_view_view(&self->view, &layout, has_dl ? &dl : NULL, &v);
    if (status != STRIDED_OK) {
        strided_py_raise(status);
        goto fail;
    }
    strided_memory_info info = strided_buffer_memory_info(v.buffer);
    PyObject *result = (PyObject *)joined(view_new(&v, base, layout_obj, base, dtype,
                                                   info.device_id, info.device_accessible),
                                          self->hold); /* the same C buffer */
    Py_XDECREF(dtype);
    return result;

fail:
    Py_XDECREF(dtype);
    return NULL;
}

/* ---- Copies ------------------------------------------------------------ */

static const char *const copy_names[] = {"other", "stream", "allocator", "blocking", NULL};

/* The resources of copy_from's allocator (None, a dict with the keys
 * "host" and "device", or an object with those attributes, such as
 * CopyAllocatorOptions): new references in t, or -1 with an exception. */
typedef struct {
    strided_copy_temporaries t;
    bool host_calls_python, device_calls_python;
} copy_allocator;

static int allocator_side(PyObject *allocator, const char *key, PyObject *stream,
                          strided_memory_resource **out, bool *calls_python)
{
    PyObject *mr;
    if (PyDict_Check(allocator)) {
        mr = PyDict_GetItemString(allocator, key); /* borrowed */
        Py_XINCREF(mr);
    } else {
        mr = PyObject_GetAttrString(allocator, key);
        if (mr == NULL) {
            if (!PyErr_ExceptionMatches(PyExc_AttributeError))
                return -1;
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError,
                         "allocator must be None, a dict or a CopyAllocatorOptions, "
                         "got %.200s",
                         Py_TYPE(allocator)->tp_name);
            return -1;
        }
    }
    int rc = 0;
    bool host = strcmp(key, "host") == 0;
    const char *what = PyDict_Check(allocator)
                           ? (host ? "allocator['host']" : "allocator['device']")
                           : (host ? "allocator.host" : "allocator.device");
    if (mr != NULL && mr != Py_None)
        rc = strided_py_allocating_resource_of(mr, what, stream, out, calls_python);
    Py_XDECREF(mr);
    return rc;
}

static int copy_allocator_of(PyObject *allocator, PyObject *stream, copy_allocator *out)
{
    *out = (copy_allocator){{NULL, NULL}, false, false};
    if (allocator == NULL || allocator == Py_None)
        return 0;
    if (PyDict_Check(allocator)) {
        PyObject *key;
        Py_ssize_t pos = 0;
        while (PyDict_Next(allocator, &pos, &key, NULL)) {
            if (!PyUnicode_Check(key) || (PyUnicode_CompareWithASCIIString(key, "host") != 0 &&
                                          PyUnicode_CompareWithASCIIString(key, "device") != 0)) {
                PyErr_Format(PyExc_ValueError,
                             "allocator: unknown key %R (the keys are 'host' and 'device')",
                             key);
                return -1;
            }
        }
    }
    if (allocator_side(allocator, "host", stream, &out->t.host, &out->host_calls_python) < 0)
        return -1;
    if (allocator_side(allocator, "device", stream, &out->t.device, &out->device_calls_python) <
        0) {
        strided_memory_resource_release(out->t.host);
        return -1;
    }
    return 0;
}

/* Release the resources; when the copy failed in a Python allocate(),
 * raise what it raised instead of the library's message. */
static void copy_allocator_done(copy_allocator *a, bool failed)
{
    PyObject *exc = NULL;
    if (a->host_calls_python)
        exc = strided_py_allocating_error(a->t.host);
    if (a->device_calls_python) {
        PyObject *e = strided_py_allocating_error(a->t.device);
        if (exc == NULL)
            exc = e;
        else
            Py_XDECREF(e);
    }
    if (failed && exc != NULL) {
        PyErr_Clear();
        PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    }
    Py_XDECREF(exc);
    strided_memory_resource_release(a->t.host);
    strided_memory_resource_release(a->t.device);
}

/* dst.copy_from(src): the arguments of copy_from and copy_to, checked, and
 * the copy run with the GIL released. */
static PyObject *copy_views(ViewObject *dst, ViewObject *src,
                            PyObject *stream_obj, PyObject *allocator, PyObject *blocking)
{
    unsigned flags = STRIDED_COPY_DEFAULT;
    void *stream = NULL;
    if (stream_obj == NULL || stream_obj == Py_None)
        flags |= STRIDED_COPY_NO_STREAM;
    else if (strided_py_as_stream(stream_obj, &stream) < 0)
        return NULL;
    if (blocking != NULL && blocking != Py_None) {
        int b = PyObject_IsTrue(blocking);
        if (b < 0)
            return NULL;
        flags |= b ? STRIDED_COPY_BLOCKING : STRIDED_COPY_NONBLOCKING;
    }
    /* What libstrided cannot see of a dtype (byte order, void types) lives
     * in the numpy dtypes given or read: compare those as numpy does. */
    if (dst->dtype != NULL || src->dtype != NULL) {
        PyObject *dd = view_dtype(dst), *sd = dd ? view_dtype(src) : NULL;
        if (PyErr_Occurred())
            return NULL;
        int same = dd && sd ? PyObject_RichCompareBool(dd, sd, Py_EQ) : 1;
        if (same < 0)
            return NULL;
        if (!same) {
            PyErr_Format(PyExc_ValueError,
                         "The destination and source dtypes must match. Got dst "
                         "dtype:%S and src dtype:%S",
                         dd, sd);
            return NULL;
        }
    }
    copy_allocator alloc;
    if (copy_allocator_of(allocator, stream_obj ? stream_obj : Py_None, &alloc) < 0)
        return NULL;
    strided_status status;
    Py_BEGIN_ALLOW_THREADS
    status = strided_view_copy_ex(&dst->view, &src->view, stream, flags, &alloc.t);
    Py_END_ALLOW_THREADS
    if (status != STRIDED_OK)
        strided_py_raise(status);
    copy_allocator_done(&alloc, status != STRIDED_OK);
    if (status != STRIDED_OK)
        return NULL;
    Py_RETURN_NONE;
}

static ViewObject *view_arg(const char *name, PyObject *obj)
{
    if (!PyObject_TypeCheck(obj, &ViewType)) {
        PyErr_Format(PyExc_TypeError, "%s: other must be a StridedMemoryView, got %.200s",
                     name, Py_TYPE(obj)->tp_name);
        return NULL;
    }
    return (ViewObject *)obj;
}

static PyObject *view_copy_from(ViewObject *self, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames)
{
    PyObject *a[4];
    if (strided_py_bind_args("copy_from", args, nargs, kwnames, copy_names, 1, a) < 0)
        return NULL;
    ViewObject *src = view_arg("copy_from", a[0]);
    return src ? copy_views(self, src, a[1], a[2], a[3]) : NULL;
}

static PyObject *view_copy_to(ViewObject *self, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames)
{
    PyObject *a[4];
    if (strided_py_bind_args("copy_to", args, nargs, kwnames, copy_names, 1, a) < 0)
        return NULL;
    ViewObject *dst = view_arg("copy_to", a[0]);
    return dst ? copy_views(dst, self, a[1], a[2], a[3]) : NULL;
}

static PyObject *int64_tuple(int n, const int64_t *v, int64_t scale);

/* strided.copy_plan(dst, src): the plan of a copy between two layouts (or
 * views), as a dict, so that tests and users can see which kernel a copy
 * takes. */
static int layout_of(PyObject *obj, strided_layout *out)
{
    if (PyObject_TypeCheck(obj, &ViewType)) {
        *out = ((ViewObject *)obj)->view.layout;
        return 0;
    }
    return strided_py_layout_from(obj, out);
}

static PyObject *module_copy_plan(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 2)
        return PyErr_Format(PyExc_TypeError, "copy_plan() takes 2 arguments (dst, src), got %zd",
                            nargs);
    strided_layout d, s;
    if (layout_of(args[0], &d) < 0 || layout_of(args[1], &s) < 0)
        return NULL;
    strided_copy_plan p;
    strided_status status = strided_copy_plan_make(&d, &s, &p);
    if (status != STRIDED_OK)
        return strided_py_raise(status);
    PyObject *shape = int64_tuple(p.ndim, p.shape, 1);
    PyObject *ds = int64_tuple(p.ndim, p.dst_strides, 1);
    PyObject *ss = int64_tuple(p.ndim, p.src_strides, 1);
    PyObject *result = NULL;
    if (shape != NULL && ds != NULL && ss != NULL)
        result = Py_BuildValue("{s:s,s:i,s:i,s:L,s:O,s:O,s:O,s:L,s:L,s:i}", "kernel",
                               strided_copy_kernel_name(p.kernel), "ndim", p.ndim,
                               "itemsize", p.itemsize, "volume", (long long)p.volume,
                               "shape", shape, "dst_strides", ds, "src_strides", ss,
                               "dst_offset", (long long)p.dst_offset, "src_offset",
                               (long long)p.src_offset, "src_unit_axis", p.src_unit_axis);
    Py_XDECREF(shape);
    Py_XDECREF(ds);
    Py_XDECREF(ss);
    return result;
}

static PyMethodDef module_functions[] = {
    {"copy_plan", (PyCFunction)(void (*)(void))module_copy_plan, METH_FASTCALL,
     "copy_plan(dst, src)\n--\n\nThe plan of a copy of src into dst (StridedLayouts or "
     "StridedMemoryViews): a dict with the kernel's name ('nothing', 'contiguous', "
     "'rows', 'transpose', 'broadcast', 'gather'), the normalised shape and strides in "
     "elements, the offsets and the itemsize."},
    {NULL, NULL, 0, NULL},
};

/* ---- DLPack export ------------------------------------------------------ */

static void export_capsule_destructor(PyObject *capsule)
{
    /* A consumer renames the capsule when it takes the tensor. */
    if (PyCapsule_IsValid(capsule, STRIDED_DLPACK_CAPSULE_VERSIONED)) {
        strided_dl_managed_tensor_versioned *m =
            PyCapsule_GetPointer(capsule, STRIDED_DLPACK_CAPSULE_VERSIONED);
        if (m->deleter != NULL)
            m->deleter(m);
    } else if (PyCapsule_IsValid(capsule, STRIDED_DLPACK_CAPSULE)) {
        strided_dl_managed_tensor *m = PyCapsule_GetPointer(capsule, STRIDED_DLPACK_CAPSULE);
        if (m->deleter != NULL)
            m->deleter(m);
    }
}

/* The dtype checks of spec §6.1 that only the numpy dtype can answer. */
static int check_export_dtype(ViewObject *self)
{
    PyObject *dtype = view_dtype(self);
    if (dtype == NULL)
        return PyErr_Occurred() ? -1 : 0;
    PyObject *fields = PyObject_GetAttrString(dtype, "fields");
    if (fields == NULL)
        return -1;
    bool structured = fields != Py_None;
    Py_DECREF(fields);
    if (structured) {
        PyErr_SetString(PyExc_BufferError,
                        "Structured dtypes are not supported for DLPack export");
        return -1;
    }
    PyObject *native = PyObject_GetAttrString(dtype, "isnative");
    if (native == NULL)
        return -1;
    int is_native = PyObject_IsTrue(native);
    Py_DECREF(native);
    if (is_native < 0)
        return -1;
    if (!is_native) {
        PyErr_SetString(PyExc_BufferError,
                        "Non-native-endian dtypes are not supported for DLPack export");
        return -1;
    }
    if (!self->view.has_dtype) {
        PyErr_Format(PyExc_BufferError, "Unsupported dtype for DLPack export: %S", dtype);
        return -1;
    }
    return 0;
}

static const char *const dlpack_names[] = {"stream", "max_version", "dl_device", "copy",
                                           NULL};

static PyObject *view_dunder_dlpack(ViewObject *self, PyObject *const *args,
                                    Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *a[4];
    if (nargs > 0)
        return PyErr_Format(PyExc_TypeError,
                            "__dlpack__() takes no positional arguments (%zd given)",
                            nargs);
    if (strided_py_bind_args("__dlpack__", args, nargs, kwnames, dlpack_names, 0, a) < 0)
        return NULL;
    /* The stream is checked by DLPack's rules (libstrided decides), then
     * has nothing to order: a view has no work of its own in flight. */
    if (a[0] != NULL && a[0] != Py_None) {
        if (PyBool_Check(a[0]) || !PyLong_Check(a[0])) {
            PyErr_Format(PyExc_BufferError, "__dlpack__: stream must be an int or None, got %.200s",
                         Py_TYPE(a[0])->tp_name);
            return NULL;
        }
        int overflow = 0;
        long long stream = PyLong_AsLongLongAndOverflow(a[0], &overflow);
        if (stream == -1 && PyErr_Occurred())
            return NULL;
        if (overflow != 0) {
            PyErr_Format(PyExc_BufferError, "__dlpack__: stream=%R is not a stream handle", a[0]);
            return NULL;
        }
        if (strided_view_check_dlpack_stream(&self->view, true, stream) != STRIDED_OK) {
            PyErr_SetString(PyExc_BufferError, strided_last_error());
            return NULL;
        }
    }
    if (a[2] != NULL && a[2] != Py_None) {
        PyErr_SetString(PyExc_BufferError, "Sorry, not supported: dl_device other than None");
        return NULL;
    }
    if (a[3] != NULL && a[3] != Py_None) {
        int copy = PyObject_IsTrue(a[3]);
        if (copy < 0)
            return NULL;
        if (copy) {
            PyErr_SetString(PyExc_BufferError, "Sorry, not supported: copy=True");
            return NULL;
        }
    }
    bool versioned = false;
    PyObject *mv = a[1];
    if (mv != NULL && mv != Py_None) {
        long major = -1;
        bool ok = PyTuple_Check(mv) && PyTuple_GET_SIZE(mv) == 2 &&
                  PyLong_Check(PyTuple_GET_ITEM(mv, 0)) && PyLong_Check(PyTuple_GET_ITEM(mv, 1));
        if (ok) {
            int overflow;
            major = PyLong_AsLongAndOverflow(PyTuple_GET_ITEM(mv, 0), &overflow);
            if (overflow > 0)
                major = LONG_MAX;
            else if (overflow < 0)
                major = LONG_MIN;
        }
        if (!ok) {
            PyErr_Format(PyExc_BufferError, "Expected max_version tuple[int, int], got %R", mv);
            return NULL;
        }
        versioned = major >= 1;
    }
    if (check_export_dtype(self) < 0)
        return NULL;
    strided_status status;
    PyObject *capsule;
    if (versioned) {
        strided_dl_managed_tensor_versioned *m = NULL;
        status = strided_view_export_dlpack(&self->view, &m);
        if (status != STRIDED_OK)
            return raise_import(status);
        capsule = PyCapsule_New(m, STRIDED_DLPACK_CAPSULE_VERSIONED, export_capsule_destructor);
        if (capsule == NULL)
            m->deleter(m);
    } else {
        strided_dl_managed_tensor *m = NULL;
        status = strided_view_export_dlpack_legacy(&self->view, &m);
        if (status != STRIDED_OK)
            return raise_import(status);
        capsule = PyCapsule_New(m, STRIDED_DLPACK_CAPSULE, export_capsule_destructor);
        if (capsule == NULL)
            m->deleter(m);
    }
    return capsule;
}

/* (device_type, device_id) of the exported tensor: the id is kept for CUDA
 * only, as the export does. */
static PyObject *view_dunder_dlpack_device(ViewObject *self, PyObject *unused)
{
    (void)unused;
    strided_device d = self->view.device;
    return Py_BuildValue("(ii)", (int)d.device_type,
                         d.device_type == STRIDED_DEVICE_CUDA ? (int)d.device_id : 0);
}

/* ---- Properties --------------------------------------------------------- */

static PyObject *int64_tuple(int n, const int64_t *v, int64_t scale)
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

static PyObject *get_ptr(ViewObject *self, void *closure)
{
    (void)closure;
    return PyLong_FromVoidPtr(strided_view_ptr(&self->view));
}

static PyObject *get_device_ptr(ViewObject *self, void *closure)
{
    (void)closure;
    return PyLong_FromSize_t(strided_view_device_ptr(&self->view));
}

static PyObject *get_shape(ViewObject *self, void *closure)
{
    (void)closure;
    return int64_tuple(self->view.layout.ndim, self->view.layout.shape, 1);
}

static PyObject *get_strides(ViewObject *self, void *closure)
{
    (void)closure;
    if (self->view.layout.implicit_strides)
        Py_RETURN_NONE;
    return int64_tuple(self->view.layout.ndim, self->view.layout.strides, 1);
}

static PyObject *get_size(ViewObject *self, void *closure)
{
    (void)closure;
    return PyLong_FromLongLong(strided_layout_volume(&self->view.layout));
}

static PyObject *get_dtype(ViewObject *self, void *closure)
{
    (void)closure;
    PyObject *dtype = view_dtype(self);
    if (dtype == NULL && PyErr_Occurred())
        return NULL;
    return Py_NewRef(dtype ? dtype : Py_None);
}

static PyObject *get_device_id(ViewObject *self, void *closure)
{
    (void)closure;
    return PyLong_FromLong(self->device_id);
}

static PyObject *get_is_device_accessible(ViewObject *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(self->device_accessible);
}

static PyObject *get_readonly(ViewObject *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(self->view.readonly);
}

static PyObject *get_exporting_obj(ViewObject *self, void *closure)
{
    (void)closure;
    return Py_NewRef(self->exporting_obj ? self->exporting_obj : Py_None);
}

static PyObject *get_layout(ViewObject *self, void *closure)
{
    (void)closure;
    if (self->layout == NULL)
        self->layout = strided_py_layout_new(&self->view.layout);
    return Py_XNewRef(self->layout);
}

static PyObject *get_buffer(ViewObject *self, void *closure)
{
    (void)closure;
    bool of_buffer = self->base != NULL && self->base == self->exporting_obj;
    return Py_NewRef(of_buffer ? self->base : Py_None);
}

/* The array interface dict (version 3) of the view with data address
 * data: typestr and descr of the dtype, shape, strides in bytes (None for C
 * order given without strides), and for the CUDA Array Interface a stream
 * key (None: the view has no pending work of its own). what names the
 * interface in errors. */
static PyObject *interface_of(ViewObject *self, unsigned long long data, bool cuda,
                              const char *what)
{
    PyObject *dtype = view_dtype(self);
    if (dtype == NULL) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_ValueError,
                         "%s needs a dtype; create the view with dtype specified.", what);
        return NULL;
    }
    const strided_layout *l = &self->view.layout;
    PyObject *strides;
    if (l->implicit_strides)
        strides = Py_NewRef(Py_None);
    else if ((strides = int64_tuple(l->ndim, l->strides, l->itemsize)) == NULL)
        return NULL;
    PyObject *shape = int64_tuple(l->ndim, l->shape, 1);
    PyObject *typestr = PyObject_GetAttrString(dtype, "str");
    PyObject *descr = PyObject_GetAttrString(dtype, "descr");
    PyObject *result = NULL;
    if (shape != NULL && typestr != NULL && descr != NULL)
        result = Py_BuildValue("{s:i,s:O,s:O,s:(NO),s:O,s:O}", "version", 3, "typestr",
                               typestr, "descr", descr, "data",
                               PyLong_FromUnsignedLongLong(data),
                               self->view.readonly ? Py_True : Py_False, "shape", shape,
                               "strides", strides);
    if (result != NULL && cuda && PyDict_SetItemString(result, "stream", Py_None) < 0)
        Py_CLEAR(result);
    Py_XDECREF(shape);
    Py_XDECREF(typestr);
    Py_XDECREF(descr);
    Py_DECREF(strides);
    return result;
}

static PyObject *get_array_interface(ViewObject *self, void *closure)
{
    (void)closure;
    if (!strided_buffer_memory_info(self->view.buffer).host_accessible) {
        PyErr_SetString(PyExc_AttributeError,
                        "__array_interface__ is only available for host-accessible "
                        "memory");
        return NULL;
    }
    return interface_of(self, (uintptr_t)strided_view_ptr(&self->view), false,
                        "__array_interface__");
}

/* The CUDA Array Interface (v3) for views a device can reach, with the
 * device address. */
static PyObject *get_cuda_array_interface(ViewObject *self, void *closure)
{
    (void)closure;
    uintptr_t dptr = strided_view_device_ptr(&self->view);
    if (!self->device_accessible || (dptr == 0 && strided_view_ptr(&self->view) != NULL)) {
        PyErr_SetString(PyExc_AttributeError,
                        "__cuda_array_interface__ is only available for memory a CUDA "
                        "device can access");
        return NULL;
    }
    return interface_of(self, dptr, true, "__cuda_array_interface__");
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

static PyObject *view_repr(ViewObject *self)
{
    PyObject *dtype = view_dtype(self);
    if (dtype == NULL && PyErr_Occurred())
        return NULL;
    PyObject *shape = get_shape(self, NULL), *strides = get_strides(self, NULL);
    PyObject *dtype_name = dtype ? type_name(dtype) : PyUnicode_FromString("None");
    PyObject *exporter = type_name(self->exporting_obj ? self->exporting_obj : Py_None);
    PyObject *result = NULL;
    if (shape != NULL && strides != NULL && dtype_name != NULL && exporter != NULL)
        result = PyUnicode_FromFormat(
            "StridedMemoryView(ptr=%llu,\n shape=%S,\n strides=%S,\n itemsize=%d,\n "
            "dtype=%U,\n device_id=%d,\n is_device_accessible=%s,\n readonly=%s,\n "
            "exporting_obj=%U)",
            (unsigned long long)(uintptr_t)strided_view_ptr(&self->view), shape, strides,
            (int)self->view.layout.itemsize, dtype_name, self->device_id,
            self->device_accessible ? "True" : "False",
            self->view.readonly ? "True" : "False", exporter);
    Py_XDECREF(shape);
    Py_XDECREF(strides);
    Py_XDECREF(dtype_name);
    Py_XDECREF(exporter);
    return result;
}

/* ---- Lifetime ----------------------------------------------------------- */

static int view_traverse(ViewObject *self, visitproc visit, void *arg)
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
static int view_clear(ViewObject *self)
{
    Py_CLEAR(self->exporting_obj);
    Py_CLEAR(self->layout);
    Py_CLEAR(self->base);
    Py_CLEAR(self->dtype);
    return 0;
}

static void view_dealloc(ViewObject *self)
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
    {"__array_interface__", (getter)get_array_interface, NULL,
     "NumPy's array interface (version 3), for host-accessible views.", NULL},
    {"__cuda_array_interface__", (getter)get_cuda_array_interface, NULL,
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
    {"from_dlpack", (PyCFunction)(void (*)(void))view_from_dlpack, KW | METH_CLASS,
     "from_dlpack(obj, stream_ptr=None)\n--\n\n"
     "A view of a DLPack producer. For CPU and CUDA tensors stream_ptr must be given "
     "(-1: no synchronisation)."},
    {"from_array_interface", (PyCFunction)view_from_array_interface, METH_O | METH_CLASS,
     "from_array_interface(obj)\n--\n\nA view of an object with NumPy's "
     "__array_interface__ (version 3)."},
    {"from_cuda_array_interface", (PyCFunction)(void (*)(void))view_from_cai,
     KW | METH_CLASS,
     "from_cuda_array_interface(obj, stream_ptr=None)\n--\n\n"
     "A view of an object with a __cuda_array_interface__ (version 3). stream_ptr is "
     "the consumer stream (-1: no synchronisation); it waits on the device for the "
     "producer's stream."},
    {"from_any_interface", (PyCFunction)(void (*)(void))view_from_any, KW | METH_CLASS,
     "from_any_interface(obj, stream_ptr=None)\n--\n\n"
     "from_dlpack when obj speaks DLPack, else from_cuda_array_interface."},
    {"view", (PyCFunction)(void (*)(void))view_view, KW,
     "view(layout=None, dtype=None)\n--\n\n"
     "Another view of the same memory; both None returns self."},
    {"copy_from", (PyCFunction)(void (*)(void))view_copy_from, KW,
     "copy_from(other, stream=None, allocator=None, blocking=None)\n--\n\n"
     "Copy the elements of view other into this view (other is broadcast to this "
     "shape; same dtype; no conversion). Between host memory the copy runs on the "
     "host and is complete on return; with device memory it is queued on stream "
     "(required), blocking by default only between host and device. allocator: "
     "where temporaries come from: None (defaults), a CopyAllocatorOptions or a "
     "dict with the keys 'host' and 'device' naming memory resources; each "
     "temporary is one allocate(nbytes, stream=stream) call."},
    {"copy_to", (PyCFunction)(void (*)(void))view_copy_to, KW,
     "copy_to(other, stream=None, allocator=None, blocking=None)\n--\n\n"
     "other.copy_from(self, ...)."},
    {"__dlpack__", (PyCFunction)(void (*)(void))view_dunder_dlpack, KW,
     "__dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None)\n--\n\n"
     "Export as a DLPack capsule (versioned when max_version >= (1, 0))."},
    {"__dlpack_device__", (PyCFunction)view_dunder_dlpack_device, METH_NOARGS,
     "__dlpack_device__()\n--\n\n(device_type, device_id) of the exported tensor."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject ViewType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "strided.StridedMemoryView",
    .tp_doc = "A strided view of memory: a pointer, a StridedLayout, a dtype and a "
              "device, made by from_dlpack, from_cuda_array_interface, "
              "from_array_interface, from_any_interface, from_buffer or view(). "
              "StridedMemoryView(obj, stream_ptr) is the deprecated form of "
              "from_any_interface.",
    .tp_basicsize = sizeof(ViewObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_dealloc = (destructor)view_dealloc,
    .tp_traverse = (traverseproc)view_traverse,
    .tp_clear = (inquiry)view_clear,
    .tp_repr = (reprfunc)view_repr,
    .tp_weaklistoffset = offsetof(ViewObject, weakrefs),
    .tp_methods = view_methods,
    .tp_getset = view_getset,
    .tp_new = view_tp_new,
};

int strided_py_add_view_type(PyObject *module)
{
    if (init_call_names() < 0 || init_keys() < 0 || PyType_Ready(&ViewType) < 0 ||
        PyModule_AddFunctions(module, module_functions) < 0)
        return -1;
    return PyModule_AddObjectRef(module, "StridedMemoryView", (PyObject *)&ViewType);
}
