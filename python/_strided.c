/*
 * _strided.c: the extension module strided._strided.
 */
#include <stdatomic.h>

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
    case STRIDED_ERR_NO_CUDA_DRIVER:
    case STRIDED_ERR_CUDA:
    default:
        type = PyExc_RuntimeError;
        break;
    }
    PyErr_SetString(type, strided_last_error_reason());
    return NULL;
}

#if PY_VERSION_HEX >= 0x030D0000
#define finalizing() Py_IsFinalizing()
#else
#define finalizing() _Py_IsFinalizing()
#endif

/* Set by Py_AtExit, which runs at the very end of Py_FinalizeEx, when no
 * Python object may be touched any more. Read from any thread. */
static atomic_bool finalized;
static bool watching;

static void mark_finalized(void)
{
    atomic_store(&finalized, true);
}

/* Remember, from module initialization on, when the interpreter has been
 * finalized. Returns -1 with an exception set on failure. */
static int watch_finalization(void)
{
    if (watching)
        return 0;
    if (Py_AtExit(mark_finalized) < 0) {
        PyErr_SetString(PyExc_RuntimeError,
                        "strided: cannot register its exit function (Py_AtExit)");
        return -1;
    }
    watching = true;
    return 0;
}

/* Two windows stay open, as CPython offers no way to close them: a thread
 * that checks this just before finalization starts and then asks for the
 * GIL is ended (blocks, on 3.14+) inside PyGILState_Ensure; and between the
 * deletion of the main interpreter and Py_AtExit, PyGILState_Check may
 * answer 1 on any thread. Only holders on threads other than the main one
 * (C code, daemon threads) can release in either window. */
bool strided_py_can_call_python(void)
{
    if (atomic_load(&finalized))
        return false;
    if (!finalizing())
        return true;
    return PyGILState_Check() != 0;
}

void strided_py_release_buffer(strided_buffer *b)
{
    if (b == NULL)
        return;
    if (finalizing()) {
        strided_buffer_release(b);
        return;
    }
    /* A release callback may run Python code (a producer's DLPack deleter,
     * an owner's finalizer): set a pending exception aside meanwhile, as
     * callers on error paths have one. */
#if PY_VERSION_HEX >= 0x030C0000
    PyObject *pending = PyErr_GetRaisedException();
#else
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
#endif
    /* Only memory a resource frees may make the last release wait (a
     * synchronous free); everything else (another holder left, an imported
     * tensor's deleter, an owner's reference) is quick or needs the GIL
     * anyway. */
    if (strided_buffer_resource(b) != NULL && strided_buffer_use_count(b) == 1) {
        Py_BEGIN_ALLOW_THREADS
        strided_buffer_release(b);
        Py_END_ALLOW_THREADS
    } else {
        strided_buffer_release(b);
    }
#if PY_VERSION_HEX >= 0x030C0000
    PyErr_SetRaisedException(pending);
#else
    PyErr_Restore(type, value, traceback);
#endif
}

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "strided._strided",
    .m_doc = "The C core of strided: layouts, buffers, memory resources and views.",
    .m_size = -1,
};

PyMODINIT_FUNC PyInit__strided(void);

PyMODINIT_FUNC PyInit__strided(void)
{
    if (watch_finalization() < 0)
        return NULL;
    PyObject *module = PyModule_Create(&module_def);
    if (module == NULL)
        return NULL;
    if (PyModule_AddStringConstant(module, "__version__", strided_version()) < 0 ||
        PyModule_AddIntConstant(module, "MAX_NDIM", STRIDED_MAX_NDIM) < 0 ||
        strided_py_init_hold_type() < 0 ||
        strided_py_add_layout_type(module) < 0 ||
        strided_py_add_resource_types(module) < 0 ||
        strided_py_add_buffer_type(module) < 0 ||
        strided_py_add_view_type(module) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
