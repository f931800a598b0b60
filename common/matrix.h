/**
 * @file
 * @brief Host matrices: allocation, seeded random fill, precision rounding.
 */
#ifndef GEMM_MATRIX_H
#define GEMM_MATRIX_H

#include <stddef.h>
#include <stdint.h>

#include "step.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Which matrix a random stream fills: each gets an independent stream. */
typedef enum { MATRIX_A = 1, MATRIX_B = 2, MATRIX_C = 3 } matrix_id;

/** Bytes of one element of @p p. */
size_t precision_bytes(precision_t p);

/** "FP32", "FP64", "BF16". */
const char *precision_name(precision_t p);

/** Unit round-off of the accumulation in precision @p p (2^-24 for FP32 and for BF16, which accumulates in float). */
double precision_unit_roundoff(precision_t p);

/** Unit round-off of the output C in precision @p p (2^-8 for BF16; else the accumulation's). */
double precision_output_roundoff(precision_t p);

/** Round the scalar @p x (alpha, beta) to precision @p p's scalars and back to double (the value a kernel sees;
 *  BF16 steps take float scalars). */
double precision_round(precision_t p, double x);

/** bfloat16 nearest to @p x (ties to even; NaN stays NaN). */
bf16_bits bf16_from_float(float x);

/** The float equal to the bfloat16 @p h (exact). */
float bf16_to_float(bf16_bits h);

/** The largest finite number of precision @p p (of C, the output). */
double precision_max(precision_t p);

/** The smallest positive (subnormal) number of precision @p p: the absolute error of an underflow. */
double precision_tiniest(precision_t p);

/**
 * Allocate exactly @p bytes (no rounding up, so that AddressSanitizer sees an
 * access past the end), 64-byte aligned. On failure prints one line naming
 * @p what and the size, and exits with EXIT_RUNTIME.
 */
void *host_alloc(size_t bytes, const char *what);

/** Free memory from host_alloc (NULL is fine). */
void host_free(void *p);

/**
 * Allocate a matrix that a step will read or write (A, B and C as the harness hands them to a step on the
 * host), between two guard regions that no access may touch (PROT_NONE pages, 64 KiB each: address space,
 * not memory). The matrix ends exactly where the trailing guard begins, so that a read or write of even one
 * byte past its end faults. The leading guard ends on the page boundary at or below the start, and the
 * start is where the end puts it: a matrix whose size is a multiple of 64 bytes (doubles with ld * columns
 * a multiple of 8: every benchmarked shape) starts on 64 bytes, any other on its element size (no step
 * relies on more: they load A and B unaligned and pack them into aligned buffers of their own). The slack
 * between the leading guard and the start, less than a page, holds all-ones bytes, a NaN in every
 * precision: a read there that reaches the result poisons it, one further before the start faults. (Flush
 * with the end, not with the start: a read past the end is the common bug, an edge tile's vector running
 * over, and there not one byte may go unseen.) A fault on a guard ends the run with one line and
 * EXIT_WRONG (matrix_guard_install). Every mmap, mprotect and munmap is checked: on failure one line naming
 * @p what, and EXIT_RUNTIME. In a build under AddressSanitizer (make sanitize) it is host_alloc, whose
 * redzones ASan checks to the byte and reports with a stack.
 */
void *matrix_alloc(size_t bytes, const char *what);

/** Free memory from matrix_alloc (NULL is fine); exits with EXIT_RUNTIME if munmap fails. */
void matrix_free(void *p);

/**
 * Catch faults on the guard pages of matrix_alloc's matrices (SIGSEGV): such a fault prints one line, the
 * program's name (error_set_prog), the matrix, how far before its start or past its end, and who ran
 * (matrix_guard_running), and ends the run with EXIT_WRONG; any other fault is left to the default
 * action (a crash). Call once, early in main().
 */
void matrix_guard_install(void);

/**
 * Name what runs from now on, for the message of a guard-page fault: "the step", "the baseline (OpenBLAS)";
 * NULL for the harness itself. @p who must stay valid (a string literal).
 */
void matrix_guard_running(const char *who);

/**
 * Fill the rows x cols matrix X (leading dimension ld >= rows, stored in
 * precision @p p) with values uniform in [-1, 1] rounded to @p p.
 * The stream depends on @p seed, @p shape_index and @p id only, so a run
 * is reproducible and every shape and matrix gets fresh numbers.
 * The padding rows (rows..ld-1) are set to @p pad, so that a kernel that
 * reads past its column (NaN pad) or writes into the padding (finite pad)
 * is caught by verification.
 */
void matrix_fill_random(precision_t p, void *X, int rows, int cols, long long ld,
                        uint64_t seed, int shape_index, matrix_id id, double pad);

/** Copy an element array of precision @p p into doubles (exact: both are ld-strided, ld * cols elements). */
void matrix_to_double(precision_t p, const void *src, double *dst, size_t count);

#ifdef __cplusplus
}
#endif

#endif
