/*
 * base/status.c: status names and the thread-local error message.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/base.h"

/* Long enough for a 64-dimensional layout printed twice. Messages that do
 * not fit are truncated, never overrun. */
#define MESSAGE_CAPACITY 4096

static _Thread_local char message[MESSAGE_CAPACITY];
static _Thread_local size_t reason_at;
static _Thread_local int cuda_error;

const char *strided_status_name(strided_status status)
{
    switch (status) {
#define NAME_CASE(name, value, text) \
    case name: return #name;
        STRIDED_STATUS_LIST(NAME_CASE)
#undef NAME_CASE
    }
    return "STRIDED_UNKNOWN";
}

const char *strided_status_text(strided_status status)
{
    switch (status) {
#define TEXT_CASE(name, value, text) \
    case name: return text;
        STRIDED_STATUS_LIST(TEXT_CASE)
#undef TEXT_CASE
    }
    return "unknown status";
}

const char *strided_last_error(void)
{
    return message;
}

const char *strided_last_error_reason(void)
{
    return message + reason_at;
}

int strided_last_cuda_error(void)
{
    return cuda_error;
}

void strided__set_last_cuda_error(int code)
{
    cuda_error = code;
}

const char *strided_version(void)
{
    return STRIDED_VERSION_STRING;
}

static strided_status record(strided_status code, const char *op, const char *fmt, va_list args)
{
    int n = snprintf(message, sizeof message, "%s: ", op);
    size_t at = n < 0 ? 0 : (size_t)n;
    if (at >= sizeof message)
        at = sizeof message - 1;
    vsnprintf(message + at, sizeof message - at, fmt, args);
    reason_at = at;
    cuda_error = 0;
    return code;
}

strided_status strided__fail(strided_status code, const char *op, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    record(code, op, fmt, args);
    va_end(args);
    return code;
}

strided_status strided_set_last_error(strided_status status, const char *operation,
                                      const char *format, ...)
{
    va_list args;
    va_start(args, format);
    record(status, operation ? operation : "error", format ? format : "", args);
    va_end(args);
    return status;
}
