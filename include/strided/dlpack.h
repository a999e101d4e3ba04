/*
 * strided/dlpack.h: the DLPack 1.x ABI, declared anew from the DLPack
 * specification (version 1.3), and the element types and devices it names.
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

/* The size in bytes of one element of dtype, for every type whose elements
 * are whole bytes: int and uint 8/16/32/64, float 16/32/64, bfloat 16,
 * complex 64/128, bool 8 and the float8 variants (8).
 * Returns STRIDED_ERR_INVALID_ARGUMENT for a NULL out;
 * STRIDED_ERR_UNSUPPORTED with a message naming the type for lanes other
 * than 1, sub-byte types (float6, float4, bits not a multiple of 8),
 * opaque handles, unknown codes and code/bits pairs that do not exist. */
STRIDED_API strided_status strided_dtype_itemsize(strided_dtype dtype,
                                                  int *out);

/* The type's name as NumPy and ml_dtypes spell it: "int8", "uint64",
 * "float16", "bfloat16", "complex64", "bool", "float8_e4m3fn", ...; for a
 * type strided_dtype_itemsize rejects, a description such as
 * "dtype(code=3, bits=64, lanes=1)". Writes like snprintf (buf may be NULL
 * when size is 0, and only then); returns the length the full text
 * needs. */
STRIDED_API size_t strided_dtype_format(strided_dtype dtype, char *buf,
                                        size_t size);

/* True when the two types are the same (code, bits and lanes). */
STRIDED_API bool strided_dtype_equal(strided_dtype a, strided_dtype b);

/* What an array-interface type string says about an element. */
typedef struct strided_typestr {
    char kind;          /* NumPy's kind character: 'b', 'i', 'u', 'f', 'c',
                           'V', 'S', 'U', 'M' or 'm' */
    int32_t itemsize;   /* bytes per element, > 0 */
    bool swapped;       /* multi-byte elements in the other byte order */
    bool has_dtype;     /* dtype is set: the type has a DLPack equivalent
                           (never when swapped) */
    strided_dtype dtype;
} strided_typestr;

/* Flags of strided_typestr_parse. */
typedef enum strided_typestr_flags {
    /* The caller knows the type holds object references though its string
     * does not say so (NumPy's dtype.hasobject: a structured type with an
     * object field reads "|V16"): refused like 'O'. */
    STRIDED_TYPESTR_HOLDS_REFERENCES = 1,
    /* Refuse elements in the other byte order (imports of the array
     * interfaces: their consumers read native bytes). */
    STRIDED_TYPESTR_NATIVE_ONLY = 2
} strided_typestr_flags;

/* Parse a type string of NumPy's array interface (also the CUDA array
 * interface's typestr): a byte-order character, a kind character and a
 * decimal size, as "<f4", "|b1", "|V16", "<U3" (3 characters, 12 bytes),
 * "|O" (objects, without a size) or "<M8[ns]" (a unit in brackets, for
 * datetimes only).
 *
 * This is the one table deciding which element types strided takes: only
 * plain data, whose bytes may be copied blindly. Accepted kinds: 'b' (bool,
 * 1 byte), 'i' and 'u' (1, 2, 4 or 8 bytes), 'f' (1 for ml_dtypes' float8
 * types, 2, 4, 8, or 16 for long double), 'c' (8, 16 or 32), 'V' (raw or
 * structured bytes, any size), 'S' (bytes), 'U' (UCS-4 text), 'M' and 'm'
 * (8 bytes). Refused: 'O' and every type holding Python object references
 * (a copy would duplicate pointers without their reference counts), and
 * any other kind. Byte order: '|' and '=' are native; '>' on a
 * little-endian host (or '<' on a big-endian one) marks multi-byte
 * elements of the ordered kinds (all but 'b', 'V' and 'S') swapped.
 *   typestr  NUL-terminated; borrowed
 *   flags    strided_typestr_flags, or-ed
 *   out      out-parameter (written on success only); has_dtype for
 *            native bool, int and uint of 1-8 bytes, float of 2, 4 and 8
 *            bytes and complex of 8 and 16 bytes, with their DLPack types
 * Returns STRIDED_ERR_INVALID_ARGUMENT for NULL arguments or a malformed
 * string (naming it); STRIDED_ERR_UNSUPPORTED for object types, other
 * kinds, sizes the kind does not have, and swapped elements under
 * STRIDED_TYPESTR_NATIVE_ONLY. */
STRIDED_API strided_status strided_typestr_parse(const char *typestr, unsigned flags,
                                                 strided_typestr *out);

#ifdef __cplusplus
}
#endif

#endif
