/*
 * strided/interface.h: views of what an array interface describes: NumPy's
 * __array_interface__ and the CUDA Array Interface (__cuda_array_interface__),
 * version 3.
 *
 * Both describe an array as a dict: the address of element (0,...,0) and a
 * read-only flag, the shape, strides in bytes (or none for C order), a type
 * string, optionally a 'descr' for structured types, a 'mask' (not
 * supported) and, for CUDA, the producer's stream. A binding reads the dict
 * into a strided_interface_desc (plain values, no rules) and this module
 * applies every rule: the version and mask, the stream rules of the CUDA
 * Array Interface, the element type, the strides, where the memory is, and
 * the ordering of the consumer's stream after the producer's.
 *
 * Ownership: the import takes the caller's context, as a DLPack import
 * takes a managed tensor: release(context, ...) runs exactly once, before
 * the import returns when it fails, otherwise when the last reference to
 * the view's buffer goes. The description's arrays and strings are borrowed
 * for the call.
 */
#ifndef STRIDED_INTERFACE_H
#define STRIDED_INTERFACE_H

#include <stdbool.h>
#include <stdint.h>

#include "strided/api.h"
#include "strided/buffer.h"
#include "strided/dtype.h"
#include "strided/status.h"
#include "strided/stream.h"
#include "strided/view.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Which interface a description comes from. */
typedef enum strided_interface_kind {
    STRIDED_INTERFACE_ARRAY = 0, /* NumPy's __array_interface__: host memory */
    STRIDED_INTERFACE_CUDA = 1   /* __cuda_array_interface__: memory a CUDA
                                    device can access */
} strided_interface_kind;

/* What an interface dict holds, as read by a binding. */
typedef struct strided_interface_desc {
    strided_interface_kind kind;
    int64_t version;        /* 'version' */
    bool has_mask;          /* 'mask' is there and not None */
    void *data;             /* 'data'[0]: the address of element (0,...,0) */
    bool readonly;          /* 'data'[1] */
    int ndim;               /* the number of entries of 'shape' */
    const int64_t *shape;   /* 'shape' (ndim entries; NULL when ndim is 0) */
    int nstrides;           /* the number of entries of 'strides'; -1 when
                               it is missing or None (C order) */
    const int64_t *strides; /* 'strides', in bytes */
    const char *typestr;    /* 'typestr' */
    unsigned typestr_flags; /* strided_typestr_flags the binding learned from
                               'descr': STRIDED_TYPESTR_HOLDS_REFERENCES when
                               its fields hold objects */
    int64_t descr_itemsize; /* the element size 'descr' describes, for a
                               structured type; 0: nothing to check */
    bool has_stream;        /* CUDA only: 'stream' is there and not None */
    int64_t stream;         /* CUDA only: the producer's stream ('stream') */
    const char *type_name;  /* the element type's name where the producer
                               tells it beside the dict (NumPy's dtype.name
                               of an array whose dtype.str is 'typestr'), or
                               NULL: names what the type string cannot,
                               ml_dtypes' types ("<V1" for float4_e2m1fn,
                               padded), as strided_dtype_from_numpy does */
} strided_interface_desc;

/* The version and mask rules, which cuda.core checks before anything else
 * in the dict: version 3 or later, no mask. A binding may call this as soon
 * as it has read the two keys; the import checks them again.
 * Returns STRIDED_OK; STRIDED_ERR_UNSUPPORTED for an earlier version ("only
 * NumPy Array Interface v3 or above is supported", "only CUDA Array
 * Interface v3 or above is supported") and for a mask ("mask is not
 * supported"); STRIDED_ERR_INVALID_ARGUMENT for a kind not in the enum. */
STRIDED_API strided_status strided_interface_check_header(strided_interface_kind kind,
                                                          int64_t version, bool has_mask);

/* Make a view of what an interface dict describes.
 *   desc      the description; borrowed
 *   consumer  CUDA only: the consumer's stream (strided_consumer_stream_parse),
 *             or NULL when the consumer gave none; ignored for the array
 *             interface
 *   release   called exactly once with context: on failure before this
 *             returns (with ptr NULL and size 0, or with the footprint when
 *             the failure came after the memory was wrapped), otherwise with
 *             the footprint when the last reference to the view's buffer
 *             goes; NULL: nothing to release (the memory is borrowed)
 *   out       out-parameter: the view (written on success only); its dtype
 *             is the type string's DLPack type when it has one
 *   out_type  out-parameter, may be NULL: what the type string says
 *             (strided_typestr), for bindings that keep the element type
 *             themselves when it has no DLPack type
 * The rules, in the order they are checked:
 *   1. the header (strided_interface_check_header);
 *   2. CUDA: a consumer stream is required (STRIDED_ERR_UNSUPPORTED:
 *      "stream=None is ambiguous with view()"); when it asks for ordering
 *      (sync) and the dict names a producer stream, that stream must be
 *      positive, 1 and 2 being the legacy and per-thread default streams
 *      (STRIDED_ERR_PROTOCOL: 0 is ambiguous);
 *   3. strides, when given, have one entry per axis
 *      (STRIDED_ERR_INVALID_ARGUMENT);
 *   4. the type string is plain data in the machine's byte order
 *      (strided_typestr_parse with STRIDED_TYPESTR_NATIVE_ONLY and the
 *      descr's flags, or strided_dtype_from_numpy with type_name when
 *      given, which makes ml_dtypes' sub-byte types padded views; any
 *      refusal is STRIDED_ERR_UNSUPPORTED, "unsupported typestr: ..."), and
 *      a descr describes elements of its size (STRIDED_ERR_UNSUPPORTED);
 *   5. the layout: strided_layout_init_byte_strides of shape and strides
 *      (its statuses: "strides must be divisible by itemsize", ...);
 *   6. the memory: the array interface's is host memory no device is said
 *      to reach (no driver call; home_device -1); the CUDA Array
 *      Interface's is classified through the driver and must be memory a
 *      CUDA device can access (STRIDED_ERR_UNSUPPORTED otherwise); its
 *      home_device is the memory's device, or the current device
 *      (strided_current_device) for NULL data (an empty array) and for
 *      memory that names none;
 *   7. CUDA: the consumer stream waits, on the device, for the producer
 *      stream (strided_stream_wait), unless the consumer asked for no
 *      ordering or the dict names no stream.
 * Returns STRIDED_ERR_INVALID_ARGUMENT also for a NULL desc or out, NULL
 * data in a layout with elements, an ndim outside 0..64 or NULL arrays with
 * entries; the errors of strided_view_wrap, strided_current_device and
 * strided_stream_wait. */
STRIDED_API strided_status strided_view_import_interface(
    const strided_interface_desc *desc, const strided_consumer_stream *consumer,
    strided_release_fn release, void *context, strided_view *out, strided_typestr *out_type);

/* Whether an array interface dict can describe a view: its elements must
 * each be whole bytes at a byte address, which packed sub-byte elements
 * that are not whole bytes are not (NumPy stores sub-byte types padded).
 *   view  borrowed
 *   what  the interface's name for the message ("__array_interface__")
 * Returns STRIDED_OK; STRIDED_ERR_INVALID_ARGUMENT for a NULL view or
 * what; STRIDED_ERR_UNSUPPORTED for a packed view ("__array_interface__: a
 * view of packed float4_e2m1fn elements (4 bits each) has no array
 * interface: ..."). */
STRIDED_API strided_status strided_view_check_interface_export(const strided_view *view,
                                                               const char *what);

#ifdef __cplusplus
}
#endif

#endif
