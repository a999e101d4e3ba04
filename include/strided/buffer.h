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

/* Copy options: hints for a copy the driver makes, as cuda.core's
 * CopyOptions has them. They change how the driver stages a copy, never
 * the bytes it writes. */

/* When the driver may read the source. */
typedef enum strided_copy_src_access_order {
    STRIDED_COPY_SRC_ACCESS_STREAM = 1,          /* in stream order: work queued
                                                    before may still use it */
    STRIDED_COPY_SRC_ACCESS_DURING_API_CALL = 2, /* out of stream order, every
                                                    read done when the call
                                                    returns */
    STRIDED_COPY_SRC_ACCESS_ANY = 3              /* out of stream order, until the
                                                    copy completes in stream order */
} strided_copy_src_access_order;

/* Whether the copy should overlap with computation. */
typedef enum strided_copy_overlap_mode {
    STRIDED_COPY_OVERLAP_DEFAULT = 0,
    STRIDED_COPY_PREFER_OVERLAP_WITH_COMPUTE = 1
} strided_copy_overlap_mode;

typedef struct strided_buffer_copy_options {
    strided_copy_src_access_order src_access_order;
    /* Where the source and destination are likely to be, honoured by the
     * driver for managed memory (and pageable memory a device reads); type
     * STRIDED_LOCATION_NONE: no hint. */
    strided_memory_location src_location_hint;
    strided_memory_location dst_location_hint;
    strided_copy_overlap_mode overlap_mode;
} strided_buffer_copy_options;

/* The copy options strided_buffer_copy_ex makes without any: stream order,
 * no hints, default overlap. */
STRIDED_API strided_buffer_copy_options strided_buffer_copy_options_default(void);

/* Whether a copy with options may run on stream, by cuda.core's rules for
 * copies with options (which strided_buffer_copy_ex applies too): a copy
 * the host makes (both sides host-only) may run anywhere; one the driver
 * makes needs a stream of its own or the per-thread default stream,
 * neither capturing a graph.
 *   dst, src, stream  as strided_buffer_copy_ex
 * Returns STRIDED_OK, STRIDED_ERR_INVALID_ARGUMENT for a NULL dst or src,
 * and with cuda.core's sentences after the name of the call
 * (copy_to, copy_from, copy_batch), for the legacy default stream (NULL or
 * CU_STREAM_LEGACY: "does not accept LEGACY_DEFAULT_STREAM with options
 * (matches copy_batch); cuMemcpyWithAttributesAsync rejects it outright,
 * unlike PER_THREAD_DEFAULT_STREAM, which is a real stream to the driver
 * and is accepted. Pass an explicit stream, PER_THREAD_DEFAULT_STREAM, or
 * options=None.") and for a stream capturing a graph ("does not support
 * graph capture with options (matches copy_batch); ..."); then
 * STRIDED_ERR_NO_CUDA_DRIVER and STRIDED_ERR_CUDA from asking the driver
 * whether the stream captures. */
STRIDED_API strided_status strided_buffer_copy_check_stream(const strided_buffer *dst,
                                                            const strided_buffer *src,
                                                            void *stream);

/* strided_buffer_copy with options (NULL: none, as strided_buffer_copy).
 * With options, a copy the driver makes is cuMemcpyWithAttributesAsync
 * with them, where the driver has it (CUDA 13.2); without it, and for a
 * copy between two devices' memory (cuMemcpyPeerAsync), it is the copy
 * strided_buffer_copy makes, which reads the source in stream order: that
 * honours STREAM and ANY, and the hints and overlap mode are left unsaid,
 * but DURING_API_CALL is refused. A copy the host makes honours every
 * option (it is complete on return).
 *   options  borrowed for the call; NULL for none
 * Checks, in order: those of strided_buffer_copy up to memory at NULL;
 * then, each STRIDED_ERR_INVALID_ARGUMENT, a src_access_order or
 * overlap_mode that is not of its enumeration, a location hint of an
 * unknown type or a negative device or NUMA node ("a device location
 * needs a device ordinal (>= 0), got -1"); for a copy the driver makes
 * (of any size), the rules of strided_buffer_copy_check_stream, a hint's
 * device that does not exist, and STRIDED_ERR_UNSUPPORTED for
 * DURING_API_CALL where the copy cannot honour it, in cuda.core's words
 * ("src_access_order=DURING_API_CALL requires a driver that reports CUDA
 * 13.2 or newer (cuMemcpyWithAttributesAsync is unavailable here). A plain
 * cuMemcpyAsync fallback reads the source in stream order only, ...");
 * then the rest of strided_buffer_copy's. */
