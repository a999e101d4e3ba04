/*
 * copy/plan.c: validating a copy and normalising its two layouts into a
 * plan (strided/copy.h), and the per-thread cache of plans that copies
 * plan through (strided__copy_plan_cached, at the end).
 *
 * The steps, on the destination's shape: broadcast the source; drop
 * extent-1 axes; flip every axis on which the destination steps backwards
 * (on both sides: which element goes where does not change); order the axes
 * by destination stride, the smallest last; merge neighbours that are
 * contiguous on both sides; then name the kernel by the last axis (and, for
 * transposes, the axis where the source is contiguous). Every product of
 * extents and strides here is bounded by a layout's offset range, which the
 * layouts' construction keeps inside int64; the merges check anyway.
 */
#include "copy/plan.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "base/base.h"
#include "copy/testing.h"
#include "memory/memory.h"

const char *strided_copy_kernel_name(strided_copy_kernel kernel)
{
    switch (kernel) {
    case STRIDED_COPY_NOTHING: return "nothing";
    case STRIDED_COPY_CONTIGUOUS: return "contiguous";
    case STRIDED_COPY_ROWS: return "rows";
    case STRIDED_COPY_TRANSPOSE: return "transpose";
    case STRIDED_COPY_BROADCAST: return "broadcast";
    case STRIDED_COPY_GATHER: return "gather";
    }
    return "unknown";
}

/* The source broadcast to the destination's shape (NumPy's rules, aligned
 * on the right): its strides per destination axis, 0 where it repeats. */
static strided_status broadcast_source(const char *op, const strided_layout *dst,
                                       const strided_layout *src, int64_t *strides)
{
    int n = dst->ndim, m = src->ndim;
    bool ok = m <= n;
    for (int i = 0; ok && i < n; i++) {
        int j = i - (n - m); /* the source axis aligned with axis i */
        if (j < 0)
            strides[i] = 0;
        else if (src->shape[j] == dst->shape[i])
            strides[i] = src->shape[j] == 1 ? 0 : src->strides[j];
        else if (src->shape[j] == 1)
            strides[i] = 0;
        else
            ok = false;
    }
    if (ok)
        return STRIDED_OK;
    char a[STRIDED_MAX_NDIM * 22 + 8], b[STRIDED_MAX_NDIM * 22 + 8];
    strided__text ta = {a, sizeof a, 0}, tb = {b, sizeof b, 0};
    strided__text_tuple(&ta, n, dst->shape);
    strided__text_tuple(&tb, m, src->shape);
    return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                         "Layouts of shapes %s and %s cannot be broadcast "
                         "together: the source's shape must broadcast to the "
                         "destination's",
                         a, b);
}

