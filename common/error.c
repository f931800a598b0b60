/**
 * @file
 * @brief One-line fatal errors with the program's name and a documented exit code.
 */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli.h"

static char prog_name[32] = "gemm";
static volatile int exit_on_purpose; /* set by die() and error_exit() */

static void unexpected_exit(void)
{
    if (exit_on_purpose)
        return;
    fflush(stdout);
    fprintf(stderr, "%s: error: the run was ended by a library (its message is above), not by this program; "
                    "exit %d (runtime error)\n", prog_name, EXIT_RUNTIME);
    _exit(EXIT_RUNTIME);
}

void error_catch_exits(void)
{
    atexit(unexpected_exit);
}

void error_exit(int code)
{
    exit_on_purpose = 1;
    exit(code);
}

void error_set_prog(const char *name)
{
    snprintf(prog_name, sizeof prog_name, "%s", name);
}

const char *error_prog(void)
{
    return prog_name;
}

void error_vprint(const char *who, const char *kind, const char *fmt, va_list ap)
{
    fflush(stdout); /* keep the table's rows ahead of the message */
    fprintf(stderr, "%s: %s: ", who != NULL ? who : prog_name, kind);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    error_vprint(NULL, "warning", fmt, ap);
    va_end(ap);
}

void die(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    error_vprint(NULL, "error", fmt, ap);
    va_end(ap);
    error_exit(code);
}
