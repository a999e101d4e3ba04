/*
 * resource_type.c: strided.MemoryResource and the built-in resources.
 *
 * MemoryResource is the base class of cuda.core's interface: allocate, deallocate and the four properties, which raise
 * TypeError until a subclass implements them. The built-in resources
 * (HostMemoryResource, PinnedMemoryResource, DeviceMemoryResource,
 * ManagedMemoryResource) are final subclasses that each hold one reference
 * to a libstrided resource and answer everything from it.
 *
 * Any other object with that interface, passed as mr= to Buffer.from_handle,
 * is wrapped in a libstrided resource (strided_py_resource_of) whose
 * deallocate calls obj.deallocate(ptr, size, stream=...) with the GIL held.
 *
 * Copy temporaries (copy_from's allocator=) come from
 * strided_py_allocating_resource_of: the built-in resources' own, or a
 * resource whose allocate calls obj.allocate(size, stream=<the copy's
 * stream>) and keeps the returned Buffer until libstrided gives the memory
 * back, then closes it on the deallocation stream.
 *
 * Ownership: a built-in resource object holds one reference to its C
 * resource, and every Buffer allocated from it one more (through the C
 * buffer), so the C resource outlives its allocations. A wrapper holds one
 * reference to the Python object, dropped by the wrapper's destroy when its
 * last buffer is released.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "strided_py.h"

typedef struct {
    PyObject_HEAD
    strided_memory_resource *res; /* NULL in subclasses written in Python */
} ResourceObject;

static PyTypeObject ResourceType;

#if PY_VERSION_HEX >= 0x030C0000
typedef struct {
    PyObject *exc;
} saved_error;

static void save_error(saved_error *e)
{
    e->exc = PyErr_GetRaisedException();
}

static void restore_error(saved_error *e)
{
    PyErr_SetRaisedException(e->exc);
}

#else
typedef struct {
    PyObject *type, *value, *tb;
} saved_error;

static void save_error(saved_error *e)
{
    PyErr_Fetch(&e->type, &e->value, &e->tb);
}

static void restore_error(saved_error *e)
{
    PyErr_Restore(e->type, e->value, e->tb);
}

#endif

static PyObject *deallocate_name; /* "deallocate" */
static PyObject *allocate_name;   /* "allocate" */
static PyObject *close_name;      /* "close" */
static PyObject *stream_kwnames; /* ("stream",) */

/* libstrided never allocates through a wrapper: Python resources allocate
 * in Python and hand the memory over with Buffer.from_handle(mr=...). */
static strided_status wrapper_allocate(void *self, size_t size, void *stream,
                                       void **out_ptr)
{
    (void)self;
    (void)size;
    (void)stream;
    (void)out_ptr;
    return STRIDED_ERR_UNSUPPORTED;
}

/* Call self.deallocate(ptr, size, stream=...). It cannot fail to anyone: an
 * exception becomes a RuntimeWarning (an unraisable-exception report when
 * warnings are errors), as cuda.core's CUDAWarning does. Once the
 * interpreter is out of reach the memory is leaked. */
static void wrapper_deallocate(void *self, void *ptr, size_t size, void *stream)
{
    if (!strided_py_can_call_python())
        return;
    PyGILState_STATE gil = PyGILState_Ensure();
    saved_error pending;
    save_error(&pending); /* the release may run while an exception unwinds */
    PyObject *mr = self;
    PyObject *ptr_obj = PyLong_FromVoidPtr(ptr);
    PyObject *size_obj = PyLong_FromSize_t(size);
    PyObject *stream_obj = strided_py_stream_object(stream);
    PyObject *result = NULL;
    if (ptr_obj != NULL && size_obj != NULL && stream_obj != NULL) {
        PyObject *args[] = {mr, ptr_obj, size_obj, stream_obj};
        result = PyObject_VectorcallMethod(deallocate_name, args, 3, stream_kwnames);
    }
    Py_XDECREF(ptr_obj);
    Py_XDECREF(size_obj);
    Py_XDECREF(stream_obj);
    if (result == NULL) {
        PyObject *exc = strided_py_take_exception();
        char address[32];
        snprintf(address, sizeof address, "0x%llx", (unsigned long long)(uintptr_t)ptr);
        if (PyErr_WarnFormat(PyExc_RuntimeWarning, 1,
                             "mr.deallocate(%s) failed during Buffer destruction; "
                             "the allocation may have leaked: %S",
                             address, exc ? exc : Py_None) < 0)
            PyErr_WriteUnraisable(mr);
        Py_XDECREF(exc);
    }
    Py_XDECREF(result);
    restore_error(&pending);
    PyGILState_Release(gil);
}

