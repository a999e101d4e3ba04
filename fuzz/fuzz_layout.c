/*
 * fuzz_layout.c: the layout algebra (strided/layout.h) against brute force.
 *
 * An input is a layout, made through one of the public constructors, then
 * a sequence of operations on it: slice, permute, reshape, flatten (by axis
 * range and by mask), squeeze, unsqueeze, broadcast, repack, to_dense,
 * coalesce, max_compatible_itemsize, format and format_grid. Each call's
 * outcome is checked against the statuses its arguments call for, computed
 * here from the header's rules with 128-bit arithmetic. A successful call
 * must give a layout that keeps the header's invariant and whose elements
 * are the right ones: the result's element offsets are compared with the
 * input's at the indices the operation selects (slice, permute, broadcast,
 * unsqueeze, squeeze), with the input's C-order sequence of offsets
 * (reshape, flatten, coalesce), or byte for byte (repack). Layouts of at
 * most FUZZ_ENUM_LIMIT elements are enumerated in full; larger ones are
 * checked at a sample of indices. A failed call must leave its output
 * untouched (a sentinel, or the input itself when the output aliases it)
 * and set a message. Every layout met also has its queries (volume, offset
 * bounds, required size, byte strides, stride order, contiguity,
 * uniqueness, equality and hash) checked against brute force.
 */
#include <stdlib.h>

#include "fuzz_check.h"
#include "fuzz_input.h"

static const fuzz_limits limits = {
    .max_ndim = 8,
    .wide_ndim = true,
    .max_extent = 6,
    .max_stride = 24,
    .max_itemsize = 64,
    .edges = true,
};

/* The most operations one input runs. */
#define MAX_OPS 24

/* Scratch for enumerations. */
static int64_t seq_in[FUZZ_ENUM_LIMIT];

static uint64_t magnitude(int64_t v)
{
    return v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
}

static int64_t volume_of(const strided_layout *l)
{
    return (int64_t)fuzz_volume(l->ndim, l->shape, NULL);
}

/* Normalize axis against n; false when out of range. */
static bool norm_axis(int64_t axis, int n, int *out)
{
    if (axis < -n || axis >= n)
        return false;
    *out = (int)(axis < 0 ? axis + n : axis);
    return true;
}

/* Relaxed C-contiguity in the axis order given (slowest first): extent-1
 * axes skipped, each other stride the product of the faster extents. */
static bool contiguous_in(const strided_layout *l, const int *order)
{
    if (volume_of(l) == 0)
        return true;
    fuzz_i128 running = 1;
    for (int k = l->ndim - 1; k >= 0; k--) {
        int i = order[k];
        if (l->shape[i] == 1)
            continue;
        if ((fuzz_i128)l->strides[i] != running)
            return false;
        running *= l->shape[i];
    }
    return true;
}

/* The stride order by its definition: larger |stride| first, then larger
 * extent, then smaller axis index; the identity for implicit strides. */
static void stride_order_of(const strided_layout *l, int *out)
{
    for (int i = 0; i < l->ndim; i++)
        out[i] = i;
    if (l->implicit_strides)
        return;
    for (int i = 1; i < l->ndim; i++)
        for (int j = i; j > 0; j--) {
            int a = out[j], b = out[j - 1];
            uint64_t ma = magnitude(l->strides[a]), mb = magnitude(l->strides[b]);
            bool before = ma != mb ? ma > mb : l->shape[a] > l->shape[b];
            if (!before)
                break;
            out[j] = b;
            out[j - 1] = a;
        }
}

static bool def_contiguous_c(const strided_layout *l)
{
    int order[STRIDED_MAX_NDIM];
    for (int i = 0; i < l->ndim; i++)
        order[i] = i;
    return l->implicit_strides || contiguous_in(l, order);
}

static bool def_contiguous_f(const strided_layout *l)
{
    int order[STRIDED_MAX_NDIM];
    for (int i = 0; i < l->ndim; i++)
        order[i] = l->ndim - 1 - i;
    return contiguous_in(l, order);
}

/* Contiguous in some order: with the axes sorted by stride (the slowest
 * first), C-contiguous. Sorting by the stride order is enough, since a
 * contiguous layout's non-unit strides are distinct and positive. */
static bool def_contiguous_any(const strided_layout *l)
{
    int order[STRIDED_MAX_NDIM];
    stride_order_of(l, order);
    return l->implicit_strides || contiguous_in(l, order);
}

/* The statuses of merging the axes mask allows: overflow is possible only
 * where such an axis's stride times extent leaves int64. */
static fuzz_statuses merge_overflow(const strided_layout *l, uint64_t mask)
{
    for (int j = 1; j < l->ndim; j++)
        if ((mask >> j & 1) && l->shape[j] != 1 &&
            !fuzz_fits64(fuzz_mul(l->strides[j], l->shape[j])))
            return FUZZ_OVERFLOW;
    return 0;
}

/* Check every query of a layout that keeps the invariant. from_dense: the
 * layout came from a dense one through operations on which is_unique is
 * exact. */
static void check_queries(const strided_layout *l, bool from_dense, const char *what)
{
    fuzz_text t;
    fuzz_check_invariant(l, what);
    const char *s = fuzz_show(l, &t);
    fuzz_mark_error();
    strided_status vst = strided_layout_validate(l);
    FUZZ_REQUIRE(vst == STRIDED_OK, "validate refuses (%s) a layout the library made: %s",
                 strided_status_name(vst), s);
    int64_t volume = volume_of(l);
    FUZZ_REQUIRE(strided_layout_volume(l) == volume, "volume %" PRId64 ", want %" PRId64 ": %s",
                 strided_layout_volume(l), volume, s);

    /* Offset bounds: the corners of the index box. */
    int64_t mn = 7, mx = 7, mn_only = 7, mx_only = 7;
    strided_layout_offset_bounds(l, &mn, &mx);
    strided_layout_offset_bounds(l, &mn_only, NULL);
    strided_layout_offset_bounds(l, NULL, &mx_only);
    fuzz_i128 lo = 0, hi = -1;
    if (volume > 0)
        fuzz_bounds(l->ndim, l->shape, l->strides, l->slice_offset, &lo, &hi);
    FUZZ_REQUIRE(mn == lo && mx == hi && mn_only == mn && mx_only == mx,
                 "offset_bounds (%" PRId64 ", %" PRId64 ") disagree with the corners: %s", mn, mx,
                 s);

    /* Required size: (max + 1) * itemsize, from offset 0. */
    int64_t size = -7, before = -7;
    fuzz_statuses want = 0;
    fuzz_i128 need = 0;
    if (volume > 0) {
        need = (hi + 1) * l->itemsize;
        if (lo < 0)
            want = FUZZ_INVALID;
        else if (!fuzz_fits64(need))
            want = FUZZ_OVERFLOW;
    }
    fuzz_mark_error();
    strided_status st = strided_layout_required_size_in_bytes(l, &size);
    fuzz_check_outcome("required_size_in_bytes", st, want, &size, &before, sizeof size, s);
    if (st == STRIDED_OK)
        FUZZ_REQUIRE(size == (int64_t)need, "required_size_in_bytes %" PRId64 ": %s", size, s);

    /* Byte strides and byte slice offset. */
    int64_t bytes[STRIDED_MAX_NDIM], bytes_before[STRIDED_MAX_NDIM];
    memset(bytes, 0x5A, sizeof bytes);
    memcpy(bytes_before, bytes, sizeof bytes);
    want = 0;
    for (int i = 0; i < l->ndim; i++)
        if (!fuzz_fits64(fuzz_mul(l->strides[i], l->itemsize)))
            want = FUZZ_OVERFLOW;
    fuzz_mark_error();
    st = strided_layout_strides_in_bytes(l, bytes);
    fuzz_check_outcome("strides_in_bytes", st, want, bytes, bytes_before, sizeof bytes, s);
    for (int i = 0; st == STRIDED_OK && i < l->ndim; i++)
        FUZZ_REQUIRE(bytes[i] == l->strides[i] * l->itemsize, "strides_in_bytes[%d]: %s", i, s);
    int64_t off_bytes = 3, off_before = 3;
    want = fuzz_fits64(fuzz_mul(l->slice_offset, l->itemsize)) ? 0 : FUZZ_OVERFLOW;
    fuzz_mark_error();
    st = strided_layout_slice_offset_in_bytes(l, &off_bytes);
    fuzz_check_outcome("slice_offset_in_bytes", st, want, &off_bytes, &off_before, sizeof off_bytes,
                       s);
    if (st == STRIDED_OK)
        FUZZ_REQUIRE(off_bytes == l->slice_offset * l->itemsize, "slice_offset_in_bytes: %s", s);

    /* Stride order. */
    int order[STRIDED_MAX_NDIM], mine[STRIDED_MAX_NDIM];
    strided_layout_stride_order(l, order);
    stride_order_of(l, mine);
    for (int i = 0; i < l->ndim; i++)
        FUZZ_REQUIRE(order[i] == mine[i], "stride_order[%d] is %d, want %d: %s", i, order[i],
                     mine[i], s);

    /* Contiguity, by definition and, when small, by the offsets. */
    bool c = strided_layout_is_contiguous_c(l), f = strided_layout_is_contiguous_f(l);
    bool any = strided_layout_is_contiguous_any(l), dense = strided_layout_is_dense(l);
    bool unique = strided_layout_is_unique(l);
    FUZZ_REQUIRE(c == def_contiguous_c(l), "is_contiguous_c says %d: %s", c, s);
    FUZZ_REQUIRE(f == def_contiguous_f(l), "is_contiguous_f says %d: %s", f, s);
    FUZZ_REQUIRE(any == def_contiguous_any(l), "is_contiguous_any says %d: %s", any, s);
    FUZZ_REQUIRE(dense == (any && l->slice_offset == 0), "is_dense says %d: %s", dense, s);
    if (volume == 0)
        FUZZ_REQUIRE(unique, "is_unique is false for an empty layout: %s", s);
    for (int i = 0; volume > 0 && i < l->ndim; i++)
        FUZZ_REQUIRE(!(l->strides[i] == 0 && l->shape[i] > 1) || !unique,
                     "is_unique is true with a stride-0 axis %d: %s", i, s);
    if (volume > 0 && volume <= FUZZ_ENUM_LIMIT) {
        int64_t n = fuzz_enumerate(l, seq_in);
        bool c_seq = true;
        for (int64_t k = 0; k < n; k++)
            c_seq = c_seq && seq_in[k] == (fuzz_i128)l->slice_offset + k;
        FUZZ_REQUIRE(c_seq == c, "is_contiguous_c %d, but the C-order offsets %s: %s", c,
                     c_seq ? "are consecutive" : "are not consecutive", s);
        qsort(seq_in, (size_t)n, sizeof seq_in[0], fuzz_cmp_i64);
        bool distinct = true, packed = seq_in[0] == l->slice_offset;
        for (int64_t k = 1; k < n; k++) {
            distinct = distinct && seq_in[k] != seq_in[k - 1];
            packed = packed && seq_in[k] == (fuzz_i128)seq_in[k - 1] + 1;
        }
        FUZZ_REQUIRE(any == packed,
                     "is_contiguous_any %d, but the offsets %s a run from "
                     "the slice offset: %s",
                     any, packed ? "are" : "are not", s);
        FUZZ_REQUIRE(!unique || distinct,
                     "is_unique is true, but two elements share an "
                     "offset: %s",
                     s);
        FUZZ_REQUIRE(!from_dense || !distinct || unique,
                     "is_unique is false for a unique layout derived from a dense one: %s", s);
    }

    /* Equality and hash: entries past ndim do not count; implicit and
     * explicit strides never compare equal. */
    strided_layout copy;
    memcpy(&copy, l, sizeof copy);
    for (int i = l->ndim; i < STRIDED_MAX_NDIM; i++) {
        copy.shape[i] = -(int64_t)i;
        copy.strides[i] = INT64_MIN + i;
    }
    FUZZ_REQUIRE(strided_layout_equal(l, &copy) &&
                     strided_layout_hash(l) == strided_layout_hash(&copy),
                 "a copy with other entries past ndim compares or hashes unequal: %s", s);
    int identity[STRIDED_MAX_NDIM];
    for (int i = 0; i < l->ndim; i++)
        identity[i] = i;
    strided_layout explicit_copy;
    if (strided_layout_permute(l, l->ndim, identity, &explicit_copy) == STRIDED_OK) {
        bool eq = strided_layout_equal(l, &explicit_copy);
        FUZZ_REQUIRE(eq == !l->implicit_strides,
                     "equal(layout, permute(layout, identity)) is %d: %s", eq, s);
        FUZZ_REQUIRE(!eq || strided_layout_hash(l) == strided_layout_hash(&explicit_copy),
                     "equal layouts hash differently: %s", s);
    }

    /* The flatten mask: the axes flatten merges. */
    uint64_t mask = 0x77, mask_before = 0x77;
    fuzz_mark_error();
    st = strided_layout_flattened_axis_mask(l, &mask);
    strided_layout flat;
    strided_status fst = strided_layout_flatten(l, 0, -1, &flat);
    FUZZ_REQUIRE(st == fst, "flattened_axis_mask says %s, flatten says %s: %s",
                 strided_status_name(st), strided_status_name(fst), s);
    if (st != STRIDED_OK) {
        fuzz_check_outcome("flattened_axis_mask", st, merge_overflow(l, STRIDED_AXES_MASK_ALL),
                           &mask, &mask_before, sizeof mask, s);
    } else {
        uint64_t valid = l->ndim >= 64 ? STRIDED_AXES_MASK_ALL
                                       : STRIDED_AXES_MASK_ALL & ((UINT64_C(1) << l->ndim) - 1);
        FUZZ_REQUIRE((mask & ~valid) == 0,
                     "flattened_axis_mask 0x%" PRIx64 " has bits outside "
                     "1..ndim-1: %s",
                     mask, s);
        int groups = l->ndim == 0 ? 1 : l->ndim - __builtin_popcountll(mask);
        FUZZ_REQUIRE(flat.ndim == groups,
                     "flattened_axis_mask 0x%" PRIx64 " merges %d axes, "
                     "flatten gives %d: %s",
                     mask, __builtin_popcountll(mask), (int)flat.ndim, s);
    }
}

