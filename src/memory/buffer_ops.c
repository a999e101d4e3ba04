/*
 * memory/buffer_ops.c: filling a buffer with a byte pattern and copying
 * the bytes of one buffer into another, on the host for host-only memory
 * and on a stream for memory a device can reach.
 */
#include <stdint.h>
#include <string.h>

#include "cuda/driver.h"
#include "memory/memory.h"
#include "strided/buffer.h"

bool strided_buffer_is_host_only(const strided_buffer *b)
{
    return !strided_buffer_memory_info(b).device_accessible;
}

int strided__memory_device(const strided_memory_info *info)
{
    return info->device_id >= 0 ? info->device_id : 0;
}

/* The address at which a device reaches b's memory. */
static uintptr_t device_address(const strided_buffer *b)
{
    strided_memory_info info = strided_buffer_memory_info(b);
    return info.device_accessible ? info.device_address : (uintptr_t)strided_buffer_ptr(b);
}

strided_status strided__enter_device(const char *op, int device, const strided__driver **cu,
                                     strided__context_scope *scope)
{
    strided_status status = strided__cuda(op, cu);
    return status != STRIDED_OK ? status : strided__context_enter(op, *cu, device, scope);
}

/* Host work that follows the work queued on stream: wait for the stream in
 * device's context, unless the caller named none or there is no driver (a
 * process without one has queued nothing). */
static strided_status wait_before_host_work(const char *op, void *stream, int device,
                                            unsigned flags)
{
    const strided__driver *cu = strided__cuda_quiet();
    if ((flags & STRIDED_BUFFER_NO_STREAM) || cu == NULL)
        return STRIDED_OK;
    strided_status status = strided__refuse_in_capture(op, cu, stream, device,
                                                       "work on host-only memory",
                                                       "do it outside the capture");
    strided__context_scope scope;
    if (status == STRIDED_OK &&
        (status = strided__context_enter(op, cu, device, &scope)) == STRIDED_OK) {
        status = STRIDED_CUDA_CHECK(op, cu->cuStreamSynchronize((CUstream)stream));
        strided__context_leave(cu, &scope);
    }
    return status;
}

static strided_status check_flags(const char *op, unsigned flags)
{
    if ((flags & ~(unsigned)STRIDED_BUFFER_NO_STREAM) != 0)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "unknown flags 0x%x (the flags are strided_buffer_flags)", flags);
    return STRIDED_OK;
}

/* NULL memory has no bytes to work on: only a buffer of size 0 may be at
 * NULL. */
static strided_status check_memory(const char *op, const char *what, const strided_buffer *b)
{
    if (strided_buffer_ptr(b) == NULL && strided_buffer_size(b) > 0)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "%s has no memory: its %zu bytes are at NULL", what,
                             strided_buffer_size(b));
    return STRIDED_OK;
}

/* The pattern as the native-endian unsigned integer of its size bytes (1,
 * 2 or 4). */
static uint32_t pattern_value(const void *pattern, size_t size)
{
    uint8_t v8;
    uint16_t v16;
    uint32_t v32;
    if (size == 1) {
        memcpy(&v8, pattern, 1);
        return v8;
    }
    if (size == 2) {
        memcpy(&v16, pattern, 2);
        return v16;
    }
    memcpy(&v32, pattern, 4);
    return v32;
}

/* Queue the memset of the pattern value (of size bytes) over count
 * elements at address on stream. */
static strided_status memset_on_device(const char *op, const strided_buffer *b, uint32_t value,
                                       size_t size, void *stream)
{
    uintptr_t address = device_address(b);
    if (address % size != 0)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "a %zu-byte pattern needs memory aligned to %zu bytes on a "
                             "device, got %#jx",
                             size, size, (uintmax_t)address);
    const strided__driver *cu;
    strided_memory_info info = strided_buffer_memory_info(b);
    strided__context_scope scope;
    strided_status status = strided__enter_device(op, strided__memory_device(&info), &cu, &scope);
    if (status != STRIDED_OK)
        return status;
    CUdeviceptr dptr = (CUdeviceptr)address;
    size_t count = strided_buffer_size(b) / size;
    CUstream s = (CUstream)stream;
    if (size == 1)
        status = STRIDED_CUDA_CHECK(op, cu->cuMemsetD8Async(dptr, (unsigned char)value, count, s));
    else if (size == 2)
        status = STRIDED_CUDA_CHECK(op,
                                    cu->cuMemsetD16Async(dptr, (unsigned short)value, count, s));
    else
        status = STRIDED_CUDA_CHECK(op, cu->cuMemsetD32Async(dptr, value, count, s));
    strided__context_leave(cu, &scope);
    return status;
}

