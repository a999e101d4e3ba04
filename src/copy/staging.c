/*
 * copy/staging.c: pinned staging buffers, and the double-buffered
 * transfers through them between host arrays and their packed images in
 * device memory (strided__staged_to_device / _to_host, copy/staging.h).
 *
 * The pool. A copy stages through two buffers of one chunk each (a "set",
 * one cuMemHostAlloc of two chunks, PORTABLE so that every device's DMA
 * engine reads it). The process keeps up to KEPT_SETS sets for reuse,
 * made on first use and never freed (except by strided__staging_reset,
 * for tests). A copy takes a free set under pool_lock and gives it back
 * when it is done; when every kept set is in use (more than KEPT_SETS
 * copies at once, from several threads), the copy allocates a set of its
 * own and frees it at the end: a copy never waits for another copy's
 * staging, so copies on several threads cannot deadlock on it (a stream
 * one copy waits for may hold work another thread queues later). A copy
 * given a host memory resource (job->host_mr) takes one allocation of both
 * buffers from it instead, of the size the copy needs, given back at the
 * end.
 *
 * The chunk size is STRIDED__STAGING_CHUNK_BYTES (32 MiB: with 2 x 32 MiB,
 * copies from pageable memory on an H200 reached 47.5 GB/s, against 6.5 to
 * 7.5 GB/s for a plain pageable copy; the same double buffering with
 * 2 x 128 MiB gave 30.5 GB/s and with 2 x 8 MiB 6.1 GB/s), or the
 * environment variable STRIDED_STAGING_CHUNK_BYTES, read when the pool is
 * first used.
 *
 * Pieces. A host array travels in pieces of at most one chunk: a range of
 * indices of one axis k with every index of the axes after it, at one
 * index of each axis before it, where k is the outermost axis whose one
 * index fits in a chunk. Every piece is then a sub-array (one host plan
 * moves it) and a contiguous range of the packed image (one DMA). The
 * pieces ramp: the first holds a sixteenth of a chunk (STAGING_RAMP; at
 * least 1 MiB), each next one as much as all before it, up to a chunk, and
 * the last ones halve again down to the first's size, so that the DMA
 * engine starts after a short gather and the host's last scatter is short
 * (a 38 MB copy cut in two halves left 0.2 ms of gathering alone before
 * the first DMA); full pieces of a row share it evenly. To the device,
 * pieces of a C-contiguous host array are gathered with streaming stores
 * when they hold less than 16 MiB (see copy/host.c: a DMA reads lines left
 * dirty in the caches at half speed); gathers of gapped arrays store
 * plainly, so their pieces do not ramp (small pieces would cross at the
 * slow speed: rows of 4 KiB fell from 30.5 to 21.0 GB/s when they did).
 *
 * The pipeline. To the device: piece i is gathered into buffer i % 2 on
 * the host (strided__copy_host_run or _stream, on several threads)
 * while the DMA of piece i - 1 runs; an event recorded after each DMA
 * tells when its buffer may be written again. The call returns when the
 * last DMA has read its buffer, because the buffers are reused by the next
 * copy (so the host array may change once the call returns). To the host:
 * the DMA of piece i runs while piece i - 1 is scattered from its buffer
 * into the host array. A failure after DMAs were queued waits for the
 * stream before the buffers are given back.
 */
#include "copy/staging.h"

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "base/base.h"
#include "copy/host.h"
#include "copy/launch.h"
#include "copy/testing.h"
#include "cuda/driver.h"
#include "memory/memory.h"

#define OP "copy"

/* Sets of staging buffers the pool keeps. */
#define KEPT_SETS 4

/* The ramp: the first and last pieces hold a chunk / STAGING_RAMP, and
 * at least STAGING_LEAST_BYTES (or a whole chunk, if less): each piece
 * costs 10-20 us beyond its bytes (waking the gather's threads, its DMA
 * and event), more than a smaller one would save. */
#define STAGING_RAMP 16
#define STAGING_LEAST_BYTES ((int64_t)1 << 20)

/* Contiguous pieces of fewer bytes are gathered with streaming stores
 * (strided__copy_host_stream); larger ones with plain stores, which were
 * faster at 32 MiB (51 against 47 GB/s) and whose lines have left the
 * caches by the time their DMA reads them. */
