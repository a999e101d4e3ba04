/*
 * consumer.c: a C program built against an installed libstrided, the way a
 * user builds one (scripts/check-consumers: find_package, pkg-config, plain
 * cc; shared and static). It makes a layout, allocates host memory through a
 * resource, makes views and copies a C-ordered 3x4 float32 array into a
 * Fortran-ordered one, then checks every element.
 */
#include <stdio.h>

#include <strided.h>

#define CHECK(call)                                                               \
    do {                                                                          \
        if ((call) != STRIDED_OK) {                                               \
            fprintf(stderr, "consumer.c: %s: %s\n", #call, strided_last_error()); \
            return 1;                                                             \
        }                                                                         \
    } while (0)

int main(void)
{
    const int64_t shape[] = {3, 4};
    const strided_dtype float32 = {STRIDED_DTYPE_FLOAT, 32, 1};
    strided_layout c_order, f_order;
    int64_t size;
    CHECK(strided_layout_init_dense(&c_order, 2, shape, 4, STRIDED_ORDER_C, 0, NULL));
    CHECK(strided_layout_init_dense(&f_order, 2, shape, 4, STRIDED_ORDER_F, 0, NULL));
    CHECK(strided_layout_required_size_in_bytes(&c_order, &size));

    strided_memory_resource *mr;
    strided_buffer *a, *b;
    strided_view src, dst;
    CHECK(strided_host_resource_create(0, &mr));
    CHECK(strided_buffer_alloc(mr, (size_t)size, NULL, &a));
    CHECK(strided_buffer_alloc(mr, (size_t)size, NULL, &b));
    CHECK(strided_view_from_buffer(a, &c_order, &float32, false, &src));
    CHECK(strided_view_from_buffer(b, &f_order, &float32, false, &dst));
    /* The views hold their own references. */
    strided_buffer_release(a);
    strided_buffer_release(b);
    strided_memory_resource_release(mr);

    float *in = strided_view_ptr(&src);
    for (int i = 0; i < 12; i++)
        in[i] = (float)i;
    CHECK(strided_view_copy(&dst, &src, NULL, STRIDED_COPY_NO_STREAM));
    const float *out = strided_view_ptr(&dst);
    int wrong = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++)
            wrong += out[i + 3 * j] != (float)(4 * i + j);
    strided_view_release(&src);
    strided_view_release(&dst);
    if (wrong) {
        fprintf(stderr, "consumer.c: %d elements wrong after the copy\n", wrong);
        return 1;
    }
    printf("C: libstrided %s (headers %s), 3x4 float32 copied from C to F order\n",
           strided_version(), STRIDED_VERSION_STRING);
    return 0;
}
