/*
 * memory/ipc.c: buffer descriptors for other processes (CUDA IPC): writing
 * one for a pool allocation or for device memory through legacy IPC,
 * reading and checking one, and importing the memory it describes; the
 * identity of this process and boot they carry.
 *
 * The descriptor's bytes (docs/ipc.md has the table), all integers
 * little-endian:
 *
 *     0   8  magic "STRDIPCB"
 *     8   2  version (1)
 *    10   1  sharing (strided_ipc_sharing)
 *    11   1  memory kind (strided_memory_kind: PINNED or DEVICE)
 *    12   4  device ordinal (int32; -1 for pinned memory)
 *    16  16  boot id of the exporter's machine (zeros: unknown)
 *    32   8  exporter's process id
 *    40   8  exporter's process nonce
 *    48  16  pool identity (zeros without one)
 *    64   1  1 when the pool identity is known, else 0
 *    65   7  zero
 *    72   8  buffer size
 *    80   8  legacy: offset of the buffer in its allocation; pool: 0
 *    88   8  legacy: size of that allocation; pool: 0
 *    96  64  the driver's handle (CUmemPoolPtrExportData or CUipcMemHandle)
 *   160  16  device memory: the device's UUID (cuDeviceGetUuid); else zero
 *   176   1  1 when the device's UUID is there, else 0
 *   177   7  zero
 *   184   8  checksum: FNV-1a 64 of bytes 0..183
 */
#define _GNU_SOURCE /* getrandom */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "cuda/driver.h"
#include "memory/ipc.h"
#include "memory/memory.h"
#include "strided/ipc.h"

enum {
    MAGIC = 0,
    VERSION = 8,
    SHARING = 10,
    KIND = 11,
    DEVICE = 12,
    BOOT_ID = 16,
    PID = 32,
    NONCE = 40,
    POOL_ID = 48,
    HAS_POOL_ID = 64,
    SIZE = 72,
    OFFSET = 80,
    ALLOCATION_SIZE = 88,
    HANDLE = 96,
    DEVICE_UUID = 160,
    HAS_DEVICE_UUID = 176,
    RESERVED = 177,
    CHECKSUM = 184
};

static const char buffer_magic[] = "STRDIPCB";

_Static_assert(CHECKSUM + 8 == STRIDED_IPC_BUFFER_DESCRIPTOR_SIZE,
               "the descriptor's fields fill its bytes");
_Static_assert(sizeof(CUmemPoolPtrExportData) == 64 && sizeof(CUipcMemHandle) == 64,
               "the driver's handles are 64 bytes");

static pthread_once_t identity_once = PTHREAD_ONCE_INIT;
static strided__ipc_process identity;
static pthread_mutex_t pretend_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t pretend_nonce;
static bool pretend_boot;
static unsigned char pretend_boot_id[16];

static int hex_digit(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Linux's boot_id ("8c1f...-..."), 16 bytes; zeros when it cannot be read
 * (then it is never compared). */
static void read_boot_id(unsigned char out[16])
{
    char text[64] = "";
    unsigned char id[16] = {0};
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f == NULL)
        return;
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    size_t digits = 0;
    for (const char *p = text; *p != '\0' && digits < 32; p++) {
        int d = hex_digit(*p);
        if (d < 0)
            continue;
        id[digits / 2] = (unsigned char)(id[digits / 2] | (d << (digits % 2 ? 0 : 4)));
        digits++;
    }
    if (digits == 32)
        memcpy(out, id, sizeof id);
}

static void load_identity(void)
{
    read_boot_id(identity.boot_id);
    /* A nonce of 0 would read as "no nonce": draw again (or count on the
     * pid alone where the system gives no random bytes). */
    uint64_t nonce = 0;
    while (nonce == 0 && getrandom(&nonce, sizeof nonce, 0) == (ssize_t)sizeof nonce)
        ;
    identity.nonce = nonce != 0 ? nonce : 1;
}