strided_status strided_buffer_fill(strided_buffer *b, const void *pattern, size_t pattern_size,
                                   void *stream, unsigned flags)
{
    const char *op = "fill";
    if (b == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "the buffer is required");
    strided_status status = check_flags(op, flags);
    if (status != STRIDED_OK)
        return status;
    bool host_only = strided_buffer_is_host_only(b);
    if (!host_only && (flags & STRIDED_BUFFER_NO_STREAM))
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "the buffer's memory is reachable from a device: the fill runs "
                             "on a stream and needs one");
    if (pattern_size != 1 && pattern_size != 2 && pattern_size != 4)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "value must be 1, 2, or 4 bytes, got %zu", pattern_size);
    if (pattern == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "the pattern is required");
    size_t size = strided_buffer_size(b);
    if (size % pattern_size != 0)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "buffer size (%zu) must be divisible by %zu", size, pattern_size);
    if ((status = check_memory(op, "the buffer", b)) != STRIDED_OK)
        return status;
    if (size == 0)
        return STRIDED_OK;
    if (!host_only)
        return memset_on_device(op, b, pattern_value(pattern, pattern_size), pattern_size, stream);

    strided_memory_info info = strided_buffer_memory_info(b);
    status = wait_before_host_work(op, stream, strided__memory_device(&info), flags);
    if (status != STRIDED_OK)
        return status;
    unsigned char *p = strided_buffer_ptr(b);
    /* One pattern, then the filled prefix doubled until it covers the
     * buffer. */
    memcpy(p, pattern, pattern_size);
    for (size_t done = pattern_size; done < size;) {
        size_t n = done < size - done ? done : size - done;
        memcpy(p + done, p, n);
        done += n;
    }
    return STRIDED_OK;
}

/* Where a copy the driver makes runs: the device whose context it runs in,
 * and whether it is between the memory of two devices (cuMemcpyPeerAsync,
 * the source's device given). */
typedef struct copy_route {
    int device;
    bool across;
    int src_device;
} copy_route;

static copy_route route(const strided_buffer *dst, const strided_buffer *src)
{
    strided_memory_info di = strided_buffer_memory_info(dst);
    strided_memory_info si = strided_buffer_memory_info(src);
    bool dst_on_device = di.kind == STRIDED_MEMORY_DEVICE || di.kind == STRIDED_MEMORY_MANAGED;
    bool src_on_device = si.kind == STRIDED_MEMORY_DEVICE || si.kind == STRIDED_MEMORY_MANAGED;
    copy_route r;
    r.device = !dst_on_device && src_on_device ? strided__memory_device(&si)
                                               : strided__memory_device(&di);
    r.src_device = strided__memory_device(&si);
    r.across = di.kind == STRIDED_MEMORY_DEVICE && si.kind == STRIDED_MEMORY_DEVICE &&
               strided__memory_device(&di) != r.src_device;
    return r;
}

/* The driver's description of a copy with options. */
static CUmemcpyAttributes copy_attributes(const strided_buffer_copy_options *options)
{
    CUmemcpyAttributes a;
    memset(&a, 0, sizeof a);
    a.srcAccessOrder = (CUmemcpySrcAccessOrder)options->src_access_order;
    a.srcLocHint = strided__cu_location(options->src_location_hint);
    a.dstLocHint = strided__cu_location(options->dst_location_hint);
    a.flags = options->overlap_mode == STRIDED_COPY_PREFER_OVERLAP_WITH_COMPUTE
                  ? CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE
                  : CU_MEMCPY_FLAG_DEFAULT;
    return a;
}

/* Queue the copy of size bytes from src to dst on stream: with options
 * (may be NULL) through cuMemcpyWithAttributesAsync where the driver has
 * it, except between two devices. */
static strided_status copy_on_device(const char *op, strided_buffer *dst, const strided_buffer *src,
                                     void *stream, const strided_buffer_copy_options *options)
{
    copy_route r = route(dst, src);
    const strided__driver *cu;
    strided__context_scope scope;
    strided_status status;
    /* The source's primary context first, for a copy between devices: its
     * scope ends before the destination's begins. */
    CUcontext from_ctx = NULL, to_ctx = NULL;
    if (r.across) {
        if ((status = strided__enter_device(op, r.src_device, &cu, &scope)) != STRIDED_OK)
            return status;
        status = STRIDED_CUDA_CHECK(op, cu->cuCtxGetCurrent(&from_ctx));
        strided__context_leave(cu, &scope);
        if (status != STRIDED_OK)
            return status;
    }
    if ((status = strided__enter_device(op, r.device, &cu, &scope)) != STRIDED_OK)
        return status;
    CUdeviceptr to = (CUdeviceptr)device_address(dst);
    CUdeviceptr from = (CUdeviceptr)device_address(src);
    size_t size = strided_buffer_size(src);
    if (r.across) {
        status = STRIDED_CUDA_CHECK(op, cu->cuCtxGetCurrent(&to_ctx));
        if (status == STRIDED_OK)
            status = STRIDED_CUDA_CHECK(op, cu->cuMemcpyPeerAsync(to, to_ctx, from, from_ctx, size,
                                                                  (CUstream)stream));
    } else if (options != NULL && cu->cuMemcpyWithAttributesAsync != NULL) {
        CUmemcpyAttributes a = copy_attributes(options);
        status = STRIDED_CUDA_CHECK(op, cu->cuMemcpyWithAttributesAsync(to, from, size, &a,
                                                                        (CUstream)stream));
    } else {
        status = STRIDED_CUDA_CHECK(op, cu->cuMemcpyAsync(to, from, size, (CUstream)stream));
    }
    strided__context_leave(cu, &scope);
    return status;
}

