/*
 * fuzz_input.h: the byte decoder every harness reads its input with.
 *
 * A fuzz input is consumed front to back. Every read takes what it needs
 * from the front and reads zero bytes once the input is exhausted, so any
 * byte string decodes to something and a short input decodes to the
 * simplest values (zeros, small extents, itemsize 1). The decoders for
 * extents, strides, itemsizes and dimension counts spend most of their
 * range on small values and the rest on the edges the library must handle:
 * 0 and 1, powers of two around 2**31 and 2**62, INT64_MIN and INT64_MAX,
 * and raw 64-bit values. A fuzz_limits value says how wide each decoder
 * may go, so the layout harness can ask for anything and the copy
 * harnesses for layouts small enough to enumerate.
 *
 * fuzz/make_seeds.py writes inputs in this format; change both together.
 *
 * Ownership: a fuzz_input borrows the fuzzer's bytes for one call.
 */
#ifndef FUZZ_INPUT_H
#define FUZZ_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "strided/layout.h"

typedef struct fuzz_input {
    const uint8_t *data;
    size_t size;
} fuzz_input;

static inline fuzz_input fuzz_input_make(const uint8_t *data, size_t size)
{
    fuzz_input in = {data, size};
    return in;
}

static inline bool fuzz_exhausted(const fuzz_input *in)
{
    return in->size == 0;
}

static inline uint8_t fuzz_u8(fuzz_input *in)
{
    if (in->size == 0)
        return 0;
    uint8_t b = in->data[0];
    in->data++;
    in->size--;
    return b;
}

/* n bytes, little-endian, into an unsigned value; missing bytes are 0. */
static inline uint64_t fuzz_bytes(fuzz_input *in, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v |= (uint64_t)fuzz_u8(in) << (8 * i);
    return v;
}

static inline uint16_t fuzz_u16(fuzz_input *in)
{
    return (uint16_t)fuzz_bytes(in, 2);
}
static inline uint32_t fuzz_u32(fuzz_input *in)
{
    return (uint32_t)fuzz_bytes(in, 4);
}
static inline uint64_t fuzz_u64(fuzz_input *in)
{
    return fuzz_bytes(in, 8);
}

static inline bool fuzz_bool(fuzz_input *in)
{
    return (fuzz_u8(in) & 1) != 0;
}

/* A value in [lo, hi] from one byte (hi - lo < 256 keeps it uniform). */
static inline int64_t fuzz_small(fuzz_input *in, int64_t lo, int64_t hi)
{
    uint64_t span = (uint64_t)(hi - lo) + 1;
    return lo + (int64_t)((uint64_t)fuzz_u8(in) % span);
}

/* The remaining bytes, up to n, copied into buf as a NUL-terminated string
 * (buf has room for n + 1 bytes); returns the length. */
static inline size_t fuzz_string(fuzz_input *in, char *buf, size_t n)
{
    size_t len = in->size < n ? in->size : n;
    memcpy(buf, in->data, len);
    buf[len] = '\0';
    in->data += len;
    in->size -= len;
    return len;
}

/* How wide the decoders go. */
typedef struct fuzz_limits {
    int max_ndim;       /* the usual dimension counts are 0..max_ndim */
    bool wide_ndim;     /* sometimes up to 64, and sometimes -1 or 65 */
    int64_t max_extent; /* small extents are 0..max_extent */
    int64_t max_long;   /* without edges, some extents are 1..max_long
                             (long rows for the vector loops); 0: none */
    int64_t max_stride; /* small strides are -max_stride..max_stride */
    int max_itemsize;   /* small itemsizes are 1..max_itemsize */
    bool edges;         /* huge and extreme values, bad itemsizes */
} fuzz_limits;

/* Edge values for extents and strides, in decoding order. */
static const int64_t fuzz_edge_values[] = {
    INT64_MAX,
    INT64_MIN,
    INT64_MAX - 1,
    INT64_MIN + 1,
    INT64_C(1) << 62,
    -(INT64_C(1) << 62),
    (INT64_C(1) << 62) + 1,
    INT64_C(1) << 32,
    -(INT64_C(1) << 32),
    INT64_C(2147483647),
    INT64_C(2147483648),
    INT64_C(2147483649),
    -INT64_C(2147483648),
    INT64_C(3037000499), /* floor(sqrt(INT64_MAX)) */
    INT64_C(3037000500),
    INT64_C(4294967295),
    INT64_C(1) << 40,
    INT64_C(1) << 21,
    INT64_C(65536),
    INT64_C(1000003),
    INT64_MAX / 2,
    INT64_MAX / 3,
    INT64_MIN / 2,
    -(INT64_C(1) << 40),
};
#define FUZZ_EDGE_COUNT (sizeof fuzz_edge_values / sizeof fuzz_edge_values[0])

