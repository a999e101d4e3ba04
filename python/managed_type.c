/*
 * managed_type.c: strided.ManagedBuffer, a Buffer of managed memory with
 * cuda.core's advice and page-moving API, and the conversions of locations
 * and copy options that it shares with Buffer and the resources.
 *
 * A location crosses into Python in cuda.core's ManagedMemoryResource form,
 * None or (ManagedMemoryLocationType, id): ("device", 0), ("host", None),
 * ("host_numa", 1), and ("host_numa_current", None) for the calling
 * thread's node, which cuda.core's enumeration does not name. It is taken
 * in every form strided_py_as_location lists. The rules of each operation
 * (which locations it takes, what memory) are libstrided's
 * (strided/buffer.h); this file converts, calls and raises.
 *
 * accessed_by answers a live set (strided._access.AccessedBySetProxy) that
 * reads and advises through the private methods _accessed_by, _location
 * and _advise_accessed_by.
 */
#include <string.h>

#include "args.h"
#include "strided_py.h"

static PyTypeObject ManagedBufferType;

/* strided._options.ManagedMemoryLocationType (borrowed; imported once). */
static PyObject *location_enum(void)
{
    static PyObject *cls;
    if (cls == NULL) {
        PyObject *module = PyImport_ImportModule("strided._options");
        cls = module ? PyObject_GetAttrString(module, "ManagedMemoryLocationType") : NULL;
        Py_XDECREF(module);
    }
    return cls;
}

/* The location type a name stands for; -1 for none. */
static int location_type_named(const char *name)
{
    static const char *const names[] = {
        [STRIDED_LOCATION_DEVICE] = "device",
        [STRIDED_LOCATION_HOST] = "host",
        [STRIDED_LOCATION_HOST_NUMA] = "host_numa",
        [STRIDED_LOCATION_HOST_NUMA_CURRENT] = "host_numa_current",
    };
    for (int t = STRIDED_LOCATION_DEVICE; t <= STRIDED_LOCATION_HOST_NUMA_CURRENT; t++)
        if (strcmp(names[t], name) == 0)
            return t;
    return -1;
}

/* A location given by its type's name (a str, ManagedMemoryLocationType
 * included) and an id (None, or an int; NULL when only the name was
 * given). */
static int named_location(PyObject *name, PyObject *id, const char *what,
                          strided_memory_location *out)
{
    const char *text = PyUnicode_AsUTF8(name);
    if (text == NULL)
        return -1;
    int type = location_type_named(text);
    if (type < 0) {
        PyErr_Format(PyExc_ValueError,
                     "%s: %R is not a location type: 'device', 'host', 'host_numa' or "
                     "'host_numa_current'",
                     what, name);
        return -1;
    }
    bool numbered = type == STRIDED_LOCATION_DEVICE || type == STRIDED_LOCATION_HOST_NUMA;
    bool has_id = id != NULL && id != Py_None;
    if (numbered && !has_id) {
        PyErr_Format(PyExc_ValueError, "%s: a '%s' location needs its %s, as ('%s', 0)", what, text,
                     type == STRIDED_LOCATION_DEVICE ? "device ordinal" : "NUMA node", text);
        return -1;
    }
    if (!numbered && has_id) {
        PyErr_Format(PyExc_ValueError, "%s: a '%s' location has no id, got ('%s', %R)", what, text,
                     text, id);
        return -1;
    }
    int v = -1;
    if (has_id && strided_py_as_int(id, what, -1, &v) < 0)
        return -1;
    *out = (strided_memory_location){(strided_memory_location_type)type, v};
    return 0;
}

/* A cuda.core Host, by its two attributes: the calling thread's node, a
 * node, or the host. 1 when obj is one (*out set), 0 when it is not. */
