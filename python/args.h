/*
 * args.h: argument conversion shared by the extension's types.
 *
 * Every int function returns 0 on success and -1 with a Python exception
 * set.
 */
#ifndef STRIDED_PY_ARGS_H
#define STRIDED_PY_ARGS_H

#include <stdint.h>

#include "strided_py.h"

/* Bind vectorcall arguments (positional, then keywords named in kwnames) to
 * the parameters names[] (NULL-terminated); the first nrequired must be
 * given. out[i] is a borrowed reference, or NULL for a parameter not given.
 * CPython offers no public parser for this calling convention; the classic
 * tuple-and-dict one costs more than the layout operations themselves. */
int strided_py_bind_args(const char *fname, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames, const char *const *names, int nrequired,
                         PyObject **out);

/* A tuple of the names (NULL-terminated) as interned str objects: the
 * kwnames of a vectorcall. Callees match keywords by identity first, so
 * interned names spare them a comparison of characters. New reference. */
PyObject *strided_py_kwnames(const char *const *names);

/* Integer arguments. An int or any object with __index__ is accepted, a
 * bool never: True and False where a count, an axis, an index or an
 * address is meant are a mistake that would otherwise read as 1 and 0.
 * what names the argument in messages; item >= 0 names its item-th element
 * ("shape[1]"), -1 the argument itself. An exception raised by __index__
 * propagates unchanged. */

/* TypeError("<what> must be an int, not bool") for a bool: -1; else 0. */
int strided_py_reject_bool(PyObject *obj, const char *what, int item);

/* The int of obj (new reference): a bool or an object without __index__
 * raises TypeError("<what> must be an int, not <type>"). NULL with an
 * exception set. */
PyObject *strided_py_index(PyObject *obj, const char *what, int item);

/* An int64; OverflowError("<what> <value> does not fit in int64") beyond. */
int strided_py_as_int64(PyObject *obj, const char *what, int item, int64_t *out);

/* A C int; OverflowError("<what> <value> does not fit in a C int") beyond. */
int strided_py_as_int(PyObject *obj, const char *what, int item, int *out);

/* A uint64 (a bit mask); OverflowError for a negative or larger value. */
int strided_py_as_uint64(PyObject *obj, const char *what, uint64_t *out);

/* A byte count: a non-negative integer (__index__). None and other
 * non-integers raise TypeError("an integer is required"), a negative value
 * OverflowError("can't convert negative value to size_t"), as cuda.core's
 * size_t arguments do; a bool TypeError("<what> must be an int, not
 * bool"). */
int strided_py_as_size(PyObject *obj, const char *what, size_t *out);

/* An address: an int, or an object with __index__, or with __int__ but
 * no __float__ (cuda.core converts with int(), so driver handle objects
 * work), stored unsigned. A bool, a float or other number with a fraction
 * (int() would truncate it), a string (int() would parse it) or anything
 * else raises TypeError("<what> must be an int, not <type>"), a negative
 * value OverflowError. */
int strided_py_as_address(PyObject *obj, const char *what, void **out);

/* A device: an int (a bool never), or an object with an int device_id
 * attribute, as cuda.core's Device. TypeError("<what> must be an int or a
 * Device, got <type>") for anything else; what strided_py_as_int raises for
 * the int. */
int strided_py_as_device_id(PyObject *obj, const char *what, int *out);

/* A CUDA stream: NULL (not given) or None is the legacy default stream
 * (*out = NULL); an int is a CUstream handle; any other object must have a
 * __cuda_stream__() method returning (0, handle). Raises TypeError for
 * anything else (a bool included) and ValueError for another protocol
 * version. */
int strided_py_as_stream(PyObject *obj, void **out);

/* The inverse of strided_py_as_stream for callbacks into Python: None for
 * the legacy default stream, else the handle as an int. New reference. */
PyObject *strided_py_stream_object(void *stream);

/* The pending exception as one object (new reference), cleared; NULL when
 * none is pending. */
PyObject *strided_py_take_exception(void);

/* Raise exc (a reference taken), as strided_py_take_exception took it:
 * the inverse of that. */
void strided_py_raise_exception(PyObject *exc);

/* When the pending exception is an AttributeError (an object lacks a
 * protocol's attribute), replace it with TypeError(format % ...) whose
 * __cause__ is the AttributeError; any other exception is left as it is.
 * Returns -1. */
int strided_py_retype_attribute_error(const char *format, ...);

/* The same after obj.<name> or a call of it failed, only when obj has no
 * attribute name (an AttributeError the method raised itself stays).
 * Returns -1. */
int strided_py_retype_missing_attribute(PyObject *obj, PyObject *name, const char *format, ...);

#endif
