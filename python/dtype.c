/*
 * dtype.c: numpy dtypes and their DLPack equivalents, for the view type.
 * numpy is imported on first use; ml_dtypes, when installed, supplies
 * bfloat16 and the float8 types.
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

PyObject *strided_py_interface_dtype(PyObject *typestr, PyObject *interface)
{
    static PyObject *cache; /* typestr -> numpy dtype */
    const char *text = PyUnicode_AsUTF8(typestr);
    if (text == NULL)
        return NULL;
    /* libstrided's table first: it refuses objects and other-order bytes
     * with one message, before numpy is asked. */
    strided_typestr t;
    if (strided_typestr_parse(text, STRIDED_TYPESTR_NATIVE_ONLY, &t) != STRIDED_OK) {
        PyErr_Format(PyExc_BufferError, "unsupported typestr: %s", strided_last_error_reason());
        return NULL;
    }
    /* Structured types: the fields are in descr, and may hold objects that
     * "|V16" does not show; those are refused. */
    PyObject *descr = t.kind == 'V' && PyDict_Check(interface)
                          ? PyDict_GetItemString(interface, "descr")
                          : NULL;
    if (descr != NULL && PyList_Check(descr) && PyList_GET_SIZE(descr) > 0) {
        PyObject *first = PyList_GET_ITEM(descr, 0);
        bool plain = PyTuple_Check(first) && PyTuple_GET_SIZE(first) == 2 &&
                     PyUnicode_Check(PyTuple_GET_ITEM(first, 0)) &&
                     PyUnicode_GET_LENGTH(PyTuple_GET_ITEM(first, 0)) == 0;
        if (!plain || PyList_GET_SIZE(descr) > 1) {
            PyObject *dtype = strided_py_np_dtype(descr);
            if (dtype == NULL)
                return NULL;
            long itemsize = 0;
            if (strided_py_dtype_int_attr(dtype, "itemsize", &itemsize) < 0) {
                Py_DECREF(dtype);
                return NULL;
            }
            PyObject *hasobject = PyObject_GetAttrString(dtype, "hasobject");
            int holds = hasobject ? PyObject_IsTrue(hasobject) : -1;
            Py_XDECREF(hasobject);
            if (holds < 0) {
                Py_DECREF(dtype);
                return NULL;
            }
            if (holds &&
                strided_typestr_parse(text, STRIDED_TYPESTR_HOLDS_REFERENCES, &t) != STRIDED_OK) {
                PyErr_Format(PyExc_BufferError, "unsupported descr %R: %s", descr,
                             strided_last_error_reason());
                Py_DECREF(dtype);
                return NULL;
            }
            if (itemsize != t.itemsize) {
                PyErr_Format(PyExc_BufferError,
                             "descr describes elements of %ld bytes, typestr %U of %d",
                             itemsize, typestr, (int)t.itemsize);
                Py_DECREF(dtype);
                return NULL;
            }
            /* The view's dtype is still the typestr's, as cuda.core's:
             * descr was read to find object fields. */
            Py_DECREF(dtype);
        }
    }
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
    /* A few hundred distinct strings at most in practice; stop growing
     * past that rather than hold every oddity for ever. */
    if (dtype != NULL && PyDict_GET_SIZE(cache) < 1024 &&
        PyDict_SetItem(cache, typestr, dtype) < 0)
        Py_CLEAR(dtype);
    return dtype;
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

int strided_py_dtype_int_attr(PyObject *dtype, const char *name, long *out)
{
    PyObject *v = PyObject_GetAttrString(dtype, name);
    if (v == NULL)
        return -1;
    *out = PyLong_AsLong(v);
    Py_DECREF(v);
    return *out == -1 && PyErr_Occurred() ? -1 : 0;
}

int strided_py_unpack_dtype(PyObject *packed, strided_dtype *out)
{
    long v = PyLong_AsLong(packed);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (v < 0)
        return 0;
    out->code = (uint8_t)(v & 0xff);
    out->bits = (uint8_t)(v >> 8);
    out->lanes = 1;
    return 1;
}