void strided__ipc_process_identity(strided__ipc_process *out)
{
    pthread_once(&identity_once, load_identity);
    *out = identity;
    out->pid = (int64_t)getpid();
    pthread_mutex_lock(&pretend_lock);
    if (pretend_nonce != 0)
        out->nonce = pretend_nonce;
    if (pretend_boot)
        memcpy(out->boot_id, pretend_boot_id, sizeof pretend_boot_id);
    pthread_mutex_unlock(&pretend_lock);
}

void strided__ipc_pretend_process(uint64_t nonce, const unsigned char *boot_id)
{
    pthread_mutex_lock(&pretend_lock);
    pretend_nonce = nonce;
    pretend_boot = boot_id != NULL;
    if (boot_id != NULL)
        memcpy(pretend_boot_id, boot_id, sizeof pretend_boot_id);
    pthread_mutex_unlock(&pretend_lock);
}

strided_status strided__ipc_random(const char *op, void *buf, size_t n)
{
    unsigned char *p = buf;
    while (n > 0) {
        ssize_t got = getrandom(p, n, 0);
        if (got <= 0)
            return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                                 "the system gives no random bytes for a pool identity");
        p += got;
        n -= (size_t)got;
    }
    return STRIDED_OK;
}

uint64_t strided__ipc_checksum(const void *bytes, size_t n)
{
    const unsigned char *p = bytes;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

strided_status strided__ipc_check_header(const char *op, const unsigned char *d, const char *magic,
                                         int version, const char *what)
{
    if (memcmp(d, magic, 8) != 0)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "not a strided %s IPC descriptor (its first 8 bytes are not "
                             "\"%.8s\")",
                             what, magic);
    int got = (int)strided__get_le(d + 8, 2);
    if (got != version)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "%s descriptor version %d is not supported; this library reads "
                             "version %d",
                             what, got, version);
    return STRIDED_OK;
}

/* The descriptor's fields that do not come from the driver: the
 * exporter's identity, the sharing, kind, device and size; the checksum
 * is written by finish(). */
static void begin_descriptor(unsigned char *d, strided_ipc_sharing sharing,
                             strided_memory_kind kind, int device, uint64_t size)
{
    strided__ipc_process me;
    strided__ipc_process_identity(&me);
    memset(d, 0, STRIDED_IPC_BUFFER_DESCRIPTOR_SIZE);
    memcpy(d + MAGIC, buffer_magic, 8);
    strided__put_le(d + VERSION, STRIDED_IPC_BUFFER_DESCRIPTOR_VERSION, 2);
    d[SHARING] = (unsigned char)sharing;
    d[KIND] = (unsigned char)kind;
    strided__put_le(d + DEVICE, (uint64_t)(int64_t)device, 4);
    memcpy(d + BOOT_ID, me.boot_id, sizeof me.boot_id);
    strided__put_le(d + PID, (uint64_t)me.pid, 8);
    strided__put_le(d + NONCE, me.nonce, 8);
    strided__put_le(d + SIZE, size, 8);
}

/* The UUID of device (an ordinal), which names the GPU the same way in
 * every process whatever CUDA_VISIBLE_DEVICES numbers it. Assumes: a
 * driver is loaded. */
static strided_status device_uuid(const char *op, const strided__driver *cu, int device,
                                  unsigned char out[16])
{
    CUdevice dev = 0;
    CUuuid uuid;
    strided_status status = STRIDED_CUDA_CHECK(op, cu->cuDeviceGet(&dev, device));
    if (status == STRIDED_OK)
        status = STRIDED_CUDA_CHECK(op, cu->cuDeviceGetUuid(&uuid, dev));
    if (status == STRIDED_OK)
        memcpy(out, uuid.bytes, 16);
    return status;
}

/* Device memory's descriptor names its device by UUID too. */
static strided_status put_device_uuid(const char *op, const strided__driver *cu, int device,
                                      unsigned char *d)
{
    strided_status status = device_uuid(op, cu, device, d + DEVICE_UUID);
    if (status == STRIDED_OK)
        d[HAS_DEVICE_UUID] = 1;
    return status;
}

