/*
 * dlpack_exchange.c: StridedMemoryView's DLPack C exchange API, the table
 * that __dlpack_c_exchange_api__ (and cuda.core's other name for it,
 * __c_dlpack_exchange_api__) hands consumers in a "dlpack_exchange_api"
 * capsule, so that C code exchanges views without calling __dlpack__.
 *
 * The allocator is libstrided's own (strided_dlpack_exchange_alloc): it
 * needs no Python. The entry points that take or make Python objects are
 * here; they take the GIL themselves, as a consumer may call them from C
 * without it, convert, and leave the work to the view files and libstrided:
 * an export is view_export.c's (the element-type rule included), an import
 * is strided_view_import_dlpack. None of them orders streams: a view has
 * no work in flight, and strided no current stream but the legacy default
 * one, which current_work_stream reports.
 */
#include "view.h"

/* The view py_object is, for an entry point whose output out is: NULL
 * with RuntimeError for a NULL out, TypeError for another object. Assumes:
 * the GIL is held. */
static strided_py_view *view_arg(void *py_object, const void *out)
{
    PyObject *obj = py_object;
    if (out == NULL)
        PyErr_SetString(PyExc_RuntimeError, "out cannot be NULL");
    else if (obj == NULL || !PyObject_TypeCheck(obj, &strided_py_view_type))
        PyErr_SetString(PyExc_TypeError, "py_object must be a StridedMemoryView");
    else
        return (strided_py_view *)obj;
    return NULL;
}

/* managed_tensor_from_py_object_no_sync: the view's export, as
 * __dlpack__(max_version=(1, 3)) gives it. */
static int from_py_object(void *py_object, strided_dl_managed_tensor_versioned **out)
{
    PyGILState_STATE gil = PyGILState_Ensure();
    strided_py_view *self = view_arg(py_object, out);
    int rc = self != NULL ? strided_py_view_export_versioned(self, out) : -1;
    PyGILState_Release(gil);
    return rc;
}

/* managed_tensor_to_py_object_no_sync: a new view of tensor, which it takes
 * over (its deleter runs once: on failure before this returns, otherwise
 * when the last holder of the view's memory lets go). */
static int to_py_object(strided_dl_managed_tensor_versioned *tensor, void **out_py_object)
{
    PyGILState_STATE gil = PyGILState_Ensure();
    int rc = -1;
    strided_view v;
    if (tensor == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "tensor cannot be NULL");
    } else if (out_py_object == NULL) {
        /* The tensor is ours all the same: the import deletes it. */
        strided_view_import_dlpack(tensor, true, NULL);
        PyErr_SetString(PyExc_RuntimeError, "out_py_object cannot be NULL");
    } else {
        strided_status status = strided_view_import_dlpack(tensor, true, &v);
        if (status != STRIDED_OK) {
            strided_py_raise_at(status, STRIDED_PY_DLPACK);
        } else {
            PyObject *view = (PyObject *)strided_py_view_new(&v, NULL, NULL, NULL, NULL);
            if (view != NULL) {
                *out_py_object = view;
                rc = 0;
            }
        }
    }
    PyGILState_Release(gil);
    return rc;
}

/* dltensor_from_py_object_no_sync: the view described in *out, borrowing
 * the view object's shape and strides. */
static int dltensor_from_py_object(void *py_object, strided_dl_tensor *out)
{
    PyGILState_STATE gil = PyGILState_Ensure();
    strided_py_view *self = view_arg(py_object, out);
    int rc = self != NULL ? strided_py_view_export_dl_tensor(self, out) : -1;
    PyGILState_Release(gil);
    return rc;
}

/* current_work_stream: strided queues nothing of its own; the legacy
 * default stream (NULL) for every device. */
static int current_work_stream(int32_t device_type, int32_t device_id, void **out_current_stream)
{
    (void)device_type;
    (void)device_id;
    if (out_current_stream != NULL) {
        *out_current_stream = NULL;
        return 0;
    }
    PyGILState_STATE gil = PyGILState_Ensure();
    PyErr_SetString(PyExc_RuntimeError, "out_current_stream cannot be NULL");
    PyGILState_Release(gil);
    return -1;
}

static const strided_dlpack_exchange_api exchange_api = {
    .header = {{STRIDED_DLPACK_MAJOR_VERSION, STRIDED_DLPACK_MINOR_VERSION}, NULL},
    .managed_tensor_allocator = strided_dlpack_exchange_alloc,
    .managed_tensor_from_py_object_no_sync = from_py_object,
    .managed_tensor_to_py_object_no_sync = to_py_object,
    .dltensor_from_py_object_no_sync = dltensor_from_py_object,
    .current_work_stream = current_work_stream,
};

int strided_py_add_dlpack_exchange_api(PyTypeObject *type)
{
    /* The capsule's pointer is not const, though nothing writes through
     * it: DLPack's consumers read the table. */
    PyObject *capsule = PyCapsule_New((void *)(uintptr_t)&exchange_api,
                                      STRIDED_DLPACK_EXCHANGE_API_CAPSULE, NULL);
    if (capsule == NULL)
        return -1;
    int rc = 0;
    if (PyDict_SetItemString(type->tp_dict, "__dlpack_c_exchange_api__", capsule) < 0 ||
        PyDict_SetItemString(type->tp_dict, "__c_dlpack_exchange_api__", capsule) < 0)
        rc = -1;
    Py_DECREF(capsule);
    if (rc == 0)
        PyType_Modified(type);
    return rc;
}
