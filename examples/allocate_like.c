/*
 * allocate_like.c: allocate a device tensor like a strided array.
 *
 * The source is described the way NumPy describes a sliced, transposed
 * float32 array (shape and byte strides). The example makes the dense layout
 * with the same shape and axis order, allocates required_size_in_bytes on
 * device 0 (in host memory when there is no CUDA driver or device), and
 * creates a view over the new buffer.
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

int main(void)
{
    /* np.arange(48, dtype=np.float32).reshape(6, 8)[1:, ::2].T */
    const int64_t shape[] = {4, 5};
    const int64_t byte_strides[] = {8, 32};
    const strided_dtype float32 = {STRIDED_DTYPE_FLOAT, 32, 1};
    strided_layout source, dense;
    char text[256];

    check(strided_layout_init_byte_strides(&source, 2, shape, byte_strides, 4));
    check(strided_layout_to_dense(&source, STRIDED_ORDER_KEEP, 0, NULL, &dense));
    int64_t size;
    check(strided_layout_required_size_in_bytes(&dense, &size));
    strided_layout_format(&source, text, sizeof text);
    printf("source layout %s", text);
    strided_layout_format(&dense, text, sizeof text);
    printf(" -> dense %s, %lld bytes\n", text, (long long)size);

    strided_memory_resource *mr = NULL;
    const char *where = "device 0";
    if (strided_device_resource_create(0, &mr) != STRIDED_OK) {
        printf("no device memory (%s); using host memory\n", strided_last_error());
        check(strided_host_resource_create(0, &mr));
        where = "the host";
    }
    strided_buffer *buffer;
    check(strided_buffer_alloc(mr, (size_t)size, NULL, &buffer));
    strided_view view;
    check(strided_view_from_buffer(buffer, &dense, &float32, false, &view));
    /* The view holds its own reference: the allocation lives until it goes. */
    strided_buffer_release(buffer);
    strided_memory_resource_release(mr);

    strided_memory_info info = strided_buffer_memory_info(view.buffer);
    strided_dtype_format(view.dtype, text, sizeof text);
    printf("view on %s: %p, dtype %s, DLPack device (%d, %d), device id %d\n", where,
           strided_view_ptr(&view), text, view.device.device_type, view.device.device_id,
           info.device_id);
    strided_view_release(&view);
    return 0;
}
