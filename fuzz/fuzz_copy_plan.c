/*
 * fuzz_copy_plan.c: the copy planner (strided_copy_plan_make) and the
 * per-thread plan cache (strided__copy_plan_cached, src/copy/plan.h).
 *
 * An input is a few (dst, src) pairs of small layouts: src has dst's
 * shape, a shape that broadcasts to it, or any shape; either may have
 * reversed axes (negative strides, a slice offset), zero or gapped strides.
 * Each pair is planned directly and through the cache (twice: a miss, then
 * a hit), and the cache's hash may be masked so that every pair collides.
 *
 * Checked: planning succeeds exactly when the itemsizes match, the source
 * broadcasts and the destination is unique (the library's own test; a
 * destination it calls unique must be unique by brute force); a failure
 * leaves the plan untouched and sets a message; on success the plan's
 * header is consistent (volume, itemsize, ndim, destination strides >= 0
 * and non-increasing, the kernel its last axis calls for) and, enumerating
 * the plan's index space, the plan reaches every destination element
 * exactly once and pairs it with the source element a copy must read (the
 * source broadcast, element for element); the cache answers what the
 * planner answers, field for field and message for message.
 */
#include "copy/plan.h"
#include "copy/testing.h"
#include "fuzz_check.h"
#include "fuzz_input.h"

static const fuzz_limits limits = {
    .max_ndim = 5,
    .wide_ndim = false,
    .max_extent = 4,
    .max_long = 40,
    .max_stride = 9,
    .max_itemsize = 8,
    .edges = false,
};

#define MAX_PAIRS 6

/* Offsets of the destination's elements (from its element 0) with their
 * linear index, sorted by offset, for lookup. */
typedef struct entry {
    int64_t offset;
    int64_t index;
} entry;

static entry dst_entries[FUZZ_ENUM_LIMIT];
static bool seen[FUZZ_ENUM_LIMIT];
static int64_t scratch[FUZZ_ENUM_LIMIT];

static int cmp_entry(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    return (x->offset > y->offset) - (x->offset < y->offset);
}

static void unravel(int ndim, const int64_t *shape, int64_t k, int64_t *idx)
{
    for (int i = ndim - 1; i >= 0; i--) {
        idx[i] = k % shape[i];
        k /= shape[i];
    }
}

/* The plan's own consistency. */
static void check_header(const strided_copy_plan *p, const strided_layout *dst, const char *ctx)
{
    int64_t volume = strided_layout_volume(dst);
    FUZZ_REQUIRE(p->volume == volume && p->itemsize == dst->itemsize,
                 "plan volume %" PRId64 " itemsize %d: %s", p->volume, p->itemsize, ctx);
    if (volume == 0) {
        FUZZ_REQUIRE(p->kernel == STRIDED_COPY_NOTHING, "an empty copy's kernel is %s: %s",
                     strided_copy_kernel_name(p->kernel), ctx);
        return;
    }
    FUZZ_REQUIRE(p->ndim >= 1 && p->ndim <= STRIDED_MAX_NDIM && p->kernel != STRIDED_COPY_NOTHING,
                 "plan ndim %d kernel %s for %" PRId64 " elements: %s", p->ndim,
                 strided_copy_kernel_name(p->kernel), volume, ctx);
    fuzz_i128 product = 1;
    for (int k = 0; k < p->ndim; k++) {
        product *= p->shape[k];
        FUZZ_REQUIRE(p->shape[k] >= 1, "plan extent %d is %" PRId64 ": %s", k, p->shape[k], ctx);
        FUZZ_REQUIRE(p->dst_strides[k] >= 0, "plan destination stride %d is negative: %s", k, ctx);
        FUZZ_REQUIRE(k == 0 || p->dst_strides[k] <= p->dst_strides[k - 1],
                     "plan destination strides are not in non-increasing order: %s", ctx);
    }
    FUZZ_REQUIRE(product == volume, "the plan's extents multiply to another volume: %s", ctx);
    int last = p->ndim - 1;
    int64_t dl = p->dst_strides[last], sl = p->src_strides[last];
    strided_copy_kernel want;
    if (dl == 1 && sl == 1)
        want = p->ndim == 1 ? STRIDED_COPY_CONTIGUOUS : STRIDED_COPY_ROWS;
    else if (dl == 1 && sl == 0)
        want = STRIDED_COPY_BROADCAST;
    else
        want = STRIDED_COPY_GATHER;
    if (p->kernel == STRIDED_COPY_TRANSPOSE) {
        int u = p->src_unit_axis;
        FUZZ_REQUIRE(want == STRIDED_COPY_GATHER && dl == 1 && u >= 0 && u < last &&
                         p->src_strides[u] == 1,
                     "a transpose plan without its unit axis (src_unit_axis %d): %s", u, ctx);
    } else {
        FUZZ_REQUIRE(p->kernel == want && p->src_unit_axis == -1,
                     "the plan's kernel is %s (src_unit_axis %d), its last axis calls for %s: %s",
                     strided_copy_kernel_name(p->kernel), p->src_unit_axis,
                     strided_copy_kernel_name(want), ctx);
        /* Where the source has stride 1 on another axis, the destination's
         * unit stride makes it a transpose. */
        bool unit = false;
        for (int k = 0; k < last; k++)
            unit = unit || p->src_strides[k] == 1;
        FUZZ_REQUIRE(!(want == STRIDED_COPY_GATHER && dl == 1 && unit),
                     "a gather plan that is a transpose: %s", ctx);
    }
}