/* The DLPack type of a numpy dtype. Returns 1 with *out set, 0 when the
 * dtype is plain data without a DLPack equivalent (structured, raw bytes,
 * strings, datetimes, long double, other byte order), -1 with an exception
 * set: TypeError for a dtype libstrided refuses (object references:
 * strided_typestr_parse decides from the dtype's typestr). */
static int dl_dtype_of(PyObject *dtype, strided_dtype *out)
{
    PyObject *str_obj = PyObject_GetAttrString(dtype, "str");
    if (str_obj == NULL)
        return -1;
    const char *str = PyUnicode_AsUTF8(str_obj);
    PyObject *hasobject = str ? PyObject_GetAttrString(dtype, "hasobject") : NULL;
    int holds = hasobject ? PyObject_IsTrue(hasobject) : -1;
    Py_XDECREF(hasobject);
    if (holds < 0) {
        Py_DECREF(str_obj);
        return -1;
    }
    strided_typestr t;
    strided_status status =
        strided_typestr_parse(str, holds == 1 ? STRIDED_TYPESTR_HOLDS_REFERENCES : 0, &t);
    Py_DECREF(str_obj);
    if (status != STRIDED_OK) {
        PyErr_Format(PyExc_TypeError, "unsupported dtype %R: %s", dtype,
                     strided_last_error_reason());
        return -1;
    }
    PyObject *fields = PyObject_GetAttrString(dtype, "fields");
    if (fields == NULL)
        return -1;
    bool structured = fields != Py_None;
    Py_DECREF(fields);
    if (structured)
        return 0;
    if (t.has_dtype) {
        *out = t.dtype;
        return 1;
    }
    if (t.swapped || (t.kind != 'V' && t.kind != 'f'))
        return 0;
    /* ml_dtypes' types read as raw bytes or 1-byte floats: match them by
     * the name libstrided gives each DLPack type. */
    PyObject *name_obj = PyObject_GetAttrString(dtype, "name");
    const char *name = name_obj ? PyUnicode_AsUTF8(name_obj) : NULL;
    if (name == NULL) {
        Py_XDECREF(name_obj);
        return -1;
    }
    int found = 0;
    for (int code = STRIDED_DTYPE_BFLOAT; code <= STRIDED_DTYPE_FLOAT8_E8M0FNU && !found;
         code++) {
        if (code > STRIDED_DTYPE_BFLOAT && code < STRIDED_DTYPE_FLOAT8_E3M4)
            continue;
        strided_dtype c = {(uint8_t)code, (uint8_t)(t.itemsize * 8), 1};
        char text[64];
        int size = 0;
        strided_dtype_format(c, text, sizeof text);
        if (t.itemsize <= 2 && strcmp(text, name) == 0 &&
            strided_dtype_itemsize(c, &size) == STRIDED_OK && size == t.itemsize) {
            *out = c;
            found = 1;
        }
    }
    Py_DECREF(name_obj);
    return found;
}

int strided_py_dl_dtype_of(PyObject *dtype, strided_dtype *out)
{
    /* Remembered per dtype object (numpy's dtypes are few and immutable):
     * the answer takes several attribute lookups. */
    static PyObject *cache; /* dtype -> code | bits << 8, or -1 */
    if (cache == NULL && (cache = PyDict_New()) == NULL)
        return -1;
    PyObject *known = PyDict_GetItemWithError(cache, dtype);
    if (known == NULL && PyErr_Occurred())
        return -1;
    if (known == NULL) {
        strided_dtype d = {0, 0, 0};
        int found = dl_dtype_of(dtype, &d);
        if (found < 0)
            return -1;
        known = PyLong_FromLong(found ? (long)d.code | (long)d.bits << 8 : -1);
        if (known == NULL)
            return -1;
        int rc = PyDict_GET_SIZE(cache) < 1024 ? PyDict_SetItem(cache, dtype, known) : 0;
        Py_DECREF(known); /* the dict holds it, or it is not needed past here */
        if (rc < 0)
            return -1;
        if (!found)
            return 0;
        *out = d;
        return 1;
    }
    return strided_py_unpack_dtype(known, out);
}