static void wrapper_destroy(void *self)
{
    if (!strided_py_can_call_python())
        return;
    PyGILState_STATE gil = PyGILState_Ensure();
    Py_DECREF((PyObject *)self);
    PyGILState_Release(gil);
}

static const strided_memory_resource_ops wrapper_ops = {
    .allocate = wrapper_allocate,
    .deallocate = wrapper_deallocate,
    .destroy = wrapper_destroy,
};

/* A boolean property; absent (AttributeError) gives missing when that is
 * 0 or 1, and is an error when it is -1. */
static int read_flag(PyObject *obj, const char *name, int missing, bool *out)
{
    PyObject *v = PyObject_GetAttrString(obj, name);
    if (v == NULL) {
        if (missing < 0 || !PyErr_ExceptionMatches(PyExc_AttributeError))
            return -1;
        PyErr_Clear();
        *out = missing;
        return 0;
    }
    int truth = PyObject_IsTrue(v);
    Py_DECREF(v);
    if (truth < 0)
        return -1;
    *out = truth;
    return 0;
}

/* device_id, or -1 when reading it raises an Exception: cuda.core's own
 * resources raise for memory bound to no device (a pinned resource's
 * "not bound to any GPU"), which is what -1 says. Other exceptions
 * (KeyboardInterrupt) propagate. */
static int read_device_id(PyObject *obj, int *out)
{
    PyObject *v = PyObject_GetAttrString(obj, "device_id");
    long id = -1;
    if (v != NULL) {
        id = PyLong_AsLong(v);
        Py_DECREF(v);
    }
    if (PyErr_Occurred()) {
        if (!PyErr_ExceptionMatches(PyExc_Exception))
            return -1;
        PyErr_Clear();
        id = -1;
    }
    *out = id < INT_MIN || id > INT_MAX ? -1 : (int)id;
    return 0;
}

/* A Python resource's properties, read once. An object without method or
 * one of the two required properties is not a memory resource, nor is a
 * class (its properties are descriptors, its methods unbound): TypeError
 * naming the argument (what). */
static int read_props(PyObject *obj, const char *what, PyObject *method,
                      strided_memory_resource_props *props)
{
    props->pooled = false;
    if (PyType_Check(obj)) {
        PyErr_Format(PyExc_TypeError,
                     "%s must be a memory resource, got the class %.200s (pass an instance)",
                     what, ((PyTypeObject *)obj)->tp_name);
        return -1;
    }
    PyObject *bound = PyObject_GetAttr(obj, method);
    if (bound == NULL ||
        read_flag(obj, "is_host_accessible", -1, &props->host_accessible) < 0 ||
        read_flag(obj, "is_device_accessible", -1, &props->device_accessible) < 0) {
        Py_XDECREF(bound);
        return strided_py_retype_attribute_error(
            "%s must be a memory resource (an object with %U(), is_host_accessible "
            "and is_device_accessible), got %.200s",
            what, method, Py_TYPE(obj)->tp_name);
    }
    Py_DECREF(bound);
    if (read_flag(obj, "is_managed", 0, &props->managed) < 0 ||
        read_device_id(obj, &props->device_id) < 0)
        return -1;
    return 0;
}

int strided_py_resource_of(PyObject *obj, strided_memory_resource **out)
{
    if (PyObject_TypeCheck(obj, &ResourceType) && ((ResourceObject *)obj)->res) {
        *out = strided_memory_resource_retain(((ResourceObject *)obj)->res);
        return 0;
    }
    strided_memory_resource_props props;
    if (read_props(obj, "mr", deallocate_name, &props) < 0)
        return -1;
    Py_INCREF(obj); /* the wrapper's, dropped by wrapper_destroy */
    strided_memory_resource *res;
    strided_status status = strided_memory_resource_create(&wrapper_ops, obj, &props, &res);
    if (status != STRIDED_OK) {
        strided_py_raise(status);
        Py_DECREF(obj); /* destroy is not called on failure */
        return -1;
    }
    *out = res;
    return 0;
}

