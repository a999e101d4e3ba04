/*
 * fake_cuda.h: control of the fake CUDA driver used by the C tests.
 *
 * tests/c/fake_cuda.c builds a shared library, libfake_cuda.so, that exports
 * cuGetProcAddress_v2 (and cuGetProcAddress) and, through it, every entry
 * point libstrided resolves (src/cuda/driver.h), plus the functions below.
 * A test points libstrided at it with setenv("STRIDED_CUDA_DRIVER", path)
 * before the first CUDA use, and reaches these functions by dlopen-ing the
 * same path (the handle is shared with libstrided's).
 *
 * The fake keeps a table of address ranges with the pointer attributes the
 * real driver reports for each memory kind (memory type, managed flag,
 * device ordinal, device pointer, memory pool), counts calls per entry
 * point, can make the next call of an entry point fail, and tracks the
 * current context per thread.
 */
#ifndef FAKE_CUDA_H
#define FAKE_CUDA_H

#include <stddef.h>
#include <stdint.h>

/* One known range of memory and what cuPointerGetAttributes says of it. */
typedef struct fake_cuda_range {
    uintptr_t begin;
    size_t size;
    unsigned int memory_type; /* CUmemorytype: 1 host, 2 device, 3 array */
    int is_managed;
    int device_ordinal;
    uintptr_t device_pointer; /* 0: the driver reports 0 */
    void *mempool;            /* non-NULL: allocated from a pool */
} fake_cuda_range;

/* Forget everything; device_count devices, each with the given
 * CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS and MEMORY_POOLS_SUPPORTED.
 * Every device is named "Fake CUDA Device" (cuDeviceGetName) and has compute
 * capability 9.0 and 132 multiprocessors, as an H200. */
typedef void (*fake_cuda_reset_fn)(int device_count, int pageable_memory_access,
                                   int memory_pools_supported);
/* Add a range; allocations made through the fake add their own. */
typedef void (*fake_cuda_add_range_fn)(const fake_cuda_range *range);
/* Forget the added range that starts at begin, as the driver forgets
 * memory once it is freed: a test that frees memory it added calls this
 * first, or the allocator may hand the same addresses out again and the
 * fake would still describe them as the old memory (the oldest range that
 * holds an address answers for it). Nothing happens when no added range
 * starts at begin. */
typedef void (*fake_cuda_remove_range_fn)(uintptr_t begin);
/* Make the next call of entry point name (e.g. "cuMemFreeAsync") return
 * result, once. */
typedef void (*fake_cuda_fail_next_fn)(const char *name, int result);
/* Let the next n calls of entry point name succeed and make the one after
 * them return result, once (n = 0 is fake_cuda_fail_next). */
typedef void (*fake_cuda_fail_after_fn)(const char *name, long n, int result);
/* on != 0: cuMemcpyAsync and cuMemcpy2DAsync copy their bytes (at once),
 * the cuMemsetD*Async calls set theirs, and they refuse a copy that runs
 * past the end of a known range; addresses in no known range must be the
 * test's own memory. Off after a reset. */
typedef void (*fake_cuda_move_bytes_fn)(int on);
/* What CU_DEVICE_ATTRIBUTE_MAX_PITCH says (2^31 - 1 after a reset, as the
 * real driver); cuMemcpy2DAsync refuses larger pitches. */
typedef void (*fake_cuda_set_max_pitch_fn)(int bytes);
/* How many times entry point name was called since the last reset. */
typedef long (*fake_cuda_calls_fn)(const char *name);
/* The calling thread's current context (NULL: none). */
typedef void *(*fake_cuda_current_context_fn)(void);
/* Make the primary context of device current on the calling thread, as an
 * application would (device -1: none). */
typedef void (*fake_cuda_set_current_device_fn)(int device);
/* Bytes allocated through the fake and not yet freed. */
typedef long (*fake_cuda_live_bytes_fn)(void);
/* The stream passed to the last call of entry point name (one of
 * cuStreamSynchronize, cuMemAllocFromPoolAsync, cuMemFreeAsync,
 * cuEventRecord, cuStreamWaitEvent, cuMemcpyAsync, cuMemsetD8Async,
 * cuMemsetD16Async, cuMemsetD32Async, cuLaunchKernel) since
 * the last reset; NULL if none. */
typedef void *(*fake_cuda_last_stream_fn)(const char *name);

/* Events created and not yet destroyed. */
typedef long (*fake_cuda_live_events_fn)(void);

/* Modules loaded (cuModuleLoadData) and not yet unloaded, in any context. Modules
 * outlive fake_cuda_reset, as libstrided keeps them for the life of the
 * process. cuModuleLoadData accepts only a fatbin (it checks the magic
 * number); cuModuleGetFunction finds every name that starts with
 * "strided_copy_". */
typedef long (*fake_cuda_live_modules_fn)(void);

/* What the last cuLaunchKernel since the last reset was given; args are the
 * first three 64-bit words of its first kernel parameter (libstrided's
 * kernels all start with them: destination, source, count). */
