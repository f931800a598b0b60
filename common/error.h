/**
 * @file
 * @brief One-line fatal errors with the program's name and a documented exit code.
 */
#ifndef GEMM_ERROR_H
#define GEMM_ERROR_H

#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Set the name that prefixes every message ("step01"). */
void error_set_prog(const char *name);

/** The name that prefixes every message (error_set_prog's; "gemm" before it is set). */
const char *error_prog(void);

/**
 * From now on, an exit that neither die() nor error_exit() makes (a library that gives up and calls
 * exit(1), as OpenMP does when it cannot create its threads) prints one line and ends the program
 * with EXIT_RUNTIME instead: 1 means "verification failed" and must not be borrowed.
 */
void error_catch_exits(void);

/** Exit with @p code on purpose (main's normal end). */
#if defined(__GNUC__)
__attribute__((noreturn))
#endif
void error_exit(int code);

/**
 * Print "<who>: <kind>: <message>" on one line to stderr, stdout flushed first (a table's rows stay
 * ahead of the message); @p who NULL: the name of error_set_prog(). What warn() and die() print.
 */
void error_vprint(const char *who, const char *kind, const char *fmt, va_list ap);

/** Print "<prog>: warning: <message>" on one line to stderr, and go on. */
#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
void warn(const char *fmt, ...);

/** Print "<prog>: error: <message>" on one line to stderr and exit with @p code. */
#if defined(__GNUC__)
__attribute__((noreturn, format(printf, 2, 3)))
#endif
void die(int code, const char *fmt, ...);

#ifdef __cplusplus
}
#endif

#endif