static int host_like(PyObject *obj, const char *what, strided_memory_location *out)
{
    PyObject *numa = PyObject_GetAttrString(obj, "numa_id");
    PyObject *current = numa ? PyObject_GetAttrString(obj, "is_numa_current") : NULL;
    if (current == NULL) {
        Py_XDECREF(numa);
        if (!PyErr_ExceptionMatches(PyExc_AttributeError))
            return -1;
        PyErr_Clear();
        return 0;
    }
    int is_current = PyObject_IsTrue(current);
    int rc = is_current < 0 ? -1 : 1;
    if (is_current > 0)
        *out = (strided_memory_location){STRIDED_LOCATION_HOST_NUMA_CURRENT, -1};
    else if (is_current == 0 && numa == Py_None)
        *out = (strided_memory_location){STRIDED_LOCATION_HOST, -1};
    else if (is_current == 0 && strided_py_as_int(numa, what, -1, &out->id) == 0)
        out->type = STRIDED_LOCATION_HOST_NUMA;
    else
        rc = -1;
    Py_DECREF(numa);
    Py_DECREF(current);
    return rc;
}

int strided_py_as_location(PyObject *obj, const char *what, strided_memory_location *out)
{
    if (obj == Py_None) {
        *out = (strided_memory_location){STRIDED_LOCATION_NONE, -1};
        return 0;
    }
    if (PyBool_Check(obj) || PyIndex_Check(obj)) {
        int id;
        if (strided_py_as_int(obj, what, -1, &id) < 0)
            return -1;
        /* -1 is the host, as in ManagedMemoryResourceOptions. */
        *out = id == -1 ? (strided_memory_location){STRIDED_LOCATION_HOST, -1}
                        : (strided_memory_location){STRIDED_LOCATION_DEVICE, id};
        return 0;
    }
    if (PyUnicode_Check(obj))
        return named_location(obj, NULL, what, out);
    if (PyTuple_Check(obj) && PyTuple_GET_SIZE(obj) == 2 &&
        PyUnicode_Check(PyTuple_GET_ITEM(obj, 0)))
        return named_location(PyTuple_GET_ITEM(obj, 0), PyTuple_GET_ITEM(obj, 1), what, out);
    int host = host_like(obj, what, out);
    if (host != 0)
        return host < 0 ? -1 : 0;
    PyObject *id = PyObject_GetAttrString(obj, "device_id");
    if (id == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError))
            return -1;
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError,
                     "%s must be a device ordinal, a Device, a Host, 'host', a (type, id) pair "
                     "or None; got %.200s",
                     what, Py_TYPE(obj)->tp_name);
        return -1;
    }
    int device;
    int rc = strided_py_as_int(id, what, -1, &device);
    Py_DECREF(id);
    if (rc == 0)
        *out = (strided_memory_location){STRIDED_LOCATION_DEVICE, device};
    return rc;
}

PyObject *strided_py_location_object(strided_memory_location loc)
{
    static const char *const names[] = {
        [STRIDED_LOCATION_DEVICE] = "DEVICE",
        [STRIDED_LOCATION_HOST] = "HOST",
        [STRIDED_LOCATION_HOST_NUMA] = "HOST_NUMA",
    };
    if (loc.type == STRIDED_LOCATION_NONE)
        Py_RETURN_NONE;
    bool numbered = loc.type == STRIDED_LOCATION_DEVICE || loc.type == STRIDED_LOCATION_HOST_NUMA;
    PyObject *id = numbered ? PyLong_FromLong(loc.id) : Py_NewRef(Py_None);
    PyObject *type = NULL;
    if (loc.type == STRIDED_LOCATION_HOST_NUMA_CURRENT) {
        type = PyUnicode_FromString("host_numa_current");
    } else {
        PyObject *cls = location_enum();
        type = cls ? PyObject_GetAttrString(cls, names[loc.type]) : NULL;
    }
    PyObject *pair = type && id ? PyTuple_Pack(2, type, id) : NULL;
    Py_XDECREF(type);
    Py_XDECREF(id);
    return pair;
}

/* The value of an enumeration field of a CopyOptions: its str's index in
 * values, or ValueError in cuda.core's words. */
static int enum_field(PyObject *options, const char *field, const char *const *values, int n,
                      int *out)
{
    PyObject *v = PyObject_GetAttrString(options, field);
    if (v == NULL)
        return -1;
    const char *text = PyUnicode_Check(v) ? PyUnicode_AsUTF8(v) : NULL;
    int found = -1;
    for (int i = 0; text != NULL && i < n; i++)
        if (strcmp(values[i], text) == 0)
            found = i;
    if (found < 0 && !PyErr_Occurred())
        PyErr_Format(PyExc_ValueError, "invalid %s: %R", field, v);
    Py_DECREF(v);
    if (found < 0)
        return -1;
    *out = found;
    return 0;
}

