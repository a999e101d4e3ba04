/*
 * strided/status.h: status codes and the thread-local error message.
 *
 * Every fallible function of libstrided returns a strided_status; 0
 * (STRIDED_OK) means success. On failure the function leaves its
 * out-parameters untouched, moves no ownership, and records a one-line message
 * for the calling thread, retrievable with strided_last_error(). The message
 * names the operation, the rule that was broken and the values involved, e.g.
 * "reshape: Layout strides are incompatible with the new shape: cannot view
 * (4,6):(1,4) as (3,8) without a copy". A NULL pointer where one is required
 * is such a failure, STRIDED_ERR_INVALID_ARGUMENT (the "Pointers" rule of
 * strided.h).
 *
 * Ownership: the strings returned here are owned by the library. The message
 * belongs to the calling thread and stays valid until that thread's next
 * failing call.
 */
#ifndef STRIDED_STATUS_H
#define STRIDED_STATUS_H

#include "strided/api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* X(name, value, default text). One list drives the enum, the names and the
 * default texts. Append only: values are part of the ABI.
 * STRIDED_ERR_INVALID_ARGUMENT: an argument breaks a rule of the call.
 * STRIDED_ERR_UNSUPPORTED: a valid request strided does not serve (an
 * element type, a device, an interface version, a copy it has no kernel
 * for). STRIDED_ERR_PROTOCOL: the other side of an exchange (a DLPack or
 * CUDA Array Interface producer) handed over something its protocol
 * forbids, such as a CPU device with id 1 or stream 0. */
#define STRIDED_STATUS_LIST(X)                             \
    X(STRIDED_OK, 0, "success")                            \
    X(STRIDED_ERR_INVALID_ARGUMENT, 1, "invalid argument") \
    X(STRIDED_ERR_OVERFLOW, 2, "integer overflow")         \
    X(STRIDED_ERR_OUT_OF_MEMORY, 3, "out of memory")       \
    X(STRIDED_ERR_UNSUPPORTED, 4, "unsupported")           \
    X(STRIDED_ERR_INTERNAL, 5, "internal error")           \
    X(STRIDED_ERR_NO_CUDA_DRIVER, 6, "no CUDA driver")     \
    X(STRIDED_ERR_CUDA, 7, "CUDA driver error")            \
    X(STRIDED_ERR_PROTOCOL, 8, "exchange protocol violated")

/* The result of every fallible function. */
typedef enum strided_status {
#define STRIDED_STATUS_ENUM_(name, value, text) name = value,
    STRIDED_STATUS_LIST(STRIDED_STATUS_ENUM_)
#undef STRIDED_STATUS_ENUM_
} strided_status;

/* The enumerator's name, e.g. "STRIDED_ERR_OVERFLOW"; "STRIDED_UNKNOWN" for a
 * value outside the list. Never NULL. */
STRIDED_API const char *strided_status_name(strided_status status);

/* A short default text for a status, e.g. "integer overflow". Never NULL. */
STRIDED_API const char *strided_status_text(strided_status status);

/* The message of the calling thread's most recent failure, with the failing
 * operation first ("permute: Invalid permutation: ..."); "" if this thread has
 * not failed yet. Never NULL. */
STRIDED_API const char *strided_last_error(void);

/* The same message without its leading "operation: " part. The Python
 * binding raises exceptions with this text, so that they read exactly as
 * cuda.core's. Never NULL. */
STRIDED_API const char *strided_last_error_reason(void);

/* Record "operation: <formatted text>" as the calling thread's last error
 * and return status, the way the library's own failures do. For code that
 * plugs into the library, such as a user-defined memory resource's allocate
 * callback, so that its failures read like the library's.
 *   operation  a short name, e.g. "my_pool_alloc" (NULL: "error")
 *   format     printf-style (NULL: empty) */
STRIDED_API strided_status strided_set_last_error(strided_status status, const char *operation,
                                                  const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* The CUresult of the calling thread's most recent failure when it came from
 * the CUDA driver (status STRIDED_ERR_CUDA), else 0. The message names the
 * driver call, the error's name and its text. */
STRIDED_API int strided_last_cuda_error(void);

#ifdef __cplusplus
}
#endif

#endif
