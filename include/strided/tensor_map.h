/*
 * strided/tensor_map.h: tensor maps of views, the descriptors through
 * which a GPU's tensor memory accelerator (compute capability 9.0 and
 * later) moves tiles ("boxes") between a view's memory and shared memory.
 *
 * A tensor map is made from a view and a box: the box's extent along each
 * axis of the view, in the view's axis order (outermost first), as
 * StridedMemoryView.as_tensor_map takes it. strided checks every rule of
 * the driver's tiled encoding (cuTensorMapEncodeTiled) before it calls the
 * driver, with a message naming the rule and the values, and then lets
 * the driver encode the map in the primary context of the device it is
 * for. The driver numbers dimensions the other way round, innermost first:
 * the view's last axis is the driver's dimension 0, whose elements must be
 * next to each other (stride 1), and whose box spans a whole number of 16
 * bytes. Every other axis steps forwards by a multiple of 16 bytes (32 with
 * INTERLEAVE_32B) below 2^40: negative strides and broadcast axes (stride
 * 0, extent above 1) have no tensor map. An axis of extent 1 is never
 * stepped along, so the driver is not given the view's stride for it but
 * the bytes the axes inside it span, rounded up to the alignment (the
 * alignment itself where that reaches 2^40): a view whose extent-1 axes
 * have strides no tensor map could take still has one.
 *
 * The map is for the device current on the calling thread (0 when no
 * context is current; a view of device memory must be on that device, as
 * cuda.core requires); pinned and managed memory may be used from it. The
 * descriptor bytes are the driver's: pass them to a kernel by value (a
 * __grid_constant__ CUtensorMap parameter) or copy them to device memory.
 *
 * Ownership: a tensor map is a plain value that holds the address of the
 * view's memory but no reference to it: the caller keeps that memory alive
 * while the map is used. Options are borrowed for the call.
 */
#ifndef STRIDED_TENSOR_MAP_H
#define STRIDED_TENSOR_MAP_H

#include <stdbool.h>
#include <stdint.h>

#include "strided/api.h"
#include "strided/dtype.h"
#include "strided/status.h"
#include "strided/view.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most axes a tensor map has. */
#define STRIDED_TENSOR_MAP_MAX_RANK 5
/* The size and alignment in bytes of the driver's descriptor (CUtensorMap:
 * 128-byte aligned since CUDA 13, which the driver and the TMA unit expect). */
#define STRIDED_TENSOR_MAP_BYTES 128
#define STRIDED_TENSOR_MAP_ALIGNMENT 128

#ifdef __cplusplus
#define STRIDED_TENSOR_MAP_ALIGNED alignas(STRIDED_TENSOR_MAP_ALIGNMENT)
#else
#define STRIDED_TENSOR_MAP_ALIGNED _Alignas(STRIDED_TENSOR_MAP_ALIGNMENT)
#endif

/* The element types a tensor map reads (the driver's CUtensorMapDataType,
 * with its values). */
typedef enum strided_tensor_map_data_type {
    STRIDED_TENSOR_MAP_DATA_TYPE_UINT8 = 0,
    STRIDED_TENSOR_MAP_DATA_TYPE_UINT16 = 1,
    STRIDED_TENSOR_MAP_DATA_TYPE_UINT32 = 2,
    STRIDED_TENSOR_MAP_DATA_TYPE_INT32 = 3,
    STRIDED_TENSOR_MAP_DATA_TYPE_UINT64 = 4,
    STRIDED_TENSOR_MAP_DATA_TYPE_INT64 = 5,
    STRIDED_TENSOR_MAP_DATA_TYPE_FLOAT16 = 6,
    STRIDED_TENSOR_MAP_DATA_TYPE_FLOAT32 = 7,
    STRIDED_TENSOR_MAP_DATA_TYPE_FLOAT64 = 8,
    STRIDED_TENSOR_MAP_DATA_TYPE_BFLOAT16 = 9,
    STRIDED_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ = 10,
    STRIDED_TENSOR_MAP_DATA_TYPE_TFLOAT32 = 11,
    STRIDED_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ = 12
} strided_tensor_map_data_type;

/* Interleaved layouts (CUtensorMapInterleave). */
typedef enum strided_tensor_map_interleave {
    STRIDED_TENSOR_MAP_INTERLEAVE_NONE = 0,
    STRIDED_TENSOR_MAP_INTERLEAVE_16B = 1,
    STRIDED_TENSOR_MAP_INTERLEAVE_32B = 2
} strided_tensor_map_interleave;

/* Shared-memory bank swizzling (CUtensorMapSwizzle): 16-byte chunks
 * swizzled within a span of 32, 64 or 128 bytes. */
