/*
 * view_ipc.c: StridedMemoryView across processes: get_ipc_descriptor (the
 * C library's view descriptor, with an interprocess event when a stream is
 * given), from_ipc_descriptor, and pickling through them.
 *
 * Ownership: the event of a descriptor is a capsule that releases it
 * (strided_ipc_event_release) when the exporting process's
 * IPCViewDescriptor goes; an imported view holds its new C buffer (one
 * reference) and a Buffer object wrapping it, its base.
 */
#include "args.h"
#include "view.h"

static void release_event(PyObject *capsule)
{
    strided_ipc_event_release(PyCapsule_GetPointer(capsule, "strided.ipc_event"));
}

/* The view's descriptor: bytes, and the event capsule (new reference) or
 * None. NULL with an exception. */
static PyObject *export_view(strided_py_view *self, PyObject *stream_obj, PyObject **out_event)
{
    *out_event = Py_NewRef(Py_None);
    strided_ipc_event *event = NULL;
    strided_status status = STRIDED_OK;
    if (stream_obj != NULL && stream_obj != Py_None) {
        void *stream = NULL;
        if (strided_py_as_stream(stream_obj, &stream) < 0)
            return NULL;
        int device = self->view.home_device >= 0 ? self->view.home_device : 0;
        Py_BEGIN_ALLOW_THREADS
        status = strided_ipc_event_record(device, stream, &event);
        Py_END_ALLOW_THREADS
        if (status != STRIDED_OK)
            return strided_py_raise_at(status, STRIDED_PY_IPC);
        PyObject *capsule = PyCapsule_New(event, "strided.ipc_event", release_event);
        if (capsule == NULL) {
            strided_ipc_event_release(event);
            return NULL;
        }
        Py_SETREF(*out_event, capsule);
    }
    size_t size = STRIDED_VIEW_IPC_DESCRIPTOR_SIZE(self->view.layout.ndim), written = 0;
    PyObject *bytes = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)size);
    if (bytes == NULL)
        return NULL;
    unsigned char *d = (unsigned char *)PyBytes_AS_STRING(bytes);
    Py_BEGIN_ALLOW_THREADS
    status = strided_view_export_ipc(&self->view, event, d, size, &written);
    Py_END_ALLOW_THREADS
    if (status != STRIDED_OK) {
        Py_DECREF(bytes);
        return strided_py_raise_at(status, STRIDED_PY_IPC);
    }
    return bytes;
}

PyObject *strided_py_view_get_ipc_descriptor(strided_py_view *self, PyObject *const *args,
                                             Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"stream", NULL};
    PyObject *a[1];
    if (nargs > 0) {
        PyErr_SetString(PyExc_TypeError, "get_ipc_descriptor() takes only keyword arguments");
        return NULL;
    }
    if (strided_py_bind_args("get_ipc_descriptor", args, nargs, kwnames, names, 0, a) < 0)
        return NULL;
    PyObject *event = NULL;
    PyObject *bytes = export_view(self, a[0], &event);
    PyObject *cls = bytes == NULL ? NULL : strided_py_ipc_helper("IPCViewDescriptor");
    PyObject *r = cls == NULL ? NULL : PyObject_CallMethod(cls, "_init", "OO", bytes, event);
    Py_XDECREF(cls);
    Py_XDECREF(bytes);
    Py_XDECREF(event);
    return r;
}

PyObject *strided_py_view_from_ipc_descriptor(PyObject *cls, PyObject *const *args,
                                              Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"descriptor", "mr", "stream", NULL};
    PyObject *a[3];
    if (nargs > 2) {
        PyErr_Format(PyExc_TypeError,
                     "from_ipc_descriptor() takes at most 2 positional arguments (%zd given)",
                     nargs);
        return NULL;
    }
    if (strided_py_bind_args("from_ipc_descriptor", args, nargs, kwnames, names, 1, a) < 0)
        return NULL;
    PyObject *mr_obj = a[1] != NULL ? a[1] : Py_None;
    void *stream = NULL;
    if (strided_py_as_stream(a[2], &stream) < 0)
        return NULL;
    PyObject *payload = strided_py_ipc_payload(a[0], "IPCViewDescriptor", "descriptor");
    if (payload == NULL)
        return NULL;
    strided_memory_resource *mr = NULL;
    if (mr_obj != Py_None && strided_py_resource_of(mr_obj, &mr) < 0) {
        Py_DECREF(payload);
        return NULL;
    }
    strided_view v;
    strided_status status;
    const char *bytes = PyBytes_AS_STRING(payload);
    size_t size = (size_t)PyBytes_GET_SIZE(payload);
    Py_BEGIN_ALLOW_THREADS
    status = strided_view_import_ipc(mr, bytes, size, stream, &v);
    Py_END_ALLOW_THREADS
    Py_DECREF(payload);
    strided_memory_resource_release(mr);
    if (status != STRIDED_OK)
        return strided_py_raise_at(status, STRIDED_PY_IPC);
    /* The view's Buffer: the imported memory, with the mapped resource for
     * a pool allocation. */
    PyObject *buffer = strided_py_buffer_new(strided_buffer_retain(v.buffer),
                                             strided_buffer_resource(v.buffer) ? mr_obj : NULL,
                                             NULL);
    if (buffer == NULL) {
        strided_view_release(&v);
        return NULL;
    }
    (void)cls;
    PyObject *view = (PyObject *)strided_py_view_new(&v, buffer, NULL, buffer, NULL);
    Py_DECREF(buffer);
    return view;
}

PyObject *strided_py_view_reduce(strided_py_view *self, PyObject *unused)
{
    (void)unused;
    PyObject *event = NULL;
    PyObject *bytes = export_view(self, NULL, &event);
    Py_XDECREF(event);
    if (bytes == NULL)
        return NULL;
    PyObject *mr = self->base != NULL ? PyObject_GetAttrString(self->base, "memory_resource")
                                      : Py_NewRef(Py_None);
    if (mr == NULL) {
        /* A base that is not a strided Buffer shares without a resource. */
        PyErr_Clear();
        mr = Py_NewRef(Py_None);
    }
    PyObject *cls = strided_py_ipc_helper("IPCViewDescriptor");
    PyObject *descriptor = cls == NULL ? NULL : PyObject_CallMethod(cls, "_init", "O", bytes);
    PyObject *fn = descriptor == NULL ? NULL : strided_py_ipc_helper("_view_from_descriptor");
    PyObject *r = fn == NULL
                      ? NULL
                      : Py_BuildValue("(O(OOO))", fn, (PyObject *)Py_TYPE(self), mr, descriptor);
    Py_XDECREF(fn);
    Py_XDECREF(descriptor);
    Py_XDECREF(cls);
    Py_DECREF(mr);
    Py_DECREF(bytes);
    return r;
}
