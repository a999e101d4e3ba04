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

/* The device whose primary context runs work on memory of info: its own,
 * else device 0. */
static int device_of(const strided_memory_info *info)
{
    return info->device_id >= 0 ? info->device_id : 0;
}

/* The address at which a device reaches b's memory. */
static uintptr_t device_address(const strided_buffer *b)
{
    strided_memory_info info = strided_buffer_memory_info(b);
    return info.device_accessible ? info.device_address : (uintptr_t)strided_buffer_ptr(b);
}

/* The driver in *cu, with device's primary context made current in
 * *scope (strided__context_leave ends it). */
static strided_status enter_device(const char *op, int device, const strided__driver **cu,
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
    if ((flags & STRIDED_BUFFER_NO_STREAM) || strided__cuda_quiet() == NULL)
        return STRIDED_OK;
    const strided__driver *cu;
    strided__context_scope scope;
    strided_status status = enter_device(op, device, &cu, &scope);
    if (status == STRIDED_OK) {
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
    strided_status status = enter_device(op, device_of(&info), &cu, &scope);
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
    status = wait_before_host_work(op, stream, device_of(&info), flags);
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

/* Queue the copy of size bytes from src to dst on stream. */
static strided_status copy_on_device(const char *op, strided_buffer *dst, const strided_buffer *src,
                                     void *stream)
{
    strided_memory_info di = strided_buffer_memory_info(dst);
    strided_memory_info si = strided_buffer_memory_info(src);
    bool dst_on_device = di.kind == STRIDED_MEMORY_DEVICE || di.kind == STRIDED_MEMORY_MANAGED;
    bool src_on_device = si.kind == STRIDED_MEMORY_DEVICE || si.kind == STRIDED_MEMORY_MANAGED;
    int device = !dst_on_device && src_on_device ? device_of(&si) : device_of(&di);
    bool across = di.kind == STRIDED_MEMORY_DEVICE && si.kind == STRIDED_MEMORY_DEVICE &&
                  device_of(&di) != device_of(&si);
    const strided__driver *cu;
    strided__context_scope scope;
    strided_status status;
    /* The source's primary context first, for a copy between devices: its
     * scope ends before the destination's begins. */
    CUcontext from_ctx = NULL, to_ctx = NULL;
    if (across) {
        if ((status = enter_device(op, device_of(&si), &cu, &scope)) != STRIDED_OK)
            return status;
        status = STRIDED_CUDA_CHECK(op, cu->cuCtxGetCurrent(&from_ctx));
        strided__context_leave(cu, &scope);
        if (status != STRIDED_OK)
            return status;
    }
    if ((status = enter_device(op, device, &cu, &scope)) != STRIDED_OK)
        return status;
    CUdeviceptr to = (CUdeviceptr)device_address(dst);
    CUdeviceptr from = (CUdeviceptr)device_address(src);
    size_t size = strided_buffer_size(src);
    if (across) {
        status = STRIDED_CUDA_CHECK(op, cu->cuCtxGetCurrent(&to_ctx));
        if (status == STRIDED_OK)
            status = STRIDED_CUDA_CHECK(op, cu->cuMemcpyPeerAsync(to, to_ctx, from, from_ctx, size,
                                                                  (CUstream)stream));
    } else {
        status = STRIDED_CUDA_CHECK(op, cu->cuMemcpyAsync(to, from, size, (CUstream)stream));
    }
    strided__context_leave(cu, &scope);
    return status;
}

strided_status strided_buffer_copy(strided_buffer *dst, const strided_buffer *src, void *stream,
                                   unsigned flags)
{
    const char *op = "copy";
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
    bool host_only = strided_buffer_is_host_only(dst) && strided_buffer_is_host_only(src);
    if (!host_only && (flags & STRIDED_BUFFER_NO_STREAM))
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "the memory of dst or src is reachable from a device: the copy "
                             "runs on a stream and needs one");
    if ((status = check_memory(op, "dst", dst)) != STRIDED_OK ||
        (status = check_memory(op, "src", src)) != STRIDED_OK)
        return status;
    uintptr_t d = (uintptr_t)strided_buffer_ptr(dst), s = (uintptr_t)strided_buffer_ptr(src);
    if (size == 0 || d == s)
        return STRIDED_OK;
    if (!host_only) {
        if (d < s + size && s < d + size)
            return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                                 "dst and src overlap (%zu bytes at %#jx and %#jx): a copy "
                                 "on a device needs disjoint memory",
                                 size, (uintmax_t)d, (uintmax_t)s);
        return copy_on_device(op, dst, src, stream);
    }
    strided_memory_info di = strided_buffer_memory_info(dst);
    status = wait_before_host_work(op, stream, device_of(&di), flags);
    if (status == STRIDED_OK)
        memmove(strided_buffer_ptr(dst), strided_buffer_ptr(src), size);
    return status;
}