/* How an operation's result indexes its input: input axis a takes index
 * base[a] + mult[a] * j[from[a]] at result index j (from[a] < 0: just
 * base[a]). */
typedef struct index_map {
    int64_t base[STRIDED_MAX_NDIM];
    int64_t mult[STRIDED_MAX_NDIM];
    int from[STRIDED_MAX_NDIM];
} index_map;

/* The linear C-order index k of shape as a multi-index. */
static void unravel(int ndim, const int64_t *shape, int64_t k, int64_t *idx)
{
    for (int i = ndim - 1; i >= 0; i--) {
        idx[i] = shape[i] == 0 ? 0 : k % shape[i];
        k = shape[i] == 0 ? 0 : k / shape[i];
    }
}

/* The linear indices checked for a layout of volume v: all of them when
 * v <= FUZZ_ENUM_LIMIT, else a spread sample with both ends. */
static int64_t sample_count(int64_t v)
{
    return v <= FUZZ_ENUM_LIMIT ? v : 67;
}

static int64_t sample_at(int64_t v, int64_t k)
{
    if (v <= FUZZ_ENUM_LIMIT)
        return k;
    if (k == 66)
        return v - 1;
    return (int64_t)((fuzz_i128)(v - 1) * k / 66);
}

/* Element i of out is the element of in that map selects. */
static void check_map(const char *op, const strided_layout *in, const strided_layout *out,
                      const index_map *m, const char *ctx)
{
    int64_t v = volume_of(out);
    int64_t j[STRIDED_MAX_NDIM], i[STRIDED_MAX_NDIM];
    for (int64_t k = 0; k < sample_count(v); k++) {
        unravel(out->ndim, out->shape, sample_at(v, k), j);
        for (int a = 0; a < in->ndim; a++) {
            fuzz_i128 x = m->base[a];
            if (m->from[a] >= 0)
                x += (fuzz_i128)m->mult[a] * j[m->from[a]];
            FUZZ_REQUIRE(x >= 0 && x < in->shape[a],
                         "%s: result index maps outside the "
                         "input on axis %d: %s",
                         op, a, ctx);
            i[a] = (int64_t)x;
        }
        fuzz_i128 got = fuzz_offset(out, j), want = fuzz_offset(in, i);
        char g[64], w[64];
        fuzz_i128_text(got, g, sizeof g);
        fuzz_i128_text(want, w, sizeof w);
        FUZZ_REQUIRE(got == want,
                     "%s: the element at linear index %" PRId64 " of the result "
                     "has offset %s, the input's element it selects has %s: %s",
                     op, sample_at(v, k), g, w, ctx);
    }
}

/* out has the same volume as in and the same offset at every C-order
 * linear index. */
static void check_sequence(const char *op, const strided_layout *in, const strided_layout *out,
                           const char *ctx)
{
    int64_t v = volume_of(in);
    FUZZ_REQUIRE(volume_of(out) == v, "%s changed the volume to %" PRId64 ": %s", op,
                 volume_of(out), ctx);
    int64_t j[STRIDED_MAX_NDIM], i[STRIDED_MAX_NDIM];
    for (int64_t k = 0; k < sample_count(v); k++) {
        int64_t lin = sample_at(v, k);
        unravel(in->ndim, in->shape, lin, i);
        unravel(out->ndim, out->shape, lin, j);
        FUZZ_REQUIRE(fuzz_offset(in, i) == fuzz_offset(out, j),
                     "%s: the element at C-order "
                     "index %" PRId64 " moved: %s",
                     op, lin, ctx);
    }
}

/* The common fields of a manipulation's result: explicit strides, the
 * input's itemsize. */
static void check_explicit(const char *op, const strided_layout *in, const strided_layout *out,
                           const char *ctx)
{
    FUZZ_REQUIRE(!out->implicit_strides, "%s kept implicit strides: %s", op, ctx);
    FUZZ_REQUIRE(out->itemsize == in->itemsize, "%s changed the itemsize: %s", op, ctx);
}

/* One call's output: a sentinel, or a copy of the input that the call gets
 * as its input too (the output aliases the input). */
typedef struct call {
    strided_layout out;
    strided_layout before;
    const strided_layout *arg;
    char ctx[7000];
} call;

static void call_prepare(call *c, const strided_layout *in, bool alias, const char *op)
{
    if (alias)
        memcpy(&c->out, in, sizeof c->out);
    else
        memset(&c->out, 0xA5, sizeof c->out);
    memcpy(&c->before, &c->out, sizeof c->out);
    c->arg = alias ? &c->out : in;
    fuzz_text t;
    snprintf(c->ctx, sizeof c->ctx, "%s%s of %s", op, alias ? " (in place)" : "",
             fuzz_show(in, &t));
    fuzz_mark_error();
}

/* Append the operation's arguments to the context. */
static void call_note(call *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void call_note(call *c, const char *fmt, ...)
{
    size_t n = strlen(c->ctx);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->ctx + n, sizeof c->ctx - n, fmt, ap);
    va_end(ap);
}

static void note_tuple(call *c, const char *name, int n, const int64_t *v)
{
    call_note(c, " %s=(", name);
    for (int i = 0; i < n && i < STRIDED_MAX_NDIM; i++)
        call_note(c, "%s%" PRId64, i ? "," : "", v[i]);
    call_note(c, ")");
}

static void note_axes(call *c, const char *name, int n, const int *v)
{
    call_note(c, " %s=(", name);
    for (int i = 0; i < n && i < STRIDED_MAX_NDIM; i++)
        call_note(c, "%s%d", i ? "," : "", v[i]);
    call_note(c, ")");
}

/* The outcome of the call, then the result's invariant and queries.
 * maybe: the statuses in want are possible, not certain (the call may also
 * succeed). */
static bool call_done(call *c, const char *op, strided_status st, fuzz_statuses want, bool maybe,
                      bool from_dense)
{
    if (maybe && st == STRIDED_OK)
        want = 0;
    fuzz_trace(c->ctx);
    fuzz_check_outcome(op, st, want, &c->out, &c->before, sizeof c->out, c->ctx);
    if (st != STRIDED_OK)
        return false;
    check_queries(&c->out, from_dense, c->ctx);
    return true;
}

/* The state an input's operations thread through. */
typedef struct state {
    strided_layout cur;
    bool from_dense;
} state;

/* Python's slice.indices for an axis of extent n, exact. */
static void resolve_slice(const strided_index *x, int64_t n, fuzz_i128 step, fuzz_i128 *start,
                          fuzz_i128 *count)
{
    fuzz_i128 lower = step < 0 ? -1 : 0, upper = step < 0 ? (fuzz_i128)n - 1 : n;
    fuzz_i128 a, b;
    if (!x->has_start) {
        a = step < 0 ? upper : lower;
    } else {
        a = x->start;
        if (a < 0) {
            a += n;
            if (a < lower)
                a = lower;
        } else if (a > upper) {
            a = upper;
        }
    }
    if (!x->has_stop) {
        b = step < 0 ? lower : upper;
    } else {
        b = x->stop;
        if (b < 0) {
            b += n;
            if (b < lower)
                b = lower;
        } else if (b > upper) {
            b = upper;
        }
    }
    fuzz_i128 k = 0;
    if (step < 0 && b < a)
        k = (a - b - 1) / -step + 1;
    else if (step > 0 && a < b)
        k = (b - a - 1) / step + 1;
    *start = a;
    *count = k;
}

