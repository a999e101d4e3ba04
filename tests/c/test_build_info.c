/*
 * Tests of strided/build.h (how the library was built, checked against this
 * build's own settings and the VERSION file), the version macros of
 * strided/version.h, and strided/driver.h (the CUDA driver and devices the
 * library finds).
 *
 * The driver is loaded once per process, so this file is built into one
 * executable per situation, chosen by a macro:
 *   DRIVER_NONE       no driver at all (STRIDED_CUDA_DRIVER names no file)
 *   DRIVER_FAKE       the fake driver (tests/c/fake_cuda.c), two devices
 *   DRIVER_INIT_FAILS the fake whose cuInit fails
 * The build's settings come as definitions: VERSION_FILE (the path of the
 * file VERSION), EXPECT_BUILD_TYPE, EXPECT_OPENMP (defined when the library
 * was built with OpenMP) and STRIDED_HAVE_KERNELS (with the copy kernels).
 */
/* realpath */
#define _XOPEN_SOURCE 700

#include "test_util.h"

#include <ctype.h>
#include <limits.h>
#include <stdlib.h>

#include "cuda/cuda_api.h"
#include "strided/build.h"
#include "strided/driver.h"
#include "test_cuda.h"

static void test_version_macros_spell_the_version_string(void **state)
{
    (void)state;
    char text[64];
    snprintf(text, sizeof text, "%d.%d.%d", STRIDED_VERSION_MAJOR, STRIDED_VERSION_MINOR,
             STRIDED_VERSION_PATCH);
    assert_string_equal(text, STRIDED_VERSION_STRING);
}

static void test_the_running_library_has_the_header_version(void **state)
{
    (void)state;
    assert_string_equal(strided_version(), STRIDED_VERSION_STRING);
}

/* VERSION holds one line, MAJOR.MINOR.PATCH, which every version is. */
static void test_the_version_is_the_version_file(void **state)
{
    (void)state;
    char line[64] = "";
    FILE *f = fopen(VERSION_FILE, "r");
    assert_non_null(f);
    assert_non_null(fgets(line, sizeof line, f));
    fclose(f);
    line[strcspn(line, "\r\n")] = '\0';
    assert_string_equal(line, STRIDED_VERSION_STRING);
    assert_string_equal(line, strided_version());
}

#ifdef STRIDED_HAVE_KERNELS
/* Every architecture is a number of 2 or 3 digits, one space between two. */
static void assert_architecture_list(const char *list)
{
    size_t digits = 0;
    assert_true(list[0] != '\0');
    for (const char *p = list;; p++) {
        if (isdigit((unsigned char)*p)) {
            digits++;
            continue;
        }
        if (digits < 2 || digits > 3)
            fail_msg("\"%s\" is not a list of architectures", list);
        digits = 0;
        if (*p == '\0')
            break;
        assert_int_equal(*p, ' ');
    }
}
#endif

static void test_build_info_describes_this_build(void **state)
{
    (void)state;
    strided_build_info b;
    fill_sentinel(&b, sizeof b);
    strided_build_info_init(&b);
    assert_string_equal(b.version, strided_version());
    assert_string_equal(b.build_type, EXPECT_BUILD_TYPE);
    assert_true(strncmp(b.compiler, "GCC ", 4) == 0 || strncmp(b.compiler, "clang ", 6) == 0);
#ifdef EXPECT_OPENMP
    assert_true(b.openmp);
#else
    assert_false(b.openmp);
#endif
#ifdef STRIDED_HAVE_KERNELS
    assert_true(b.kernels);
    assert_architecture_list(b.cuda_architectures);
    /* The PTX is the newest architecture's, the last of the list. */
    assert_architecture_list(b.ptx_architecture);
    const char *last = strrchr(b.cuda_architectures, ' ');
    assert_string_equal(last != NULL ? last + 1 : b.cuda_architectures, b.ptx_architecture);
    int major = 0, minor = -1;
    assert_int_equal(sscanf(b.nvcc_version, "%d.%d", &major, &minor), 2);
    assert_true(major >= 11 && minor >= 0);
#else
    assert_false(b.kernels);
    assert_string_equal(b.cuda_architectures, "");
    assert_string_equal(b.ptx_architecture, "");
    assert_string_equal(b.nvcc_version, "");
    assert_false(b.kernels_compressed);
#endif
}

