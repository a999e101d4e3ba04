/*
 * resource_type.c: strided.MemoryResource and the built-in resources.
 *
 * MemoryResource is the base class of cuda.core's interface: allocate,
 * deallocate and the four properties, which raise TypeError until a
 * subclass implements them. The built-in resources (HostMemoryResource,
 * PinnedMemoryResource, LegacyPinnedMemoryResource, DeviceMemoryResource,
 * ManagedMemoryResource) are final subclasses that each hold one reference
 * to a libstrided resource and answer everything from it. The three pool
 * resources take cuda.core's options (strided._options: the classes, and
 * None or a dict in their place), read their fields and hand them to the
 * C create functions, which hold the rules; they also have close(),
 * is_closed, the pool's handle and attributes (_MemPoolAttributes) and
 * cuda.core's IPC properties (is_ipc_enabled, is_mapped, uuid).
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
 * Streams handed to Python objects are None or the int handle, except for
 * cuda.core's objects (a class of the cuda.core package, or one derived
 * from it), whose methods take only a cuda.core Stream: they get one,
 * made with cuda.core.Stream.from_handle (cuda.core is imported then, never
 * before).
 *
 * Ownership: a built-in resource object holds one reference to its C
 * resource, and every Buffer allocated from it one more (through the C
 * buffer), so the C resource outlives its allocations; its
 * _MemPoolAttributes holds one more. A wrapper holds one reference to the
 * Python object, dropped by the wrapper's destroy when its last buffer is
 * released.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "strided_py.h"

typedef struct {
    PyObject_HEAD
    strided_memory_resource *res; /* NULL in subclasses written in Python */
    PyObject *attributes;         /* the pool's _MemPoolAttributes, once asked */
    PyObject *alloc_handle;       /* the pool's IPCAllocationHandle, once asked */
    PyObject *weakrefs;           /* the IPC registry holds mapped resources weakly */
} ResourceObject;

static PyTypeObject ResourceType;
static PyTypeObject ManagedType;
static PyTypeObject DeviceType;
static PyTypeObject PinnedType;

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
static PyObject *stream_kwnames;  /* ("stream",) */

/* Whether obj's class, or a class it derives from, comes from the
 * cuda.core package: its allocate, deallocate and close take only a
 * cuda.core Stream (never None, an int or another __cuda_stream__ object).
 * False when the classes cannot say. */
static bool from_cuda_core(PyObject *obj)
{
    PyObject *mro = Py_TYPE(obj)->tp_mro;
    for (Py_ssize_t i = 0; mro != NULL && i < PyTuple_GET_SIZE(mro); i++) {
        PyObject *module = PyObject_GetAttrString(PyTuple_GET_ITEM(mro, i), "__module__");
        const char *name = module != NULL && PyUnicode_Check(module) ? PyUnicode_AsUTF8(module)
                                                                     : NULL;
        bool hit = name != NULL && strncmp(name, "cuda.core", 9) == 0 &&
                   (name[9] == '\0' || name[9] == '.');
        Py_XDECREF(module);
        PyErr_Clear();
        if (hit)
            return true;
    }
    return false;
}

/* The cuda.core Stream for CUstream stream (new reference): its
 * LEGACY_DEFAULT_STREAM for the legacy default stream (NULL or 1), its
 * PER_THREAD_DEFAULT_STREAM for 2, else Stream.from_handle(stream).
 * cuda.core is imported here, only when one of its objects needs a stream:
 * strided does not depend on it. NULL with an exception set. */
static PyObject *cuda_core_stream(void *stream)
{
    PyObject *core = PyImport_ImportModule("cuda.core");
    if (core == NULL)
        return NULL;
    uintptr_t handle = (uintptr_t)stream;
    PyObject *result;
    if (handle == 0 || handle == 1 || handle == 2) {
        result = PyObject_GetAttrString(core, handle == 2 ? "PER_THREAD_DEFAULT_STREAM"
                                                          : "LEGACY_DEFAULT_STREAM");
    } else {
        PyObject *cls = PyObject_GetAttrString(core, "Stream");
        PyObject *h = cls ? PyLong_FromVoidPtr(stream) : NULL;
        result = h ? PyObject_CallMethod(cls, "from_handle", "O", h) : NULL;
        Py_XDECREF(h);
        Py_XDECREF(cls);
    }
    Py_DECREF(core);
    return result;
}

/* The stream argument of a call into a Python resource or Buffer for
 * CUstream stream (new reference): a cuda.core Stream for cuda.core's
 * objects (cuda_core true), else None or the int handle. */
static PyObject *stream_argument(bool cuda_core, void *stream)
{
    return cuda_core ? cuda_core_stream(stream) : strided_py_stream_object(stream);
}

PyObject *strided_py_resource_stream(PyObject *resource, PyObject *stream)
{
    if (!from_cuda_core(resource) || from_cuda_core(stream))
        return Py_NewRef(stream);
    void *handle = NULL;
    if (strided_py_as_stream(stream, &handle) < 0)
        return NULL;
    return cuda_core_stream(handle);
}

/* libstrided never allocates through a wrapper: Python resources allocate
 * in Python and hand the memory over with Buffer.from_handle(mr=...). */
