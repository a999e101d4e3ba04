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
#include <string.h>

#include "args.h"
#include "strided_py.h"

typedef struct {
    PyObject_HEAD
    strided_buffer *buf;  /* one reference; NULL once closed */
    PyObject *mr;         /* memory_resource, or NULL */
    PyObject *owner;      /* owner, or NULL */
    PyObject *hold;       /* the memory's hold, joined; or NULL (none, or
                          * closed) */
    PyObject *descriptor; /* the IPCBufferDescriptor once made, or NULL */
    PyObject *weakrefs;
} BufferObject;

static PyTypeObject BufferType;

static const char closed_message[] = "Buffer has been closed";

const char strided_py_none_stream_message[] =
    "stream is required and must not be None; pass device.default_stream explicitly to use "
    "the default stream.";

/* The open buffer of self, or NULL with RuntimeError. */
static strided_buffer *open_buffer(BufferObject *self)
{
    if (self->buf == NULL)
        PyErr_SetString(PyExc_RuntimeError, closed_message);
    return self->buf;
}

/* A new object of type (Buffer or ManagedBuffer) taking the reference b;
 * see strided_py_buffer_new_held. */
static PyObject *new_typed(PyTypeObject *type, strided_buffer *b, PyObject *mr, PyObject *owner,
                           PyObject *hold)
{
    BufferObject *self = PyObject_GC_New(BufferObject, type);
    if (self == NULL) {
        strided_py_release_buffer(b);
        return NULL;
    }
    self->buf = b;
    self->mr = Py_XNewRef(mr);
    self->owner = Py_XNewRef(owner);
    self->hold = strided_py_hold_join(hold);
    self->weakrefs = NULL;
    self->descriptor = NULL;
    PyObject_GC_Track(self);
    return (PyObject *)self;
}

PyObject *strided_py_buffer_new_held(strided_buffer *b, PyObject *mr, PyObject *owner,
                                     PyObject *hold)
{
    return new_typed(&BufferType, b, mr, owner, hold);
}

PyObject *strided_py_buffer_new(strided_buffer *b, PyObject *mr, PyObject *owner)
{
    return strided_py_buffer_new_held(b, mr, owner, NULL);
}

PyObject *strided_py_managed_buffer_new(strided_buffer *b, PyObject *mr)
{
    return new_typed(strided_py_managed_buffer_type(), b, mr, NULL, NULL);
}

PyTypeObject *strided_py_buffer_type(void)
{
    return &BufferType;
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
    PyObject *descriptor = self->descriptor;
    self->buf = NULL;
    self->mr = NULL;
    self->owner = NULL;
    self->hold = NULL;
    self->descriptor = NULL;
    strided_py_hold_leave(hold);
    if (release_gil)
        strided_py_release_buffer(b);
    else
        strided_buffer_release(b);
    Py_XDECREF(mr);
    Py_XDECREF(owner);
    Py_XDECREF(descriptor);
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

/* A new object of type over size bytes at ptr that keeps owner alive (its
 * attribute and the C buffer's release callback each hold a reference) and
 * frees nothing; the C library learns the memory's kind. */
static PyObject *wrap_owned(PyTypeObject *type, void *ptr, size_t size, PyObject *owner)
{
    strided_buffer *b = NULL;
    strided_status status;
    Py_INCREF(owner); /* the callback's reference */
    Py_BEGIN_ALLOW_THREADS
    status = strided_buffer_wrap(ptr, size, release_owner, owner, &b);
    Py_END_ALLOW_THREADS
    if (status != STRIDED_OK) {
        strided_py_raise(status);
        Py_DECREF(owner); /* the callback will never run */
        return NULL;
    }
    PyObject *hold = strided_py_hold_new(b, owner);
    if (hold == NULL) {
        strided_py_release_buffer(b);
        return NULL;
    }
    PyObject *self = new_typed(type, b, NULL, owner, hold);
    Py_DECREF(hold);
    return self;
}

/* obj's attribute name (new reference); TypeError naming what for an
 * object that has none. */
static PyObject *buffer_like_attribute(PyObject *obj, const char *name, const char *what)
{
    PyObject *value = PyObject_GetAttrString(obj, name);
    if (value == NULL && PyErr_ExceptionMatches(PyExc_AttributeError)) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError,
                     "Argument '%s' has incorrect type (expected strided.Buffer or an object "
                     "with handle, size, is_host_accessible and is_device_accessible, got "
                     "%.200s)",
                     what, Py_TYPE(obj)->tp_name);
    }
    return value;
}

/* The Buffer over the memory of a Buffer-like object: its handle and size,
 * read after its is_host_accessible and is_device_accessible (a closed
 * cuda.core Buffer raises there) and its is_closed, when it has one. */
static PyObject *wrap_buffer_like(PyObject *obj, const char *what)
{
    static const char *const names[] = {"is_host_accessible", "is_device_accessible", "handle",
                                        "size"};
    PyObject *v[4] = {NULL, NULL, NULL, NULL}, *closed = NULL, *result = NULL;
    int is_closed = 0;
    void *ptr;
    size_t size;
    for (int i = 0; i < 4; i++)
        if ((v[i] = buffer_like_attribute(obj, names[i], what)) == NULL)
            goto done;
    closed = PyObject_GetAttrString(obj, "is_closed");
    if (closed == NULL && PyErr_ExceptionMatches(PyExc_AttributeError))
        PyErr_Clear();
    else if (closed == NULL || (is_closed = PyObject_IsTrue(closed)) < 0)
        goto done;
    if (is_closed)
        PyErr_SetString(PyExc_RuntimeError, closed_message);
    else if (strided_py_as_address(v[2], "handle", &ptr) == 0 &&
             strided_py_as_size(v[3], "size", &size) == 0)
        result = wrap_owned(&BufferType, ptr, size, obj);
done:
    Py_XDECREF(closed);
    for (int i = 0; i < 4; i++)
        Py_XDECREF(v[i]);
    return result;
}

