/*
 * Tests of strided/layout.h, part 4: a brute-force oracle on random small
 * layouts. Every element offset is enumerated, and the queries and
 * manipulations are checked against the enumeration:
 *  - offset_bounds, required_size_in_bytes, is_unique, is_contiguous_c/_f/
 *    _any and is_dense against the offsets themselves;
 *  - flatten, coalesce, squeeze, unsqueeze and reshape to (volume,) keep the
 *    C-order sequence of offsets exactly; permute, slice and broadcast give
 *    the offsets of the selected input indices;
 *  - chains of permute / slice / squeeze / unsqueeze / reshape / flatten from
 *    dense layouts stay unique (no operation that keeps a view of the same
 *    memory can make two indices share an element).
 * The generator is seeded, so a failure reproduces.
 */
#include "test_util.h"

#include <stdlib.h>

#define MAXE 4096 /* enough offsets for every layout generated here */

/* The random stream, fixed seed (test_util.h). */
static uint64_t rng = UINT64_C(0x2545F4914F6CDD1D);
#define rnext() xorshift_next(&rng)
#define rint_in(lo, hi) xorshift_in(&rng, (lo), (hi))

static const char *txt(const strided_layout *l)
{
    static char buf[4][512];
    static int i;
    i = (i + 1) % 4;
    layout_text(l, buf[i], sizeof buf[i]);
    return buf[i];
}

/* Advance a multi-index in C order (last axis fastest) or F order; false
 * once it wraps around. */
static bool next_index(int ndim, const int64_t *shape, int64_t *idx, bool f)
{
    int k;
    for (k = 0; k < ndim; k++) {
        int a = f ? k : ndim - 1 - k;
        if (++idx[a] < shape[a])
            return true;
        idx[a] = 0;
    }
    return false;
}

static int64_t offset_at(const strided_layout *l, const int64_t *idx)
{
    int64_t o = l->slice_offset;
    int k;
    for (k = 0; k < l->ndim; k++)
        o += idx[k] * l->strides[k];
    return o;
}

static int64_t volume_of(int ndim, const int64_t *shape)
{
    int64_t v = 1;
    int k;
    for (k = 0; k < ndim; k++)
        v *= shape[k];
    return v;
}

