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

PyObject *strided_py_np_dtype_of_typestr(PyObject *typestr)
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
 * dtype has no DLPack equivalent (structured, opaque, long double), -1 with
 * an exception set. The byte order is not looked at: the numpy dtype stays
 * with the view for that. */
static int dl_dtype_of(PyObject *dtype, strided_dtype *out)
{
    PyObject *fields = PyObject_GetAttrString(dtype, "fields");
    if (fields == NULL)
        return -1;
    bool structured = fields != Py_None;
    Py_DECREF(fields);
    if (structured)
        return 0;
    long itemsize;
    if (strided_py_dtype_int_attr(dtype, "itemsize", &itemsize) < 0)
        return -1;
    PyObject *kind_obj = PyObject_GetAttrString(dtype, "kind");
    if (kind_obj == NULL)
        return -1;
    const char *kind = PyUnicode_AsUTF8(kind_obj);
    if (kind == NULL) {
        Py_DECREF(kind_obj);
        return -1;
    }
    strided_dtype d = {0, (uint8_t)(itemsize * 8), 1};
    int found = 1;
    char kind_char = kind[0];
    if (kind_char == 'f') {
        /* numpy's own floats are e, f, d, g; ml_dtypes' float8 types say
         * kind f too, and are told apart by name below. */
        PyObject *ch = PyObject_GetAttrString(dtype, "char");
        const char *c = ch ? PyUnicode_AsUTF8(ch) : NULL;
        if (c == NULL) {
            Py_XDECREF(ch);
            Py_DECREF(kind_obj);
            return -1;
        }
        if (c[0] == '\0' || strchr("efdg", c[0]) == NULL)
            kind_char = 'V';
        Py_DECREF(ch);
    }
    switch (kind_char) {
    case 'b': d.code = STRIDED_DTYPE_BOOL; break;
    case 'i': d.code = STRIDED_DTYPE_INT; break;
    case 'u': d.code = STRIDED_DTYPE_UINT; break;
    case 'f': d.code = STRIDED_DTYPE_FLOAT; break;
    case 'c': d.code = STRIDED_DTYPE_COMPLEX; break;
    case 'V': {
        /* ml_dtypes' types are kind V: match them by the name libstrided
         * gives each DLPack type. */
        PyObject *name_obj = PyObject_GetAttrString(dtype, "name");
        const char *name = name_obj ? PyUnicode_AsUTF8(name_obj) : NULL;
        if (name == NULL) {
            Py_XDECREF(name_obj);
            Py_DECREF(kind_obj);
            return -1;
        }
        found = 0;
        for (int code = STRIDED_DTYPE_BFLOAT; code <= STRIDED_DTYPE_FLOAT8_E8M0FNU; code++) {
            if (code > STRIDED_DTYPE_BFLOAT && code < STRIDED_DTYPE_FLOAT8_E3M4)
                continue;
            strided_dtype c = {(uint8_t)code, (uint8_t)(itemsize * 8), 1};
            char text[64];
            strided_dtype_format(c, text, sizeof text);
            if (strcmp(text, name) == 0) {
                d = c;
                found = 1;
                break;
            }
        }
        Py_DECREF(name_obj);
        break;
    }
    default:
        found = 0;
        break;
    }
    Py_DECREF(kind_obj);
    int size = 0;
    if (!found || itemsize > 32 || strided_dtype_itemsize(d, &size) != STRIDED_OK ||
        size != itemsize)
        return 0;
    *out = d;
    return 1;
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

