/*
 * buffer_type.c: strided.Buffer, the Python face of a strided_buffer.
 *
 * A Buffer object holds one reference to its strided_buffer until close()
 * or garbage collection. Views and exported tensors hold their own, so
 * closing drops only this object's hold and the memory goes when the last
 * holder lets go. The object also keeps the memory_resource and
 * owner it was made with, for its attributes.
 *
 * Ownership of the Python objects behind the memory: for a Buffer with an
 * owner, the C buffer's release callback holds one more reference to the
 * owner (its context) and drops it, with the GIL, when the memory is
 * released; for a Buffer adopted by a Python memory resource, the C
 * resource wrapping it holds one (resource_type.c). So an owner stays alive
 * while any holder of the memory does, also after close(). That reference
 * is told to the garbage collector through the memory's hold (hold.c),
 * which the Buffer, its views and the Buffers view() makes all join.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "args.h"
#include "strided_py.h"

typedef struct {
    PyObject_HEAD
    strided_buffer *buf; /* one reference; NULL once closed */
    PyObject *mr;        /* memory_resource, or NULL */
    PyObject *owner;     /* owner, or NULL */
    PyObject *hold;      /* the memory's hold, joined; or NULL (none, or
                          * closed) */
    PyObject *weakrefs;
} BufferObject;

static PyTypeObject BufferType;

static const char closed_message[] = "Buffer has been closed";

/* The open buffer of self, or NULL with RuntimeError. */
static strided_buffer *open_buffer(BufferObject *self)
{
    if (self->buf == NULL)
        PyErr_SetString(PyExc_RuntimeError, closed_message);
    return self->buf;
}

PyObject *strided_py_buffer_new_held(strided_buffer *b, PyObject *mr, PyObject *owner,
                                     PyObject *hold)
{
    BufferObject *self = PyObject_GC_New(BufferObject, &BufferType);
    if (self == NULL) {
        strided_py_release_buffer(b);
        return NULL;
    }
    self->buf = b;
    self->mr = Py_XNewRef(mr);
    self->owner = Py_XNewRef(owner);
    self->hold = strided_py_hold_join(hold);
    self->weakrefs = NULL;
    PyObject_GC_Track(self);
    return (PyObject *)self;
}

PyObject *strided_py_buffer_new(strided_buffer *b, PyObject *mr, PyObject *owner)
{
    return strided_py_buffer_new_held(b, mr, owner, NULL);
}

strided_buffer *strided_py_buffer_of(PyObject *obj)
{
    if (!PyObject_TypeCheck(obj, &BufferType)) {
        PyErr_Format(PyExc_TypeError, "expected a strided.Buffer, got %.200s",
                     Py_TYPE(obj)->tp_name);
        return NULL;
    }
    return open_buffer((BufferObject *)obj);
}

PyObject *strided_py_buffer_hold(PyObject *obj)
{
    assert(PyObject_TypeCheck(obj, &BufferType));
    return ((BufferObject *)obj)->hold;
}

/* Drop this object's hold on the memory and its attributes. The fields are
 * cleared before anything is released, so the object reads as closed to
 * any code the release runs, and the memory's hold stops counting this
 * object before its reference goes. */
static void detach(BufferObject *self, bool release_gil)
{
    strided_buffer *b = self->buf;
    PyObject *mr = self->mr, *owner = self->owner, *hold = self->hold;
    self->buf = NULL;
    self->mr = NULL;
    self->owner = NULL;
    self->hold = NULL;
    strided_py_hold_leave(hold);
    if (release_gil)
        strided_py_release_buffer(b);
    else
        strided_buffer_release(b);
    Py_XDECREF(mr);
    Py_XDECREF(owner);
}

/* The release callback of a Buffer made with an owner: drop the C buffer's
 * reference to it (context). Runs on whichever thread releases the memory,
 * with or without the GIL. Once the interpreter is out of reach the
 * reference is leaked: touching it then could crash the process. */
