/*
 * torch_view.c: reading a torch.Tensor without DLPack.
 *
 * torch's __dlpack__ is written in Python and costs 2 us for a CPU tensor
 * and about 17 us for a CUDA one; the tensor's own accessors (data_ptr,
 * shape, stride, dtype, device) cost a few tens of nanoseconds each. For
 * plain tensors (torch.Tensor and torch.nn.Parameter, strided layout, no
 * conjugate or negative bit, on the CPU or a CUDA device, of a dtype with a
 * DLPack equivalent) the view is made from those; every other tensor goes
 * through DLPack as before. torch is never imported here: a tensor exists
 * only once its user has imported torch.
 */
#include <string.h>

#include "strided_py.h"

static PyObject *tensor_type, *parameter_type; /* strong, once torch is seen */
/* The type of the last object found not to be a torch tensor (strong): the
 * check of the next object of that type is one comparison, where looking
 * torch up in sys.modules costs tens of nanoseconds on every import of an
 * array that is no tensor. torch's tensor types are made by torch's import,
 * so an object whose type was seen before torch was there is not a torch
 * tensor after it either; at worst a tensor made during torch's own import
 * goes by DLPack, which gives the same view. */
static PyObject *not_tensor_type;
static PyObject *s_torch;            /* "torch", interned */
static PyObject *strided_layout_obj; /* torch.strided */
static PyObject *raw_stream_fn;      /* torch._C._cuda_getCurrentRawStream */
static PyObject *dtype_map;          /* torch dtype -> packed strided_dtype */
static PyObject *s_data_ptr, *s_stride, *s_shape, *s_dtype, *s_layout, *s_is_cuda, *s_is_cpu,
    *s_get_device, *s_is_conj, *s_is_neg;

/* Look torch up in sys.modules (not importing it) and keep what the fast
 * path needs. 1 when torch is there, 0 when not, -1 with an exception. */
static int find_torch(void)
{
    if (tensor_type != NULL)
        return 1;
    if (s_torch == NULL && (s_torch = PyUnicode_InternFromString("torch")) == NULL)
        return -1;
    PyObject *torch = PyDict_GetItemWithError(PyImport_GetModuleDict(), s_torch);
    if (torch == NULL)
        return PyErr_Occurred() ? -1 : 0;
    PyObject *tensor = PyObject_GetAttrString(torch, "Tensor");
    PyObject *strided = PyObject_GetAttrString(torch, "strided");
    PyObject *nn = PyObject_GetAttrString(torch, "nn");
    PyObject *parameter = nn ? PyObject_GetAttrString(nn, "Parameter") : NULL;
    Py_XDECREF(nn);
    if (tensor == NULL || strided == NULL || parameter == NULL || !PyType_Check(tensor) ||
        !PyType_Check(parameter)) {
        /* A torch without these (being imported, or something else): no
         * fast path, and no error for the caller. */
        Py_XDECREF(tensor);
        Py_XDECREF(strided);
        Py_XDECREF(parameter);
        PyErr_Clear();
        return 0;
    }
    PyObject *c = PyObject_GetAttrString(torch, "_C");
    raw_stream_fn = c ? PyObject_GetAttrString(c, "_cuda_getCurrentRawStream") : NULL;
    Py_XDECREF(c);
    PyErr_Clear(); /* a CPU-only torch has none: CUDA tensors go by DLPack */
    dtype_map = PyDict_New();
    s_data_ptr = PyUnicode_InternFromString("data_ptr");
    s_stride = PyUnicode_InternFromString("stride");
    s_shape = PyUnicode_InternFromString("shape");
    s_dtype = PyUnicode_InternFromString("dtype");
    s_layout = PyUnicode_InternFromString("layout");
    s_is_cuda = PyUnicode_InternFromString("is_cuda");
    s_is_cpu = PyUnicode_InternFromString("is_cpu");
    s_get_device = PyUnicode_InternFromString("get_device");
    s_is_conj = PyUnicode_InternFromString("is_conj");
    s_is_neg = PyUnicode_InternFromString("is_neg");
    if (dtype_map == NULL || s_data_ptr == NULL || s_stride == NULL || s_shape == NULL ||
        s_dtype == NULL || s_layout == NULL || s_is_cuda == NULL || s_is_cpu == NULL ||
        s_get_device == NULL || s_is_conj == NULL || s_is_neg == NULL) {
        Py_DECREF(tensor);
        Py_DECREF(strided);
        Py_DECREF(parameter);
        return -1;
    }
    strided_layout_obj = strided;
    parameter_type = parameter;
    tensor_type = tensor;
    return 1;
}