static void op_slice(fuzz_input *in, state *s, bool alias)
{
    const strided_layout *l = &s->cur;
    uint8_t b = fuzz_u8(in);
    int n = b == 255 ? -1 : b % (l->ndim + 2);
    strided_index idx[STRIDED_MAX_NDIM + 1];
    int k = n < 0 ? 0 : n;
    for (int i = 0; i < k; i++)
        idx[i] = fuzz_index(in, i < l->ndim ? l->shape[i] : 1);

    fuzz_statuses want = 0;
    index_map m;
    int64_t counts[STRIDED_MAX_NDIM];
    strided_layout t = {.itemsize = l->itemsize};
    bool empty = false;
    int out_ndim = 0;
    if (n > l->ndim || n < 0) {
        want = FUZZ_INVALID;
    } else {
        fuzz_i128 off = l->slice_offset;
        for (int i = 0; i < n; i++) {
            const strided_index *x = &idx[i];
            int64_t ext = l->shape[i], st = l->strides[i];
            m.from[i] = -1;
            m.mult[i] = 0;
            if (x->kind == STRIDED_INDEX_INTEGER) {
                fuzz_i128 q = x->start < 0 ? (fuzz_i128)x->start + ext : x->start;
                if (q < 0 || q >= ext) {
                    want |= FUZZ_INVALID;
                    continue;
                }
                m.base[i] = (int64_t)q;
                fuzz_i128 delta = q * st;
                off += delta;
                if (!fuzz_fits64(delta) || !fuzz_fits64(off))
                    want |= FUZZ_OVERFLOW;
            } else if (x->kind == STRIDED_INDEX_SLICE) {
                if (x->step == 0) {
                    want |= FUZZ_INVALID;
                    continue;
                }
                /* Python clamps a step of -2**63 to -(2**63 - 1). */
                fuzz_i128 step = x->step < -INT64_MAX ? -INT64_MAX : x->step;
                fuzz_i128 start, count;
                resolve_slice(x, ext, step, &start, &count);
                if (count > 0) {
                    fuzz_i128 delta = start * st;
                    off += delta;
                    if (!fuzz_fits64(delta) || !fuzz_fits64(off))
                        want |= FUZZ_OVERFLOW;
                } else {
                    empty = true;
                }
                if (!fuzz_fits64(step * st))
                    want |= FUZZ_OVERFLOW;
                t.strides[out_ndim] = (int64_t)(step * st);
                m.base[i] = count > 0 ? (int64_t)start : 0;
                m.mult[i] = (int64_t)step;
                m.from[i] = out_ndim;
                counts[out_ndim++] = (int64_t)count;
            } else {
                want |= FUZZ_INVALID;
            }
        }
        for (int i = n; i < l->ndim; i++) {
            m.base[i] = 0;
            m.mult[i] = 1;
            m.from[i] = out_ndim;
            t.strides[out_ndim] = l->strides[i];
            counts[out_ndim++] = l->shape[i];
        }
        /* The result as the rules make it must keep the invariant. */
        if (!want) {
            t.ndim = out_ndim;
            t.slice_offset = (int64_t)off;
            for (int i = 0; i < out_ndim; i++) {
                t.shape[i] = counts[i];
                if (empty)
                    t.strides[i] = 0;
            }
            want = fuzz_layout_expect(&t);
        }
    }

    call c;
    call_prepare(&c, l, alias, "slice");
    call_note(&c, " nindices=%d", n);
    for (int i = 0; i < k; i++)
        call_note(&c, " [%s%s %" PRId64 ":%s%" PRId64 ":%" PRId64 "]",
                  idx[i].kind == STRIDED_INDEX_INTEGER ? "int"
                  : idx[i].kind == STRIDED_INDEX_SLICE ? "slice"
                                                       : "bad",
                  idx[i].has_start ? "" : " (no start)", idx[i].start,
                  idx[i].has_stop ? "" : "(no stop)", idx[i].stop, idx[i].step);
    strided_status st = strided_layout_slice(c.arg, n, idx, &c.out);
    if (!call_done(&c, "slice", st, want, false, s->from_dense))
        return;
    const strided_layout *o = &c.out;
    check_explicit("slice", l, o, c.ctx);
    FUZZ_REQUIRE(o->ndim == out_ndim, "slice gave %d axes, want %d: %s", (int)o->ndim, out_ndim,
                 c.ctx);
    for (int i = 0; i < out_ndim; i++)
        FUZZ_REQUIRE(o->shape[i] == counts[i],
                     "slice: extent %d is %" PRId64 ", want %" PRId64 ": %s", i, o->shape[i],
                     counts[i], c.ctx);
    for (int i = 0; i < out_ndim; i++) {
        int64_t whole = i - (out_ndim - (l->ndim - n)); /* the input axis kept whole */
        if (empty)
            FUZZ_REQUIRE(o->strides[i] == 0, "slice selected nothing but left stride %d: %s", i,
                         c.ctx);
        else if (whole >= 0)
            FUZZ_REQUIRE(o->strides[i] == l->strides[n + whole],
                         "slice changed the stride of an axis kept whole: %s", c.ctx);
    }
    check_map("slice", l, o, &m, c.ctx);
    s->cur = *o;
}

static void op_permute(fuzz_input *in, state *s, bool alias)
{
    const strided_layout *l = &s->cur;
    int axes[STRIDED_MAX_NDIM + 1] = {0}, naxes;
    fuzz_permutation(in, l->ndim, true, &naxes, axes);
    fuzz_statuses want = 0;
    index_map m;
    int64_t shape[STRIDED_MAX_NDIM], strides[STRIDED_MAX_NDIM];
    if (naxes != l->ndim) {
        want = FUZZ_INVALID;
    } else {
        uint64_t seen = 0;
        for (int i = 0; i < naxes; i++) {
            int a;
            if (!norm_axis(axes[i], l->ndim, &a) || (seen >> a & 1)) {
                want = FUZZ_INVALID;
                break;
            }
            seen |= UINT64_C(1) << a;
            m.base[a] = 0;
            m.mult[a] = 1;
            m.from[a] = i;
            shape[i] = l->shape[a];
            strides[i] = l->strides[a];
        }
    }
    call c;
    call_prepare(&c, l, alias, "permute");
    note_axes(&c, "axes", naxes, axes);
    strided_status st = strided_layout_permute(c.arg, naxes, axes, &c.out);
    if (!call_done(&c, "permute", st, want, false, s->from_dense))
        return;
    const strided_layout *o = &c.out;
    check_explicit("permute", l, o, c.ctx);
    FUZZ_REQUIRE(o->ndim == l->ndim && o->slice_offset == l->slice_offset,
                 "permute changed ndim or the slice offset: %s", c.ctx);
    for (int i = 0; i < o->ndim; i++)
        FUZZ_REQUIRE(o->shape[i] == shape[i] && o->strides[i] == strides[i],
                     "permute: axis %d is not the input axis asked for: %s", i, c.ctx);
    check_map("permute", l, o, &m, c.ctx);
    s->cur = *o;
}

/* Does a view of in's elements in C order with the given shape exist?
 * Writes the strides of its non-unit axes into d. Assumes: volume(in) ==
 * product(shape), 0 < volume <= FUZZ_ENUM_LIMIT. */
static bool reshape_exists(const strided_layout *in, int ndim, const int64_t *shape, fuzz_i128 *d)
{
    int64_t v = fuzz_enumerate(in, seq_in);
    int64_t run = 1;
    for (int a = ndim - 1; a >= 0; a--) {
        d[a] = shape[a] > 1 ? (fuzz_i128)seq_in[run] - seq_in[0] : 0;
        run *= shape[a];
    }
    int64_t j[STRIDED_MAX_NDIM] = {0};
    for (int64_t k = 0; k < v; k++) {
        fuzz_i128 o = seq_in[0];
        for (int a = 0; a < ndim; a++)
            o += d[a] * j[a];
        if (o != seq_in[k])
            return false;
        fuzz_next_index(ndim, shape, j);
    }
    return true;
}

