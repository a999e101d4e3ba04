/*
 * strided/ipc.h: sharing memory with other processes of the same machine
 * (CUDA IPC), as cuda.core shares it.
 *
 * Two ways to share, both Linux only:
 *
 *   pool      an IPC-enabled memory pool (strided_device_pool_options or
 *             strided_pinned_pool_options with ipc_enabled: a pool created
 *             with the POSIX file-descriptor handle type) is exported once
 *             as a file descriptor (strided_memory_resource_export_pool),
 *             sent to the other process (over a Unix socket: SCM_RIGHTS, as
 *             Python's multiprocessing does) and imported there as a
 *             resource of its own (strided_device_pool_resource_import),
 *             which is "mapped". Each allocation of the pool is then shared
 *             by a descriptor of a few bytes (strided_buffer_export_ipc)
 *             that the other process imports through that resource
 *             (strided_buffer_import_ipc).
 *   legacy    device memory that no pool gave (cuMemAlloc, as PyTorch's and
 *             CuPy's allocators make it, wrapped with strided_buffer_wrap) is
 *             shared through cuIpcGetMemHandle of its whole allocation plus
 *             the buffer's offset in it (cuMemGetAddressRange): the same
 *             strided_buffer_export_ipc and strided_buffer_import_ipc, with
 *             no resource on either side.
 *
 * A buffer descriptor is STRIDED_IPC_BUFFER_DESCRIPTOR_SIZE bytes of a
 * versioned format (docs/ipc.md gives it field by field): the driver's
 * opaque handle of the allocation, the buffer's size and offset, its memory
 * kind and device, the identity of the pool it came from (16 random bytes
 * made when the pool was created), of the process that exported it and of
 * the machine's boot (Linux's boot_id), and a checksum. Importing checks all
 * of it before the driver is asked, so that a truncated, corrupted, foreign
 * or misdirected descriptor is a clear error, never a mapping of the wrong
 * memory. A stale descriptor (the exporter freed the allocation or exited)
 * is refused by the driver, whose handle names the allocation, not its
 * address; strided says so in the message.
 *
 * Lifetimes. CUDA requires the exporter to keep its allocation (and pool)
 * alive while any importer uses it: strided cannot enforce that across
 * processes, and a program must order it (for example, the consumer says
 * when it is done). In the importing process, a mapping lives until the last
 * reference to its buffer goes (views and DLPack exports hold references):
 * then a pool allocation is freed in stream order (cuMemFreeAsync on the
 * buffer's deallocation stream, which unmaps it) and a legacy mapping is
 * closed (cuIpcCloseMemHandle). A mapped resource lives until its last
 * buffer goes, as every resource.
 *
 * Ownership: strided_memory_resource_export_pool gives the caller a new file
 * descriptor, which the caller closes. The import functions borrow the file
 * descriptor (the caller still closes it) and the descriptor bytes (read
 * during the call only).
 */
#ifndef STRIDED_IPC_H
#define STRIDED_IPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "strided/api.h"
#include "strided/buffer.h"
#include "strided/resource.h"
#include "strided/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The bytes of a pool's identity, and of a buffer descriptor. */
#define STRIDED_IPC_POOL_ID_SIZE 16
#define STRIDED_IPC_BUFFER_DESCRIPTOR_SIZE 192
/* The version of the buffer descriptor format this library writes; it
 * reads this one only. */
#define STRIDED_IPC_BUFFER_DESCRIPTOR_VERSION 1

/* Whether mr's pool was created IPC-enabled, or imported from another
 * process (then it is mapped too). mr must not be NULL. */
STRIDED_API bool strided_memory_resource_is_ipc_enabled(const strided_memory_resource *mr);

/* Whether mr was imported from another process
 * (strided_device_pool_resource_import, strided_pinned_pool_resource_import).
 * mr must not be NULL. */
STRIDED_API bool strided_memory_resource_is_mapped(const strided_memory_resource *mr);

/* The identity of mr's IPC-enabled pool: 16 random bytes made when the pool
 * was created, or those given to the import. Returns false (out untouched)
 * for a resource that is not IPC-enabled and for one imported without an
 * identity. mr and out must not be NULL. */
STRIDED_API bool strided_memory_resource_pool_id(const strided_memory_resource *mr,
                                                 unsigned char out[STRIDED_IPC_POOL_ID_SIZE]);