bool strided_py_is_torch_tensor(PyObject *obj)
{
    PyObject *type = (PyObject *)Py_TYPE(obj);
    if (type == not_tensor_type)
        return false;
    if (tensor_type == NULL && find_torch() <= 0)
        PyErr_Clear();
    else if (type == tensor_type || type == parameter_type)
        return true;
    Py_INCREF(type);
    Py_XSETREF(not_tensor_type, type);
    return false;
}

/* The DLPack type of a torch dtype, by its name ("torch.float8_e4m3fn" is
 * libstrided's "float8_e4m3fn", "torch.float4_e2m1fn_x2" its pairs of
 * float4_e2m1fn, lanes 2, one byte), remembered per dtype object as the int
 * code | bits << 8 | lanes << 16 (-1: none, and for the types whose
 * elements are not whole bytes, which go by DLPack). 1 found, 0 none, -1
 * error. */
static int torch_dtype(PyObject *dtype, strided_dtype *out)
{
    PyObject *known = PyDict_GetItemWithError(dtype_map, dtype);
    if (known == NULL && PyErr_Occurred())
        return -1;
    if (known == NULL) {
        PyObject *name = PyObject_Str(dtype);
        const char *text = name ? PyUnicode_AsUTF8(name) : NULL;
        if (text == NULL) {
            Py_XDECREF(name);
            return -1;
        }
        if (strncmp(text, "torch.", 6) == 0)
            text += 6;
        strided_dtype d;
        int size = 0;
        long packed = strided_dtype_parse(text, &d) == STRIDED_OK &&
                              strided_dtype_itemsize(d, &size) == STRIDED_OK
                          ? d.code | (long)d.bits << 8 | (long)d.lanes << 16
                          : -1;
        Py_DECREF(name);
        known = PyLong_FromLong(packed);
        if (known == NULL || PyDict_SetItem(dtype_map, dtype, known) < 0) {
            Py_XDECREF(known);
            return -1;
        }
        Py_DECREF(known); /* the dict holds it */
    }
    long v = PyLong_AsLong(known);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (v < 0)
        return 0;
    *out = (strided_dtype){(uint8_t)(v & 0xff), (uint8_t)(v >> 8 & 0xff), (uint16_t)(v >> 16)};
    return 1;
}

/* obj.name() as a bool (1/0), or -1. */
static int call_bool(PyObject *obj, PyObject *name)
{
    PyObject *r = PyObject_CallMethodNoArgs(obj, name);
    if (r == NULL)
        return -1;
    int v = PyObject_IsTrue(r);
    Py_DECREF(r);
    return v;
}

static int attr_bool(PyObject *obj, PyObject *name)
{
    PyObject *r = PyObject_GetAttr(obj, name);
    if (r == NULL)
        return -1;
    int v = PyObject_IsTrue(r);
    Py_DECREF(r);
    return v;
}

/* A torch.Size or tuple of ints into out[n]. */
static int int64_tuple_into(PyObject *t, int64_t *out, int *n)
{
    if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) > STRIDED_MAX_NDIM) {
        PyErr_SetString(PyExc_TypeError, "torch returned an unexpected shape or stride");
        return -1;
    }
    *n = (int)PyTuple_GET_SIZE(t);
    for (int i = 0; i < *n; i++) {
        long long v = PyLong_AsLongLong(PyTuple_GET_ITEM(t, i));
        if (v == -1 && PyErr_Occurred())
            return -1;
        out[i] = v;
    }
    return 0;
}

