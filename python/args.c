/*
 * args.c: argument conversion shared by the extension's types.
 */
#include <stdint.h>

#include "args.h"

int strided_py_bind_args(const char *fname, PyObject *const *args,
                         Py_ssize_t nargs, PyObject *kwnames,
                         const char *const *names, int nrequired,
                         PyObject **out)
{
    int n = 0;
    while (names[n] != NULL)
        out[n++] = NULL;
    if (nargs > n) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most %d arguments (%zd given)",
                     fname, n, nargs);
        return -1;
    }
    for (Py_ssize_t i = 0; i < nargs; i++)
        out[i] = args[i];
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, k);
        int j = 0;
        while (j < n && PyUnicode_CompareWithASCIIString(key, names[j]) != 0)
            j++;
        if (j == n) {
            PyErr_Format(PyExc_TypeError,
                         "%s() got an unexpected keyword argument '%U'", fname, key);
            return -1;
        }
        if (out[j] != NULL) {
            PyErr_Format(PyExc_TypeError,
                         "%s() got multiple values for argument '%s'", fname,
                         names[j]);
            return -1;
        }
        out[j] = args[nargs + k];
    }
    for (int i = 0; i < nrequired; i++) {
        if (out[i] == NULL) {
            PyErr_Format(PyExc_TypeError,
                         "%s() missing required argument '%s' (pos %d)", fname,
                         names[i], i + 1);
            return -1;
        }
    }
    return 0;
}

int strided_py_as_size(PyObject *obj, size_t *out)
{
    if (!PyIndex_Check(obj)) {
        PyErr_SetString(PyExc_TypeError, "an integer is required");
        return -1;
    }
    PyObject *index = PyNumber_Index(obj);
    if (index == NULL)
        return -1;
    /* PyLong_AsSize_t words its OverflowErrors as cuda.core's do:
     * "can't convert negative value to size_t". */
    size_t v = PyLong_AsSize_t(index);
    Py_DECREF(index);
    if (v == (size_t)-1 && PyErr_Occurred())
        return -1;
    *out = v;
    return 0;
}

int strided_py_as_address(PyObject *obj, void **out)
{
    PyObject *value = PyNumber_Long(obj);
    if (value == NULL)
        return -1;
    unsigned long long v = PyLong_AsUnsignedLongLong(value);
    Py_DECREF(value);
    if (v == (unsigned long long)-1 && PyErr_Occurred())
        return -1;
    if (v > UINTPTR_MAX) {
        PyErr_SetString(PyExc_OverflowError, "ptr does not fit in a pointer");
        return -1;
    }
    *out = (void *)(uintptr_t)v;
    return 0;
}

static int as_handle(PyObject *obj, void **out)
{
    PyObject *index = PyNumber_Index(obj);
    if (index == NULL)
        return -1;
    unsigned long long v = PyLong_AsUnsignedLongLong(index);
    Py_DECREF(index);
    if (v == (unsigned long long)-1 && PyErr_Occurred())
        return -1;
    if (v > UINTPTR_MAX) {
        PyErr_SetString(PyExc_OverflowError, "stream handle does not fit in a pointer");
        return -1;
    }
    *out = (void *)(uintptr_t)v;
    return 0;
}

int strided_py_as_stream(PyObject *obj, void **out)
{
    if (obj == NULL || obj == Py_None) {
        *out = NULL;
        return 0;
    }
    if (PyIndex_Check(obj))
        return as_handle(obj, out);
    PyObject *info = PyObject_CallMethod(obj, "__cuda_stream__", NULL);
    if (info == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError))
            return -1;
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError,
                     "stream must be None, an int handle or an object with "
                     "__cuda_stream__, got %.200s",
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    int result = -1;
    if (!PyTuple_Check(info) || PyTuple_GET_SIZE(info) != 2) {
        PyErr_Format(PyExc_TypeError,
                     "__cuda_stream__() must return a (version, handle) tuple, "
                     "got %R", info);
    } else {
        long version = PyLong_AsLong(PyTuple_GET_ITEM(info, 0));
        if (version == 0)
            result = as_handle(PyTuple_GET_ITEM(info, 1), out);
        else if (!PyErr_Occurred())
            PyErr_Format(PyExc_ValueError,
                         "unsupported __cuda_stream__ protocol version %ld "
                         "(only 0 is supported)", version);
    }
    Py_DECREF(info);
    return result;
}

PyObject *strided_py_stream_object(void *stream)
{
    if (stream == NULL)
        Py_RETURN_NONE;
    return PyLong_FromVoidPtr(stream);
}