static void op_reshape(fuzz_input *in, state *s, bool alias)
{
    const strided_layout *l = &s->cur;
    uint8_t b = fuzz_u8(in);
    int ndim;
    int64_t shape[STRIDED_MAX_NDIM + 2];
    int64_t volume = volume_of(l);
    if (b < 160) {
        /* A factorization of the volume, with 1s and sometimes a -1. */
        ndim = b % 7;
        int64_t rest = volume;
        for (int i = 0; i < ndim; i++) {
            uint8_t f = fuzz_u8(in);
            int64_t e = 1, d = 2 + f % 8;
            if (i == ndim - 1)
                e = rest;
            else if (f < 192 && rest % d == 0)
                e = d;
            else if (f >= 240)
                e = 0;
            shape[i] = e;
            if (e != 0)
                rest /= e;
        }
        if (ndim > 0 && b & 1)
            shape[fuzz_u8(in) % ndim] = -1;
    } else {
        ndim = fuzz_ndim(in, &limits);
        for (int i = 0; i < ndim && i < STRIDED_MAX_NDIM; i++)
            shape[i] = fuzz_u8(in) >= 240 ? -1 : fuzz_extent(in, &limits);
    }

    /* The rules of the declaration, in the order they make sense. */
    fuzz_statuses want = 0;
    int64_t target[STRIDED_MAX_NDIM];
    bool valid = false;
    if (ndim < 0 || ndim > STRIDED_MAX_NDIM) {
        want = FUZZ_INVALID;
    } else {
        int inferred = -1, minus = 0;
        for (int i = 0; i < ndim; i++) {
            if (shape[i] < -1)
                want |= FUZZ_INVALID;
            if (shape[i] == -1) {
                minus++;
                inferred = i;
            }
            target[i] = shape[i] == -1 ? 1 : shape[i];
        }
        if (minus > 1)
            want |= FUZZ_INVALID;
        if (!want) {
            fuzz_i128 nonzero, sub = fuzz_volume(ndim, target, &nonzero);
            if (nonzero > INT64_MAX)
                want |= FUZZ_OVERFLOW;
            else if (inferred < 0 && sub != volume)
                want |= FUZZ_INVALID;
            else if (inferred >= 0 && (sub == 0 || volume % (int64_t)sub != 0))
                want |= FUZZ_INVALID;
            else if (inferred >= 0)
                target[inferred] = volume / (int64_t)sub;
            valid = !want;
        }
    }
    /* A no-copy view must be found when one exists and refused when none
     * does (decided by brute force for small layouts; larger ones may go
     * either way). Finding the view multiplies strides by extents, which
     * may overflow only where such a product leaves int64. */
    bool maybe = false;
    if (valid && volume > 0) {
        fuzz_i128 reach = 0, d[STRIDED_MAX_NDIM];
        for (int i = 0; i < l->ndim; i++)
            reach = fuzz_clamp(reach + (fuzz_i128)magnitude(l->strides[i]) * l->shape[i]);
        bool decided = volume <= FUZZ_ENUM_LIMIT;
        bool exists = decided && reshape_exists(l, ndim, target, d);
        if (!decided) {
            want = FUZZ_INVALID | FUZZ_OVERFLOW;
            maybe = true;
        } else if (!exists) {
            /* Trying the split may carry a stride across new extents whose
             * product is the volume before it finds none fits. */
            fuzz_i128 carry = 0;
            for (int i = 0; i < l->ndim; i++) {
                fuzz_i128 c = (fuzz_i128)magnitude(l->strides[i]) * volume;
                carry = c > carry ? c : carry;
            }
            want = FUZZ_INVALID | (reach > INT64_MAX || carry > INT64_MAX ? FUZZ_OVERFLOW : 0);
        } else {
            /* The view the rules give (extent-1 axes take the running
             * stride) must keep the invariant; the search may also
             * overflow where strides times extents leave int64. */
            strided_layout t = {
                .ndim = ndim, .itemsize = l->itemsize, .slice_offset = l->slice_offset};
            bool fits = true;
            for (int i = 0; i < ndim; i++) {
                fuzz_i128 v = 0;
                int r = i, q = i;
                while (r < ndim && target[r] == 1)
                    r++;
                while (q >= 0 && target[q] == 1)
                    q--;
                if (target[i] != 1)
                    v = d[i];
                else if (r < ndim)
                    v = d[r] * target[r];
                else if (q >= 0)
                    v = d[q];
                fits = fits && fuzz_fits64(v);
                t.shape[i] = target[i];
                t.strides[i] = fits ? (int64_t)v : 0;
            }
            want = fits ? fuzz_layout_expect(&t) : FUZZ_OVERFLOW;
            if (want == 0 && reach > INT64_MAX) {
                want = FUZZ_OVERFLOW;
                maybe = true;
            }
        }
    }

    call c;
    call_prepare(&c, l, alias, "reshape");
    note_tuple(&c, "shape", ndim, shape);
    strided_status st = strided_layout_reshape(c.arg, ndim, shape, &c.out);
    if (!call_done(&c, "reshape", st, want, maybe, s->from_dense))
        return;
    const strided_layout *o = &c.out;
    check_explicit("reshape", l, o, c.ctx);
    FUZZ_REQUIRE(o->ndim == ndim, "reshape gave %d axes: %s", (int)o->ndim, c.ctx);
    for (int i = 0; i < ndim; i++)
        FUZZ_REQUIRE(o->shape[i] == target[i],
                     "reshape: extent %d is %" PRId64 ", want %" PRId64 ": %s", i, o->shape[i],
                     target[i], c.ctx);
    if (volume == 0) {
        for (int i = 0; i < ndim; i++)
            FUZZ_REQUIRE(o->strides[i] == 0, "reshape of an empty layout left stride %d: %s", i,
                         c.ctx);
    } else {
        check_sequence("reshape", l, o, c.ctx);
        /* Extent-1 axes take the running stride at their position: that of
         * the nearest non-unit axis on their right times its extent, or,
         * with none there, the stride of the nearest one on their left. */
        for (int i = 0; i < ndim; i++) {
            if (o->shape[i] != 1)
                continue;
            int r = i + 1, q = i - 1;
            while (r < ndim && o->shape[r] == 1)
                r++;
            while (q >= 0 && o->shape[q] == 1)
                q--;
            if (r < ndim)
                FUZZ_REQUIRE((fuzz_i128)o->strides[i] == fuzz_mul(o->strides[r], o->shape[r]),
                             "reshape: the extent-1 axis %d has stride %" PRId64 ", not the "
                             "running stride: %s",
                             i, o->strides[i], c.ctx);
            else if (q >= 0)
                FUZZ_REQUIRE(o->strides[i] == o->strides[q],
                             "reshape: the trailing extent-1 "
                             "axis %d has stride %" PRId64 ", not the running stride: %s",
                             i, o->strides[i], c.ctx);
        }
    }
    s->cur = *o;
}

/* Check a flatten result against the mask it was given (bits 1..ndim-1
 * count): the result keeps the C-order offsets, merges only axes the mask
 * allows, and leaves no allowed pair of contiguous neighbours unmerged. */
static void check_flatten(const char *op, const strided_layout *l, const strided_layout *o,
                          uint64_t mask, const char *ctx)
{
    check_explicit(op, l, o, ctx);
    FUZZ_REQUIRE(o->slice_offset == l->slice_offset, "%s changed the slice offset: %s", op, ctx);
    if (l->ndim == 0) {
        FUZZ_REQUIRE(o->ndim == 1 && o->shape[0] == 1 && o->strides[0] == 1,
                     "%s of a 0-d layout is not (1,):(1,): %s", op, ctx);
        return;
    }
    int boundaries = 0;
    for (int j = 1; j < l->ndim; j++)
        boundaries += !(mask >> j & 1);
    FUZZ_REQUIRE(o->ndim <= l->ndim && o->ndim >= boundaries + 1,
                 "%s gave %d axes from %d with %d forced boundaries: %s", op, (int)o->ndim,
                 (int)l->ndim, boundaries, ctx);
    int64_t volume = volume_of(l);
    if (volume == 0)
        return;
    check_sequence(op, l, o, ctx);
    /* Match the non-unit axes of the result with runs of the input's
     * (unique, since every extent is at least 2). */
    int in_axes[STRIDED_MAX_NDIM], nin = 0;
    for (int j = 0; j < l->ndim; j++)
        if (l->shape[j] != 1)
            in_axes[nin++] = j;
    int first[STRIDED_MAX_NDIM], last[STRIDED_MAX_NDIM], runs = 0, p = 0;
    for (int g = 0; g < o->ndim; g++) {
        if (o->shape[g] == 1)
            continue;
        FUZZ_REQUIRE(p < nin, "%s: result axis %d matches no input axes: %s", op, g, ctx);
        fuzz_i128 prod = 1;
        first[runs] = in_axes[p];
        while (p < nin && prod < o->shape[g])
            prod *= l->shape[in_axes[p++]];
        last[runs] = in_axes[p - 1];
        FUZZ_REQUIRE(prod == o->shape[g],
                     "%s: result extent %" PRId64 " is no product of "
                     "consecutive input extents: %s",
                     op, o->shape[g], ctx);
        for (int j = first[runs] + 1; j <= last[runs]; j++)
            FUZZ_REQUIRE(mask >> j & 1, "%s merged axis %d, which the mask does not allow: %s", op,
                         j, ctx);
        runs++;
    }
    FUZZ_REQUIRE(p == nin, "%s lost input axes: %s", op, ctx);
    for (int r = 0; r + 1 < runs; r++) {
        int a = last[r], b = first[r + 1];
        bool allowed = true;
        for (int j = a + 1; j <= b; j++)
            allowed = allowed && (mask >> j & 1);
        FUZZ_REQUIRE(!allowed || fuzz_mul(l->strides[b], l->shape[b]) != l->strides[a],
                     "%s left axes %d and %d unmerged, though contiguous and allowed: %s", op, a, b,
                     ctx);
    }
}

static void op_flatten(fuzz_input *in, state *s, bool alias)
{
    const strided_layout *l = &s->cur;
    uint8_t b = fuzz_u8(in);
    int start = 0, end = -1;
    if (b >= 64) {
        start = (int)fuzz_small(in, -l->ndim - 1, l->ndim);
        end = (int)fuzz_small(in, -l->ndim - 1, l->ndim);
    }
    fuzz_statuses want = 0;
    uint64_t mask = STRIDED_AXES_MASK_ALL;
    if (start != 0 || end != -1) {
        int a, z;
        if (!norm_axis(start, l->ndim, &a) || !norm_axis(end, l->ndim, &z) || a > z) {
            want = FUZZ_INVALID;
        } else {
            mask = 0;
            for (int j = a + 1; j <= z; j++)
                mask |= UINT64_C(1) << j;
        }
    }
    if (!want)
        want = merge_overflow(l, mask);
    call c;
    call_prepare(&c, l, alias, "flatten");
    call_note(&c, " start=%d end=%d", start, end);
    strided_status st = strided_layout_flatten(c.arg, start, end, &c.out);
    if (!call_done(&c, "flatten", st, want, want == FUZZ_OVERFLOW, s->from_dense))
        return;
    check_flatten("flatten", l, &c.out, mask, c.ctx);
    s->cur = c.out;
}

static void op_flatten_mask(fuzz_input *in, state *s, bool alias)
{
    const strided_layout *l = &s->cur;
    uint8_t b = fuzz_u8(in);
    uint64_t mask = b < 64 ? STRIDED_AXES_MASK_ALL : b < 128 ? 0 : fuzz_u64(in);
    fuzz_statuses want = merge_overflow(l, mask);
    call c;
    call_prepare(&c, l, alias, "flatten_mask");
    call_note(&c, " mask=0x%" PRIx64, mask);
    strided_status st = strided_layout_flatten_mask(c.arg, mask, &c.out);
    if (!call_done(&c, "flatten_mask", st, want, true, s->from_dense))
        return;
    check_flatten("flatten_mask", l, &c.out, mask, c.ctx);
    s->cur = c.out;
}

static void op_squeeze(fuzz_input *in, state *s, bool alias)
{
    (void)in;
    const strided_layout *l = &s->cur;
    call c;
    call_prepare(&c, l, alias, "squeeze");
    strided_status st = strided_layout_squeeze(c.arg, &c.out);
    if (!call_done(&c, "squeeze", st, 0, false, s->from_dense))
        return;
    const strided_layout *o = &c.out;
    check_explicit("squeeze", l, o, c.ctx);
    FUZZ_REQUIRE(o->slice_offset == l->slice_offset, "squeeze moved the slice offset: %s", c.ctx);
    if (volume_of(l) == 0) {
        FUZZ_REQUIRE(o->ndim == 1 && o->shape[0] == 0 && o->strides[0] == 0,
                     "squeeze of an empty layout is not (0,):(0,): %s", c.ctx);
    } else {
        int k = 0;
        index_map m;
        for (int i = 0; i < l->ndim; i++) {
            m.base[i] = 0;
            m.mult[i] = 1;
            m.from[i] = -1;
            if (l->shape[i] == 1)
                continue;
            FUZZ_REQUIRE(k < o->ndim && o->shape[k] == l->shape[i] &&
                             o->strides[k] == l->strides[i],
                         "squeeze: axis %d is not the next non-unit input axis: %s", k, c.ctx);
            m.from[i] = k++;
        }
        FUZZ_REQUIRE(o->ndim == k, "squeeze kept %d axes, want %d: %s", (int)o->ndim, k, c.ctx);
        check_map("squeeze", l, o, &m, c.ctx);
    }
    s->cur = *o;
}