static strided_status wrapper_allocate(void *self, size_t size, void *stream, void **out_ptr)
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
    PyObject *stream_obj = stream_argument(from_cuda_core(mr), stream);
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
                     "%s must be a memory resource, got the class %.200s (pass an instance)", what,
                     ((PyTypeObject *)obj)->tp_name);
        return -1;
    }
    PyObject *bound = PyObject_GetAttr(obj, method);
    if (bound == NULL || read_flag(obj, "is_host_accessible", -1, &props->host_accessible) < 0 ||
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
    PyErr_Format(PyExc_TypeError, "MemoryResource.%s must be implemented by subclasses.", what);
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

static PyObject *base_deallocate(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames)
{
    (void)self;
    (void)args;
    (void)nargs;
    (void)kwnames;
    return not_implemented("deallocate");
}

#define BASE_GETTER(name)                                           \
    static PyObject *base_get_##name(PyObject *self, void *closure) \
    {                                                               \
        (void)self;                                                 \
        (void)closure;                                              \
        return not_implemented(#name);                              \
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
    if (self->weakrefs != NULL)
        PyObject_ClearWeakRefs((PyObject *)self);
    Py_XDECREF(self->attributes);
    Py_XDECREF(self->alloc_handle);
    strided_memory_resource_release(self->res);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

#define KW (METH_FASTCALL | METH_KEYWORDS)

static PyMethodDef base_methods[] = {
    {"allocate", (PyCFunction)(void (*)(void))base_allocate, KW,
     "allocate($self, /, size, stream=None)\n"
     "--\n"
     "\n"
     "Allocate memory and return it as a Buffer; implemented by subclasses.\n"
     "\n"
     "A subclass typically allocates size bytes and returns\n"
     "``Buffer.from_handle(ptr, size, mr=self)``, so that deallocate() frees\n"
     "them when the last holder of the memory lets go.\n"
     "\n"
     "Parameters\n"
     "----------\n"
     "size : int\n"
     "    The number of bytes.\n"
     "stream : int or object with ``__cuda_stream__``, optional\n"
     "    The stream that orders the allocation, and the Buffer's deallocation\n"
     "    stream: None (the legacy default stream), an int handle, or an object\n"
     "    with ``__cuda_stream__`` (a cuda.core Stream).\n"
     "\n"
     "Returns\n"
     "-------\n"
     "Buffer\n"
     "\n"
     "Raises\n"
     "------\n"
     "TypeError\n"
     "    Always, in this base class."},
    {"deallocate", (PyCFunction)(void (*)(void))base_deallocate, KW,
     "deallocate($self, /, ptr, size, stream=None)\n"
     "--\n"
     "\n"
     "Free memory that allocate() made; implemented by subclasses.\n"
     "\n"
     "A Buffer made with ``mr=self`` calls it exactly once, as\n"
     "``deallocate(ptr, size, stream=...)``, when the last holder of its memory\n"
     "lets go, on whichever thread that is; an exception it raises becomes a\n"
     "RuntimeWarning.\n"
     "\n"
     "Parameters\n"
     "----------\n"
     "ptr : int\n"
     "    The address allocate() gave.\n"
     "size : int\n"
     "    The number of bytes.\n"
     "stream : int, optional\n"
     "    The deallocation stream: None (the legacy default stream) or an int\n"
     "    handle (a cuda.core Stream for cuda.core's resources).\n"
     "\n"
     "Raises\n"
     "------\n"
     "TypeError\n"
     "    Always, in this base class."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef base_getset[] = {
    {"device_id", base_get_device_id, NULL,
     "The device the memory belongs to, -1 for none.\n"
     "\n"
     "Raises TypeError in this base class: a subclass implements it.",
     NULL},
    {"is_device_accessible", base_get_is_device_accessible, NULL,
     "Whether a CUDA device can reach the memory.\n"
     "\n"
     "Raises TypeError in this base class: a subclass implements it.",
     NULL},
    {"is_host_accessible", base_get_is_host_accessible, NULL,
     "Whether the host can reach the memory.\n"
     "\n"
     "Raises TypeError in this base class: a subclass implements it.",
     NULL},
    {"is_managed", base_get_is_managed, NULL,
     "Whether the memory is CUDA managed memory (False unless a subclass says\n"
     "otherwise).",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject ResourceType = {
    /* Kept as written: clang-format would join the next line to the macro. */
    /* clang-format off */
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "strided.MemoryResource",
    /* clang-format on */
    .tp_doc = "The interface of memory resources, and the base class of the built-in ones.\n"
              "\n"
              "A memory resource allocates Buffers: allocate(size, stream=None),\n"
              "deallocate(ptr, size, stream=None), and the properties device_id,\n"
              "is_device_accessible, is_host_accessible and is_managed. The methods and\n"
              "properties of this class raise TypeError (is_managed is False): a subclass\n"
              "implements them. Subclass it (or write any class with these members) to\n"
              "give memory to ``Buffer.from_handle(ptr, size, mr=...)``, or to serve the\n"
              "temporaries of StridedMemoryView.copy_from; the properties are read once,\n"
              "when the Buffer is made. The class is cuda.core's ``MemoryResource``.\n"
              "\n"
              "Examples\n"
              "--------\n"
              ">>> import numpy as np\n"
              ">>> import strided\n"
              ">>> class NumpyResource(strided.MemoryResource):\n"
              "...     is_host_accessible, is_device_accessible, device_id = True, False, -1\n"
              "...     def __init__(self):\n"
              "...         self.arrays = {}\n"
              "...     def allocate(self, size, stream=None):\n"
              "...         a = np.empty(size, np.uint8)\n"
              "...         self.arrays[a.ctypes.data] = a\n"
              "...         return strided.Buffer.from_handle(a.ctypes.data, size, mr=self)\n"
              "...     def deallocate(self, ptr, size, stream=None):\n"
              "...         del self.arrays[ptr]\n"
              ">>> mr = NumpyResource()\n"
              ">>> buf = mr.allocate(16)\n"
              ">>> len(mr.arrays), buf.memory_resource is mr\n"
              "(1, True)\n"
              ">>> buf.close()\n"
              ">>> len(mr.arrays)\n"
              "0",
    .tp_basicsize = sizeof(ResourceObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_new = PyType_GenericNew,
    .tp_dealloc = (destructor)resource_dealloc,
    .tp_weaklistoffset = offsetof(ResourceObject, weakrefs),
    .tp_methods = base_methods,
    .tp_getset = base_getset,
};

/* Raise the exception for a failed call on the built-in resource res: a
 * closed resource is cuda.core's RuntimeError ("DeviceMemoryResource has
 * been closed"), anything else the status's. */
static PyObject *raise_for(const strided_memory_resource *res, strided_status status)
{
    if (status == STRIDED_ERR_INVALID_ARGUMENT && strided_memory_resource_is_closed(res)) {
        PyErr_SetString(PyExc_RuntimeError, strided_last_error_reason());
        return NULL;
    }
    /* cuda.core's type for allocating from a mapped pool. */
    if (status == STRIDED_ERR_INVALID_ARGUMENT && strided_memory_resource_is_mapped(res)) {
        PyErr_SetString(PyExc_TypeError, strided_last_error_reason());
        return NULL;
    }
    return strided_py_raise(status);
}

static PyObject *resource_allocate(ResourceObject *self, PyObject *const *args, Py_ssize_t nargs,
                                   PyObject *kwnames)
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
        return raise_for(self->res, status);
    /* cuda.core's ManagedMemoryResource hands out ManagedBuffers. */
    if (Py_TYPE(self) == &ManagedType)
        return strided_py_managed_buffer_new(b, (PyObject *)self);
    return strided_py_buffer_new(b, (PyObject *)self, NULL);
}

/* Free memory this resource allocated, by adopting it into a buffer and
 * releasing that: the C library's one way to call a resource's
 * deallocate. It works on a closed resource too, as cuda.core's. */
static PyObject *resource_deallocate(ResourceObject *self, PyObject *const *args, Py_ssize_t nargs,
                                     PyObject *kwnames)
{
    static const char *const names[] = {"ptr", "size", "stream", NULL};
    PyObject *a[3];
    void *ptr, *stream;
    size_t size;
    if (strided_py_bind_args("deallocate", args, nargs, kwnames, names, 2, a) < 0 ||
        strided_py_as_address(a[0], "ptr", &ptr) < 0 ||
        strided_py_as_size(a[1], "size", &size) < 0 || strided_py_as_stream(a[2], &stream) < 0)
        return NULL;
    strided_buffer *b;
    strided_status status = strided_buffer_wrap_resource(ptr, size, self->res, stream, &b);
    if (status != STRIDED_OK)
        return strided_py_raise(status);
    strided_py_release_buffer(b);
    Py_RETURN_NONE;
}

static PyObject *resource_close(ResourceObject *self, PyObject *unused)
{
    (void)unused;
    strided_status status;
    Py_BEGIN_ALLOW_THREADS
    status = strided_memory_resource_close(self->res);
    Py_END_ALLOW_THREADS
    if (status != STRIDED_OK)
        return strided_py_raise(status);
    Py_RETURN_NONE;
}

static PyObject *get_device_id(ResourceObject *self, void *closure)
{
    (void)closure;
    return PyLong_FromLong(strided_memory_resource_properties(self->res).device_id);
}

#define PROPS_FLAG_GETTER(name, field)                                               \
    static PyObject *get_##name(ResourceObject *self, void *closure)                 \
    {                                                                                \
        (void)closure;                                                               \
        return PyBool_FromLong(strided_memory_resource_properties(self->res).field); \
    }
PROPS_FLAG_GETTER(is_device_accessible, device_accessible)
PROPS_FLAG_GETTER(is_host_accessible, host_accessible)
PROPS_FLAG_GETTER(is_managed, managed)
#undef PROPS_FLAG_GETTER

/* A property that always is the object value (False, None). */
/* A property that always raises RuntimeError(message), in cuda.core's
 * words: a legacy pinned resource's device_id, a pool's allocation_handle. */
static PyObject *get_runtime_error(ResourceObject *self, void *message)
{
    (void)self;
    PyErr_SetString(PyExc_RuntimeError, message);
    return NULL;
}

static PyObject *get_is_closed(ResourceObject *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(strided_memory_resource_is_closed(self->res));
}

static PyObject *get_is_handle_owned(ResourceObject *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(strided_memory_resource_pool(self->res).owned);
}

static PyObject *get_handle(ResourceObject *self, void *closure)
{
    (void)closure;
    return PyLong_FromVoidPtr(strided_memory_resource_pool(self->res).handle);
}

static PyObject *get_is_ipc_enabled(ResourceObject *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(strided_memory_resource_is_ipc_enabled(self->res));
}

static PyObject *get_is_mapped(ResourceObject *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(strided_memory_resource_is_mapped(self->res));
}

/* uuid.UUID(bytes=<the pool's identity>), or None. */
static PyObject *get_uuid(ResourceObject *self, void *closure)
{
    unsigned char id[STRIDED_IPC_POOL_ID_SIZE];
    (void)closure;
    if (!strided_memory_resource_pool_id(self->res, id))
        Py_RETURN_NONE;
    PyObject *module = PyImport_ImportModule("uuid");
    if (module == NULL)
        return NULL;
    PyObject *cls = PyObject_GetAttrString(module, "UUID");
    Py_DECREF(module);
    if (cls == NULL)
        return NULL;
    PyObject *args = PyTuple_New(0);
    PyObject *kwargs = Py_BuildValue("{s:y#}", "bytes", (const char *)id, (Py_ssize_t)sizeof id);
    PyObject *uuid = args != NULL && kwargs != NULL ? PyObject_Call(cls, args, kwargs) : NULL;
    Py_XDECREF(args);
    Py_XDECREF(kwargs);
    Py_DECREF(cls);
    return uuid;
}

static PyObject *resource_object(PyTypeObject *type, strided_memory_resource *res);

PyObject *strided_py_ipc_payload(PyObject *descriptor, const char *cls, const char *arg)
{
    PyObject *type = strided_py_ipc_helper(cls);
    if (type == NULL)
        return NULL;
    int ok = PyObject_IsInstance(descriptor, type);
    Py_DECREF(type);
    if (ok <= 0) {
        if (ok == 0)
            PyErr_Format(PyExc_TypeError,
                         "Argument '%s' has incorrect type (expected %s, got %.200s)", arg, cls,
                         Py_TYPE(descriptor)->tp_name);
        return NULL;
    }
    PyObject *payload = PyObject_GetAttrString(descriptor, "_payload");
    if (payload != NULL && !PyBytes_Check(payload)) {
        Py_SETREF(payload, NULL);
        PyErr_SetString(PyExc_TypeError, "the descriptor's payload must be bytes");
    }
    return payload;
}

PyObject *strided_py_ipc_helper(const char *name)
{
    static PyObject *module;
    if (module == NULL && (module = PyImport_ImportModule("strided._ipc")) == NULL)
        return NULL;
    return PyObject_GetAttrString(module, name);
}

/* The pool's IPCAllocationHandle: made once, from a file descriptor the
 * C library exports, and owned by the resource (cuda.core caches it). */
static PyObject *get_allocation_handle(ResourceObject *self, void *closure)
{
    (void)closure;
    if (self->alloc_handle != NULL)
        return Py_NewRef(self->alloc_handle);
    int fd = -1;
    strided_status status = strided_memory_resource_export_pool(self->res, &fd);
    if (status != STRIDED_OK)
        return strided_py_raise_at(status, STRIDED_PY_IPC);
    PyObject *cls = strided_py_ipc_helper("IPCAllocationHandle");
    PyObject *uuid = cls == NULL ? NULL : get_uuid(self, NULL);
    PyObject *handle = uuid == NULL
                           ? NULL
                           : PyObject_CallMethod(cls, "_init", "iOs", fd, uuid,
                                                 Py_TYPE(self)->tp_name + strlen("strided."));
    Py_XDECREF(uuid);
    Py_XDECREF(cls);
    if (handle == NULL) {
        close(fd);
        return NULL;
    }
    self->alloc_handle = Py_NewRef(handle);
    return handle;
}

/* cls._import_pool(device_id, fd, uuid_bytes): import a pool another
 * process exported, as a mapped resource of cls (DeviceMemoryResource on
 * device_id, PinnedMemoryResource with device_id None). */
static PyObject *resource_import_pool(PyTypeObject *cls, PyObject *args)
{
    PyObject *device_obj, *id_obj;
    int fd, device = 0;
    if (!PyArg_ParseTuple(args, "OiO:_import_pool", &device_obj, &fd, &id_obj))
        return NULL;
    bool pinned = cls == &PinnedType;
    if (pinned && device_obj != Py_None) {
        PyErr_SetString(PyExc_TypeError, "a pinned pool has no device: device_id must be None");
        return NULL;
    }
    if (!pinned && strided_py_as_device_id(device_obj, "device_id", &device) < 0)
        return NULL;
    const unsigned char *id = NULL;
    if (id_obj != Py_None) {
        if (!PyBytes_Check(id_obj) || PyBytes_GET_SIZE(id_obj) != STRIDED_IPC_POOL_ID_SIZE) {
            PyErr_SetString(PyExc_TypeError, "the pool's identity must be 16 bytes or None");
            return NULL;
        }
        id = (const unsigned char *)PyBytes_AS_STRING(id_obj);
    }
    strided_memory_resource *res = NULL;
    strided_status status;
    Py_BEGIN_ALLOW_THREADS
    status = pinned ? strided_pinned_pool_resource_import(fd, id, &res)
                    : strided_device_pool_resource_import(device, fd, id, &res);
    Py_END_ALLOW_THREADS
    if (status != STRIDED_OK)
        return strided_py_raise_at(status, STRIDED_PY_IPC);
    return resource_object(cls, res);
}

/* Call strided._ipc's helper name with (head, *args) (head may be NULL). */
static PyObject *call_ipc_helper(const char *name, PyObject *head, PyObject *args)
{
    PyObject *fn = strided_py_ipc_helper(name);
    if (fn == NULL)
        return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(args), extra = head != NULL;
    PyObject *all = PyTuple_New(n + extra);
    if (all != NULL && head != NULL)
        PyTuple_SET_ITEM(all, 0, Py_NewRef(head));
    for (Py_ssize_t i = 0; all != NULL && i < n; i++)
        PyTuple_SET_ITEM(all, i + extra, Py_NewRef(PyTuple_GET_ITEM(args, i)));
    PyObject *result = all == NULL ? NULL : PyObject_Call(fn, all, NULL);
    Py_XDECREF(all);
    Py_DECREF(fn);
    return result;
}

static PyObject *resource_from_allocation_handle(PyObject *cls, PyObject *args)
{
    /* PinnedMemoryResource.from_allocation_handle(alloc_handle) has no
     * device: the helper takes None for it. */
    if (PyTuple_GET_SIZE(args) == 1 && (PyTypeObject *)cls != &DeviceType) {
        PyObject *with_none = PyTuple_Pack(2, Py_None, PyTuple_GET_ITEM(args, 0));
        PyObject *r = with_none == NULL
                          ? NULL
                          : call_ipc_helper("_from_allocation_handle", cls, with_none);
        Py_XDECREF(with_none);
        return r;
    }
    return call_ipc_helper("_from_allocation_handle", cls, args);
}

static PyObject *resource_from_registry(PyObject *cls, PyObject *args)
{
    (void)cls;
    return call_ipc_helper("_from_registry", NULL, args);
}

static PyObject *resource_register(PyObject *self, PyObject *args)
{
    return call_ipc_helper("_register", self, args);
}

static PyObject *resource_reduce(PyObject *self, PyObject *unused)
{
    (void)unused;
    PyObject *none = PyTuple_New(0);
    PyObject *r = none == NULL ? NULL : call_ipc_helper("_reduce_resource", self, none);
    Py_XDECREF(none);
    return r;
}

static PyObject *get_numa_id(ResourceObject *self, void *closure)
{
    (void)closure;
    strided_memory_location loc = strided_memory_resource_pool(self->res).location;
    return PyLong_FromLong(loc.type == STRIDED_LOCATION_HOST_NUMA ? loc.id : -1);
}

/* None, or (ManagedMemoryLocationType, id) with id None for the host, as
 * cuda.core answers. */
static PyObject *get_preferred_location(ResourceObject *self, void *closure)
{
    (void)closure;
    return strided_py_location_object(strided_memory_resource_pool(self->res).location);
}

/* The devices other than its own that may access the pool (a tuple of
 * ordinals, ascending); room for every device. */
static PyObject *resource_peer_access(ResourceObject *self, PyObject *unused)
{
    (void)unused;
    strided_driver_info info;
    strided_status status;
    Py_BEGIN_ALLOW_THREADS
    status = strided_driver_info_init(&info);
    Py_END_ALLOW_THREADS
    if (status != STRIDED_OK)
        return strided_py_raise(status);
    int *devices = PyMem_Malloc(((size_t)info.device_count + 1) * sizeof *devices);
    if (devices == NULL)
        return PyErr_NoMemory();
    size_t n = 0;
    Py_BEGIN_ALLOW_THREADS
    status = strided_memory_resource_peer_access(self->res, devices, (size_t)info.device_count, &n);
    Py_END_ALLOW_THREADS
    PyObject *result = status == STRIDED_OK ? PyTuple_New((Py_ssize_t)n)
                                            : raise_for(self->res, status);
    for (size_t i = 0; result != NULL && i < n; i++) {
        PyObject *d = PyLong_FromLong(devices[i]);
        if (d == NULL)
            Py_CLEAR(result);
        else
            PyTuple_SET_ITEM(result, (Py_ssize_t)i, d);
    }
    PyMem_Free(devices);
    return result;
}

/* The device ordinals of an iterable of devices (ints, or objects with
 * device_id): *out (PyMem_Malloc'ed, freed by the caller) and *n. Strict,
 * what strided_py_as_device_id raises; or lenient, skipping what it
 * refuses (a device that cannot be named has no access to revoke). */
static int device_list(PyObject *iterable, bool strict, int **out, size_t *n)
{
    PyObject *items = PySequence_Fast(iterable, "expected an iterable of devices");
    if (items == NULL)
        return -1;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(items);
    int *devices = PyMem_Malloc((size_t)(count > 0 ? count : 1) * sizeof *devices);
    int rc = devices == NULL ? (PyErr_NoMemory(), -1) : 0;
    size_t used = 0;
    for (Py_ssize_t i = 0; rc == 0 && i < count; i++) {
        if (strided_py_as_device_id(PySequence_Fast_GET_ITEM(items, i), "device_id",
                                    &devices[used]) == 0)
            used++;
        else if (strict || !(PyErr_ExceptionMatches(PyExc_TypeError) ||
                             PyErr_ExceptionMatches(PyExc_ValueError) ||
                             PyErr_ExceptionMatches(PyExc_OverflowError)))
            rc = -1;
        else
            PyErr_Clear();
    }
    Py_DECREF(items);
    if (rc < 0) {
        PyMem_Free(devices);
        return -1;
    }
    *out = devices;
    *n = used;
    return 0;
}

/* Grant the devices of grant and revoke those of revoke (iterables; the
 * revoked ones taken leniently), in one driver call. */
static PyObject *resource_update_peer_access(ResourceObject *self, PyObject *args)
{
    PyObject *grant_obj, *revoke_obj;
    int *grant = NULL, *revoke = NULL;
    size_t n_grant = 0, n_revoke = 0;
    if (!PyArg_ParseTuple(args, "OO:_update_peer_access", &grant_obj, &revoke_obj) ||
        device_list(grant_obj, true, &grant, &n_grant) < 0)
        return NULL;
    if (device_list(revoke_obj, false, &revoke, &n_revoke) < 0) {
        PyMem_Free(grant);
        return NULL;
    }
    strided_status status;
    Py_BEGIN_ALLOW_THREADS
    status = strided_memory_resource_update_peer_access(self->res, grant, n_grant, revoke,
                                                        n_revoke);
    Py_END_ALLOW_THREADS
    PyMem_Free(grant);
    PyMem_Free(revoke);
    if (status != STRIDED_OK)
        return raise_for(self->res, status);
    Py_RETURN_NONE;
}

/* Grant one device (cuda.core's message for one device). */
static PyObject *resource_grant_peer_access(ResourceObject *self, PyObject *device_obj)
{
    int device;
    if (strided_py_as_device_id(device_obj, "device_id", &device) < 0)
        return NULL;
    strided_status status;
    Py_BEGIN_ALLOW_THREADS
    status = strided_memory_resource_grant_peer_access(self->res, device);
    Py_END_ALLOW_THREADS
    if (status != STRIDED_OK)
        return raise_for(self->res, status);
    Py_RETURN_NONE;
}

/* The live set strided._access.PeerAccessibleBySetProxy(self). */
static PyObject *get_peer_accessible_by(ResourceObject *self, void *closure)
{
    (void)closure;
    if (strided_memory_resource_is_closed(self->res)) {
        PyErr_SetString(PyExc_RuntimeError, "DeviceMemoryResource has been closed");
        return NULL;
    }
    PyObject *module = PyImport_ImportModule("strided._access");
    PyObject *proxy = module ? PyObject_CallMethod(module, "PeerAccessibleBySetProxy", "O", self)
                             : NULL;
    Py_XDECREF(module);
    return proxy;
}

/* peer_accessible_by = iterable of devices: exactly those, in one driver
 * call. */
static int set_peer_accessible_by(ResourceObject *self, PyObject *value, void *closure)
{
    (void)closure;
    if (value == NULL) {
        PyErr_SetString(PyExc_AttributeError, "cannot delete peer_accessible_by");
        return -1;
    }
    int *devices = NULL;
    size_t n = 0;
    if (device_list(value, true, &devices, &n) < 0)
        return -1;
    strided_status status;
    Py_BEGIN_ALLOW_THREADS
    status = strided_memory_resource_set_peer_access(self->res, devices, n);
    Py_END_ALLOW_THREADS
    PyMem_Free(devices);
    if (status != STRIDED_OK) {
        raise_for(self->res, status);
        return -1;
    }
    return 0;
}

/* _MemPoolAttributes: the attributes of a resource's pool, read from the
 * driver at every access. It holds a reference to the C resource, not to
 * the Python object, so that the resource can keep it without a cycle. */
typedef struct {
    PyObject_HEAD
    strided_memory_resource *res;
} AttributesObject;

static PyTypeObject AttributesType;

static PyObject *attributes_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    (void)type;
    (void)args;
    (void)kwargs;
    PyErr_SetString(PyExc_RuntimeError, "_MemPoolAttributes cannot be instantiated directly. "
                                        "Please use MemoryResource APIs.");
    return NULL;
}

static void attributes_dealloc(AttributesObject *self)
{
    strided_memory_resource_release(self->res);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Read res's attributes into *out; -1 with the exception set. */
static int read_attributes(const strided_memory_resource *res, strided_memory_pool_attributes *out)
{
    strided_status status;
    Py_BEGIN_ALLOW_THREADS
    status = strided_memory_resource_pool_attributes(res, out);
    Py_END_ALLOW_THREADS
    if (status != STRIDED_OK) {
        raise_for(res, status);
        return -1;
    }
    return 0;
}

/* closure: the offset of a field of strided_memory_pool_attributes; the
 * flags (bool) come before release_threshold, the sizes (uint64_t) from
 * it on. */
static PyObject *get_attribute(AttributesObject *self, void *offset)
{
    strided_memory_pool_attributes a;
    if (read_attributes(self->res, &a) < 0)
        return NULL;
    size_t at = (uintptr_t)offset;
    const char *field = (const char *)&a + at;
    if (at < offsetof(strided_memory_pool_attributes, release_threshold)) {
        bool flag;
        memcpy(&flag, field, sizeof flag);
        return PyBool_FromLong(flag);
    }
    uint64_t size;
    memcpy(&size, field, sizeof size);
    return PyLong_FromUnsignedLongLong(size);
}

/* The names in alphabetical order, as cuda.core's repr lists them. */
static PyObject *attributes_repr(AttributesObject *self)
{
    strided_memory_pool_attributes a;
    if (read_attributes(self->res, &a) < 0)
        return NULL;
    return PyUnicode_FromFormat(
        "_MemPoolAttributes(release_threshold=%llu, reserved_mem_current=%llu, "
        "reserved_mem_high=%llu, reuse_allow_internal_dependencies=%s, "
        "reuse_allow_opportunistic=%s, reuse_follow_event_dependencies=%s, "
        "used_mem_current=%llu, used_mem_high=%llu)",
        (unsigned long long)a.release_threshold, (unsigned long long)a.reserved_mem_current,
        (unsigned long long)a.reserved_mem_high,
        a.reuse_allow_internal_dependencies ? "True" : "False",
        a.reuse_allow_opportunistic ? "True" : "False",
        a.reuse_follow_event_dependencies ? "True" : "False",
        (unsigned long long)a.used_mem_current, (unsigned long long)a.used_mem_high);
}

#define ATTRIBUTE(field, doc)                                       \
    {                                                               \
#field, (getter)get_attribute, NULL, doc,                   \
            (void *)offsetof(strided_memory_pool_attributes, field) \
    }

static PyGetSetDef attributes_getset[] = {
    ATTRIBUTE(reuse_follow_event_dependencies,
              "Whether memory may be reused when there are event dependencies between streams."),
    ATTRIBUTE(reuse_allow_opportunistic,
              "Whether the frees of completed work may be reused without dependencies."),
    ATTRIBUTE(reuse_allow_internal_dependencies,
              "Whether new stream dependencies may be inserted for memory reuse."),
    ATTRIBUTE(release_threshold,
              "The bytes of reserved memory the pool keeps before releasing it to the system."),
    ATTRIBUTE(reserved_mem_current, "The bytes of backing memory the pool holds now."),
    ATTRIBUTE(reserved_mem_high, "The high-water mark of the backing memory, in bytes."),
    ATTRIBUTE(used_mem_current, "The bytes allocated from the pool and not freed."),
    ATTRIBUTE(used_mem_high, "The high-water mark of the memory in use, in bytes."),
    {NULL, NULL, NULL, NULL, NULL},
};
#undef ATTRIBUTE

static PyTypeObject AttributesType = {
    /* Kept as written: clang-format would join the next line to the macro. */
    /* clang-format off */
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "strided._MemPoolAttributes",
    /* clang-format on */
    .tp_doc = "The attributes of a memory resource's pool (``resource.attributes``).\n"
              "\n"
              "Each property is read from the driver (cuMemPoolGetAttribute) when it is\n"
              "accessed; reading one from a closed resource raises RuntimeError. Made by\n"
              "the pool resources, not directly.",
    .tp_basicsize = sizeof(AttributesObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = attributes_new,
    .tp_dealloc = (destructor)attributes_dealloc,
    .tp_repr = (reprfunc)attributes_repr,
    .tp_getset = attributes_getset,
};

/* The pool's attributes, one object per resource; raises what reading
 * them raises (a closed resource, one without a pool). */
static PyObject *get_attributes(ResourceObject *self, void *closure)
{
    (void)closure;
    strided_memory_pool_attributes a;
    if (read_attributes(self->res, &a) < 0)
        return NULL;
    if (self->attributes == NULL) {
        AttributesObject *obj = PyObject_New(AttributesObject, &AttributesType);
        if (obj == NULL)
            return NULL;
        obj->res = strided_memory_resource_retain(self->res);
        self->attributes = (PyObject *)obj;
    }
    return Py_NewRef(self->attributes);
}

static PyObject *resource_repr(ResourceObject *self)
{
    const char *name = strrchr(Py_TYPE(self)->tp_name, '.');
    name = name ? name + 1 : Py_TYPE(self)->tp_name;
    return PyUnicode_FromFormat("<%s device_id=%d>", name,
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
#define CREATE_WITHOUT_GIL(status, call) \
    do {                                 \
        Py_BEGIN_ALLOW_THREADS(status)   \
        = (call);                        \
        Py_END_ALLOW_THREADS             \
    } while (0)

/* The object of type for a resource a create function made, or the
 * exception for its failure. */
static PyObject *created(PyTypeObject *type, strided_status status, strided_memory_resource *res)
{
    if (status != STRIDED_OK)
        return strided_py_raise(status);
    return resource_object(type, res);
}

/* The options argument of a pool resource as an instance of the options
 * class named cls of strided._options (new reference), or None: cuda.core's
 * check_or_create_options, with its messages. NULL with an exception. */
static PyObject *options_of(const char *cls, PyObject *options, const char *description)
{
    static PyObject *module;
    if (options == NULL || options == Py_None)
        Py_RETURN_NONE;
    if (module == NULL && (module = PyImport_ImportModule("strided._options")) == NULL)
        return NULL;
    PyObject *type = PyObject_GetAttrString(module, cls);
    PyObject *result = type == NULL ? NULL
                                    : PyObject_CallMethod(module, "_options_of", "OOs", type,
                                                          options, description);
    Py_XDECREF(type);
    return result;
}

/* The fields of the options objects. Each is -1 with an exception set. */
static int read_bool_field(PyObject *options, const char *name, bool *out)
{
    PyObject *v = PyObject_GetAttrString(options, name);
    int truth = v == NULL ? -1 : PyObject_IsTrue(v);
    Py_XDECREF(v);
    if (truth < 0)
        return -1;
    *out = truth;
    return 0;
}

/* An int64 field that may be None (*has false) when has is not NULL. */
static int read_int_field(PyObject *options, const char *name, bool *has, int64_t *out)
{
    PyObject *v = PyObject_GetAttrString(options, name);
    if (v == NULL)
        return -1;
    int rc = 0;
    if (has != NULL)
        *has = v != Py_None;
    if (has == NULL || v != Py_None)
        rc = strided_py_as_int64(v, name, -1, out);
    Py_DECREF(v);
    return rc;
}

/* The fields the device and pinned options share. */
static int read_size_fields(PyObject *options, bool *ipc_enabled, int64_t *max_size)
{
    if (read_bool_field(options, "ipc_enabled", ipc_enabled) < 0)
        return -1;
    return read_int_field(options, "max_size", NULL, max_size);
}

static PyObject *host_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"alignment", NULL};
    PyObject *alignment_obj = NULL;
    size_t alignment = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:HostMemoryResource", names, &alignment_obj))
        return NULL;
    if (alignment_obj != NULL && strided_py_as_size(alignment_obj, "alignment", &alignment) < 0)
        return NULL;
    strided_memory_resource *res = NULL;
    strided_status status = strided_host_resource_create(alignment, &res);
    return created(type, status, res);
}

static PyObject *pinned_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"options", NULL};
    PyObject *options_obj = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:PinnedMemoryResource", names, &options_obj))
        return NULL;
    PyObject *options = options_of("PinnedMemoryResourceOptions", options_obj,
                                   "PinnedMemoryResource options");
    if (options == NULL)
        return NULL;
    strided_pinned_pool_options o = {false, 0, false, 0};
    int rc = options == Py_None ? 0
             : read_size_fields(options, &o.ipc_enabled, &o.max_size) < 0 ||
                     read_int_field(options, "numa_id", &o.has_numa_id, &o.numa_id) < 0
                 ? -1
                 : 0;
    bool given = options != Py_None;
    Py_DECREF(options);
    if (rc < 0)
        return NULL;
    strided_memory_resource *res = NULL;
    strided_status status;
    CREATE_WITHOUT_GIL(status, strided_pinned_pool_resource_create(given ? &o : NULL, &res));
    return created(type, status, res);
}

static PyObject *legacy_pinned_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, ":LegacyPinnedMemoryResource", names))
        return NULL;
    strided_memory_resource *res = NULL;
    strided_status status;
    CREATE_WITHOUT_GIL(status, strided_legacy_pinned_resource_create(&res));
    return created(type, status, res);
}

static PyObject *device_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"device_id", "options", NULL};
    PyObject *device_obj, *options_obj = NULL;
    int device;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O:DeviceMemoryResource", names, &device_obj,
                                     &options_obj) ||
        strided_py_as_device_id(device_obj, "device_id", &device) < 0)
        return NULL;
    PyObject *options = options_of("DeviceMemoryResourceOptions", options_obj,
                                   "DeviceMemoryResource options");
    if (options == NULL)
        return NULL;
    strided_device_pool_options o = {false, 0};
    int rc = options == Py_None ? 0 : read_size_fields(options, &o.ipc_enabled, &o.max_size);
    bool given = options != Py_None;
    Py_DECREF(options);
    if (rc < 0)
        return NULL;
    strided_memory_resource *res = NULL;
    strided_status status;
    CREATE_WITHOUT_GIL(status,
                       strided_device_pool_resource_create(device, given ? &o : NULL, &res));
    return created(type, status, res);
}

