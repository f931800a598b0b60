/**
 * @file
 * @brief One-line fatal errors with the program's name and a documented exit code.
 */
#ifndef GEMM_ERROR_H
#define GEMM_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

/** Set the name that prefixes every message ("step01"). */
void error_set_prog(const char *name);

/** Print "<prog>: error: <message>" on one line to stderr and exit with @p code. */
#if defined(__GNUC__)
__attribute__((noreturn, format(printf, 2, 3)))
#endif
void die(int code, const char *fmt, ...);

#ifdef __cplusplus
}
#endif

#endif