static inline int64_t fuzz_edge(fuzz_input *in)
{
    return fuzz_edge_values[fuzz_u8(in) % FUZZ_EDGE_COUNT];
}

/* A dimension count. Tag byte: 0..223 small (0..max_ndim), 224..247 up to
 * 64, 248..255 one of -1, 65, 64, 0 (when wide_ndim). */
static inline int fuzz_ndim(fuzz_input *in, const fuzz_limits *lim)
{
    uint8_t b = fuzz_u8(in);
    if (b < 224 || !lim->wide_ndim)
        return b % (lim->max_ndim + 1);
    if (b < 248)
        return (int)fuzz_small(in, 0, STRIDED_MAX_NDIM);
    static const int odd[] = {-1, STRIDED_MAX_NDIM + 1, STRIDED_MAX_NDIM, 0};
    return odd[b % 4];
}

/* An extent. Tag byte: top three bits pick the class. Classes 0..5 are
 * small (0..max_extent, from the low bits); 6 is an edge value or a
 * 16-bit value; 7 a raw 64-bit value (often negative). Without edges,
 * class 6 is a long extent (1..max_long, from the next byte) and the
 * others are small. */
static inline int64_t fuzz_extent(fuzz_input *in, const fuzz_limits *lim)
{
    uint8_t b = fuzz_u8(in);
    int cls = b >> 5;
    if (cls == 6 && !lim->edges && lim->max_long > 0)
        return 1 + (int64_t)(fuzz_u8(in) % (uint64_t)lim->max_long);
    if (cls < 6 || !lim->edges)
        return (int64_t)((b & 31) % (lim->max_extent + 1));
    if (cls == 6)
        return (b & 1) ? fuzz_edge(in) : (int64_t)fuzz_u16(in);
    return (int64_t)fuzz_u64(in);
}

/* A stride in elements. Tag byte: classes 0..4 small signed
 * (-max_stride..max_stride); 5 is 0, 1 or -1 and multiples of 2**k; 6 an
 * edge value or a signed 16-bit value; 7 a raw 64-bit value. Without
 * edges, classes 6 and 7 give multiples of max_stride instead (the gapped
 * layouts copies see). */
static inline int64_t fuzz_stride(fuzz_input *in, const fuzz_limits *lim)
{
    uint8_t b = fuzz_u8(in);
    int cls = b >> 5;
    int64_t low = b & 31;
    if (cls < 5)
        return (int64_t)((uint64_t)fuzz_u8(in) % (uint64_t)(2 * lim->max_stride + 1)) -
               lim->max_stride;
    if (cls == 5) {
        static const int64_t unit[] = {0, 1, -1, 2, -2, 4, -4, 8};
        return unit[low % 8];
    }
    if (!lim->edges)
        return (low % 2 ? -1 : 1) * (low / 2 % 4 + 2) * lim->max_stride;
    if (cls == 6)
        return (b & 1) ? fuzz_edge(in) : (int64_t)(int16_t)fuzz_u16(in);
    return (int64_t)fuzz_u64(in);
}

/* An itemsize. Tag byte: 0..191 a common size (1, 2, 4, 8, 16, 3, 5, 12
 * bounded by max_itemsize) or 1..max_itemsize; 192..255 (with edges) an
 * edge value: 0, -1, INT32_MAX, INT32_MIN, 2**20, 64, 7, 2**30. */
static inline int fuzz_itemsize(fuzz_input *in, const fuzz_limits *lim)
{
    uint8_t b = fuzz_u8(in);
    if (b >= 192 && lim->edges) {
        static const int edge[] = {0, -1, INT32_MAX, INT32_MIN, 1 << 20, 64, 7, 1 << 30};
        return edge[b % 8];
    }
    if (b < 96) {
        static const int common[] = {1, 2, 4, 8, 16, 3, 5, 12};
        int v = common[b % 8];
        return v <= lim->max_itemsize ? v : 1 + v % lim->max_itemsize;
    }
    return 1 + b % lim->max_itemsize;
}

/* An index into an axis of extent n, for slicing and integer indexing:
 * mostly within -n-2..n+1, sometimes an edge value. */
static inline int64_t fuzz_index_value(fuzz_input *in, int64_t n)
{
    uint8_t b = fuzz_u8(in);
    if (b >= 240)
        return fuzz_edge(in);
    int64_t span = n < 64 ? n : 64;
    return (int64_t)(b % (2 * span + 4)) - span - 2;
}

/* One position of a slicing expression for an axis of extent n. Tag
 * byte: bit 0 slice or integer, bits 1 and 2 has_start / has_stop, bits
 * 3..5 the step (1, -1, 2, -2, 3, -3, 0 and an edge or a small value), and
 * 255 an unknown kind. */