strided_status strided_copy_plan_make(const strided_layout *dst, const strided_layout *src,
                                      strided_copy_plan *out)
{
    const char *op = "copy";
    if (dst == NULL || src == NULL || out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "dst, src and out are required");
    /* Layouts filled in by hand may break the invariant that planning
     * relies on (strides it can negate, offsets it can add). The cache
     * keeps only plans made here, so a hit needs no second check. */
    const strided_layout *sides[2] = {dst, src};
    for (int k = 0; k < 2; k++)
        if (strided_layout_validate(sides[k]) != STRIDED_OK) {
            char reason[2048];
            snprintf(reason, sizeof reason, "%s", strided_last_error_reason());
            return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "invalid %s layout: %s",
                                 k == 0 ? "destination" : "source", reason);
        }
    if (dst->itemsize != src->itemsize)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "The itemsize of the destination and source "
                             "layouts must match. Got dst itemsize:%d and src "
                             "itemsize:%d",
                             (int)dst->itemsize, (int)src->itemsize);
    int64_t bstrides[STRIDED_MAX_NDIM];
    strided_status status = broadcast_source(op, dst, src, bstrides);
    if (status != STRIDED_OK)
        return status;
    if (!strided_layout_is_unique(dst)) {
        char text[2048];
        strided_layout_format(dst, text, sizeof text);
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "The destination layout is non-unique, i.e. some "
                             "elements may overlap in memory: %s",
                             text);
    }

    strided_copy_plan p;
    p.itemsize = (int)dst->itemsize;
    p.src_unit_axis = -1;
    p.dst_offset = 0;
    p.src_offset = 0;
    p.volume = strided_layout_volume(dst);
    p.ndim = 0;
    if (p.volume == 0) {
        p.kernel = STRIDED_COPY_NOTHING;
        *out = p;
        return STRIDED_OK;
    }
    /* Extent-1 axes go; backward destination axes are flipped. */
    for (int i = 0; i < dst->ndim; i++) {
        int64_t n = dst->shape[i], ds = dst->strides[i], ss = bstrides[i];
        if (n == 1)
            continue;
        if (ds < 0) {
            p.dst_offset += ds * (n - 1);
            p.src_offset += ss * (n - 1);
            ds = -ds;
            ss = -ss;
        }
        p.shape[p.ndim] = n;
        p.dst_strides[p.ndim] = ds;
        p.src_strides[p.ndim] = ss;
        p.ndim++;
    }
    /* Order by destination stride, the largest first (insertion sort: few
     * axes; the destination is unique, so no two strides tie). */
    for (int i = 1; i < p.ndim; i++) {
        int64_t n = p.shape[i], ds = p.dst_strides[i], ss = p.src_strides[i];
        int j = i - 1;
        for (; j >= 0 && p.dst_strides[j] < ds; j--) {
            p.shape[j + 1] = p.shape[j];
            p.dst_strides[j + 1] = p.dst_strides[j];
            p.src_strides[j + 1] = p.src_strides[j];
        }
        p.shape[j + 1] = n;
        p.dst_strides[j + 1] = ds;
        p.src_strides[j + 1] = ss;
    }
    /* Merge an axis into the one after it when both sides step over it as
     * one longer axis. */
    int m = 0;
    for (int i = 1; i < p.ndim; i++) {
        int64_t span_d = 0, span_s = 0;
        bool merge = !strided__mul_overflow(p.dst_strides[i], p.shape[i], &span_d) &&
                     !strided__mul_overflow(p.src_strides[i], p.shape[i], &span_s) &&
                     span_d == p.dst_strides[m] && span_s == p.src_strides[m];
        if (merge) {
            p.shape[m] *= p.shape[i];
            p.dst_strides[m] = p.dst_strides[i];
            p.src_strides[m] = p.src_strides[i];
        } else {
            m++;
            p.shape[m] = p.shape[i];
            p.dst_strides[m] = p.dst_strides[i];
            p.src_strides[m] = p.src_strides[i];
        }
    }
    if (p.ndim == 0) {
        /* One element: a contiguous run of one. */
        p.ndim = 1;
        p.shape[0] = 1;
        p.dst_strides[0] = 1;
        p.src_strides[0] = 1;
    } else {
        p.ndim = m + 1;
    }

    int last = p.ndim - 1;
    int64_t dl = p.dst_strides[last], sl = p.src_strides[last];
    if (dl == 1 && sl == 1)
        p.kernel = p.ndim == 1 ? STRIDED_COPY_CONTIGUOUS : STRIDED_COPY_ROWS;
    else if (dl == 1 && sl == 0)
        p.kernel = STRIDED_COPY_BROADCAST;
    else
        p.kernel = STRIDED_COPY_GATHER;
    if (dl == 1 && p.kernel == STRIDED_COPY_GATHER)
        for (int k = last - 1; k >= 0; k--)
            if (p.src_strides[k] == 1) {
                p.kernel = STRIDED_COPY_TRANSPOSE;
                p.src_unit_axis = k;
                break;
            }
    *out = p;
    return STRIDED_OK;
}

/*
 * The plan cache (strided__copy_plan_cached). Copies of the same two
 * layouts repeat (a loop over batches, a framework's steady state), and
 * planning costs more than the rest of a small copy's host work, so each
 * thread keeps its recent plans: 64 of them, in 32 sets of 2 entries, the
 * set chosen by the top bits of a hash of both layouts, the entry replaced
 * in a full set the one used less recently. Being per thread, it needs no lock; a
 * thread's cache is made on its first lookup and freed when it exits
 * (a pthread key's destructor).
 *
 * An entry is keyed by everything strided_copy_plan_make reads: each
 * layout's ndim, itemsize and implicit_strides (packed into one word, its
 * "head") and its shape and strides. The hash only picks the set and
 * rejects most non-matches quickly; a hit also compares every key word,
 * so two pairs with the same hash never share a plan. Only successful
 * plans are kept: a pair that fails to plan is planned again on every
 * call and reports its error each time.
 *
 * An entry's words (both layouts' shapes and strides, then the plan's
 * shape and strides) live in one allocation sized to the pair, kept and
 * reused while it is large enough. A hit copies the plan out (the header
 * and ndim axes), so a caller's plan stays valid whatever later lookups
 * do to the cache (a copy may call back into a memory resource that
 * copies too).
 */
enum { CACHE_SET_BITS = 5, CACHE_SETS = 1 << CACHE_SET_BITS, CACHE_WAYS = 2 };

