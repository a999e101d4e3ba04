/*
 * strided/buffer.h: buffers, reference-counted memory of any kind.
 *
 * A buffer is a pointer and a size in bytes, plus how the memory is released
 * and what kind of memory it is. It is made in one of three ways:
 *
 *   allocated  by a memory resource (strided_buffer_alloc), or adopted from
 *              it (strided_buffer_wrap_resource): released through the
 *              resource's deallocate, in stream order for stream-ordered
 *              resources, on the buffer's deallocation stream;
 *   wrapped    around memory someone else owns, with a release callback
 *              (strided_buffer_wrap): the callback runs exactly once, when
 *              the last reference goes, on whichever thread drops it; if
 *              wrapping fails it never runs and the caller still owns the
 *              memory;
 *   borrowed   (strided_buffer_wrap with no callback): nothing is released;
 *              the caller keeps the memory alive for as long as the buffer
 *              is used.
 *
 * Memory kind. Wrapped and borrowed buffers learn what their memory is from
 * one CUDA driver query when they are made (cuPointerGetAttributes):
 *
 *   kind     host  device                               device_id
 *   HOST     yes   only if the device reads pageable    -1
 *                  memory (HMM/ATS)
 *   PINNED   yes   yes (device_address may differ)      device current at
 *                                                       allocation/registration
 *   DEVICE   no    yes                                  owning device
 *   MANAGED  yes   yes                                  device current at
 *                                                       allocation
 *
 * NULL and memory the driver does not know (malloc, stack, NumPy) are HOST.
 * Without a CUDA driver every pointer is HOST and nothing fails. Allocated
 * buffers take these answers from their resource instead.
 *
 * Ownership: the count is atomic; retain and release from any thread. Every
 * holder (a Python Buffer object, each view, each exported DLPack tensor)
 * holds one reference, so memory is released only when nothing uses it.
 */
#ifndef STRIDED_BUFFER_H
#define STRIDED_BUFFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "strided/api.h"
#include "strided/resource.h"
#include "strided/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct strided_buffer strided_buffer;

/* Where memory lives. */
typedef enum strided_memory_kind {
    STRIDED_MEMORY_HOST = 0,   /* pageable (unregistered) host memory, NULL */
    STRIDED_MEMORY_PINNED = 1, /* page-locked host memory: cuMemHostAlloc,
                                   cuMemAllocHost, cuMemHostRegister, pinned
                                   memory pools */
    STRIDED_MEMORY_DEVICE = 2, /* device memory: cuMemAlloc, device pools */
    STRIDED_MEMORY_MANAGED = 3 /* managed memory: cuMemAllocManaged, managed
                                   pools */
} strided_memory_kind;

/* What a pointer's memory is and who can reach it. */
typedef struct strided_memory_info {
    strided_memory_kind kind;
    int device_id; /* the device it belongs to; -1 for none */
    bool host_accessible;
    bool device_accessible;
    bool managed;
    bool pooled; /* allocated from a CUDA memory pool */
    /* The address at which a device reaches the memory: the pointer itself,
     * except for registered host memory mapped at another device address
     * (then device work must use this one); 0 when not device accessible. */
    uintptr_t device_address;
} strided_memory_info;

/* Called exactly once to release wrapped memory. context is the pointer
 * given to strided_buffer_wrap. */
typedef void (*strided_release_fn)(void *context, void *ptr, size_t size);

/* Classify any pointer by one driver query (see the table above). Needs no
 * current context; loads and initializes the driver if there is one.
 *   ptr  any address; NULL is HOST
 *   out  out-parameter (written on success only)
 * Returns STRIDED_ERR_INVALID_ARGUMENT for a NULL out, STRIDED_ERR_CUDA when
 * the driver fails (not for unknown pointers, which are HOST),
 * STRIDED_ERR_UNSUPPORTED for a memory type the driver reports that strided
 * does not know (CUDA arrays). */
STRIDED_API strided_status strided_memory_info_query(const void *ptr, strided_memory_info *out);

