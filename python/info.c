/*
 * info.c: what python -m strided reports (strided/__main__.py): how
 * libstrided was built (strided/build.h), the CUDA driver it finds and the
 * GPUs it sees (strided/driver.h), as dicts. The C library decides every
 * value; this file only turns them into Python objects.
 */
#include "strided_py.h"

#include "strided/build.h"
#include "strided/driver.h"

int strided_py_add_info_functions(PyObject *module);

static PyObject *module_build_info(PyObject *module, PyObject *unused)
{
    (void)module;
    (void)unused;
    strided_build_info b;
    strided_build_info_init(&b);
    /* The version the extension was compiled against (the headers' macros)
     * beside the one of the library it runs (b.version): they come from one
     * VERSION file, and tests/python/test_version.py checks they agree. */
    return Py_BuildValue(
        "{s:s,s:s,s:(iii),s:O,s:s,s:s,s:s,s:O,s:O,s:s,s:s}", "version", b.version, "header_version",
        STRIDED_VERSION_STRING, "header_version_info", STRIDED_VERSION_MAJOR, STRIDED_VERSION_MINOR,
        STRIDED_VERSION_PATCH, "kernels", b.kernels ? Py_True : Py_False, "cuda_architectures",
        b.cuda_architectures, "ptx_architecture", b.ptx_architecture, "nvcc_version",
        b.nvcc_version, "kernels_compressed", b.kernels_compressed ? Py_True : Py_False, "openmp",
        b.openmp ? Py_True : Py_False, "compiler", b.compiler, "build_type", b.build_type);
}

static PyObject *module_driver_info(PyObject *module, PyObject *unused)
{
    (void)module;
    (void)unused;
    strided_driver_info d;
    strided_status status;
    /* The first call loads the driver (cuInit), which may take a while. */
    Py_BEGIN_ALLOW_THREADS
    status = strided_driver_info_init(&d);
    Py_END_ALLOW_THREADS
    if (status != STRIDED_OK)
        return strided_py_raise(status);
    return Py_BuildValue("{s:i,s:i,s:s}", "version", d.version, "device_count", d.device_count,
                         "path", d.path);
}

static PyObject *module_device_info(PyObject *module, PyObject *args)
{
    (void)module;
    int device;
    if (!PyArg_ParseTuple(args, "i:device_info", &device))
        return NULL;
    strided_device_info v;
    strided_status status;
    Py_BEGIN_ALLOW_THREADS
    status = strided_device_info_init(&v, device);
    Py_END_ALLOW_THREADS
    if (status != STRIDED_OK)
        return strided_py_raise(status);
    return Py_BuildValue("{s:i,s:s,s:(ii),s:i}", "ordinal", v.ordinal, "name", v.name,
                         "compute_capability", v.compute_capability_major,
                         v.compute_capability_minor, "multiprocessor_count",
                         v.multiprocessor_count);
}

static PyMethodDef info_functions[] = {
    {"build_info", module_build_info, METH_NOARGS,
     "build_info()\n--\n\nHow libstrided was built: a dict with its version, the version of "
     "the headers the extension was compiled against (header_version, header_version_info), "
     "whether the CUDA copy kernels are compiled in (kernels) and for which architectures "
     "(cuda_architectures, ptx_architecture: space-separated compute capabilities without "
     "the dot), nvcc_version, kernels_compressed, openmp, compiler and build_type."},
    {"driver_info", module_driver_info, METH_NOARGS,
     "driver_info()\n--\n\nThe CUDA driver strided loads (loading it if needed): a dict with "
     "its version (1000 * major + 10 * minor), device_count and path (the file it was "
     "loaded from). Raises RuntimeError with the reason when there is no usable driver."},
    {"device_info", module_device_info, METH_VARARGS,
     "device_info(ordinal, /)\n--\n\nOne CUDA device: a dict with its ordinal, name, "
     "compute_capability (major, minor) and multiprocessor_count. Raises ValueError for a "
     "device that does not exist, RuntimeError when there is no usable driver."},
    {NULL, NULL, 0, NULL},
};

int strided_py_add_info_functions(PyObject *module)
{
    return PyModule_AddFunctions(module, info_functions);
}
