/*
 * view_import.c: StridedMemoryView's imports: from_dlpack (with the torch
 * fast path), from_array_interface, from_cuda_array_interface,
 * from_any_interface (DLPack, else the CUDA Array Interface, else the array
 * interface) and the deprecated constructor. Each reads the
 * producer's Python objects into C values and hands them to libstrided,
 * which applies the exchange rules (strided/view.h, strided/interface.h,
 * strided/stream.h).
 */
#include <stdint.h>
#include <string.h>

#include "args.h"
#include "view.h"

/* Names and constants of the calls made here, made once (interned: calls
 * look them up without hashing new strings). */
static PyObject *name_dtype, *name_str, *name_name;
static PyObject *name_dlpack, *name_dlpack_device, *name_cai, *name_ai, *name_exchange_api,
    *kw_stream, *kw_stream_max_version, *our_max_version;

/* The interface dicts' keys. */
enum { K_VERSION, K_MASK, K_DATA, K_SHAPE, K_STRIDES, K_TYPESTR, K_STREAM, K_DESCR, K_COUNT };
static const char *const key_names[K_COUNT] = {"version", "mask",    "data",   "shape",
                                               "strides", "typestr", "stream", "descr"};
static PyObject *keys[K_COUNT];

int strided_py_init_view_import(void)
{
    name_dlpack = PyUnicode_InternFromString("__dlpack__");
    name_dlpack_device = PyUnicode_InternFromString("__dlpack_device__");
    name_cai = PyUnicode_InternFromString("__cuda_array_interface__");
    name_ai = PyUnicode_InternFromString("__array_interface__");
    name_exchange_api = PyUnicode_InternFromString("__dlpack_c_exchange_api__");
    name_dtype = PyUnicode_InternFromString("dtype");
    name_str = PyUnicode_InternFromString("str");
    name_name = PyUnicode_InternFromString("name");
    if (name_dtype == NULL || name_str == NULL || name_name == NULL)
        return -1;
    kw_stream = strided_py_kwnames((const char *const[]){"stream", NULL});
    kw_stream_max_version = strided_py_kwnames((const char *const[]){"stream", "max_version",
                                                                     NULL});
    our_max_version = Py_BuildValue("(ii)", STRIDED_DLPACK_MAJOR_VERSION,
                                    STRIDED_DLPACK_MINOR_VERSION);
    if (name_dlpack == NULL || name_dlpack_device == NULL || name_cai == NULL || name_ai == NULL ||
        name_exchange_api == NULL || kw_stream == NULL || kw_stream_max_version == NULL ||
        our_max_version == NULL)
        return -1;
    for (int k = 0; k < K_COUNT; k++)
        if ((keys[k] = PyUnicode_InternFromString(key_names[k])) == NULL)
            return -1;
    return 0;
}

/* The release callback of interface and torch imports: the context (the
 * exporting object, or a tuple of it and its interface dict) kept alive
 * while the memory is in use. May run on any thread. */
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

/* The view object of an import of obj whose memory holds a reference to
 * kept (release_exporter's context: obj, or obj with what else it keeps):
 * v is taken over, and the view tells the collector of that hidden
 * reference (strided_py_view_hiding, hold.c). */
static PyObject *exporter_view_new(strided_view *v, PyObject *obj, PyObject *kept, PyObject *dtype)
{
    return strided_py_view_hiding(strided_py_view_new(v, obj, NULL, NULL, dtype), kept);
}

/* A stream_ptr argument, the int n of one (not None), as libstrided reads
 * it. -1 with an exception set: ValueError for one below -1, OverflowError
 * beyond 2**64 - 1. */
static int consumer_stream_of_int(PyObject *n, strided_consumer_stream *out)
{
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(n, &overflow);
    bool negative = overflow < 0 || (overflow == 0 && v < 0);
    /* Far below -1 is as invalid as -2: its magnitude saturates. */
    unsigned long long m = overflow > 0   ? PyLong_AsUnsignedLongLong(n)
                           : overflow < 0 ? UINT64_MAX
                           : negative     ? 0 - (unsigned long long)v
                                          : (unsigned long long)v;
    if (PyErr_Occurred())
        return -1;
    strided_status status = strided_consumer_stream_parse(negative, m, out);
    return status == STRIDED_OK ? 0 : (strided_py_raise(status), -1);
}

/* The same of any stream_ptr (not None), through its __index__: TypeError
 * for a non-integer. */
static int consumer_stream(PyObject *stream_ptr, strided_consumer_stream *out)
{
    PyObject *n = strided_py_index(stream_ptr, "stream_ptr", -1);
    if (n == NULL)
        return -1;
    int rc = consumer_stream_of_int(n, out);
    Py_DECREF(n);
    return rc;
}

/* A stream argument for strided_dlpack_request_make: *out_int NULL for
 * None, else the int it stands for (new reference), with *value its value
 * clamped to int64 (any value beyond is just another handle). -1 with
 * TypeError for a non-integer. */