/* Whether the first argument of ManagedMemoryResource is strided's device
 * (an int, or an object with a device_id such as a cuda.core Device)
 * rather than cuda.core's options. */
static int is_device_argument(PyObject *obj)
{
    if (PyBool_Check(obj) || PyIndex_Check(obj))
        return 1;
    if (obj == Py_None || PyDict_Check(obj))
        return 0;
    return PyObject_HasAttrString(obj, "device_id");
}

static PyObject *managed_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"options", "device_id", NULL};
    PyObject *options_obj = NULL, *device_obj = NULL;
    int device = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O$O:ManagedMemoryResource", names,
                                     &options_obj, &device_obj))
        return NULL;
    if (device_obj == NULL && PyTuple_GET_SIZE(args) > 0 && is_device_argument(options_obj)) {
        device_obj = options_obj; /* strided's ManagedMemoryResource(device_id) */
        options_obj = NULL;
    }
    if (device_obj != NULL && strided_py_as_device_id(device_obj, "device_id", &device) < 0)
        return NULL;
    PyObject *options = options_of("ManagedMemoryResourceOptions", options_obj,
                                   "ManagedMemoryResource options");
    if (options == NULL)
        return NULL;
    strided_managed_pool_options o = {NULL, false, 0};
    PyObject *type_name = NULL; /* keeps o.preferred_location_type's text */
    int rc = 0;
    if (options != Py_None) {
        PyObject *t = PyObject_GetAttrString(options, "preferred_location_type");
        rc = t == NULL ? -1
                       : read_int_field(options, "preferred_location", &o.has_preferred_location,
                                        &o.preferred_location);
        if (rc == 0 && t != Py_None) {
            /* A str (cuda.core's ManagedMemoryLocationType is one) by its
             * value; anything else by its str(), which no type matches. */
            type_name = PyUnicode_Check(t) ? Py_NewRef(t) : PyObject_Str(t);
            o.preferred_location_type = type_name ? PyUnicode_AsUTF8(type_name) : NULL;
            rc = o.preferred_location_type == NULL ? -1 : 0;
        }
        Py_XDECREF(t);
    }
    bool given = options != Py_None;
    Py_DECREF(options);
    strided_memory_resource *res = NULL;
    strided_status status = STRIDED_OK;
    if (rc == 0)
        CREATE_WITHOUT_GIL(status,
                           strided_managed_pool_resource_create(device, given ? &o : NULL, &res));
    Py_XDECREF(type_name);
    return rc < 0 ? NULL : created(type, status, res);
}