PyObject *strided_py_buffer_arg(PyObject *obj, const char *what)
{
    if (!PyObject_TypeCheck(obj, &BufferType))
        return wrap_buffer_like(obj, what);
    return open_buffer((BufferObject *)obj) ? Py_NewRef(obj) : NULL;
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

PyObject *strided_py_buffer_from_handle(PyTypeObject *type, PyObject *const *args, Py_ssize_t nargs,
                                        PyObject *kwnames)
{
    static const char *const names[] = {"ptr", "size", "mr", "owner", "stream", NULL};
    PyObject *a[5];
    if (nargs > 4) {
        PyErr_Format(PyExc_TypeError,
                     "from_handle() takes at most 4 positional arguments (%zd given)", nargs);
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
        return wrap_owned(type, ptr, size, owner);
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
    PyObject *self = new_typed(type, b, mr, owner, hold);
    Py_XDECREF(hold);
    return self;
}

/* Buffer.from_handle, a static method: it makes a Buffer, whatever class
 * it is called on (as cuda.core's). */
static PyObject *buffer_from_handle(PyObject *unused, PyObject *const *args, Py_ssize_t nargs,
                                    PyObject *kwnames)
{
    (void)unused;
    return strided_py_buffer_from_handle(&BufferType, args, nargs, kwnames);
}

static PyObject *buffer_close(BufferObject *self, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames)
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
            strided_status status = strided_buffer_set_deallocation_stream(self->buf, stream);
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
        PyErr_SetString(PyExc_TypeError, strided_py_none_stream_message);
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

/* The stream argument of fill, copy_to and copy_from: what
 * strided_py_as_stream accepts, or None (no stream), which libstrided
 * allows for host-only memory only. */
static int stream_arg(PyObject *obj, void **stream, unsigned *flags)
{
    *flags = obj == Py_None ? STRIDED_BUFFER_NO_STREAM : STRIDED_BUFFER_DEFAULT;
    return strided_py_as_stream(obj, stream);
}

/* cuda.core's TypeError for no stream, where b's memory needs one. */
static int check_stream_given(unsigned flags, strided_buffer *b)
{
    if ((flags & STRIDED_BUFFER_NO_STREAM) && !strided_buffer_is_host_only(b)) {
        PyErr_SetString(PyExc_TypeError, strided_py_none_stream_message);
        return -1;
    }
    return 0;
}

/* Bind the arguments of fill, copy_to and copy_from into out: one
 * positional argument (required when required is true), then the
 * keyword-only stream, which must be given, and the other names. */
static int bind_method(const char *name, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                       const char *const *names, bool required, PyObject **out)
{
    if (nargs <= 1 && strided_py_bind_args(name, args, nargs, kwnames, names, 0, out) < 0)
        return -1;
    if (nargs > 1 || (required && out[0] == NULL)) {
        PyErr_Format(PyExc_TypeError, "%s() takes %s 1 positional argument (%zd given)", name,
                     required ? "exactly" : "at most", nargs);
        return -1;
    }
    if (out[1] == NULL) {
        PyErr_Format(PyExc_TypeError, "%s() needs keyword-only argument stream", name);
        return -1;
    }
    return 0;
}

/* fill's value as the bytes of its pattern: an int (True and False
 * included) in 0..255 is one byte; any object with the buffer protocol
 * gives its bytes, whose count libstrided checks. out holds 4 bytes; *n
 * is the count (the bytes are copied only when they fit). */
static int fill_pattern(PyObject *value, unsigned char out[4], size_t *n)
{
    if (PyLong_Check(value)) {
        int overflow;
        long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
        if (v == -1 && PyErr_Occurred())
            return -1;
        if (overflow < 0 || (overflow == 0 && v < 0)) {
            PyErr_SetString(PyExc_OverflowError, "can't convert negative value to uint8_t");
            return -1;
        }
        if (overflow > 0 || v > 255) {
            PyErr_SetString(PyExc_OverflowError, "value too large to convert to uint8_t");
            return -1;
        }
        out[0] = (unsigned char)v;
        *n = 1;
        return 0;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(value, &view, PyBUF_FULL_RO) < 0)
        return -1;
    int rc = 0;
    *n = (size_t)view.len;
    if (view.len <= 4)
        rc = PyBuffer_ToContiguous(out, &view, view.len, 'C');
    PyBuffer_Release(&view);
    return rc;
}

/* What a fill or copy is given besides the buffers: the fill's pattern of
 * n bytes, or the copy's options (NULL: none) and the name of the method,
 * for cuda.core's messages. */
typedef struct work {
    const void *pattern;
    size_t n;
    const strided_buffer_copy_options *options;
    const char *name;
} work;

/* A copy with options on a stream that cannot take them: cuda.core's
 * TypeError, its sentence after the method's name. Buffers of different
 * sizes are left to the copy, which refuses them first, as cuda.core. */
static strided_status check_options_stream(strided_buffer *dst, strided_buffer *src, void *stream,
                                           const work *w, bool *type_error)
{
    *type_error = false;
    if (w->options == NULL || strided_buffer_size(dst) != strided_buffer_size(src))
        return STRIDED_OK;
    strided_status status = strided_buffer_copy_check_stream(dst, src, stream);
    *type_error = status == STRIDED_ERR_INVALID_ARGUMENT;
    return status;
}

/* Fill or copy with the GIL released: the buffers are held for the call,
 * so that a close() on another thread cannot free their memory under it.
 * dst is filled with w's pattern, or is copied into from src. */
static PyObject *run_on_buffers(strided_buffer *dst, strided_buffer *src, const work *w,
                                void *stream, unsigned flags)
{
    strided_status status;
    bool type_error = false;
    strided_buffer_retain(dst);
    strided_buffer_retain(src);
    Py_BEGIN_ALLOW_THREADS
    if (src == NULL)
        status = strided_buffer_fill(dst, w->pattern, w->n, stream, flags);
    else if ((status = check_options_stream(dst, src, stream, w, &type_error)) == STRIDED_OK)
        status = strided_buffer_copy_ex(dst, src, stream, flags, w->options);
    Py_END_ALLOW_THREADS
    /* Raise before releasing: a release may run Python code that
     * overwrites this thread's last error. */
    if (type_error)
        PyErr_Format(PyExc_TypeError, "%s %s", w->name, strided_last_error_reason());
    else if (status != STRIDED_OK)
        strided_py_raise(status);
    strided_py_release_buffer(src);
    strided_py_release_buffer(dst);
    if (status != STRIDED_OK)
        return NULL;
    Py_RETURN_NONE;
}

static const char *const fill_names[] = {"value", "stream", NULL};

static PyObject *buffer_fill(BufferObject *self, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames)
{
    PyObject *a[2];
    if (bind_method("fill", args, nargs, kwnames, fill_names, true, a) < 0)
        return NULL;
    strided_buffer *b = open_buffer(self);
    void *stream;
    unsigned flags;
    if (b == NULL || stream_arg(a[1], &stream, &flags) < 0 || check_stream_given(flags, b) < 0)
        return NULL;
    unsigned char pattern[4];
    work w = {pattern, 0, NULL, "fill"};
    if (fill_pattern(a[0], pattern, &w.n) < 0)
        return NULL;
    return run_on_buffers(b, NULL, &w, stream, flags);
}

/* copy_to's and copy_from's options: None (*given false), or a CopyOptions,
 * strided's or cuda.core's (by its class's name), read into *out; cuda.core's
 * TypeError for anything else. */
static int read_options(const char *name, PyObject *options, strided_buffer_copy_options *out,
                        bool *given)
{
    *given = options != NULL && options != Py_None;
    if (!*given)
        return 0;
    if (strcmp(Py_TYPE(options)->tp_name, "CopyOptions") != 0) {
        PyErr_Format(PyExc_TypeError, "%s: options must be CopyOptions, got %.200s", name,
                     Py_TYPE(options)->tp_name);
        return -1;
    }
    /* One that lacks a field of CopyOptions is not one. */
    if (strided_py_as_copy_options(options, out) < 0)
        return strided_py_retype_attribute_error("%s: options must be CopyOptions, got %.200s",
                                                 name, Py_TYPE(options)->tp_name);
    return 0;
}

/* A destination of copy_to's size from the memory resource, allocated on
 * the stream given (new reference). */
static PyObject *allocate_destination(BufferObject *self, strided_buffer *b, PyObject *stream)
{
    if (self->mr == NULL) {
        PyErr_SetString(PyExc_ValueError, "a destination buffer must be provided (this buffer "
                                          "does not have a memory_resource)");
        return NULL;
    }
    PyObject *allocate = PyObject_GetAttrString(self->mr, "allocate");
    if (allocate == NULL) {
        strided_py_retype_attribute_error("copy_to: the memory_resource (%.200s) has no "
                                          "allocate()",
                                          Py_TYPE(self->mr)->tp_name);
        return NULL;
    }
    PyObject *size = PyLong_FromSize_t(strided_buffer_size(b));
    /* cuda.core's resources take only its own Stream. */
    PyObject *arg = size ? strided_py_resource_stream(self->mr, stream) : NULL;
    PyObject *kwargs = arg ? Py_BuildValue("{s:O}", "stream", arg) : NULL;
    Py_XDECREF(arg);
    PyObject *args = kwargs ? PyTuple_Pack(1, size) : NULL;
    PyObject *dst = args ? PyObject_Call(allocate, args, kwargs) : NULL;
    Py_XDECREF(args);
    Py_XDECREF(kwargs);
    Py_XDECREF(size);
    Py_XDECREF(allocate);
    return dst;
}

static const char *const copy_to_names[] = {"dst", "stream", "options", NULL};
static const char *const copy_from_names[] = {"src", "stream", "options", NULL};

/* The arguments of copy_to (name "copy_to") or copy_from bound into a (the
 * other buffer, stream, options), the options read into w: self's open
 * buffer, or NULL with an exception. */
static strided_buffer *copy_arguments(BufferObject *self, const char *name, PyObject *const *args,
                                      Py_ssize_t nargs, PyObject *kwnames, PyObject **a,
                                      strided_buffer_copy_options *options, work *w)
{
    bool to = strcmp(name, "copy_to") == 0;
    const char *const *names = to ? copy_to_names : copy_from_names;
    bool given = false;
    if (bind_method(name, args, nargs, kwnames, names, !to, a) < 0 ||
        read_options(name, a[2], options, &given) < 0)
        return NULL;
    *w = (work){NULL, 0, given ? options : NULL, name};
    return open_buffer(self);
}

/* self.copy_to(dst=None, *, stream, options=None): dst, or the Buffer
 * allocated for it. */
static PyObject *buffer_copy_to(BufferObject *self, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames)
{
    PyObject *a[3];
    strided_buffer_copy_options options;
    work w;
    strided_buffer *src = copy_arguments(self, "copy_to", args, nargs, kwnames, a, &options, &w);
    void *stream;
    unsigned flags;
    if (src == NULL || stream_arg(a[1], &stream, &flags) < 0 || check_stream_given(flags, src) < 0)
        return NULL;
    bool allocated = a[0] == NULL || a[0] == Py_None;
    PyObject *dst = allocated ? allocate_destination(self, src, a[1]) : Py_NewRef(a[0]);
    PyObject *dst_buffer = dst ? strided_py_buffer_arg(dst, "dst") : NULL;
    PyObject *done = NULL;
    if (dst_buffer != NULL) {
        strided_buffer *d = strided_py_buffer_of(dst_buffer);
        if (check_stream_given(flags, d) == 0)
            done = run_on_buffers(d, src, &w, stream, flags);
        Py_DECREF(dst_buffer);
    }
    Py_XDECREF(done);
    if (done == NULL)
        Py_CLEAR(dst);
    return dst;
}

/* self.copy_from(src, *, stream, options=None). */
static PyObject *buffer_copy_from(BufferObject *self, PyObject *const *args, Py_ssize_t nargs,
                                  PyObject *kwnames)
{
    PyObject *a[3];
    strided_buffer_copy_options options;
    work w;
    strided_buffer *dst = copy_arguments(self, "copy_from", args, nargs, kwnames, a, &options, &w);
    PyObject *src_buffer = dst ? strided_py_buffer_arg(a[0], "src") : NULL;
    if (src_buffer == NULL)
        return NULL;
    strided_buffer *src = strided_py_buffer_of(src_buffer);
    void *stream;
    unsigned flags;
    PyObject *done = NULL;
    if (stream_arg(a[1], &stream, &flags) == 0 && check_stream_given(flags, dst) == 0 &&
        check_stream_given(flags, src) == 0)
        done = run_on_buffers(dst, src, &w, stream, flags);
    Py_DECREF(src_buffer);
    return done;
}

/* Run the deleter of an exported tensor of either form. */
static void delete_tensor(void *m, bool versioned)
{
    if (versioned)
        ((strided_dl_managed_tensor_versioned *)m)->deleter(m);
    else
        ((strided_dl_managed_tensor *)m)->deleter(m);
}

/* The destructor of an exported tensor's capsule: a consumer that takes the
 * tensor renames the capsule, so one still named as exported owns it. */
static void dlpack_capsule_destructor(PyObject *capsule)
{
    bool versioned = PyCapsule_IsValid(capsule, STRIDED_DLPACK_CAPSULE_VERSIONED);
    if (versioned || PyCapsule_IsValid(capsule, STRIDED_DLPACK_CAPSULE))
        delete_tensor(PyCapsule_GetPointer(capsule, PyCapsule_GetName(capsule)), versioned);
}

static const char *const dlpack_names[] = {"stream", "max_version", "dl_device", "copy", NULL};

/* __dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None):
 * the buffer's bytes as a 1-D int8 tensor; the stream is not used (there
 * is nothing of the buffer's own to order). */
static PyObject *buffer_dunder_dlpack(BufferObject *self, PyObject *const *args, Py_ssize_t nargs,
                                      PyObject *kwnames)
{
    PyObject *a[4];
    if (nargs > 0)
        return PyErr_Format(PyExc_TypeError,
                            "__dlpack__() takes no positional arguments (%zd given)", nargs);
    if (strided_py_bind_args("__dlpack__", args, nargs, kwnames, dlpack_names, 0, a) < 0)
        return NULL;
    PyObject *max_version = a[1] == NULL ? Py_None : a[1];
    if (max_version != Py_None && !PyTuple_Check(max_version))
        return PyErr_Format(PyExc_TypeError,
                            "Argument 'max_version' has incorrect type (expected tuple, got "
                            "%.200s)",
                            Py_TYPE(max_version)->tp_name);
    strided_buffer *b = open_buffer(self);
    if (b == NULL)
        return NULL;
    if (a[2] != NULL && a[2] != Py_None) {
        PyErr_SetString(PyExc_BufferError, "Sorry, not supported: dl_device other than None");
        return NULL;
    }
    if (a[3] == Py_True) {
        PyErr_SetString(PyExc_BufferError, "Sorry, not supported: copy=True");
        return NULL;
    }
    int versioned = 0;
    if (max_version != Py_None) {
        if (PyTuple_GET_SIZE(max_version) != 2)
            return PyErr_Format(PyExc_BufferError, "Expected max_version tuple[int, int], got %R",
                                max_version);
        PyObject *one = Py_BuildValue("(ii)", 1, 0);
        versioned = one ? PyObject_RichCompareBool(max_version, one, Py_GE) : -1;
        Py_XDECREF(one);
        if (versioned < 0)
            return NULL;
    }
    void *m = NULL;
    strided_status status =
        versioned ? strided_buffer_export_dlpack(b, (strided_dl_managed_tensor_versioned **)&m)
                  : strided_buffer_export_dlpack_legacy(b, (strided_dl_managed_tensor **)&m);
    if (status != STRIDED_OK)
        return strided_py_raise_at(status, STRIDED_PY_DLPACK);
    PyObject *capsule =
        PyCapsule_New(m, versioned ? STRIDED_DLPACK_CAPSULE_VERSIONED : STRIDED_DLPACK_CAPSULE,
                      dlpack_capsule_destructor);
    if (capsule == NULL)
        delete_tensor(m, versioned);
    return capsule;
}

static PyObject *buffer_dunder_dlpack_device(BufferObject *self, PyObject *unused)
{
    (void)unused;
    strided_buffer *b = open_buffer(self);
    strided_device d;
    if (b == NULL)
        return NULL;
    strided_status status = strided_buffer_dlpack_device(b, &d);
    if (status != STRIDED_OK)
        return strided_py_raise_at(status, STRIDED_PY_DLPACK);
    return Py_BuildValue("(ii)", (int)d.device_type, (int)d.device_id);
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

#define INFO_FLAG_GETTER(name, field)                                \
    static PyObject *get_##name(BufferObject *self, void *closure)   \
    {                                                                \
        (void)closure;                                               \
        strided_buffer *b = open_buffer(self);                       \
        if (b == NULL)                                               \
            return NULL;                                             \
        return PyBool_FromLong(strided_buffer_memory_info(b).field); \
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
    return PyBool_FromLong(strided_buffer_is_mapped(self->buf));
}

/* An IPCBufferDescriptor of the open buffer: the C library's descriptor
 * bytes and the buffer's size; made once and kept (a descriptor's fields
 * are read-only), as cuda.core keeps its own. */
static PyObject *get_ipc_descriptor(BufferObject *self, void *closure)
{
    unsigned char d[STRIDED_IPC_BUFFER_DESCRIPTOR_SIZE];
    (void)closure;
    if (open_buffer(self) == NULL)
        return NULL;
    if (self->descriptor != NULL)
        return Py_NewRef(self->descriptor);
    strided_status status;
    Py_BEGIN_ALLOW_THREADS
    status = strided_buffer_export_ipc(self->buf, d);
    Py_END_ALLOW_THREADS
    if (status != STRIDED_OK)
        return strided_py_raise_at(status, STRIDED_PY_IPC);
    PyObject *cls = strided_py_ipc_helper("IPCBufferDescriptor");
    PyObject *r = cls == NULL ? NULL
                              : PyObject_CallMethod(cls, "_init", "y#n", (const char *)d,
                                                    (Py_ssize_t)sizeof d,
                                                    (Py_ssize_t)strided_buffer_size(self->buf));
    Py_XDECREF(cls);
    if (r != NULL && self->buf != NULL && self->descriptor == NULL)
        self->descriptor = Py_NewRef(r);
    return r;
}

static PyObject *buffer_get_ipc_descriptor(BufferObject *self, PyObject *unused)
{
    (void)unused;
    return get_ipc_descriptor(self, NULL);
}

/* The size an IPCBufferDescriptor declares must be the one its payload
 * describes (the allocation the import maps): cuda.core refuses a larger
 * one, which a peer may have written. 0, or -1 with an exception. */
static int check_descriptor_size(PyObject *descriptor, PyObject *payload)
{
    strided_buffer_ipc_info info;
    strided_status status = strided_buffer_ipc_describe(PyBytes_AS_STRING(payload),
                                                        (size_t)PyBytes_GET_SIZE(payload), &info);
    if (status != STRIDED_OK) {
        strided_py_raise_at(status, STRIDED_PY_IPC);
        return -1;
    }
    PyObject *size_obj = PyObject_GetAttrString(descriptor, "size");
    if (size_obj == NULL)
        return -1;
    unsigned long long size = PyLong_AsUnsignedLongLong(size_obj);
    Py_DECREF(size_obj);
    if (size == (unsigned long long)-1 && PyErr_Occurred())
        return -1;
    if (size != info.size) {
        PyErr_Format(PyExc_ValueError,
                     "the descriptor's size (%llu bytes) %s the mapped allocation extent "
                     "(%llu bytes)",
                     size, size > info.size ? "exceeds" : "differs from",
                     (unsigned long long)info.size);
        return -1;
    }
    return 0;
}

/* Buffer.from_ipc_descriptor(mr, ipc_descriptor, *, stream=None). */
static PyObject *buffer_from_ipc_descriptor(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                            PyObject *kwnames)
{
    static const char *const names[] = {"mr", "ipc_descriptor", "stream", NULL};
    PyObject *a[3];
    (void)cls;
    if (nargs > 2) {
        PyErr_Format(PyExc_TypeError,
                     "from_ipc_descriptor() takes 2 positional arguments (%zd given)", nargs);
        return NULL;
    }
    if (strided_py_bind_args("from_ipc_descriptor", args, nargs, kwnames, names, 2, a) < 0)
        return NULL;
    void *stream = NULL;
    if (strided_py_as_stream(a[2], &stream) < 0)
        return NULL;
    PyObject *payload = strided_py_ipc_payload(a[1], "IPCBufferDescriptor", "ipc_descriptor");
    if (payload == NULL || check_descriptor_size(a[1], payload) < 0) {
        Py_XDECREF(payload);
        return NULL;
    }
    strided_memory_resource *mr = NULL;
    if (a[0] != Py_None && strided_py_resource_of(a[0], &mr) < 0) {
        Py_DECREF(payload);
        return NULL;
    }
    strided_buffer *b = NULL;
    strided_status status;
    const char *bytes = PyBytes_AS_STRING(payload);
    size_t size = (size_t)PyBytes_GET_SIZE(payload);
    Py_BEGIN_ALLOW_THREADS
    status = strided_buffer_import_ipc(mr, bytes, size, stream, &b);
    Py_END_ALLOW_THREADS
    Py_DECREF(payload);
    strided_memory_resource_release(mr);
    if (status != STRIDED_OK)
        return strided_py_raise_at(status, STRIDED_PY_IPC);
    return strided_py_buffer_new(b, strided_buffer_resource(b) != NULL ? a[0] : NULL, NULL);
}

/* Pickle as the resource (pickled by the registry's UUID) and the
 * descriptor: unpickling imports the memory again. */
static PyObject *buffer_reduce(BufferObject *self, PyObject *unused)
{
    (void)unused;
    PyObject *descriptor = get_ipc_descriptor(self, NULL);
    if (descriptor == NULL)
        return NULL;
    PyObject *fn = strided_py_ipc_helper("_buffer_from_descriptor");
    PyObject *r = fn == NULL ? NULL
                             : Py_BuildValue("(O(OOO))", fn, (PyObject *)&BufferType,
                                             self->mr != NULL ? self->mr : Py_None, descriptor);
    Py_XDECREF(fn);
    Py_DECREF(descriptor);
    return r;
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

/* hash((ptr, size)), as cuda.core's. */
static Py_hash_t buffer_hash(BufferObject *self)
{
    uintptr_t ptr;
    size_t size;
    address_and_size(self, &ptr, &size);
    PyObject *key = Py_BuildValue("(NN)", PyLong_FromVoidPtr((void *)ptr), PyLong_FromSize_t(size));
    Py_hash_t h = key ? PyObject_Hash(key) : -1;
    Py_XDECREF(key);
    return h;
}

static PyObject *buffer_repr(BufferObject *self)
{
    uintptr_t ptr;
    size_t size;
    char text[64];
    address_and_size(self, &ptr, &size);
    snprintf(text, sizeof text, "<Buffer ptr=0x%llx size=%zu>", (unsigned long long)ptr, size);
    return PyUnicode_FromString(text);
}

static PyGetSetDef buffer_getset[] = {
    {"handle", (getter)get_handle, NULL,
     "The address of the memory, an int.\n"
     "\n"
     "The host address for pinned memory. Like every property but is_closed, it\n"
     "raises RuntimeError once the Buffer is closed.",
     NULL},
    {"size", (getter)get_size, NULL, "The size of the memory in bytes.", NULL},
    {"device_id", (getter)get_device_id, NULL,
     "The device the memory belongs to.\n"
     "\n"
     "-1 for memory bound to no device (host memory, and pinned memory from the\n"
     "host's pool).",
     NULL},
    {"is_device_accessible", (getter)get_is_device_accessible, NULL,
     "Whether a CUDA device can read and write the memory.", NULL},
    {"is_host_accessible", (getter)get_is_host_accessible, NULL,
     "Whether the host can read and write the memory.", NULL},
    {"is_managed", (getter)get_is_managed, NULL,
     "Whether the memory is CUDA managed (unified) memory.", NULL},
    {"memory_resource", (getter)get_memory_resource, NULL,
     "The memory resource that frees the memory, or None.\n"
     "\n"
     "None for memory that is wrapped (from_handle with owner) or borrowed.",
     NULL},
    {"owner", (getter)get_owner, NULL,
     "The object from_handle keeps alive for the memory, or None.", NULL},
    {"is_closed", (getter)get_is_closed, NULL,
     "Whether close() has been called (also by a with block).", NULL},
    {"is_mapped", (getter)get_is_mapped, NULL,
     "Whether the memory was imported from another process (from_ipc_descriptor).", NULL},
    {"ipc_descriptor", (getter)get_ipc_descriptor, NULL,
     "An IPCBufferDescriptor for another process to import (from_ipc_descriptor).\n"
     "\n"
     "Memory of an IPC-enabled (or mapped) pool is shared as a pool allocation; device\n"
     "memory no pool gave (cuMemAlloc, as PyTorch's) through the driver's legacy IPC.\n"
     "Raises RuntimeError for memory that cannot be shared (\"Memory resource is not\n"
     "IPC-enabled\", or host, pinned and managed memory not from an IPC-enabled pool).\n"
     "The buffer must stay alive while another process uses the memory.",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

#define KW (METH_FASTCALL | METH_KEYWORDS)

static PyMethodDef buffer_methods[] = {
    {"from_ipc_descriptor", (PyCFunction)(void (*)(void))buffer_from_ipc_descriptor,
     KW | METH_CLASS,
     "from_ipc_descriptor(mr, ipc_descriptor, *, stream=None)\n"
     "--\n"
     "\n"
     "Import a buffer another process exported (its ipc_descriptor).\n"
     "\n"
     "Parameters\n"
     "----------\n"
     "mr : DeviceMemoryResource or PinnedMemoryResource or None\n"
     "    For a pool allocation, the mapped resource of the exporter's pool\n"
     "    (from_allocation_handle); None for memory shared through legacy IPC.\n"
     "ipc_descriptor : IPCBufferDescriptor\n"
     "stream : int or object with ``__cuda_stream__``, optional\n"
     "    The deallocation stream of a pool allocation (None: the legacy default stream).\n"
     "\n"
     "Raises\n"
     "------\n"
     "ValueError\n"
     "    For a truncated, corrupted, foreign or misdirected descriptor (another machine\n"
     "    or boot, this very process, another pool or device), with the reason.\n"
     "RuntimeError\n"
     "    For a resource that is not IPC-enabled, and when the driver refuses (the\n"
     "    exporter freed the memory or exited)."},
    {"get_ipc_descriptor", (PyCFunction)buffer_get_ipc_descriptor, METH_NOARGS,
     "get_ipc_descriptor($self, /)\n--\n\nThe ipc_descriptor property, as a method (the name "
     "of earlier cuda.core releases)."},
    {"__reduce__", (PyCFunction)buffer_reduce, METH_NOARGS,
     "__reduce__($self, /)\n--\n\nPickle as the memory resource and the ipc_descriptor: "
     "unpickling imports the memory in the receiving process."},
    {"from_handle", (PyCFunction)(void (*)(void))buffer_from_handle, KW | METH_STATIC,
     "from_handle(ptr, size, mr=None, owner=None, *, stream=None)\n"
     "--\n"
     "\n"
     "A Buffer over memory that exists already.\n"
     "\n"
     "The CUDA driver says what kind of memory it is (without a driver: host\n"
     "memory). With mr the Buffer owns the memory, with owner it keeps an object\n"
     "alive, with neither it borrows the memory.\n"
     "\n"
     "Parameters\n"
     "----------\n"
     "ptr : int\n"
     "    The address of the memory (any integer-like object but a float).\n"
     "size : int\n"
     "    Its size in bytes.\n"
     "mr : MemoryResource, optional\n"
     "    The resource that owns the memory (or any object with deallocate(),\n"
     "    is_host_accessible and is_device_accessible; is_managed and device_id\n"
     "    are read too when it has them): ``mr.deallocate(ptr, size,\n"
     "    stream=...)`` is called once, when the last holder of the memory lets\n"
     "    go, on whichever thread that is.\n"
     "owner : object, optional\n"
     "    An object kept alive until then; nothing is freed. Without mr and\n"
     "    owner the caller keeps the memory alive while the Buffer and its views\n"
     "    are in use.\n"
     "stream : int or object with ``__cuda_stream__``, optional\n"
     "    With mr only: the deallocation stream (None: the legacy default\n"
     "    stream).\n"
     "\n"
     "Returns\n"
     "-------\n"
     "Buffer\n"
     "\n"
     "Raises\n"
     "------\n"
     "TypeError\n"
     "    If ptr or size is not an integer, mr is not a memory resource, stream\n"
     "    is not a stream, or more than 4 arguments are given by position.\n"
     "ValueError\n"
     "    If both mr and owner are given, stream is given without mr, or the\n"
     "    range of addresses wraps past the top of the address space.\n"
     "OverflowError\n"
     "    If ptr or size is negative or too large.\n"
     "RuntimeError\n"
     "    If the CUDA driver fails to say what the memory is.\n"
     "\n"
     "Examples\n"
     "--------\n"
     ">>> import numpy as np\n"
     ">>> a = np.arange(4, dtype=np.uint8)\n"
     ">>> buf = strided.Buffer.from_handle(a.ctypes.data, a.nbytes, owner=a)\n"
     ">>> buf.owner is a, buf.size, buf.memory_resource\n"
     "(True, 4, None)"},
    {"close", (PyCFunction)(void (*)(void))buffer_close, KW,
     "close($self, /, stream=None)\n"
     "--\n"
     "\n"
     "Drop this Buffer's hold on the memory.\n"
     "\n"
     "The memory is released when its last holder (this Buffer, the views made\n"
     "from it, exported DLPack tensors) lets go. Closing a closed Buffer does\n"
     "nothing.\n"
     "\n"
     "Parameters\n"
     "----------\n"
     "stream : int or object with ``__cuda_stream__``, optional\n"
     "    A new deallocation stream, for memory a resource frees; ignored for\n"
     "    other memory and when the Buffer is closed already.\n"
     "\n"
     "Raises\n"
     "------\n"
     "TypeError\n"
     "    If stream is not a stream.\n"
     "\n"
     "Examples\n"
     "--------\n"
     ">>> buf = strided.HostMemoryResource().allocate(16)\n"
     ">>> buf.close()\n"
     ">>> buf.is_closed\n"
     "True"},
    {"set_deallocation_stream", (PyCFunction)buffer_set_deallocation_stream, METH_O,
     "set_deallocation_stream($self, stream, /)\n"
     "--\n"
     "\n"
     "Set the stream on which the memory resource frees the memory.\n"
     "\n"
     "Nothing is synchronized: order every use of the memory before the point the\n"
     "stream reaches the free.\n"
     "\n"
     "Parameters\n"
     "----------\n"
     "stream : int or object with ``__cuda_stream__``\n"
     "    The stream; None is refused (pass the default stream explicitly).\n"
     "\n"
     "Raises\n"
     "------\n"
     "TypeError\n"
     "    If stream is None or not a stream.\n"
     "ValueError\n"
     "    If the memory has no memory resource (it is wrapped or borrowed).\n"
     "RuntimeError\n"
     "    If the Buffer is closed."},
    {"fill", (PyCFunction)(void (*)(void))buffer_fill, KW,
     "fill($self, /, value, *, stream)\n"
     "--\n"
     "\n"
     "Fill the buffer with a repeated pattern of 1, 2 or 4 bytes.\n"
     "\n"
     "Memory a device can reach is filled on stream (cuMemsetD8Async, D16 or D32)\n"
     "and the fill is not complete on return; host-only memory is filled by the\n"
     "host, after the work queued on stream, and is complete on return.\n"
     "\n"
     "Parameters\n"
     "----------\n"
     "value : int or bytes-like\n"
     "    An int from 0 to 255 (one byte), or an object with the buffer protocol\n"
     "    (bytes, a NumPy scalar or array) of 1, 2 or 4 bytes, read as a\n"
     "    native-endian unsigned integer.\n"
     "stream : int or object with ``__cuda_stream__``, or None\n"
     "    Required, by keyword. None is allowed for host-only memory only.\n"
     "\n"
     "Raises\n"
     "------\n"
     "TypeError\n"
     "    If stream is missing, or None for memory a device can reach, or value\n"
     "    has neither form.\n"
     "OverflowError\n"
     "    If an int value is outside 0 to 255.\n"
     "ValueError\n"
     "    If value has another number of bytes, or the size is not a multiple of\n"
     "    it.\n"
     "RuntimeError\n"
     "    If the Buffer is closed, or the CUDA driver fails.\n"
     "\n"
     "Examples\n"
     "--------\n"
     ">>> import numpy as np\n"
     ">>> buf = strided.HostMemoryResource().allocate(4)\n"
     ">>> buf.fill(np.uint16(0x0102), stream=None)\n"
     ">>> np.from_dlpack(buf).view(np.uint16).tolist()\n"
     "[258, 258]"},
    {"copy_to", (PyCFunction)(void (*)(void))buffer_copy_to, KW,
     "copy_to($self, /, dst=None, *, stream, options=None)\n"
     "--\n"
     "\n"
     "Copy this buffer's bytes into another buffer of the same size.\n"
     "\n"
     "With memory a device can reach on either side the copy is queued on stream\n"
     "(cuMemcpyAsync) and is not complete on return; between host-only memory the\n"
     "host copies, complete on return.\n"
     "\n"
     "Parameters\n"
     "----------\n"
     "dst : Buffer, optional\n"
     "    The destination (or a Buffer-like object such as a cuda.core Buffer).\n"
     "    Without it, one is allocated from this buffer's memory_resource, on\n"
     "    stream.\n"
     "stream : int or object with ``__cuda_stream__``, or None\n"
     "    Required, by keyword. None is allowed when both sides are host-only.\n"
     "options : CopyOptions, optional\n"
     "    Hints for a copy the driver makes (strided's CopyOptions, or cuda.core's):\n"
     "    cuMemcpyWithAttributesAsync on a CUDA 13.2 driver; before, the plain copy,\n"
     "    which honours src_access_order STREAM and ANY. A copy the host makes\n"
     "    honours them all.\n"
     "\n"
     "Returns\n"
     "-------\n"
     "Buffer\n"
     "    dst, or the Buffer allocated.\n"
     "\n"
     "Raises\n"
     "------\n"
     "TypeError\n"
     "    If stream is missing or None where a device is involved, dst is not a\n"
     "    Buffer, options is not a CopyOptions, or options come with the legacy\n"
     "    default stream or a stream capturing a graph for a copy the driver\n"
     "    makes.\n"
     "ValueError\n"
     "    If the sizes differ, or there is no dst and no memory_resource.\n"
     "NotImplementedError\n"
     "    If options ask for DURING_API_CALL where the copy cannot honour it (a\n"
     "    driver older than CUDA 13.2, or memory of two devices).\n"
     "RuntimeError\n"
     "    If a Buffer is closed, or the CUDA driver fails.\n"
     "\n"
     "Examples\n"
     "--------\n"
     ">>> mr = strided.HostMemoryResource()\n"
     ">>> src = mr.allocate(8)\n"
     ">>> src.fill(1, stream=None)\n"
     ">>> dst = src.copy_to(stream=None)\n"
     ">>> dst.size, dst.memory_resource is mr\n"
     "(8, True)"},
    {"copy_from", (PyCFunction)(void (*)(void))buffer_copy_from, KW,
     "copy_from($self, /, src, *, stream, options=None)\n"
     "--\n"
     "\n"
     "Copy the bytes of another buffer of the same size into this one.\n"
     "\n"
     "The copy runs as copy_to's does: queued on stream when a device can reach\n"
     "either side, by the host between host-only memory.\n"
     "\n"
     "Parameters\n"
     "----------\n"
     "src : Buffer\n"
     "    The source (or a Buffer-like object such as a cuda.core Buffer).\n"
     "stream : int or object with ``__cuda_stream__``, or None\n"
     "    Required, by keyword. None is allowed when both sides are host-only.\n"
     "options : CopyOptions, optional\n"
     "    Hints for a copy the driver makes, as for copy_to.\n"
     "\n"
     "Raises\n"
     "------\n"
     "TypeError\n"
     "    If stream is missing or None where a device is involved, src is not a\n"
     "    Buffer, or options are refused as by copy_to.\n"
     "ValueError\n"
     "    If the sizes differ.\n"
     "NotImplementedError\n"
     "    If options ask for DURING_API_CALL where the copy cannot honour it.\n"
     "RuntimeError\n"
     "    If a Buffer is closed, or the CUDA driver fails.\n"
     "\n"
     "Examples\n"
     "--------\n"
     ">>> import numpy as np\n"
     ">>> mr = strided.HostMemoryResource()\n"
     ">>> a, b = mr.allocate(4), mr.allocate(4)\n"
     ">>> a.fill(9, stream=None)\n"
     ">>> b.copy_from(a, stream=None)\n"
     ">>> np.from_dlpack(b).tolist()\n"
     "[9, 9, 9, 9]"},
    {"__dlpack__", (PyCFunction)(void (*)(void))buffer_dunder_dlpack, KW,
     "__dlpack__($self, /, *, stream=None, max_version=None, dl_device=None, copy=None)\n"
     "--\n"
     "\n"
     "The buffer's bytes as a DLPack capsule of a 1-d int8 tensor.\n"
     "\n"
     "The tensor has size elements and holds the memory until its consumer lets\n"
     "go. There is no work of the buffer's own to order, so stream is not used.\n"
     "\n"
     "Parameters\n"
     "----------\n"
     "stream : int, optional\n"
     "    The consumer's stream (not used).\n"
     "max_version : tuple of two ints, optional\n"
     "    The newest DLPack version the consumer takes: a versioned capsule\n"
     "    (``\"dltensor_versioned\"``) when it is at least ``(1, 0)``, else a\n"
     "    legacy one (``\"dltensor\"``).\n"
     "dl_device : None, optional\n"
     "    Only None: the memory stays where it is.\n"
     "copy : bool, optional\n"
     "    Only None or False: the tensor is the memory itself.\n"
     "\n"
     "Returns\n"
     "-------\n"
     "PyCapsule\n"
     "\n"
     "Raises\n"
     "------\n"
     "TypeError\n"
     "    If an argument is given by position, or max_version is not a tuple.\n"
     "BufferError\n"
     "    If dl_device is given, copy is True, or max_version is not a pair.\n"
     "RuntimeError\n"
     "    If the Buffer is closed."},
    {"__dlpack_device__", (PyCFunction)buffer_dunder_dlpack_device, METH_NOARGS,
     "__dlpack_device__($self, /)\n"
     "--\n"
     "\n"
     "The DLPack device of the memory.\n"
     "\n"
     "Returns\n"
     "-------\n"
     "tuple of two ints\n"
     "    ``(device_type, device_id)``: ``(1, 0)`` for host-only memory, ``(2,\n"
     "    id)`` for device memory, ``(3, 0)`` for memory the host and devices\n"
     "    reach (pinned), ``(13, 0)`` for managed memory.\n"
     "\n"
     "Raises\n"
     "------\n"
     "RuntimeError\n"
     "    If the Buffer is closed."},
    {"__enter__", (PyCFunction)buffer_enter, METH_NOARGS,
     "__enter__($self, /)\n"
     "--\n"
     "\n"
     "Return the Buffer itself, to be closed on leaving the with block."},
    {"__exit__", (PyCFunction)buffer_exit, METH_VARARGS,
     "__exit__($self, *args)\n"
     "--\n"
     "\n"
     "Close the Buffer (close()); an exception passes on."},
    {"__buffer__", (PyCFunction)buffer_dunder_buffer, METH_VARARGS,
     "__buffer__($self, *args)\n"
     "--\n"
     "\n"
     "Not implemented yet: raises NotImplementedError."},
    {"__release_buffer__", (PyCFunction)buffer_dunder_release_buffer, METH_VARARGS,
     "__release_buffer__($self, *args)\n"
     "--\n"
     "\n"
     "Not implemented yet: raises NotImplementedError."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject BufferType = {
    /* Kept as written: clang-format would join the next line to the macro. */
    /* clang-format off */
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "strided.Buffer",
    /* clang-format on */
    .tp_doc = "Memory of any kind (host, pinned, device, managed) and how it is released.\n"
              "\n"
              "A Buffer is an address, a size in bytes and a reference to the memory, made\n"
              "by MemoryResource.allocate() or Buffer.from_handle(), never directly\n"
              "(``Buffer()`` raises RuntimeError). It holds the memory until close(), or\n"
              "until it is garbage collected; views and exported DLPack tensors hold the\n"
              "memory too, so it is released when the last holder lets go. A Buffer is a\n"
              "context manager that closes it on exit. Buffers are equal when they have\n"
              "the same address and size, and hash alike then. The class is cuda.core's\n"
              "``Buffer``.\n"
              "\n"
              "Where a Buffer is taken (copy_to, copy_from, StridedMemoryView.from_buffer)\n"
              "any object with an int handle and size, is_host_accessible and\n"
              "is_device_accessible (a cuda.core Buffer) is taken too: its memory is used\n"
              "in place, kept alive and never freed.\n"
              "\n"
              "Examples\n"
              "--------\n"
              ">>> import numpy as np\n"
              ">>> import strided\n"
              ">>> with strided.HostMemoryResource().allocate(4) as buf:\n"
              "...     buf.fill(7, stream=None)\n"
              "...     print(buf.size, np.from_dlpack(buf))\n"
              "4 [7 7 7 7]\n"
              ">>> buf.is_closed\n"
              "True",
    .tp_basicsize = sizeof(BufferObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_BASETYPE,
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
    if (PyType_Ready(&BufferType) < 0 ||
        PyModule_AddObjectRef(module, "Buffer", (PyObject *)&BufferType) < 0)
        return -1;
    return strided_py_add_managed_buffer_type(module);
}