static int request_stream(PyObject *stream_ptr, PyObject **out_int, int64_t *value)
{
    *out_int = NULL;
    *value = 0;
    if (stream_ptr == Py_None)
        return 0;
    PyObject *n = strided_py_index(stream_ptr, "stream_ptr", -1);
    if (n == NULL)
        return -1;
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(n, &overflow);
    *value = overflow > 0 ? INT64_MAX : overflow < 0 ? INT64_MIN : v;
    *out_int = n;
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

/* from_dlpack of a plain torch tensor, read through its accessors
 * (torch_view.c), with DLPack's request and stream rules: the consumer
 * stream waits for torch's current stream. Sets *result (NULL with an
 * exception) and returns 1, or returns 0 when the tensor must go by DLPack. */
static int view_from_torch(PyObject *t, PyObject *stream_ptr, PyObject **result)
{
    strided_py_torch_tensor d;
    *result = NULL;
    int rc = strided_py_torch_describe(t, &d);
    if (rc <= 0)
        return rc < 0 ? 1 : 0;
    PyObject *stream = NULL;
    int64_t value;
    strided_dlpack_request request;
    strided_consumer_stream consumer = {false, NULL};
    strided_status status;
    if (request_stream(stream_ptr, &stream, &value) < 0)
        return 1;
    status = strided_dlpack_request_make(d.device.device_type, d.device.device_id, stream != NULL,
                                         value, &request);
    if (status != STRIDED_OK) {
        Py_XDECREF(stream);
        strided_py_raise_at(status, STRIDED_PY_INTERFACE);
        return 1;
    }
    /* The int already taken from stream_ptr (its __index__ runs once); a
     * request made is one with a stream, CPU and CUDA needing one. */
    rc = stream != NULL ? consumer_stream_of_int(stream, &consumer) : 0;
    Py_XDECREF(stream);
    if (rc < 0)
        return 1;
    if (d.device.device_type == STRIDED_DEVICE_CUDA && consumer.sync) {
        void *producer = NULL;
        if (strided_py_torch_current_stream((int)d.device.device_id, &producer) < 0)
            return 1;
        status = strided_stream_wait(consumer.stream, producer, (int)d.device.device_id);
        if (status != STRIDED_OK) {
            strided_py_raise(status);
            return 1;
        }
    }
    strided_view v;
    status = strided_view_wrap(d.ptr, &d.layout, &d.dtype, false, &d.device, release_exporter,
                               Py_NewRef(t), &v);
    if (status != STRIDED_OK) {
        Py_DECREF(t);
        strided_py_raise(status);
        return 1;
    }
    *result = exporter_view_new(&v, t, t, NULL);
    return 1;
}

/* Whether obj is a numpy.ndarray itself (a subclass may override
 * __array_interface__), without importing numpy: its type is remembered
 * the first time an object of a type named "numpy.ndarray" is numpy's. */
static bool is_ndarray(PyObject *obj)
{
    static PyTypeObject *ndarray; /* strong, once seen */
    if (ndarray != NULL)
        return Py_IS_TYPE(obj, ndarray);
    if (strcmp(Py_TYPE(obj)->tp_name, "numpy.ndarray") != 0)
        return false;
    PyObject *np = PyDict_GetItemString(PyImport_GetModuleDict(), "numpy");
    PyObject *type = np ? PyObject_GetAttrString(np, "ndarray") : NULL;
    if (type == NULL) {
        PyErr_Clear();
        return false;
    }
    if (type != (PyObject *)Py_TYPE(obj)) {
        Py_DECREF(type);
        return false;
    }
    ndarray = (PyTypeObject *)type;
    return true;
}

/* The attribute name of type, found along its MRO as Python finds a
 * type's attributes (borrowed), or NULL without an exception: for a miss,
 * and for a lookup that failed. */
static PyObject *type_attribute(PyTypeObject *type, PyObject *name)
{
    PyObject *mro = type->tp_mro;
    for (Py_ssize_t i = 0; mro != NULL && i < PyTuple_GET_SIZE(mro); i++) {
        PyObject *dict = ((PyTypeObject *)PyTuple_GET_ITEM(mro, i))->tp_dict;
        PyObject *value = dict != NULL ? PyDict_GetItemWithError(dict, name) : NULL;
        if (value != NULL)
            return value;
        if (PyErr_Occurred()) {
            PyErr_Clear();
            return NULL;
        }
    }
    return NULL;
}

/* The DLPack C exchange API of obj's type: the table of a
 * __dlpack_c_exchange_api__ capsule on the type (or a base), of DLPack 1.3
 * or a later minor version of 1 (walking prev_api), with the entry points
 * an import calls; NULL when there is none (no exception). The answer for
 * the last type asked is remembered, with the capsule that holds the
 * table. */
static const strided_dlpack_exchange_api *exchange_api_of(PyObject *obj)
{
    static PyObject *last_type, *last_capsule; /* strong */
    static const strided_dlpack_exchange_api *last_api;
    PyTypeObject *type = Py_TYPE(obj);
    if ((PyObject *)type == last_type)
        return last_api;
    /* Looked up without raising: a miss is the common case, and an
     * AttributeError costs more than the import. */
    PyObject *capsule = type_attribute(type, name_exchange_api);
    const strided_dlpack_exchange_api *api = NULL;
    if (capsule != NULL && PyCapsule_IsValid(capsule, STRIDED_DLPACK_EXCHANGE_API_CAPSULE)) {
        const strided_dlpack_exchange_api_header *h =
            PyCapsule_GetPointer(capsule, STRIDED_DLPACK_EXCHANGE_API_CAPSULE);
        while (h != NULL &&
               !(h->version.major == STRIDED_DLPACK_MAJOR_VERSION && h->version.minor >= 3))
            h = h->prev_api;
        api = (const strided_dlpack_exchange_api *)h;
        if (api != NULL && (api->managed_tensor_from_py_object_no_sync == NULL ||
                            api->current_work_stream == NULL))
            api = NULL;
    }
    Py_INCREF(type);
    Py_XSETREF(last_type, (PyObject *)type);
    Py_XSETREF(last_capsule, api != NULL ? Py_NewRef(capsule) : NULL);
    last_api = api;
    return api;
}

/* After an exchange API call returned -1: its exception, or a BufferError
 * where the producer set none. NULL. */
static PyObject *exchange_failed(PyObject *obj, const char *what)
{
    if (!PyErr_Occurred())
        PyErr_Format(PyExc_BufferError, "%.200s's DLPack exchange API failed in %s",
                     Py_TYPE(obj)->tp_name, what);
    return NULL;
}

/* from_dlpack through the producer's DLPack C exchange API, with DLPack's
 * request and stream rules: no __dlpack__ call, and the consumer stream
 * waits on the device for the producer's current work stream
 * (current_work_stream), as __dlpack__(stream=...) would have ordered it.
 * A plain torch tensor is described in place
 * (dltensor_from_py_object_no_sync; the view keeps the tensor, torch has
 * no read-only tensors); any other producer's tensor comes as a managed
 * tensor (managed_tensor_from_py_object_no_sync), whose flags say whether
 * it is read-only. */
static PyObject *view_from_exchange(PyObject *obj, const strided_dlpack_exchange_api *api,
                                    PyObject *stream_ptr)
{
    PyObject *stream = NULL;
    int64_t value;
    if (request_stream(stream_ptr, &stream, &value) < 0)
        return NULL;
    bool given = stream != NULL;
    /* Every Python call (stream_ptr's __index__ among them) comes before the
     * producer describes the object: a borrowed description is valid only
     * until control returns to Python. The stream is read from the int
     * already taken from stream_ptr. */
    strided_consumer_stream consumer = {false, NULL};
    int rc = given ? consumer_stream_of_int(stream, &consumer) : 0;
    Py_XDECREF(stream);
    if (rc < 0)
        return NULL;
    bool borrowed = api->dltensor_from_py_object_no_sync != NULL && strided_py_is_torch_tensor(obj);
    strided_dl_tensor t;
    strided_dl_managed_tensor_versioned *m = NULL;
    strided_view v;
    strided_status status;
    if (borrowed) {
        if (api->dltensor_from_py_object_no_sync(obj, &t) != 0)
            return exchange_failed(obj, "dltensor_from_py_object_no_sync");
    } else {
        if (api->managed_tensor_from_py_object_no_sync(obj, &m) != 0)
            return exchange_failed(obj, "managed_tensor_from_py_object_no_sync");
        if (m == NULL) {
            PyErr_Format(PyExc_BufferError,
                         "%.200s's managed_tensor_from_py_object_no_sync gave no tensor",
                         Py_TYPE(obj)->tp_name);
            return NULL;
        }
        /* With another major version no other field may be read: the
         * import refuses it (and deletes it). */
        if (m->version.major != STRIDED_DLPACK_MAJOR_VERSION) {
            status = strided_view_import_dlpack(m, true, &v);
            return strided_py_raise_at(status, STRIDED_PY_DLPACK);
        }
        t = m->dl_tensor;
    }
    strided_dlpack_request request;
    status = strided_dlpack_request_make(t.device.device_type, t.device.device_id, given, value,
                                         &request);
    if (status != STRIDED_OK) {
        strided_py_raise_at(status, STRIDED_PY_DLPACK);
        goto fail;
    }
    /* A CUDA tensor is ordered before the consumer's stream, whichever it
     * is: 0, the legacy default stream, too (the protocol hands the
     * producer stream=None then, which orders that stream). -1 orders
     * nothing. */
    if (t.device.device_type == STRIDED_DEVICE_CUDA && consumer.sync) {
        void *producer = NULL;
        if (api->current_work_stream(STRIDED_DEVICE_CUDA, t.device.device_id, &producer) != 0) {
            exchange_failed(obj, "current_work_stream");
            goto fail;
        }
        if ((status = strided_stream_wait(consumer.stream, producer, t.device.device_id)) !=
            STRIDED_OK) {
            strided_py_raise(status);
            goto fail;
        }
    }
    if (!borrowed) {
        status = strided_view_import_dlpack_checked(m, true, &request, &v);
        if (status != STRIDED_OK)
            return strided_py_raise_at(status, STRIDED_PY_DLPACK);
        return (PyObject *)strided_py_view_new(&v, obj, NULL, NULL, NULL);
    }
    status = strided_view_import_dl_tensor(&t, false, &request, release_exporter, Py_NewRef(obj),
                                           &v);
    if (status != STRIDED_OK)
        return strided_py_raise_at(status, STRIDED_PY_DLPACK);
    return exporter_view_new(&v, obj, obj, NULL);
fail:
    if (m != NULL && m->deleter != NULL)
        m->deleter(m);
    return NULL;
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

/* The (device_type, device_id) tuple __dlpack_device__() returned, as C
 * values. -1 with TypeError for anything else. */
static int dlpack_device_of(PyObject *device, int64_t *type, int64_t *id)
{
    if (!PyTuple_Check(device) || PyTuple_GET_SIZE(device) != 2) {
        PyErr_Format(PyExc_TypeError,
                     "__dlpack_device__() must return a (device_type, device_id) tuple, got %R",
                     device);
        return -1;
    }
    int overflow;
    *type = PyLong_AsLongLongAndOverflow(PyTuple_GET_ITEM(device, 0), &overflow);
    if (*type == -1 && PyErr_Occurred())
        return -1;
    if (overflow)
        *type = overflow > 0 ? INT64_MAX : INT64_MIN;
    *id = PyLong_AsLongLongAndOverflow(PyTuple_GET_ITEM(device, 1), &overflow);
    if (*id == -1 && PyErr_Occurred())
        return -1;
    if (overflow)
        *id = overflow > 0 ? INT64_MAX : INT64_MIN;
    return 0;
}

/* The managed tensor in a capsule __dlpack__() returned, taken over: the
 * capsule is marked consumed and loses its destructor, so that nothing but
 * the library calls the deleter. NULL with an exception set (AssertionError
 * for an object that is not an unconsumed DLPack capsule). */
static void *take_capsule(PyObject *capsule, bool *versioned)
{
    const char *name, *used;
    if (PyCapsule_IsValid(capsule, STRIDED_DLPACK_CAPSULE_VERSIONED)) {
        *versioned = true;
        name = STRIDED_DLPACK_CAPSULE_VERSIONED;
        used = STRIDED_DLPACK_CAPSULE_USED_VERSIONED;
    } else if (PyCapsule_IsValid(capsule, STRIDED_DLPACK_CAPSULE)) {
        *versioned = false;
        name = STRIDED_DLPACK_CAPSULE;
        used = STRIDED_DLPACK_CAPSULE_USED;
    } else {
        PyErr_Format(PyExc_AssertionError,
                     "__dlpack__() returned %.200s, not an unconsumed \"dltensor\" or "
                     "\"dltensor_versioned\" capsule",
                     Py_TYPE(capsule)->tp_name);
        return NULL;
    }
    void *managed = PyCapsule_GetPointer(capsule, name);
    if (managed == NULL || PyCapsule_SetName(capsule, used) < 0 ||
        PyCapsule_SetDestructor(capsule, NULL) < 0)
        return NULL;
    return managed;
}

PyObject *strided_py_view_from_dlpack(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                      PyObject *kwnames)
{
    (void)cls;
    PyObject *a[2];
    if (strided_py_bind_args("from_dlpack", args, nargs, kwnames, from_dlpack_names, 1, a) < 0)
        return NULL;
    PyObject *obj = a[0], *stream_ptr = a[1] ? a[1] : Py_None;
    PyObject *result;
    /* Not strided's own views: their exchange table describes them in place
     * too, but their imports chain holds (below) and keep read-only flags. */
    if (!PyObject_TypeCheck(obj, &strided_py_view_type)) {
        const strided_dlpack_exchange_api *api = exchange_api_of(obj);
        if (api != NULL)
            return view_from_exchange(obj, api, stream_ptr);
    }
    if (strided_py_is_torch_tensor(obj) && view_from_torch(obj, stream_ptr, &result))
        return result;
    /* A NumPy array is on the CPU: its __dlpack_device__() says (1, 0)
     * always, and asking costs a tenth of the import. */
    int64_t type = STRIDED_DEVICE_CPU, id = 0;
    int rc = 0;
    if (!is_ndarray(obj)) {
        PyObject *device = PyObject_CallMethodNoArgs(obj, name_dlpack_device);
        if (device == NULL)
            return not_dlpack(obj, name_dlpack_device);
        rc = dlpack_device_of(device, &type, &id);
        Py_DECREF(device);
    }
    PyObject *stream = NULL;
    int64_t value;
    if (rc < 0 || request_stream(stream_ptr, &stream, &value) < 0)
        return NULL;
    strided_dlpack_request request;
    strided_status status = strided_dlpack_request_make(type, id, stream != NULL, value, &request);
    if (status != STRIDED_OK) {
        Py_XDECREF(stream);
        return strided_py_raise_at(status, STRIDED_PY_DLPACK);
    }
    PyObject *capsule = call_dlpack(obj, request.pass_stream ? stream : Py_None);
    Py_XDECREF(stream);
    if (capsule == NULL)
        return not_dlpack(obj, name_dlpack);
    bool versioned = false;
    void *managed = take_capsule(capsule, &versioned);
    Py_DECREF(capsule);
    if (managed == NULL)
        return NULL;
    /* The tensor is libstrided's now, also when the import fails (its
     * deleter runs then, before the exception is set: it may run Python
     * code, which must not find one pending). */
    strided_view v;
    status = strided_view_import_dlpack_checked(managed, versioned, &request, &v);
    if (status != STRIDED_OK)
        return strided_py_raise_at(status, STRIDED_PY_DLPACK);
    strided_py_view *self = strided_py_view_new(&v, obj, NULL, NULL, NULL);
    /* A strided view's tensor holds its C buffer: chain the holds, so that
     * a cycle through both memories can be collected (hold.c). */
    PyObject *inner = NULL;
    if (self != NULL && Py_IS_TYPE(obj, &strided_py_view_type) &&
        strided_py_view_hold((strided_py_view *)obj, &inner) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    if (self == NULL || inner == NULL)
        return (PyObject *)self;
    return strided_py_view_joined_new(self, strided_py_hold_new_chained(self->view.buffer, inner));
}

/* "__array_interface__['key']" of either interface, for messages; K_COUNT
 * is data[0]. */
/* clang-format off */
#define KEY_LABELS(attr)                                                              \
    {attr "['version']", attr "['mask']",    attr "['data']",   attr "['shape']",     \
     attr "['strides']", attr "['typestr']", attr "['stream']", attr "['descr']",     \
     attr "['data'][0]"}
/* clang-format on */
static const char *const key_labels[2][K_COUNT + 1] = {KEY_LABELS("__array_interface__"),
                                                       KEY_LABELS("__cuda_array_interface__")};
#undef KEY_LABELS

static const char *const attr_names[2] = {"__array_interface__", "__cuda_array_interface__"};

/* d[key] (borrowed), or NULL: with ValueError naming the interface when
 * required, else without an exception when absent. */
static PyObject *dict_get(PyObject *d, strided_interface_kind kind, int key, bool required)
{
    PyObject *v = PyDict_GetItemWithError(d, keys[key]);
    if (v == NULL && required && !PyErr_Occurred())
        PyErr_Format(PyExc_ValueError, "%s is missing the required key '%s'", attr_names[kind],
                     key_names[key]);
    return v;
}

/* d[key] when there and not None, else NULL (with an exception only when
 * the lookup failed). */
static PyObject *dict_given(PyObject *d, strided_interface_kind kind, int key)
{
    PyObject *v = dict_get(d, kind, key, false);
    return v == Py_None ? NULL : v;
}

/* The ints of a tuple or list (named what) into out, at most
 * STRIDED_MAX_NDIM of them. */
static int int64_sequence(PyObject *obj, const char *what, int64_t *out, int *out_n)
{
    if (!PyTuple_Check(obj) && !PyList_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s must be a tuple of ints, got %.200s", what,
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(obj);
    if (n > STRIDED_MAX_NDIM) {
        PyErr_Format(PyExc_ValueError, "%s has %zd elements; at most %d are supported", what, n,
                     STRIDED_MAX_NDIM);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (strided_py_as_int64(PySequence_Fast_GET_ITEM(obj, i), what, (int)i, &out[i]) < 0)
            return -1;
    *out_n = (int)n;
    return 0;
}

/* What an interface dict holds, read into C values; the arrays and the
 * type string live here. */
typedef struct {
    strided_interface_desc desc;
    int64_t shape[STRIDED_MAX_NDIM];
    int64_t strides[STRIDED_MAX_NDIM];
    PyObject *typestr; /* 'typestr' (borrowed from the dict) */
} interface_read;

/* obj.<attr> as a dict, with its version and mask checked first (cuda.core
 * checks them before anything else). New reference. */
static PyObject *interface_dict(PyObject *obj, strided_interface_kind kind, interface_read *out)
{
    const char *attr = attr_names[kind];
    PyObject *d = PyObject_GetAttr(obj, kind == STRIDED_INTERFACE_CUDA ? name_cai : name_ai);
    if (d == NULL) {
        strided_py_retype_attribute_error(
            "StridedMemoryView.%s() expects an object with %s, got %.200s",
            kind == STRIDED_INTERFACE_CUDA ? "from_cuda_array_interface" : "from_array_interface",
            attr, Py_TYPE(obj)->tp_name);
        return NULL;
    }
    if (!PyDict_Check(d)) {
        PyErr_Format(PyExc_TypeError, "%s must be a dict, got %.200s", attr, Py_TYPE(d)->tp_name);
        goto fail;
    }
    PyObject *item = dict_get(d, kind, K_VERSION, true);
    if (item == NULL ||
        strided_py_as_int64(item, key_labels[kind][K_VERSION], -1, &out->desc.version) < 0)
        goto fail;
    PyObject *mask = dict_given(d, kind, K_MASK);
    if (mask == NULL && PyErr_Occurred())
        goto fail;
    out->desc.kind = kind;
    out->desc.has_mask = mask != NULL;
    strided_status status = strided_interface_check_header(kind, out->desc.version,
                                                           out->desc.has_mask);
    if (status != STRIDED_OK) {
        strided_py_raise_at(status, STRIDED_PY_INTERFACE);
        goto fail;
    }
    return d;
fail:
    Py_DECREF(d);
    return NULL;
}

/* What a structured type's 'descr' says that its typestr ("|V16") does
 * not: whether its fields hold objects, and its size. Read only for raw
 * bytes with a descr of named fields (a plain type's descr is
 * [('', typestr)]). */
static int read_descr(PyObject *d, interface_read *out)
{
    const char *text = PyUnicode_AsUTF8(out->typestr);
    if (text == NULL)
        return -1;
    /* The kind is text[1] (a type string that parses has it there). */
    strided_typestr t;
    if (text[0] == '\0' || text[1] != 'V' || strided_typestr_parse(text, 0, &t) != STRIDED_OK)
        return 0; /* the import says what is wrong with it */
    PyObject *descr = PyDict_GetItemWithError(d, keys[K_DESCR]);
    if (descr == NULL || !PyList_Check(descr) || PyList_GET_SIZE(descr) == 0)
        return PyErr_Occurred() ? -1 : 0;
    PyObject *first = PyList_GET_ITEM(descr, 0);
    bool plain = PyTuple_Check(first) && PyTuple_GET_SIZE(first) == 2 &&
                 PyUnicode_Check(PyTuple_GET_ITEM(first, 0)) &&
                 PyUnicode_GET_LENGTH(PyTuple_GET_ITEM(first, 0)) == 0;
    if (plain && PyList_GET_SIZE(descr) == 1)
        return 0;
    PyObject *dtype = strided_py_np_dtype(descr);
    if (dtype == NULL)
        return -1;
    long itemsize = 0;
    int rc = strided_py_dtype_facts(dtype, &out->desc.typestr_flags, &itemsize);
    Py_DECREF(dtype);
    /* Only what descr adds: object fields, and the size to compare. */
    out->desc.typestr_flags &= STRIDED_TYPESTR_HOLDS_REFERENCES;
    out->desc.descr_itemsize = itemsize;
    return rc;
}

/* Read data, shape, strides (in bytes), typestr, descr and, when with_stream,
 * the producer stream of an interface dict. */
static int read_interface(PyObject *d, bool with_stream, interface_read *out)
{
    strided_interface_kind kind = out->desc.kind;
    const char *const *labels = key_labels[kind];
    PyObject *item = dict_get(d, kind, K_DATA, true);
    if (item == NULL)
        return -1;
    if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 2) {
        PyErr_Format(PyExc_TypeError, "%s['data'] must be a (ptr, readonly) tuple",
                     attr_names[kind]);
        return -1;
    }
    int readonly;
    if (strided_py_as_address(PyTuple_GET_ITEM(item, 0), labels[K_COUNT], &out->desc.data) < 0 ||
        (readonly = PyObject_IsTrue(PyTuple_GET_ITEM(item, 1))) < 0)
        return -1;
    out->desc.readonly = readonly;
    if ((item = dict_get(d, kind, K_SHAPE, true)) == NULL ||
        int64_sequence(item, labels[K_SHAPE], out->shape, &out->desc.ndim) < 0)
        return -1;
    out->desc.shape = out->shape;
    out->desc.nstrides = -1;
    out->desc.strides = out->strides;
    item = dict_given(d, kind, K_STRIDES);
    if (item == NULL && PyErr_Occurred())
        return -1;
    if (item != NULL &&
        int64_sequence(item, labels[K_STRIDES], out->strides, &out->desc.nstrides) < 0)
        return -1;
    if ((item = dict_get(d, kind, K_TYPESTR, true)) == NULL)
        return -1;
    if (!PyUnicode_Check(item)) {
        PyErr_Format(PyExc_TypeError, "%s must be a str, got %.200s", labels[K_TYPESTR],
                     Py_TYPE(item)->tp_name);
        return -1;
    }
    out->typestr = item;
    if ((out->desc.typestr = PyUnicode_AsUTF8(item)) == NULL || read_descr(d, out) < 0)
        return -1;
    if (with_stream) {
        item = dict_given(d, kind, K_STREAM);
        if (item == NULL && PyErr_Occurred())
            return -1;
        out->desc.has_stream = item != NULL;
        if (item != NULL && strided_py_as_int64(item, labels[K_STREAM], -1, &out->desc.stream) < 0)
            return -1;
    }
    return 0;
}

/* The name of obj's element type where obj tells it beside its dict: a
 * numpy dtype as obj.dtype whose str is typestr (NumPy's and CuPy's
 * arrays), whose name tells ml_dtypes' types apart, which the type string
 * reads as raw bytes. A new reference, or NULL (no exception) when obj does
 * not say. A dtype's str and name never change, and NumPy computes its
 * name in Python (over a microsecond): the last dtype's are remembered (in
 * a build with the GIL, which guards them). */
static PyObject *type_name_of(PyObject *obj, PyObject *typestr)
{
    PyObject *dtype = PyObject_GetAttr(obj, name_dtype);
    if (dtype == NULL) {
        PyErr_Clear();
        return NULL;
    }
#ifndef Py_GIL_DISABLED
    static PyObject *last_dtype, *last_str, *last_name; /* strong */
    if (dtype == last_dtype) {
        Py_DECREF(dtype);
        if (typestr == NULL || PyUnicode_Compare(last_str, typestr) != 0)
            return NULL;
        return Py_NewRef(last_name);
    }
#endif
    PyObject *str = PyObject_GetAttr(dtype, name_str);
    PyObject *name = str != NULL ? PyObject_GetAttr(dtype, name_name) : NULL;
    if (str == NULL || name == NULL || !PyUnicode_Check(str) || !PyUnicode_Check(name)) {
        Py_XDECREF(str);
        Py_XDECREF(name);
        Py_DECREF(dtype);
        PyErr_Clear();
        return NULL;
    }
    const bool same = typestr != NULL && PyUnicode_Compare(str, typestr) == 0;
    PyErr_Clear();
#ifndef Py_GIL_DISABLED
    Py_XSETREF(last_dtype, dtype);
    Py_XSETREF(last_str, str);
    Py_XSETREF(last_name, Py_NewRef(name));
#else
    Py_DECREF(dtype);
    Py_DECREF(str);
#endif
    if (!same)
        Py_CLEAR(name);
    return name;
}

/* The view of what obj's interface dict describes; stream_ptr for CUDA
 * (None: not given). */
static PyObject *import_interface(PyObject *obj, strided_interface_kind kind, PyObject *stream_ptr)
{
    interface_read r;
    r.desc = (strided_interface_desc){0};
    r.typestr = NULL;
    PyObject *d = interface_dict(obj, kind, &r);
    if (d == NULL)
        return NULL;
    PyObject *result = NULL;
    strided_consumer_stream consumer = {false, NULL};
    bool have_consumer = kind == STRIDED_INTERFACE_CUDA && stream_ptr != Py_None;
    /* The producer's stream matters only to a consumer that orders. */
    if ((have_consumer && consumer_stream(stream_ptr, &consumer) < 0) ||
        read_interface(d, have_consumer && consumer.sync, &r) < 0)
        goto done;
    strided_view v;
    strided_typestr t;
    /* The producer's dtype is asked for its name only where the name can
     * matter (ml_dtypes' types): two attribute reads less for the rest. */
    PyObject *type_name = strided_dtype_name_matters(r.desc.typestr) ? type_name_of(obj, r.typestr)
                                                                     : NULL;
    if (type_name != NULL && (r.desc.type_name = PyUnicode_AsUTF8(type_name)) == NULL) {
        Py_DECREF(type_name);
        goto done;
    }
    /* The dict may own the memory (a NumPy scalar's holds the array it
     * made, as '__ref'), so the memory keeps it as well as obj. */
    PyObject *kept = PyTuple_Pack(2, obj, d);
    if (kept == NULL) {
        Py_XDECREF(type_name);
        goto done;
    }
    /* The memory holds them from here on: the import releases them on
     * failure, the view's last holder otherwise. */
    strided_status status = strided_view_import_interface(&r.desc, have_consumer ? &consumer : NULL,
                                                          release_exporter, kept, &v, &t);
    Py_XDECREF(type_name);
    if (status != STRIDED_OK) {
        strided_py_raise_at(status, STRIDED_PY_INTERFACE);
        goto done;
    }
    /* A type without a DLPack one is numpy's alone: keep its dtype. */
    PyObject *dtype = t.has_dtype ? NULL : strided_py_typestr_dtype(r.typestr);
    if (t.has_dtype || dtype != NULL)
        result = exporter_view_new(&v, obj, kept, dtype);
    else
        strided_py_release_buffer(v.buffer);
    Py_XDECREF(dtype);
done:
    Py_DECREF(d);
    return result;
}

/* from_array_interface of a NumPy array through the buffer protocol, which
 * carries the same facts for the plain element types at a fraction of the
 * cost of building the interface dict: the address, shape, byte strides,
 * read-only flag and the format, as a type string (strided_typestr_from_format).
 * The import is the array interface's, with the same rules. Sets *result
 * (NULL with an exception) and returns 1, or returns 0 when the array must
 * go by its dict (a format with no plain type, more axes than strided
 * takes, an axis of extent 0 or 1, or an export NumPy refuses). With
 * as_dlpack the strides are given as a DLPack import of the array has
 * them (its dict gives none for a C-contiguous array, DLPack for none but
 * the 0-d one). */
static int array_interface_by_buffer(PyObject *obj, bool as_dlpack, PyObject **result)
{
    Py_buffer b;
    if (PyObject_GetBuffer(obj, &b, PyBUF_RECORDS_RO) < 0) {
        PyErr_Clear();
        return 0;
    }
    interface_read r;
    r.desc = (strided_interface_desc){0};
    char typestr[8];
    bool exact = b.ndim <= STRIDED_MAX_NDIM &&
                 strided_typestr_from_format(b.format, b.itemsize, typestr, sizeof typestr) != 0;
    /* NumPy exports a contiguous array with the canonical strides of a
     * dense one, also along axes of extent 0 or 1, whose own strides may
     * be anything (a slice leaves them as they were); its dict gives the
     * array's own. Such arrays go by the dict. */
    for (int k = 0; exact && k < b.ndim; k++)
        exact = b.shape[k] > 1;
    if (!exact) {
        PyBuffer_Release(&b);
        return 0;
    }
    r.desc.kind = STRIDED_INTERFACE_ARRAY;
    r.desc.version = 3;
    r.desc.data = b.buf;
    r.desc.readonly = b.readonly != 0;
    r.desc.ndim = b.ndim;
    r.desc.shape = r.shape;
    /* NumPy's dict gives no strides for a C-contiguous array (its test
     * ignores axes of extent 1, as PyBuffer_IsContiguous does). */
    r.desc.nstrides = (as_dlpack ? b.ndim == 0 : PyBuffer_IsContiguous(&b, 'C')) ? -1 : b.ndim;
    r.desc.strides = r.strides;
    r.desc.typestr = typestr;
    for (int k = 0; k < b.ndim; k++) {
        r.shape[k] = b.shape[k];
        r.strides[k] = b.strides[k];
    }
    PyBuffer_Release(&b);
    /* The array keeps its memory; the view keeps the array. */
    strided_view v;
    strided_status status = strided_view_import_interface(&r.desc, NULL, release_exporter,
                                                          Py_NewRef(obj), &v, NULL);
    *result = status == STRIDED_OK ? exporter_view_new(&v, obj, obj, NULL)
                                   : strided_py_raise_at(status, STRIDED_PY_INTERFACE);
    return 1;
}

PyObject *strided_py_view_from_array_interface(PyObject *cls, PyObject *obj)
{
    (void)cls;
    PyObject *result;
    if (is_ndarray(obj) && array_interface_by_buffer(obj, false, &result))
        return result;
    return import_interface(obj, STRIDED_INTERFACE_ARRAY, Py_None);
}

static const char *const from_cai_names[] = {"obj", "stream_ptr", NULL};

PyObject *strided_py_view_from_cai(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                   PyObject *kwnames)
{
    (void)cls;
    PyObject *a[2];
    if (strided_py_bind_args("from_cuda_array_interface", args, nargs, kwnames, from_cai_names, 1,
                             a) < 0)
        return NULL;
    return import_interface(a[0], STRIDED_INTERFACE_CUDA, a[1] ? a[1] : Py_None);
}

/* Whether type has name as a method (a function or a C method found
 * along its MRO) and reads attributes the generic way: then reading the
 * attribute of an instance gives a bound method or what the instance
 * itself holds, without running code, so every instance has it. False
 * says nothing. Costs a dict lookup per base, where reading the attribute
 * makes and frees a bound method. */
static bool type_has_method(PyTypeObject *type, PyObject *name)
{
    if (type->tp_getattro != PyObject_GenericGetAttr)
        return false;
    PyObject *value = type_attribute(type, name);
    return value != NULL && (PyFunction_Check(value) || Py_IS_TYPE(value, &PyMethodDescr_Type));
}

/* 1 when obj has the attribute, 0 when it raises AttributeError (a
 * property may say "not for this object" so), -1 for any other error. */
static int has_attr(PyObject *obj, PyObject *name)
{
    if (type_has_method(Py_TYPE(obj), name))
        return 1;
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

int strided_py_exchange_protocol(PyObject *obj)
{
    int dlpack = has_attr(obj, name_dlpack);
    if (dlpack > 0)
        dlpack = has_attr(obj, name_dlpack_device);
    if (dlpack != 0)
        return dlpack < 0 ? -1 : STRIDED_PY_PROTOCOL_DLPACK;
    int cai = has_attr(obj, name_cai);
    if (cai != 0)
        return cai < 0 ? -1 : STRIDED_PY_PROTOCOL_CAI;
    int array = has_attr(obj, name_ai);
    if (array != 0)
        return array < 0 ? -1 : STRIDED_PY_PROTOCOL_ARRAY;
    PyErr_SetString(PyExc_BufferError,
                    "the input object does not support any data exchange protocol");
    return -1;
}

PyObject *strided_py_view_exchange_protocol(PyObject *cls, PyObject *obj)
{
    (void)cls;
    static const char *const names[] = {"cai", "dlpack", "array"};
    int protocol = strided_py_exchange_protocol(obj);
    return protocol < 0 ? NULL : PyUnicode_FromString(names[protocol]);
}

/* from_dlpack, from_cuda_array_interface or from_array_interface, by the
 * protocol obj speaks. The array interface describes host memory, which
 * orders nothing: stream_ptr, when given, is only checked. */
/* Whether obj is a NumPy array of a type strided knows and DLPack has a
 * code for, which NumPy's __dlpack__ refuses all the same (it exports
 * booleans, integers, floats and complex numbers only): ml_dtypes' bfloat16,
 * float8 and sub-byte types. from_any_interface reads those through the
 * array interface. Any doubt (an exception) answers no, cleared. */
static bool ndarray_beyond_numpy_dlpack(PyObject *obj)
{
    if (!is_ndarray(obj))
        return false;
    PyObject *dtype = PyObject_GetAttrString(obj, "dtype");
    strided_typestr info;
    bool beyond = dtype != NULL && strided_py_dtype_info(dtype, &info) == 0 && info.has_dtype &&
                  strchr("biufc", info.kind) == NULL;
    Py_XDECREF(dtype);
    PyErr_Clear();
    return beyond;
}

static PyObject *from_any(PyObject *cls, PyObject *obj, PyObject *stream_ptr)
{
    PyObject *call[2] = {obj, stream_ptr}, *view;
    strided_consumer_stream unused;
    /* A NumPy array's DLPack export and its buffer give the same view (the
     * buffer route takes only the element types NumPy exports, and refuses
     * the arrays whose facts could differ): the buffer costs a fraction of
     * the __dlpack__ call. Only with the streams that route passes NumPy
     * as None (-1 and 0): any other stream, refusal or failure goes on to
     * that route, which says what is wrong. */
    if (stream_ptr != Py_None && is_ndarray(obj)) {
        PyObject *n;
        int64_t value;
        if (request_stream(stream_ptr, &n, &value) < 0)
            return NULL;
        Py_DECREF(n);
        if ((value == -1 || value == 0) && array_interface_by_buffer(obj, true, &view)) {
            if (view != NULL)
                return view;
            PyErr_Clear();
        }
    }
    switch (strided_py_exchange_protocol(obj)) {
    case STRIDED_PY_PROTOCOL_DLPACK:
        view = strided_py_view_from_dlpack(cls, call, 2, NULL);
        /* Asked only after a failure, so that the DLPack route costs
         * nothing more; stream_ptr=None stays refused for host memory, as
         * for any array. */
        if (view != NULL || stream_ptr == Py_None || !PyErr_ExceptionMatches(PyExc_BufferError))
            return view;
        {
            PyObject *exc = strided_py_take_exception();
            bool beyond = exc != NULL && ndarray_beyond_numpy_dlpack(obj);
            if (!beyond) {
                if (exc != NULL)
                    strided_py_raise_exception(exc);
                return NULL;
            }
            Py_DECREF(exc);
        }
        /* fall through */
    case STRIDED_PY_PROTOCOL_ARRAY:
        if (stream_ptr != Py_None && consumer_stream(stream_ptr, &unused) < 0)
            return NULL;
        return strided_py_view_from_array_interface(cls, obj);
    case STRIDED_PY_PROTOCOL_CAI: return strided_py_view_from_cai(cls, call, 2, NULL);
    default: return NULL;
    }
}

static const char *const from_any_names[] = {"obj", "stream_ptr", NULL};

PyObject *strided_py_view_from_any(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                   PyObject *kwnames)
{
    PyObject *a[2];
    if (strided_py_bind_args("from_any_interface", args, nargs, kwnames, from_any_names, 1, a) < 0)
        return NULL;
    return from_any(cls, a[0], a[1] ? a[1] : Py_None);
}

/* StridedMemoryView(obj=None, stream_ptr=None): deprecated in cuda.core for
 * from_any_interface. No object gives a view of no elements at address 0. */
PyObject *strided_py_view_tp_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
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
    if (obj != Py_None)
        return from_any((PyObject *)type, obj, stream_ptr);
    strided_layout empty;
    strided_view v;
    strided_device cpu = {STRIDED_DEVICE_CPU, 0};
    strided_status status = strided_layout_init(&empty, 1, (int64_t[]){0}, NULL, 1);
    if (status == STRIDED_OK)
        status = strided_view_wrap(NULL, &empty, NULL, false, &cpu, NULL, NULL, &v);
    if (status != STRIDED_OK)
        return strided_py_raise(status);
    return (PyObject *)strided_py_view_new(&v, NULL, NULL, NULL, NULL);
}