static PyMethodDef builtin_methods[] = {
    {"allocate", (PyCFunction)(void (*)(void))resource_allocate, KW,
     "allocate($self, /, size, stream=None)\n"
     "--\n"
     "\n"
     "A new Buffer of size bytes from this resource.\n"
     "\n"
     "Parameters\n"
     "----------\n"
     "size : int\n"
     "    The number of bytes (0 gives an empty Buffer).\n"
     "stream : int or object with ``__cuda_stream__``, optional\n"
     "    The stream that orders the allocation, and the Buffer's deallocation\n"
     "    stream: None (the legacy default stream), an int handle, or an object\n"
     "    with ``__cuda_stream__`` (a cuda.core Stream).\n"
     "\n"
     "Returns\n"
     "-------\n"
     "Buffer\n"
     "    The Buffer, whose memory_resource is this resource.\n"
     "\n"
     "Raises\n"
     "------\n"
     "TypeError\n"
     "    If size is not an integer, or stream is not a stream.\n"
     "OverflowError\n"
     "    If size is negative or too large.\n"
     "MemoryError\n"
     "    If the memory cannot be allocated.\n"
     "RuntimeError\n"
     "    If the CUDA driver fails.\n"
     "\n"
     "Examples\n"
     "--------\n"
     ">>> buf = strided.HostMemoryResource().allocate(1024)\n"
     ">>> buf.size, buf.is_host_accessible, buf.is_device_accessible\n"
     "(1024, True, False)"},
    {"deallocate", (PyCFunction)(void (*)(void))resource_deallocate, KW,
     "deallocate($self, /, ptr, size, stream=None)\n"
     "--\n"
     "\n"
     "Free memory that this resource allocated and no Buffer holds.\n"
     "\n"
     "Parameters\n"
     "----------\n"
     "ptr : int\n"
     "    The address of the memory.\n"
     "size : int\n"
     "    Its size in bytes.\n"
     "stream : int or object with ``__cuda_stream__``, optional\n"
     "    The stream to free it on (None: the legacy default stream).\n"
     "\n"
     "Raises\n"
     "------\n"
     "TypeError\n"
     "    If an argument is not an integer, or stream is not a stream.\n"
     "OverflowError\n"
     "    If ptr or size is negative or too large."},
    {NULL, NULL, 0, NULL},
};

