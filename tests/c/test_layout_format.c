/*
 * Tests of the text of a layout: strided_layout_format, "(shape):(strides)"
 * with the slice offset after it, and strided_layout_format_grid, the text
 * and a table of the element offsets of a 0-, 1- or 2-d layout. Both write
 * like snprintf.
 */
#include "test_util.h"

#include <stdlib.h>

/* A layout and its text. */
typedef struct format_case {
    int line;
    strided_layout in;
    const char *want;
} format_case;

/* strided_layout_format of (4,6):(6,1) into a buffer of size bytes (NULL
 * when size is 0): the text that fits, terminated. */
typedef struct format_size_case {
    int line;
    size_t size;
    const char *want;
} format_size_case;

/* A layout and the cells of its grid, rows x cols, row-major. */
typedef struct grid_case {
    int line;
    strided_layout in;
    int rows, cols;
    const int64_t *cells;
} grid_case;

static void test_format(void **state)
{
    strided_layout negative = sliced(mk_c(DIMS(4), 1), S_REV);

    negative.slice_offset = -3;
    const format_case cases[] = {
        CASE(mk_c(DIMS(4, 6), 4), "(4,6):(6,1)"),
        CASE(mk_c(DIMS(5), 4), "(5,):(1,)"),
        CASE(mk_c(0, NULL, 4), "():()"),
        CASE(mk_implicit(0, NULL, 4), "():()"),
        CASE(mk_implicit(DIMS(2, 3), 4), "(2,3):(3,1)"),
        CASE(sliced(mk_c(DIMS(5, 3, 7), 1), s_from(1), S_REV), "(4,3,7):(21,-7,1)+35"),
        CASE(negative, "(4,):(-1,)-3"),
        CASE(raw(DIMS(2, 2), I64(INT64_MIN, INT64_MAX), 1),
             "(2,2):(-9223372036854775808,9223372036854775807)"),
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const format_case *c = &cases[i];
        char buf[512];
        size_t n = strided_layout_format(&c->in, buf, sizeof buf);
        _assert_string_equal(buf, c->want, AT(c));
        check_i64_((int64_t)n, (int64_t)strlen(c->want), "length", AT(c));
    }
}

/* The full length always comes back; nothing is written past size. */
static void test_format_into_small_buffers(void **state)
{
    strided_layout l = mk_c(DIMS(4, 6), 4);
    const format_size_case cases[] = {
        CASE(0, NULL),           CASE(1, ""), CASE(5, "(4,6"), CASE(11, "(4,6):(6,1"),
        CASE(12, "(4,6):(6,1)"),
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const format_size_case *c = &cases[i];
        char buf[16];
        fill_sentinel(buf, sizeof buf);
        size_t n = strided_layout_format(&l, c->size > 0 ? buf : NULL, c->size);
        check_i64_((int64_t)n, 11, "length", AT(c));
        if (c->want != NULL)
            _assert_string_equal(buf, c->want, AT(c));
        check_untouched_(buf + c->size, sizeof buf - c->size, "buf", AT(c));
    }
}

static void test_format_64_dims(void **state)
{
    int64_t shape[64];
    strided_layout l;
    char buf[1024];
    size_t n, need;

    (void)state;
    l = mk_c(64, filled(shape, 64, 1), 1);
    /* "(" + 64 "1" joined by "," + "):(" + the same + ")" */
    need = 1 + 127 + 3 + 127 + 1;
    n = strided_layout_format(&l, buf, sizeof buf);
    assert_int_equal(n, need);
    assert_int_equal(strlen(buf), need);
}

/* Parse the cells of a grid: every line with at least two '|' is a row, its
 * cells the integers between consecutive '|'. Returns the row count, or -1
 * when a cell is not one integer. */
static int grid_rows(const char *text, int64_t cells[][16], int *ncells, int max_rows)
{
    int rows = 0;
    const char *line = text;

    while (*line != '\0') {
        const char *end = strchr(line, '\n');
        const char *p, *bar;
        size_t len = end ? (size_t)(end - line) : strlen(line);
        char buf[1024];
        int n = 0;

        if (len >= sizeof buf)
            len = sizeof buf - 1;
        memcpy(buf, line, len);
        buf[len] = '\0';
        bar = strchr(buf, '|');
        if (bar != NULL && strchr(bar + 1, '|') != NULL) {
            if (rows >= max_rows)
                return -1;
            p = bar + 1;
            while ((bar = strchr(p, '|')) != NULL) {
                char *stop;
                long long v = strtoll(p, &stop, 10);
                if (stop == p || stop > bar)
                    return -1;
                while (*stop == ' ')
                    stop++;
                if (stop != bar)
                    return -1;
                if (n < 16)
                    cells[rows][n] = v;
                n++;
                p = bar + 1;
            }
            ncells[rows++] = n;
        }
        if (end == NULL)
            break;
        line = end + 1;
    }
    return rows;
}