static void op_unsqueeze(fuzz_input *in, state *s, bool alias)
{
    const strided_layout *l = &s->cur;
    uint8_t b = fuzz_u8(in);
    int naxes = b < 200 ? b % 5 : b < 250 ? (int)fuzz_small(in, 0, STRIDED_MAX_NDIM + 1) : -1;
    int axes[STRIDED_MAX_NDIM + 2] = {0};
    int k = naxes < 0 ? 0 : naxes;
    int out_ndim = l->ndim + k;
    for (int i = 0; i < k; i++)
        axes[i] = (int)fuzz_small(in, -out_ndim - 1, out_ndim);

    fuzz_statuses want = 0;
    strided_layout t = *l;
    if (naxes == 0) {
        /* A plain copy. */
    } else if (naxes < 0 || naxes > STRIDED_MAX_NDIM - l->ndim) {
        want = FUZZ_INVALID;
    } else {
        uint64_t inserted = 0;
        for (int i = 0; i < naxes && !want; i++) {
            int a;
            if (!norm_axis(axes[i], out_ndim, &a) || (inserted >> a & 1))
                want = FUZZ_INVALID;
            else
                inserted |= UINT64_C(1) << a;
        }
        t.ndim = out_ndim;
        t.implicit_strides = false;
        for (int i = 0, q = 0; i < out_ndim && !want; i++) {
            if (!(inserted >> i & 1)) {
                t.shape[i] = l->shape[q];
                t.strides[i] = l->strides[q];
                q++;
                continue;
            }
            t.shape[i] = 1;
            if (q < l->ndim) {
                fuzz_i128 v = fuzz_mul(l->shape[q], l->strides[q]);
                if (!fuzz_fits64(v))
                    want = FUZZ_OVERFLOW;
                t.strides[i] = (int64_t)v;
            } else {
                t.strides[i] = l->ndim > 0 ? l->strides[l->ndim - 1] : 1;
            }
        }
    }
    if (!want && naxes != 0)
        want = fuzz_layout_expect(&t);
    call c;
    call_prepare(&c, l, alias, "unsqueeze");
    note_axes(&c, "axes", k, axes);
    strided_status st = strided_layout_unsqueeze(c.arg, naxes, axes, &c.out);
    if (!call_done(&c, "unsqueeze", st, want, false, s->from_dense))
        return;
    const strided_layout *o = &c.out;
    FUZZ_REQUIRE(strided_layout_equal(o, &t) && o->implicit_strides == t.implicit_strides,
                 "unsqueeze gave another layout than the rule: %s", c.ctx);
    s->cur = *o;
}

static void op_broadcast(fuzz_input *in, state *s, bool alias)
{
    const strided_layout *l = &s->cur;
    uint8_t b = fuzz_u8(in);
    int ndim = b < 224 ? l->ndim + b % 4 : b < 240 ? l->ndim - 1 : fuzz_ndim(in, &limits);
    int64_t shape[STRIDED_MAX_NDIM + 4] = {0};
    int k = ndim < 0 ? 0 : ndim > STRIDED_MAX_NDIM + 3 ? STRIDED_MAX_NDIM + 3 : ndim;
    int lead = k - l->ndim;
    for (int i = 0; i < k; i++) {
        uint8_t c = fuzz_u8(in);
        int q = i - lead;
        if (q >= 0 && q < l->ndim && l->shape[q] != 1 && c < 224)
            shape[i] = l->shape[q];
        else if (c < 240)
            shape[i] = (int64_t)(c % 5);
        else
            shape[i] = fuzz_extent(in, &limits);
    }
    fuzz_statuses want = 0;
    index_map m;
    strided_layout t;
    if (ndim < 0 || ndim > STRIDED_MAX_NDIM) {
        want = FUZZ_INVALID;
    } else {
        for (int i = 0; i < ndim; i++)
            if (shape[i] < 0)
                want = FUZZ_INVALID;
        if (ndim < l->ndim)
            want = FUZZ_INVALID;
        for (int q = 0; q < l->ndim && !want; q++) {
            int64_t from = l->shape[q], to = shape[lead + q];
            if (from == to) {
                m.base[q] = 0;
                m.mult[q] = 1;
                m.from[q] = lead + q;
            } else if (from == 1) {
                m.base[q] = 0;
                m.mult[q] = 0;
                m.from[q] = -1;
            } else {
                want = FUZZ_INVALID;
            }
        }
        fuzz_i128 nonzero;
        fuzz_volume(ndim, shape, &nonzero);
        if (!want && nonzero > INT64_MAX)
            want = FUZZ_OVERFLOW;
        t.ndim = ndim;
        t.itemsize = l->itemsize;
        t.slice_offset = l->slice_offset;
        t.implicit_strides = false;
        for (int i = 0; i < ndim && !want; i++) {
            int q = i - lead;
            t.shape[i] = shape[i];
            t.strides[i] = q >= 0 && l->shape[q] == shape[i] ? l->strides[q] : 0;
        }
    }
    if (!want)
        want = fuzz_layout_expect(&t);
    call c;
    call_prepare(&c, l, alias, "broadcast");
    note_tuple(&c, "shape", k, shape);
    strided_status st = strided_layout_broadcast(c.arg, ndim, shape, &c.out);
    if (!call_done(&c, "broadcast", st, want, false, false))
        return;
    const strided_layout *o = &c.out;
    FUZZ_REQUIRE(strided_layout_equal(o, &t), "broadcast gave another layout than the rule: %s",
                 c.ctx);
    check_map("broadcast", l, o, &m, c.ctx);
    s->cur = *o;
    s->from_dense = false;
}

/* Byte for byte: every element of the repacked layout covers exactly the
 * bytes of the input elements it is made of. */
static void check_repack(const strided_layout *l, const strided_layout *o, int axis, bool keep,
                         const char *ctx)
{
    int old = l->itemsize, now = o->itemsize;
    FUZZ_REQUIRE(fuzz_volume(l->ndim, l->shape, NULL) * old ==
                     fuzz_volume(o->ndim, o->shape, NULL) * now,
                 "repack changed volume * itemsize: %s", ctx);
    int64_t v = volume_of(o);
    if (v == 0)
        return;
    bool drop = now > old && !keep && l->shape[axis] == now / old;
    FUZZ_REQUIRE(o->ndim == l->ndim - drop, "repack gave %d axes from %d: %s", (int)o->ndim,
                 (int)l->ndim, ctx);
    int64_t j[STRIDED_MAX_NDIM], i[STRIDED_MAX_NDIM];
    for (int64_t k = 0; k < sample_count(v); k++) {
        unravel(o->ndim, o->shape, sample_at(v, k), j);
        fuzz_i128 got = fuzz_offset(o, j) * now;
        for (int a = 0, p = 0; a < l->ndim; a++)
            i[a] = a == axis && drop ? 0 : j[p++];
        if (now > old) {
            int f = now / old;
            /* Every part of the packed element, or for very large factors
             * its first, second, middle and last. */
            for (int u = 0; u < (f <= 64 ? f : 4); u++) {
                int t = f <= 64 ? u : u == 0 ? 0 : u == 1 ? 1 : u == 2 ? f / 2 : f - 1;
                i[axis] = (drop ? 0 : j[axis] * f) + t;
                FUZZ_REQUIRE(fuzz_offset(l, i) * old == got + (fuzz_i128)t * old,
                             "repack: packed element %" PRId64 " does not cover input "
                             "element part %d: %s",
                             sample_at(v, k), t, ctx);
            }
        } else {
            int f = old / now;
            i[axis] = j[axis] / f;
            FUZZ_REQUIRE(got == fuzz_offset(l, i) * old + (fuzz_i128)(j[axis] % f) * now,
                         "repack: unpacked element %" PRId64 " is not its part of the input "
                         "element: %s",
                         sample_at(v, k), ctx);
        }
    }
}

/* The statuses strided_layout_repack must answer. */
static fuzz_statuses repack_expect(const strided_layout *l, int itemsize, intptr_t ptr,
                                   int axis_arg)
{
    int old = l->itemsize, axis;
    if (itemsize == old)
        return 0;
    fuzz_statuses bad = 0;
    bool in_range = norm_axis(axis_arg, l->ndim, &axis);
    if (!in_range)
        bad |= FUZZ_INVALID;
    if (itemsize > old) {
        int64_t v = itemsize / old;
        if (itemsize % old != 0 || ptr % itemsize != 0)
            bad |= FUZZ_INVALID;
        if (!in_range)
            return bad;
        if (l->strides[axis] != 1 || l->shape[axis] == 0 || l->shape[axis] % v != 0 ||
            l->slice_offset % v != 0)
            bad |= FUZZ_INVALID;
        for (int i = 0; i < l->ndim; i++)
            if (i != axis && l->strides[i] % v != 0)
                bad |= FUZZ_INVALID;
        return bad;
    }
    if (itemsize <= 0 || old % itemsize != 0)
        return bad | FUZZ_INVALID;
    if (!in_range)
        return bad;
    if (l->strides[axis] != 1 || l->shape[axis] == 0)
        bad |= FUZZ_INVALID;
    int64_t v = old / itemsize;
    int64_t shape[STRIDED_MAX_NDIM], strides[STRIDED_MAX_NDIM];
    bool fits = fuzz_fits64(fuzz_mul(l->slice_offset, v));
    for (int i = 0; i < l->ndim; i++) {
        fuzz_i128 e = i == axis ? fuzz_mul(l->shape[i], v) : l->shape[i];
        fuzz_i128 st = i == axis ? l->strides[i] : fuzz_mul(l->strides[i], v);
        fits = fits && fuzz_fits64(e) && fuzz_fits64(st);
        shape[i] = (int64_t)e;
        strides[i] = (int64_t)st;
    }
    if (fits) {
        fuzz_i128 nonzero, volume = fuzz_volume(l->ndim, shape, &nonzero);
        fits = nonzero <= INT64_MAX;
        if (fits && volume > 0) {
            fuzz_i128 lo, hi;
            fuzz_bounds(l->ndim, shape, strides, (int64_t)(l->slice_offset * v), &lo, &hi);
            fits = fuzz_fits64(lo) && fuzz_fits64(hi);
        }
    }
    return bad | (fits ? 0 : FUZZ_OVERFLOW);
}