#define POOL_METHODS                                                                     \
    {"allocate", (PyCFunction)(void (*)(void))resource_allocate, KW,                     \
     "allocate($self, /, size, stream=None)\n"                                           \
     "--\n"                                                                              \
     "\n"                                                                                \
     "A new Buffer of size bytes from this resource, in stream order.\n"                 \
     "\n"                                                                                \
     "Parameters\n"                                                                      \
     "----------\n"                                                                      \
     "size : int\n"                                                                      \
     "    The number of bytes (0 gives an empty Buffer).\n"                              \
     "stream : int or object with ``__cuda_stream__``, optional\n"                       \
     "    The stream that orders the allocation, and the Buffer's deallocation\n"        \
     "    stream: None (the legacy default stream), an int handle, or an object\n"       \
     "    with ``__cuda_stream__`` (a cuda.core Stream).\n"                              \
     "\n"                                                                                \
     "Returns\n"                                                                         \
     "-------\n"                                                                         \
     "Buffer\n"                                                                          \
     "    The Buffer, whose memory_resource is this resource.\n"                         \
     "\n"                                                                                \
     "Raises\n"                                                                          \
     "------\n"                                                                          \
     "TypeError\n"                                                                       \
     "    If size is not an integer, or stream is not a stream.\n"                       \
     "OverflowError\n"                                                                   \
     "    If size is negative or too large.\n"                                           \
     "MemoryError\n"                                                                     \
     "    If the memory cannot be allocated.\n"                                          \
     "RuntimeError\n"                                                                    \
     "    If the resource is closed, or the CUDA driver fails."},                        \
        {"deallocate", (PyCFunction)(void (*)(void))resource_deallocate, KW,             \
         "deallocate($self, /, ptr, size, stream=None)\n"                                \
         "--\n"                                                                          \
         "\n"                                                                            \
         "Free memory that this resource allocated and no Buffer holds.\n"               \
         "\n"                                                                            \
         "Works after close() too.\n"                                                    \
         "\n"                                                                            \
         "Parameters\n"                                                                  \
         "----------\n"                                                                  \
         "ptr : int\n"                                                                   \
         "    The address of the memory.\n"                                              \
         "size : int\n"                                                                  \
         "    Its size in bytes.\n"                                                      \
         "stream : int or object with ``__cuda_stream__``, optional\n"                   \
         "    The stream to free it on (None: the legacy default stream).\n"             \
         "\n"                                                                            \
         "Raises\n"                                                                      \
         "------\n"                                                                      \
         "TypeError\n"                                                                   \
         "    If an argument is not an integer, or stream is not a stream.\n"            \
         "OverflowError\n"                                                               \
         "    If ptr or size is negative or too large."},                                \
        {"close", (PyCFunction)resource_close, METH_NOARGS,                              \
         "close($self, /)\n"                                                             \
         "--\n"                                                                          \
         "\n"                                                                            \
         "Allocate nothing more, and destroy the pool if this resource owns it.\n"       \
         "\n"                                                                            \
         "The driver frees the pool's memory once the last Buffer allocated from it\n"   \
         "is freed: Buffers allocated before stay valid. Closing a closed resource\n"    \
         "does nothing.\n"                                                               \
         "\n"                                                                            \
         "Raises\n"                                                                      \
         "------\n"                                                                      \
         "RuntimeError\n"                                                                \
         "    If the driver fails to destroy the pool (the resource is closed all the\n" \
         "    same)."},

