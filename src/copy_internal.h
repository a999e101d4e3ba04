/*
 * copy_internal.h: what the copy modules share. copy_plan.c makes plans;
 * copy_cpu.c runs them on the host; cuda/copy_cuda.c runs them on a device.
 */
#ifndef STRIDED_COPY_INTERNAL_H
#define STRIDED_COPY_INTERNAL_H

#include <stdint.h>

#include "internal.h"
#include "strided/copy.h"

/* Run plan p on the host. dst and src point at the plan's element 0 (the
 * views' element 0 plus dst_offset / src_offset elements). Source and
 * destination do not overlap (the caller stages overlapping copies).
 * nthreads: 0 = choose by size, 1 = the calling thread only, n = at most n.
 * Never fails. */
void strided__copy_host_run(const strided_copy_plan *p, char *dst, const char *src,
                            int nthreads);

/* Run plan p on device (its primary context made current), queued on
 * stream. dst and src are device addresses of the plan's element 0; both
 * must be reachable from that device. Returns STRIDED_ERR_NO_CUDA_DRIVER,
 * STRIDED_ERR_UNSUPPORTED when the library was built without its kernels
 * (no nvcc), STRIDED_ERR_CUDA for a failing driver call. */
strided_status strided__copy_device_run(const strided_copy_plan *p, uintptr_t dst,
                                        uintptr_t src, void *stream, int device);

#endif