/* The ordinal in this process of the device a descriptor names by UUID
 * (another process may number the GPUs otherwise: CUDA_VISIBLE_DEVICES),
 * into info->device_id; a descriptor without one keeps its ordinal. */
static strided_status local_device(const char *op, strided_buffer_ipc_info *info)
{
    if (!info->has_device_uuid)
        return STRIDED_OK;
    const strided__driver *cu;
    int count = 0;
    strided_status status = strided__cuda(op, &cu);
    if (status == STRIDED_OK)
        status = STRIDED_CUDA_CHECK(op, cu->cuDeviceGetCount(&count));
    for (int i = 0; status == STRIDED_OK && i < count; i++) {
        unsigned char uuid[16];
        status = device_uuid(op, cu, i, uuid);
        if (status == STRIDED_OK && memcmp(uuid, info->device_uuid, 16) == 0) {
            info->device_id = i;
            return STRIDED_OK;
        }
    }
    if (status != STRIDED_OK)
        return status;
    const unsigned char *u = info->device_uuid;
    return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                         "the descriptor's device (GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-"
                         "%02x%02x-%02x%02x%02x%02x%02x%02x, device %d in the exporter) is not "
                         "one of this process's %d CUDA devices (CUDA_VISIBLE_DEVICES may hide "
                         "it)",
                         u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11],
                         u[12], u[13], u[14], u[15], info->device_id, count);
}

static void finish(unsigned char *d)
{
    strided__put_le(d + CHECKSUM, strided__ipc_checksum(d, CHECKSUM), 8);
}

strided_status strided_buffer_ipc_describe(const void *descriptor, size_t size,
                                           strided_buffer_ipc_info *out)
{
    const char *op = "ipc_describe";
    if (descriptor == NULL || out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "descriptor and out are required");
    const unsigned char *d = descriptor;
    if (size != STRIDED_IPC_BUFFER_DESCRIPTOR_SIZE)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "a buffer IPC descriptor is %d bytes, got %zu",
                             STRIDED_IPC_BUFFER_DESCRIPTOR_SIZE, size);
    strided_status status = strided__ipc_check_header(op, d, buffer_magic,
                                                      STRIDED_IPC_BUFFER_DESCRIPTOR_VERSION,
                                                      "buffer");
    if (status != STRIDED_OK)
        return status;
    if (strided__get_le(d + CHECKSUM, 8) != strided__ipc_checksum(d, CHECKSUM))
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "corrupted: its checksum does not match");
    strided_buffer_ipc_info info;
    memset(&info, 0, sizeof info);
    info.version = STRIDED_IPC_BUFFER_DESCRIPTOR_VERSION;
    info.sharing = (strided_ipc_sharing)d[SHARING];
    info.kind = (strided_memory_kind)d[KIND];
    info.device_id = (int)(int32_t)(uint32_t)strided__get_le(d + DEVICE, 4);
    info.size = strided__get_le(d + SIZE, 8);
    info.offset = strided__get_le(d + OFFSET, 8);
    uint64_t allocation = strided__get_le(d + ALLOCATION_SIZE, 8);
    info.has_pool_id = d[HAS_POOL_ID] == 1;
    memcpy(info.pool_id, d + POOL_ID, sizeof info.pool_id);
    info.has_device_uuid = d[HAS_DEVICE_UUID] == 1;
    memcpy(info.device_uuid, d + DEVICE_UUID, sizeof info.device_uuid);
    info.exporter_pid = (int64_t)strided__get_le(d + PID, 8);
    /* The checksum catches accidents; these catch a writer that is wrong
     * (or hostile), whose fields must still describe memory that can
     * exist. */
    const char *wrong = NULL;
    uint64_t end = 0;
    if (info.sharing != STRIDED_IPC_POOL && info.sharing != STRIDED_IPC_LEGACY)
        wrong = "its sharing is neither a pool's nor legacy";
    else if (info.kind != STRIDED_MEMORY_DEVICE &&
             (info.kind != STRIDED_MEMORY_PINNED || info.sharing != STRIDED_IPC_POOL))
        wrong = "its memory kind cannot be shared that way";
    else if ((info.kind == STRIDED_MEMORY_DEVICE) != (info.device_id >= 0) || info.device_id < -1 ||
             (info.has_device_uuid && info.kind != STRIDED_MEMORY_DEVICE))
        wrong = "its device does not fit its memory kind";
    else if (info.size == 0 || info.size > (uint64_t)INT64_MAX)
        wrong = "its size is 0 or above 2**63 - 1";
    else if (d[HAS_POOL_ID] > 1 || d[HAS_DEVICE_UUID] > 1 ||
             !strided__all_zero(d + HAS_POOL_ID + 1, SIZE - HAS_POOL_ID - 1) ||
             !strided__all_zero(d + RESERVED, CHECKSUM - RESERVED) ||
             (!info.has_pool_id && !strided__all_zero(info.pool_id, 16)) ||
             (!info.has_device_uuid && !strided__all_zero(info.device_uuid, 16)))
        wrong = "its reserved bytes are not zero";
    else if (info.sharing == STRIDED_IPC_POOL && (info.offset != 0 || allocation != 0))
        wrong = "a pool allocation's descriptor has an offset";
    else if (info.sharing == STRIDED_IPC_LEGACY &&
             (info.has_pool_id || __builtin_add_overflow(info.offset, info.size, &end) ||
              end > allocation))
        wrong = "the buffer does not fit in its allocation";
    if (wrong != NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "the descriptor's fields are not valid: %s", wrong);
    *out = info;
    return STRIDED_OK;
}