static intptr_t decode_ptr(fuzz_input *in)
{
    uint8_t b = fuzz_u8(in);
    if (b < 128)
        return 0;
    if (b < 224)
        return (intptr_t)(fuzz_u16(in) * (intptr_t)(1 + b % 64));
    static const intptr_t far[] = {INTPTR_MIN, INTPTR_MAX, -64, (intptr_t)1 << 62};
    return far[b % 4];
}

static void op_repack(fuzz_input *in, state *s, bool alias)
{
    const strided_layout *l = &s->cur;
    uint8_t b = fuzz_u8(in);
    int itemsize;
    if (b < 96)
        itemsize = (int64_t)l->itemsize * (1 + b % 8) > INT32_MAX ? INT32_MAX
                                                                  : l->itemsize * (1 + b % 8);
    else if (b < 192)
        itemsize = l->itemsize / (1 + b % 8) > 0 ? l->itemsize / (1 + b % 8) : 1;
    else
        itemsize = fuzz_itemsize(in, &limits);
    intptr_t ptr = decode_ptr(in);
    uint8_t a = fuzz_u8(in);
    int axis = a < 192 ? -1 : (int)fuzz_small(in, -l->ndim - 1, l->ndim);
    bool keep = (a & 1) != 0;
    fuzz_statuses want = repack_expect(l, itemsize, ptr, axis);
    call c;
    call_prepare(&c, l, alias, "repack");
    call_note(&c, " itemsize=%d ptr=%" PRIdPTR " axis=%d keep_dim=%d", itemsize, ptr, axis, keep);
    strided_status st = strided_layout_repack(c.arg, itemsize, ptr, axis, keep, &c.out);
    if (!call_done(&c, "repack", st, want, false, false))
        return;
    const strided_layout *o = &c.out;
    FUZZ_REQUIRE(o->itemsize == itemsize, "repack gave itemsize %d: %s", (int)o->itemsize, c.ctx);
    if (itemsize == l->itemsize) {
        FUZZ_REQUIRE(strided_layout_equal(o, l) && o->implicit_strides == l->implicit_strides,
                     "repack to the same itemsize is not a copy: %s", c.ctx);
    } else {
        int ax;
        norm_axis(axis, l->ndim, &ax);
        FUZZ_REQUIRE(!o->implicit_strides, "repack kept implicit strides: %s", c.ctx);
        check_repack(l, o, ax, keep, c.ctx);
    }
    s->cur = *o;
    s->from_dense = false;
}

static void op_max_itemsize(fuzz_input *in, state *s)
{
    const strided_layout *l = &s->cur;
    uint8_t b = fuzz_u8(in);
    int64_t wide = (int64_t)l->itemsize * (1 + b % 16);
    int max = b < 224   ? (int)(wide > INT32_MAX ? INT32_MAX : wide)
              : b < 240 ? 1 + b % 16
                        : (b % 2 ? 0 : -1);
    intptr_t ptr = decode_ptr(in);
    uint8_t a = fuzz_u8(in);
    int axis_arg = a < 192 ? -1 : (int)fuzz_small(in, -l->ndim - 1, l->ndim);
    int axis;
    fuzz_statuses want = 0;
    if (max <= 0 || !norm_axis(axis_arg, l->ndim, &axis) || max < l->itemsize)
        want = FUZZ_INVALID;
    int got = -3, before = -3;
    fuzz_text t;
    char ctx[3400];
    snprintf(ctx, sizeof ctx, "max_compatible_itemsize(max=%d ptr=%" PRIdPTR " axis=%d) of %s", max,
             ptr, axis_arg, fuzz_show(l, &t));
    fuzz_mark_error();
    strided_status st = strided_layout_max_compatible_itemsize(l, max, ptr, axis_arg, &got);
    fuzz_check_outcome("max_compatible_itemsize", st, want, &got, &before, sizeof got, ctx);
    if (st != STRIDED_OK)
        return;
    FUZZ_REQUIRE(got >= l->itemsize && got % l->itemsize == 0,
                 "max_compatible_itemsize %d is no multiple of the itemsize: %s", got, ctx);
    if (l->strides[axis] != 1 || l->shape[axis] == 0)
        FUZZ_REQUIRE(got == l->itemsize,
                     "max_compatible_itemsize %d for an axis that cannot "
                     "pack: %s",
                     got, ctx);
    strided_layout o;
    if (got != l->itemsize) {
        st = strided_layout_repack(l, got, ptr, axis_arg, true, &o);
        FUZZ_REQUIRE(st == STRIDED_OK, "repack refuses the max_compatible_itemsize %d: %s", got,
                     ctx);
    }
    /* No larger candidate (a multiple of the itemsize dividing max and the
     * pointer) may repack. */
    uint64_t m = (uint64_t)max, p = magnitude((int64_t)ptr);
    while (p != 0) {
        uint64_t r = m % p;
        m = p;
        p = r;
    }
    for (int64_t cand = (int64_t)got + l->itemsize; cand <= max && max / l->itemsize <= 4096;
         cand += l->itemsize)
        if (m % (uint64_t)cand == 0)
            FUZZ_REQUIRE(strided_layout_repack(l, (int)cand, ptr, axis_arg, true, &o) != STRIDED_OK,
                         "repack accepts itemsize %" PRId64 ", above max_compatible_itemsize "
                         "%d: %s",
                         cand, got, ctx);
}

/* The dense strides of shape in an order (axes slowest first). */
static void dense_strides(int ndim, const int64_t *shape, const int *order, int64_t *out)
{
    int64_t volume = (int64_t)fuzz_volume(ndim, shape, NULL), running = 1;
    for (int k = ndim - 1; k >= 0; k--) {
        out[order[k]] = volume == 0 ? 0 : running;
        if (volume != 0)
            running *= shape[order[k]];
    }
}

/* The statuses the rules of a shape and itemsize alone call for: ndim in
 * range, extents non-negative, itemsize positive, the product of the
 * non-zero extents in int64. */
static fuzz_statuses shape_expect(int ndim, const int64_t *shape, int itemsize)
{
    if (ndim < 0 || ndim > STRIDED_MAX_NDIM)
        return FUZZ_INVALID;
    fuzz_statuses bad = itemsize <= 0 ? FUZZ_INVALID : 0;
    for (int i = 0; i < ndim; i++)
        if (shape[i] < 0)
            bad |= FUZZ_INVALID;
    if (bad)
        return bad;
    fuzz_i128 nonzero;
    fuzz_volume(ndim, shape, &nonzero);
    return nonzero > INT64_MAX ? FUZZ_OVERFLOW : 0;
}

/* The statuses of making the dense layout of shape in an axis order: its
 * byte offsets must keep the invariant. */
static fuzz_statuses dense_expect(int ndim, const int64_t *shape, int itemsize, const int *order)
{
    strided_layout t = {.ndim = ndim, .itemsize = itemsize};
    memcpy(t.shape, shape, sizeof(int64_t) * (size_t)ndim);
    dense_strides(ndim, shape, order, t.strides);
    return fuzz_layout_expect(&t);
}

/* Check a dense layout made by init_dense or to_dense. */
static void check_dense(const char *op, const strided_layout *o, int ndim, const int64_t *shape,
                        int itemsize, const int *order, const char *ctx)
{
    int64_t want[STRIDED_MAX_NDIM];
    dense_strides(ndim, shape, order, want);
    FUZZ_REQUIRE(o->ndim == ndim && o->itemsize == itemsize && o->slice_offset == 0 &&
                     !o->implicit_strides,
                 "%s: not a dense layout of the shape: %s", op, ctx);
    for (int i = 0; i < ndim; i++)
        FUZZ_REQUIRE(o->shape[i] == shape[i] && o->strides[i] == want[i],
                     "%s: axis %d is %" PRId64 ":%" PRId64 ", want %" PRId64 ":%" PRId64 ": %s", op,
                     i, o->shape[i], o->strides[i], shape[i], want[i], ctx);
}

/* The axis order (slowest first) of a dense order; false for a bad order
 * or permutation. */
static bool order_axes(strided_order order, int ndim, int nperm, const int *perm,
                       const strided_layout *keep_of, int *out)
{
    switch (order) {
    case STRIDED_ORDER_C:
        for (int i = 0; i < ndim; i++)
            out[i] = i;
        return true;
    case STRIDED_ORDER_F:
        for (int i = 0; i < ndim; i++)
            out[i] = ndim - 1 - i;
        return true;
    case STRIDED_ORDER_KEEP:
        if (keep_of == NULL)
            return false;
        stride_order_of(keep_of, out);
        return true;
    case STRIDED_ORDER_PERM: {
        if (nperm != ndim)
            return false;
        uint64_t seen = 0;
        for (int i = 0; i < nperm; i++) {
            int a;
            if (!norm_axis(perm[i], ndim, &a) || (seen >> a & 1))
                return false;
            seen |= UINT64_C(1) << a;
            out[i] = a;
        }
        return true;
    }
    default: return false;
    }
}

static void op_to_dense(fuzz_input *in, state *s, bool alias)
{
    const strided_layout *l = &s->cur;
    uint8_t b = fuzz_u8(in);
    strided_order order = b < 248 ? (strided_order)(b % 4) : (strided_order)(4 + b % 4);
    int perm[STRIDED_MAX_NDIM + 1] = {0}, nperm = 0;
    if (order == STRIDED_ORDER_PERM)
        fuzz_permutation(in, l->ndim, true, &nperm, perm);
    int axes[STRIDED_MAX_NDIM];
    bool ok = order_axes(order, l->ndim, nperm, perm, l, axes);
    bool already = order == STRIDED_ORDER_C      ? l->slice_offset == 0 && def_contiguous_c(l)
                   : order == STRIDED_ORDER_F    ? l->slice_offset == 0 && def_contiguous_f(l)
                   : order == STRIDED_ORDER_KEEP ? l->slice_offset == 0 && def_contiguous_any(l)
                                                 : false;
    fuzz_statuses want = !ok       ? FUZZ_INVALID
                         : already ? 0
                                   : dense_expect(l->ndim, l->shape, l->itemsize, axes);
    call c;
    call_prepare(&c, l, alias, "to_dense");
    call_note(&c, " order=%d", (int)order);
    note_axes(&c, "perm", nperm, perm);
    strided_status st = strided_layout_to_dense(c.arg, order, nperm, perm, &c.out);
    if (!call_done(&c, "to_dense", st, want, false, true))
        return;
    if (already)
        FUZZ_REQUIRE(strided_layout_equal(&c.out, l) &&
                         c.out.implicit_strides == l->implicit_strides,
                     "to_dense of a layout dense in that order is not a copy: %s", c.ctx);
    else
        check_dense("to_dense", &c.out, l->ndim, l->shape, l->itemsize, axes, c.ctx);
    s->cur = c.out;
    s->from_dense = true;
}