#define STAGING_STREAM_BELOW ((int64_t)16 << 20)

/* Two chunks of pinned memory from cuMemHostAlloc. */
typedef struct staging_set {
    struct staging_set *next;
    char *memory;
    size_t chunk;
    int device; /* whose primary context allocated it */
} staging_set;

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static staging_set *pool_free; /* sets no copy is using */
static int pool_sets;          /* sets of the pool, free or in use */
static size_t pool_chunk;      /* 0: not decided yet */

/* The staging of one copy: buffers from exactly one of the three. */
typedef struct staging {
    char *buf[2];
    staging_set *set;       /* a pool set */
    void *own;              /* cuMemHostAlloc'd for this copy only */
    strided_buffer *buffer; /* from job->host_mr */
} staging;

/* The chunk size, deciding it on first use. Assumes: pool_lock held. */
static strided_status decide_chunk(size_t *out)
{
    if (pool_chunk == 0) {
        const char *text = getenv("STRIDED_STAGING_CHUNK_BYTES");
        size_t chunk = STRIDED__STAGING_CHUNK_BYTES;
        if (text != NULL && text[0] != '\0') {
            char *end = NULL;
            unsigned long long v = 0;
            errno = 0;
            if (isdigit((unsigned char)text[0]))
                v = strtoull(text, &end, 10);
            if (end == NULL || *end != '\0' || errno != 0 || v < STRIDED__STAGING_MIN_CHUNK_BYTES ||
                v > STRIDED__STAGING_MAX_CHUNK_BYTES)
                return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, OP,
                                     "STRIDED_STAGING_CHUNK_BYTES=\"%.64s\" is not a "
                                     "decimal byte count from %zu to %zu",
                                     text, STRIDED__STAGING_MIN_CHUNK_BYTES,
                                     STRIDED__STAGING_MAX_CHUNK_BYTES);
            chunk = (size_t)v;
        }
        pool_chunk = chunk;
    }
    *out = pool_chunk;
    return STRIDED_OK;
}

strided_status strided__staging_chunk_bytes(size_t *out)
{
    pthread_mutex_lock(&pool_lock);
    strided_status status = decide_chunk(out);
    pthread_mutex_unlock(&pool_lock);
    return status;
}

/* Free a set in the context that allocated it; failures cannot be acted
 * on. */
static void free_set(const strided__driver *cu, staging_set *set)
{
    strided__context_scope scope;
    bool entered = strided__context_enter(OP, cu, set->device, &scope) == STRIDED_OK;
    (void)cu->cuMemFreeHost(set->memory);
    if (entered)
        strided__context_leave(cu, &scope);
    strided__free(set);
}

void strided__staging_reset(size_t chunk_bytes)
{
    pthread_mutex_lock(&pool_lock);
    staging_set *list = pool_free;
    pool_free = NULL;
    for (staging_set *s = list; s != NULL; s = s->next)
        pool_sets--;
    pool_chunk = chunk_bytes;
    pthread_mutex_unlock(&pool_lock);
    /* Sets exist only where a driver was loaded. */
    const strided__driver *cu = strided__cuda_loaded() ? strided__cuda_quiet() : NULL;
    while (list != NULL) {
        staging_set *next = list->next;
        if (cu != NULL)
            free_set(cu, list);
        list = next;
    }
}

/* Make a set of two chunks for the pool, in the current context (device's
 * primary context). */
static strided_status new_set(const strided__driver *cu, size_t chunk, int device,
                              staging_set **out)
{
    staging_set *set = strided__malloc(sizeof *set);
    if (set == NULL)
        return strided__fail(STRIDED_ERR_OUT_OF_MEMORY, OP,
                             "cannot allocate a staging buffer record");
    void *memory = NULL;
    strided_status status = STRIDED_CUDA_CHECK(OP, cu->cuMemHostAlloc(&memory, 2 * chunk,
                                                                      CU_MEMHOSTALLOC_PORTABLE));
    if (status != STRIDED_OK) {
        strided__free(set);
        return status;
    }
    *set = (staging_set){NULL, memory, chunk, device};
    *out = set;
    return STRIDED_OK;
}

