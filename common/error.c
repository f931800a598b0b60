/**
 * @file
 * @brief One-line fatal errors with the program's name and a documented exit code.
 */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static char prog_name[32] = "gemm";

void error_set_prog(const char *name)
{
    snprintf(prog_name, sizeof prog_name, "%s", name);
}

void die(int code, const char *fmt, ...)
{
    va_list ap;
    fflush(stdout); /* keep the table's rows ahead of the error */
    fprintf(stderr, "%s: error: ", prog_name);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(code);
}