typedef struct fake_cuda_launch {
    char function[128];
    unsigned int grid[3], block[3], shared_bytes;
    void *stream;
    int device; /* of the module the function belongs to */
    uint64_t args[3];
} fake_cuda_launch;

/* Write the last launch into out; 0 when there was none since the reset. */
typedef int (*fake_cuda_last_launch_fn)(fake_cuda_launch *out);

/* What the last cuMemcpyAsync, cuMemsetD8Async, cuMemsetD16Async or
 * cuMemsetD32Async since the last reset was given (a call made to fail with
 * fake_cuda_fail_next is not recorded). */
typedef struct fake_cuda_memop {
    char function[32]; /* the entry point */
    uintptr_t dst;
    uintptr_t src;      /* cuMemcpyAsync's source; 0 for a memset */
    unsigned int value; /* a memset's value; 0 for a copy */
    size_t count;       /* elements set, or bytes copied */
    void *stream;
    int device; /* of the context current for the call; -1: none */
} fake_cuda_memop;

/* Write the last of those calls into out; 0 when there was none since the
 * reset. */
typedef int (*fake_cuda_last_memop_fn)(fake_cuda_memop *out);

/* What the fake knows of a memory pool: a device's default pool, or one
 * made with cuMemPoolCreate (kept, destroyed or not, until the next reset).
 * The allocation type, handle types, location and maximum size are those
 * cuMemPoolCreate was given (a default pool: pinned, no handles, its
 * device, 0). */
typedef struct fake_cuda_pool {
    int alloc_type;    /* CUmemAllocationType */
    int handle_types;  /* CUmemAllocationHandleType */
    int location_type; /* CUmemLocationType */
    int location_id;
    size_t max_size;
    uint64_t release_threshold;
    uint64_t used; /* bytes allocated from it and not freed */
    int created;   /* made by cuMemPoolCreate */
    int destroyed; /* cuMemPoolDestroy was called */
} fake_cuda_pool;

/* Describe pool (a CUmemoryPool) into out; 0 when the fake does not know
 * it. */
typedef int (*fake_cuda_pool_info_fn)(void *pool, fake_cuda_pool *out);
/* Pools made by cuMemPoolCreate since the last reset and not destroyed. */
typedef long (*fake_cuda_live_pools_fn)(void);
/* What CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID says for every device (0 after a
 * reset; -1: the system has no NUMA). The fake's host has NUMA nodes 0 and
 * 1, the only ones a HOST_NUMA pool may be placed on. */
typedef void (*fake_cuda_set_host_numa_id_fn)(int id);

/* What the last successful cuTensorMapEncodeTiled since the last reset was
 * given, and the 128 bytes it wrote there: its arguments and a call number
 * (its calls since the reset, this one included), word by word in this order:
 * address, globalDim[0..4], globalStrides[0..3], boxDim[0..4] (12 bits
 * each), elementStrides[0..4] (4 bits each), data type | rank << 8 |
 * interleave << 16 | swizzle << 24 | l2Promotion << 32 | oobFill << 40,
 * the device, the call number, 0. cuTensorMapEncodeTiled needs a current
 * context and refuses (CUDA_ERROR_INVALID_VALUE) whatever breaks the
 * driver's documented rules. */
typedef struct fake_cuda_tensor_map {
    uint64_t address;
    uint64_t global_dim[5];
    uint64_t global_strides[4];
    uint32_t box_dim[5];
    uint32_t element_strides[5];
    int data_type, rank, interleave, swizzle, l2_promotion, oob_fill;
    int device; /* of the context current for the call */
    unsigned char bytes[128];
} fake_cuda_tensor_map;

/* Write the last one into out; 0 when there was none since the reset. */
typedef int (*fake_cuda_last_tensor_map_fn)(fake_cuda_tensor_map *out);

/* Peer access to memory pools. cuMemPoolSetAccess takes descriptors of
 * devices (a pool's own device is refused, as is one that cannot reach the
 * pool's device: every two distinct devices of the first 8 can) and
 * applies all of them or none; cuMemPoolGetAccess answers what was set,
 * READWRITE for the pool's own device. A device's default pool forgets its
 * access at a reset. */

/* The CUmemAccess_flags pool (a CUmemoryPool) has for device; -1 when the
 * fake does not know the pool or the device. */
typedef int (*fake_cuda_pool_access_fn)(void *pool, int device);

/* Make stream (any handle but the legacy default stream) capture a graph
 * (on != 0) or not, as cuStreamIsCapturing reports it; a capturing stream
 * refuses cuMemcpyWithAttributesAsync
 * (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED). Up to 8 streams; none after a
 * reset. */
typedef void (*fake_cuda_set_capturing_fn)(void *stream, int on);

/* Give device the UUID cuDeviceGetUuid reports (16 bytes), as another
 * process's numbering of the same GPUs would. Every device has its default
 * again after a reset. */