/* What an imported legacy mapping needs to be closed, and exported again:
 * the descriptor it came from. */
typedef struct legacy_mapping {
    const strided__driver *cu;
    int device;
    CUdeviceptr base;
    unsigned char descriptor[STRIDED_IPC_BUFFER_DESCRIPTOR_SIZE];
} legacy_mapping;

/* The release callback of a legacy import: close the mapping, in its
 * device's context; a failure leaves it open (nobody to report to). */
static void close_legacy(void *context, void *ptr, size_t size)
{
    legacy_mapping *m = context;
    strided__context_scope scope;
    (void)ptr;
    (void)size;
    if (strided__context_enter("free", m->cu, m->device, &scope) == STRIDED_OK) {
        m->cu->cuIpcCloseMemHandle(m->base);
        strided__context_leave(m->cu, &scope);
    }
    strided__free(m);
}

/* A pool allocation's descriptor. Assumes: pool is b's resource's and
 * IPC-enabled. */
static strided_status export_pool_allocation(const char *op, const strided_buffer *b,
                                             const strided__pool_ipc *pool, unsigned char *d)
{
    strided_memory_info info = strided_buffer_memory_info(b);
    CUmemPoolPtrExportData data;
    strided__context_scope scope;
    strided_status status = strided__context_enter(op, pool->cu, pool->device, &scope);
    if (status != STRIDED_OK)
        return status;
    status = STRIDED_CUDA_CHECK(
        op, pool->cu->cuMemPoolExportPointer(&data, (CUdeviceptr)(uintptr_t)strided_buffer_ptr(b)));
    strided__context_leave(pool->cu, &scope);
    if (status != STRIDED_OK)
        return status;
    strided_memory_kind kind = info.kind == STRIDED_MEMORY_DEVICE ? STRIDED_MEMORY_DEVICE
                                                                  : STRIDED_MEMORY_PINNED;
    begin_descriptor(d, STRIDED_IPC_POOL, kind, kind == STRIDED_MEMORY_DEVICE ? pool->device : -1,
                     strided_buffer_size(b));
    if (kind == STRIDED_MEMORY_DEVICE &&
        (status = put_device_uuid(op, pool->cu, pool->device, d)) != STRIDED_OK)
        return status;
    if (pool->has_id) {
        memcpy(d + POOL_ID, pool->id, sizeof pool->id);
        d[HAS_POOL_ID] = 1;
    }
    memcpy(d + HANDLE, data.reserved, sizeof data.reserved);
    finish(d);
    return STRIDED_OK;
}