static int hint_field(PyObject *options, const char *field, strided_memory_location *out)
{
    PyObject *v = PyObject_GetAttrString(options, field);
    int rc = v ? strided_py_as_location(v, field, out) : -1;
    Py_XDECREF(v);
    return rc;
}

int strided_py_as_copy_options(PyObject *obj, strided_buffer_copy_options *out)
{
    static const char *const orders[] = {"stream", "during_api_call", "any"};
    static const char *const modes[] = {"default", "prefer_overlap_with_compute"};
    strided_buffer_copy_options o = strided_buffer_copy_options_default();
    int order, mode;
    if (enum_field(obj, "src_access_order", orders, 3, &order) < 0 ||
        hint_field(obj, "src_location_hint", &o.src_location_hint) < 0 ||
        hint_field(obj, "dst_location_hint", &o.dst_location_hint) < 0 ||
        enum_field(obj, "overlap_mode", modes, 2, &mode) < 0)
        return -1;
    o.src_access_order = (strided_copy_src_access_order)(STRIDED_COPY_SRC_ACCESS_STREAM + order);
    o.overlap_mode = mode ? STRIDED_COPY_PREFER_OVERLAP_WITH_COMPUTE : STRIDED_COPY_OVERLAP_DEFAULT;
    *out = o;
    return 0;
}

PyTypeObject *strided_py_managed_buffer_type(void)
{
    return &ManagedBufferType;
}

/* Run call, a libstrided call on b, with the GIL released and b held for
 * it; status is its status, and its exception is raised on failure. */
#define CALL_ON_BUFFER(b, status, call) \
    do {                                \
        strided_buffer_retain(b);       \
        Py_BEGIN_ALLOW_THREADS(status)  \
        = (call);                       \
        Py_END_ALLOW_THREADS            \
        if ((status) != STRIDED_OK)     \
            strided_py_raise(status);   \
        strided_py_release_buffer(b);   \
    } while (0)

static PyObject *managed_from_handle(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                     PyObject *kwnames)
{
    return strided_py_buffer_from_handle((PyTypeObject *)cls, args, nargs, kwnames);
}

/* Bind a method's arguments: npositional (0 or 1) positional ones, then
 * the keyword-only stream, which must be given and not be None (managed
 * memory is worked on by a device). */
static int bind(const char *name, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                const char *const *names, int npositional, PyObject **out, void **stream)
{
    if (nargs > npositional) {
        PyErr_Format(PyExc_TypeError, "%s() takes %d positional argument%s (%zd given)", name,
                     npositional, npositional == 1 ? "" : "s", nargs);
        return -1;
    }
    if (strided_py_bind_args(name, args, nargs, kwnames, names, npositional, out) < 0)
        return -1;
    PyObject *s = out[npositional];
    if (s == NULL) {
        PyErr_Format(PyExc_TypeError, "%s() needs keyword-only argument stream", name);
        return -1;
    }
    if (s == Py_None) {
        PyErr_SetString(PyExc_TypeError, strided_py_none_stream_message);
        return -1;
    }
    return strided_py_as_stream(s, stream);
}

/* What a page move is. */
typedef enum move_kind { PREFETCH, DISCARD, DISCARD_PREFETCH } move_kind;

/* prefetch(location, *, stream), discard(*, stream) and
 * discard_prefetch(location, *, stream). */
static PyObject *move_pages(PyObject *self, const char *name, move_kind kind, PyObject *const *args,
                            Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const located_names[] = {"location", "stream", NULL};
    static const char *const stream_names[] = {"stream", NULL};
    bool located = kind != DISCARD;
    PyObject *a[2];
    void *stream;
    strided_memory_location loc = {STRIDED_LOCATION_NONE, -1};
    strided_buffer *b = strided_py_buffer_of(self);
    if (b == NULL ||
        bind(name, args, nargs, kwnames, located ? located_names : stream_names, located ? 1 : 0, a,
             &stream) < 0 ||
        (located && strided_py_as_location(a[0], "location", &loc) < 0))
        return NULL;
    strided_status status;
    CALL_ON_BUFFER(b, status,
                   kind == PREFETCH  ? strided_buffer_prefetch(b, loc, stream)
                   : kind == DISCARD ? strided_buffer_discard(b, stream)
                                     : strided_buffer_discard_prefetch(b, loc, stream));
    return status == STRIDED_OK ? Py_NewRef(Py_None) : NULL;
}