static void op_coalesce(fuzz_input *in, state *s, bool alias)
{
    (void)in;
    const strided_layout *l = &s->cur;
    call c;
    call_prepare(&c, l, alias, "coalesce");
    strided_status st = strided_layout_coalesce(c.arg, &c.out);
    if (!call_done(&c, "coalesce", st, 0, false, false))
        return;
    const strided_layout *o = &c.out;
    check_explicit("coalesce", l, o, c.ctx);
    FUZZ_REQUIRE(o->slice_offset == l->slice_offset, "coalesce moved the slice offset: %s", c.ctx);
    int64_t volume = volume_of(l);
    if (volume == 0) {
        FUZZ_REQUIRE(o->ndim == 1 && o->shape[0] == 0 && o->strides[0] == 0,
                     "coalesce of an empty layout is not (0,):(0,): %s", c.ctx);
    } else {
        for (int i = 0; i < o->ndim; i++)
            FUZZ_REQUIRE(o->shape[i] != 1, "coalesce kept an extent-1 axis %d: %s", i, c.ctx);
        for (int i = 0; i + 1 < o->ndim; i++)
            FUZZ_REQUIRE(fuzz_mul(o->strides[i + 1], o->shape[i + 1]) != o->strides[i],
                         "coalesce left axes %d and %d mergeable: %s", i, i + 1, c.ctx);
        check_sequence("coalesce", l, o, c.ctx);
    }
    s->cur = *o;
    s->from_dense = false;
}

/* Parse "(a,b):(c,d)+off" back and compare with the layout. */
static void check_format_text(const strided_layout *l, const char *text, const char *ctx)
{
    const char *p = text;
    for (int r = 0; r < 2; r++) {
        FUZZ_REQUIRE(*p == (r ? ':' : '('), "format: unexpected text \"%s\": %s", text, ctx);
        p += r ? 1 : 0;
        FUZZ_REQUIRE(*p == '(', "format: no tuple in \"%s\": %s", text, ctx);
        p++;
        int n = 0;
        while (*p != ')') {
            char *end;
            long long v = strtoll(p, &end, 10);
            FUZZ_REQUIRE(end != p && n < l->ndim, "format: bad tuple in \"%s\": %s", text, ctx);
            FUZZ_REQUIRE(v == (r ? l->strides[n] : l->shape[n]),
                         "format: entry %d of tuple %d "
                         "reads %lld in \"%s\": %s",
                         n, r, v, text, ctx);
            n++;
            p = end;
            if (*p == ',')
                p++;
        }
        FUZZ_REQUIRE(n == l->ndim, "format: %d entries for %d axes in \"%s\": %s", n, (int)l->ndim,
                     text, ctx);
        FUZZ_REQUIRE(l->ndim != 1 || p[-1] == ',',
                     "format: a 1-tuple without its comma in "
                     "\"%s\": %s",
                     text, ctx);
        p++;
    }
    long long off = 0;
    if (*p != '\0') {
        char *end;
        FUZZ_REQUIRE(*p == '+' || *p == '-', "format: bad offset in \"%s\": %s", text, ctx);
        off = strtoll(p, &end, 10);
        FUZZ_REQUIRE(*end == '\0' && off != 0, "format: bad offset in \"%s\": %s", text, ctx);
    }
    FUZZ_REQUIRE(off == l->slice_offset, "format: offset %lld in \"%s\": %s", off, text, ctx);
}

/* The snprintf contract on a buffer of size bytes: the full length
 * returned, a NUL-terminated prefix written, nothing past size touched. */
static void check_truncated(const char *op, const char *full, size_t len, const char *buf,
                            size_t size, size_t got, const char *ctx)
{
    FUZZ_REQUIRE(got == len, "%s into %zu bytes returned %zu, the full text needs %zu: %s", op,
                 size, got, len, ctx);
    if (size == 0)
        return;
    size_t n = len < size - 1 ? len : size - 1;
    FUZZ_REQUIRE(memcmp(buf, full, n) == 0 && buf[n] == '\0',
                 "%s into %zu bytes did not write the NUL-terminated prefix: %s", op, size, ctx);
    for (size_t k = size; k < size + 16; k++)
        FUZZ_REQUIRE((unsigned char)buf[k] == 0xEE,
                     "%s wrote byte %zu of a %zu-byte "
                     "buffer: %s",
                     op, k, size, ctx);
}

static void op_format(fuzz_input *in, state *s)
{
    const strided_layout *l = &s->cur;
    size_t size = fuzz_u8(in) % 72;
    fuzz_text t;
    char ctx[3400];
    snprintf(ctx, sizeof ctx, "format(size=%zu) of %s", size, fuzz_show(l, &t));
    static char full[4096];
    size_t len = strided_layout_format(l, full, sizeof full);
    FUZZ_REQUIRE(len < sizeof full && strlen(full) == len, "format returned %zu for \"%s\": %s",
                 len, full, ctx);
    check_format_text(l, full, ctx);
    char small[72 + 16];
    memset(small, 0xEE, sizeof small);
    size_t got = strided_layout_format(l, size == 0 && (len & 1) ? NULL : small, size);
    check_truncated("format", full, len, small, size, got, ctx);
}

static void op_format_grid(fuzz_input *in, state *s)
{
    const strided_layout *l = &s->cur;
    size_t size = fuzz_u8(in) % 96;
    fuzz_text t;
    char ctx[3400];
    snprintf(ctx, sizeof ctx, "format_grid(size=%zu) of %s", size, fuzz_show(l, &t));
    /* The grid: rows (1 for 0-d and 1-d layouts) by columns, plus a row
     * and a column of labels, at most STRIDED_GRID_MAX_CELLS cells. */
    int64_t rows = l->ndim == 2 ? l->shape[0] : 1, cols = l->ndim == 0 ? 1 : l->shape[l->ndim - 1];
    fuzz_i128 cells = ((fuzz_i128)rows + 1) * ((fuzz_i128)cols + 1);
    fuzz_statuses want = l->ndim > 2 || cells > STRIDED_GRID_MAX_CELLS ? FUZZ_INVALID : 0;
    /* Grids of up to a million cells are legal but slow to draw and read
     * back; large ones are left to the unit tests. */
    if (!want && cells > 4 * FUZZ_ENUM_LIMIT)
        return;
    size_t len = 12345, before = 12345;
    fuzz_mark_error();
    strided_status st = strided_layout_format_grid(l, NULL, 0, &len);
    fuzz_check_outcome("format_grid", st, want, &len, &before, sizeof len, ctx);
    if (st != STRIDED_OK)
        return;
    char *full = malloc(len + 1);
    FUZZ_REQUIRE(full != NULL, "format_grid needs %zu bytes: %s", len, ctx);
    size_t len2 = 0;
    st = strided_layout_format_grid(l, full, len + 1, &len2);
    FUZZ_REQUIRE(st == STRIDED_OK && len2 == len && strlen(full) == len,
                 "format_grid into %zu bytes wrote %zu, said %zu: %s", len + 1, strlen(full), len2,
                 ctx);
    /* Header line, column indices, rule, then per row its cells and a
     * rule. */
    int64_t row_stride = l->ndim == 2 ? l->strides[0] : 0;
    int64_t col_stride = l->ndim == 0 ? 0 : l->strides[l->ndim - 1];
    static char header[4096];
    strided_layout_format(l, header, sizeof header);
    size_t hl = strlen(header);
    FUZZ_REQUIRE(strncmp(full, header, hl) == 0 && (full[hl] == '\n' || full[hl] == '\0'),
                 "format_grid's first line is not the layout: %s", ctx);
    int64_t lines = 1;
    for (char *p = full; *p; p++)
        lines += *p == '\n';
    FUZZ_REQUIRE(lines == 3 + 2 * rows,
                 "format_grid drew %" PRId64 " lines for %" PRId64 " rows: %s", lines, rows, ctx);
    char *line = full;
    for (int k = 0; k < 3 && rows > 0; k++)
        line = strchr(line, '\n') + 1;
    for (int64_t r = 0; r < rows; r++) {
        char *p = strchr(line, '|');
        for (int64_t col = 0; col < cols; col++) {
            FUZZ_REQUIRE(p != NULL, "format_grid: row %" PRId64 " has too few cells: %s", r, ctx);
            long long v = strtoll(p + 1, NULL, 10);
            long long want_v = (long long)((fuzz_i128)l->slice_offset + fuzz_mul(r, row_stride) +
                                           fuzz_mul(col, col_stride));
            FUZZ_REQUIRE(v == want_v,
                         "format_grid: cell (%" PRId64 ",%" PRId64 ") reads %lld, "
                         "want %lld: %s",
                         r, col, v, want_v, ctx);
            p = strchr(p + 1, '|');
        }
        /* Past this row's line and the rule under it. */
        line = strchr(line, '\n') + 1;
        if (r + 1 < rows)
            line = strchr(line, '\n') + 1;
    }
    char small[96 + 16];
    memset(small, 0xEE, sizeof small);
    size_t got = 0;
    st = strided_layout_format_grid(l, small, size, &got);
    FUZZ_REQUIRE(st == STRIDED_OK, "format_grid failed on a small buffer: %s", ctx);
    check_truncated("format_grid", full, len, small, size, got, ctx);
    free(full);
}

/* A layout filled in by hand: the current one with one field overwritten.
 * strided_layout_validate must answer what the invariant's rules say. */
static void op_validate(fuzz_input *in, state *s)
{
    strided_layout l = s->cur;
    uint8_t b = fuzz_u8(in);
    int axis = l.ndim > 0 ? (int)(fuzz_u8(in) % (unsigned)l.ndim) : 0;
    switch (b % 6) {
    case 0:
        if (l.ndim > 0)
            l.shape[axis] = fuzz_extent(in, &limits);
        break;
    case 1:
        if (l.ndim > 0)
            l.strides[axis] = fuzz_stride(in, &limits);
        break;
    case 2: l.slice_offset = fuzz_stride(in, &limits); break;
    case 3: l.itemsize = fuzz_itemsize(in, &limits); break;
    case 4: l.ndim = fuzz_ndim(in, &limits); break;
    default:
        if (l.ndim > 0)
            l.strides[axis] = fuzz_edge(in);
        break;
    }
    if (l.ndim > s->cur.ndim && l.ndim <= STRIDED_MAX_NDIM)
        for (int i = s->cur.ndim; i < l.ndim; i++) {
            l.shape[i] = fuzz_extent(in, &limits);
            l.strides[i] = fuzz_stride(in, &limits);
        }
    fuzz_text t;
    char ctx[3400];
    snprintf(ctx, sizeof ctx, "validate of the hand-filled %s", fuzz_show(&l, &t));
    fuzz_mark_error();
    strided_status st = strided_layout_validate(&l);
    fuzz_check_outcome("validate", st, fuzz_layout_expect(&l), NULL, NULL, 0, ctx);
    if (b == 255) {
        fuzz_mark_error();
        st = strided_layout_validate(NULL);
        fuzz_check_outcome("validate(NULL)", st, FUZZ_INVALID, NULL, NULL, 0, ctx);
    }
}