/* Take staging for a copy whose pieces hold at most piece bytes: two
 * buffers (one when nbuf is 1) of at least piece bytes each.
 * Assumes: the job's device context is current; piece <= SIZE_MAX / 2. */
static strided_status acquire(const strided__copy_job *job, const strided__driver *cu, size_t piece,
                              int nbuf, staging *out)
{
    *out = (staging){{NULL, NULL}, NULL, NULL, NULL};
    size_t bytes = piece * (size_t)nbuf;
    if (job->host_mr != NULL) {
        strided_status status = strided__buffer_alloc_temporary(job->host_mr, bytes, job->stream,
                                                                -1, &out->buffer);
        if (status != STRIDED_OK)
            return status;
        char *base = strided_buffer_ptr(out->buffer);
        out->buf[0] = base;
        out->buf[1] = nbuf > 1 ? base + piece : NULL;
        return STRIDED_OK;
    }
    bool grow = false;
    size_t chunk = 0;
    pthread_mutex_lock(&pool_lock);
    if (piece <= pool_chunk) {
        chunk = pool_chunk;
        if (pool_free != NULL) {
            out->set = pool_free;
            pool_free = pool_free->next;
        } else if (pool_sets < KEPT_SETS) {
            pool_sets++;
            grow = true;
        }
    }
    pthread_mutex_unlock(&pool_lock);
    if (grow) {
        strided_status status = new_set(cu, chunk, job->device, &out->set);
        if (status != STRIDED_OK) {
            pthread_mutex_lock(&pool_lock);
            pool_sets--;
            pthread_mutex_unlock(&pool_lock);
            return status;
        }
    }
    if (out->set != NULL) {
        out->buf[0] = out->set->memory;
        out->buf[1] = nbuf > 1 ? out->set->memory + out->set->chunk : NULL;
        return STRIDED_OK;
    }
    /* Every kept set is busy (or the pieces are larger than a chunk): a
     * set of this copy's own. */
    strided_status status = STRIDED_CUDA_CHECK(OP, cu->cuMemHostAlloc(&out->own, bytes,
                                                                      CU_MEMHOSTALLOC_PORTABLE));
    if (status != STRIDED_OK) {
        out->own = NULL;
        return status;
    }
    out->buf[0] = out->own;
    out->buf[1] = nbuf > 1 ? (char *)out->own + piece : NULL;
    return STRIDED_OK;
}

/* Give staging back. Assumes: no DMA queued on it is still running; the
 * job's device context is current. */
static void release(const strided__copy_job *job, const strided__driver *cu, staging *s)
{
    if (s->buffer != NULL) {
        (void)strided_buffer_set_deallocation_stream(s->buffer, job->stream);
        strided_buffer_release(s->buffer);
    }
    if (s->set != NULL) {
        pthread_mutex_lock(&pool_lock);
        bool keep = s->set->chunk == pool_chunk;
        if (keep) {
            s->set->next = pool_free;
            pool_free = s->set;
        } else {
            pool_sets--;
        }
        pthread_mutex_unlock(&pool_lock);
        if (!keep)
            free_set(cu, s->set);
    }
    if (s->own != NULL)
        (void)cu->cuMemFreeHost(s->own);
    *s = (staging){{NULL, NULL}, NULL, NULL, NULL};
}

/* How a host array is cut into pieces (see the header comment). */
typedef struct pieces {
    const strided__staged_array *a;
    int k;            /* the axis the pieces cut */
    int64_t slab;     /* elements of one index of axis k */
    int64_t most;     /* indices of axis k a piece holds at most */
    int64_t least;    /* ... at least, but at the end of a row of axis k */
    int64_t total;    /* indices of axis k over every row: outer * shape[k] */
    int64_t count;    /* pieces */
    size_t max_bytes; /* of the largest piece */
} pieces;

/* One piece: a sub-array of ndim axes. */
typedef struct piece {
    int ndim;
    int64_t shape[STRIDED_MAX_NDIM];
    const int64_t *strides;
    int64_t at;     /* indices of axis k before it, over every row */
    int64_t packed; /* element offset in the packed image */
    int64_t host;   /* element offset from the host array's element 0 */
    int64_t elems;
} piece;