/* The checks every copy makes before the options: the arguments, the
 * sizes, the stream where one is needed, memory at NULL. *host_only says
 * whether the host makes the copy. */
static strided_status check_copy(const char *op, const strided_buffer *dst,
                                 const strided_buffer *src, unsigned flags, bool *host_only)
{
    if (dst == NULL || src == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "dst and src are required");
    strided_status status = check_flags(op, flags);
    if (status != STRIDED_OK)
        return status;
    size_t size = strided_buffer_size(dst);
    if (strided_buffer_size(src) != size)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "buffer sizes mismatch between src and dst (sizes are: src=%zu, "
                             "dst=%zu)",
                             strided_buffer_size(src), size);
    *host_only = strided_buffer_is_host_only(dst) && strided_buffer_is_host_only(src);
    if (!*host_only && (flags & STRIDED_BUFFER_NO_STREAM))
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "the memory of dst or src is reachable from a device: the copy "
                             "runs on a stream and needs one");
    if ((status = check_memory(op, "dst", dst)) != STRIDED_OK ||
        (status = check_memory(op, "src", src)) != STRIDED_OK)
        return status;
    return STRIDED_OK;
}

strided_buffer_copy_options strided_buffer_copy_options_default(void)
{
    strided_buffer_copy_options o;
    o.src_access_order = STRIDED_COPY_SRC_ACCESS_STREAM;
    o.src_location_hint = (strided_memory_location){STRIDED_LOCATION_NONE, -1};
    o.dst_location_hint = (strided_memory_location){STRIDED_LOCATION_NONE, -1};
    o.overlap_mode = STRIDED_COPY_OVERLAP_DEFAULT;
    return o;
}

/* The values of options, each of its kind. */
static strided_status check_options(const char *op, const strided_buffer_copy_options *options)
{
    if (options->src_access_order < STRIDED_COPY_SRC_ACCESS_STREAM ||
        options->src_access_order > STRIDED_COPY_SRC_ACCESS_ANY)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "unknown src_access_order %d (a strided_copy_src_access_order)",
                             (int)options->src_access_order);
    if (options->overlap_mode != STRIDED_COPY_OVERLAP_DEFAULT &&
        options->overlap_mode != STRIDED_COPY_PREFER_OVERLAP_WITH_COMPUTE)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "unknown overlap_mode %d (a strided_copy_overlap_mode)",
                             (int)options->overlap_mode);
    unsigned hints = STRIDED__ANY_LOCATION | (1u << STRIDED_LOCATION_NONE);
    strided_status status = strided__check_location(op, "a location hint",
                                                    options->src_location_hint, hints);
    if (status == STRIDED_OK)
        status = strided__check_location(op, "a location hint", options->dst_location_hint, hints);
    return status;
}

/* The stream rules of a copy with options the driver makes
 * (strided_buffer_copy_check_stream), asked in the context the copy runs
 * in. */
static strided_status check_options_stream(const char *op, const strided_buffer *dst,
                                           const strided_buffer *src, void *stream)
{
    if (stream == NULL || stream == (void *)CU_STREAM_LEGACY)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "does not accept LEGACY_DEFAULT_STREAM with options (matches "
                             "copy_batch); cuMemcpyWithAttributesAsync rejects it outright, "
                             "unlike PER_THREAD_DEFAULT_STREAM, which is a real stream to the "
                             "driver and is accepted. Pass an explicit stream, "
                             "PER_THREAD_DEFAULT_STREAM, or options=None.");
    const strided__driver *cu;
    strided__context_scope scope;
    strided_status status = strided__enter_device(op, route(dst, src).device, &cu, &scope);
    if (status != STRIDED_OK)
        return status;
    CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
    status = STRIDED_CUDA_CHECK(op, cu->cuStreamIsCapturing((CUstream)stream, &capture));
    strided__context_leave(cu, &scope);
    if (status == STRIDED_OK && capture == CU_STREAM_CAPTURE_STATUS_ACTIVE)
        status = strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                               "does not support graph capture with options (matches "
                               "copy_batch); the driver has no graph-node form of "
                               "cuMemcpyWithAttributesAsync, so options cannot be honored in a "
                               "graph. Use GraphNode.memcpy for a plain (non-attributed) copy "
                               "node, or pass options=None.");
    return status;
}