static PyObject *not_implemented(const char *what)
{
    PyErr_Format(PyExc_TypeError, "MemoryResource.%s must be implemented by subclasses.",
                 what);
    return NULL;
}

static PyObject *base_allocate(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames)
{
    (void)self;
    (void)args;
    (void)nargs;
    (void)kwnames;
    return not_implemented("allocate");
}

static PyObject *base_deallocate(PyObject *self, PyObject *const *args,
                                 Py_ssize_t nargs, PyObject *kwnames)
{
    (void)self;
    (void)args;
    (void)nargs;
    (void)kwnames;
    return not_implemented("deallocate");
}

#define BASE_GETTER(name)                                               \
    static PyObject *base_get_##name(PyObject *self, void *closure)     \
    {                                                                   \
        (void)self;                                                     \
        (void)closure;                                                  \
        return not_implemented(#name);                                  \
    }
BASE_GETTER(device_id)
BASE_GETTER(is_device_accessible)
BASE_GETTER(is_host_accessible)
#undef BASE_GETTER

static PyObject *base_get_is_managed(PyObject *self, void *closure)
{
    (void)self;
    (void)closure;
    Py_RETURN_FALSE;
}

static void resource_dealloc(ResourceObject *self)
{
    strided_memory_resource_release(self->res);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

#define KW (METH_FASTCALL | METH_KEYWORDS)

static PyMethodDef base_methods[] = {
    {"allocate", (PyCFunction)(void (*)(void))base_allocate, KW,
     "allocate(size, stream=None)\n--\n\n"
     "Allocate size bytes on stream and return them as a Buffer whose "
     "memory_resource is this resource (typically "
     "Buffer.from_handle(ptr, size, mr=self))."},
    {"deallocate", (PyCFunction)(void (*)(void))base_deallocate, KW,
     "deallocate(ptr, size, stream=None)\n--\n\n"
     "Free memory that allocate() made. A Buffer calls it exactly once, when "
     "the last holder of its memory lets go, on whichever thread that is; "
     "stream is the deallocation stream (None: the legacy default stream). "
     "Exceptions become warnings."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef base_getset[] = {
    {"device_id", base_get_device_id, NULL,
     "The device the memory belongs to, -1 for none.", NULL},
    {"is_device_accessible", base_get_is_device_accessible, NULL,
     "Whether a CUDA device can reach the memory.", NULL},
    {"is_host_accessible", base_get_is_host_accessible, NULL,
     "Whether the host can reach the memory.", NULL},
    {"is_managed", base_get_is_managed, NULL,
     "Whether the memory is CUDA managed memory (default False).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject ResourceType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "strided.MemoryResource",
    .tp_doc = "The interface of memory resources: allocate(size, stream=None), "
              "deallocate(ptr, size, stream=None), device_id, "
              "is_device_accessible, is_host_accessible and is_managed.\n\n"
              "Subclass it (or write any class with these members) to give "
              "memory to Buffer.from_handle(ptr, size, mr=...); the properties "
              "are read once, when the Buffer is made.",
    .tp_basicsize = sizeof(ResourceObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_new = PyType_GenericNew,
    .tp_dealloc = (destructor)resource_dealloc,
    .tp_methods = base_methods,
    .tp_getset = base_getset,
};

static PyObject *resource_allocate(ResourceObject *self, PyObject *const *args,
                                   Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"size", "stream", NULL};
    PyObject *a[2];
    size_t size;
    void *stream;
    if (strided_py_bind_args("allocate", args, nargs, kwnames, names, 1, a) < 0 ||
        strided_py_as_size(a[0], "size", &size) < 0 || strided_py_as_stream(a[1], &stream) < 0)
        return NULL;
    strided_buffer *b;
    strided_status status;
    Py_BEGIN_ALLOW_THREADS
    status = strided_buffer_alloc(self->res, size, stream, &b);
    Py_END_ALLOW_THREADS
    if (status != STRIDED_OK)
        return strided_py_raise(status);
    return strided_py_buffer_new(b, (PyObject *)self, NULL);
}

/* Free memory this resource allocated, by adopting it into a buffer and
 * releasing that: the C library's one way to call a resource's
 * deallocate. */
static PyObject *resource_deallocate(ResourceObject *self, PyObject *const *args,
                                     Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"ptr", "size", "stream", NULL};
    PyObject *a[3];
    void *ptr, *stream;
    size_t size;
    if (strided_py_bind_args("deallocate", args, nargs, kwnames, names, 2, a) < 0 ||
        strided_py_as_address(a[0], "ptr", &ptr) < 0 ||
        strided_py_as_size(a[1], "size", &size) < 0 ||
        strided_py_as_stream(a[2], &stream) < 0)
        return NULL;
    strided_buffer *b;
    strided_status status = strided_buffer_wrap_resource(ptr, size, self->res, stream, &b);
    if (status != STRIDED_OK)
        return strided_py_raise(status);
    strided_py_release_buffer(b);
    Py_RETURN_NONE;
}

static PyObject *get_device_id(ResourceObject *self, void *closure)
{
    (void)closure;
    return PyLong_FromLong(strided_memory_resource_properties(self->res).device_id);
}

#define PROPS_FLAG_GETTER(name, field)                                          \
    static PyObject *get_##name(ResourceObject *self, void *closure)            \
    {                                                                           \
        (void)closure;                                                          \
        return PyBool_FromLong(strided_memory_resource_properties(self->res).field); \
    }
PROPS_FLAG_GETTER(is_device_accessible, device_accessible)
PROPS_FLAG_GETTER(is_host_accessible, host_accessible)
PROPS_FLAG_GETTER(is_managed, managed)
#undef PROPS_FLAG_GETTER

static PyObject *resource_repr(ResourceObject *self)
{
    const char *name = strrchr(Py_TYPE(self)->tp_name, '.');
    name = name ? name + 1 : Py_TYPE(self)->tp_name;
    return PyUnicode_FromFormat(
        "<%s device_id=%d>", name,
        strided_memory_resource_properties(self->res).device_id);
}

/* A new object of type holding res (taken); on failure res is released. */
static PyObject *resource_object(PyTypeObject *type, strided_memory_resource *res)
{
    ResourceObject *self = (ResourceObject *)type->tp_alloc(type, 0);
    if (self == NULL) {
        strided_memory_resource_release(res);
        return NULL;
    }
    self->res = res;
    return (PyObject *)self;
}

/* Creating a CUDA resource may load and initialize the driver: seconds, the
 * first time, without the GIL. */
#define CREATE_WITHOUT_GIL(status, call)                                        \
    do {                                                                        \
        Py_BEGIN_ALLOW_THREADS                                                  \
        (status) = (call);                                                      \
        Py_END_ALLOW_THREADS                                                    \
    } while (0)

static PyObject *host_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"alignment", NULL};
    PyObject *alignment_obj = NULL;
    size_t alignment = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:HostMemoryResource", names,
                                     &alignment_obj))
        return NULL;
    if (alignment_obj != NULL && strided_py_as_size(alignment_obj, "alignment", &alignment) < 0)
        return NULL;
    strided_memory_resource *res;
    strided_status status = strided_host_resource_create(alignment, &res);
    if (status != STRIDED_OK)
        return strided_py_raise(status);
    return resource_object(type, res);
}