static PyMethodDef pool_methods[] = {
    POOL_METHODS{NULL, NULL, 0, NULL},
};

/* The IPC methods of the pools that share with other processes. */
#define IPC_METHODS                                                                                \
    {"_import_pool", (PyCFunction)resource_import_pool, METH_VARARGS | METH_CLASS,                 \
     "_import_pool(device_id, fd, uuid_bytes, /)\n--\n\nImport another process's pool (for "       \
     "from_allocation_handle)."},                                                                  \
        {"from_allocation_handle", (PyCFunction)resource_from_allocation_handle,                   \
         METH_VARARGS | METH_CLASS,                                                                \
         "from_allocation_handle(device_id, alloc_handle)  (PinnedMemoryResource: alloc_handle)\n" \
         "--\n"                                                                                    \
         "\n"                                                                                      \
         "A mapped resource of the pool another process exported: IPC-enabled, allocating\n"       \
         "nothing, importing that process's buffers (Buffer.from_ipc_descriptor).\n"               \
         "\n"                                                                                      \
         "alloc_handle is an IPCAllocationHandle (its pool is then registered under its\n"         \
         "UUID, and a pool registered already is returned) or a file descriptor (an int,\n"        \
         "which the caller still owns and closes). Raises RuntimeError for a closed\n"             \
         "handle and when the driver refuses the pool, TypeError for another resource's\n"         \
         "handle."},                                                                               \
        {"from_registry", (PyCFunction)resource_from_registry, METH_VARARGS | METH_CLASS,          \
         "from_registry($cls, uuid, /)\n--\n\nThe mapped resource registered under uuid; "         \
         "RuntimeError "                                                                           \
         "(\"Memory resource <uuid> was not found\") when there is none."},                        \
        {"register", (PyCFunction)resource_register, METH_VARARGS,                                 \
         "register($self, uuid, /)\n--\n\nRegister this IPC-enabled resource under uuid and "      \
         "return it, or the resource registered there already."},                                  \
        {"__reduce__", (PyCFunction)resource_reduce, METH_NOARGS,                                  \
         "__reduce__($self, /)\n--\n\nPickle as the UUID of an IPC-enabled pool, found in the "    \
         "receiving process's registry (multiprocessing sends the pool itself)."},

