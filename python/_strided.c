/*
 * _strided.c: the extension module strided._strided: its functions, its
 * initialisation, and when Python may still be called (the release
 * callbacks ask).
 */
#include <stdatomic.h>

#include "view.h"

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

/* strided.copy_plan(dst, src): the plan of a copy between two layouts (or
 * views), as a dict, so that tests and users can see which kernel a copy
 * takes. */
static int layout_of(PyObject *obj, strided_layout *out)
{
    if (PyObject_TypeCheck(obj, &strided_py_view_type)) {
        *out = ((strided_py_view *)obj)->view.layout;
        return 0;
    }
    return strided_py_layout_from(obj, out);
}

static PyObject *module_copy_plan(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 2)
        return PyErr_Format(PyExc_TypeError, "copy_plan() takes 2 arguments (dst, src), got %zd",
                            nargs);
    strided_layout d, s;
    if (layout_of(args[0], &d) < 0 || layout_of(args[1], &s) < 0)
        return NULL;
    strided_copy_plan p;
    strided_status status = strided_copy_plan_make(&d, &s, &p);
    if (status != STRIDED_OK)
        return strided_py_raise(status);
    PyObject *shape = strided_py_int64_tuple(p.ndim, p.shape, 1);
    PyObject *ds = strided_py_int64_tuple(p.ndim, p.dst_strides, 1);
    PyObject *ss = strided_py_int64_tuple(p.ndim, p.src_strides, 1);
    PyObject *result = NULL;
    if (shape != NULL && ds != NULL && ss != NULL)
        result = Py_BuildValue("{s:s,s:i,s:i,s:L,s:O,s:O,s:O,s:L,s:L,s:i}", "kernel",
                               strided_copy_kernel_name(p.kernel), "ndim", p.ndim, "itemsize",
                               p.itemsize, "volume", (long long)p.volume, "shape", shape,
                               "dst_strides", ds, "src_strides", ss, "dst_offset",
                               (long long)p.dst_offset, "src_offset", (long long)p.src_offset,
                               "src_unit_axis", p.src_unit_axis);
    Py_XDECREF(shape);
    Py_XDECREF(ds);
    Py_XDECREF(ss);
    return result;
}

static PyMethodDef module_functions[] = {
    {"copy_plan", (PyCFunction)(void (*)(void))module_copy_plan, METH_FASTCALL,
     "copy_plan(dst, src, /)\n"
     "--\n"
     "\n"
     "The plan of a copy of src into dst: which kernel it runs, on what.\n"
     "\n"
     "Both layouts are normalised together, as a copy does: src is broadcast to\n"
     "dst's shape, extent-1 axes are dropped, axes on which dst steps backwards\n"
     "are flipped on both sides, the axes are ordered by dst's strides (the\n"
     "fastest last), and neighbours contiguous on both sides are merged. No\n"
     "memory is looked at. It is the layouts' plan: a copy of views of a\n"
     "sub-byte type (docs/subbyte.md) moves values whatever kernel it names.\n"
     "\n"
     "Parameters\n"
     "----------\n"
     "dst : StridedLayout or StridedMemoryView\n"
     "    The destination (a view stands for its layout).\n"
     "src : StridedLayout or StridedMemoryView\n"
     "    The source, broadcast to dst's shape.\n"
     "\n"
     "Returns\n"
     "-------\n"
     "dict\n"
     "    ``kernel`` ('nothing', 'contiguous', 'rows', 'transpose', 'broadcast'\n"
     "    or 'gather'), ``ndim``, ``itemsize``, ``volume``, ``shape``,\n"
     "    ``dst_strides`` and ``src_strides`` (in elements, the fastest axis\n"
     "    last), ``dst_offset`` and ``src_offset`` (in elements, from each\n"
     "    side's element 0), and ``src_unit_axis`` (the axis where a transpose's\n"
     "    source has stride 1, else -1).\n"
     "\n"
     "Raises\n"
     "------\n"
     "TypeError\n"
     "    If there are not two arguments, or one is neither a StridedLayout nor a\n"
     "    StridedMemoryView.\n"
     "ValueError\n"
     "    If the itemsizes differ, src cannot be broadcast to dst's shape, or\n"
     "    two elements of dst may share an address.\n"
     "\n"
     "Examples\n"
     "--------\n"
     ">>> import strided\n"
     ">>> dst = strided.StridedLayout.dense((3, 4), 4)\n"
     ">>> src = strided.StridedLayout.dense((4, 3), 4).permuted((1, 0))\n"
     ">>> plan = strided.copy_plan(dst, src)\n"
     ">>> plan[\"kernel\"], plan[\"shape\"], plan[\"src_strides\"]\n"
     "('transpose', (3, 4), (1, 3))"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "strided._strided",
    .m_doc = "The C core of strided: layouts, buffers, memory resources and views.\n"
             "\n"
             "Its names are exported by the strided package, which is what to import.",
    .m_size = -1,
};

int strided_py_add_info_functions(PyObject *module); /* info.c */
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
        strided_py_init_hold_type() < 0 || strided_py_add_layout_type(module) < 0 ||
        strided_py_add_resource_types(module) < 0 || strided_py_add_buffer_type(module) < 0 ||
        strided_py_add_view_type(module) < 0 || strided_py_add_info_functions(module) < 0 ||
        PyModule_AddFunctions(module, module_functions) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