/* A plan's fields other than its axes. */
typedef struct plan_header {
    strided_copy_kernel kernel;
    int ndim, itemsize, src_unit_axis;
    int64_t volume, dst_offset, src_offset;
} plan_header;

typedef struct cache_entry {
    bool live;
    uint64_t hash;
    uint64_t dst_head, src_head;
    int64_t *words;  /* dst shape, strides; src shape, strides; plan axes */
    size_t capacity; /* words allocated */
    plan_header plan;
} cache_entry;

typedef struct plan_cache {
    cache_entry entry[CACHE_SETS][CACHE_WAYS];
    uint8_t victim[CACHE_SETS]; /* the way a full set replaces next */
    uint64_t mask;
    uint64_t hits, misses, evictions;
} plan_cache;

/* The calling thread's cache (NULL: none yet), and the key whose
 * destructor frees it when the thread exits. */
static _Thread_local plan_cache *thread_cache;
static pthread_key_t cache_key;
static pthread_once_t cache_key_once = PTHREAD_ONCE_INIT;
static bool cache_key_made;

static void cache_free(plan_cache *c)
{
    if (c == NULL)
        return;
    for (int s = 0; s < CACHE_SETS; s++)
        for (int w = 0; w < CACHE_WAYS; w++)
            strided__free(c->entry[s][w].words);
    strided__free(c);
}

/* The key's destructor: runs on the exiting thread. */
static void cache_destroy(void *p)
{
    cache_free(p);
    thread_cache = NULL;
}

static void make_cache_key(void)
{
    cache_key_made = pthread_key_create(&cache_key, cache_destroy) == 0;
}

/* The calling thread's cache, made on first use; NULL when it cannot be
 * (no memory, or no key to free it with at thread exit). */
static plan_cache *cache_of_thread(void)
{
    plan_cache *c = thread_cache;
    if (c != NULL)
        return c;
    pthread_once(&cache_key_once, make_cache_key);
    if (!cache_key_made)
        return NULL;
    c = strided__malloc(sizeof *c);
    if (c == NULL)
        return NULL;
    memset(c, 0, sizeof *c);
    c->mask = UINT64_MAX;
    if (pthread_setspecific(cache_key, c) != 0) {
        strided__free(c);
        return NULL;
    }
    thread_cache = c;
    return c;
}

/* One word for the scalar fields of a layout the plan depends on. Assumes:
 * 0 <= ndim <= STRIDED_MAX_NDIM (7 bits). */
static uint64_t layout_head(const strided_layout *l)
{
    return (uint64_t)(uint32_t)l->itemsize << 32 | (uint64_t)l->implicit_strides << 8 |
           (uint64_t)l->ndim;
}

/* The hash of a pair: per axis, the extent and the rotated stride are
 * combined into one word, which is xored with the axis's position (so that
 * moving a value to another axis changes it), multiplied by an odd
 * constant and folded (high half into low, so that two words' terms differ
 * in a way sums cannot cancel by carries). The terms are summed in two
 * accumulators, one a layout: they do not depend on each other, so a long
 * key costs about a multiply per axis of throughput rather than a chain of
 * multiply latencies. A final multiply-xorshift spreads every bit into the
 * top bits, which pick the set. */
#define HASH_K1 UINT64_C(0x9e3779b97f4a7c15)
#define HASH_K2 UINT64_C(0xc2b2ae3d27d4eb4f)
#define HASH_POS UINT64_C(0x165667b19e3779f9)

static inline uint64_t hash_axis(int64_t extent, int64_t stride, int i, uint64_t k)
{
    const uint64_t s = (uint64_t)stride;
    const uint64_t t = ((uint64_t)extent ^ (s << 29 | s >> 35) ^ (uint64_t)i * HASH_POS) * k;
    return t ^ t >> 32;
}

static uint64_t hash_pair(uint64_t dst_head, uint64_t src_head, const strided_layout *dst,
                          const strided_layout *src)
{
    uint64_t a = dst_head * HASH_K1, b = src_head * HASH_K2;
    for (int i = 0; i < dst->ndim; i++)
        a += hash_axis(dst->shape[i], dst->strides[i], i, HASH_K1);
    for (int i = 0; i < src->ndim; i++)
        b += hash_axis(src->shape[i], src->strides[i], i, HASH_K2);
    uint64_t h = a ^ (b << 21 | b >> 43);
    h = (h ^ h >> 31) * HASH_K1;
    return h ^ h >> 29;
}

