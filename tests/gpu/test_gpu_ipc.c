/*
 * GPU test of strided/ipc.h and the view descriptors of strided/view.h: two
 * processes on one GPU.
 *
 * The producer (this process) fills device memory through a view (a copy
 * from a host view), exports it and sends it to the consumer (this program
 * run again with "consumer" and a socket, after fork and exec, so that the
 * consumer's CUDA is its own): the pool's file descriptor (SCM_RIGHTS) and
 * identity, then the view descriptor, with an interprocess event recorded
 * on the producer's stream and no host synchronization before the send.
 * The consumer imports the view on its own stream (which waits on the
 * event), checks the bytes, puts a transposed view on top and checks it,
 * copies the view into memory of its own in F order with strided_view_copy
 * and checks that, writes the negated values back through the imported view,
 * synchronizes and answers; the producer then sees the consumer's writes.
 * Run twice: for an allocation of an IPC-enabled pool, and for cuMemAlloc
 * memory wrapped at an offset (legacy IPC). Every driver call succeeds on a
 * working device, so the test runs clean under compute-sanitizer.
 *
 * Without a driver or a device it prints "skipped: no CUDA device" and
 * passes.
 */

#define _GNU_SOURCE /* SCM_RIGHTS, socketpair */
#include "gpu_test.h"

#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "strided.h"

#define ROWS 4
#define COLS 6
#define N (ROWS * COLS)

static const strided_dtype float32 = {STRIDED_DTYPE_FLOAT, 32, 1};

/* What travels on the socket: a header, then the descriptor bytes. */
typedef struct message {
    int legacy; /* 1: no pool (legacy IPC) */
    int has_id; /* the pool's identity follows in id */
    unsigned char id[STRIDED_IPC_POOL_ID_SIZE];
    size_t size;  /* of the view descriptor */
    int failures; /* the consumer's answer: failed checks */
} message;

static void send_all(int sock, const void *p, size_t n, int fd)
{
    struct iovec iov = {(void *)p, n};
    struct msghdr msg = {0};
    char control[CMSG_SPACE(sizeof(int))];
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    if (fd >= 0) {
        memset(control, 0, sizeof control);
        msg.msg_control = control;
        msg.msg_controllen = sizeof control;
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof fd);
    }
    assert_true(sendmsg(sock, &msg, 0) == (ssize_t)n);
}

/* Receive n bytes, and a file descriptor when one comes with them (else
 * *fd is -1). */
static bool recv_all(int sock, void *p, size_t n, int *fd)
{
    struct iovec iov = {p, n};
    struct msghdr msg = {0};
    char control[CMSG_SPACE(sizeof(int))];
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    if (fd != NULL)
        *fd = -1;
    if (recvmsg(sock, &msg, MSG_WAITALL) != (ssize_t)n)
        return false;
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    if (fd != NULL && c != NULL && c->cmsg_type == SCM_RIGHTS)
        memcpy(fd, CMSG_DATA(c), sizeof *fd);
    return true;
}

static strided_layout layout_2d(int64_t rows, int64_t cols, strided_order order)
{
    strided_layout l;
    int64_t shape[] = {rows, cols};
    if (strided_layout_init_dense(&l, 2, shape, 4, order, 0, NULL) != STRIDED_OK)
        abort();
    return l;
}

/* A host view of values, (ROWS, COLS) in C order. */
static strided_view host_view(float *values)
{
    strided_layout l = layout_2d(ROWS, COLS, STRIDED_ORDER_C);
    strided_device cpu = {STRIDED_DEVICE_CPU, 0};
    strided_view v;
    if (strided_view_wrap(values, &l, &float32, false, &cpu, NULL, NULL, &v) != STRIDED_OK)
        abort();
    return v;
}

/* The elements of v, copied to the host in C order of v's shape. */
static bool read_back(const strided_view *v, void *stream, float *out)
{
    strided_layout l = v->layout;
    strided_layout dense;
    if (strided_layout_init_dense(&dense, l.ndim, l.shape, 4, STRIDED_ORDER_C, 0, NULL) !=
        STRIDED_OK)
        return false;
    strided_device cpu = {STRIDED_DEVICE_CPU, 0};
    strided_view h;
    if (strided_view_wrap(out, &dense, &float32, false, &cpu, NULL, NULL, &h) != STRIDED_OK)
        return false;
    strided_status s = strided_view_copy(&h, v, stream, STRIDED_COPY_BLOCKING);
    strided_view_release(&h);
    return s == STRIDED_OK;
}