static PyObject *pinned_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, ":PinnedMemoryResource", names))
        return NULL;
    strided_memory_resource *res;
    strided_status status;
    CREATE_WITHOUT_GIL(status, strided_pinned_resource_create(&res));
    if (status != STRIDED_OK)
        return strided_py_raise(status);
    return resource_object(type, res);
}

static PyObject *device_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"device_id", NULL};
    PyObject *device_obj;
    int device;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O:DeviceMemoryResource", names,
                                     &device_obj) ||
        strided_py_as_device_id(device_obj, "device_id", &device) < 0)
        return NULL;
    strided_memory_resource *res;
    strided_status status;
    CREATE_WITHOUT_GIL(status, strided_device_resource_create(device, &res));
    if (status != STRIDED_OK)
        return strided_py_raise(status);
    return resource_object(type, res);
}

static PyObject *managed_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"device_id", NULL};
    PyObject *device_obj = NULL;
    int device = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:ManagedMemoryResource", names,
                                     &device_obj) ||
        (device_obj != NULL && strided_py_as_device_id(device_obj, "device_id", &device) < 0))
        return NULL;
    strided_memory_resource *res;
    strided_status status;
    CREATE_WITHOUT_GIL(status, strided_managed_resource_create(device, &res));
    if (status != STRIDED_OK)
        return strided_py_raise(status);
    return resource_object(type, res);
}

