/*
 * bench_json.h: what the C benchmarks share to write their results as JSON
 * (with cJSON, where the build found it).
 */
#ifndef STRIDED_BENCH_JSON_H
#define STRIDED_BENCH_JSON_H

#ifdef HAVE_CJSON
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>

/* Write root as text to path and free it; program names the benchmark in
 * the message when it cannot. Returns whether it wrote. */
static inline int bench_json_save(cJSON *root, const char *path, const char *program)
{
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    FILE *f = fopen(path, "w");
    if (text == NULL || f == NULL || fputs(text, f) < 0 || fputc('\n', f) == EOF) {
        fprintf(stderr, "%s: cannot write %s\n", program, path);
        if (f != NULL)
            fclose(f);
        free(text);
        return 0;
    }
    free(text);
    return fclose(f) == 0;
}
#endif

#endif
