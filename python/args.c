/*
 * args.c: argument conversion shared by the extension's types.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "args.h"

/* Whether key, a str, is name: for an ASCII key by its characters (a
 * keyword's name is ASCII nearly always, and CPython's comparison costs
 * more than the rest of the binding). */
static bool key_is(PyObject *key, const char *name)
{
    if (!PyUnicode_IS_ASCII(key))
        return PyUnicode_CompareWithASCIIString(key, name) == 0;
    size_t len = (size_t)PyUnicode_GET_LENGTH(key);
    return strlen(name) == len && memcmp(name, PyUnicode_DATA(key), len) == 0;
}

/* The names of a parameter list as interned str objects (its
 * strided_py_kwnames tuple's items), made on its first call with keywords.
 * A keyword at a call site is an interned str, so it is found among them by
 * one comparison of pointers; any other str is matched by characters. The
 * table is keyed by the list's address (the lists are static), probed
 * linearly; a list arriving when the table is full has no slot. NULL then,
 * when making the tuple failed, and where the interpreter has no GIL to
 * guard the table. */
#define INTERNED_LISTS 64
typedef struct interned_list {
    const char *const *names;
    PyObject *kwnames; /* strong, never released */
} interned_list;

static PyObject *const *interned_names(const char *const *names)
{
#ifdef Py_GIL_DISABLED
    (void)names;
    return NULL;
#else
    static interned_list lists[INTERNED_LISTS];
    size_t first = ((uintptr_t)names >> 4) % INTERNED_LISTS;
    for (size_t probe = 0; probe < INTERNED_LISTS; probe++) {
        interned_list *l = &lists[(first + probe) % INTERNED_LISTS];
        if (l->names == NULL) {
            l->kwnames = strided_py_kwnames(names);
            if (l->kwnames == NULL) { /* matched by characters instead */
                PyErr_Clear();
                return NULL;
            }
            l->names = names;
        }
        if (l->names == names)
            return PySequence_Fast_ITEMS(l->kwnames);
    }
    return NULL;
#endif
}

int strided_py_bind_args(const char *fname, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames, const char *const *names, int nrequired, PyObject **out)
{
    int n = 0;
    while (names[n] != NULL)
        out[n++] = NULL;
    if (nargs > n) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most %d arguments (%zd given)", fname, n,
                     nargs);
        return -1;
    }
    for (Py_ssize_t i = 0; i < nargs; i++)
        out[i] = args[i];
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    PyObject *const *interned = nkw > 0 ? interned_names(names) : NULL;
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, k);
        int j = 0;
        while (interned != NULL && j < n && key != interned[j])
            j++;
        if (interned == NULL || j == n)
            for (j = 0; j < n && !key_is(key, names[j]);)
                j++;
        if (j == n) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'", fname,
                         key);
            return -1;
        }
        if (out[j] != NULL) {
            PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'", fname,
                         names[j]);
            return -1;
        }
        out[j] = args[nargs + k];
    }
    for (int i = 0; i < nrequired; i++) {
        if (out[i] == NULL) {
            PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s' (pos %d)", fname,
                         names[i], i + 1);
            return -1;
        }
    }
    return 0;
}

PyObject *strided_py_kwnames(const char *const *names)
{
    Py_ssize_t n = 0;
    while (names[n] != NULL)
        n++;
    PyObject *t = PyTuple_New(n);
    for (Py_ssize_t i = 0; t != NULL && i < n; i++) {
        PyObject *name = PyUnicode_InternFromString(names[i]);
        if (name == NULL)
            Py_CLEAR(t);
        else
            PyTuple_SET_ITEM(t, i, name);
    }
    return t;
}

/* what, or "what[item]" written into buf. */
static const char *name_of(const char *what, int item, char *buf, size_t size)
{
    if (item < 0)
        return what;
    snprintf(buf, size, "%s[%d]", what, item);
    return buf;
}

int strided_py_reject_bool(PyObject *obj, const char *what, int item)
{
    if (!PyBool_Check(obj))
        return 0;
    char buf[128];
    PyErr_Format(PyExc_TypeError, "%s must be an int, not bool",
                 name_of(what, item, buf, sizeof buf));
    return -1;
}

