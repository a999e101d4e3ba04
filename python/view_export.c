/*
 * view_export.c: StridedMemoryView's exports: __dlpack__ (with its
 * dl_device and copy arguments) and __dlpack_device__, the tensors of the
 * DLPack C exchange API (dlpack_exchange.c), and the two interface dicts
 * (__array_interface__, __cuda_array_interface__). libstrided builds the
 * DLPack tensor and decides the stream, device, copy and element-type
 * rules; a copy runs on its copy engine.
 */
#include <limits.h>
#include <stdint.h>

#include "args.h"
#include "view.h"

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

/* The element-type rule of a DLPack export, for a view whose numpy dtype
 * was given (a view with only a DLPack type exports as it is): libstrided
 * decides from what the dtype is (structured, byte order, DLPack type).
 * Every export goes through here: a view re-typed with a dtype that has no
 * DLPack type keeps its former DLPack type underneath, which must never
 * reach a consumer. */
static int check_export_dtype(strided_py_view *self)
{
    if (self->dtype == NULL)
        return 0;
    strided_typestr t;
    if (strided_py_dtype_info(self->dtype, &t) < 0)
        return -1;
    strided_status status = strided_typestr_check_dlpack_export(&t);
    return status == STRIDED_OK ? 0 : (strided_py_raise_at(status, STRIDED_PY_DLPACK), -1);
}

int strided_py_view_export_versioned(strided_py_view *self,
                                     strided_dl_managed_tensor_versioned **out)
{
    if (check_export_dtype(self) < 0)
        return -1;
    strided_status status = strided_view_export_dlpack(&self->view, out);
    return status == STRIDED_OK ? 0 : (strided_py_raise_at(status, STRIDED_PY_DLPACK), -1);
}

int strided_py_view_export_dl_tensor(strided_py_view *self, strided_dl_tensor *out)
{
    if (check_export_dtype(self) < 0)
        return -1;
    strided_status status = strided_view_export_dl_tensor(&self->view, out);
    return status == STRIDED_OK ? 0 : (strided_py_raise_at(status, STRIDED_PY_DLPACK), -1);
}

/* An int argument of __dlpack__ as an int64, clamped: libstrided refuses
 * what is out of range. -1 with TypeError for a non-integer. */
static int clamped_int64(PyObject *obj, int64_t *out)
{
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
    if (v == -1 && PyErr_Occurred())
        return -1;
    *out = overflow > 0 ? INT64_MAX : overflow < 0 ? INT64_MIN : v;
    return 0;
}

/* dl_device: None (*given false), or a (device_type, device_id) tuple of
 * ints. -1 with BufferError for anything else. */
static int dl_device_of(PyObject *obj, bool *given, int64_t *type, int64_t *id)
{
    *given = obj != NULL && obj != Py_None;
    if (!*given)
        return 0;
    bool ok = PyTuple_Check(obj) && PyTuple_GET_SIZE(obj) == 2;
    for (Py_ssize_t i = 0; ok && i < 2; i++) {
        PyObject *item = PyTuple_GET_ITEM(obj, i);
        ok = PyLong_Check(item) && !PyBool_Check(item);
    }
    if (!ok) {
        PyErr_Format(PyExc_BufferError,
                     "dl_device must be None or a (device_type, device_id) tuple of ints, "
                     "got %R",
                     obj);
        return -1;
    }
    return clamped_int64(PyTuple_GET_ITEM(obj, 0), type) < 0 ||
                   clamped_int64(PyTuple_GET_ITEM(obj, 1), id) < 0
               ? -1
               : 0;
}

static const char *const dlpack_names[] = {"stream", "max_version", "dl_device", "copy", NULL};