/* Format the grid of a case (checking the length it returns against the
 * text), check that its first line is strided_layout_format's text, and
 * check its cells. */
static void check_grid(const grid_case *c)
{
    char buf[8192], head[512];
    int64_t cells[16][16];
    int ncells[16], got_rows, r, k;
    size_t len = 0;

    check_status_(strided_layout_format_grid(&c->in, buf, sizeof buf, &len), STRIDED_OK, AT(c));
    check_i64_((int64_t)len, (int64_t)strlen(buf), "length", AT(c));
    strided_layout_format(&c->in, head, sizeof head);
    if (strncmp(buf, head, strlen(head)) != 0 || buf[strlen(head)] != '\n')
        fail_at(AT(c), "grid does not start with the line \"%s\":\n%s\n", head, buf);
    got_rows = grid_rows(buf, cells, ncells, 16);
    if (got_rows != c->rows)
        fail_at(AT(c), "grid has %d rows, expected %d:\n%s\n", got_rows, c->rows, buf);
    for (r = 0; r < c->rows; r++) {
        if (ncells[r] != c->cols)
            fail_at(AT(c), "grid row %d has %d cells, expected %d:\n%s\n", r, ncells[r], c->cols,
                    buf);
        for (k = 0; k < c->cols; k++)
            if (cells[r][k] != c->cells[r * c->cols + k])
                fail_at(AT(c), "grid cell (%d,%d) is %lld, expected %lld:\n%s\n", r, k,
                        (long long)cells[r][k], (long long)c->cells[r * c->cols + k], buf);
    }
}

static void test_format_grid(void **state)
{
    strided_layout reversed = sliced(mk_c(DIMS(3, 4), 4), s_from(1), S_REV);
    const grid_case cases[] = {
        CASE(mk_c(DIMS(4, 6), 4), 4, 6,
             I64(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22,
                 23)),
        CASE(mk_f(DIMS(3, 4), 4), 3, 4, I64(0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11)),
        CASE(mk(DIMS(2, 3), I64(0, -2), 4), 2, 3, I64(0, -2, -4, 0, -2, -4)),
        /* The element offset of an index includes the slice offset. */
        CASE(reversed, 2, 4, I64(7, 6, 5, 4, 11, 10, 9, 8)),
        CASE(mk(DIMS(5), I64(2), 4), 1, 5, I64(0, 2, 4, 6, 8)),
        CASE(mk_c(0, NULL, 4), 1, 1, I64(0)),
    };

    (void)state;
    assert_layout(reversed, "(2,4):(4,-1)+7", 4);
    for (size_t i = 0; i < ARRAY_LEN(cases); i++)
        check_grid(&cases[i]);
}

static void test_format_grid_3d_fails(void **state)
{
    strided_layout l = mk_c(DIMS(2, 3, 4), 4);
    char buf[256];
    size_t len;

    (void)state;
    fill_sentinel(buf, sizeof buf);
    fill_sentinel(&len, sizeof len);
    assert_error(strided_layout_format_grid(&l, buf, sizeof buf, &len),
                 STRIDED_ERR_INVALID_ARGUMENT, "format_grid", NULL);
    assert_untouched(buf, sizeof buf);
    assert_untouched(&len, sizeof len);
}

static void test_format_grid_too_many_cells_fails(void **state)
{
    /* One more row than the limit allows; (2^40, 1) would otherwise take
     * minutes just to measure. */
    strided_layout big = mk_c(DIMS(STRIDED_GRID_MAX_CELLS + 1, 1), 4);
    strided_layout huge = mk_c(DIMS(INT64_C(1) << 40), 1);
    strided_layout at_limit = mk_c(DIMS(1023, 1023), 1);
    size_t len;

    (void)state;
    assert_error(strided_layout_format_grid(&big, NULL, 0, &len), STRIDED_ERR_INVALID_ARGUMENT,
                 "format_grid", "too large to draw");
    assert_error(strided_layout_format_grid(&huge, NULL, 0, &len), STRIDED_ERR_INVALID_ARGUMENT,
                 "format_grid", "too large to draw");
    assert_ok(strided_layout_format_grid(&at_limit, NULL, 0, &len));
    assert_true(len > (size_t)STRIDED_GRID_MAX_CELLS);
}

