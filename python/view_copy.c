/*
 * view_copy.c: StridedMemoryView.copy_from and copy_to: the arguments
 * converted (stream, blocking, the allocator's memory resources), the copy
 * run by libstrided (strided_view_copy_ex) with the GIL released.
 */
#include <string.h>

#include "args.h"
#include "view.h"

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
                             "allocator: unknown key %R (the keys are 'host' and 'device')", key);
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
static PyObject *copy_views(strided_py_view *dst, strided_py_view *src, PyObject *stream_obj,
                            PyObject *allocator, PyObject *blocking)
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
        PyObject *dd = strided_py_view_dtype(dst), *sd = dd ? strided_py_view_dtype(src) : NULL;
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

static strided_py_view *view_arg(const char *name, PyObject *obj)
{
    if (!PyObject_TypeCheck(obj, &strided_py_view_type)) {
        PyErr_Format(PyExc_TypeError, "%s: other must be a StridedMemoryView, got %.200s", name,
                     Py_TYPE(obj)->tp_name);
        return NULL;
    }
    return (strided_py_view *)obj;
}

PyObject *strided_py_view_copy_from(strided_py_view *self, PyObject *const *args, Py_ssize_t nargs,
                                    PyObject *kwnames)
{
    PyObject *a[4];
    if (strided_py_bind_args("copy_from", args, nargs, kwnames, copy_names, 1, a) < 0)
        return NULL;
    strided_py_view *src = view_arg("copy_from", a[0]);
    return src ? copy_views(self, src, a[1], a[2], a[3]) : NULL;
}

PyObject *strided_py_view_copy_to(strided_py_view *self, PyObject *const *args, Py_ssize_t nargs,
                                  PyObject *kwnames)
{
    PyObject *a[4];
    if (strided_py_bind_args("copy_to", args, nargs, kwnames, copy_names, 1, a) < 0)
        return NULL;
    strided_py_view *dst = view_arg("copy_to", a[0]);
    return dst ? copy_views(dst, self, a[1], a[2], a[3]) : NULL;
}
