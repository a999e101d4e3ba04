/*
 * _strided.c: the extension module strided._strided.
 */
#include "strided_py.h"

PyObject *strided_py_raise(strided_status status)
{
    PyObject *type;
    switch (status) {
    case STRIDED_ERR_INVALID_ARGUMENT:
        type = PyExc_ValueError;
        break;
    case STRIDED_ERR_OVERFLOW:
        type = PyExc_OverflowError;
        break;
    case STRIDED_ERR_OUT_OF_MEMORY:
        type = PyExc_MemoryError;
        break;
    case STRIDED_ERR_UNSUPPORTED:
        type = PyExc_NotImplementedError;
        break;
    default:
        type = PyExc_RuntimeError;
        break;
    }
    PyErr_SetString(type, strided_last_error_reason());
    return NULL;
}

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "strided._strided",
    .m_doc = "The C core of strided: layouts (and, later, buffers and views).",
    .m_size = -1,
};

PyMODINIT_FUNC PyInit__strided(void);

PyMODINIT_FUNC PyInit__strided(void)
{
    PyObject *module = PyModule_Create(&module_def);
    if (module == NULL)
        return NULL;
    if (PyModule_AddStringConstant(module, "__version__", strided_version()) < 0 ||
        PyModule_AddIntConstant(module, "MAX_NDIM", STRIDED_MAX_NDIM) < 0 ||
        strided_py_add_layout_type(module) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