PyObject *strided_py_index(PyObject *obj, const char *what, int item)
{
    if (PyLong_CheckExact(obj))
        return Py_NewRef(obj);
    char buf[128];
    if (PyBool_Check(obj) || !PyIndex_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s must be an int, not %.200s",
                     name_of(what, item, buf, sizeof buf), Py_TYPE(obj)->tp_name);
        return NULL;
    }
    /* An __index__ that returns a bool gives 0 or 1 with a
     * DeprecationWarning: CPython copies the result into a plain int. */
    return PyNumber_Index(obj);
}

static void raise_does_not_fit(PyObject *index, const char *what, int item, const char *type)
{
    char buf[128];
    PyErr_Format(PyExc_OverflowError, "%s %S does not fit in %s",
                 name_of(what, item, buf, sizeof buf), index, type);
}

/* The value of obj, an integer argument, in [lo, hi]; OverflowError naming
 * type outside. */
static int bounded_value(PyObject *obj, const char *what, int item, long long lo, long long hi,
                         const char *type, long long *out)
{
    PyObject *index = strided_py_index(obj, what, item);
    if (index == NULL)
        return -1;
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(index, &overflow);
    int rc = 0;
    if (v == -1 && PyErr_Occurred()) {
        rc = -1;
    } else if (overflow != 0 || v < lo || v > hi) {
        raise_does_not_fit(index, what, item, type);
        rc = -1;
    }
    Py_DECREF(index);
    if (rc == 0)
        *out = v;
    return rc;
}

int strided_py_as_int64(PyObject *obj, const char *what, int item, int64_t *out)
{
    long long v;
    if (bounded_value(obj, what, item, INT64_MIN, INT64_MAX, "int64", &v) < 0)
        return -1;
    *out = v;
    return 0;
}

int strided_py_as_int(PyObject *obj, const char *what, int item, int *out)
{
    long long v;
    if (bounded_value(obj, what, item, INT_MIN, INT_MAX, "a C int", &v) < 0)
        return -1;
    *out = (int)v;
    return 0;
}

int strided_py_as_uint64(PyObject *obj, const char *what, uint64_t *out)
{
    PyObject *index = strided_py_index(obj, what, -1);
    if (index == NULL)
        return -1;
    unsigned long long v = PyLong_AsUnsignedLongLong(index);
    int rc = 0;
    if (v == (unsigned long long)-1 && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_OverflowError)) {
            PyErr_Clear();
            raise_does_not_fit(index, what, -1, "uint64");
        }
        rc = -1;
    }
    Py_DECREF(index);
    if (rc == 0)
        *out = v;
    return rc;
}

int strided_py_as_size(PyObject *obj, const char *what, size_t *out)
{
    if (!PyIndex_Check(obj)) {
        PyErr_SetString(PyExc_TypeError, "an integer is required");
        return -1;
    }
    PyObject *index = strided_py_index(obj, what, -1);
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

/* The int value as a pointer: OverflowError naming what for a negative
 * value or one beyond the address space. */
static int pointer_value(PyObject *value, const char *what, void **out)
{
    int overflow;
    long long signed_value = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (signed_value == -1 && overflow == 0 && PyErr_Occurred())
        return -1;
    bool negative = overflow < 0 || (overflow == 0 && signed_value < 0);
    if (!negative) {
        unsigned long long v = PyLong_AsUnsignedLongLong(value);
        if (v == (unsigned long long)-1 && PyErr_Occurred())
            PyErr_Clear(); /* too big: said below */
        else if (v <= UINTPTR_MAX) {
            *out = (void *)(uintptr_t)v;
            return 0;
        }
    }
    PyErr_Format(PyExc_OverflowError,
                 negative ? "%s %S is negative" : "%s %S does not fit in a pointer", what, value);
    return -1;
}

int strided_py_as_address(PyObject *obj, const char *what, void **out)
{
    /* int() would also truncate a number with a fraction (what has
     * __float__) and parse a string: neither is an address. */
    PyNumberMethods *nb = Py_TYPE(obj)->tp_as_number;
    bool has_int = PyIndex_Check(obj) || (nb != NULL && nb->nb_int != NULL && nb->nb_float == NULL);
    if (PyBool_Check(obj) || !has_int) {
        PyErr_Format(PyExc_TypeError, "%s must be an int, not %.200s", what, Py_TYPE(obj)->tp_name);
        return -1;
    }
    PyObject *value = PyNumber_Long(obj);
    if (value == NULL)
        return -1;
    int rc = pointer_value(value, what, out);
    Py_DECREF(value);
    return rc;
}

static int as_handle(PyObject *obj, const char *what, void **out)
{
    PyObject *index = strided_py_index(obj, what, -1);
    if (index == NULL)
        return -1;
    int rc = pointer_value(index, what, out);
    Py_DECREF(index);
    return rc;
}

int strided_py_as_device_id(PyObject *obj, const char *what, int *out)
{
    if (PyBool_Check(obj) || PyIndex_Check(obj))
        return strided_py_as_int(obj, what, -1, out);
    /* A cuda.core Device, or any object that says its device_id. */
    PyObject *id = PyObject_GetAttrString(obj, "device_id");
    if (id == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError))
            return -1;
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s must be an int or a Device, got %.200s", what,
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    int rc = strided_py_as_int(id, what, -1, out);
    Py_DECREF(id);
    return rc;
}