STRIDED_API strided_status strided_buffer_copy_ex(strided_buffer *dst, const strided_buffer *src,
                                                  void *stream, unsigned flags,
                                                  const strided_buffer_copy_options *options);

/* Managed memory: advice, and moving its pages. Managed memory (kind
 * STRIDED_MEMORY_MANAGED, or any buffer whose memory info says managed)
 * lives where the driver migrates it; advice tells the driver how it is
 * used (cuMemAdvise), a prefetch moves its pages to a location in stream
 * order (cuMemPrefetchAsync), a discard drops their contents, so that
 * nothing is migrated back (cuMemDiscardBatchAsync, CUDA 13.0), and a
 * discard-and-prefetch does both (cuMemDiscardAndPrefetchBatchAsync).
 * Each applies to the buffer's whole range. The driver calls run in the
 * primary context of the memory's device (device 0 for memory bound to
 * none). A buffer of size 0 is checked as any other and then changes
 * nothing: it has no pages (its queries answer false, no location, none).
 *
 * Locations. STRIDED_LOCATION_DEVICE (id a device ordinal that exists),
 * HOST (id ignored), HOST_NUMA (id a NUMA node, >= 0) and
 * HOST_NUMA_CURRENT (id ignored); which ones an operation takes, it says.
 * Drivers older than CUDA 12.2 take only devices and the host (their
 * entry points take a device ordinal): the others are
 * STRIDED_ERR_UNSUPPORTED there.
 *
 * Every function below checks, in order: a NULL buffer or out-parameter
 * (STRIDED_ERR_INVALID_ARGUMENT); memory that is not managed
 * (STRIDED_ERR_INVALID_ARGUMENT, in cuda.core's words: "prefetch requires
 * a managed-memory allocation", with the operation's name); the location
 * (STRIDED_ERR_INVALID_ARGUMENT: "location is required" for NONE where one
 * is, "unknown location type 9", "a device location
 * needs a device ordinal (>= 0), got -1", "a host_numa location needs a
 * NUMA node (>= 0), got -1"); STRIDED_ERR_NO_CUDA_DRIVER; a device that
 * does not exist (STRIDED_ERR_INVALID_ARGUMENT: "device 5 does not exist;
 * there are 2 CUDA devices"); STRIDED_ERR_UNSUPPORTED where the driver
 * lacks what the call needs, naming it; STRIDED_ERR_CUDA for a failing
 * driver call. Nothing is changed on failure, except where said. */

/* Advice on how managed memory is used (the driver's CUmem_advise). */
typedef enum strided_memory_advice {
    STRIDED_ADVISE_SET_READ_MOSTLY = 1, /* mostly read: devices keep copies */
    STRIDED_ADVISE_UNSET_READ_MOSTLY = 2,
    STRIDED_ADVISE_SET_PREFERRED_LOCATION = 3, /* where the pages prefer to live */
    STRIDED_ADVISE_UNSET_PREFERRED_LOCATION = 4,
    STRIDED_ADVISE_SET_ACCESSED_BY = 5, /* the location keeps a mapping to
                                           the pages wherever they are */
    STRIDED_ADVISE_UNSET_ACCESSED_BY = 6
} strided_memory_advice;

