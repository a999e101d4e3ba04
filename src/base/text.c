/*
 * base/text.c: snprintf-style text building for messages and layout formatting.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/base.h"

void strided__text_append(strided__text *t, const char *fmt, ...)
{
    /* Past the end of buf, keep counting without writing, as snprintf does
     * when asked for the length of a text that does not fit. */
    char *at = t->len < t->size ? t->buf + t->len : NULL;
    size_t room = t->len < t->size ? t->size - t->len : 0;
    va_list args;
    va_start(args, fmt);
    int n = vsnprintf(at, room, fmt, args);
    va_end(args);
    if (n > 0)
        t->len += (size_t)n;
}

void strided__text_put(strided__text *t, const char *s, size_t n)
{
    if (t->len < t->size) {
        size_t room = t->size - t->len - 1;
        size_t k = n < room ? n : room;
        memcpy(t->buf + t->len, s, k);
        t->buf[t->len + k] = '\0';
    }
    t->len += n;
}

void strided__text_tuple(strided__text *t, int n, const int64_t *v)
{
    strided__text_append(t, "(");
    for (int i = 0; i < n; i++)
        strided__text_append(t, i + 1 < n || n == 1 ? "%lld," : "%lld", (long long)v[i]);
    strided__text_append(t, ")");
}