/* Export mr's IPC-enabled pool as a new POSIX file descriptor
 * (cuMemPoolExportToShareableHandle), for another process to import.
 *   mr      borrowed
 *   out_fd  out-parameter: a new file descriptor, which the caller closes
 * Returns, in the order of the checks: STRIDED_ERR_INVALID_ARGUMENT for a
 * NULL mr or out_fd and for a closed mr ("DeviceMemoryResource has been
 * closed"); STRIDED_ERR_UNSUPPORTED for a resource that is not IPC-enabled
 * ("Memory resource is not IPC-enabled", as cuda.core) and for a mapped one
 * ("Imported memory resource cannot be exported", as cuda.core);
 * STRIDED_ERR_CUDA for a failing driver call. */
STRIDED_API strided_status strided_memory_resource_export_pool(const strided_memory_resource *mr,
                                                               int *out_fd);

/* Import a device memory pool that another process exported
 * (cuMemPoolImportFromShareableHandle), as a resource of device: a
 * DeviceMemoryResource that is IPC-enabled and mapped, device_id device,
 * that allocates nothing of its own (its allocations are imported with
 * strided_buffer_import_ipc) and destroys its handle of the pool when it
 * is closed or its last reference goes.
 *   device   the device the pool's memory is on, in this process's
 *            numbering
 *   fd       the pool's file descriptor; borrowed: the caller closes it
 *   pool_id  the pool's identity (strided_memory_resource_pool_id of the
 *            exporter), 16 bytes read during the call; NULL when unknown
 *            (then buffer descriptors are not checked against it)
 *   out      out-parameter: the new resource with one reference
 * Returns, in the order of the checks: STRIDED_ERR_INVALID_ARGUMENT for a
 * NULL out and a negative fd; STRIDED_ERR_UNSUPPORTED on a platform without
 * POSIX file-descriptor handles; STRIDED_ERR_NO_CUDA_DRIVER;
 * STRIDED_ERR_INVALID_ARGUMENT for a device that does not exist;
 * STRIDED_ERR_CUDA for a failing driver call (an fd that is not a pool's,
 * or of a pool the exporter destroyed); STRIDED_ERR_OUT_OF_MEMORY. */
STRIDED_API strided_status strided_device_pool_resource_import(int device, int fd,
                                                               const unsigned char *pool_id,
                                                               strided_memory_resource **out);

/* Import a pinned host memory pool that another process exported: as
 * strided_device_pool_resource_import, giving a PinnedMemoryResource (host
 * and device accessible, device_id -1) whose driver calls run in device 0's
 * primary context. Errors as strided_device_pool_resource_import, "there
 * is no device 0" standing for the device that does not exist. */
STRIDED_API strided_status strided_pinned_pool_resource_import(int fd, const unsigned char *pool_id,
                                                               strided_memory_resource **out);

/* How a buffer descriptor shares its memory. */
typedef enum strided_ipc_sharing {
    STRIDED_IPC_POOL = 1,  /* an allocation of an IPC-enabled pool */
    STRIDED_IPC_LEGACY = 2 /* cuIpcGetMemHandle of device memory */
} strided_ipc_sharing;

/* What a buffer descriptor says, as strided_buffer_ipc_describe reads it. */
typedef struct strided_buffer_ipc_info {
    int version;                 /* STRIDED_IPC_BUFFER_DESCRIPTOR_VERSION */
    strided_ipc_sharing sharing; /* pool or legacy */
    strided_memory_kind kind;    /* DEVICE, or PINNED for a pinned pool */
    int device_id;               /* the exporter's device ordinal; -1 for
                                    pinned memory */
    uint64_t size;               /* the buffer's size in bytes */
    uint64_t offset;             /* legacy: the buffer's offset in its
                                    allocation; 0 for a pool */
    bool has_pool_id;            /* pool: the pool's identity is known */
    unsigned char pool_id[STRIDED_IPC_POOL_ID_SIZE];
    int64_t exporter_pid; /* the process that wrote the descriptor */
    /* Device memory: the device's UUID (cuDeviceGetUuid). An import maps
     * the memory on the device of this UUID, whatever ordinal this process
     * gives it (CUDA_VISIBLE_DEVICES may number the GPUs otherwise), and
     * refuses a descriptor whose device this process does not see. */
    bool has_device_uuid;
    unsigned char device_uuid[16];
} strided_buffer_ipc_info;

