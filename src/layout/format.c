/*
 * layout/format.c: layouts as text, the one-line form and the offset grid.
 */
#include "base/base.h"
#include "strided/layout.h"

static void append_layout(strided__text *t, const strided_layout *l)
{
    strided__text_tuple(t, l->ndim, l->shape);
    strided__text_append(t, ":");
    strided__text_tuple(t, l->ndim, l->strides);
    if (l->slice_offset != 0)
        strided__text_append(t, "%+lld", (long long)l->slice_offset);
}

size_t strided_layout_format(const strided_layout *layout, char *buf, size_t size)
{
    strided__text t = {buf, size, 0};
    if (size > 0)
        buf[0] = '\0';
    append_layout(&t, layout);
    return t.len;
}

static int digits(long long v)
{
    int n = v < 0 ? 2 : 1;
    for (unsigned long long m = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
         m >= 10; m /= 10)
        n++;
    return n;
}

/* The cells of the grid: a 0-d layout is one cell, a 1-d layout one row. */
typedef struct grid {
    int64_t rows, cols, row_stride, col_stride, origin;
} grid;

static int64_t cell(const grid *g, int64_t r, int64_t c)
{
    /* Wrapping arithmetic: within the layout invariant nothing wraps. */
    return (int64_t)((uint64_t)g->origin + (uint64_t)r * (uint64_t)g->row_stride +
                     (uint64_t)c * (uint64_t)g->col_stride);
}

/* A line "\n  +----+----+" under the column indices and under each row. */
static void append_rule(strided__text *t, const grid *g, int label, int width)
{
    strided__text_append(t, "\n%*s+", label, "");
    for (int64_t c = 0; c < g->cols; c++) {
        for (int k = 0; k < width + 2; k++)
            strided__text_append(t, "-");
        strided__text_append(t, "+");
    }
}

strided_status strided_layout_format_grid(const strided_layout *layout, char *buf, size_t size,
                                          size_t *out_length)
{
    if (layout == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, "format_grid", "layout is required");
    if (buf == NULL && size > 0)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, "format_grid",
                             "buf is required: it is NULL with size %zu", size);
    if (layout->ndim > 2)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, "format_grid",
                             "only layouts of at most 2 dimensions can be "
                             "drawn as a grid, this one has %d; flatten, "
                             "slice or index it first",
                             layout->ndim);
    grid g = {1, 1, 0, 0, layout->slice_offset};
    if (layout->ndim == 1) {
        g.cols = layout->shape[0];
        g.col_stride = layout->strides[0];
    } else if (layout->ndim == 2) {
        g.rows = layout->shape[0];
        g.cols = layout->shape[1];
        g.row_stride = layout->strides[0];
        g.col_stride = layout->strides[1];
    }
    /* The work and the text grow with what is drawn, not with the volume:
     * each row has a label and a rule even when it has no cells, and each
     * column a header, so an empty layout of shape (2**40, 0) still draws
     * 2**40 rows. Bound rows + 1 times columns + 1, which counts every
     * cell, row and column once (without overflow: each factor is at most
     * the bound once the first test passes). */
    if (g.rows >= STRIDED_GRID_MAX_CELLS || g.cols >= STRIDED_GRID_MAX_CELLS ||
        (g.rows + 1) * (g.cols + 1) > STRIDED_GRID_MAX_CELLS)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, "format_grid",
                             "a grid of %lld rows and %lld columns is too large "
                             "to draw (at most %lld cells, counting each row "
                             "and column once more)",
                             (long long)g.rows, (long long)g.cols,
                             (long long)STRIDED_GRID_MAX_CELLS);
    /* Every cell is as wide as the widest offset or column index. */
    int width = digits(g.cols > 0 ? g.cols - 1 : 0);
    for (int64_t r = 0; r < g.rows; r++)
        for (int64_t c = 0; c < g.cols; c++) {
            int w = digits(cell(&g, r, c));
            width = w > width ? w : width;
        }
    int label = digits(g.rows > 0 ? g.rows - 1 : 0) + 1;

    strided__text t = {buf, size, 0};
    if (size > 0)
        buf[0] = '\0';
    append_layout(&t, layout);
    /* Lines are separated, not terminated, by newlines. Column indices sit
     * right-aligned over their cells. */
    strided__text_append(&t, "\n%*s", label + 1, "");
    for (int64_t c = 0; c < g.cols; c++)
        strided__text_append(&t, c > 0 ? "   %*lld" : " %*lld", width, (long long)c);
    append_rule(&t, &g, label, width);
    for (int64_t r = 0; r < g.rows; r++) {
        strided__text_append(&t, "\n%*lld |", label - 1, (long long)r);
        for (int64_t c = 0; c < g.cols; c++)
            strided__text_append(&t, " %*lld |", width, (long long)cell(&g, r, c));
        append_rule(&t, &g, label, width);
    }
    if (out_length)
        *out_length = t.len;
    return STRIDED_OK;
}