typedef enum strided_tensor_map_swizzle {
    STRIDED_TENSOR_MAP_SWIZZLE_NONE = 0,
    STRIDED_TENSOR_MAP_SWIZZLE_32B = 1,
    STRIDED_TENSOR_MAP_SWIZZLE_64B = 2,
    STRIDED_TENSOR_MAP_SWIZZLE_128B = 3
} strided_tensor_map_swizzle;

/* The granularity of L2 fills (CUtensorMapL2promotion). */
typedef enum strided_tensor_map_l2_promotion {
    STRIDED_TENSOR_MAP_L2_PROMOTION_NONE = 0,
    STRIDED_TENSOR_MAP_L2_PROMOTION_L2_64B = 1,
    STRIDED_TENSOR_MAP_L2_PROMOTION_L2_128B = 2,
    STRIDED_TENSOR_MAP_L2_PROMOTION_L2_256B = 3
} strided_tensor_map_l2_promotion;

/* What out-of-bounds elements read as (CUtensorMapFloatOOBfill): zero, or
 * for floating-point types a NaN that FMA instructions read as zero. */
typedef enum strided_tensor_map_oob_fill {
    STRIDED_TENSOR_MAP_OOB_FILL_NONE = 0,
    STRIDED_TENSOR_MAP_OOB_FILL_NAN_REQUEST_ZERO_FMA = 1
} strided_tensor_map_oob_fill;

/* What a tensor map is made with. All zeros but box_dim is the default:
 * every element stride 1, the data type of the view's dtype, no
 * interleave, no swizzle, no L2 promotion, zero fill. Counts are taken as
 * given, so that a wrong one is refused with its value. */
typedef struct strided_tensor_map_options {
    int32_t box_ndim;               /* entries of box_dim */
    const int64_t *box_dim;         /* the box's extent along each axis of the
                                       view, outermost first; borrowed */
    int32_t element_strides_ndim;   /* entries of element_strides */
    const int64_t *element_strides; /* the step along each axis of the view,
                                       outermost first; NULL: 1 along every
                                       axis; borrowed */
    bool has_data_type;             /* false: the view's dtype decides */
    strided_tensor_map_data_type data_type;
    const char *dtype_name; /* the name of the view's element type
                                       where it has no DLPack type (NumPy's
                                       str(dtype): "|S4", ">f4"), for the
                                       message refusing it; NULL: the view
                                       has no element type; borrowed */
    strided_tensor_map_interleave interleave;
    strided_tensor_map_swizzle swizzle;
    strided_tensor_map_l2_promotion l2_promotion;
    strided_tensor_map_oob_fill oob_fill;
} strided_tensor_map_options;

/* A tensor map: the driver's descriptor and what it was encoded from, in
 * the driver's order (dimension 0 is the view's last axis). A plain value;
 * treat the fields as read-only. */
typedef struct strided_tensor_map {
    STRIDED_TENSOR_MAP_ALIGNED unsigned char descriptor[STRIDED_TENSOR_MAP_BYTES];
    int32_t rank;   /* 1..5; 0 in a map no function made */
    int32_t device; /* the CUDA device it was made for */
    strided_tensor_map_data_type data_type;
    strided_tensor_map_interleave interleave;
    strided_tensor_map_swizzle swizzle;
    strided_tensor_map_l2_promotion l2_promotion;
    strided_tensor_map_oob_fill oob_fill;
    uint64_t global_address; /* the device address of element (0,...,0) */
    uint64_t global_dim[STRIDED_TENSOR_MAP_MAX_RANK];
    uint64_t global_strides[STRIDED_TENSOR_MAP_MAX_RANK - 1]; /* bytes, of
                                       dimensions 1..rank-1 */
    uint32_t box_dim[STRIDED_TENSOR_MAP_MAX_RANK];
    uint32_t element_strides[STRIDED_TENSOR_MAP_MAX_RANK];
} strided_tensor_map;

/* The tensor-map data type of an element type: uint8, uint16, uint32,
 * uint64, int32, int64, float16, float32, float64 and bfloat16 have one
 * (cuda.core's table); nothing else does.
 *   dtype     the element type, or NULL for one without a DLPack type
 *   name      how messages name the type (NumPy's str(dtype): "int8",
 *             ">f4", "|S3"); NULL: strided_dtype_format's name of dtype
 *   inferred  whether the type is the view's own (the message then
 *             suggests naming data_type)
 *   out       out-parameter (written on success only)
 * Returns STRIDED_ERR_INVALID_ARGUMENT for a NULL out, NULL dtype and name,
 * and for a type without a tensor-map type, in cuda.core's words:
 * "Unsupported dtype int8 for TMA; supported dtypes: [dtype('uint8'), ...,
 * dtype(bfloat16)]." (inferred adds " You may also specify data_type
 * explicitly."). */