static int describe(PyObject *t, strided_py_torch_tensor *out)
{
    PyObject *layout = PyObject_GetAttr(t, s_layout);
    if (layout == NULL)
        return -1;
    bool strided = layout == strided_layout_obj;
    Py_DECREF(layout);
    int cuda = attr_bool(t, s_is_cuda), cpu = 0, conj = 0, neg;
    if (cuda < 0 || (!cuda && (cpu = attr_bool(t, s_is_cpu)) < 0))
        return -1;
    if (!strided || (!cuda && !cpu) || (cuda && raw_stream_fn == NULL))
        return 0;
    PyObject *dtype = PyObject_GetAttr(t, s_dtype);
    if (dtype == NULL)
        return -1;
    int found = torch_dtype(dtype, &out->dtype);
    Py_DECREF(dtype);
    if (found <= 0)
        return found;
    /* Only complex tensors carry a conjugate bit; any may carry a negative
     * one (the imaginary part of a conjugated tensor). */
    if ((out->dtype.code == STRIDED_DTYPE_COMPLEX && (conj = call_bool(t, s_is_conj)) < 0) ||
        (neg = call_bool(t, s_is_neg)) < 0)
        return -1;
    if (conj || neg)
        return 0; /* torch's __dlpack__ says why it refuses them */
    int itemsize = 0;
    strided_dtype_itemsize(out->dtype, &itemsize);

    int64_t shape[STRIDED_MAX_NDIM], strides[STRIDED_MAX_NDIM];
    int ndim = 0, nstrides = 0;
    PyObject *s = PyObject_GetAttr(t, s_shape);
    int rc = s ? int64_tuple_into(s, shape, &ndim) : -1;
    Py_XDECREF(s);
    if (rc < 0)
        return -1;
    s = PyObject_CallMethodNoArgs(t, s_stride);
    rc = s ? int64_tuple_into(s, strides, &nstrides) : -1;
    Py_XDECREF(s);
    if (rc < 0)
        return -1;
    if (nstrides != ndim) {
        PyErr_SetString(PyExc_TypeError, "torch returned strides that do not match the shape");
        return -1;
    }
    strided_status status = strided_layout_init(&out->layout, ndim, shape, strides, itemsize);
    if (status != STRIDED_OK) {
        strided_py_raise(status);
        return -1;
    }
    PyObject *p = PyObject_CallMethodNoArgs(t, s_data_ptr);
    if (p == NULL)
        return -1;
    out->ptr = PyLong_AsVoidPtr(p);
    Py_DECREF(p);
    if (out->ptr == NULL && PyErr_Occurred())
        return -1;
    out->device.device_type = cuda ? STRIDED_DEVICE_CUDA : STRIDED_DEVICE_CPU;
    out->device.device_id = 0;
    if (cuda) {
        PyObject *d = PyObject_CallMethodNoArgs(t, s_get_device);
        long id = d ? PyLong_AsLong(d) : -1;
        Py_XDECREF(d);
        if (id == -1 && PyErr_Occurred())
            return -1;
        out->device.device_id = (int32_t)id;
    }
    return 1;
}

int strided_py_torch_describe(PyObject *t, strided_py_torch_tensor *out)
{
    int rc = describe(t, out);
    /* A torch without one of the accessors used: DLPack will do. */
    if (rc < 0 && PyErr_ExceptionMatches(PyExc_AttributeError)) {
        PyErr_Clear();
        return 0;
    }
    return rc;
}

int strided_py_torch_current_stream(int device, void **out)
{
    PyObject *r = PyObject_CallFunction(raw_stream_fn, "i", device);
    if (r == NULL)
        return -1;
    *out = PyLong_AsVoidPtr(r);
    Py_DECREF(r);
    return *out == NULL && PyErr_Occurred() ? -1 : 0;
}