static void release_owner(void *context, void *ptr, size_t size)
{
    (void)ptr;
    (void)size;
    if (!strided_py_can_call_python())
        return;
    PyGILState_STATE gil = PyGILState_Ensure();
    Py_DECREF((PyObject *)context);
    PyGILState_Release(gil);
}

static PyObject *buffer_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    (void)type;
    (void)args;
    (void)kwargs;
    PyErr_SetString(PyExc_RuntimeError,
                    "Buffer objects cannot be instantiated directly. Please use "
                    "MemoryResource APIs.");
    return NULL;
}

/* Buffer.from_handle: the memory is adopted by mr, kept alive by owner, or
 * borrowed; the C library learns its kind. */
static PyObject *buffer_from_handle(PyObject *unused, PyObject *const *args,
                                    Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"ptr", "size", "mr", "owner", "stream", NULL};
    PyObject *a[5];
    (void)unused; /* a static method: the class is final */
    if (nargs > 4) {
        PyErr_Format(PyExc_TypeError,
                     "from_handle() takes at most 4 positional arguments (%zd given)",
                     nargs);
        return NULL;
    }
    if (strided_py_bind_args("from_handle", args, nargs, kwnames, names, 2, a) < 0)
        return NULL;
    PyObject *mr = a[2] == Py_None ? NULL : a[2];
    PyObject *owner = a[3] == Py_None ? NULL : a[3];
    if (mr != NULL && owner != NULL) {
        PyErr_SetString(PyExc_ValueError,
                        "owner and memory resource cannot be both specified together");
        return NULL;
    }
    if (a[4] != NULL && a[4] != Py_None && mr == NULL) {
        PyErr_SetString(PyExc_ValueError, "stream requires a memory resource (mr)");
        return NULL;
    }
    void *ptr, *stream;
    size_t size;
    if (strided_py_as_address(a[0], "ptr", &ptr) < 0 ||
        strided_py_as_size(a[1], "size", &size) < 0 || strided_py_as_stream(a[4], &stream) < 0)
        return NULL;

    strided_buffer *b = NULL;
    strided_status status;
    PyObject *hidden = NULL; /* what the C buffer's release holds */
    if (mr != NULL) {
        strided_memory_resource *res;
        if (strided_py_resource_of(mr, &res) < 0)
            return NULL;
        Py_BEGIN_ALLOW_THREADS
        status = strided_buffer_wrap_resource(ptr, size, res, stream, &b);
        Py_END_ALLOW_THREADS
        /* Only the resource that wraps a Python object has it as self; it
         * is new, and only the buffer holds it. */
        if (strided_memory_resource_self(res) == (void *)mr)
            hidden = mr;
        /* Raise before releasing: the release may run Python code (the
         * wrapper's destroy) that overwrites this thread's last error. */
        if (status != STRIDED_OK)
            strided_py_raise(status);
        strided_memory_resource_release(res); /* the buffer holds its own */
    } else if (owner != NULL) {
        Py_INCREF(owner); /* the callback's reference */
        Py_BEGIN_ALLOW_THREADS
        status = strided_buffer_wrap(ptr, size, release_owner, owner, &b);
        Py_END_ALLOW_THREADS
        if (status != STRIDED_OK) {
            strided_py_raise(status);
            Py_DECREF(owner); /* the callback will never run */
        }
        hidden = owner;
    } else {
        Py_BEGIN_ALLOW_THREADS
        status = strided_buffer_wrap(ptr, size, NULL, NULL, &b);
        Py_END_ALLOW_THREADS
        if (status != STRIDED_OK)
            strided_py_raise(status);
    }
    if (status != STRIDED_OK)
        return NULL;
    PyObject *hold = NULL;
    if (hidden != NULL && (hold = strided_py_hold_new(b, hidden)) == NULL) {
        strided_py_release_buffer(b);
        return NULL;
    }
    PyObject *self = strided_py_buffer_new_held(b, mr, owner, hold);
    Py_XDECREF(hold);
    return self;
}

