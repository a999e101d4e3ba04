/*
 * dtype.c: numpy dtypes in and out. libstrided decides what an element
 * type is (strided_dtype_from_numpy, from the dtype's str and name); this
 * file reads those attributes, remembers the answers per dtype, and makes
 * numpy dtypes for DLPack types. numpy is imported on first use; ml_dtypes,
 * when installed, supplies bfloat16, the float8 types and the sub-byte
 * types.
 */
#include <stdbool.h>
#include <string.h>

#include "strided_py.h"

static PyObject *numpy_dtype_type; /* numpy.dtype, imported on first use */

PyObject *strided_py_np_dtype(PyObject *obj)
{
    if (numpy_dtype_type == NULL) {
        PyObject *np = PyImport_ImportModule("numpy");
        if (np == NULL)
            return NULL;
        numpy_dtype_type = PyObject_GetAttrString(np, "dtype");
        Py_DECREF(np);
        if (numpy_dtype_type == NULL)
            return NULL;
    }
    return PyObject_CallOneArg(numpy_dtype_type, obj);
}

/* A few hundred distinct dtypes and strings at most in practice: a cache
 * stops growing past this rather than hold every oddity for ever. */
#define CACHE_LIMIT 1024

PyObject *strided_py_typestr_dtype(PyObject *typestr)
{
    static PyObject *cache; /* typestr -> numpy dtype */
    if (!PyUnicode_CheckExact(typestr))
        return strided_py_np_dtype(typestr);
    if (cache == NULL && (cache = PyDict_New()) == NULL)
        return NULL;
    PyObject *dtype = PyDict_GetItemWithError(cache, typestr);
    if (dtype != NULL)
        return Py_NewRef(dtype);
    if (PyErr_Occurred())
        return NULL;
    dtype = strided_py_np_dtype(typestr);
    if (dtype != NULL && PyDict_GET_SIZE(cache) < CACHE_LIMIT &&
        PyDict_SetItem(cache, typestr, dtype) < 0)
        Py_CLEAR(dtype);
    return dtype;
}

/* The int attribute name of obj. -1 with an exception set. */
static int int_attr(PyObject *obj, const char *name, long *out)
{
    PyObject *v = PyObject_GetAttrString(obj, name);
    if (v == NULL)
        return -1;
    *out = PyLong_AsLong(v);
    Py_DECREF(v);
    return *out == -1 && PyErr_Occurred() ? -1 : 0;
}

/* The bool attribute name of obj (1 or 0), or -1 with an exception. */
static int bool_attr(PyObject *obj, const char *name)
{
    PyObject *v = PyObject_GetAttrString(obj, name);
    int truth = v != NULL ? PyObject_IsTrue(v) : -1;
    Py_XDECREF(v);
    return truth;
}

int strided_py_dtype_facts(PyObject *dtype, unsigned *out_flags, long *out_itemsize)
{
    int holds = bool_attr(dtype, "hasobject");
    if (holds < 0)
        return -1;
    PyObject *fields = PyObject_GetAttrString(dtype, "fields");
    if (fields == NULL)
        return -1;
    bool structured = fields != Py_None;
    Py_DECREF(fields);
    if (out_itemsize != NULL && int_attr(dtype, "itemsize", out_itemsize) < 0)
        return -1;
    *out_flags = (holds ? STRIDED_TYPESTR_HOLDS_REFERENCES : 0) |
                 (structured ? STRIDED_TYPESTR_STRUCTURED : 0);
    return 0;
}

/* What libstrided makes of a numpy dtype. -1 with TypeError for a dtype it
 * refuses (object references), or another exception. */
static int dtype_info(PyObject *dtype, strided_typestr *out)
{
    unsigned flags = 0;
    if (strided_py_dtype_facts(dtype, &flags, NULL) < 0)
        return -1;
    PyObject *str = PyObject_GetAttrString(dtype, "str");
    PyObject *name = str ? PyObject_GetAttrString(dtype, "name") : NULL;
    const char *str_text = name ? PyUnicode_AsUTF8(str) : NULL;
    const char *name_text = str_text ? PyUnicode_AsUTF8(name) : NULL;
    int rc = -1;
    if (name_text != NULL) {
        if (strided_dtype_from_numpy(str_text, name_text, flags, out) == STRIDED_OK)
            rc = 0;
        else
            PyErr_Format(PyExc_TypeError, "unsupported dtype %R: %s", dtype,
                         strided_last_error_reason());
    }
    Py_XDECREF(str);
    Py_XDECREF(name);
    return rc;
}

int strided_py_dtype_info(PyObject *dtype, strided_typestr *out)
{
    /* Remembered per dtype object (numpy's dtypes are few and immutable):
     * the answer takes several attribute lookups. */
    static PyObject *cache; /* dtype -> bytes of its strided_typestr */
    if (cache == NULL && (cache = PyDict_New()) == NULL)
        return -1;
    PyObject *known = PyDict_GetItemWithError(cache, dtype);
    if (known != NULL) {
        memcpy(out, PyBytes_AS_STRING(known), sizeof *out);
        return 0;
    }
    if (PyErr_Occurred() || dtype_info(dtype, out) < 0)
        return -1;
    if (PyDict_GET_SIZE(cache) >= CACHE_LIMIT)
        return 0;
    known = PyBytes_FromStringAndSize((const char *)out, sizeof *out);
    int rc = known != NULL ? PyDict_SetItem(cache, dtype, known) : -1;
    Py_XDECREF(known);
    return rc;
}