static void test_driver_info_needs_info(void **state)
{
    (void)state;
    assert_error(strided_driver_info_init(NULL), STRIDED_ERR_INVALID_ARGUMENT, "driver_info",
                 "info is required");
}

static void test_device_info_needs_info(void **state)
{
    (void)state;
    assert_error(strided_device_info_init(NULL, 0), STRIDED_ERR_INVALID_ARGUMENT, "device_info",
                 "info is required");
}

static __attribute__((unused)) void check_both_fail(strided_status code, const char *text,
                                                    int cuda_error)
{
    strided_driver_info d;
    strided_device_info v;
    fill_sentinel(&d, sizeof d);
    fill_sentinel(&v, sizeof v);
    assert_error(strided_driver_info_init(&d), code, "driver_info", text);
    assert_int_equal(strided_last_cuda_error(), cuda_error);
    assert_error(strided_device_info_init(&v, 0), code, "device_info", text);
    assert_int_equal(strided_last_cuda_error(), cuda_error);
    assert_untouched(&d, sizeof d);
    assert_untouched(&v, sizeof v);
}

#if defined(DRIVER_NONE)
static void test_without_a_driver_both_say_why(void **state)
{
    (void)state;
    check_both_fail(STRIDED_ERR_NO_CUDA_DRIVER, "no CUDA driver: " NO_DRIVER_PATH, 0);
}
#endif

#if defined(DRIVER_INIT_FAILS)
static void test_a_failed_cuInit_is_a_cuda_error(void **state)
{
    (void)state;
    check_both_fail(STRIDED_ERR_CUDA, "cuInit failed: CUDA_ERROR_NO_DEVICE", CUDA_ERROR_NO_DEVICE);
}
#endif

#if defined(DRIVER_FAKE)
static void test_driver_info_describes_the_fake(void **state)
{
    (void)state;
    strided_driver_info d;
    char want[PATH_MAX], got[PATH_MAX];
    fill_sentinel(&d, sizeof d);
    assert_ok(strided_driver_info_init(&d));
    assert_int_equal(d.version, 13000);
    assert_int_equal(d.device_count, 2);
    /* The file the fake was loaded from, however the loader spells it. */
    assert_non_null(realpath(FAKE_CUDA_PATH, want));
    assert_non_null(realpath(d.path, got));
    assert_string_equal(got, want);
}

static void test_driver_info_counts_the_devices_there_are(void **state)
{
    (void)state;
    strided_driver_info d;
    fake.reset(5, 0, 1);
    assert_ok(strided_driver_info_init(&d));
    assert_int_equal(d.device_count, 5);
    fake.reset(0, 0, 1);
    assert_ok(strided_driver_info_init(&d));
    assert_int_equal(d.device_count, 0);
    fake.reset(2, 0, 1);
}

static void test_driver_info_fails_when_cuDeviceGetCount_fails(void **state)
{
    (void)state;
    strided_driver_info d;
    fill_sentinel(&d, sizeof d);
    fake.fail_next("cuDeviceGetCount", CUDA_ERROR_UNKNOWN);
    assert_error(strided_driver_info_init(&d), STRIDED_ERR_CUDA, "driver_info",
                 "cuDeviceGetCount failed: CUDA_ERROR_UNKNOWN");
    assert_int_equal(strided_last_cuda_error(), CUDA_ERROR_UNKNOWN);
    assert_untouched(&d, sizeof d);
}