static PyObject *buffer_close(BufferObject *self, PyObject *const *args,
                              Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"stream", NULL};
    PyObject *a[1];
    if (strided_py_bind_args("close", args, nargs, kwnames, names, 0, a) < 0)
        return NULL;
    if (self->buf == NULL)
        Py_RETURN_NONE;
    /* A stream matters only to memory a resource frees; for wrapped and
     * borrowed memory there is nothing to order, and it is ignored. */
    if (a[0] != NULL && a[0] != Py_None) {
        void *stream;
        if (strided_py_as_stream(a[0], &stream) < 0)
            return NULL;
        if (strided_buffer_resource(self->buf) != NULL) {
            strided_status status =
                strided_buffer_set_deallocation_stream(self->buf, stream);
            if (status != STRIDED_OK)
                return strided_py_raise(status);
        }
    }
    detach(self, true);
    Py_RETURN_NONE;
}

static PyObject *buffer_set_deallocation_stream(BufferObject *self, PyObject *arg)
{
    strided_buffer *b = open_buffer(self);
    if (b == NULL)
        return NULL;
    if (arg == Py_None) {
        PyErr_SetString(PyExc_TypeError,
                        "stream is required and must not be None; pass "
                        "device.default_stream explicitly to use the default "
                        "stream.");
        return NULL;
    }
    void *stream;
    if (strided_py_as_stream(arg, &stream) < 0)
        return NULL;
    strided_status status = strided_buffer_set_deallocation_stream(b, stream);
    if (status != STRIDED_OK)
        return strided_py_raise(status);
    Py_RETURN_NONE;
}

static PyObject *buffer_enter(BufferObject *self, PyObject *unused)
{
    (void)unused;
    return Py_NewRef(self);
}

static PyObject *buffer_exit(BufferObject *self, PyObject *args)
{
    (void)args;
    if (self->buf != NULL)
        detach(self, true);
    Py_RETURN_NONE; /* do not swallow the exception */
}

static PyObject *buffer_dunder_buffer(BufferObject *self, PyObject *args)
{
    (void)self;
    (void)args;
    PyErr_SetString(PyExc_NotImplementedError,
                    "WIP: Buffer.__buffer__ hasn't been implemented yet.");
    return NULL;
}

static PyObject *buffer_dunder_release_buffer(BufferObject *self, PyObject *args)
{
    (void)self;
    (void)args;
    PyErr_SetString(PyExc_NotImplementedError,
                    "WIP: Buffer.__release_buffer__ hasn't been implemented yet.");
    return NULL;
}

/* The C buffer's own reference to owner or mr is the hold's to report. */
static int buffer_traverse(BufferObject *self, visitproc visit, void *arg)
{
    Py_VISIT(self->mr);
    Py_VISIT(self->owner);
    Py_VISIT(self->hold);
    return 0;
}

/* The collector closes a Buffer in a garbage cycle here, before it clears
 * any object of the cycle, so that when the Buffer is the memory's last
 * holder a resource's deallocate or an owner's finalizer still finds its
 * objects intact. (Views have no closed state, so memory they share is
 * released when the last of them is freed, which may follow the clearing
 * of the cycle's other objects.) The GIL stays held while the collector
 * runs. */
static void buffer_finalize(BufferObject *self)
{
    detach(self, false);
}

static int buffer_clear(BufferObject *self)
{
    detach(self, false);
    return 0;
}

static void buffer_dealloc(BufferObject *self)
{
    PyObject_GC_UnTrack(self);
    if (self->weakrefs != NULL)
        PyObject_ClearWeakRefs((PyObject *)self);
    detach(self, true);
    PyObject_GC_Del(self);
}

/* Every property but is_closed raises the closed-buffer error after
 * close(): a closed Buffer answering 0 would read as a valid empty buffer
 * at address 0. */
static PyObject *get_handle(BufferObject *self, void *closure)
{
    (void)closure;
    strided_buffer *b = open_buffer(self);
    return b ? PyLong_FromVoidPtr(strided_buffer_ptr(b)) : NULL;
}

