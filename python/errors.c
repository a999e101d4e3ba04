/*
 * errors.c: the one table from libstrided's statuses to Python exceptions.
 *
 * A failed call raises the exception its status maps to, with the calling
 * thread's message (without its "operation: " part, so that messages read
 * as cuda.core's). At the exchange boundaries the same status means
 * something else to the caller, and cuda.core raises other exceptions
 * there; the column says where the call was made:
 *
 *   status        call                 DLPack (import,      interface (array     IPC (sharing
 *                                      export, request)     interfaces, torch)   with processes)
 *   INVALID       ValueError           BufferError          ValueError           ValueError
 *   OVERFLOW      OverflowError        BufferError          OverflowError        OverflowError
 *   OUT_OF_MEMORY MemoryError          MemoryError          MemoryError          MemoryError
 *   UNSUPPORTED   NotImplementedError  BufferError          BufferError          RuntimeError
 *   PROTOCOL      AssertionError       AssertionError       AssertionError       AssertionError
 *   others        RuntimeError         RuntimeError         RuntimeError         RuntimeError
 *
 * A DLPack tensor the library refuses is a failed exchange, whatever the
 * rule it broke (BufferError); an interface dict's layout rules are the
 * layout's own (ValueError, OverflowError), and only what strided does not
 * take is a failed exchange. A producer that broke its protocol gets
 * AssertionError, as cuda.core asserts those rules. cuda.core raises
 * RuntimeError for what it cannot share ("Memory resource is not
 * IPC-enabled"), hence the IPC column.
 */
#include "strided_py.h"

static PyObject **const table[][4] = {
    [STRIDED_ERR_INVALID_ARGUMENT] = {&PyExc_ValueError, &PyExc_BufferError, &PyExc_ValueError,
                                      &PyExc_ValueError},
    [STRIDED_ERR_OVERFLOW] = {&PyExc_OverflowError, &PyExc_BufferError, &PyExc_OverflowError,
                              &PyExc_OverflowError},
    [STRIDED_ERR_OUT_OF_MEMORY] = {&PyExc_MemoryError, &PyExc_MemoryError, &PyExc_MemoryError,
                                   &PyExc_MemoryError},
    [STRIDED_ERR_UNSUPPORTED] = {&PyExc_NotImplementedError, &PyExc_BufferError, &PyExc_BufferError,
                                 &PyExc_RuntimeError},
    [STRIDED_ERR_PROTOCOL] = {&PyExc_AssertionError, &PyExc_AssertionError, &PyExc_AssertionError,
                              &PyExc_AssertionError},
};

PyObject *strided_py_raise_at(strided_status status, strided_py_boundary where)
{
    PyObject *type = PyExc_RuntimeError;
    size_t rows = sizeof table / sizeof table[0];
    if ((unsigned)status < rows && (unsigned)where < 4 && table[status][where] != NULL)
        type = *table[status][where];
    PyErr_SetString(type, strided_last_error_reason());
    return NULL;
}

PyObject *strided_py_raise(strided_status status)
{
    return strided_py_raise_at(status, STRIDED_PY_CALL);
}