/* Device memory no pool gave: its allocation's legacy handle and the
 * buffer's offset in it. */
static strided_status export_legacy(const char *op, const strided_buffer *b, unsigned char *d)
{
    strided_memory_info info = strided_buffer_memory_info(b);
    const strided__driver *cu;
    strided_status status = strided__cuda(op, &cu);
    if (status != STRIDED_OK)
        return status;
    CUdeviceptr ptr = (CUdeviceptr)(uintptr_t)strided_buffer_ptr(b), base = 0;
    size_t allocation = 0;
    CUipcMemHandle handle;
    strided__context_scope scope;
    status = strided__context_enter(op, cu, info.device_id, &scope);
    if (status != STRIDED_OK)
        return status;
    status = STRIDED_CUDA_CHECK(op, cu->cuMemGetAddressRange(&base, &allocation, ptr));
    if (status == STRIDED_OK)
        status = STRIDED_CUDA_CHECK(op, cu->cuIpcGetMemHandle(&handle, base));
    strided__context_leave(cu, &scope);
    if (status != STRIDED_OK)
        return status;
    uint64_t offset = ptr - base, size = strided_buffer_size(b), end = 0;
    if (ptr < base || __builtin_add_overflow(offset, size, &end) || end > allocation)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "the buffer's %llu bytes at %p run past the end of its allocation "
                             "(%zu bytes at %p)",
                             (unsigned long long)size, strided_buffer_ptr(b), allocation,
                             (void *)(uintptr_t)base);
    begin_descriptor(d, STRIDED_IPC_LEGACY, STRIDED_MEMORY_DEVICE, info.device_id, size);
    if ((status = put_device_uuid(op, cu, info.device_id, d)) != STRIDED_OK)
        return status;
    strided__put_le(d + OFFSET, offset, 8);
    strided__put_le(d + ALLOCATION_SIZE, allocation, 8);
    memcpy(d + HANDLE, handle.reserved, sizeof handle.reserved);
    finish(d);
    return STRIDED_OK;
}

strided_status strided_buffer_export_ipc(const strided_buffer *b,
                                         unsigned char out[STRIDED_IPC_BUFFER_DESCRIPTOR_SIZE])
{
    const char *op = "export_ipc";
    if (b == NULL || out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "b and out are required");
    /* A legacy mapping is shared again with the handle it came with: the
     * driver gives no handle of memory another process exported. */
    const legacy_mapping *m = strided__buffer_release_context(b, close_legacy);
    if (m != NULL) {
        memcpy(out, m->descriptor, sizeof m->descriptor);
        return STRIDED_OK;
    }
    strided_memory_info info = strided_buffer_memory_info(b);
    strided_memory_resource *mr = strided_buffer_resource(b);
    strided__pool_ipc pool;
    bool from_pool = mr != NULL && strided__resource_pool_ipc(mr, &pool);
    if ((from_pool && !pool.ipc) || (!from_pool && info.pooled))
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op, "Memory resource is not IPC-enabled");
    if (!from_pool && info.kind != STRIDED_MEMORY_DEVICE) {
        static const char *const kinds[] = {"host", "pinned", "device", "managed"};
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                             "only device memory and the memory of IPC-enabled pools can be "
                             "shared with another process, not %s memory",
                             (unsigned)info.kind < 4 ? kinds[info.kind] : "unknown");
    }
    if (strided_buffer_size(b) == 0 || strided_buffer_ptr(b) == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "a buffer of %zu bytes at %p has no memory to share",
                             strided_buffer_size(b), strided_buffer_ptr(b));
    if (from_pool && strided_memory_resource_is_closed(mr))
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "the buffer's memory resource has been closed");
    if (strided__buffer_ipc_cached(b, out))
        return STRIDED_OK;
    unsigned char d[STRIDED_IPC_BUFFER_DESCRIPTOR_SIZE];
    strided_status status = from_pool ? export_pool_allocation(op, b, &pool, d)
                                      : export_legacy(op, b, d);
    if (status == STRIDED_OK) {
        strided__buffer_ipc_cache(b, d);
        memcpy(out, d, sizeof d);
    }
    return status;
}