strided_status strided_buffer_copy_check_stream(const strided_buffer *dst,
                                                const strided_buffer *src, void *stream)
{
    const char *op = "copy";
    if (dst == NULL || src == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "dst and src are required");
    if (strided_buffer_is_host_only(dst) && strided_buffer_is_host_only(src))
        return STRIDED_OK;
    return check_options_stream(op, dst, src, stream);
}

/* Whether a copy the driver makes honours options: DURING_API_CALL needs
 * cuMemcpyWithAttributesAsync, which strided does not use between two
 * devices; reading in stream order honours the rest. */
static strided_status check_access_order(const char *op, const strided_buffer *dst,
                                         const strided_buffer *src,
                                         const strided_buffer_copy_options *options)
{
    if (options->src_access_order != STRIDED_COPY_SRC_ACCESS_DURING_API_CALL)
        return STRIDED_OK;
    const strided__driver *cu;
    strided_status status = strided__cuda(op, &cu);
    if (status != STRIDED_OK)
        return status;
    const char *requirement = NULL;
    if (cu->cuMemcpyWithAttributesAsync == NULL)
        requirement = "a driver that reports CUDA 13.2 or newer (cuMemcpyWithAttributesAsync is "
                      "unavailable here)";
    else if (route(dst, src).across)
        requirement = "a copy cuMemcpyWithAttributesAsync makes (between the memory of two "
                      "devices strided copies with cuMemcpyPeerAsync, which takes no options)";
    if (requirement == NULL)
        return STRIDED_OK;
    return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                         "src_access_order=DURING_API_CALL requires %s. A plain cuMemcpyAsync "
                         "fallback reads the source in stream order only, which would silently "
                         "violate the guarantee that all source reads complete before the call "
                         "returns, letting the caller reuse the source buffer before the real "
                         "(stream-ordered) read happens. Use src_access_order=STREAM or ANY, or "
                         "omit options, if that works for your use case.",
                         requirement);
}

/* The devices of the location hints exist. */
static strided_status check_hint_devices(const char *op, const strided_buffer_copy_options *options)
{
    const strided_memory_location hints[] = {options->src_location_hint,
                                             options->dst_location_hint};
    for (size_t i = 0; i < 2; i++) {
        if (hints[i].type != STRIDED_LOCATION_DEVICE)
            continue;
        const strided__driver *cu;
        strided_status status = strided__cuda(op, &cu);
        if (status == STRIDED_OK)
            status = strided__check_device(op, cu, hints[i].id, NULL);
        if (status != STRIDED_OK)
            return status;
    }
    return STRIDED_OK;
}

strided_status strided_buffer_copy_ex(strided_buffer *dst, const strided_buffer *src, void *stream,
                                      unsigned flags, const strided_buffer_copy_options *options)
{
    const char *op = "copy";
    bool host_only = false;
    strided_status status = check_copy(op, dst, src, flags, &host_only);
    if (status == STRIDED_OK && options != NULL)
        status = check_options(op, options);
    if (status == STRIDED_OK && options != NULL && !host_only)
        status = check_options_stream(op, dst, src, stream);
    if (status == STRIDED_OK && options != NULL && !host_only)
        status = check_hint_devices(op, options);
    if (status == STRIDED_OK && options != NULL && !host_only)
        status = check_access_order(op, dst, src, options);
    if (status != STRIDED_OK)
        return status;
    size_t size = strided_buffer_size(dst);
    uintptr_t d = (uintptr_t)strided_buffer_ptr(dst), s = (uintptr_t)strided_buffer_ptr(src);
    if (size == 0 || d == s)
        return STRIDED_OK;
    if (!host_only) {
        if (d < s + size && s < d + size)
            return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                                 "dst and src overlap (%zu bytes at %#jx and %#jx): a copy "
                                 "on a device needs disjoint memory",
                                 size, (uintmax_t)d, (uintmax_t)s);
        return copy_on_device(op, dst, src, stream, options);
    }
    strided_memory_info di = strided_buffer_memory_info(dst);
    status = wait_before_host_work(op, stream, strided__memory_device(&di), flags);
    if (status == STRIDED_OK)
        memmove(strided_buffer_ptr(dst), strided_buffer_ptr(src), size);
    return status;
}

strided_status strided_buffer_copy(strided_buffer *dst, const strided_buffer *src, void *stream,
                                   unsigned flags)
{
    return strided_buffer_copy_ex(dst, src, stream, flags, NULL);
}