static PyMethodDef pinned_methods[] = {
    POOL_METHODS IPC_METHODS{NULL, NULL, 0, NULL},
};

/* DeviceMemoryResource's: the pool's, and those peer_accessible_by's set
 * calls. */
static PyMethodDef device_methods[] = {
    POOL_METHODS IPC_METHODS{
        "_peer_access", (PyCFunction)resource_peer_access, METH_NOARGS,
        "_peer_access($self, /)\n--\n\nThe devices with access to the pool (for the proxy)."},
    {"_update_peer_access", (PyCFunction)resource_update_peer_access, METH_VARARGS,
     "_update_peer_access($self, grant, revoke, /)\n--\n\nGrant and revoke access in one driver "
     "call (for the proxy)."},
    {"_grant_peer_access", (PyCFunction)resource_grant_peer_access, METH_O,
     "_grant_peer_access($self, device, /)\n--\n\nGrant one device access (for the proxy)."},
    {NULL, NULL, 0, NULL},
};
#undef POOL_METHODS

#define GETTER(name, fn, doc)               \
    {                                       \
        name, (getter)(fn), NULL, doc, NULL \
    }
#define RAISES(name, message, doc)                                    \
    {                                                                 \
        name, (getter)get_runtime_error, NULL, doc, (void *)(message) \
    }

#define RESOURCE_GETSET(device_id)                               \
    device_id,                                                   \
        GETTER("is_device_accessible", get_is_device_accessible, \
               "Whether a CUDA device can reach the memory."),   \
        GETTER("is_host_accessible", get_is_host_accessible,     \
               "Whether the host can reach the memory."),        \
        GETTER("is_managed", get_is_managed, "Whether the memory is CUDA managed memory.")

#define POOL_GETSET                                                                                \
    GETTER("is_closed", get_is_closed, "Whether close() was called."),                             \
        GETTER("is_handle_owned", get_is_handle_owned,                                             \
               "Whether this resource created its pool and destroys it; False once closed."),      \
        GETTER("handle", get_handle,                                                               \
               "The pool (a CUmemoryPool) as an int.\n"                                            \
               "\n"                                                                                \
               "0 for a resource that allocates without a pool, and once closed."),                \
        GETTER("attributes", get_attributes,                                                       \
               "The pool's attributes, a _MemPoolAttributes.\n"                                    \
               "\n"                                                                                \
               "Raises RuntimeError once the resource is closed, NotImplementedError for a\n"      \
               "resource that allocates without a pool."),                                         \
        GETTER("is_ipc_enabled", get_is_ipc_enabled,                                               \
               "Whether the pool's memory can be shared with other processes."),                   \
        GETTER("is_mapped", get_is_mapped, "Whether the pool was imported from another process."), \
        GETTER("uuid", get_uuid,                                                                   \
               "The pool's IPC identity, a uuid.UUID; None when it is not IPC-enabled."),          \
        GETTER("allocation_handle", get_allocation_handle,                                         \
               "The pool's IPC handle: raises RuntimeError (\"Memory resource is not\n"            \
               "IPC-enabled\" for a pool that is not; the binding does not export pools\n"         \
               "yet).")

#define END_GETSET                   \
    {                                \
        NULL, NULL, NULL, NULL, NULL \
    }

#define DEVICE_ID \
    GETTER("device_id", get_device_id, "The device the memory belongs to, -1 for none.")

static PyGetSetDef host_getset[] = {RESOURCE_GETSET(DEVICE_ID), END_GETSET};
/* cuda.core's LegacyPinnedMemoryResource is bound to no device. */
static PyGetSetDef legacy_pinned_getset[] = {
    RESOURCE_GETSET(RAISES("device_id", "a pinned memory resource is not bound to any GPU",
                           "Raises RuntimeError: the memory is bound to no device.")),
    END_GETSET};
static PyGetSetDef device_getset[] = {
    RESOURCE_GETSET(DEVICE_ID),
    POOL_GETSET,
    {"peer_accessible_by", (getter)get_peer_accessible_by, (setter)set_peer_accessible_by,
     "The devices other than its own that may access the pool's memory: a live set.\n"
     "\n"
     "A PeerAccessibleBySetProxy of device ordinals (cuda.core's holds Devices), which\n"
     "asks the driver at every read (cuMemPoolGetAccess) and changes the access with\n"
     "one cuMemPoolSetAccess per operation; it takes ints and objects with a\n"
     "device_id, and ignores the pool's own device. Setting it to an iterable of\n"
     "devices grants exactly those, in one driver call. Raises ValueError for a device\n"
     "that does not exist or cannot reach the pool's (\"Device 0 cannot access\n"
     "peer(s): 1\"), RuntimeError once the resource is closed.",
     NULL},
    END_GETSET};
static PyGetSetDef pinned_getset[] = {
    RESOURCE_GETSET(DEVICE_ID), POOL_GETSET,
    GETTER("numa_id", get_numa_id,
           "The host NUMA node of the pool's memory; -1 when the system places it."),
    END_GETSET};
static PyGetSetDef managed_getset[] = {
    RESOURCE_GETSET(DEVICE_ID), POOL_GETSET,
    GETTER("preferred_location", get_preferred_location,
           "Where the pool's memory prefers to live.\n"
           "\n"
           "None (no preference, or no pool), or ``(type, id)``: ``('device', ordinal)``,\n"
           "``('host', None)`` or ``('host_numa', node)``."),
    END_GETSET};

/* Kept as written: clang-format would join PyVarObject_HEAD_INIT to the next line. */
/* clang-format off */
#define BUILTIN_TYPE(var, name, new_fn, methods, getset, doc)                   \
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
        .tp_methods = methods,                                                  \
        .tp_getset = getset,                                                    \
    }
/* clang-format on */