/* Import ml_dtypes once, so that numpy knows bfloat16 and the float8 types
 * by name. Returns whether it is available; never raises. */
static bool have_ml_dtypes(void)
{
    static int state = -1;
    if (state < 0) {
        PyObject *m = PyImport_ImportModule("ml_dtypes");
        state = m != NULL;
        Py_XDECREF(m);
        if (m == NULL)
            PyErr_Clear();
    }
    return state == 1;
}

/* The numpy dtypes made so far, by DLPack code and size in bytes (every
 * supported type is 1 to 16 bytes); strong references kept for the life of
 * the process. */
static PyObject *dtype_cache[STRIDED_DTYPE_FLOAT8_E8M0FNU + 1][17];

/* The numpy dtype of a DLPack type; new reference. The name comes from
 * libstrided; ml_dtypes supplies bfloat16 and float8. */
PyObject *strided_py_numpy_dtype_of(strided_dtype d)
{
    bool cacheable = d.lanes == 1 && d.code <= STRIDED_DTYPE_FLOAT8_E8M0FNU && d.bits % 8 == 0 &&
                     d.bits / 8 <= 16;
    if (cacheable && dtype_cache[d.code][d.bits / 8] != NULL)
        return Py_NewRef(dtype_cache[d.code][d.bits / 8]);

    char name[64];
    strided_dtype_format(d, name, sizeof name);
    if (strided_dtype_is_subbyte(d)) {
        /* ml_dtypes names the single sub-byte types, padded one per byte
         * in numpy; a packed view has the same dtype, its elements' bits
         * being the view's to place. Pairs have no numpy dtype. */
        if (d.lanes != 1)
            return PyErr_Format(PyExc_NotImplementedError,
                                "%s (pairs of %d-bit values) has no numpy dtype: see it as "
                                "single elements with relaned(1)",
                                name, (int)d.bits);
        if (!have_ml_dtypes())
            return PyErr_Format(PyExc_NotImplementedError,
                                "%s (a %d-bit type) has a numpy dtype only through ml_dtypes, "
                                "which is not installed",
                                name, (int)d.bits);
        PyObject *s = PyUnicode_FromString(name);
        PyObject *result = s != NULL ? strided_py_np_dtype(s) : NULL;
        Py_XDECREF(s);
        return result;
    }
    if (d.lanes != 1)
        return PyErr_Format(PyExc_NotImplementedError, "vector dtypes (lanes=%d) is not supported",
                            (int)d.lanes);
    bool ml = d.code == STRIDED_DTYPE_BFLOAT ||
              (d.code >= STRIDED_DTYPE_FLOAT8_E3M4 && d.code <= STRIDED_DTYPE_FLOAT8_E8M0FNU);
    if (ml && !have_ml_dtypes()) {
        if (d.code == STRIDED_DTYPE_BFLOAT)
            return PyErr_Format(PyExc_NotImplementedError,
                                "Support for bfloat16 within cuda-core requires "
                                "`ml_dtypes`to be installed.");
        return PyErr_Format(PyExc_TypeError, "Unsupported dtype. dtype code: %d", (int)d.code);
    }
    int size;
    if (strided_dtype_itemsize(d, &size) != STRIDED_OK)
        return PyErr_Format(PyExc_TypeError, "Unsupported dtype. dtype code: %d", (int)d.code);
    PyObject *s = PyUnicode_FromString(name);
    if (s == NULL)
        return NULL;
    PyObject *result = strided_py_np_dtype(s);
    Py_DECREF(s);
    if (result != NULL && cacheable)
        dtype_cache[d.code][d.bits / 8] = Py_NewRef(result);
    return result;
}

int strided_py_pair_dtype(PyObject *obj, strided_dtype *out)
{
    if (obj == NULL || !PyUnicode_Check(obj))
        return 0;
    const char *text = PyUnicode_AsUTF8(obj);
    strided_dtype d;
    if (text == NULL) {
        PyErr_Clear();
        return 0;
    }
    if (strided_dtype_parse(text, &d) != STRIDED_OK || !strided_dtype_is_subbyte(d) || d.lanes != 2)
        return 0;
    *out = d;
    return 1;
}

int strided_py_as_dtype(PyObject *obj, PyObject **out_np, strided_typestr *out_info)
{
    *out_np = NULL;
    if (obj == NULL || obj == Py_None)
        return 0;
    PyObject *dt = strided_py_np_dtype(obj);
    if (dt == NULL)
        return -1;
    if (strided_py_dtype_info(dt, out_info) < 0) {
        Py_DECREF(dt);
        return -1;
    }
    *out_np = dt;
    return 0;
}
