/*
 * strided_py.h: what the extension's C files share. The extension only
 * parses Python arguments, calls libstrided and maps its statuses to
 * exceptions; the rules live in the C library.
 */
#ifndef STRIDED_PY_H
#define STRIDED_PY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "strided.h"

/* Raise the exception for a failed libstrided call (the calling thread's
 * last error) and return NULL. */
PyObject *strided_py_raise(strided_status status);

/* Add the StridedLayout type (and its _StridedLayout alias) to the module. */
int strided_py_add_layout_type(PyObject *module);

#endif