static PyObject *managed_prefetch(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                  PyObject *kwnames)
{
    return move_pages(self, "prefetch", PREFETCH, args, nargs, kwnames);
}

static PyObject *managed_discard(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames)
{
    return move_pages(self, "discard", DISCARD, args, nargs, kwnames);
}

static PyObject *managed_discard_prefetch(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                          PyObject *kwnames)
{
    return move_pages(self, "discard_prefetch", DISCARD_PREFETCH, args, nargs, kwnames);
}

/* The advised accessed-by locations as a tuple of location objects. */
static PyObject *managed_accessed_by_list(PyObject *self, PyObject *unused)
{
    (void)unused;
    strided_buffer *b = strided_py_buffer_of(self);
    strided_driver_info info;
    if (b == NULL)
        return NULL;
    strided_status status;
    Py_BEGIN_ALLOW_THREADS
    status = strided_driver_info_init(&info);
    Py_END_ALLOW_THREADS
    /* Managed memory without a driver (a resource's claim) is refused for
     * want of one by the query itself. */
    size_t capacity = status == STRIDED_OK ? (size_t)info.device_count + 1 : 1;
    strided_memory_location *locs = PyMem_Malloc(capacity * sizeof *locs);
    if (locs == NULL)
        return PyErr_NoMemory();
    size_t n = 0;
    CALL_ON_BUFFER(b, status, strided_buffer_accessed_by(b, locs, capacity, &n));
    PyObject *result = status == STRIDED_OK ? PyTuple_New((Py_ssize_t)n) : NULL;
    for (size_t i = 0; result != NULL && i < n; i++) {
        PyObject *item = strided_py_location_object(locs[i]);
        if (item == NULL)
            Py_CLEAR(result);
        else
            PyTuple_SET_ITEM(result, (Py_ssize_t)i, item);
    }
    PyMem_Free(locs);
    return result;
}

/* A location in any form, as the location object it stands for. */
static PyObject *managed_location(PyObject *self, PyObject *obj)
{
    (void)self;
    strided_memory_location loc;
    if (strided_py_as_location(obj, "location", &loc) < 0)
        return NULL;
    return strided_py_location_object(loc);
}

/* Advise (on true) or unadvise a location to keep a mapping. */
static PyObject *managed_advise_accessed_by(PyObject *self, PyObject *args)
{
    PyObject *obj;
    int on;
    strided_memory_location loc;
    strided_buffer *b = strided_py_buffer_of(self);
    if (b == NULL || !PyArg_ParseTuple(args, "Op:_advise_accessed_by", &obj, &on) ||
        strided_py_as_location(obj, "location", &loc) < 0)
        return NULL;
    strided_memory_advice advice = on ? STRIDED_ADVISE_SET_ACCESSED_BY
                                      : STRIDED_ADVISE_UNSET_ACCESSED_BY;
    strided_status status;
    CALL_ON_BUFFER(b, status, strided_buffer_advise(b, advice, loc));
    return status == STRIDED_OK ? Py_NewRef(Py_None) : NULL;
}

static PyObject *get_read_mostly(PyObject *self, void *closure)
{
    (void)closure;
    bool flag = false;
    strided_buffer *b = strided_py_buffer_of(self);
    if (b == NULL)
        return NULL;
    strided_status status;
    CALL_ON_BUFFER(b, status, strided_buffer_read_mostly(b, &flag));
    return status == STRIDED_OK ? PyBool_FromLong(flag) : NULL;
}

/* The deletion of a property that can only be set. */
static int refuse_delete(const char *name)
{
    PyErr_Format(PyExc_AttributeError, "cannot delete %s", name);
    return -1;
}