static void test_device_info_describes_each_device(void **state)
{
    (void)state;
    for (int i = 0; i < 2; i++) {
        strided_device_info v;
        fill_sentinel(&v, sizeof v);
        assert_ok(strided_device_info_init(&v, i));
        assert_int_equal(v.ordinal, i);
        assert_string_equal(v.name, "Fake CUDA Device");
        assert_int_equal(v.compute_capability_major, 9);
        assert_int_equal(v.compute_capability_minor, 0);
        assert_int_equal(v.multiprocessor_count, 132);
    }
}

/* Describing a device makes no context current and retains none. */
static void test_device_info_needs_no_context(void **state)
{
    (void)state;
    strided_device_info v;
    long retains = fake.calls("cuDevicePrimaryCtxRetain");
    assert_ok(strided_device_info_init(&v, 1));
    assert_null(fake.current_context());
    assert_int_equal(fake.calls("cuDevicePrimaryCtxRetain"), retains);
}

static void test_device_info_rejects_a_device_that_does_not_exist(void **state)
{
    (void)state;
    const int devices[] = {2, -1, INT_MAX, INT_MIN};
    for (size_t i = 0; i < sizeof devices / sizeof devices[0]; i++) {
        strided_device_info v;
        char text[96];
        fill_sentinel(&v, sizeof v);
        snprintf(text, sizeof text, "device %d does not exist; there are 2 CUDA devices",
                 devices[i]);
        assert_error(strided_device_info_init(&v, devices[i]), STRIDED_ERR_INVALID_ARGUMENT,
                     "device_info", text);
        assert_untouched(&v, sizeof v);
    }
}

/* A failure of any query of the device fails the call, with the CUresult. */
static void test_device_info_fails_when_a_query_fails(void **state)
{
    (void)state;
    const char *calls[] = {"cuDeviceGetCount", "cuDeviceGet", "cuDeviceGetName",
                           "cuDeviceGetAttribute"};
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        strided_device_info v;
        char text[96];
        fill_sentinel(&v, sizeof v);
        fake.fail_next(calls[i], CUDA_ERROR_UNKNOWN);
        snprintf(text, sizeof text, "%s failed: CUDA_ERROR_UNKNOWN", calls[i]);
        assert_error(strided_device_info_init(&v, 0), STRIDED_ERR_CUDA, "device_info", text);
        assert_int_equal(strided_last_cuda_error(), CUDA_ERROR_UNKNOWN);
        assert_untouched(&v, sizeof v);
    }
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version_macros_spell_the_version_string),
        cmocka_unit_test(test_the_running_library_has_the_header_version),
        cmocka_unit_test(test_the_version_is_the_version_file),
        cmocka_unit_test(test_build_info_describes_this_build),
        cmocka_unit_test(test_driver_info_needs_info),
        cmocka_unit_test(test_device_info_needs_info),
#if defined(DRIVER_NONE)
        cmocka_unit_test(test_without_a_driver_both_say_why),
#elif defined(DRIVER_INIT_FAILS)
        cmocka_unit_test(test_a_failed_cuInit_is_a_cuda_error),
#elif defined(DRIVER_FAKE)
        cmocka_unit_test(test_driver_info_describes_the_fake),
        cmocka_unit_test(test_driver_info_counts_the_devices_there_are),
        cmocka_unit_test(test_driver_info_fails_when_cuDeviceGetCount_fails),
        cmocka_unit_test(test_device_info_describes_each_device),
        cmocka_unit_test(test_device_info_needs_no_context),
        cmocka_unit_test(test_device_info_rejects_a_device_that_does_not_exist),
        cmocka_unit_test(test_device_info_fails_when_a_query_fails),
#endif
    };

#if defined(DRIVER_NONE)
    use_no_driver();
#elif defined(DRIVER_INIT_FAILS)
    use_fake_driver(FAKE_CUDA_PATH, 1);
    fake.fail_next("cuInit", CUDA_ERROR_NO_DEVICE);
#elif defined(DRIVER_FAKE)
    use_fake_driver(FAKE_CUDA_PATH, 2);
#else
#error "define one DRIVER_ scenario"
#endif
    return cmocka_run_group_tests(tests, NULL, NULL);
}