/* The indices of axis k of the piece that starts at index at (over every
 * row): a ramp that doubles from least up to most, down again at the end,
 * inside one row; where a piece of most would leave a short rest of its
 * row, the row's rest is cut into even pieces; a rest below least joins
 * the piece. */
static int64_t piece_length(const pieces *ps, int64_t at)
{
    int64_t extent = ps->a->shape[ps->k];
    int64_t row_rest = extent - at % extent, rest = ps->total - at;
    int64_t n = at < rest / 2 ? at : rest / 2;
    n = n < ps->least ? ps->least : n > ps->most ? ps->most : n;
    if (n >= row_rest)
        return row_rest;
    if (n == ps->most) {
        int64_t parts = row_rest / n + (row_rest % n != 0);
        n = row_rest / parts + (row_rest % parts != 0);
    }
    return row_rest - n < ps->least && row_rest <= ps->most ? row_rest : n;
}

/* The piece after prev (the first for NULL; prev may be pc). Every
 * partial sum of the host offset is the offset of one of the array's
 * elements, so it fits in int64. */
static void piece_after(const pieces *ps, const piece *prev, piece *pc)
{
    const strided__staged_array *a = ps->a;
    int k = ps->k;
    int64_t at = prev != NULL ? prev->at + prev->shape[0] : 0;
    int64_t extent = a->shape[k];
    int64_t outer = at / extent, first = at % extent;
    int64_t n = piece_length(ps, at);
    int64_t host = first * a->strides[k], rest = outer;
    for (int i = k - 1; i >= 0; i--) {
        host += rest % a->shape[i] * a->strides[i];
        rest /= a->shape[i];
    }
    pc->ndim = a->ndim - k;
    pc->shape[0] = n;
    for (int i = 1; i < pc->ndim; i++)
        pc->shape[i] = a->shape[k + i];
    pc->strides = a->strides + k;
    pc->at = at;
    pc->packed = at * ps->slab;
    pc->host = host;
    pc->elems = n * ps->slab;
}

/* Whether the host array is C-contiguous: every piece is then one run,
 * gathered with streaming stores. */
static bool host_contiguous(const strided__staged_array *a)
{
    int64_t expected = 1;
    for (int i = a->ndim - 1; i >= 0; i--) {
        if (a->shape[i] != 1 && a->strides[i] != expected)
            return false;
        expected *= a->shape[i];
    }
    return true;
}

/* With ramp false, every piece holds as much of a chunk as its row allows
 * (no ramp): gathers of gapped host arrays store plainly, and the DMA of a
 * small piece whose lines are still in the caches is slow.
 * Assumes: every extent > 0 and the array's volume * itemsize fits in
 * int64; chunk >= itemsize. */
static void pieces_init(pieces *ps, const strided__staged_array *a, size_t chunk, bool ramp)
{
    const int64_t *shape = a->shape;
    int64_t limit = (int64_t)(chunk / (size_t)a->itemsize); /* elements */
    int64_t slab = 1, outer = 1;
    int k = a->ndim - 1;
    assert(limit >= 1);
    /* slab * shape[k] <= volume: no overflow. */
    while (k > 0 && slab * shape[k] <= limit) {
        slab *= shape[k];
        k--;
    }
    for (int i = 0; i < k; i++)
        outer *= shape[i];
    ps->a = a;
    ps->k = k;
    ps->slab = slab;
    ps->most = limit / slab < shape[k] ? limit / slab : shape[k];
    int64_t least = limit / STAGING_RAMP, floor = STAGING_LEAST_BYTES / a->itemsize;
    least = (least > floor ? least : floor) / slab;
    ps->least = !ramp || least > ps->most ? ps->most : least < 1 ? 1 : least;
    ps->total = outer * shape[k];
    ps->count = 0;
    int64_t largest = 0;
    for (int64_t at = 0; at < ps->total; ps->count++) {
        int64_t n = piece_length(ps, at);
        largest = n > largest ? n : largest;
        at += n;
    }
    ps->max_bytes = (size_t)(largest * slab * a->itemsize);
}

