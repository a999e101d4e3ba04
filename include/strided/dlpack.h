/*
 * strided/dlpack.h: the DLPack 1.x ABI, declared anew from the DLPack
 * specification (version 1.3): its structs, and the codes of the element
 * types and devices it names. What strided does with element types is in
 * strided/dtype.h.
 *
 * The structs match DLPack's DLDevice, DLDataType, DLTensor,
 * DLManagedTensor, DLPackVersion and DLManagedTensorVersioned field for field,
 * so pointers to them pass to and from any DLPack producer or consumer; so
 * do DLPackExchangeAPI and the function types of its table (the C exchange
 * API of DLPack 1.3, at the end). The names carry strided's prefix, so this
 * header and dlpack.h can be included together.
 *
 * Ownership (DLPack's rules): whoever holds a managed tensor calls its
 * deleter exactly once when done (the deleter may be NULL: nothing to free).
 * An exchange API table belongs to its producer and lives as long as the
 * process.
 * A consumer must not read a versioned tensor's fields other than version,
 * manager_ctx and deleter when the major version is not
 * STRIDED_DLPACK_MAJOR_VERSION.
 */
#ifndef STRIDED_DLPACK_H
#define STRIDED_DLPACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "strided/api.h"
#include "strided/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define STRIDED_DLPACK_MAJOR_VERSION 1
#define STRIDED_DLPACK_MINOR_VERSION 3

/* Flags of a versioned managed tensor. */
#define STRIDED_DLPACK_FLAG_READ_ONLY (UINT64_C(1) << 0)
#define STRIDED_DLPACK_FLAG_IS_COPIED (UINT64_C(1) << 1)
#define STRIDED_DLPACK_FLAG_IS_SUBBYTE_TYPE_PADDED (UINT64_C(1) << 2)

/* Python capsule names, before and after a consumer takes the tensor. */
#define STRIDED_DLPACK_CAPSULE "dltensor"
#define STRIDED_DLPACK_CAPSULE_VERSIONED "dltensor_versioned"
#define STRIDED_DLPACK_CAPSULE_USED "used_dltensor"
#define STRIDED_DLPACK_CAPSULE_USED_VERSIONED "used_dltensor_versioned"

/* DLDeviceType values. */
typedef enum strided_device_type {
    STRIDED_DEVICE_CPU = 1,
    STRIDED_DEVICE_CUDA = 2,
    STRIDED_DEVICE_CUDA_HOST = 3,
    STRIDED_DEVICE_OPENCL = 4,
    STRIDED_DEVICE_VULKAN = 7,
    STRIDED_DEVICE_METAL = 8,
    STRIDED_DEVICE_VPI = 9,
    STRIDED_DEVICE_ROCM = 10,
    STRIDED_DEVICE_ROCM_HOST = 11,
    STRIDED_DEVICE_EXT_DEV = 12,
    STRIDED_DEVICE_CUDA_MANAGED = 13,
    STRIDED_DEVICE_ONE_API = 14,
    STRIDED_DEVICE_WEBGPU = 15,
    STRIDED_DEVICE_HEXAGON = 16,
    STRIDED_DEVICE_MAIA = 17,
    STRIDED_DEVICE_TRN = 18
} strided_device_type;

/* DLDevice: a device type and an ordinal (0 for CPU, CUDA host and managed
 * memory by DLPack convention). */
typedef struct strided_device {
    int32_t device_type; /* a strided_device_type */
    int32_t device_id;
} strided_device;

/* DLDataTypeCode values. */
typedef enum strided_dtype_code {
    STRIDED_DTYPE_INT = 0,
    STRIDED_DTYPE_UINT = 1,
    STRIDED_DTYPE_FLOAT = 2,
    STRIDED_DTYPE_OPAQUE_HANDLE = 3,
    STRIDED_DTYPE_BFLOAT = 4,
    STRIDED_DTYPE_COMPLEX = 5,
    STRIDED_DTYPE_BOOL = 6,
    STRIDED_DTYPE_FLOAT8_E3M4 = 7,
    STRIDED_DTYPE_FLOAT8_E4M3 = 8,
    STRIDED_DTYPE_FLOAT8_E4M3B11FNUZ = 9,
    STRIDED_DTYPE_FLOAT8_E4M3FN = 10,
    STRIDED_DTYPE_FLOAT8_E4M3FNUZ = 11,
    STRIDED_DTYPE_FLOAT8_E5M2 = 12,
    STRIDED_DTYPE_FLOAT8_E5M2FNUZ = 13,
    STRIDED_DTYPE_FLOAT8_E8M0FNU = 14,
    STRIDED_DTYPE_FLOAT6_E2M3FN = 15,
    STRIDED_DTYPE_FLOAT6_E3M2FN = 16,
    STRIDED_DTYPE_FLOAT4_E2M1FN = 17
} strided_dtype_code;

/* DLDataType: a type code, bits per lane and lanes. */
typedef struct strided_dtype {
    uint8_t code; /* a strided_dtype_code */
    uint8_t bits;
    uint16_t lanes;
} strided_dtype;