/* Enumerate the plan and match it with the layouts, element by element. */
static void check_coverage(const strided_copy_plan *p, const strided_layout *dst,
                           const strided_layout *src, const char *ctx)
{
    int64_t volume = p->volume;
    if (volume == 0 || volume > FUZZ_ENUM_LIMIT)
        return;
    int64_t j[STRIDED_MAX_NDIM] = {0}, q[STRIDED_MAX_NDIM];
    int64_t k = 0;
    do {
        dst_entries[k].offset = (int64_t)(fuzz_offset(dst, j) - dst->slice_offset);
        dst_entries[k].index = k;
        k++;
    } while (fuzz_next_index(dst->ndim, dst->shape, j));
    qsort(dst_entries, (size_t)volume, sizeof dst_entries[0], cmp_entry);
    memset(seen, 0, sizeof(bool) * (size_t)volume);

    int64_t i[STRIDED_MAX_NDIM] = {0};
    int64_t n = 0;
    do {
        fuzz_i128 doff = p->dst_offset, soff = p->src_offset;
        for (int a = 0; a < p->ndim; a++) {
            doff += fuzz_mul(i[a], p->dst_strides[a]);
            soff += fuzz_mul(i[a], p->src_strides[a]);
        }
        char d[64];
        fuzz_i128_text(doff, d, sizeof d);
        entry key = {(int64_t)doff, 0};
        const entry *e = fuzz_fits64(doff)
                             ? bsearch(&key, dst_entries, (size_t)volume, sizeof key, cmp_entry)
                             : NULL;
        FUZZ_REQUIRE(e != NULL,
                     "plan element %" PRId64 " writes destination offset %s, which "
                     "is no destination element: %s",
                     n, d, ctx);
        FUZZ_REQUIRE(!seen[e->index],
                     "plan element %" PRId64 " writes destination element %" PRId64
                     " a second time: %s",
                     n, e->index, ctx);
        seen[e->index] = true;
        unravel(dst->ndim, dst->shape, e->index, j);
        fuzz_broadcast_index(dst->ndim, j, src, q);
        fuzz_i128 want = fuzz_offset(src, q) - src->slice_offset;
        char s[64], w[64];
        fuzz_i128_text(soff, s, sizeof s);
        fuzz_i128_text(want, w, sizeof w);
        FUZZ_REQUIRE(soff == want,
                     "plan element %" PRId64 " reads source offset %s for "
                     "destination element %" PRId64 ", which must read %s: %s",
                     n, s, e->index, w, ctx);
        n++;
    } while (fuzz_next_index(p->ndim, p->shape, i));
    FUZZ_REQUIRE(n == volume, "the plan has %" PRId64 " elements for %" PRId64 ": %s", n, volume,
                 ctx);
}