int strided_py_as_stream(PyObject *obj, void **out)
{
    if (obj == NULL || obj == Py_None) {
        *out = NULL;
        return 0;
    }
    if (PyBool_Check(obj)) {
        PyErr_SetString(PyExc_TypeError, "stream must be None, an int handle or an "
                                         "object with __cuda_stream__, not bool");
        return -1;
    }
    if (PyIndex_Check(obj))
        return as_handle(obj, "stream", out);
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
                     "got %R",
                     info);
    } else {
        int64_t version;
        int rc = strided_py_as_int64(PyTuple_GET_ITEM(info, 0), "__cuda_stream__() version", -1,
                                     &version);
        if (rc == 0 && version == 0)
            result = as_handle(PyTuple_GET_ITEM(info, 1), "__cuda_stream__() handle", out);
        else if (rc == 0)
            PyErr_Format(PyExc_ValueError,
                         "unsupported __cuda_stream__ protocol version %lld "
                         "(only 0 is supported)",
                         (long long)version);
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

#if PY_VERSION_HEX >= 0x030C0000
PyObject *strided_py_take_exception(void)
{
    return PyErr_GetRaisedException();
}

void strided_py_raise_exception(PyObject *exc)
{
    PyErr_SetRaisedException(exc);
}
#else
PyObject *strided_py_take_exception(void)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (tb != NULL && value != NULL)
        PyException_SetTraceback(value, tb);
    Py_XDECREF(type);
    Py_XDECREF(tb);
    return value;
}

void strided_py_raise_exception(PyObject *exc)
{
    PyErr_Restore(Py_NewRef((PyObject *)Py_TYPE(exc)), exc, PyException_GetTraceback(exc));
}
#endif

/* The pending exception (an AttributeError) replaced by TypeError(format %
 * va) with it as __cause__. */
static void retype(const char *format, va_list va)
{
    PyObject *cause = strided_py_take_exception();
    PyErr_FormatV(PyExc_TypeError, format, va);
    PyObject *exc = strided_py_take_exception();
    if (exc != NULL && cause != NULL) {
        /* raise TypeError(...) from cause */
        PyException_SetContext(exc, Py_NewRef(cause));
        PyException_SetCause(exc, cause);
    } else {
        Py_XDECREF(cause);
    }
    strided_py_raise_exception(exc);
}

int strided_py_retype_attribute_error(const char *format, ...)
{
    if (!PyErr_ExceptionMatches(PyExc_AttributeError))
        return -1;
    va_list va;
    va_start(va, format);
    retype(format, va);
    va_end(va);
    return -1;
}

int strided_py_retype_missing_attribute(PyObject *obj, PyObject *name, const char *format, ...)
{
    if (!PyErr_ExceptionMatches(PyExc_AttributeError))
        return -1;
    /* Look again, with the exception set aside: only a lookup that fails
     * with AttributeError means the attribute is missing. */
    PyObject *pending = strided_py_take_exception();
    PyObject *value = PyObject_GetAttr(obj, name);
    bool missing = value == NULL && PyErr_ExceptionMatches(PyExc_AttributeError);
    Py_XDECREF(value);
    if (value == NULL && !missing) {
        Py_XDECREF(pending); /* the new error is the one to report */
        return -1;
    }
    PyErr_Clear();
    strided_py_raise_exception(pending);
    if (missing) {
        va_list va;
        va_start(va, format);
        retype(format, va);
        va_end(va);
    }
    return -1;
}