/* The numpy dtypes made so far, by DLPack code and size in bytes (every
 * supported type is 1 to 16 bytes); strong references kept for the life of
 * the process. */
static PyObject *dtype_cache[STRIDED_DTYPE_FLOAT8_E8M0FNU + 1][17];

/* The numpy dtype of a DLPack type (spec §4.9); new reference. The name
 * comes from libstrided; ml_dtypes supplies bfloat16 and float8. */
PyObject *strided_py_numpy_dtype_of(strided_dtype d)
{
    bool cacheable = d.lanes == 1 && d.code <= STRIDED_DTYPE_FLOAT8_E8M0FNU &&
                     d.bits % 8 == 0 && d.bits / 8 <= 16;
    if (cacheable && dtype_cache[d.code][d.bits / 8] != NULL)
        return Py_NewRef(dtype_cache[d.code][d.bits / 8]);

    if (d.lanes != 1)
        return PyErr_Format(PyExc_NotImplementedError,
                            "vector dtypes (lanes=%d) is not supported", (int)d.lanes);
    bool ml = d.code == STRIDED_DTYPE_BFLOAT ||
              (d.code >= STRIDED_DTYPE_FLOAT8_E3M4 && d.code <= STRIDED_DTYPE_FLOAT8_E8M0FNU);
    if (ml && !have_ml_dtypes()) {
        if (d.code == STRIDED_DTYPE_BFLOAT)
            return PyErr_Format(PyExc_NotImplementedError,
                                "Support for bfloat16 within cuda-core requires "
                                "`ml_dtypes`to be installed.");
        return PyErr_Format(PyExc_TypeError, "Unsupported dtype. dtype code: %d",
                            (int)d.code);
    }
    int size;
    if (strided_dtype_itemsize(d, &size) != STRIDED_OK)
        return PyErr_Format(PyExc_TypeError, "Unsupported dtype. dtype code: %d",
                            (int)d.code);
    char name[64];
    strided_dtype_format(d, name, sizeof name);
    PyObject *s = PyUnicode_FromString(name);
    if (s == NULL)
        return NULL;
    PyObject *result = strided_py_np_dtype(s);
    Py_DECREF(s);
    if (result != NULL && cacheable)
        dtype_cache[d.code][d.bits / 8] = Py_NewRef(result);
    return result;
}

/* A dtype argument: None gives *out_np NULL; anything else is normalised
 * with numpy.dtype, and *out_dl set when it has a DLPack equivalent. */
int strided_py_as_dtype(PyObject *obj, PyObject **out_np, bool *out_has_dl,
                        strided_dtype *out_dl)
{
    *out_np = NULL;
    *out_has_dl = false;
    if (obj == NULL || obj == Py_None)
        return 0;
    PyObject *dt = strided_py_np_dtype(obj);
    if (dt == NULL)
        return -1;
    int found = strided_py_dl_dtype_of(dt, out_dl);
    if (found < 0) {
        Py_DECREF(dt);
        return -1;
    }
    *out_has_dl = found == 1;
    *out_np = dt;
    return 0;
}

/* For a dtype libstrided cannot check (no DLPack equivalent), the
 * itemsize rule of strided_view_from_buffer. */
int strided_py_check_np_itemsize(PyObject *dtype, int itemsize)
{
    long size;
    if (strided_py_dtype_int_attr(dtype, "itemsize", &size) < 0)
        return -1;
    if (size != itemsize) {
        PyErr_Format(PyExc_ValueError,
                     "The dtype's itemsize (%ld) does not match the layout's "
                     "itemsize (%d).",
                     size, itemsize);
        return -1;
    }
    return 0;
}