static inline strided_index fuzz_index(fuzz_input *in, int64_t n)
{
    uint8_t b = fuzz_u8(in);
    strided_index x = strided_index_at(0);
    if (b == 255) {
        x.kind = (strided_index_kind)2;
        return x;
    }
    if (!(b & 1)) {
        x.start = fuzz_index_value(in, n);
        return x;
    }
    x.kind = STRIDED_INDEX_SLICE;
    x.has_start = (b & 2) != 0;
    x.has_stop = (b & 4) != 0;
    x.start = x.has_start ? fuzz_index_value(in, n) : 0;
    x.stop = x.has_stop ? fuzz_index_value(in, n) : 0;
    static const int64_t steps[] = {1, -1, 2, -2, 3, -3, 0};
    int s = (b >> 3) & 7;
    if (s < 7) {
        x.step = steps[s];
    } else {
        uint8_t c = fuzz_u8(in);
        static const int64_t far[] = {INT64_MIN, INT64_MAX, -INT64_MAX, INT64_C(1) << 62};
        x.step = c >= 252 ? far[c % 4] : (int64_t)(int8_t)c;
    }
    return x;
}

/* How a decoded layout is made. */
typedef enum fuzz_make {
    FUZZ_MAKE_STRIDES = 0,  /* strided_layout_init with explicit strides */
    FUZZ_MAKE_IMPLICIT = 1, /* strided_layout_init with strides NULL */
    FUZZ_MAKE_BYTES = 2,    /* strided_layout_init_byte_strides */
    FUZZ_MAKE_DENSE = 3     /* strided_layout_init_dense (C, F, PERM, bad) */
} fuzz_make;

/* The arguments of one layout construction, as decoded. The arrays have
 * room for ndim up to 64; ndim itself may be out of range. */
typedef struct fuzz_layout_args {
    fuzz_make make;
    int ndim;
    int64_t shape[STRIDED_MAX_NDIM];
    int64_t strides[STRIDED_MAX_NDIM]; /* elements, or bytes for FUZZ_MAKE_BYTES */
    int itemsize;
    strided_order order; /* FUZZ_MAKE_DENSE */
    int nperm;
    int perm[STRIDED_MAX_NDIM];
} fuzz_layout_args;

/* A permutation of n axes (nperm == n) decoded as a Fisher-Yates shuffle;
 * with bad, sometimes a wrong length, a repeated or an out-of-range axis,
 * and negative axes counting from the end. */