static PyObject *get_size(BufferObject *self, void *closure)
{
    (void)closure;
    strided_buffer *b = open_buffer(self);
    return b ? PyLong_FromSize_t(strided_buffer_size(b)) : NULL;
}

static PyObject *get_device_id(BufferObject *self, void *closure)
{
    (void)closure;
    strided_buffer *b = open_buffer(self);
    return b ? PyLong_FromLong(strided_buffer_memory_info(b).device_id) : NULL;
}

#define INFO_FLAG_GETTER(name, field)                                   \
    static PyObject *get_##name(BufferObject *self, void *closure)      \
    {                                                                   \
        (void)closure;                                                  \
        strided_buffer *b = open_buffer(self);                          \
        if (b == NULL)                                                  \
            return NULL;                                                \
        return PyBool_FromLong(strided_buffer_memory_info(b).field);    \
    }
INFO_FLAG_GETTER(is_device_accessible, device_accessible)
INFO_FLAG_GETTER(is_host_accessible, host_accessible)
INFO_FLAG_GETTER(is_managed, managed)
#undef INFO_FLAG_GETTER

static PyObject *get_memory_resource(BufferObject *self, void *closure)
{
    (void)closure;
    if (open_buffer(self) == NULL)
        return NULL;
    return Py_NewRef(self->mr ? self->mr : Py_None);
}

static PyObject *get_owner(BufferObject *self, void *closure)
{
    (void)closure;
    if (open_buffer(self) == NULL)
        return NULL;
    return Py_NewRef(self->owner ? self->owner : Py_None);
}

static PyObject *get_is_closed(BufferObject *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(self->buf == NULL);
}

static PyObject *get_is_mapped(BufferObject *self, void *closure)
{
    (void)closure;
    if (open_buffer(self) == NULL)
        return NULL;
    Py_RETURN_FALSE; /* IPC import is not supported */
}

static void address_and_size(const BufferObject *self, uintptr_t *ptr, size_t *size)
{
    *ptr = self->buf ? (uintptr_t)strided_buffer_ptr(self->buf) : 0;
    *size = self->buf ? strided_buffer_size(self->buf) : 0;
}

static PyObject *buffer_richcompare(PyObject *a, PyObject *b, int op)
{
    if ((op != Py_EQ && op != Py_NE) || !PyObject_TypeCheck(a, &BufferType) ||
        !PyObject_TypeCheck(b, &BufferType))
        Py_RETURN_NOTIMPLEMENTED;
    uintptr_t pa, pb;
    size_t sa, sb;
    address_and_size((BufferObject *)a, &pa, &sa);
    address_and_size((BufferObject *)b, &pb, &sb);
    bool equal = pa == pb && sa == sb;
    return PyBool_FromLong(op == Py_EQ ? equal : !equal);
}

static Py_hash_t buffer_hash(BufferObject *self)
{
    uintptr_t ptr;
    size_t size;
    address_and_size(self, &ptr, &size);
    uint64_t h = ((uint64_t)ptr ^ (uint64_t)size * 0x9E3779B97F4A7C15ull) *
                 0xBF58476D1CE4E5B9ull;
    Py_hash_t result = (Py_hash_t)(h ^ (h >> 31));
    return result == -1 ? -2 : result;
}

static PyObject *buffer_repr(BufferObject *self)
{
    uintptr_t ptr;
    size_t size;
    char text[64];
    address_and_size(self, &ptr, &size);
    snprintf(text, sizeof text, "<Buffer ptr=0x%llx size=%zu>",
             (unsigned long long)ptr, size);
    return PyUnicode_FromString(text);
}