/* Give the driver advice on b's memory (cuMemAdvise). location is used by
 * SET_PREFERRED_LOCATION (any location: device, host, host_numa,
 * host_numa_current) and by SET_ACCESSED_BY and UNSET_ACCESSED_BY (a
 * device or the host), and ignored by the others.
 * Returns the errors above (operation "advise"; "advise
 * CU_MEM_ADVISE_SET_ACCESSED_BY does not support location_type='host_numa'"
 * for a location the advice does not take), and STRIDED_ERR_INVALID_ARGUMENT
 * for advice that is not a strided_memory_advice, checked first. */
STRIDED_API strided_status strided_buffer_advise(strided_buffer *b, strided_memory_advice advice,
                                                 strided_memory_location location);

/* Whether b's memory is advised read-mostly, every page of it
 * (cuMemRangeGetAttribute).
 *   out  out-parameter
 * Returns the errors above (operation "read_mostly"). */
STRIDED_API strided_status strided_buffer_read_mostly(const strided_buffer *b, bool *out);

/* Where b's memory is advised to prefer to live: a device, the host or a
 * host NUMA node (drivers older than CUDA 12.2 tell only devices and the
 * host), or NONE when there is no preference or the pages do not agree.
 *   out  out-parameter
 * Returns the errors above (operation "preferred_location"). */
STRIDED_API strided_status strided_buffer_preferred_location(const strided_buffer *b,
                                                             strided_memory_location *out);

/* The locations advised to keep a mapping to b's memory (SET_ACCESSED_BY):
 * devices in ascending order, then the host.
 *   out        out-parameter: room for capacity locations (may be NULL when
 *              capacity is 0)
 *   out_count  out-parameter: how many were written
 * One more than the device count (strided_driver_info_init) is always room
 * enough. Returns the errors above (operation "accessed_by"), a NULL out
 * with a capacity among them, STRIDED_ERR_OUT_OF_MEMORY, and
 * STRIDED_ERR_INVALID_ARGUMENT when more locations are advised than
 * capacity holds ("accessed_by: 3 locations are advised, room for 2"). */
STRIDED_API strided_status strided_buffer_accessed_by(const strided_buffer *b,
                                                      strided_memory_location *out, size_t capacity,
                                                      size_t *out_count);

/* Make exactly the locations of locations (devices and the host) the ones
 * advised to keep a mapping to b's memory: SET_ACCESSED_BY for each one
 * not advised yet, UNSET_ACCESSED_BY for each advised one not listed
 * (duplicates allowed). Every location is checked before the first advice
 * is given ("advise CU_MEM_ADVISE_SET_ACCESSED_BY does not support
 * location_type='host_numa'"); a driver failure part way leaves the advice
 * given so far.
 *   locations  count locations, borrowed (may be NULL when count is 0)
 * Returns the errors above (operation "accessed_by") and
 * STRIDED_ERR_OUT_OF_MEMORY. */
STRIDED_API strided_status strided_buffer_set_accessed_by(strided_buffer *b,
                                                          const strided_memory_location *locations,
                                                          size_t count);

/* Prefetch b's memory to location (any location) on stream
 * (cuMemPrefetchAsync; NULL: the legacy default stream); not complete on
 * return.
 * Returns the errors above (operation "prefetch"). */
STRIDED_API strided_status strided_buffer_prefetch(strided_buffer *b,
                                                   strided_memory_location location, void *stream);

/* Discard the contents of b's memory on stream (cuMemDiscardBatchAsync of
 * the one range): its pages are released without being migrated, and
 * their contents are undefined until written. Needs a CUDA 13.0 driver
 * (STRIDED_ERR_UNSUPPORTED otherwise).
 * Returns the errors above (operation "discard"). */
STRIDED_API strided_status strided_buffer_discard(strided_buffer *b, void *stream);

/* Discard the contents of b's memory and prefetch its pages to location
 * (any location) on stream (cuMemDiscardAndPrefetchBatchAsync): the pages
 * are made resident there without their old contents being migrated.
 * Needs a CUDA 13.0 driver.
 * Returns the errors above (operation "discard_prefetch"). */
STRIDED_API strided_status strided_buffer_discard_prefetch(strided_buffer *b,
                                                           strided_memory_location location,
                                                           void *stream);

#ifdef __cplusplus
}
#endif

#endif