/* Allocate size bytes from mr on stream (NULL: legacy default stream). The
 * stream becomes the deallocation stream. The buffer holds a reference to
 * mr.
 *   out  out-parameter: the new buffer with one reference
 * Returns what mr's allocate returns, STRIDED_ERR_INVALID_ARGUMENT for a NULL
 * mr or out and for an allocation that fails the checks of
 * strided/resource.h (given back to mr), STRIDED_ERR_OUT_OF_MEMORY when the
 * buffer itself cannot be allocated (the memory is then given back to mr). */
STRIDED_API strided_status strided_buffer_alloc(strided_memory_resource *mr, size_t size,
                                                void *stream, strided_buffer **out);

/* Wrap memory someone else owns.
 *   ptr, size  the memory; ptr may be NULL (classified as HOST), with any
 *              size, as cuda.core's from_handle(0, n) allows
 *   release    called exactly once with (context, ptr, size) when the last
 *              reference goes; NULL makes a borrowed, non-owning buffer
 *   out        out-parameter: the new buffer with one reference
 * The memory kind is discovered now. On failure release is not called.
 * Returns STRIDED_ERR_INVALID_ARGUMENT for a NULL out, a size above
 * INT64_MAX or a range [ptr, ptr + size) that wraps past the top of the
 * address space; STRIDED_ERR_OUT_OF_MEMORY, and the errors of
 * strided_memory_info_query. */
STRIDED_API strided_status strided_buffer_wrap(void *ptr, size_t size, strided_release_fn release,
                                               void *context, strided_buffer **out);

/* Wrap memory someone else owns whose kind the caller knows (a DLPack
 * producer said so): as strided_buffer_wrap, with *info as the memory's
 * answers and no driver call. The caller vouches for info.
 * Returns STRIDED_ERR_INVALID_ARGUMENT for a NULL info or out and for the
 * sizes and ranges strided_buffer_wrap refuses, STRIDED_ERR_OUT_OF_MEMORY. */
STRIDED_API strided_status strided_buffer_wrap_known(void *ptr, size_t size,
                                                     const strided_memory_info *info,
                                                     strided_release_fn release, void *context,
                                                     strided_buffer **out);

/* Adopt memory that mr allocated: it is released through mr's deallocate
 * (on stream, which may be NULL). The buffer holds a reference to mr and
 * answers the memory kind from mr's properties.
 * Returns STRIDED_ERR_INVALID_ARGUMENT for a NULL mr or out and for the
 * sizes and ranges strided_buffer_wrap refuses, STRIDED_ERR_OUT_OF_MEMORY
 * (then deallocate is not called). */
STRIDED_API strided_status strided_buffer_wrap_resource(void *ptr, size_t size,
                                                        strided_memory_resource *mr, void *stream,
                                                        strided_buffer **out);

/* Add a reference; returns b. NULL is allowed and returned. */
STRIDED_API strided_buffer *strided_buffer_retain(strided_buffer *b);

/* Drop a reference. The last one releases the memory (the resource's
 * deallocate on the deallocation stream, or the release callback) and then
 * the buffer. NULL is allowed. */
STRIDED_API void strided_buffer_release(strided_buffer *b);

/* The address of the memory (the host address for pinned memory). b must
 * not be NULL. */
STRIDED_API void *strided_buffer_ptr(const strided_buffer *b);

/* The size in bytes. b must not be NULL. */
STRIDED_API size_t strided_buffer_size(const strided_buffer *b);

/* The resource that releases the memory (borrowed), or NULL when there is
 * none. b must not be NULL. */
STRIDED_API strided_memory_resource *strided_buffer_resource(const strided_buffer *b);

/* What the memory is (see the table above). b must not be NULL. */
STRIDED_API strided_memory_info strided_buffer_memory_info(const strided_buffer *b);

/* The number of references now held; for tests and diagnostics. b must not
 * be NULL. */
STRIDED_API long strided_buffer_use_count(const strided_buffer *b);

/* Set the stream on which a resource-owned buffer is freed (NULL: the legacy
 * default stream). The caller orders every use of the memory before that
 * stream reaches the free. Returns STRIDED_ERR_INVALID_ARGUMENT for a NULL
 * b and for a buffer that has no resource. */