typedef void (*fake_cuda_set_device_uuid_fn)(int device, const unsigned char *uuid);

/* Managed memory. Advice (cuMemAdvise, both generations), prefetches
 * (cuMemPrefetchAsync, both) and discards (the batched calls of CUDA 13.0)
 * apply to ranges of managed memory only (CUDA_ERROR_INVALID_VALUE
 * otherwise, and for a range that runs past its allocation), need a
 * current context, and are kept per allocation: advising part of one
 * advises all of it. Locations are checked as the driver checks them: a
 * device that exists (CUDA_ERROR_INVALID_DEVICE), the host, host NUMA
 * nodes 0 and 1, the calling thread's node (node 0); a preferred location
 * may be any of them, an accessed-by location a device or the host.
 * cuMemRangeGetAttribute answers from the advice, with 4-byte values (the
 * type and id attributes of the preferred location only for drivers of
 * CUDA 12.2 and later), and lists accessed-by locations in the order they
 * were advised, padded with CU_DEVICE_INVALID. A discard sets the range's
 * bytes to 0xdd when bytes move (fake_cuda_move_bytes). */
typedef struct fake_cuda_managed {
    int read_mostly;
    int preferred_type; /* CUmemLocationType; 0: none */
    int preferred_id;
    int accessed[65]; /* device ordinals, -1 for the host, as advised */
    int n_accessed;
    int prefetch_type; /* of the last prefetch; 0: none */
    int prefetch_id;
    int discards; /* discards of the range since the reset */
} fake_cuda_managed;

/* Describe the managed memory that holds address into out; 0 when no
 * known range holds it. */
typedef int (*fake_cuda_managed_info_fn)(uintptr_t address, fake_cuda_managed *out);

/* What the last successful advice, prefetch or discard since the last
 * reset was given. */
typedef struct fake_cuda_managed_op {
    char function[40]; /* the entry point (cuMemAdvise_v2, ...) */
    uintptr_t address;
    size_t size;
    int advice;        /* CUmem_advise; 0 for prefetches and discards */
    int location_type; /* CUmemLocationType (the older entry points: DEVICE
                           or HOST from their ordinal); 0: none */
    int location_id;
    void *stream; /* NULL for advice */
    int device;   /* of the context current for the call */
} fake_cuda_managed_op;

/* Write the last one into out; 0 when there was none since the reset. */
typedef int (*fake_cuda_last_managed_op_fn)(fake_cuda_managed_op *out);

/* What the last successful cuMemcpyWithAttributesAsync since the last
 * reset was given (the copy itself is recorded as cuMemcpyAsync's is:
 * fake_cuda_last_memop). It refuses the legacy default stream, a
 * capturing stream, and attributes that are none of the driver's. The
 * entry point exists for drivers of CUDA 13.2 and later
 * (FAKE_CUDA_DRIVER_VERSION=13020). */
typedef struct fake_cuda_copy_attributes {
    int src_access_order;
    int src_hint_type, src_hint_id;
    int dst_hint_type, dst_hint_id;
    unsigned int flags;
} fake_cuda_copy_attributes;

typedef int (*fake_cuda_last_copy_attributes_fn)(fake_cuda_copy_attributes *out);

/* Inter-process sharing, in one process: an importer maps the exporter's
 * own memory at the same address. A pool created with
 * CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR exports a real file descriptor
 * (a memfd naming the pool), which cuMemPoolImportFromShareableHandle
 * turns into a new pool (destroyed with cuMemPoolDestroy, counted by
 * fake_cuda_live_pools); an exported allocation (cuMemPoolExportPointer)
 * is mapped by cuMemPoolImportPointer through such a pool only, and
 * unmapped by cuMemFreeAsync of its address while it is mapped. Legacy
 * handles (cuIpcGetMemHandle) are of device memory not from a pool, at
 * the start of its range; cuIpcOpenMemHandle needs the flag
 * CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS and cuIpcCloseMemHandle ends the
 * mapping. Export data and handles name their allocation by a serial
 * number that is never reused: one of memory freed since is refused
 * (CUDA_ERROR_INVALID_VALUE), as the driver refuses a stale handle.
 * Events made with CU_EVENT_INTERPROCESS (which needs
 * CU_EVENT_DISABLE_TIMING) have handles (cuIpcGetEventHandle) until they
 * are destroyed; an opened one is a new event, recorded when the
 * original was. cuMemGetAddressRange answers the known range that holds
 * an address (CUDA_ERROR_NOT_FOUND for none). */

/* The mappings opened (imported or opened, not yet freed or closed) of
 * the known range that starts at address; -1 when none starts there. */
typedef long (*fake_cuda_mappings_fn)(uintptr_t address);
/* What CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES says for every
 * device (CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR after a reset; 0: no
 * IPC handle type, as on a platform without POSIX file descriptors). */
typedef void (*fake_cuda_set_ipc_handle_types_fn)(int types);

#endif