PyObject *strided_py_view_dunder_dlpack(strided_py_view *self, PyObject *const *args,
                                        Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *a[4];
    if (nargs > 0)
        return PyErr_Format(PyExc_TypeError,
                            "__dlpack__() takes no positional arguments (%zd given)", nargs);
    if (strided_py_bind_args("__dlpack__", args, nargs, kwnames, dlpack_names, 0, a) < 0)
        return NULL;
    /* The stream is checked by DLPack's rules (libstrided decides); a view
     * has no work of its own in flight, so only a copy uses it. */
    bool stream_given = a[0] != NULL && a[0] != Py_None;
    long long stream = 0;
    if (stream_given) {
        if (PyBool_Check(a[0]) || !PyLong_Check(a[0])) {
            PyErr_Format(PyExc_BufferError, "__dlpack__: stream must be an int or None, got %.200s",
                         Py_TYPE(a[0])->tp_name);
            return NULL;
        }
        int overflow = 0;
        stream = PyLong_AsLongLongAndOverflow(a[0], &overflow);
        if (stream == -1 && PyErr_Occurred())
            return NULL;
        if (overflow != 0) {
            PyErr_Format(PyExc_BufferError, "__dlpack__: stream=%R is not a stream handle", a[0]);
            return NULL;
        }
    }
    bool device_given;
    int64_t device_type = 0, device_id = 0;
    if (dl_device_of(a[2], &device_given, &device_type, &device_id) < 0)
        return NULL;
    strided_dlpack_copy copy = STRIDED_DLPACK_COPY_IF_NEEDED;
    if (a[3] != NULL && a[3] != Py_None) {
        int truth = PyObject_IsTrue(a[3]);
        if (truth < 0)
            return NULL;
        copy = truth ? STRIDED_DLPACK_COPY_ALWAYS : STRIDED_DLPACK_COPY_NEVER;
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
    strided_dlpack_export_request request;
    strided_status status = strided_dlpack_export_request_make(&self->view, stream_given, stream,
                                                               device_given, device_type, device_id,
                                                               copy, &request);
    if (status != STRIDED_OK)
        return strided_py_raise_at(status, STRIDED_PY_DLPACK);
    if (check_export_dtype(self) < 0)
        return NULL;
    void *m = NULL;
    /* A copy may wait for a device; nothing in it calls Python. */
    if (request.copy) {
        Py_BEGIN_ALLOW_THREADS
        status = strided_view_export_dlpack_as(&self->view, &request, versioned, &m);
        Py_END_ALLOW_THREADS
    } else {
        status = strided_view_export_dlpack_as(&self->view, &request, versioned, &m);
    }
    if (status != STRIDED_OK)
        return strided_py_raise_at(status, STRIDED_PY_DLPACK);
    PyObject *capsule =
        PyCapsule_New(m, versioned ? STRIDED_DLPACK_CAPSULE_VERSIONED : STRIDED_DLPACK_CAPSULE,
                      export_capsule_destructor);
    if (capsule == NULL) {
        if (versioned)
            ((strided_dl_managed_tensor_versioned *)m)->deleter(m);
        else
            ((strided_dl_managed_tensor *)m)->deleter(m);
    }
    return capsule;
}

/* (device_type, device_id) of the exported tensor: the id is kept for CUDA
 * only, as the export does. */
PyObject *strided_py_view_dunder_dlpack_device(strided_py_view *self, PyObject *unused)
{
    (void)unused;
    strided_device d = self->view.device;
    return Py_BuildValue("(ii)", (int)d.device_type,
                         d.device_type == STRIDED_DEVICE_CUDA ? (int)d.device_id : 0);
}

/* The array interface dict (version 3) of the view with data address
 * data: typestr and descr of the dtype, shape, strides in bytes (None for C
 * order given without strides), and for the CUDA Array Interface a stream
 * key (None: the view has no pending work of its own). what names the
 * interface in errors. */
static PyObject *interface_of(strided_py_view *self, unsigned long long data, bool cuda,
                              const char *what)
{
    strided_status status = strided_view_check_interface_export(&self->view, what);
    if (status != STRIDED_OK) {
        strided_py_raise_at(status, STRIDED_PY_INTERFACE);
        return NULL;
    }
    PyObject *dtype = strided_py_view_dtype(self);
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
    else if ((strides = strided_py_int64_tuple(l->ndim, l->strides, l->itemsize)) == NULL)
        return NULL;
    PyObject *shape = strided_py_int64_tuple(l->ndim, l->shape, 1);
    PyObject *typestr = PyObject_GetAttrString(dtype, "str");
    PyObject *descr = PyObject_GetAttrString(dtype, "descr");
    PyObject *result = NULL;
    if (shape != NULL && typestr != NULL && descr != NULL)
        result = Py_BuildValue("{s:i,s:O,s:O,s:(NO),s:O,s:O}", "version", 3, "typestr", typestr,
                               "descr", descr, "data", PyLong_FromUnsignedLongLong(data),
                               self->view.readonly ? Py_True : Py_False, "shape", shape, "strides",
                               strides);
    if (result != NULL && cuda && PyDict_SetItemString(result, "stream", Py_None) < 0)
        Py_CLEAR(result);
    Py_XDECREF(shape);
    Py_XDECREF(typestr);
    Py_XDECREF(descr);
    Py_DECREF(strides);
    return result;
}

PyObject *strided_py_view_array_interface(strided_py_view *self, void *closure)
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
PyObject *strided_py_view_cuda_array_interface(strided_py_view *self, void *closure)
{
    (void)closure;
    uintptr_t dptr = strided_view_device_ptr(&self->view);
    if (!self->view.device_accessible || (dptr == 0 && strided_view_ptr(&self->view) != NULL)) {
        PyErr_SetString(PyExc_AttributeError,
                        "__cuda_array_interface__ is only available for memory a CUDA "
                        "device can access");
        return NULL;
    }
    return interface_of(self, dptr, true, "__cuda_array_interface__");
}
