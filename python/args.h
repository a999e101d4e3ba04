/*
 * args.h: argument conversion shared by the extension's types.
 *
 * Every function returns 0 on success and -1 with a Python exception set.
 */
#ifndef STRIDED_PY_ARGS_H
#define STRIDED_PY_ARGS_H

#include "strided_py.h"

/* Bind vectorcall arguments (positional, then keywords named in kwnames) to
 * the parameters names[] (NULL-terminated); the first nrequired must be
 * given. out[i] is a borrowed reference, or NULL for a parameter not given.
 * CPython offers no public parser for this calling convention; the classic
 * tuple-and-dict one costs more than the layout operations themselves. */
int strided_py_bind_args(const char *fname, PyObject *const *args,
                         Py_ssize_t nargs, PyObject *kwnames,
                         const char *const *names, int nrequired,
                         PyObject **out);

/* A byte count: a non-negative integer (__index__). None and other
 * non-integers raise TypeError("an integer is required"), a negative value
 * OverflowError("can't convert negative value to size_t"), as cuda.core's
 * size_t arguments do. */
int strided_py_as_size(PyObject *obj, size_t *out);

/* An address: anything int() accepts (cuda.core converts with int() too,
 * so driver handle objects work), stored unsigned; a negative value raises
 * OverflowError. */
int strided_py_as_address(PyObject *obj, void **out);

/* A CUDA stream: NULL (not given) or None is the legacy default stream
 * (*out = NULL); an int is a CUstream handle; any other object must have a
 * __cuda_stream__() method returning (0, handle). Raises TypeError for
 * anything else and ValueError for another protocol version. */
int strided_py_as_stream(PyObject *obj, void **out);

/* The inverse of strided_py_as_stream for callbacks into Python: None for
 * the legacy default stream, else the handle as an int. New reference. */
PyObject *strided_py_stream_object(void *stream);

#endif