/* The consumer: import, check, copy, write back, answer. Returns the
 * number of failed checks (the process's exit status). */
static int consume(int sock)
{
    int failures = 0, fd = -1;
    message m;
    CUstream stream;
    if (!recv_all(sock, &m, sizeof m, &fd))
        return 100;
    unsigned char *d = malloc(m.size);
    if (d == NULL || !recv_all(sock, d, m.size, NULL))
        return 101;
    CUdevice dev;
    CUcontext ctx;
    if (!gpu_retain_devices(1, &dev, &ctx) || cu.cuCtxSetCurrent(ctx) != CUDA_SUCCESS ||
        cu.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS)
        return 102;
    strided_memory_resource *mapped = NULL;
    if (!m.legacy &&
        strided_device_pool_resource_import(0, fd, m.has_id ? m.id : NULL, &mapped) != STRIDED_OK) {
        fprintf(stderr, "consumer: %s\n", strided_last_error());
        return 103;
    }
    if (fd >= 0)
        close(fd);
    strided_view v;
    if (strided_view_import_ipc(mapped, d, m.size, stream, &v) != STRIDED_OK) {
        fprintf(stderr, "consumer: %s\n", strided_last_error());
        return 104;
    }
    float got[N], t[N], f[N];
    failures += !read_back(&v, stream, got);
    for (int i = 0; i < N; i++)
        failures += got[i] != (float)i;
    /* A view of another layout on top: the transpose. */
    strided_layout tl;
    int perm[] = {1, 0};
    strided_view tv;
    failures += strided_layout_permute(&v.layout, 2, perm, &tl) != STRIDED_OK ||
                strided_view_view(&v, &tl, NULL, &tv) != STRIDED_OK;
    failures += !read_back(&tv, stream, t);
    for (int c = 0; c < COLS; c++)
        for (int r = 0; r < ROWS; r++)
            failures += t[c * ROWS + r] != (float)(r * COLS + c);
    strided_view_release(&tv);
    /* Into the consumer's own memory, in F order, with a copy. */
    strided_memory_resource *own = NULL;
    strided_buffer *b = NULL;
    strided_view fv;
    strided_layout fl = layout_2d(ROWS, COLS, STRIDED_ORDER_F);
    failures += strided_device_resource_create(0, &own) != STRIDED_OK ||
                strided_buffer_alloc(own, N * 4, stream, &b) != STRIDED_OK ||
                strided_view_from_buffer(b, &fl, &float32, false, &fv) != STRIDED_OK ||
                strided_view_copy(&fv, &v, stream, STRIDED_COPY_BLOCKING) != STRIDED_OK;
    failures += !read_back(&fv, stream, f);
    for (int i = 0; i < N; i++)
        failures += f[i] != (float)i;
    strided_view_release(&fv);
    strided_buffer_release(b);
    strided_memory_resource_release(own);
    /* Write back through the imported view. */
    float negated[N];
    for (int i = 0; i < N; i++)
        negated[i] = -(float)i;
    strided_view src = host_view(negated);
    failures += strided_view_copy(&v, &src, stream, STRIDED_COPY_BLOCKING) != STRIDED_OK;
    strided_view_release(&src);
    failures += cu.cuStreamSynchronize(stream) != CUDA_SUCCESS;
    /* Unmapped before the answer: the producer frees its memory after it. */
    strided_view_release(&v);
    failures += cu.cuStreamSynchronize(stream) != CUDA_SUCCESS;
    strided_memory_resource_release(mapped);
    cu.cuStreamDestroy(stream);
    free(d);
    m.failures = failures;
    send_all(sock, &m, sizeof m, -1);
    return failures > 0;
}

static const char *self_path;

/* Start the consumer on one end of a socket pair; return the other. */
static int start_consumer(pid_t *pid)
{
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    *pid = fork();
    assert_true(*pid >= 0);
    if (*pid == 0) {
        char fd[16];
        close(sv[0]);
        snprintf(fd, sizeof fd, "%d", sv[1]);
        execl(self_path, self_path, "consumer", fd, (char *)NULL);
        _exit(127);
    }
    close(sv[1]);
    return sv[0];
}