/* An empty layout has no cells but still draws a line per row and a
 * header per column: the bound counts those, so (2^40, 0) is refused at
 * once instead of looping 2^40 times, and (10^7, 0) instead of writing
 * 200 MB. */
static void test_format_grid_empty_but_huge_fails(void **state)
{
    const int64_t shapes[][2] = {{INT64_C(1) << 40, 0},
                                 {10000000, 0},
                                 {0, INT64_C(1) << 40},
                                 {STRIDED_GRID_MAX_CELLS, 0},
                                 {INT64_MAX, 0}};
    size_t len;
    char buf[64];

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(shapes); i++) {
        strided_layout l = mk_c(2, shapes[i], 4);
        fill_sentinel(buf, sizeof buf);
        fill_sentinel(&len, sizeof len);
        assert_error(strided_layout_format_grid(&l, buf, sizeof buf, &len),
                     STRIDED_ERR_INVALID_ARGUMENT, "format_grid", "too large to draw");
        assert_untouched(buf, sizeof buf);
        assert_untouched(&len, sizeof len);
    }
    strided_layout one_d = mk_c(DIMS(INT64_C(1) << 40), 4);
    strided_layout sliced_empty = sliced(one_d, S_(5, 5, 1));
    assert_ok(strided_layout_format_grid(&sliced_empty, NULL, 0, &len));
    /* A small empty grid is drawn: its rows, no cells. */
    strided_layout small = mk_c(DIMS(3, 0), 4);
    char text[256];
    assert_ok(strided_layout_format_grid(&small, text, sizeof text, &len));
    assert_int_equal(len, strlen(text));
    assert_non_null(strstr(text, "\n0 |"));
    assert_non_null(strstr(text, "\n2 |"));
    assert_null(strstr(text, "\n3 |"));
}

static void test_format_grid_truncates_like_snprintf(void **state)
{
    strided_layout l = mk_c(DIMS(4, 6), 4);
    char full[8192], part[32];
    size_t n_full = 0, n_part = 0;

    (void)state;
    assert_ok(strided_layout_format_grid(&l, full, sizeof full, &n_full));
    assert_true(n_full > sizeof part);
    fill_sentinel(part, sizeof part);
    assert_ok(strided_layout_format_grid(&l, part, 20, &n_part));
    assert_int_equal(n_part, n_full);
    assert_int_equal(strlen(part), 19);
    assert_memory_equal(part, full, 19);
    assert_untouched(part + 20, sizeof part - 20);
}

static void test_format_grid_size_zero_with_null_buffer(void **state)
{
    strided_layout l = mk_c(DIMS(4, 6), 4);
    char full[8192];
    size_t n_full = 0, n = 0;

    (void)state;
    assert_ok(strided_layout_format_grid(&l, full, sizeof full, &n_full));
    assert_ok(strided_layout_format_grid(&l, NULL, 0, &n));
    assert_int_equal(n, n_full);
    assert_int_equal(n, strlen(full));
}

static void test_format_grid_null_length(void **state)
{
    strided_layout l = mk_c(DIMS(2, 2), 4);
    char buf[1024];

    (void)state;
    assert_ok(strided_layout_format_grid(&l, buf, sizeof buf, NULL));
    assert_true(strncmp(buf, "(2,2):(2,1)\n", 12) == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_format),
        cmocka_unit_test(test_format_into_small_buffers),
        cmocka_unit_test(test_format_64_dims),
        cmocka_unit_test(test_format_grid),
        cmocka_unit_test(test_format_grid_3d_fails),
        cmocka_unit_test(test_format_grid_too_many_cells_fails),
        cmocka_unit_test(test_format_grid_empty_but_huge_fails),
        cmocka_unit_test(test_format_grid_truncates_like_snprintf),
        cmocka_unit_test(test_format_grid_size_zero_with_null_buffer),
        cmocka_unit_test(test_format_grid_null_length),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