int64_t strided__staging_pieces(int ndim, const int64_t *shape, int itemsize, size_t chunk,
                                int64_t *first, int64_t *count, int64_t max, int64_t *row,
                                int64_t *slab)
{
    int64_t strides[STRIDED_MAX_NDIM];
    assert(ndim >= 1 && ndim <= STRIDED_MAX_NDIM && itemsize >= 1 && chunk >= (size_t)itemsize);
    int64_t s = 1;
    for (int i = ndim - 1; i >= 0; s *= shape[i], i--)
        strides[i] = s;
    strided__staged_array a = {ndim, itemsize, shape, strides, NULL, 0};
    pieces ps;
    pieces_init(&ps, &a, chunk, true);
    *row = ps.slab * shape[ps.k];
    *slab = ps.slab;
    piece pc;
    for (int64_t j = 0; j < ps.count && j < max; j++) {
        piece_after(&ps, j == 0 ? NULL : &pc, &pc);
        first[j] = pc.packed;
        count[j] = pc.elems;
    }
    return ps.count;
}

/* Move piece pc between the host array and a staging buffer on the host:
 * gather into staging (to_device) or scatter from it. */
static strided_status move_piece(const strided__staged_array *a, const piece *pc, char *buffer,
                                 bool to_device)
{
    strided_layout dense, host;
    strided_copy_plan q;
    strided_status status = strided_layout_init(&dense, pc->ndim, pc->shape, NULL, a->itemsize);
    if (status == STRIDED_OK)
        status = strided_layout_init(&host, pc->ndim, pc->shape, pc->strides, a->itemsize);
    if (status == STRIDED_OK)
        status = to_device ? strided_copy_plan_make(&dense, &host, &q)
                           : strided_copy_plan_make(&host, &dense, &q);
    if (status != STRIDED_OK)
        return status;
    intptr_t isz = a->itemsize;
    char *h = a->host + (intptr_t)pc->host * isz;
    int64_t bytes = pc->elems * isz;
    if (to_device && q.kernel == STRIDED_COPY_CONTIGUOUS && bytes < STAGING_STREAM_BELOW)
        strided__copy_host_stream(buffer, h + (intptr_t)q.src_offset * isz, bytes);
    else if (to_device)
        strided__copy_host_run(&q, buffer + (intptr_t)q.dst_offset * isz,
                               h + (intptr_t)q.src_offset * isz, 0);
    else
        strided__copy_host_run(&q, h + (intptr_t)q.dst_offset * isz,
                               buffer + (intptr_t)q.src_offset * isz, 0);
    return STRIDED_OK;
}

/* What one staged transfer holds while it runs. */
typedef struct pipeline {
    const strided__copy_job *job;
    const strided__driver *cu;
    const strided__staged_array *a;
    pieces ps;
    staging st;
    CUevent ev[2];
    int nev;
    bool queued; /* a DMA was queued */
} pipeline;

/* Everything a staged transfer needs before its first piece. */
static strided_status pipeline_open(pipeline *pl, const strided__copy_job *job,
                                    const strided__staged_array *a, bool to_device)
{
    *pl = (pipeline){job, NULL, a, {0}, {{NULL, NULL}, NULL, NULL, NULL}, {NULL, NULL}, 0, false};
    size_t chunk = 0;
    strided_status status = strided__cuda(OP, &pl->cu);
    if (status == STRIDED_OK)
        status = strided__staging_chunk_bytes(&chunk);
    if (status != STRIDED_OK)
        return status;
    if (chunk < (size_t)a->itemsize)
        chunk = (size_t)a->itemsize;
    pieces_init(&pl->ps, a, chunk, !to_device || host_contiguous(a));
    int nbuf = pl->ps.count > 1 ? 2 : 1;
    status = acquire(job, pl->cu, pl->ps.max_bytes, nbuf, &pl->st);
    for (int i = 0; status == STRIDED_OK && i < nbuf; i++) {
        status = STRIDED_CUDA_CHECK(OP, pl->cu->cuEventCreate(&pl->ev[i], CU_EVENT_DISABLE_TIMING));
        if (status == STRIDED_OK)
            pl->nev++;
    }
    return status;
}