/* DLTensor. */
typedef struct strided_dl_tensor {
    void *data;
    strided_device device;
    int32_t ndim;
    strided_dtype dtype;
    int64_t *shape;
    int64_t *strides; /* in elements; NULL: C-contiguous (DLPack < 1.2) */
    uint64_t byte_offset;
} strided_dl_tensor;

/* DLManagedTensor (the legacy, unversioned form). */
typedef struct strided_dl_managed_tensor {
    strided_dl_tensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct strided_dl_managed_tensor *self);
} strided_dl_managed_tensor;

/* DLPackVersion. */
typedef struct strided_dl_version {
    uint32_t major;
    uint32_t minor;
} strided_dl_version;

/* DLManagedTensorVersioned. */
typedef struct strided_dl_managed_tensor_versioned {
    strided_dl_version version;
    void *manager_ctx;
    void (*deleter)(struct strided_dl_managed_tensor_versioned *self);
    uint64_t flags;
    strided_dl_tensor dl_tensor;
} strided_dl_managed_tensor_versioned;

/* The DLPack C exchange API (DLPack 1.3): a table of C functions a Python
 * array type shares with consumers through a PyCapsule named
 * STRIDED_DLPACK_EXCHANGE_API_CAPSULE, set as its type's
 * __dlpack_c_exchange_api__ attribute, so that they exchange tensors
 * without calling __dlpack__. The table lives as long as the process. A
 * consumer checks header.version.major before it reads anything past the
 * header, and may walk header.prev_api for an older major version it
 * knows. The functions return 0 on success and -1 on failure; each
 * declaration below says how a failure is reported. None of them orders
 * work between streams: the consumer asks current_work_stream where the
 * producer's work runs and uses that stream. */
#define STRIDED_DLPACK_EXCHANGE_API_CAPSULE "dlpack_exchange_api"

/* How the allocator reports a failure without the Python API: kind names
 * the Python exception a Python caller would raise ("BufferError",
 * "MemoryError", ...) and message says why; both are NUL-terminated and
 * borrowed for the call. error_ctx is the allocator's own argument. */
typedef void (*strided_dlpack_set_error_fn)(void *error_ctx, const char *kind, const char *message);

/* DLPackManagedTensorAllocator: make a new managed tensor, owned by the
 * caller, of the dtype, ndim, shape and device of prototype (its other
 * fields are not read). On failure set_error is called exactly once and
 * -1 returned. */
typedef int (*strided_dlpack_allocator_fn)(strided_dl_tensor *prototype,
                                           strided_dl_managed_tensor_versioned **out,
                                           void *error_ctx, strided_dlpack_set_error_fn set_error);

/* DLPackManagedTensorFromPyObjectNoSync: export py_object (a PyObject * of
 * the type the table came from) as a managed tensor the caller owns. -1
 * with a Python exception set on failure (BufferError when the object
 * cannot be described). */
typedef int (*strided_dlpack_from_py_object_fn)(void *py_object,
                                                strided_dl_managed_tensor_versioned **out);

/* DLPackManagedTensorToPyObjectNoSync: make a Python object of the
 * producer's type (a new reference in *out_py_object) from tensor, whose
 * ownership it takes. -1 with a Python exception set on failure. */
typedef int (*strided_dlpack_to_py_object_fn)(strided_dl_managed_tensor_versioned *tensor,
                                              void **out_py_object);

/* DLPackDLTensorFromPyObjectNoSync: describe py_object in *out without
 * taking anything: data, shape and strides stay the producer's and are
 * valid only until control returns to Python. -1 with a Python exception
 * set on failure. May be NULL in a table. */
typedef int (*strided_dlpack_dltensor_from_py_object_fn)(void *py_object, strided_dl_tensor *out);

/* DLPackCurrentWorkStream: the stream (a CUstream for CUDA) on which the
 * producer queues its work on a device; NULL for the CPU, where nothing
 * needs ordering. device_type is a strided_device_type (DLDeviceType). -1
 * with a Python exception set on failure. */
typedef int (*strided_dlpack_current_work_stream_fn)(int32_t device_type, int32_t device_id,
                                                     void **out_current_stream);

/* DLPackExchangeAPIHeader: the part that stays the same across versions. */
typedef struct strided_dlpack_exchange_api_header {
    strided_dl_version version;                          /* the DLPack version of the table */
    struct strided_dlpack_exchange_api_header *prev_api; /* an older table, or
                                                            NULL */
} strided_dlpack_exchange_api_header;

/* DLPackExchangeAPI: the table, field for field. Only
 * dltensor_from_py_object_no_sync may be NULL. */
typedef struct strided_dlpack_exchange_api {
    strided_dlpack_exchange_api_header header;
    strided_dlpack_allocator_fn managed_tensor_allocator;
    strided_dlpack_from_py_object_fn managed_tensor_from_py_object_no_sync;
    strided_dlpack_to_py_object_fn managed_tensor_to_py_object_no_sync;
    strided_dlpack_dltensor_from_py_object_fn dltensor_from_py_object_no_sync;
    strided_dlpack_current_work_stream_fn current_work_stream;
} strided_dlpack_exchange_api;

#ifdef __cplusplus
}
#endif

#endif