static PyGetSetDef buffer_getset[] = {
    {"handle", (getter)get_handle, NULL,
     "The address of the memory as an int (the host address for pinned "
     "memory). Like every property but is_closed, it raises RuntimeError "
     "after close().", NULL},
    {"size", (getter)get_size, NULL, "The size in bytes.", NULL},
    {"device_id", (getter)get_device_id, NULL,
     "The device the memory belongs to, -1 for memory not bound to a device.",
     NULL},
    {"is_device_accessible", (getter)get_is_device_accessible, NULL,
     "Whether a CUDA device can read and write the memory.", NULL},
    {"is_host_accessible", (getter)get_is_host_accessible, NULL,
     "Whether the host can read and write the memory.", NULL},
    {"is_managed", (getter)get_is_managed, NULL,
     "Whether the memory is CUDA managed (unified) memory.", NULL},
    {"memory_resource", (getter)get_memory_resource, NULL,
     "The memory resource that frees the memory, or None.", NULL},
    {"owner", (getter)get_owner, NULL, "The object kept alive for the memory, or None.",
     NULL},
    {"is_closed", (getter)get_is_closed, NULL,
     "Whether close() has been called.", NULL},
    {"is_mapped", (getter)get_is_mapped, NULL,
     "Whether the memory was imported through IPC (never, in strided).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

#define KW (METH_FASTCALL | METH_KEYWORDS)

static PyMethodDef buffer_methods[] = {
    {"from_handle", (PyCFunction)(void (*)(void))buffer_from_handle, KW | METH_STATIC,
     "from_handle(ptr, size, mr=None, owner=None, *, stream=None)\n--\n\n"
     "A Buffer over existing memory at ptr (anything int() accepts) of size "
     "bytes.\n\n"
     "With mr, the Buffer owns the memory: mr.deallocate(ptr, size, "
     "stream=...) is called once, when the last holder of the memory lets go; "
     "stream is the deallocation stream. With owner, owner is kept alive until "
     "then and nothing is freed. With neither, the memory is borrowed: the "
     "caller keeps it alive while the Buffer is used. mr and owner exclude "
     "each other."},
    {"close", (PyCFunction)(void (*)(void))buffer_close, KW,
     "close(stream=None)\n--\n\n"
     "Drop this Buffer's hold on the memory; it is released when the last "
     "holder (views, exported tensors) lets go. A stream given replaces the "
     "deallocation stream first. Does nothing when already closed."},
    {"set_deallocation_stream", (PyCFunction)buffer_set_deallocation_stream, METH_O,
     "set_deallocation_stream(stream)\n--\n\n"
     "Set the stream on which a resource-owned Buffer is freed. Nothing is "
     "synchronized: order every use of the memory before that stream reaches "
     "the free."},
    {"__enter__", (PyCFunction)buffer_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)buffer_exit, METH_VARARGS, "close() on leaving."},
    {"__buffer__", (PyCFunction)buffer_dunder_buffer, METH_VARARGS,
     "Not implemented yet."},
    {"__release_buffer__", (PyCFunction)buffer_dunder_release_buffer, METH_VARARGS,
     "Not implemented yet."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject BufferType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "strided.Buffer",
    .tp_doc = "Memory of any kind (host, pinned, device, managed): an address, a "
              "size in bytes, and how the memory is released.\n\n"
              "Made by MemoryResource.allocate() or Buffer.from_handle(), not "
              "directly. Usable as a context manager that closes it.",
    .tp_basicsize = sizeof(BufferObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = buffer_new,
    .tp_dealloc = (destructor)buffer_dealloc,
    .tp_traverse = (traverseproc)buffer_traverse,
    .tp_clear = (inquiry)buffer_clear,
    .tp_finalize = (destructor)buffer_finalize,
    .tp_repr = (reprfunc)buffer_repr,
    .tp_hash = (hashfunc)buffer_hash,
    .tp_richcompare = buffer_richcompare,
    .tp_weaklistoffset = offsetof(BufferObject, weakrefs),
    .tp_methods = buffer_methods,
    .tp_getset = buffer_getset,
};

int strided_py_add_buffer_type(PyObject *module)
{
    if (PyType_Ready(&BufferType) < 0)
        return -1;
    return PyModule_AddObjectRef(module, "Buffer", (PyObject *)&BufferType);
}
