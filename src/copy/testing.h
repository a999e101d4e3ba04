/*
 * copy/testing.h: what the copy files show tests and benchmarks of their
 * inner workings: which specialised host loops ran (copy/host.c), the
 * plan cache's counters and controls (copy/plan.c), a reset of the staging
 * pool with another chunk size and the pieces of a staged transfer
 * (copy/staging.c) and the path of the last
 * transfer (copy/transfer.c). Copies never call these. Not installed.
 */
#ifndef STRIDED_COPY_TESTING_H
#define STRIDED_COPY_TESTING_H

#include <stddef.h>
#include <stdint.h>

#include "strided/copy.h"
#include "strided/status.h"

/* How many pieces of work of the host executor ran the named specialised
 * path ("transpose_vector", "reverse_vector", "stride2_vector",
 * "stride3_vector", "stride4_vector", "planes") since the last reset, -1
 * for another name; and the reset. */
int64_t strided__copy_cpu_path_runs(const char *name);
void strided__copy_cpu_path_reset(void);

/* What the calling thread's plan cache has done since it was made (or
 * cleared). */
typedef struct strided__plan_cache_stats {
    uint64_t hits, misses; /* misses: lookups of pairs that planned */
    uint64_t evictions;    /* kept plans replaced by another pair's */
    int entries, capacity; /* plans kept now; the most it keeps */
} strided__plan_cache_stats;

void strided__copy_plan_cache_stats(strided__plan_cache_stats *out);
/* Drop the calling thread's kept plans, free the cache's memory and zero
 * its counters (the hash mask goes back to all ones). */
void strided__copy_plan_cache_clear(void);
/* And every hash of this thread's cache with mask (0: every pair has the
 * same hash and lands in the same set). */
void strided__copy_plan_cache_set_hash_mask(uint64_t mask);

/* Free the staging pool's pinned chunks that no copy is using and make
 * later copies use chunks of chunk_bytes (0: decide again, from
 * STRIDED_STAGING_CHUNK_BYTES or the default). Chunks in use when this is
 * called are freed when their copy gives them back, if their size no
 * longer applies. Needs the driver loaded (does nothing otherwise). */
void strided__staging_reset(size_t chunk_bytes);

/* The pieces in which a staged transfer of a C-ordered array of ndim
 * axes of shape (every extent > 0) and itemsize bytes crosses with chunks
 * of chunk bytes (>= itemsize): the first element (in the packed image)
 * and the element count of each of the first max pieces go to first and
 * count; *row is the elements of the rows no piece crosses, *slab those of
 * the unit every piece is a multiple of. Returns how many pieces there
 * are. */
int64_t strided__staging_pieces(int ndim, const int64_t *shape, int itemsize, size_t chunk,
                                int64_t *first, int64_t *count, int64_t max, int64_t *row,
                                int64_t *slab);

/* The way the calling thread's last strided__copy_transfer moved its data:
 * "dma" (one cuMemcpyAsync between pinned memory and the device),
 * "staged" (one contiguous run through staging), "footprint" (to the
 * device: the source's footprint DMAed into a device temporary, then the
 * plan on the device), "dense" (to the host: the plan on the device into a
 * dense temporary, then its DMA), "2d" (one cuMemcpy2DAsync), "pack" (a
 * host gather or scatter through staging, the device plan between the
 * packed image and the device view where needed); "" before the first.
 * A copy that is not a transfer (host to host, device to device) leaves
 * it as it was. */
const char *strided__copy_transfer_path(void);

/* The kernel strided__copy_device_run would launch for plan p (of
 * positive volume, not a sub-byte one) between dst and src, and its argument struct
 * (copy/kernels.h): *name is the kernel's name (static), the struct's
 * first size bytes go to args and its whole size to *bytes. Loads and
 * launches nothing. STRIDED_ERR_UNSUPPORTED in a library without kernels;
 * *name is "" for a copy the driver makes (cuMemcpyAsync). */
strided_status strided__copy_launch_describe(const strided_copy_plan *p, uintptr_t dst,
                                             uintptr_t src, const char **name, void *args,
                                             size_t size, size_t *bytes);

#endif
