/*
 * view/typestr.c: the type strings of NumPy's array interface, and the one table
 * of element types strided accepts from them (strided/dlpack.h).
 *
 * Only plain data is accepted: elements whose bytes a copy may duplicate
 * without knowing what they mean. Python object references ('O', or a
 * structured type holding one) are not plain data. Bytes in the other byte
 * order are plain data, but the interface imports refuse them, since every
 * consumer of the view would read them wrongly.
 */
#include <stdint.h>
#include <string.h>

#include "base/base.h"
#include "strided/dlpack.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define FOREIGN_ORDER '<'
#else
#define FOREIGN_ORDER '>'
#endif

/* One row per accepted kind: the sizes it comes in (a bit per size in
 * bytes for the fixed-size kinds; any size where sizes is 0), whether byte
 * order applies to it, and its DLPack code where it has one. */
typedef struct kind_row {
    char kind;
    const char *name;
    uint64_t sizes;      /* bit n: n bytes; 0: any size */
    bool ordered;        /* byte order matters for multi-byte elements */
    int code;            /* DLPack code, or -1 */
    uint64_t dl_sizes;   /* the sizes that have the DLPack type */
} kind_row;


static const kind_row kinds[] = {
    {'b', "bool", UINT64_C(1) << 1, false, STRIDED_DTYPE_BOOL, UINT64_C(1) << 1},
    {'i', "signed integer", (UINT64_C(1) << 1) | (UINT64_C(1) << 2) | (UINT64_C(1) << 4) |
                                (UINT64_C(1) << 8),
     true, STRIDED_DTYPE_INT,
     (UINT64_C(1) << 1) | (UINT64_C(1) << 2) | (UINT64_C(1) << 4) | (UINT64_C(1) << 8)},
    {'u', "unsigned integer", (UINT64_C(1) << 1) | (UINT64_C(1) << 2) | (UINT64_C(1) << 4) |
                                  (UINT64_C(1) << 8),
     true, STRIDED_DTYPE_UINT,
     (UINT64_C(1) << 1) | (UINT64_C(1) << 2) | (UINT64_C(1) << 4) | (UINT64_C(1) << 8)},
    /* A 16-byte float is C's long double (x87 extended precision on x86),
     * which DLPack cannot name; 1-byte floats are ml_dtypes' float8 types
     * (float8_e5m2 reads "<f1"), named by the caller. */
    {'f', "floating point", (UINT64_C(1) << 1) | (UINT64_C(1) << 2) | (UINT64_C(1) << 4) |
                                (UINT64_C(1) << 8) | (UINT64_C(1) << 16),
     true, STRIDED_DTYPE_FLOAT, (UINT64_C(1) << 2) | (UINT64_C(1) << 4) | (UINT64_C(1) << 8)},
    {'c', "complex floating point", (UINT64_C(1) << 8) | (UINT64_C(1) << 16) | (UINT64_C(1) << 32),
     true, STRIDED_DTYPE_COMPLEX, (UINT64_C(1) << 8) | (UINT64_C(1) << 16)},
    {'V', "raw bytes", 0, false, -1, 0},
    {'S', "byte string", 0, false, -1, 0},
    {'U', "UCS-4 string", 0, true, -1, 0},
    {'M', "datetime", UINT64_C(1) << 8, true, -1, 0},
    {'m', "timedelta", UINT64_C(1) << 8, true, -1, 0},
};

static strided_status malformed(const char *typestr, const char *why)
{
    /* Show at most the first 32 characters of whatever was given. */
    return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, "typestr",
                         "%.32s%s is not an array-interface type string: %s", typestr,
                         strlen(typestr) > 32 ? "..." : "", why);
}

strided_status strided_typestr_parse(const char *typestr, unsigned flags,
                                     strided_typestr *out)
{
    const char *op = "typestr";
    if (typestr == NULL || out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "typestr and out are required");
    char order = typestr[0];
    if (order == '\0' || strchr("<>|=", order) == NULL)
        return malformed(typestr, "it must start with a byte order, '<', '>', '|' or '='");
    char kind = typestr[1];
    if (kind == '\0')
        return malformed(typestr, "a kind character must follow the byte order");
    /* NumPy writes object types as "|O", without a size. */
    if (kind == 'O' || (flags & STRIDED_TYPESTR_HOLDS_REFERENCES))
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                             "%.32s holds Python object references, which are not plain "
                             "data: strided copies and exports element bytes only",
                             typestr);
    const char *p = typestr + 2;
    if (*p < '0' || *p > '9')
        return malformed(typestr, "a decimal size must follow the kind");
    int64_t n = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        n = n * 10 + (*p - '0');
        if (n > INT32_MAX)
            return malformed(typestr, "the size exceeds 2**31 - 1");
    }
    if (*p == '[') {
        if (kind != 'M' && kind != 'm')
            return malformed(typestr, "only datetimes ('M', 'm') take a unit in brackets");
        const char *unit = ++p;
        while ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'))
            p++;
        if (p == unit || *p != ']' || p - unit > 16)
            return malformed(typestr, "the unit must be letters and digits closed by ']'");
        p++;
    }
    if (*p != '\0')
        return malformed(typestr, "unexpected characters after the size");

    const kind_row *row = NULL;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (kinds[i].kind == kind)
            row = &kinds[i];
    if (row == NULL)
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                             "%.32s: element kind '%c' is not supported (plain data only: "
                             "b, i, u, f, c, V, S, U, M, m)",
                             typestr, kind);
    int64_t itemsize = kind == 'U' ? n * 4 : n;
    if (itemsize == 0 || itemsize > INT32_MAX)
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                             "%.32s: an element of %lld bytes is not supported (1 to "
                             "2**31 - 1)",
                             typestr, (long long)itemsize);
    if (row->sizes != 0 && (itemsize >= 64 || !(row->sizes >> itemsize & 1)))
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                             "%.32s: %s has no %lld-byte type", typestr, row->name,
                             (long long)itemsize);
    bool swapped = order == FOREIGN_ORDER && row->ordered && itemsize > 1;
    if (swapped && (flags & STRIDED_TYPESTR_NATIVE_ONLY))
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                             "%.32s is not in the machine's byte order; convert it first "
                             "(numpy: a.astype(a.dtype.newbyteorder('=')))",
                             typestr);
    strided_typestr t = {kind, (int32_t)itemsize, swapped, false, {0, 0, 1}};
    if (!swapped && row->code >= 0 && itemsize < 64 && (row->dl_sizes >> itemsize & 1)) {
        t.has_dtype = true;
        t.dtype.code = (uint8_t)row->code;
        t.dtype.bits = (uint8_t)(itemsize * 8);
    }
    *out = t;
    return STRIDED_OK;
}