/* Every element offset of l, in C or F index order; returns the count. */
static int enum_offsets(const strided_layout *l, bool f, int64_t *out)
{
    int64_t idx[STRIDED_MAX_NDIM] = {0};
    int n = 0;

    if (volume_of(l->ndim, l->shape) == 0)
        return 0;
    do {
        if (n >= MAXE)
            fail_msg("layout %s has too many elements", txt(l));
        out[n++] = offset_at(l, idx);
    } while (next_index(l->ndim, l->shape, idx, f));
    return n;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static bool all_distinct(const int64_t *o, int n)
{
    int64_t s[MAXE];
    int k;
    memcpy(s, o, (size_t)n * sizeof *o);
    qsort(s, (size_t)n, sizeof *s, cmp_i64);
    for (k = 1; k < n; k++)
        if (s[k] == s[k - 1])
            return false;
    return true;
}

static bool consecutive(const int64_t *o, int n)
{
    int k;
    for (k = 1; k < n; k++)
        if (o[k] != o[0] + k)
            return false;
    return true;
}

static bool arithmetic(const int64_t *o, int n)
{
    int k;
    for (k = 2; k < n; k++)
        if (o[k] - o[k - 1] != o[1] - o[0])
            return false;
    return true;
}

static void assert_same_seq(const int64_t *got, int ngot, const int64_t *want, int nwant,
                            const char *op, const strided_layout *in, const strided_layout *out)
{
    int k;
    if (ngot != nwant)
        fail_msg("%s of %s gave %s with %d elements, expected %d", op, txt(in), txt(out), ngot,
                 nwant);
    for (k = 0; k < ngot; k++)
        if (got[k] != want[k])
            fail_msg("%s of %s gave %s: element %d at offset %lld, expected "
                     "%lld",
                     op, txt(in), txt(out), k, (long long)got[k], (long long)want[k]);
}

/* The C-order offsets of out must be exactly want[0..n). */
static void check_seq(const strided_layout *in, const strided_layout *out, const int64_t *want,
                      int n, const char *op)
{
    int64_t got[MAXE];
    int ngot = enum_offsets(out, false, got);
    assert_same_seq(got, ngot, want, n, op, in, out);
}

static void check_queries(const strided_layout *l)
{
    int64_t o[MAXE], fo[MAXE], lo, hi, size, bytes[STRIDED_MAX_NDIM];
    int n = enum_offsets(l, false, o), k, order[STRIDED_MAX_NDIM];
    bool bcast = false, positive = true;
    strided_status st;

    if (strided_layout_volume(l) != n)
        fail_msg("%s: volume %lld, enumerated %d", txt(l), (long long)strided_layout_volume(l), n);
    for (k = 0; k < l->ndim; k++) {
        if (l->strides[k] == 0 && l->shape[k] > 1)
            bcast = true;
        if (l->shape[k] > 1 && l->strides[k] <= 0)
            positive = false;
    }

    strided_layout_offset_bounds(l, &lo, &hi);
    if (n == 0) {
        if (lo != 0 || hi != -1)
            fail_msg("%s: offset_bounds (%lld,%lld), expected (0,-1)", txt(l), (long long)lo,
                     (long long)hi);
    } else {
        int64_t mn = o[0], mx = o[0];
        for (k = 1; k < n; k++) {
            mn = o[k] < mn ? o[k] : mn;
            mx = o[k] > mx ? o[k] : mx;
        }
        if (lo != mn || hi != mx)
            fail_msg("%s: offset_bounds (%lld,%lld), expected (%lld,%lld)", txt(l), (long long)lo,
                     (long long)hi, (long long)mn, (long long)mx);
    }

    size = -7;
    st = strided_layout_required_size_in_bytes(l, &size);
    if (n == 0) {
        if (st != STRIDED_OK || size != 0)
            fail_msg("%s: required size status %d size %lld, expected 0", txt(l), (int)st,
                     (long long)size);
    } else if (lo < 0) {
        if (st != STRIDED_ERR_INVALID_ARGUMENT)
            fail_msg("%s: required size with min offset %lld gave status %d", txt(l), (long long)lo,
                     (int)st);
    } else if (st != STRIDED_OK || size != (hi + 1) * l->itemsize) {
        fail_msg("%s: required size status %d size %lld, expected %lld", txt(l), (int)st,
                 (long long)size, (long long)((hi + 1) * l->itemsize));
    }

    if (strided_layout_is_unique(l)) {
        if (!all_distinct(o, n))
            fail_msg("%s: is_unique but offsets repeat", txt(l));
    }
    if (n == 0 && !strided_layout_is_unique(l))
        fail_msg("%s: empty layout not unique", txt(l));
    if (n > 0 && bcast && strided_layout_is_unique(l))
        fail_msg("%s: stride-0 axis of extent > 1 but is_unique", txt(l));

    if (strided_layout_is_contiguous_c(l) != (n == 0 || consecutive(o, n)))
        fail_msg("%s: is_contiguous_c %d", txt(l), strided_layout_is_contiguous_c(l));
    enum_offsets(l, true, fo);
    if (strided_layout_is_contiguous_f(l) != (n == 0 || consecutive(fo, n)))
        fail_msg("%s: is_contiguous_f %d", txt(l), strided_layout_is_contiguous_f(l));
    {
        bool any = n == 0 || (positive && all_distinct(o, n) && hi - lo == n - 1);
        if (strided_layout_is_contiguous_any(l) != any)
            fail_msg("%s: is_contiguous_any %d, expected %d", txt(l),
                     strided_layout_is_contiguous_any(l), any);
        if (strided_layout_is_dense(l) != (any && l->slice_offset == 0))
            fail_msg("%s: is_dense %d", txt(l), strided_layout_is_dense(l));
        if (strided_layout_is_contiguous_c(l) && !any)
            fail_msg("%s: C-contiguous but not contiguous in any order", txt(l));
        if (strided_layout_is_contiguous_f(l) && !any)
            fail_msg("%s: F-contiguous but not contiguous in any order", txt(l));
    }

    strided_layout_stride_order(l, order);
    {
        bool seen[STRIDED_MAX_NDIM] = {false};
        for (k = 0; k < l->ndim; k++) {
            if (order[k] < 0 || order[k] >= l->ndim || seen[order[k]])
                fail_msg("%s: stride_order is not a permutation", txt(l));
            seen[order[k]] = true;
            if (l->implicit_strides && order[k] != k)
                fail_msg("%s: implicit stride_order is not the identity", txt(l));
            if (k > 0 && !l->implicit_strides) {
                int a = order[k - 1], b = order[k];
                int64_t sa = llabs(l->strides[a]), sb = llabs(l->strides[b]);
                bool ok = sa > sb || (sa == sb && (l->shape[a] > l->shape[b] ||
                                                   (l->shape[a] == l->shape[b] && a < b)));
                if (!ok)
                    fail_msg("%s: stride_order puts axis %d before %d", txt(l), a, b);
            }
        }
    }

    assert_ok(strided_layout_strides_in_bytes(l, bytes));
    for (k = 0; k < l->ndim; k++)
        assert_i64(bytes[k], l->strides[k] * l->itemsize);

    {
        /* Rebuilt separately, the layout is equal and hashes equal: by init
         * when it has no slice offset, else by an empty slicing expression
         * (which keeps explicit strides). */
        strided_layout again;
        if (l->slice_offset == 0)
            again = mk(l->ndim, l->shape, l->implicit_strides ? NULL : l->strides, l->itemsize);
        else
            assert_ok(strided_layout_slice(l, 0, NULL, &again));
        if (l->slice_offset == 0 || !l->implicit_strides) {
            assert_layout_eq(again, *l);
            assert_int_equal(strided_layout_hash(&again), strided_layout_hash(l));
        }
    }
}

static void check_flatten_coalesce_reshape(const strided_layout *l)
{
    int64_t o[MAXE];
    int n = enum_offsets(l, false, o), k;
    strided_layout f, m, c, r;
    uint64_t mask = 0, fmask = 1;
    int64_t vol = n;
    strided_status st;

    assert_ok(strided_layout_flatten(l, 0, -1, &f));
    check_seq(l, &f, o, n, "flatten");
    if (l->ndim == 0 && (f.ndim != 1 || f.shape[0] != 1 || f.strides[0] != 1))
        fail_msg("flatten of 0-d %s gave %s", txt(l), txt(&f));
    assert_ok(strided_layout_flattened_axis_mask(l, &mask));
    assert_ok(strided_layout_flatten_mask(l, mask, &m));
    if (!strided_layout_equal(&m, &f))
        fail_msg("%s: flatten_mask(mask) gave %s, flatten gave %s", txt(l), txt(&m), txt(&f));
    assert_ok(strided_layout_flattened_axis_mask(&f, &fmask));
    if (fmask != 0)
        fail_msg("%s: flattened %s has mask 0x%llx", txt(l), txt(&f), (unsigned long long)fmask);

    assert_ok(strided_layout_coalesce(l, &c));
    if (n == 0) {
        if (c.ndim != 1 || c.shape[0] != 0 || c.strides[0] != 0)
            fail_msg("coalesce of empty %s gave %s", txt(l), txt(&c));
    } else {
        check_seq(l, &c, o, n, "coalesce");
        if (n == 1 && c.ndim != 0)
            fail_msg("coalesce of one-element %s gave %s", txt(l), txt(&c));
        for (k = 0; k < c.ndim; k++) {
            if (c.shape[k] == 1)
                fail_msg("coalesce of %s gave %s with a unit axis", txt(l), txt(&c));
            if (k > 0 && c.strides[k - 1] == c.strides[k] * c.shape[k])
                fail_msg("coalesce of %s gave %s with mergeable axes", txt(l), txt(&c));
        }
    }

    st = strided_layout_reshape(l, 1, &vol, &r);
    if (n <= 1 || arithmetic(o, n)) {
        if (st != STRIDED_OK)
            fail_msg("reshape of %s to (%d,) failed: %s", txt(l), n, strided_last_error());
        if (n == 0) {
            if (r.strides[0] != 0)
                fail_msg("reshape of empty %s gave %s", txt(l), txt(&r));
        } else {
            check_seq(l, &r, o, n, "reshape");
        }
        /* The single flattened group says the same. */
        if (f.ndim != 1 && n > 1)
            fail_msg("%s reshapes to 1-d but flattens to %s", txt(l), txt(&f));
    } else if (st != STRIDED_ERR_INVALID_ARGUMENT) {
        fail_msg("reshape of %s to (%d,) gave status %d, expected a refusal", txt(l), n, (int)st);
    }
}

static void check_squeeze_unsqueeze(const strided_layout *l)
{
    int64_t o[MAXE];
    int n = enum_offsets(l, false, o);
    strided_layout s, u;
    int axes[2], nax, k;

    assert_ok(strided_layout_squeeze(l, &s));
    if (n == 0) {
        if (s.ndim != 1 || s.shape[0] != 0 || s.strides[0] != 0)
            fail_msg("squeeze of empty %s gave %s", txt(l), txt(&s));
    } else {
        check_seq(l, &s, o, n, "squeeze");
        for (k = 0; k < s.ndim; k++)
            if (s.shape[k] == 1)
                fail_msg("squeeze of %s left a unit axis: %s", txt(l), txt(&s));
    }

    nax = (int)rint_in(1, 2);
    axes[0] = (int)rint_in(0, l->ndim + nax - 1);
    do
        axes[1] = (int)rint_in(0, l->ndim + nax - 1);
    while (nax == 2 && axes[1] == axes[0]);
    assert_ok(strided_layout_unsqueeze(l, nax, axes, &u));
    assert_int_equal(u.ndim, l->ndim + nax);
    check_seq(l, &u, o, n, "unsqueeze");
}

static void check_permute(const strided_layout *l)
{
    int p[STRIDED_MAX_NDIM], k;
    int64_t want[MAXE], j[STRIDED_MAX_NDIM] = {0}, i[STRIDED_MAX_NDIM];
    strided_layout out;
    int n = 0;

    for (k = 0; k < l->ndim; k++)
        p[k] = k;
    for (k = l->ndim - 1; k > 0; k--) {
        int r = (int)rint_in(0, k), t = p[k];
        p[k] = p[r];
        p[r] = t;
    }
    assert_ok(strided_layout_permute(l, l->ndim, p, &out));
    for (k = 0; k < l->ndim; k++)
        if (out.shape[k] != l->shape[p[k]])
            fail_msg("permute of %s gave %s", txt(l), txt(&out));
    if (strided_layout_volume(l) > 0) {
        do {
            for (k = 0; k < l->ndim; k++)
                i[p[k]] = j[k];
            want[n++] = offset_at(l, i);
        } while (next_index(out.ndim, out.shape, j, false));
    }
    check_seq(l, &out, want, n, "permute");
}

/* Python's slice.indices and the length of the slice. */
static int64_t slice_indices(int64_t len, const strided_index *x, int64_t *start)
{
    int64_t step = x->step, lower = step > 0 ? 0 : -1;
    int64_t upper = step > 0 ? len : len - 1, b, e;

    if (!x->has_start) {
        b = step < 0 ? upper : lower;
    } else {
        b = x->start;
        if (b < 0) {
            b += len;
            if (b < lower)
                b = lower;
        } else if (b > upper) {
            b = upper;
        }
    }
    if (!x->has_stop) {
        e = step < 0 ? lower : upper;
    } else {
        e = x->stop;
        if (e < 0) {
            e += len;
            if (e < lower)
                e = lower;
        } else if (e > upper) {
            e = upper;
        }
    }
    *start = b;
    if (step > 0)
        return b < e ? (e - b - 1) / step + 1 : 0;
    return e < b ? (b - e - 1) / (-step) + 1 : 0;
}

static strided_index random_index(int64_t extent)
{
    strided_index x;
    if (extent > 0 && rint_in(0, 2) == 0)
        return strided_index_at(rint_in(-extent, extent - 1));
    do
        x = s_any(rint_in(0, 2) > 0, rint_in(-6, 6), rint_in(0, 2) > 0, rint_in(-6, 6),
                  rint_in(-3, 3));
    while (x.step == 0);
    return x;
}

static void check_slice(const strided_layout *l, strided_layout *out_sliced)
{
    strided_index idx[STRIDED_MAX_NDIM];
    int64_t start[STRIDED_MAX_NDIM], len[STRIDED_MAX_NDIM];
    int64_t want[MAXE], j[STRIDED_MAX_NDIM] = {0}, i[STRIDED_MAX_NDIM];
    int64_t oshape[STRIDED_MAX_NDIM];
    int nidx = (int)rint_in(0, l->ndim), k, ond = 0, n = 0;
    strided_layout out;
    bool empty = false;

    for (k = 0; k < nidx; k++) {
        idx[k] = random_index(l->shape[k]);
        if (idx[k].kind == STRIDED_INDEX_INTEGER) {
            start[k] = idx[k].start < 0 ? idx[k].start + l->shape[k] : idx[k].start;
        } else {
            len[k] = slice_indices(l->shape[k], &idx[k], &start[k]);
            oshape[ond++] = len[k];
            /* Only a slice that selects nothing zeroes the strides. */
            empty = empty || len[k] == 0;
        }
    }
    for (k = nidx; k < l->ndim; k++)
        oshape[ond++] = l->shape[k];
    assert_ok(strided_layout_slice(l, nidx, idx, &out));
    if (out.ndim != ond)
        fail_msg("slice of %s gave %s, expected %d dims", txt(l), txt(&out), ond);
    for (k = 0; k < ond; k++) {
        if (out.shape[k] != oshape[k])
            fail_msg("slice of %s gave %s: extent %d is %lld, expected %lld", txt(l), txt(&out), k,
                     (long long)out.shape[k], (long long)oshape[k]);
    }
    if (empty) {
        for (k = 0; k < ond; k++)
            if (out.strides[k] != 0)
                fail_msg("empty slice of %s has strides: %s", txt(l), txt(&out));
    } else if (volume_of(ond, oshape) > 0) {
        do {
            int q = 0;
            for (k = 0; k < l->ndim; k++) {
                if (k >= nidx)
                    i[k] = j[q++];
                else if (idx[k].kind == STRIDED_INDEX_INTEGER)
                    i[k] = start[k];
                else
                    i[k] = start[k] + j[q++] * idx[k].step;
            }
            want[n++] = offset_at(l, i);
        } while (next_index(ond, oshape, j, false));
        check_seq(l, &out, want, n, "slice");
    }
    *out_sliced = out;
}

static void check_broadcast(const strided_layout *l)
{
    int64_t shape[STRIDED_MAX_NDIM], want[MAXE], j[STRIDED_MAX_NDIM] = {0};
    int64_t i[STRIDED_MAX_NDIM];
    int lead = (int)rint_in(0, 2), nd = l->ndim + lead, k, n = 0;
    strided_layout out;

    for (k = 0; k < lead; k++)
        shape[k] = rint_in(0, 3);
    for (k = 0; k < l->ndim; k++)
        shape[lead + k] = l->shape[k] == 1 ? rint_in(0, 3) : l->shape[k];
    assert_ok(strided_layout_broadcast(l, nd, shape, &out));
    if (volume_of(nd, shape) > 0) {
        do {
            for (k = 0; k < l->ndim; k++)
                i[k] = l->shape[k] == 1 ? 0 : j[lead + k];
            want[n++] = offset_at(l, i);
        } while (next_index(nd, shape, j, false));
    }
    check_seq(l, &out, want, n, "broadcast");
}

static void check_to_dense(const strided_layout *l)
{
    strided_layout d;
    int64_t o[MAXE];
    int n, k;

    assert_ok(strided_layout_to_dense(l, STRIDED_ORDER_KEEP, 0, NULL, &d));
    assert_int_equal(d.ndim, l->ndim);
    for (k = 0; k < l->ndim; k++)
        assert_i64(d.shape[k], l->shape[k]);
    if (!strided_layout_is_dense(&d))
        fail_msg("to_dense of %s gave %s, not dense", txt(l), txt(&d));
    n = enum_offsets(&d, false, o);
    qsort(o, (size_t)n, sizeof *o, cmp_i64);
    for (k = 0; k < n; k++)
        if (o[k] != k)
            fail_msg("to_dense of %s gave %s, offsets not 0..%d", txt(l), txt(&d), n - 1);
}

static void check_max_itemsize_repack(const strided_layout *l)
{
    int max_itemsize = l->itemsize * (int)rint_in(1, 6), got = -1;
    strided_layout r;

    if (l->ndim == 0)
        return;
    assert_ok(strided_layout_max_compatible_itemsize(l, max_itemsize, 0, -1, &got));
    if (got % l->itemsize != 0 || got > max_itemsize || got < l->itemsize)
        fail_msg("max_compatible_itemsize(%d) of %s (itemsize %d) gave %d", max_itemsize, txt(l),
                 (int)l->itemsize, got);
    if (strided_layout_repack(l, got, 0, -1, true, &r) != STRIDED_OK)
        fail_msg("repack of %s (itemsize %d) to %d failed: %s", txt(l), (int)l->itemsize, got,
                 strided_last_error());
    assert_i64(strided_layout_volume(&r) * r.itemsize, strided_layout_volume(l) * l->itemsize);
}

static strided_layout random_layout(void)
{
    int64_t shape[4], strides[4];
    int ndim = (int)rint_in(0, 4), k;
    int itemsize = (int)rint_in(1, 8);

    for (k = 0; k < ndim; k++) {
        shape[k] = rint_in(0, 4);
        strides[k] = rint_in(-6, 6);
    }
    if (rint_in(0, 4) == 0)
        return mk(ndim, shape, NULL, itemsize);
    return mk(ndim, shape, strides, itemsize);
}

static void test_random_layouts_against_brute_force(void **state)
{
    int iter;

    (void)state;
    for (iter = 0; iter < 20000; iter++) {
        strided_layout l = random_layout(), s;

        check_queries(&l);
        check_flatten_coalesce_reshape(&l);
        check_squeeze_unsqueeze(&l);
        check_permute(&l);
        check_broadcast(&l);
        check_to_dense(&l);
        check_max_itemsize_repack(&l);
        check_slice(&l, &s);
        /* A sliced layout (with a slice offset) goes through it all too. */
        check_queries(&s);
        check_flatten_coalesce_reshape(&s);
        check_squeeze_unsqueeze(&s);
        check_permute(&s);
        check_to_dense(&s);
        check_max_itemsize_repack(&s);
    }
}

static void assert_unique(const strided_layout *l, const char *op)
{
    int64_t o[MAXE];
    int n = enum_offsets(l, false, o);

    if (!all_distinct(o, n))
        fail_msg("after %s, %s repeats offsets", op, txt(l));
    if (!strided_layout_is_unique(l))
        fail_msg("after %s, %s is unique but is_unique says false", op, txt(l));
    check_queries(l);
}

/* A random reshape target with the same volume: a random split of it. */
static int random_shape_of(int64_t vol, int64_t *shape)
{
    int nd = 0;
    if (vol == 0) {
        shape[nd++] = 0;
        if (rint_in(0, 1))
            shape[nd++] = rint_in(1, 3);
        return nd;
    }
    while (vol > 1 && nd < 5) {
        int64_t d = rint_in(1, vol);
        while (vol % d != 0)
            d--;
        shape[nd++] = d;
        vol /= d;
    }
    if (vol > 1 || nd == 0 || rint_in(0, 3) == 0)
        shape[nd++] = vol;
    return nd;
}

static void test_random_chains_from_dense_stay_unique(void **state)
{
    int iter;

    (void)state;
    for (iter = 0; iter < 5000; iter++) {
        int64_t shape[4];
        int perm[4], ndim = (int)rint_in(0, 4), k, steps, step;
        strided_layout l;

        for (k = 0; k < ndim; k++) {
            shape[k] = rint_in(rint_in(0, 9) == 0 ? 0 : 1, 4);
            perm[k] = k;
        }
        for (k = ndim - 1; k > 0; k--) {
            int r = (int)rint_in(0, k), t = perm[k];
            perm[k] = perm[r];
            perm[r] = t;
        }
        l = mk_perm(ndim, shape, (int)rint_in(1, 8), ndim, perm);
        assert_unique(&l, "dense");

        steps = (int)rint_in(1, 6);
        for (step = 0; step < steps; step++) {
            strided_layout out;
            const char *op;
            int choice = (int)rint_in(0, 5);

            if (choice == 0) {
                int p[STRIDED_MAX_NDIM];
                op = "permute";
                for (k = 0; k < l.ndim; k++)
                    p[k] = k;
                for (k = l.ndim - 1; k > 0; k--) {
                    int r = (int)rint_in(0, k), t = p[k];
                    p[k] = p[r];
                    p[r] = t;
                }
                assert_ok(strided_layout_permute(&l, l.ndim, p, &out));
            } else if (choice == 1) {
                strided_index idx[STRIDED_MAX_NDIM];
                int nidx = (int)rint_in(0, l.ndim);
                op = "slice";
                for (k = 0; k < nidx; k++)
                    idx[k] = random_index(l.shape[k]);
                assert_ok(strided_layout_slice(&l, nidx, idx, &out));
            } else if (choice == 2) {
                op = "squeeze";
                assert_ok(strided_layout_squeeze(&l, &out));
            } else if (choice == 3) {
                int ax = (int)rint_in(0, l.ndim);
                op = "unsqueeze";
                if (l.ndim >= STRIDED_MAX_NDIM)
                    continue;
                assert_ok(strided_layout_unsqueeze(&l, 1, &ax, &out));
            } else if (choice == 4) {
                int64_t ns[8];
                int nd = random_shape_of(strided_layout_volume(&l), ns);
                op = "reshape";
                if (strided_layout_reshape(&l, nd, ns, &out) != STRIDED_OK)
                    continue;
            } else {
                int a = l.ndim ? (int)rint_in(0, l.ndim - 1) : 0;
                int b = l.ndim ? (int)rint_in(0, l.ndim - 1) : -1;
                op = "flatten";
                if (l.ndim == 0)
                    a = 0;
                /* A start after the end is refused; flatten [b, a] then
                 * ((0, -1) stands for every axis, also of a 0-d layout). */
                if (l.ndim > 0 && a > b) {
                    int t = a;
                    a = b;
                    b = t;
                }
                assert_ok(strided_layout_flatten(&l, a, b, &out));
            }
            l = out;
            assert_unique(&l, op);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_layouts_against_brute_force),
        cmocka_unit_test(test_random_chains_from_dense_stay_unique),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