/* NULL arguments: a NULL layout or out, or a NULL array with a positive
 * count, must be refused (INVALID, with a message, the output untouched);
 * a NULL array with a count of 0 is allowed. */
static void op_nulls(fuzz_input *in, state *s)
{
    const strided_layout *l = &s->cur;
    uint8_t b = fuzz_u8(in);
    strided_layout out, before;
    memset(&out, 0xA5, sizeof out);
    memcpy(&before, &out, sizeof out);
    int64_t shape[1] = {1}, bytes[STRIDED_MAX_NDIM];
    int axes[1] = {0}, isz = 0;
    size_t len = 0;
    strided_index idx[1] = {strided_index_all(1)};
    char buf[8];
    fuzz_text t;
    char ctx[3400];
    snprintf(ctx, sizeof ctx, "NULL-argument case %d with %s", b % 32, fuzz_show(l, &t));
    fuzz_trace(ctx);
    fuzz_mark_error();
    strided_status st;
    bool wrote = true; /* the call was given &out */
    switch (b % 32) {
    case 0: st = strided_layout_init(NULL, 1, shape, NULL, 1), wrote = false; break;
    case 1: st = strided_layout_init(&out, 1, NULL, NULL, 1); break;
    case 2:
        st = strided_layout_init_dense(NULL, 1, shape, 1, STRIDED_ORDER_C, 0, NULL), wrote = false;
        break;
    case 3: st = strided_layout_init_dense(&out, 1, shape, 1, STRIDED_ORDER_PERM, 1, NULL); break;
    case 4: st = strided_layout_init_byte_strides(&out, 1, NULL, NULL, 1); break;
    case 5: st = strided_layout_strides_in_bytes(NULL, bytes), wrote = false; break;
    case 6: st = strided_layout_slice_offset_in_bytes(l, NULL), wrote = false; break;
    case 7: st = strided_layout_required_size_in_bytes(l, NULL), wrote = false; break;
    case 8: st = strided_layout_flattened_axis_mask(l, NULL), wrote = false; break;
    case 9:
        st = strided_layout_max_compatible_itemsize(NULL, 16, 0, -1, &isz), wrote = false;
        break;
    case 10: st = strided_layout_reshape(l, 1, NULL, &out); break;
    case 11: st = strided_layout_reshape(NULL, 1, shape, &out); break;
    case 12: st = strided_layout_permute(l, l->ndim + (l->ndim == 0), NULL, &out); break;
    case 13: st = strided_layout_flatten(l, 0, -1, NULL), wrote = false; break;
    case 14: st = strided_layout_flatten_mask(NULL, 0, &out); break;
    case 15: st = strided_layout_squeeze(l, NULL), wrote = false; break;
    case 16: st = strided_layout_unsqueeze(l, 1, NULL, &out); break;
    case 17: st = strided_layout_broadcast(l, l->ndim + 1, NULL, &out); break;
    case 18: st = strided_layout_repack(NULL, 1, 0, -1, true, &out); break;
    case 19: st = strided_layout_slice(l, 1, NULL, &out); break;
    case 20: st = strided_layout_to_dense(l, STRIDED_ORDER_PERM, 1, NULL, &out); break;
    case 21: st = strided_layout_coalesce(NULL, &out); break;
    case 22: st = strided_layout_format_grid(NULL, buf, sizeof buf, &len), wrote = false; break;
    case 23: st = strided_layout_format_grid(l, NULL, 4, &len), wrote = false; break;
    default: {
        /* Counts of 0 with NULL arrays: as with any other array. */
        strided_layout want;
        bool ok = true;
        switch (b % 32) {
        case 24:
            ok = l->ndim == 0;
            st = strided_layout_permute(l, 0, NULL, &out);
            strided_layout_permute(l, 0, axes, &want);
            break;
        case 25:
            st = strided_layout_slice(l, 0, NULL, &out);
            strided_layout_slice(l, 0, idx, &want);
            break;
        case 26:
            st = strided_layout_unsqueeze(l, 0, NULL, &out);
            want = *l;
            break;
        case 27:
            ok = strided_layout_volume(l) == 1;
            st = strided_layout_reshape(l, 0, NULL, &out);
            strided_layout_reshape(l, 0, shape, &want);
            break;
        case 28:
            ok = l->ndim == 0;
            st = strided_layout_broadcast(l, 0, NULL, &out);
            strided_layout_broadcast(l, 0, shape, &want);
            break;
        case 29:
            ok = l->ndim == 0;
            st = strided_layout_strides_in_bytes(l, NULL);
            wrote = false;
            break;
        case 30:
            st = strided_layout_init(&out, 0, NULL, NULL, l->itemsize);
            strided_layout_init(&want, 0, shape, NULL, l->itemsize);
            break;
        default:
            ok = l->ndim == 0;
            st = strided_layout_to_dense(l, STRIDED_ORDER_PERM, 0, NULL, &out);
            strided_layout_to_dense(l, STRIDED_ORDER_PERM, 0, axes, &want);
            break;
        }
        if (!ok)
            return; /* a count the layout makes invalid anyway */
        FUZZ_REQUIRE(st == STRIDED_OK, "a NULL array with a count of 0 was refused (%s): %s",
                     strided_status_name(st), ctx);
        if (wrote)
            FUZZ_REQUIRE(strided_layout_equal(&out, &want) &&
                             out.implicit_strides == want.implicit_strides,
                         "a NULL array with a count of 0 gave another result: %s", ctx);
        return;
    }
    }
    fuzz_check_outcome("a call with a NULL argument", st, FUZZ_INVALID, wrote ? &out : NULL,
                       &before, sizeof out, ctx);
}

/* Make the input's first layout and check the constructor's outcome. */
static bool make_layout(fuzz_input *in, state *s)
{
    fuzz_layout_args a;
    fuzz_layout_decode(in, &limits, &a);
    strided_layout out, before;
    memset(&out, 0xA5, sizeof out);
    memcpy(&before, &out, sizeof out);
    fuzz_statuses want;
    int order[STRIDED_MAX_NDIM];
    if (a.make == FUZZ_MAKE_DENSE) {
        want = 0;
        /* The shape's own rules (extents, itemsize, volume) first; the
         * strides are the order's, checked by dense_expect below (the C
         * strides fuzz_init_expect assumes are not an F or permuted
         * layout's). */
        if (a.order != STRIDED_ORDER_C && a.order != STRIDED_ORDER_F &&
            a.order != STRIDED_ORDER_PERM)
            want = FUZZ_INVALID;
        else
            want = shape_expect(a.ndim, a.shape, a.itemsize);
        if (a.ndim >= 0 && a.ndim <= STRIDED_MAX_NDIM) {
            if (!order_axes(a.order, a.ndim, a.nperm, a.perm, NULL, order))
                want |= FUZZ_INVALID;
            if (!want)
                want = dense_expect(a.ndim, a.shape, a.itemsize, order);
        }
    } else {
        want = fuzz_init_expect(a.ndim, a.shape, a.make == FUZZ_MAKE_IMPLICIT ? NULL : a.strides,
                                a.itemsize, a.make == FUZZ_MAKE_BYTES);
    }
    char ctx[3400];
    strided_layout shown = {.ndim = a.ndim, .itemsize = a.itemsize};
    memcpy(shown.shape, a.shape, sizeof a.shape);
    memcpy(shown.strides, a.strides, sizeof a.strides);
    fuzz_text t;
    snprintf(ctx, sizeof ctx, "construction %d (order %d, nperm %d) of %s", (int)a.make,
             (int)a.order, a.nperm, fuzz_show(&shown, &t));
    fuzz_trace(ctx);
    fuzz_mark_error();
    strided_status st = fuzz_layout_make(&a, &out);
    fuzz_check_outcome("init", st, want, &out, &before, sizeof out, ctx);
    if (st != STRIDED_OK)
        return false;
    if (a.make == FUZZ_MAKE_DENSE) {
        check_dense("init_dense", &out, a.ndim, a.shape, a.itemsize, order, ctx);
    } else {
        FUZZ_REQUIRE(out.ndim == a.ndim && out.itemsize == a.itemsize && out.slice_offset == 0 &&
                         out.implicit_strides == (a.make == FUZZ_MAKE_IMPLICIT),
                     "init made another layout: %s", ctx);
        for (int i = 0; i < a.ndim; i++) {
            int64_t want_stride = a.make == FUZZ_MAKE_BYTES     ? a.strides[i] / a.itemsize
                                  : a.make == FUZZ_MAKE_STRIDES ? a.strides[i]
                                                                : out.strides[i];
            FUZZ_REQUIRE(out.shape[i] == a.shape[i] && out.strides[i] == want_stride,
                         "init: axis %d is %" PRId64 ":%" PRId64 ": %s", i, out.shape[i],
                         out.strides[i], ctx);
        }
    }
    s->cur = out;
    s->from_dense = a.make == FUZZ_MAKE_IMPLICIT || a.make == FUZZ_MAKE_DENSE ||
                    (def_contiguous_any(&out) && out.slice_offset == 0);
    check_queries(&out, s->from_dense, ctx);
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input in = fuzz_input_make(data, size);
    state s;
    if (!make_layout(&in, &s))
        return 0;
    for (int k = 0; k < MAX_OPS && !fuzz_exhausted(&in); k++) {
        uint8_t b = fuzz_u8(&in);
        bool alias = (b & 0x80) != 0;
        switch ((b & 0x7F) % 16) {
        case 0: op_slice(&in, &s, alias); break;
        case 1: op_permute(&in, &s, alias); break;
        case 2: op_reshape(&in, &s, alias); break;
        case 3: op_flatten(&in, &s, alias); break;
        case 4: op_flatten_mask(&in, &s, alias); break;
        case 5: op_squeeze(&in, &s, alias); break;
        case 6: op_unsqueeze(&in, &s, alias); break;
        case 7: op_broadcast(&in, &s, alias); break;
        case 8: op_repack(&in, &s, alias); break;
        case 9: op_to_dense(&in, &s, alias); break;
        case 10: op_coalesce(&in, &s, alias); break;
        case 11: op_format(&in, &s); break;
        case 12: op_format_grid(&in, &s); break;
        case 13: op_validate(&in, &s); break;
        case 14: op_nulls(&in, &s); break;
        default: op_max_itemsize(&in, &s); break;
        }
    }
    return 0;
}
