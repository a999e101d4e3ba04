/*
 * copy/host.h: the host executor (copy/host.c), which runs a plan of
 * copy/plan.c on the calling thread or on OpenMP threads. Not installed.
 */
#ifndef STRIDED_COPY_HOST_H
#define STRIDED_COPY_HOST_H

#include "strided/copy.h"

/* Run plan p on the host. dst and src point at the plan's element 0 (the
 * views' element 0 plus dst_offset / src_offset elements). Source and
 * destination do not overlap (the caller stages overlapping copies).
 * nthreads: 0 = choose by size, 1 = the calling thread only, n = at most n.
 * Never fails. */
void strided__copy_host_run(const strided_copy_plan *p, char *dst, const char *src, int nthreads);

/* Copy bytes from src to dst (which do not overlap) with stores that
 * bypass the CPU's caches where the target has them (x86-64), on up to
 * omp_get_max_threads() threads: for memory a DMA engine reads next, which
 * reads lines that are dirty in the caches at about half speed. The bytes
 * are in memory when the call returns. Never fails. */
void strided__copy_host_stream(char *dst, const char *src, int64_t bytes);

#endif