/* A failed mapping of a descriptor: the driver's error, and what it most
 * likely means. */
static strided_status import_failed(const char *op, const char *call, CUresult result)
{
    char text[512];
    strided__cuda_fail(op, call, result);
    snprintf(text, sizeof text, "%s", strided_last_error_reason());
    strided__fail(STRIDED_ERR_CUDA, op,
                  "%s: the exported allocation no longer exists (the exporter freed it or "
                  "exited) or is not of this pool",
                  text);
    strided__set_last_cuda_error((int)result);
    return STRIDED_ERR_CUDA;
}

/* The checks of a pool allocation's descriptor against mr. */
static strided_status check_pool_import(const char *op, const strided_memory_resource *mr,
                                        const strided_buffer_ipc_info *info,
                                        strided__pool_ipc *pool)
{
    if (mr == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "a pool allocation is imported through its pool's resource, "
                             "imported from the exporter with "
                             "strided_device_pool_resource_import");
    if (strided_memory_resource_is_closed(mr))
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "the memory resource has been closed");
    if (!strided__resource_pool_ipc(mr, pool) || !pool->ipc)
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op, "Memory resource is not IPC-enabled");
    if (!pool->mapped)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "the memory resource is not a mapped resource: it is this "
                             "process's own pool, whose buffers are used as they are");
    if (info->has_pool_id && pool->has_id && memcmp(info->pool_id, pool->id, 16) != 0)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "the descriptor is of another pool: its pool identity differs "
                             "from the memory resource's");
    strided_memory_resource_props props = strided_memory_resource_properties(mr);
    bool pinned = props.host_accessible;
    if (pinned != (info->kind == STRIDED_MEMORY_PINNED))
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "the descriptor is of %s memory, the memory resource's is %s memory",
                             info->kind == STRIDED_MEMORY_PINNED ? "pinned" : "device",
                             pinned ? "pinned" : "device");
    if (!pinned && props.device_id != info->device_id)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "the descriptor is of device %d, the memory resource of device %d",
                             info->device_id, props.device_id);
    return STRIDED_OK;
}

static strided_status import_pool_allocation(const char *op, strided_memory_resource *mr,
                                             const strided__pool_ipc *pool, const unsigned char *d,
                                             const strided_buffer_ipc_info *info, void *stream,
                                             strided_buffer **out)
{
    CUmemPoolPtrExportData data;
    memcpy(data.reserved, d + HANDLE, sizeof data.reserved);
    CUdeviceptr ptr = 0;
    strided__context_scope scope;
    strided_status status = strided__context_enter(op, pool->cu, pool->device, &scope);
    if (status != STRIDED_OK)
        return status;
    CUresult result = pool->cu->cuMemPoolImportPointer(&ptr, pool->pool, &data);
    strided__context_leave(pool->cu, &scope);
    if (result != CUDA_SUCCESS)
        return import_failed(op, "cuMemPoolImportPointer", result);
    status = strided_buffer_wrap_resource((void *)(uintptr_t)ptr, (size_t)info->size, mr, stream,
                                          out);
    if (status != STRIDED_OK &&
        strided__context_enter(op, pool->cu, pool->device, &scope) == STRIDED_OK) {
        /* Unmap what was mapped: the caller gets nothing. */
        pool->cu->cuMemFreeAsync(ptr, (CUstream)stream);
        strided__context_leave(pool->cu, &scope);
    }
    return status;
}