STRIDED_API strided_status strided_buffer_set_deallocation_stream(strided_buffer *b, void *stream);

/* Filling and copying. Work on memory a device can reach (device, managed
 * and pinned memory, and pageable memory a device reads) is queued on the
 * caller's stream, in the primary context of the memory's device (device 0
 * for memory bound to none), and is not complete on return. Host-only
 * memory is worked on by the host, after the work queued on the stream
 * (unless STRIDED_BUFFER_NO_STREAM), complete on return; without a CUDA
 * driver all memory is host-only and nothing waits. */

/* How strided_buffer_fill and strided_buffer_copy run. */
typedef enum strided_buffer_flags {
    STRIDED_BUFFER_DEFAULT = 0,
    STRIDED_BUFFER_NO_STREAM = 1 /* the caller named no stream: work on
                                    host-only memory waits for nothing; work
                                    that needs a device is refused */
} strided_buffer_flags;

/* Whether b's memory is host-only (no device can reach it), so that the
 * host fills and copies it and STRIDED_BUFFER_NO_STREAM is allowed; false
 * for memory a device can reach, whose work runs on a stream. b must not be
 * NULL. */
STRIDED_API bool strided_buffer_is_host_only(const strided_buffer *b);

/* Fill b with a pattern of pattern_size bytes, repeated: 1, 2 or 4 bytes,
 * whose value is the native-endian unsigned integer of those bytes (on a
 * device: cuMemsetD8Async, cuMemsetD16Async or cuMemsetD32Async of
 * size / pattern_size elements at the memory's device address).
 *   pattern  pattern_size bytes, read before this returns (borrowed)
 *   stream   a CUstream (NULL: the legacy default stream)
 *   flags    strided_buffer_flags, or-ed
 * Checks, in order, each STRIDED_ERR_INVALID_ARGUMENT: a NULL b; unknown
 * flags; NO_STREAM for memory that is not host-only ("the buffer's memory
 * is reachable from a device: the fill runs on a stream and needs one");
 * a pattern_size other than 1, 2 or 4 ("value must be 1, 2, or 4 bytes,
 * got 3"); a NULL pattern; a size that is not a multiple of pattern_size
 * ("buffer size (3) must be divisible by 2"); NULL memory of a non-zero
 * size; on a device, an address not aligned to pattern_size. Then
 * STRIDED_ERR_NO_CUDA_DRIVER, STRIDED_ERR_CUDA. A buffer of size 0 is
 * filled without calling the driver. */
STRIDED_API strided_status strided_buffer_fill(strided_buffer *b, const void *pattern,
                                               size_t pattern_size, void *stream, unsigned flags);

/* Copy the bytes of src into dst, which must have the same size. Between
 * host-only memory the host copies them (memmove: they may overlap). With
 * memory a device can reach on either side, one cuMemcpyAsync at the
 * memories' device addresses is queued on stream, in the context of the
 * destination's device when it is device or managed memory, else the
 * source's; between device memory of two devices it is cuMemcpyPeerAsync,
 * which also moves memory-pool allocations. The same address on both sides
 * copies nothing.
 *   dst, src  borrowed; may be the same buffer
 *   stream    a CUstream (NULL: the legacy default stream)
 *   flags     strided_buffer_flags, or-ed
 * Checks, in order, each STRIDED_ERR_INVALID_ARGUMENT: a NULL dst or src;
 * unknown flags; different sizes ("buffer sizes mismatch between src and
 * dst (sizes are: src=8, dst=4)"); NO_STREAM when either side is not
 * host-only ("the memory of dst or src is reachable from a device: the
 * copy runs on a stream and needs one"); NULL memory of a non-zero size;
 * on a device, ranges that overlap at different addresses. Then
 * STRIDED_ERR_NO_CUDA_DRIVER, STRIDED_ERR_CUDA. Buffers of size 0 copy
 * nothing and call no driver. */
STRIDED_API strided_status strided_buffer_copy(strided_buffer *dst, const strided_buffer *src,
                                               void *stream, unsigned flags);

#ifdef __cplusplus
}
#endif

#endif