static int set_read_mostly(PyObject *self, PyObject *value, void *closure)
{
    (void)closure;
    if (value == NULL)
        return refuse_delete("read_mostly");
    strided_buffer *b = strided_py_buffer_of(self);
    int on = b ? PyObject_IsTrue(value) : -1;
    if (on < 0)
        return -1;
    strided_memory_location none = {STRIDED_LOCATION_NONE, -1};
    strided_memory_advice advice = on ? STRIDED_ADVISE_SET_READ_MOSTLY
                                      : STRIDED_ADVISE_UNSET_READ_MOSTLY;
    strided_status status;
    CALL_ON_BUFFER(b, status, strided_buffer_advise(b, advice, none));
    return status == STRIDED_OK ? 0 : -1;
}

static PyObject *get_preferred_location(PyObject *self, void *closure)
{
    (void)closure;
    strided_memory_location loc;
    strided_buffer *b = strided_py_buffer_of(self);
    if (b == NULL)
        return NULL;
    strided_status status;
    CALL_ON_BUFFER(b, status, strided_buffer_preferred_location(b, &loc));
    return status == STRIDED_OK ? strided_py_location_object(loc) : NULL;
}

static int set_preferred_location(PyObject *self, PyObject *value, void *closure)
{
    (void)closure;
    if (value == NULL)
        return refuse_delete("preferred_location");
    strided_memory_location loc;
    strided_buffer *b = strided_py_buffer_of(self);
    if (b == NULL || strided_py_as_location(value, "preferred_location", &loc) < 0)
        return -1;
    strided_memory_advice advice = loc.type == STRIDED_LOCATION_NONE
                                       ? STRIDED_ADVISE_UNSET_PREFERRED_LOCATION
                                       : STRIDED_ADVISE_SET_PREFERRED_LOCATION;
    strided_status status;
    CALL_ON_BUFFER(b, status, strided_buffer_advise(b, advice, loc));
    return status == STRIDED_OK ? 0 : -1;
}

/* The live set strided._access.AccessedBySetProxy(self). */
static PyObject *get_accessed_by(PyObject *self, void *closure)
{
    (void)closure;
    if (strided_py_buffer_of(self) == NULL)
        return NULL;
    PyObject *module = PyImport_ImportModule("strided._access");
    PyObject *proxy = module ? PyObject_CallMethod(module, "AccessedBySetProxy", "O", self) : NULL;
    Py_XDECREF(module);
    return proxy;
}

/* accessed_by = iterable: every location converted, then exactly those
 * advised (libstrided checks them all before the first advice). */
static int set_accessed_by(PyObject *self, PyObject *value, void *closure)
{
    (void)closure;
    if (value == NULL)
        return refuse_delete("accessed_by");
    strided_buffer *b = strided_py_buffer_of(self);
    PyObject *items = b ? PySequence_Fast(value, "accessed_by must be an iterable of locations")
                        : NULL;
    if (items == NULL)
        return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(items);
    strided_memory_location *locs = PyMem_Malloc((size_t)(n > 0 ? n : 1) * sizeof *locs);
    int rc = locs == NULL ? (PyErr_NoMemory(), -1) : 0;
    for (Py_ssize_t i = 0; rc == 0 && i < n; i++)
        rc = strided_py_as_location(PySequence_Fast_GET_ITEM(items, i), "accessed_by entries",
                                    &locs[i]);
    if (rc == 0) {
        strided_status status;
        CALL_ON_BUFFER(b, status, strided_buffer_set_accessed_by(b, locs, (size_t)n));
        rc = status == STRIDED_OK ? 0 : -1;
    }
    PyMem_Free(locs);
    Py_DECREF(items);
    return rc;
}

#define KW (METH_FASTCALL | METH_KEYWORDS)

