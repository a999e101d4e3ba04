/*
 * strided/dlpack.h: the DLPack 1.x ABI, declared anew from the DLPack
 * specification (version 1.3): its structs, and the codes of the element
 * types and devices it names. What strided does with element types is in
 * strided/dtype.h.
 *
 * The structs match DLPack's DLDevice, DLDataType, DLTensor,
 * DLManagedTensor, DLPackVersion and DLManagedTensorVersioned field for field,
 * so pointers to them pass to and from any DLPack producer or consumer. The
 * names carry strided's prefix, so this header and dlpack.h can be included
 * together.
 *
 * Ownership (DLPack's rules): whoever holds a managed tensor calls its
 * deleter exactly once when done (the deleter may be NULL: nothing to free).
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

#ifdef __cplusplus
}
#endif

#endif