BUILTIN_TYPE(HostType, "HostMemoryResource", host_new, builtin_methods, host_getset,
             "HostMemoryResource(alignment=0)\n"
             "--\n"
             "\n"
             "Pageable host memory, which never involves CUDA.\n"
             "\n"
             "Parameters\n"
             "----------\n"
             "alignment : int, optional\n"
             "    The alignment of every allocation in bytes, a power of two; 0 means\n"
             "    64.\n"
             "\n"
             "Raises\n"
             "------\n"
             "TypeError\n"
             "    If alignment is not an integer.\n"
             "ValueError\n"
             "    If alignment is not a power of two.\n"
             "OverflowError\n"
             "    If alignment is negative or too large.\n"
             "\n"
             "Examples\n"
             "--------\n"
             ">>> import strided\n"
             ">>> mr = strided.HostMemoryResource(alignment=256)\n"
             ">>> buf = mr.allocate(100)\n"
             ">>> buf.handle % 256, buf.device_id, mr.is_host_accessible\n"
             "(0, -1, True)");
BUILTIN_TYPE(PinnedType, "PinnedMemoryResource", pinned_new, pinned_methods, pinned_getset,
             "PinnedMemoryResource(options=None)\n"
             "--\n"
             "\n"
             "Page-locked host memory, reachable from every device.\n"
             "\n"
             "Without options the memory comes from cuMemHostAlloc, without a pool\n"
             "(cuda.core uses the driver's current host pool); with options from a new\n"
             "pinned memory pool on the host, owned by the resource and allocated from in\n"
             "stream order. device_id is -1.\n"
             "\n"
             "Parameters\n"
             "----------\n"
             "options : PinnedMemoryResourceOptions or dict, optional\n"
             "    The options of the pool (a dict of their fields is taken too).\n"
             "\n"
             "Raises\n"
             "------\n"
             "TypeError\n"
             "    If options is neither, or a dict holds another field.\n"
             "ValueError\n"
             "    If numa_id is negative, or there is no device 0.\n"
             "OverflowError\n"
             "    If max_size is negative or numa_id too large.\n"
             "NotImplementedError\n"
             "    If ipc_enabled is true and device 0's pools cannot export POSIX file\n"
             "    descriptors (or the platform is not Linux).\n"
             "RuntimeError\n"
             "    Without a CUDA driver, or when the driver fails.");
BUILTIN_TYPE(LegacyPinnedType, "LegacyPinnedMemoryResource", legacy_pinned_new, builtin_methods,
             legacy_pinned_getset,
             "LegacyPinnedMemoryResource()\n"
             "--\n"
             "\n"
             "Page-locked host memory from cuMemAllocHost.\n"
             "\n"
             "The memory is freed with cuMemFreeHost after the deallocation stream is\n"
             "synchronized. It is bound to no device: device_id raises RuntimeError.\n"
             "\n"
             "Raises\n"
             "------\n"
             "RuntimeError\n"
             "    Without a CUDA driver.");
BUILTIN_TYPE(DeviceType, "DeviceMemoryResource", device_new, device_methods, device_getset,
             "DeviceMemoryResource(device_id, options=None)\n"
             "--\n"
             "\n"
             "Device memory of one device, allocated and freed in stream order.\n"
             "\n"
             "Without options the memory comes from the device's current memory pool,\n"
             "which the resource does not own; with options from a new pool, owned by\n"
             "the resource (close() destroys it). peer_accessible_by says and sets which\n"
             "other devices may access the pool's memory.\n"
             "\n"
             "Parameters\n"
             "----------\n"
             "device_id : int or Device\n"
             "    The device's ordinal, or an object with a device_id (a cuda.core\n"
             "    Device).\n"
             "options : DeviceMemoryResourceOptions or dict, optional\n"
             "    The options of a new pool (a dict of their fields is taken too).\n"
             "\n"
             "Raises\n"
             "------\n"
             "TypeError\n"
             "    If device_id or options is neither, or a dict holds another field.\n"
             "ValueError\n"
             "    If the device does not exist.\n"
             "OverflowError\n"
             "    If max_size is negative.\n"
             "NotImplementedError\n"
             "    If the device has no memory pools, or ipc_enabled is true and its pools\n"
             "    cannot export POSIX file descriptors.\n"
             "RuntimeError\n"
             "    Without a CUDA driver, or when the driver fails.\n"
             "\n"
             "Examples\n"
             "--------\n"
             ">>> import strided\n"
             ">>> try:\n"
             "...     mr = strided.DeviceMemoryResource(0)\n"
             "... except (RuntimeError, ValueError):  # no CUDA driver or device here\n"
             "...     mr = strided.HostMemoryResource()\n"
             ">>> mr.allocate(64).size\n"
             "64");
BUILTIN_TYPE(ManagedType, "ManagedMemoryResource", managed_new, pool_methods, managed_getset,
             "ManagedMemoryResource(options=None, *, device_id=0)\n"
             "--\n"
             "\n"
             "CUDA managed (unified) memory, which the host and every device reach.\n"
             "\n"
             "Without options the memory comes from cuMemAllocManaged (attached\n"
             "globally), with device_id's primary context current, and device_id is that\n"
             "device (cuda.core uses the driver's current managed pool and reports -1);\n"
             "with options from a new managed memory pool, owned by the resource, whose\n"
             "device_id is the preferred device, or -1. allocate() returns ManagedBuffers.\n"
             "\n"
             "Parameters\n"
             "----------\n"
             "options : ManagedMemoryResourceOptions or dict, optional\n"
             "    The options of a new pool and its preferred location (a dict of their\n"
             "    fields is taken too). An int or a Device in this place is device_id.\n"
             "device_id : int or Device, optional\n"
             "    strided's addition: the device whose primary context the resource uses.\n"
             "\n"
             "Raises\n"
             "------\n"
             "TypeError\n"
             "    If an argument is of none of these types, or a dict holds another\n"
             "    field.\n"
             "ValueError\n"
             "    If preferred_location_type or preferred_location is invalid, or a\n"
             "    device does not exist.\n"
             "OverflowError\n"
             "    If preferred_location is too large.\n"
             "NotImplementedError\n"
             "    If the pool's preferred host NUMA node cannot be determined.\n"
             "RuntimeError\n"
             "    Without a CUDA driver, or when the driver fails.");

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
        stream_kwnames = strided_py_kwnames((const char *const[]){"stream", NULL});
        if (stream_kwnames == NULL)
            return -1;
    }
    PyTypeObject *types[] = {&ResourceType, &HostType,    &PinnedType,    &LegacyPinnedType,
                             &DeviceType,   &ManagedType, &AttributesType};
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
    size_t size; /* obj.size: what libstrided checks the request against */
    PyObject *buffer;
} held_allocation;

/* The copy's stream object as a cuda.core Stream (new reference): itself
 * when it is one, else the Stream of the handle it stands for. NULL with an
 * exception set. */
static PyObject *cuda_core_stream_of(PyObject *stream)
{
    PyObject *core = PyImport_ImportModule("cuda.core");
    PyObject *cls = core ? PyObject_GetAttrString(core, "Stream") : NULL;
    Py_XDECREF(core);
    int is_stream = cls ? PyObject_IsInstance(stream, cls) : -1;
    Py_XDECREF(cls);
    if (is_stream < 0)
        return NULL;
    if (is_stream)
        return Py_NewRef(stream);
    void *handle;
    if (strided_py_as_stream(stream, &handle) < 0)
        return NULL;
    return cuda_core_stream(handle);
}

/* self of an allocating wrapper. */
typedef struct {
    PyObject *mr;
    PyObject *stream; /* passed to allocate(): the copy's own stream object,
                         or for cuda.core's resources a cuda.core Stream */
    bool cuda_core;   /* mr is one of cuda.core's (from_cuda_core) */
    held_allocation *held;
    PyObject *error; /* the first exception allocate() raised, or NULL */
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

static strided_status allocating_allocate(void *self, size_t size, void *stream, void **out_ptr)
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
        PyObject *stream_obj = stream_argument(a->cuda_core, stream);
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
    bool cuda_core = from_cuda_core(obj);
    stream = cuda_core ? cuda_core_stream_of(stream) : Py_NewRef(stream);
    if (stream == NULL)
        return -1;
    allocating *a = PyMem_RawMalloc(sizeof *a);
    if (a == NULL) {
        Py_DECREF(stream);
        PyErr_NoMemory();
        return -1;
    }
    Py_INCREF(obj);
    *a = (allocating){obj, stream, cuda_core, NULL, NULL};
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