static PyMethodDef builtin_methods[] = {
    {"allocate", (PyCFunction)(void (*)(void))resource_allocate, KW,
     "allocate(size, stream=None)\n--\n\n"
     "A new Buffer of size bytes from this resource; stream (None: the legacy "
     "default stream, an int handle, or an object with __cuda_stream__) "
     "orders the allocation and becomes the Buffer's deallocation stream."},
    {"deallocate", (PyCFunction)(void (*)(void))resource_deallocate, KW,
     "deallocate(ptr, size, stream=None)\n--\n\n"
     "Free memory this resource allocated and no Buffer holds."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef builtin_getset[] = {
    {"device_id", (getter)get_device_id, NULL,
     "The device the memory belongs to, -1 for none.", NULL},
    {"is_device_accessible", (getter)get_is_device_accessible, NULL,
     "Whether a CUDA device can reach the memory.", NULL},
    {"is_host_accessible", (getter)get_is_host_accessible, NULL,
     "Whether the host can reach the memory.", NULL},
    {"is_managed", (getter)get_is_managed, NULL,
     "Whether the memory is CUDA managed memory.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

#define BUILTIN_TYPE(var, name, new_fn, doc)                                    \
    static PyTypeObject var = {                                                 \
        PyVarObject_HEAD_INIT(NULL, 0)                                          \
        .tp_name = "strided." name,                                             \
        .tp_doc = doc,                                                          \
        .tp_basicsize = sizeof(ResourceObject),                                 \
        .tp_flags = Py_TPFLAGS_DEFAULT,                                         \
        .tp_base = &ResourceType,                                               \
        .tp_new = new_fn,                                                       \
        .tp_dealloc = (destructor)resource_dealloc,                             \
        .tp_repr = (reprfunc)resource_repr,                                     \
        .tp_methods = builtin_methods,                                          \
        .tp_getset = builtin_getset,                                            \
    }

BUILTIN_TYPE(HostType, "HostMemoryResource", host_new,
             "HostMemoryResource(alignment=0)\n--\n\n"
             "Pageable host memory aligned to alignment bytes (a power of two; 0 "
             "means 64). Never touches CUDA.");
BUILTIN_TYPE(PinnedType, "PinnedMemoryResource", pinned_new,
             "PinnedMemoryResource()\n--\n\n"
             "Page-locked host memory reachable from every device "
             "(cuMemHostAlloc); device_id is -1. Raises RuntimeError without a "
             "CUDA driver.");
BUILTIN_TYPE(DeviceType, "DeviceMemoryResource", device_new,
             "DeviceMemoryResource(device_id)\n--\n\n"
             "Device memory from the device's current memory pool, allocated and "
             "freed in stream order. Raises RuntimeError without a CUDA driver, "
             "ValueError for a device that does not exist.");
BUILTIN_TYPE(ManagedType, "ManagedMemoryResource", managed_new,
             "ManagedMemoryResource(device_id=0)\n--\n\n"
             "CUDA managed memory (cuMemAllocManaged, attached globally), "
             "allocated with device_id's primary context current. Raises "
             "RuntimeError without a CUDA driver.");

int strided_py_add_resource_types(PyObject *module)
{
    if (deallocate_name == NULL) {
        deallocate_name = PyUnicode_InternFromString("deallocate");
        if (deallocate_name == NULL)
            return -1;
    }
    if (allocate_name == NULL) {
        allocate_name = PyUnicode_InternFromString("allocate");
        close_name = PyUnicode_InternFromString("close");
        if (allocate_name == NULL || close_name == NULL)
            return -1;
    }
    if (stream_kwnames == NULL) {
        stream_kwnames = Py_BuildValue("(s)", "stream");
        if (stream_kwnames == NULL)
            return -1;
    }
    PyTypeObject *types[] = {&ResourceType, &HostType, &PinnedType, &DeviceType,
                             &ManagedType};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        const char *name = strrchr(types[i]->tp_name, '.') + 1;
        if (PyType_Ready(types[i]) < 0 ||
            PyModule_AddObjectRef(module, name, (PyObject *)types[i]) < 0)
            return -1;
    }
    return 0;
}

/* One allocation handed to libstrided: the object allocate() returned, kept
 * until libstrided gives the memory back. */
typedef struct held_allocation {
    struct held_allocation *next;
    void *ptr;
    size_t size;       /* obj.size: what libstrided checks the request against */
    PyObject *buffer;
} held_allocation;

/* self of an allocating wrapper. */
typedef struct {
    PyObject *mr;
    PyObject *stream; /* passed to allocate(); the copy's own stream object */
    held_allocation *held;
    PyObject *error;  /* the first exception allocate() raised, or NULL */
} allocating;

/* The address and size of the Buffer-like object that allocate()
 * returned: int(obj.handle) and obj.size (a strided or cuda.core Buffer),
 * refused when obj.is_closed says so. libstrided checks the size against
 * the request (allocating_size) before it writes a byte. */
static int allocation_of(PyObject *buffer, void **out_ptr, size_t *out_size)
{
    PyObject *closed = PyObject_GetAttrString(buffer, "is_closed");
    int is_closed = 0;
    if (closed == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError))
            return -1;
        PyErr_Clear();
    } else {
        is_closed = PyObject_IsTrue(closed);
        Py_DECREF(closed);
        if (is_closed < 0)
            return -1;
    }
    if (is_closed) {
        PyErr_Format(PyExc_ValueError, "allocator.allocate() returned a closed %.200s",
                     Py_TYPE(buffer)->tp_name);
        return -1;
    }
    PyObject *handle = PyObject_GetAttrString(buffer, "handle");
    PyObject *size = handle ? PyObject_GetAttrString(buffer, "size") : NULL;
    if (size == NULL) {
        Py_XDECREF(handle);
        return strided_py_retype_attribute_error(
            "allocator.allocate() must return a Buffer (an object with handle and size), "
            "got %.200s",
            Py_TYPE(buffer)->tp_name);
    }
    int rc = strided_py_as_address(handle, "allocator.allocate().handle", out_ptr);
    if (rc == 0)
        rc = strided_py_as_size(size, "allocator.allocate().size", out_size);
    Py_DECREF(handle);
    Py_DECREF(size);
    return rc;
}

static strided_status allocating_allocate(void *self, size_t size, void *stream,
                                          void **out_ptr)
{
    (void)stream; /* the Python stream object stands for it */
    allocating *a = self;
    if (!strided_py_can_call_python()) {
        strided_set_last_error(STRIDED_ERR_UNSUPPORTED, "copy",
                               "the allocator cannot be called while Python shuts down");
        return STRIDED_ERR_UNSUPPORTED;
    }
    PyGILState_STATE gil = PyGILState_Ensure();
    strided_status status = STRIDED_ERR_OUT_OF_MEMORY;
    PyObject *size_obj = PyLong_FromSize_t(size);
    PyObject *buffer = NULL;
    held_allocation *h = NULL;
    void *ptr = NULL;
    size_t granted = 0;
    if (size_obj != NULL) {
        PyObject *args[] = {a->mr, size_obj, a->stream};
        buffer = PyObject_VectorcallMethod(allocate_name, args, 2, stream_kwnames);
    }
    Py_XDECREF(size_obj);
    if (buffer != NULL && allocation_of(buffer, &ptr, &granted) == 0) {
        h = PyMem_RawMalloc(sizeof *h);
        if (h == NULL)
            PyErr_NoMemory();
    }
    if (h != NULL) {
        *h = (held_allocation){a->held, ptr, granted, buffer};
        a->held = h;
        *out_ptr = ptr;
        status = STRIDED_OK;
    } else {
        Py_XDECREF(buffer);
        PyObject *exc = strided_py_take_exception();
        strided_set_last_error(status, "copy", "allocator.allocate(%zu) failed", size);
        if (a->error == NULL)
            a->error = exc;
        else
            Py_XDECREF(exc);
    }
    PyGILState_Release(gil);
    return status;
}

/* Let go of the allocate() result: close(stream) when it has one (cuda.core
 * and strided Buffers free their memory in stream order then). */
static void allocating_deallocate(void *self, void *ptr, size_t size, void *stream)
{
    (void)size;
    allocating *a = self;
    if (!strided_py_can_call_python())
        return;
    PyGILState_STATE gil = PyGILState_Ensure();
    saved_error pending;
    save_error(&pending);
    held_allocation **link = &a->held;
    while (*link != NULL && (*link)->ptr != ptr)
        link = &(*link)->next;
    held_allocation *h = *link;
    if (h != NULL) {
        *link = h->next;
        PyObject *stream_obj = strided_py_stream_object(stream);
        PyObject *result = NULL;
        if (stream_obj != NULL && PyObject_HasAttr(h->buffer, close_name)) {
            PyObject *args[] = {h->buffer, stream_obj};
            result = PyObject_VectorcallMethod(close_name, args, 2, NULL);
            if (result == NULL)
                PyErr_WriteUnraisable(h->buffer);
        }
        PyErr_Clear();
        Py_XDECREF(result);
        Py_XDECREF(stream_obj);
        Py_DECREF(h->buffer);
        PyMem_RawFree(h);
    }
    restore_error(&pending);
    PyGILState_Release(gil);
}

static void allocating_destroy(void *self)
{
    allocating *a = self;
    if (strided_py_can_call_python()) {
        PyGILState_STATE gil = PyGILState_Ensure();
        Py_XDECREF(a->mr);
        Py_XDECREF(a->stream);
        Py_XDECREF(a->error);
        PyGILState_Release(gil);
    }
    PyMem_RawFree(a);
}

/* The size of the Buffer that allocate() returned for ptr, as read then;
 * called right after allocating_allocate, with the GIL not held. The list
 * is this copy's own, touched by one thread at a time. */
static size_t allocating_size(void *self, void *ptr, size_t size)
{
    (void)size;
    allocating *a = self;
    for (held_allocation *h = a->held; h != NULL; h = h->next)
        if (h->ptr == ptr)
            return h->size;
    return 0;
}

static const strided_memory_resource_ops allocating_ops = {
    .allocate = allocating_allocate,
    .deallocate = allocating_deallocate,
    .destroy = allocating_destroy,
    .allocation_size = allocating_size,
};

int strided_py_allocating_resource_of(PyObject *obj, const char *what, PyObject *stream,
                                      strided_memory_resource **out, bool *calls_python)
{
    *calls_python = false;
    if (PyObject_TypeCheck(obj, &ResourceType) && ((ResourceObject *)obj)->res) {
        *out = strided_memory_resource_retain(((ResourceObject *)obj)->res);
        return 0;
    }
    strided_memory_resource_props props;
    if (read_props(obj, what, allocate_name, &props) < 0)
        return -1;
    allocating *a = PyMem_RawMalloc(sizeof *a);
    if (a == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    Py_INCREF(obj);
    Py_INCREF(stream);
    *a = (allocating){obj, stream, NULL, NULL};
    strided_status status = strided_memory_resource_create(&allocating_ops, a, &props, out);
    if (status != STRIDED_OK) {
        Py_DECREF(obj);
        Py_DECREF(stream);
        PyMem_RawFree(a);
        strided_py_raise(status);
        return -1;
    }
    *calls_python = true;
    return 0;
}

PyObject *strided_py_allocating_error(strided_memory_resource *mr)
{
    allocating *a = strided_memory_resource_self(mr);
    PyObject *exc = a->error;
    a->error = NULL;
    return exc;
}