/* Write a descriptor of b's memory, for another process to import.
 * b's memory is shared as a pool allocation when b came from an
 * IPC-enabled (or mapped) resource, allocated or imported, and through
 * legacy IPC when it is device memory no pool gave (a buffer that wraps
 * part of an allocation shares the whole allocation and its offset in it;
 * a buffer imported through legacy IPC is exported again with the handle it
 * was imported with).
 *   b    borrowed; must stay alive (and its memory allocated) while any
 *        importer uses the memory
 *   out  out-parameter: STRIDED_IPC_BUFFER_DESCRIPTOR_SIZE bytes
 * Returns, in the order of the checks: STRIDED_ERR_INVALID_ARGUMENT for a
 * NULL b or out; STRIDED_ERR_UNSUPPORTED for memory of a pool that is not
 * IPC-enabled ("Memory resource is not IPC-enabled", as cuda.core) and for
 * memory that neither way shares (host, pinned or managed memory not from
 * an IPC-enabled pool: "only device memory and the memory of IPC-enabled
 * pools can be shared with another process, not pinned memory");
 * STRIDED_ERR_INVALID_ARGUMENT for a buffer of size 0 at NULL and for a
 * closed resource; STRIDED_ERR_NO_CUDA_DRIVER; STRIDED_ERR_CUDA for a
 * failing driver call (cuMemPoolExportPointer, cuMemGetAddressRange,
 * cuIpcGetMemHandle). out is untouched on failure. */
STRIDED_API strided_status strided_buffer_export_ipc(
    const strided_buffer *b, unsigned char out[STRIDED_IPC_BUFFER_DESCRIPTOR_SIZE]);

/* Read a buffer descriptor without importing it: check its format and
 * say what it holds.
 *   descriptor  size bytes, borrowed for the call
 *   out         out-parameter, untouched on failure
 * Returns STRIDED_ERR_INVALID_ARGUMENT for a NULL descriptor or out and,
 * in this order, for a descriptor that is truncated or too long ("a buffer
 * IPC descriptor is 192 bytes, got 100"), that is not one ("not a strided
 * buffer IPC descriptor"), of another version ("buffer descriptor version 2
 * is not supported; this library reads version 1"), that is corrupted
 * ("corrupted: its checksum does not match") or whose fields are not
 * valid together. */
STRIDED_API strided_status strided_buffer_ipc_describe(const void *descriptor, size_t size,
                                                       strided_buffer_ipc_info *out);

/* Import the memory a descriptor from another process describes, as a
 * buffer of this process that maps it.
 *   mr          pool sharing: the resource of the pool, imported from the
 *               exporter's (mapped); borrowed, the buffer holds a
 *               reference. Legacy sharing: not used, may be NULL.
 *   descriptor  size bytes, borrowed for the call
 *   stream      pool sharing: the buffer's deallocation stream (NULL: the
 *               legacy default stream); not used otherwise
 *   out         out-parameter: the new buffer with one reference, of the
 *               descriptor's size, whose memory info is the exporter's kind
 *               on the exporter's device
 * The checks, in order, each STRIDED_ERR_INVALID_ARGUMENT unless said: a
 * NULL descriptor or out; those of strided_buffer_ipc_describe; a
 * descriptor written by another machine or an earlier boot of this one
 * ("the descriptor was written on another machine or before this machine
 * last booted"); one written by this process ("the descriptor was written
 * by this process (pid 123): a process imports memory of other processes
 * only; use the buffer itself"). Pool sharing: a NULL mr ("a pool
 * allocation is imported through its pool's resource, imported from the
 * exporter with strided_device_pool_resource_import"); a closed mr; a
 * resource that is not IPC-enabled (STRIDED_ERR_UNSUPPORTED: "Memory
 * resource is not IPC-enabled") or not mapped ("... is not a mapped
 * resource: it is this process's own pool"); a pool identity that differs
 * from mr's, both known ("the descriptor is of another pool: ..."); a
 * memory kind or device other than mr's ("the descriptor is of device 1,
 * the memory resource of device 0"). Legacy sharing: a device that does
 * not exist here. Then STRIDED_ERR_NO_CUDA_DRIVER, STRIDED_ERR_CUDA for a
 * failing driver call (a stale descriptor: "... failed: ...: the exported
 * allocation no longer exists (the exporter freed it or exited) or is not
 * of this pool"), STRIDED_ERR_OUT_OF_MEMORY (the mapping is undone). */
STRIDED_API strided_status strided_buffer_import_ipc(strided_memory_resource *mr,
                                                     const void *descriptor, size_t size,
                                                     void *stream, strided_buffer **out);

/* Whether b maps memory of another process (strided_buffer_import_ipc).
 * b must not be NULL. */
STRIDED_API bool strided_buffer_is_mapped(const strided_buffer *b);

#ifdef __cplusplus
}
#endif

#endif