static inline void fuzz_permutation(fuzz_input *in, int n, bool bad, int *nperm, int *perm)
{
    int k = n < 0 ? 0 : n > STRIDED_MAX_NDIM ? STRIDED_MAX_NDIM : n;
    for (int i = 0; i < k; i++)
        perm[i] = i;
    for (int i = k - 1; i > 0; i--) {
        int j = (int)(fuzz_u8(in) % (unsigned)(i + 1));
        int t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    *nperm = n;
    uint8_t b = fuzz_u8(in);
    if (b & 1 && k > 0)
        perm[b / 2 % k] -= n; /* the same axis, counted from the end */
    if (!bad || b < 224 || k == 0)
        return;
    switch (b % 4) {
    case 0: *nperm = n + 1 - 2 * (b / 4 % 2); break;
    case 1: perm[0] = perm[k - 1]; break;
    case 2: perm[b / 4 % k] = n; break;
    default: perm[b / 4 % k] = -n - 1; break;
    }
}

/* Decode the arguments of a layout: a byte for how it is made, ndim, the
 * itemsize, then per axis the extent and (for explicit strides) the stride.
 * Byte strides are decoded as element strides times the itemsize, and
 * sometimes moved off that multiple by a few bytes. itemsize > 0 is used
 * instead of a decoded one (the byte is still read). */
static inline void fuzz_layout_decode_itemsize(fuzz_input *in, const fuzz_limits *lim, int itemsize,
                                               fuzz_layout_args *a)
{
    memset(a, 0, sizeof *a);
    uint8_t how = fuzz_u8(in);
    a->make = (fuzz_make)(how % 4);
    a->ndim = fuzz_ndim(in, lim);
    a->itemsize = fuzz_itemsize(in, lim);
    if (itemsize > 0)
        a->itemsize = itemsize;
    int n = a->ndim < 0 ? 0 : a->ndim > STRIDED_MAX_NDIM ? STRIDED_MAX_NDIM : a->ndim;
    for (int i = 0; i < n; i++) {
        a->shape[i] = fuzz_extent(in, lim);
        if (a->make == FUZZ_MAKE_STRIDES || a->make == FUZZ_MAKE_BYTES)
            a->strides[i] = fuzz_stride(in, lim);
    }
    if (a->make == FUZZ_MAKE_BYTES) {
        uint8_t skew = fuzz_u8(in);
        for (int i = 0; i < n; i++) {
            /* Unsigned: the product may wrap; such strides are rejected
             * (not a multiple) or taken as the huge values they are. */
            a->strides[i] = (int64_t)((uint64_t)a->strides[i] * (uint64_t)(int64_t)a->itemsize);
            if (skew >= 224 && i == skew % (n > 0 ? n : 1))
                a->strides[i] = (int64_t)((uint64_t)a->strides[i] + 1 + skew % 3);
        }
    }
    if (a->make == FUZZ_MAKE_DENSE) {
        uint8_t o = fuzz_u8(in);
        a->order = o < 240 ? (strided_order)(o % 3 == 2 ? STRIDED_ORDER_PERM : o % 3)
                           : (strided_order)(o % 2 ? STRIDED_ORDER_KEEP : 7);
        if (a->order == STRIDED_ORDER_PERM)
            fuzz_permutation(in, a->ndim, lim->edges, &a->nperm, a->perm);
    }
}

static inline void fuzz_layout_decode(fuzz_input *in, const fuzz_limits *lim, fuzz_layout_args *a)
{
    fuzz_layout_decode_itemsize(in, lim, 0, a);
}

/* Make the decoded layout through the public constructors. */
static inline strided_status fuzz_layout_make(const fuzz_layout_args *a, strided_layout *out)
{
    switch (a->make) {
    case FUZZ_MAKE_STRIDES:
        return strided_layout_init(out, a->ndim, a->shape, a->strides, a->itemsize);
    case FUZZ_MAKE_IMPLICIT: return strided_layout_init(out, a->ndim, a->shape, NULL, a->itemsize);
    case FUZZ_MAKE_BYTES:
        return strided_layout_init_byte_strides(out, a->ndim, a->shape, a->strides, a->itemsize);
    case FUZZ_MAKE_DENSE:
    default:
        return strided_layout_init_dense(out, a->ndim, a->shape, a->itemsize, a->order, a->nperm,
                                         a->perm);
    }
}

/* Reverse some axes of a layout in place, by slicing them ::-1 (which keeps
 * the shape and moves the slice offset): bit k of the decoded byte reverses
 * axis k. Layouts without axes or a zero byte are left alone. */
static inline void fuzz_reverse_axes(fuzz_input *in, strided_layout *l)
{
    uint8_t bits = fuzz_u8(in);
    if (bits == 0 || l->ndim == 0)
        return;
    strided_index idx[STRIDED_MAX_NDIM];
    for (int i = 0; i < l->ndim; i++)
        idx[i] = strided_index_all(i < 8 && (bits >> i & 1) ? -1 : 1);
    strided_layout t;
    if (strided_layout_slice(l, l->ndim, idx, &t) == STRIDED_OK)
        *l = t;
}

/* Decode the two layouts of a copy: dst as fuzz_layout_decode does, then
 * src with dst's shape (half the time), a shape that broadcasts to dst's
 * (leading axes dropped, extents set to 1), or any shape; with dst's
 * itemsize unless the tag byte's top bit asks for a decoded one; with
 * decoded or implicit strides. Either may then have axes reversed.
 * Returns false when a constructor refuses the decoded arguments. */
static inline bool fuzz_copy_pair(fuzz_input *in, const fuzz_limits *lim, strided_layout *dst,
                                  strided_layout *src)
{
    fuzz_layout_args a;
    fuzz_layout_decode(in, lim, &a);
    if (fuzz_layout_make(&a, dst) != STRIDED_OK)
        return false;
    uint8_t how = fuzz_u8(in);
    int ndim = dst->ndim;
    int64_t shape[STRIDED_MAX_NDIM], strides[STRIDED_MAX_NDIM];
    if ((how & 3) == 2) {
        int drop = (int)(fuzz_u8(in) % (unsigned)(dst->ndim + 1));
        uint8_t ones = fuzz_u8(in);
        ndim = dst->ndim - drop;
        for (int q = 0; q < ndim; q++)
            shape[q] = q < 8 && (ones >> q & 1) ? 1 : dst->shape[drop + q];
    } else if ((how & 3) == 3) {
        ndim = fuzz_ndim(in, lim);
        for (int q = 0; q < ndim; q++)
            shape[q] = fuzz_extent(in, lim);
    } else {
        for (int q = 0; q < ndim; q++)
            shape[q] = dst->shape[q];
    }
    int itemsize = (how & 0x80) ? fuzz_itemsize(in, lim) : (int)dst->itemsize;
    bool implicit = (how & 0x0C) == 0x0C;
    for (int q = 0; q < ndim && !implicit; q++)
        strides[q] = fuzz_stride(in, lim);
    if (strided_layout_init(src, ndim, shape, implicit ? NULL : strides, itemsize) != STRIDED_OK)
        return false;
    fuzz_reverse_axes(in, dst);
    fuzz_reverse_axes(in, src);
    return true;
}

#endif