/* Does entry e hold the pair? */
static bool entry_matches(const cache_entry *e, uint64_t hash, uint64_t dst_head, uint64_t src_head,
                          const strided_layout *dst, const strided_layout *src)
{
    if (!e->live || e->hash != hash || e->dst_head != dst_head || e->src_head != src_head)
        return false;
    const int nd = dst->ndim, ns = src->ndim;
    const int64_t *w = e->words;
    uint64_t diff = 0;
    for (int i = 0; i < nd; i++)
        diff |= (uint64_t)(w[i] ^ dst->shape[i]) | (uint64_t)(w[nd + i] ^ dst->strides[i]);
    w += 2 * nd;
    for (int i = 0; i < ns; i++)
        diff |= (uint64_t)(w[i] ^ src->shape[i]) | (uint64_t)(w[ns + i] ^ src->strides[i]);
    return diff == 0;
}

/* Write the plan entry e keeps into out: the header and ndim axes. */
static void plan_of_entry(const cache_entry *e, int key_words, strided_copy_plan *out)
{
    const plan_header *h = &e->plan;
    const int64_t *axes = e->words + key_words;
    const int n = h->ndim;
    out->kernel = h->kernel;
    out->ndim = n;
    out->itemsize = h->itemsize;
    out->src_unit_axis = h->src_unit_axis;
    out->volume = h->volume;
    out->dst_offset = h->dst_offset;
    out->src_offset = h->src_offset;
    /* Plans have few axes: a loop beats three calls to memcpy. */
    for (int i = 0; i < n; i++) {
        out->shape[i] = axes[i];
        out->dst_strides[i] = axes[n + i];
        out->src_strides[i] = axes[2 * n + i];
    }
}

/* Keep plan p for the pair in entry e; false (and e left empty) when its
 * words cannot be allocated. */
static bool fill_entry(cache_entry *e, uint64_t hash, uint64_t dst_head, uint64_t src_head,
                       const strided_layout *dst, const strided_layout *src,
                       const strided_copy_plan *p)
{
    const int nd = dst->ndim, ns = src->ndim;
    const size_t key_words = 2 * (size_t)nd + 2 * (size_t)ns;
    const size_t need = key_words + 3 * (size_t)p->ndim;
    e->live = false;
    if (need > e->capacity) {
        /* A larger allocation; a smaller pair later reuses it. */
        strided__free(e->words);
        e->capacity = 0;
        e->words = strided__malloc(need * sizeof(int64_t));
        if (e->words == NULL)
            return false;
        e->capacity = need;
    }
    int64_t *w = e->words;
    const size_t nb = (size_t)nd * sizeof(int64_t), sb = (size_t)ns * sizeof(int64_t);
    const size_t pb = (size_t)p->ndim * sizeof(int64_t);
    memcpy(w, dst->shape, nb);
    memcpy(w + nd, dst->strides, nb);
    memcpy(w + 2 * nd, src->shape, sb);
    memcpy(w + 2 * nd + ns, src->strides, sb);
    w += key_words;
    memcpy(w, p->shape, pb);
    memcpy(w + p->ndim, p->dst_strides, pb);
    memcpy(w + 2 * p->ndim, p->src_strides, pb);
    e->hash = hash;
    e->dst_head = dst_head;
    e->src_head = src_head;
    e->plan = (plan_header){p->kernel, p->ndim,       p->itemsize,  p->src_unit_axis,
                            p->volume, p->dst_offset, p->src_offset};
    e->live = true;
    return true;
}

static bool valid_ndim(const strided_layout *l)
{
    return l->ndim >= 0 && l->ndim <= STRIDED_MAX_NDIM;
}

strided_status strided__copy_plan_cached(const strided_layout *dst, const strided_layout *src,
                                         strided_copy_plan *out)
{
    /* What the cache cannot key goes to the planner, which reports it. */
    if (dst == NULL || src == NULL || out == NULL || !valid_ndim(dst) || !valid_ndim(src))
        return strided_copy_plan_make(dst, src, out);
    plan_cache *c = cache_of_thread();
    if (c == NULL)
        return strided_copy_plan_make(dst, src, out);
    const uint64_t dh = layout_head(dst), sh = layout_head(src);
    const uint64_t hash = hash_pair(dh, sh, dst, src) & c->mask;
    const unsigned set = (unsigned)(hash >> (64 - CACHE_SET_BITS));
    cache_entry *ways = c->entry[set];
    const int key_words = 2 * dst->ndim + 2 * src->ndim;
    for (int w = 0; w < CACHE_WAYS; w++)
        if (entry_matches(&ways[w], hash, dh, sh, dst, src)) {
            plan_of_entry(&ways[w], key_words, out);
            c->victim[set] = (uint8_t)(w ^ 1);
            c->hits++;
            return STRIDED_OK;
        }
    strided_status status = strided_copy_plan_make(dst, src, out);
    if (status != STRIDED_OK)
        return status;
    c->misses++;
    int w = !ways[0].live ? 0 : !ways[1].live ? 1 : c->victim[set];
    if (ways[w].live)
        c->evictions++;
    if (fill_entry(&ways[w], hash, dh, sh, dst, src, out))
        c->victim[set] = (uint8_t)(w ^ 1);
    return STRIDED_OK;
}