static PyMethodDef managed_methods[] = {
    {"from_handle", (PyCFunction)(void (*)(void))managed_from_handle, KW | METH_CLASS,
     "from_handle($cls, /, ptr, size, mr=None, owner=None, *, stream=None)\n"
     "--\n"
     "\n"
     "A ManagedBuffer over managed memory that exists already.\n"
     "\n"
     "The same rules as Buffer.from_handle; the result is a ManagedBuffer, for\n"
     "its advice and page moves (which refuse memory that is not managed).\n"
     "\n"
     "Parameters\n"
     "----------\n"
     "ptr : int\n"
     "    The address of the memory.\n"
     "size : int\n"
     "    Its size in bytes.\n"
     "mr : MemoryResource, optional\n"
     "    The resource that owns the memory and frees it.\n"
     "owner : object, optional\n"
     "    An object kept alive for the memory; nothing is freed.\n"
     "stream : int or object with ``__cuda_stream__``, optional\n"
     "    With mr only: the deallocation stream.\n"
     "\n"
     "Returns\n"
     "-------\n"
     "ManagedBuffer\n"
     "\n"
     "Raises\n"
     "------\n"
     "TypeError, ValueError, OverflowError, RuntimeError\n"
     "    As Buffer.from_handle.\n"
     "\n"
     "Examples\n"
     "--------\n"
     ">>> import numpy as np\n"
     ">>> a = np.zeros(8, np.uint8)\n"
     ">>> buf = strided.ManagedBuffer.from_handle(a.ctypes.data, a.nbytes, owner=a)\n"
     ">>> type(buf).__name__, buf.is_managed\n"
     "('ManagedBuffer', False)"},
    {"prefetch", (PyCFunction)(void (*)(void))managed_prefetch, KW,
     "prefetch($self, /, location, *, stream)\n"
     "--\n"
     "\n"
     "Move the memory's pages to location, in stream order (cuMemPrefetchAsync).\n"
     "\n"
     "Parameters\n"
     "----------\n"
     "location : int, Device, Host, str or tuple\n"
     "    Where to: a device ordinal (-1: the host), an object with device_id (a\n"
     "    cuda.core Device), a cuda.core Host (its numa_id and is_numa_current), the\n"
     "    string ``\"host\"``, or a pair ``(type, id)`` as preferred_location\n"
     "    answers: ``(\"device\", 0)``, ``(\"host\", None)``, ``(\"host_numa\", 1)``,\n"
     "    ``(\"host_numa_current\", None)``.\n"
     "stream : int or object with ``__cuda_stream__``\n"
     "    Required, by keyword, and not None.\n"
     "\n"
     "Raises\n"
     "------\n"
     "TypeError\n"
     "    If stream is missing or None, or location is of none of these forms.\n"
     "ValueError\n"
     "    If the memory is not managed, location is None or names a device that\n"
     "    does not exist.\n"
     "NotImplementedError\n"
     "    For a host NUMA location on a driver older than CUDA 12.2.\n"
     "RuntimeError\n"
     "    If the Buffer is closed, or the CUDA driver fails.\n"
     "\n"
     "Examples\n"
     "--------\n"
     ">>> import strided\n"
     ">>> try:\n"
     "...     buf = strided.ManagedMemoryResource().allocate(4096)\n"
     "...     buf.prefetch(0, stream=2)\n"
     "... except RuntimeError:  # no CUDA driver here\n"
     "...     pass"},
    {"discard", (PyCFunction)(void (*)(void))managed_discard, KW,
     "discard($self, /, *, stream)\n"
     "--\n"
     "\n"
     "Discard the memory's contents in stream order (cuMemDiscardBatchAsync).\n"
     "\n"
     "Its pages are released without being migrated; their contents are\n"
     "undefined until written. Needs a CUDA 13.0 driver.\n"
     "\n"
     "Parameters\n"
     "----------\n"
     "stream : int or object with ``__cuda_stream__``\n"
     "    Required, by keyword, and not None.\n"
     "\n"
     "Raises\n"
     "------\n"
     "TypeError\n"
     "    If stream is missing or None.\n"
     "ValueError\n"
     "    If the memory is not managed.\n"
     "NotImplementedError\n"
     "    On a driver older than CUDA 13.0.\n"
     "RuntimeError\n"
     "    If the Buffer is closed, or the CUDA driver fails."},
    {"discard_prefetch", (PyCFunction)(void (*)(void))managed_discard_prefetch, KW,
     "discard_prefetch($self, /, location, *, stream)\n"
     "--\n"
     "\n"
     "Discard the memory's contents and prefetch its pages to location.\n"
     "\n"
     "In stream order (cuMemDiscardAndPrefetchBatchAsync): the pages become\n"
     "resident at location without their old contents being migrated. Needs a\n"
     "CUDA 13.0 driver.\n"
     "\n"
     "Parameters\n"
     "----------\n"
     "location : int, Device, Host, str or tuple\n"
     "    Where to, in the forms prefetch takes.\n"
     "stream : int or object with ``__cuda_stream__``\n"
     "    Required, by keyword, and not None.\n"
     "\n"
     "Raises\n"
     "------\n"
     "TypeError, ValueError, RuntimeError\n"
     "    As prefetch.\n"
     "NotImplementedError\n"
     "    On a driver older than CUDA 13.0."},
    {"_accessed_by", managed_accessed_by_list, METH_NOARGS,
     "_accessed_by($self, /)\n--\n\nThe advised accessed-by locations, a tuple (for the proxy)."},
    {"_location", managed_location, METH_O,
     "_location($self, location, /)\n--\n\nlocation in its (type, id) form (for the proxy)."},
    {"_advise_accessed_by", managed_advise_accessed_by, METH_VARARGS,
     "_advise_accessed_by($self, location, on, /)\n--\n\nAdvise or unadvise one location (for the "
     "proxy)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef managed_getset[] = {
    {"read_mostly", get_read_mostly, set_read_mostly,
     "Whether the memory is advised to be mostly read (cuMemAdvise READ_MOSTLY).\n"
     "\n"
     "Reading asks the driver (every page must be so advised); setting a truth\n"
     "value gives the advice or takes it back.",
     NULL},
    {"preferred_location", get_preferred_location, set_preferred_location,
     "Where the memory is advised to prefer to live, or None.\n"
     "\n"
     "Reading answers None or a pair ``(ManagedMemoryLocationType, id)``:\n"
     "``(DEVICE, ordinal)``, ``(HOST, None)``, ``(HOST_NUMA, node)`` (cuda.core\n"
     "answers a Device or Host). Setting takes a location in any form prefetch\n"
     "takes; None takes the advice back.",
     NULL},
    {"accessed_by", get_accessed_by, set_accessed_by,
     "The locations advised to keep a mapping to the memory: a live set.\n"
     "\n"
     "An AccessedBySetProxy, which asks the driver at every read and advises at\n"
     "every change; its items are pairs ``(ManagedMemoryLocationType, id)`` of\n"
     "devices and the host. Setting it to an iterable of locations (devices and\n"
     "the host, in any form prefetch takes) advises exactly those.",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject ManagedBufferType = {
    /* Kept as written: clang-format would join the next line to the macro. */
    /* clang-format off */
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "strided.ManagedBuffer",
    /* clang-format on */
    .tp_doc = "A Buffer of CUDA managed memory, with advice and page moves.\n"
              "\n"
              "ManagedMemoryResource.allocate() returns one, and\n"
              "ManagedBuffer.from_handle() wraps managed memory that exists already. Besides\n"
              "everything a Buffer has, it advises the driver how the memory is used\n"
              "(read_mostly, preferred_location, accessed_by: cuMemAdvise) and moves its\n"
              "pages in stream order (prefetch, discard, discard_prefetch). The class is\n"
              "cuda.core's ``ManagedBuffer``; locations are given as a device ordinal, a\n"
              "Device or Host of cuda.core, ``\"host\"`` or a pair ``(type, id)``, and read\n"
              "back as pairs. It cannot be subclassed.\n"
              "\n"
              "Examples\n"
              "--------\n"
              ">>> import strided\n"
              ">>> try:\n"
              "...     buf = strided.ManagedMemoryResource().allocate(4096)\n"
              "...     buf.read_mostly = True\n"
              "...     buf.preferred_location = 0\n"
              "...     buf.accessed_by.add(\"host\")\n"
              "... except RuntimeError:  # no CUDA driver here\n"
              "...     pass",
    /* The Buffer's size and garbage-collector slots are set and inherited
     * when the type is readied. */
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_methods = managed_methods,
    .tp_getset = managed_getset,
};

int strided_py_add_managed_buffer_type(PyObject *module)
{
    ManagedBufferType.tp_base = strided_py_buffer_type();
    ManagedBufferType.tp_basicsize = strided_py_buffer_type()->tp_basicsize;
    if (PyType_Ready(&ManagedBufferType) < 0)
        return -1;
    return PyModule_AddObjectRef(module, "ManagedBuffer", (PyObject *)&ManagedBufferType);
}