STRIDED_API strided_status strided_tensor_map_data_type_from_dtype(
    const strided_dtype *dtype, const char *name, bool inferred, strided_tensor_map_data_type *out);

/* The size in bytes of one element of a tensor-map data type; 0 for a
 * value outside the enumeration. */
STRIDED_API int strided_tensor_map_data_type_size(strided_tensor_map_data_type type);

/* Make the tiled tensor map of a view: check every rule, then have the
 * driver encode it (cuTensorMapEncodeTiled) in the primary context of the
 * device current on the calling thread (0 when none is current).
 *   view     the view whose memory the map addresses; borrowed, and not
 *            retained: keep its memory alive while the map is used
 *   options  the box and the encoding; borrowed
 *   out      out-parameter: the map (written on success only); must be
 *            aligned to STRIDED_TENSOR_MAP_ALIGNMENT
 * The checks, in this order, all made before the driver is asked anything
 * (the operation is "as_tensor_map"; sentences quoted with a capital are
 * cuda.core's), each failing with STRIDED_ERR_INVALID_ARGUMENT:
 *   - view, options and out are required; out aligned to 128 bytes;
 *   - the options: counts not negative, arrays given when counted, every
 *     enumeration value in range ("swizzle must be a TensorMapSwizzle value
 *     (0 to 3), got 7");
 *   - the view not released;
 *   - "The tensor must be device-accessible";
 *   - "Global memory address must be 16-byte aligned, got address 0x1008"
 *     (32 bytes with INTERLEAVE_32B);
 *   - a view of packed sub-byte elements that are not whole bytes
 *     (strided_view_packed_bits): STRIDED_ERR_UNSUPPORTED;
 *   - the data type: options' data_type, or the view's dtype through
 *     strided_tensor_map_data_type_from_dtype (for a view without a DLPack
 *     type, by options' dtype_name; "Cannot infer TMA data type from the
 *     tensor; please specify data_type explicitly" without either); its
 *     size must be the view's itemsize;
 *   - "Tensor rank must be between 1 and 5, got 6"; rank 3 or more with
 *     interleave;
 *   - "box_dim must have 2 elements (same as tensor rank), got 3";
 *     "box_dim[0] must be in [1, 256], got 300";
 *   - "element_strides must have 2 elements, got 1"; "element_strides[0]
 *     must be positive, got 0", and at most 8;
 *   - every axis: an extent from 1 to 2^32; the last axis of stride 1
 *     (unless its extent is 1); every other axis of extent above 1 with a
 *     stride that is not negative, not 0 (broadcast), in bytes a multiple
 *     of 16 (32 with INTERLEAVE_32B) and below 2^40;
 *   - box_dim[rank-1] * itemsize a multiple of 16 bytes, and without
 *     interleave but with a swizzle at most its span (32, 64 or 128
 *     bytes); INTERLEAVE_32B only with SWIZZLE_32B (documented by CUDA,
 *     not checked by the driver); NAN_REQUEST_ZERO_FMA only for
 *     floating-point data types.
 * Then: STRIDED_ERR_NO_CUDA_DRIVER without a driver; for a view of device
 * memory on another device than the current one, STRIDED_ERR_INVALID_ARGUMENT
 * ("TensorMapDescriptor._from_tiled expects tensor on device 0, got 1");
 * STRIDED_ERR_CUDA when the driver fails (the current device's lookup,
 * entering its context, or the encoding). */
STRIDED_API strided_status strided_tensor_map_make(const strided_view *view,
                                                   const strided_tensor_map_options *options,
                                                   strided_tensor_map *out);

/* The same map for another view's memory: map with its global address
 * replaced by the address of view's element (0,...,0), everything else
 * kept (the shape and strides are map's, not view's), encoded again in the
 * primary context of map's device. No current context is needed.
 *   map   a map strided_tensor_map_make made; borrowed
 *   view  borrowed, not retained
 *   out   out-parameter (written on success only; may be map); aligned to
 *         STRIDED_TENSOR_MAP_ALIGNMENT
 * Checked in this order (operation "replace_address"), each failing with
 * STRIDED_ERR_INVALID_ARGUMENT: map, view and out are required; out
 * aligned; map of rank 1 to 5; the view not released; "The tensor must be
 * device-accessible"; the address aligned as for strided_tensor_map_make;
 * then STRIDED_ERR_NO_CUDA_DRIVER without a driver; a view of device
 * memory on another device than map's ("replace_address expects tensor on
 * device 0, got 1"); STRIDED_ERR_CUDA when the driver fails. */
STRIDED_API strided_status strided_tensor_map_replace_address(const strided_tensor_map *map,
                                                              const strided_view *view,
                                                              strided_tensor_map *out);

#ifdef __cplusplus
}
#endif

#endif
