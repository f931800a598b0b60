/**
 * @file
 * @brief The contract between a step and the shared harness.
 *
 * A step is one kernel file (`steps/NN_name/kernel.cu` or `kernel.c`) that
 * defines one object, `STEP`, holding its metadata and its launch function.
 * Everything else (parsing, data, reference, verification, timing, output)
 * lives in `common/`, so that a step's source shows only its lesson.
 *
 * All matrices are column-major with BLAS semantics:
 * `C = alpha * A * B + beta * C`, A is M x K, B is K x N, C is M x N, and
 * element (i, j) of X lives at `X[i + j * ldx]`. When `beta == 0`, C must not
 * be read (the harness fills it with NaN before the checked run).
 *
 * Index width: the harness refuses any shape in which A, B or C spans 2^31
 * elements or more (`ld * columns`), so a kernel may compute every offset
 * `i + j * ld` in a plain `int` without overflow.
 */
#ifndef GEMM_STEP_H
#define GEMM_STEP_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Element type of the inputs (and of C unless stated otherwise). */
typedef enum {
    PRECISION_FP32, /**< float in, float accumulate, float out (SGEMM) */
    PRECISION_FP64, /**< double in, double accumulate, double out (DGEMM) */
    PRECISION_BF16  /**< bfloat16 A, B and C, float accumulation and scalars (Part IV, tensor cores) */
} precision_t;

/**
 * The bits of one bfloat16 number (1 sign, 8 exponent, 7 fraction bits: the top half of a float).
 * Host code is C and has no bfloat16 type; a kernel reads these as CUDA's `__nv_bfloat16`.
 */
typedef uint16_t bf16_bits;

/** Where a step's kernel runs. */
typedef enum {
    TARGET_GPU, /**< a CUDA kernel; pointers passed to the launcher are device pointers */
    TARGET_CPU, /**< host code; pointers are host pointers */
    TARGET_HYBRID /**< host pointers; the step moves what it gives a GPU itself (Part III) */
} target_t;

/** Launch function of an FP32 step (same argument order as BLAS SGEMM, no transposes). */
typedef void (*sgemm_fn)(int m, int n, int k, float alpha, const float *A, int lda,
                         const float *B, int ldb, float beta, float *C, int ldc);

/** Launch function of an FP64 step (same argument order as BLAS DGEMM, no transposes). */
typedef void (*dgemm_fn)(int m, int n, int k, double alpha, const double *A, int lda,
                         const double *B, int ldb, double beta, double *C, int ldc);

/**
 * Launch function of a BF16 step: A, B and C in bfloat16, alpha and beta and the accumulation in float
 * (cublasGemmEx with CUDA_R_16BF and CUBLAS_COMPUTE_32F computes the same).
 */
typedef void (*bgemm_fn)(int m, int n, int k, float alpha, const bf16_bits *A, int lda,
                         const bf16_bits *B, int ldb, float beta, bf16_bits *C, int ldc);

/**
 * Optional hook of a step with settings of its own (`--param NAME=VALUE` on the
 * command line, e.g. a loop order, block sizes or an instruction set).
 * Called once, before anything runs, with the `--param` values in order.
 * Returns NULL and writes a one-line description of the settings into @p desc,
 * or returns a one-line error (exit 2).
 */
typedef const char *(*configure_fn)(int nparams, const char *const *params, char *desc,
                                    unsigned desclen);

/**
 * For configure hooks: if @p param is `NAME=VALUE` with @p name as NAME, parse VALUE as a whole
 * number in [@p lo, @p hi] into @p out (or point @p bad at a one-line reason) and return 1;
 * return 0 when NAME is another name.
 */
int step_param_int(const char *param, const char *name, int lo, int hi, int *out, const char **bad);

/**
 * For configure hooks: a setting this machine cannot run (an instruction set the CPU lacks). Prints
 * one line ("<prog>: error: <why>") and exits with EXIT_UNSUPPORTED (4): a skip, not a usage error.
 */
#if defined(__GNUC__)
__attribute__((noreturn, format(printf, 1, 2)))
#endif
void step_cannot_run(const char *fmt, ...);

/** What a step tells the harness about itself. */
struct step {
    int number;            /**< 0..31: the step's place on the ladder */
    const char *name;      /**< short name, e.g. "naive" (the directory is NN_name) */
    const char *summary;   /**< one line: the optimization this step adds */
    precision_t precision; /**< element type */
    target_t target;       /**< GPU or CPU */
    int max_size;          /**< the default sweep stops at this size (0: no limit) */
    int min_cc;            /**< GPU: lowest compute capability, e.g. 90 for sm_90 (0: any) */
    sgemm_fn sgemm;        /**< the launcher, for PRECISION_FP32 steps */
    dgemm_fn dgemm;        /**< the launcher, for PRECISION_FP64 steps */
    int cpu_threads;       /**< CPU steps: 1 = single-threaded (the baseline too); 0 = all (OMP_NUM_THREADS) */
    configure_fn configure;/**< optional: the step's own settings (NULL: none; --param is refused) */
    bgemm_fn bgemm;        /**< the launcher, for PRECISION_BF16 steps */
};

/** Every step defines exactly one of these; the harness's main() reads it. */
extern const struct step STEP;

#ifdef __cplusplus
}
#endif

#endif