static strided_status import_legacy(const char *op, const unsigned char *d,
                                    const strided_buffer_ipc_info *info, strided_buffer **out)
{
    const strided__driver *cu;
    strided_status status = strided__cuda(op, &cu);
    if (status == STRIDED_OK)
        status = strided__check_device(op, cu, info->device_id, NULL);
    if (status != STRIDED_OK)
        return status;
    legacy_mapping *m = strided__malloc(sizeof *m);
    if (m == NULL)
        return strided__fail(STRIDED_ERR_OUT_OF_MEMORY, op, "cannot allocate a mapping");
    m->cu = cu;
    m->device = info->device_id;
    memcpy(m->descriptor, d, sizeof m->descriptor);
    CUipcMemHandle handle;
    memcpy(handle.reserved, d + HANDLE, sizeof handle.reserved);
    strided__context_scope scope;
    status = strided__context_enter(op, cu, m->device, &scope);
    if (status != STRIDED_OK) {
        strided__free(m);
        return status;
    }
    CUresult result = cu->cuIpcOpenMemHandle(&m->base, handle, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
    strided__context_leave(cu, &scope);
    if (result != CUDA_SUCCESS) {
        strided__free(m);
        return import_failed(op, "cuIpcOpenMemHandle", result);
    }
    uintptr_t address = (uintptr_t)m->base + (uintptr_t)info->offset;
    strided_memory_info mem = {
        STRIDED_MEMORY_DEVICE, m->device, false, true, false, false, address};
    status = strided_buffer_wrap_known((void *)address, (size_t)info->size, &mem, close_legacy, m,
                                       out);
    if (status != STRIDED_OK)
        close_legacy(m, NULL, 0);
    return status;
}

strided_status strided_buffer_import_ipc(strided_memory_resource *mr, const void *descriptor,
                                         size_t size, void *stream, strided_buffer **out)
{
    const char *op = "import_ipc";
    if (descriptor == NULL || out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "descriptor and out are required");
    strided_buffer_ipc_info info;
    strided_status status = strided_buffer_ipc_describe(descriptor, size, &info);
    if (status != STRIDED_OK) {
        /* The reason lives in the storage the new message is written to. */
        char reason[512];
        snprintf(reason, sizeof reason, "%s", strided_last_error_reason());
        return strided__fail(status, op, "%s", reason);
    }
    const unsigned char *d = descriptor;
    strided__ipc_process me;
    strided__ipc_process_identity(&me);
    if (!strided__all_zero(d + BOOT_ID, 16) && !strided__all_zero(me.boot_id, 16) &&
        memcmp(d + BOOT_ID, me.boot_id, 16) != 0)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "the descriptor was written on another machine or before this "
                             "machine last booted");
    if ((int64_t)strided__get_le(d + PID, 8) == me.pid && strided__get_le(d + NONCE, 8) == me.nonce)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "the descriptor was written by this process (pid %lld): a process "
                             "imports memory of other processes only; use the buffer itself",
                             (long long)me.pid);
    if ((status = local_device(op, &info)) != STRIDED_OK)
        return status;
    strided_buffer *b = NULL;
    if (info.sharing == STRIDED_IPC_POOL) {
        strided__pool_ipc pool;
        status = check_pool_import(op, mr, &info, &pool);
        if (status == STRIDED_OK)
            status = import_pool_allocation(op, mr, &pool, d, &info, stream, &b);
    } else {
        status = import_legacy(op, d, &info, &b);
    }
    if (status == STRIDED_OK)
        *out = b;
    return status;
}

bool strided_buffer_is_mapped(const strided_buffer *b)
{
    strided_memory_resource *mr = strided_buffer_resource(b);
    if (mr != NULL)
        return strided_memory_resource_is_mapped(mr);
    return strided__buffer_release_context(b, close_legacy) != NULL;
}