/* Give everything back; after a failure, wait for the DMAs already queued
 * (they may still use the staging buffers). */
static void pipeline_close(pipeline *pl, strided_status status)
{
    if (pl->cu == NULL)
        return;
    if (status != STRIDED_OK && pl->queued)
        (void)pl->cu->cuStreamSynchronize((CUstream)pl->job->stream);
    for (int i = 0; i < pl->nev; i++)
        (void)pl->cu->cuEventDestroy(pl->ev[i]);
    release(pl->job, pl->cu, &pl->st);
}

/* Queue the DMA of piece pc between buffer b and the packed image, and
 * record b's event after it. */
static strided_status piece_dma(pipeline *pl, const piece *pc, int b, bool to_device)
{
    const strided__driver *cu = pl->cu;
    CUstream stream = (CUstream)pl->job->stream;
    size_t isz = (size_t)pl->a->itemsize;
    CUdeviceptr image = (CUdeviceptr)(pl->a->device + (uintptr_t)pc->packed * isz);
    CUdeviceptr buffer = (CUdeviceptr)(uintptr_t)pl->st.buf[b];
    size_t bytes = (size_t)pc->elems * isz;
    strided_status status =
        to_device ? STRIDED_CUDA_CHECK(OP, cu->cuMemcpyAsync(image, buffer, bytes, stream))
                  : STRIDED_CUDA_CHECK(OP, cu->cuMemcpyAsync(buffer, image, bytes, stream));
    if (status != STRIDED_OK)
        return status;
    pl->queued = true;
    return STRIDED_CUDA_CHECK(OP, cu->cuEventRecord(pl->ev[b], stream));
}

strided_status strided__staged_to_device(const strided__copy_job *job,
                                         const strided__staged_array *a)
{
    pipeline pl;
    strided_status status = pipeline_open(&pl, job, a, true);
    /* The host reads the array: after the work queued before the copy. */
    if (status == STRIDED_OK)
        status = STRIDED_CUDA_CHECK(OP, pl.cu->cuStreamSynchronize((CUstream)job->stream));
    piece pc;
    for (int64_t j = 0; status == STRIDED_OK && j < pl.ps.count; j++) {
        int b = (int)(j & 1);
        /* Buffer b held piece j - 2: wait until its DMA has read it. */
        if (j >= 2)
            status = STRIDED_CUDA_CHECK(OP, pl.cu->cuEventSynchronize(pl.ev[b]));
        if (status != STRIDED_OK)
            break;
        piece_after(&pl.ps, j == 0 ? NULL : &pc, &pc);
        status = move_piece(a, &pc, pl.st.buf[b], true);
        if (status == STRIDED_OK)
            status = piece_dma(&pl, &pc, b, true);
    }
    /* The last DMA done means every DMA is (one stream). */
    if (status == STRIDED_OK)
        status = STRIDED_CUDA_CHECK(OP, pl.cu->cuEventSynchronize(pl.ev[(pl.ps.count - 1) & 1]));
    pipeline_close(&pl, status);
    return status;
}

strided_status strided__staged_to_host(const strided__copy_job *job, const strided__staged_array *a)
{
    pipeline pl;
    strided_status status = pipeline_open(&pl, job, a, false);
    piece pcs[2];
    int64_t count = status == STRIDED_OK ? pl.ps.count : 0;
    for (int64_t j = 0; status == STRIDED_OK && j <= count; j++) {
        int b = (int)(j & 1);
        /* Buffer b was scattered (piece j - 2) in the step before. */
        if (j < count) {
            piece_after(&pl.ps, j == 0 ? NULL : &pcs[b ^ 1], &pcs[b]);
            status = piece_dma(&pl, &pcs[b], b, false);
        }
        /* Scatter piece j - 1 while piece j's DMA runs. */
        if (status == STRIDED_OK && j >= 1) {
            status = STRIDED_CUDA_CHECK(OP, pl.cu->cuEventSynchronize(pl.ev[b ^ 1]));
            if (status == STRIDED_OK)
                status = move_piece(a, &pcs[b ^ 1], pl.st.buf[b ^ 1], false);
        }
    }
    pipeline_close(&pl, status);
    return status;
}