void strided__copy_plan_cache_stats(strided__plan_cache_stats *out)
{
    const plan_cache *c = thread_cache;
    strided__plan_cache_stats s = {0, 0, 0, 0, CACHE_SETS * CACHE_WAYS};
    if (c != NULL) {
        s.hits = c->hits;
        s.misses = c->misses;
        s.evictions = c->evictions;
        for (int i = 0; i < CACHE_SETS; i++)
            for (int w = 0; w < CACHE_WAYS; w++)
                s.entries += c->entry[i][w].live;
    }
    *out = s;
}

void strided__copy_plan_cache_clear(void)
{
    plan_cache *c = thread_cache;
    if (c == NULL)
        return;
    /* The key forgets it first, so that the destructor cannot free it
     * again at thread exit. */
    (void)pthread_setspecific(cache_key, NULL);
    thread_cache = NULL;
    cache_free(c);
}

void strided__copy_plan_cache_set_hash_mask(uint64_t mask)
{
    /* Plans kept under another mask would sit in the wrong sets: start
     * empty. */
    strided__copy_plan_cache_clear();
    plan_cache *c = cache_of_thread();
    if (c != NULL)
        c->mask = mask;
}

strided_status strided__copy_plan_overflow(const strided_copy_plan *p, const int64_t *strides)
{
    char shape[STRIDED_MAX_NDIM * 22 + 8], steps[STRIDED_MAX_NDIM * 22 + 8];
    strided__text a = {shape, sizeof shape, 0}, b = {steps, sizeof steps, 0};
    strided__text_tuple(&a, p->ndim, p->shape);
    strided__text_tuple(&b, p->ndim, strides);
    return strided__fail(STRIDED_ERR_OVERFLOW, "copy",
                         "the bytes of a copy of %s:%s (itemsize %d) do not fit in int64", shape,
                         steps, p->itemsize);
}

strided_status strided__copy_plan_reach(const strided_copy_plan *p, const int64_t *strides,
                                        int64_t *lo, int64_t *hi)
{
    int64_t l = 0, h = 0, r = 0, t = 0;
    bool overflow = false;
    for (int k = 0; k < p->ndim && !overflow; k++)
        overflow = strided__mul_overflow(strides[k], p->shape[k] - 1, &r) ||
                   strided__add_overflow(r < 0 ? l : h, r, r < 0 ? &l : &h);
    if (overflow || strided__mul_overflow(l, p->itemsize, &t) || t == INT64_MIN ||
        strided__add_overflow(h, 1, &t) || strided__mul_overflow(t, p->itemsize, &t))
        return strided__copy_plan_overflow(p, strides);
    *lo = l;
    *hi = h;
    return STRIDED_OK;
}

strided_status strided__copy_packing_make(const strided_copy_plan *p, strided__copy_packing *out)
{
    int64_t shape[STRIDED_MAX_NDIM];
    strided_layout src, tmp, dst;
    for (int k = 0; k < p->ndim; k++)
        shape[k] = p->src_strides[k] == 0 ? 1 : p->shape[k];
    strided_status status = strided_layout_init(&src, p->ndim, shape, p->src_strides, p->itemsize);
    if (status == STRIDED_OK)
        status = strided_layout_init_dense(&tmp, p->ndim, shape, p->itemsize, STRIDED_ORDER_C, 0,
                                           NULL);
    if (status == STRIDED_OK)
        status = strided_layout_init(&dst, p->ndim, p->shape, p->dst_strides, p->itemsize);
    if (status == STRIDED_OK)
        status = strided_copy_plan_make(&tmp, &src, &out->pack);
    if (status == STRIDED_OK)
        status = strided_copy_plan_make(&dst, &tmp, &out->unpack);
    if (status != STRIDED_OK)
        return status;
    int64_t bytes = 0;
    if (strided__mul_overflow(strided_layout_volume(&tmp), p->itemsize, &bytes))
        return strided__copy_plan_overflow(p, p->src_strides);
    out->bytes = (size_t)bytes;
    return STRIDED_OK;
}
