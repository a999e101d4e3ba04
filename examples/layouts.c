/*
 * layouts.c: strided layouts at work, from C.
 *
 * Builds a dense 4x6 float layout, transposes it, slices it with a negative
 * step, reshapes it without a copy, and draws each as a grid of element
 * offsets. Every call returns a status; on failure the example prints the
 * library's message and exits 1.
 */
#include <stdio.h>
#include <stdlib.h>

#include "strided.h"

static void check(strided_status status)
{
    if (status != STRIDED_OK) {
        fprintf(stderr, "error %s: %s\n", strided_status_name(status), strided_last_error());
        exit(1);
    }
}

static void show(const char *what, const strided_layout *l)
{
    static char text[4096];
    size_t n;
    check(strided_layout_format_grid(l, text, sizeof text, &n));
    int64_t size;
    check(strided_layout_required_size_in_bytes(l, &size));
    printf("%s\n%s\n  volume %lld, dense %s, unique %s, needs %lld bytes\n\n", what, text,
           (long long)strided_layout_volume(l), strided_layout_is_dense(l) ? "yes" : "no",
           strided_layout_is_unique(l) ? "yes" : "no", (long long)size);
}

int main(void)
{
    printf("libstrided %s\n\n", strided_version());

    const int64_t shape[] = {4, 6};
    strided_layout a, t, s, r;
    check(strided_layout_init_dense(&a, 2, shape, 4, STRIDED_ORDER_C, 0, NULL));
    show("a = dense (4,6) float32, C order", &a);

    const int swap[] = {1, 0};
    check(strided_layout_permute(&a, 2, swap, &t));
    show("a.T = permute (1,0)", &t);

    const strided_index rows_reversed[] = {strided_index_all(-1), strided_index_slice(1, 5, 2)};
    check(strided_layout_slice(&a, 2, rows_reversed, &s));
    show("a[::-1, 1:5:2]: a negative step moves the slice offset", &s);

    const int64_t new_shape[] = {2, 12};
    check(strided_layout_reshape(&a, 2, new_shape, &r));
    show("a.reshape(2,12) without a copy", &r);

    /* The transpose cannot be reshaped to (2,12) without a copy: the
     * library says why, and leaves r as it was. */
    strided_status status = strided_layout_reshape(&t, 2, new_shape, &r);
    printf("a.T.reshape(2,12): %s\n  %s\n\n", strided_status_name(status), strided_last_error());

    strided_layout d;
    check(strided_layout_to_dense(&s, STRIDED_ORDER_KEEP, 0, NULL, &d));
    char text[256];
    strided_layout_format(&d, text, sizeof text);
    printf("a dense layout for a[::-1, 1:5:2] in its own order: %s\n", text);
    return 0;
}