/* Fill (through a view of b) with 0..N-1 on stream, send the view with an
 * event, wait for the consumer, and check its writes. */
static void share(strided_buffer *b, const strided_memory_resource *mr, CUstream stream)
{
    strided_layout l = layout_2d(ROWS, COLS, STRIDED_ORDER_C);
    strided_view v;
    assert_ok(strided_view_from_buffer(b, &l, &float32, false, &v));
    float values[N];
    for (int i = 0; i < N; i++)
        values[i] = (float)i;
    strided_view src = host_view(values);
    assert_ok(strided_view_copy(&v, &src, stream, STRIDED_COPY_NONBLOCKING));
    strided_ipc_event *ready = NULL;
    assert_ok(strided_ipc_event_record(0, stream, &ready));
    unsigned char d[STRIDED_VIEW_IPC_DESCRIPTOR_SIZE(2)];
    message m = {0};
    assert_ok(strided_view_export_ipc(&v, ready, d, sizeof d, &m.size));
    int fd = -1;
    m.legacy = mr == NULL;
    if (mr != NULL) {
        assert_ok(strided_memory_resource_export_pool(mr, &fd));
        m.has_id = strided_memory_resource_pool_id(mr, m.id);
    }
    pid_t pid;
    int sock = start_consumer(&pid);
    send_all(sock, &m, sizeof m, fd);
    send_all(sock, d, m.size, -1);
    if (fd >= 0)
        close(fd);
    message answer;
    bool answered = recv_all(sock, &answer, sizeof answer, NULL);
    int status = 0;
    waitpid(pid, &status, 0);
    close(sock);
    assert_true(answered);
    if (answer.failures != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("the consumer failed %d checks (exit status %d)", answer.failures,
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    float got[N];
    assert_true(read_back(&v, stream, got));
    for (int i = 0; i < N; i++)
        assert_true(got[i] == -(float)i);
    strided_ipc_event_release(ready);
    strided_view_release(&src);
    strided_view_release(&v);
}

static CUdevice device;
static CUcontext primary;

static void test_pool_view_between_processes(void **state)
{
    (void)state;
    CUstream stream;
    CU(cuCtxSetCurrent(primary));
    CU(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    const strided_device_pool_options ipc = {true, 0};
    strided_memory_resource *mr = NULL;
    strided_buffer *b = NULL;
    assert_ok(strided_device_pool_resource_create(0, &ipc, &mr));
    assert_ok(strided_buffer_alloc(mr, N * 4, stream, &b));
    share(b, mr, stream);
    strided_buffer_release(b);
    CU(cuStreamSynchronize(stream));
    strided_memory_resource_release(mr);
    CU(cuStreamDestroy(stream));
}

static void test_legacy_view_between_processes(void **state)
{
    (void)state;
    CUstream stream;
    CUdeviceptr p;
    CU(cuCtxSetCurrent(primary));
    CU(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    CU(cuMemAlloc(&p, 4096));
    strided_buffer *b = NULL;
    assert_ok(strided_buffer_wrap((void *)(uintptr_t)(p + 512), N * 4, NULL, NULL, &b));
    share(b, NULL, stream);
    strided_buffer_release(b);
    CU(cuStreamSynchronize(stream));
    CU(cuMemFree(p));
    CU(cuStreamDestroy(stream));
}

int main(int argc, char **argv)
{
    int count = 0;
    int rc = gpu_test_start(&count);
    if (argc == 3 && strcmp(argv[1], "consumer") == 0)
        return rc >= 0 ? 100 + rc : consume(atoi(argv[2]));
    if (rc >= 0)
        return rc;
    self_path = "/proc/self/exe";
    char path[4096];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    if (n > 0) {
        path[n] = '\0';
        self_path = strdup(path);
    }
    if (!gpu_retain_devices(1, &device, &primary))
        return 1;
    gpu_test_filter("STRIDED_GPU_IPC_TESTS");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pool_view_between_processes),
        cmocka_unit_test(test_legacy_view_between_processes),
    };
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    gpu_release_devices(1, &device);
    return rc;
}