/* The plan cache gives what the planner gives. */
static void check_cached(const strided_layout *dst, const strided_layout *src, strided_status st,
                         const strided_copy_plan *p, const char *msg, const char *ctx)
{
    for (int round = 0; round < 2; round++) {
        strided_copy_plan c;
        memset(&c, 0xA5, sizeof c);
        fuzz_mark_error();
        strided_status cst = strided__copy_plan_cached(dst, src, &c);
        FUZZ_REQUIRE(cst == st, "the plan cache says %s, the planner %s (round %d): %s",
                     strided_status_name(cst), strided_status_name(st), round, ctx);
        if (st != STRIDED_OK) {
            FUZZ_REQUIRE(strcmp(strided_last_error(), msg) == 0,
                         "the plan cache's message "
                         "\"%s\" is not the planner's \"%s\": %s",
                         strided_last_error(), msg, ctx);
            continue;
        }
        FUZZ_REQUIRE(c.kernel == p->kernel && c.ndim == p->ndim && c.itemsize == p->itemsize &&
                         c.src_unit_axis == p->src_unit_axis && c.volume == p->volume &&
                         c.dst_offset == p->dst_offset && c.src_offset == p->src_offset,
                     "the plan cache's header differs from the planner's (round %d): %s", round,
                     ctx);
        for (int k = 0; k < p->ndim; k++)
            FUZZ_REQUIRE(c.shape[k] == p->shape[k] && c.dst_strides[k] == p->dst_strides[k] &&
                             c.src_strides[k] == p->src_strides[k],
                         "the plan cache's axis %d differs from the planner's (round %d): %s", k,
                         round, ctx);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input in = fuzz_input_make(data, size);
    /* Each input starts from an empty cache, so that it reproduces alone. */
    strided__copy_plan_cache_clear();
    uint8_t head = fuzz_u8(&in);
    if (head & 1)
        strided__copy_plan_cache_set_hash_mask(0);
    static char msg[4096];
    for (int pair = 0; pair < MAX_PAIRS && !fuzz_exhausted(&in); pair++) {
        strided_layout dst, src;
        if (!fuzz_copy_pair(&in, &limits, &dst, &src))
            continue;
        char ctx[7000];
        fuzz_text a, b;
        snprintf(ctx, sizeof ctx, "pair %d: dst %s, src %s", pair, fuzz_show(&dst, &a),
                 fuzz_show(&src, &b));
        fuzz_check_invariant(&dst, ctx);
        fuzz_check_invariant(&src, ctx);
        int64_t dvol = strided_layout_volume(&dst);
        if (dvol > 0 && dvol <= FUZZ_ENUM_LIMIT && strided_layout_is_unique(&dst))
            FUZZ_REQUIRE(fuzz_distinct(&dst, scratch),
                         "is_unique is true for a destination "
                         "whose elements share an offset: %s",
                         ctx);

        strided_copy_plan p, before;
        memset(&p, 0xA5, sizeof p);
        memcpy(&before, &p, sizeof p);
        fuzz_mark_error();
        strided_status st = strided_copy_plan_make(&dst, &src, &p);
        fuzz_check_outcome("copy_plan_make", st, fuzz_plan_expect(&dst, &src), &p, &before,
                           sizeof p, ctx);
        snprintf(msg, sizeof msg, "%s", strided_last_error());
        if (st == STRIDED_OK) {
            check_header(&p, &dst, ctx);
            check_coverage(&p, &dst, &src, ctx);
        }
        check_cached(&dst, &src, st, &p, msg, ctx);
    }
    strided__copy_plan_cache_set_hash_mask(UINT64_MAX);
    return 0;
}
