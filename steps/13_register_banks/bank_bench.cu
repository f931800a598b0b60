/**
 * @file
 * @brief build/bank_bench: which register-bank patterns of an FFMA cost a cycle, measured.
 *
 * An FFMA reads three registers: a, b and the accumulator c. The register file
 * of a Hopper SM sub-partition has two banks, even and odd register numbers.
 * With three operands and two banks, two of them always share a bank: is that
 * already a conflict, or only all three in one bank? This program answers it.
 *
 * One warp alone on an SM runs a long unrolled stream of independent FFMAs (8
 * accumulators, enough to cover the FFMA latency), timed with clock64(). Every
 * operand comes from a register whose parity is fixed: the values are loaded
 * with 128-bit loads, whose four destination registers are R4n .. R4n+3, so .x
 * and .z land in the even bank and .y and .w in the odd one; each accumulator
 * stays in place until its 128-bit store. Consecutive FFMAs never read the same
 * register in the same operand slot, so the operand reuse cache cannot hide a
 * read (but for the last pattern, which asks for it). Without conflicts the
 * warp issues one FFMA per cycle; each conflict adds a cycle.
 *
 * The compiler keeps the parities only in part: it moves some values to other
 * registers and renames accumulators, and it marks reuse where it can. So the
 * lesson does not trust the source's intent: it counts each kernel's loop in its
 * SASS with bank_reads.awk (how many FFMAs need two reads from one bank, how many
 * need three) and sets those counts beside the cycles measured here.
 *
 * usage: build/bank_bench [--help]   (exit codes as the steps: 0, 2 usage, 3 runtime)
 * The lesson of step 13 lists the SASS of each pattern's loop (nvdisasm) beside its time.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "error.h"
#include "gpu.h"

enum {
    UNROLL = 64,     /* FFMAs per loop iteration */
    ACCS = 8,        /* independent accumulators */
    POOL = 4,        /* a and b rotate through 4 registers each */
    ITERS = 4096,    /* loop iterations: 262 144 FFMAs a run */
    TRIALS = 5,      /* runs per pattern; the fastest counts */
    REUSE = 8        /* the reuse pattern: one a for 8 FFMAs in a row */
};

/** Which bank (0 even, 1 odd) each operand comes from, and whether a repeats for the reuse cache. */
struct pattern {
    int a;              /**< bank of a (0 even, 1 odd) */
    int b;              /**< bank of b */
    int c;              /**< bank of the accumulator */
    int reuse;          /**< 1: a stays the same for REUSE FFMAs in a row (the cache can serve it) */
    const char *name;   /**< what the pattern is */
};

static const struct pattern PATTERNS[] = {
    {0, 1, 1, 0, "a even, b and c odd      (b, c share a bank)"},
    {1, 0, 1, 0, "a odd, b even, c odd     (a, c share a bank)"},
    {0, 0, 1, 0, "a and b even, c odd      (a, b share a bank)"},
    {1, 1, 0, 0, "a and b odd, c even      (a, b share a bank)"},
    {0, 0, 0, 0, "all three even           (one bank)"},
    {1, 1, 1, 0, "all three odd            (one bank)"},
    {0, 0, 0, 1, "all three even, a reused (one bank, a from the reuse cache)"},
};
enum { PATTERN_COUNT = sizeof PATTERNS / sizeof PATTERNS[0] };

/** The component @p odd (0: .x, .z; 1: .y, .w) number @p i (0 or 1) of @p v. */
__device__ float lane(float4 v, int odd, int i)
{
    return odd ? (i ? v.w : v.y) : (i ? v.z : v.x);
}

/** A 128-bit load (ld.global.v4.f32): its four values land in one aligned quad of registers, R4n .. R4n+3. */
__device__ float4 load_quad(const float4 *p)
{
    float4 v;
    asm volatile("ld.global.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
    return v;
}

/** A 128-bit store (st.global.v4.f32): the four values must sit in one aligned quad. */
__device__ void store_quad(float4 *p, float4 v)
{
    asm volatile("st.global.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w)
                 : "memory");
}

/** One warp's stream of FFMAs with operands from banks A_BANK, B_BANK, C_BANK; cycles to @p cycles. */
template <int A_BANK, int B_BANK, int C_BANK, int REUSED>
__global__ void bank_stream(const float4 *in, float4 *out, long long *cycles, int iters)
{
    const float4 *mine = in + 8 * threadIdx.x; /* each thread its own values: no uniform registers */
    const float4 A0 = load_quad(mine), A1 = load_quad(mine + 1), B0 = load_quad(mine + 2), B1 = load_quad(mine + 3);
    float4 C[ACCS / 2];
    for (int q = 0; q < ACCS / 2; ++q)
        C[q] = load_quad(mine + 4 + q);
    /* The pools: a and b from their bank's two registers in each of two quads, the accumulators from
     * their bank's two registers in each of four quads (each stays in place until the stores below). */
    const float a[POOL] = {lane(A0, A_BANK, 0), lane(A0, A_BANK, 1), lane(A1, A_BANK, 0), lane(A1, A_BANK, 1)};
    const float b[POOL] = {lane(B0, B_BANK, 0), lane(B0, B_BANK, 1), lane(B1, B_BANK, 0), lane(B1, B_BANK, 1)};
    float acc[ACCS];
    for (int k = 0; k < ACCS; ++k)
        acc[k] = lane(C[k / 2], C_BANK, k % 2);

    __syncwarp();
    const long long start = clock64();
    for (int it = 0; it < iters; ++it) {
#pragma unroll
        for (int i = 0; i < UNROLL; ++i) {
            /* Consecutive FFMAs differ in every slot: a by one, b by two (mod 4), the accumulator by one
             * (mod 8); REUSED keeps a for REUSE FFMAs in a row. */
            const int ai = REUSED ? (i / REUSE) % POOL : i % POOL;
            acc[i % ACCS] = fmaf(a[ai], b[(i / 2 + i) % POOL], acc[i % ACCS]);
        }
    }
    const long long stop = clock64();
    for (int k = 0; k < ACCS; ++k) /* back into the quads, for 128-bit stores */
        if (C_BANK)
            (k % 2 ? C[k / 2].w : C[k / 2].y) = acc[k];
        else
            (k % 2 ? C[k / 2].z : C[k / 2].x) = acc[k];
    /* The other bank's halves of A and B go out too, so that every loaded value stays live to the end. */
    const float4 unused = make_float4(lane(A0, !A_BANK, 0) + lane(A1, !A_BANK, 1), lane(B0, !B_BANK, 0),
                                      lane(B1, !B_BANK, 1), lane(A0, !A_BANK, 1) + lane(A1, !A_BANK, 0));
    for (int q = 0; q < ACCS / 2; ++q)
        store_quad(&out[q * blockDim.x + threadIdx.x], C[q]);
    store_quad(&out[(ACCS / 2) * blockDim.x + threadIdx.x], unused);
    if (threadIdx.x == 0)
        *cycles = stop - start;
}

/** Times every pattern's kernel (the fastest of TRIALS) and prints cycles per FFMA. */
template <int A_BANK, int B_BANK, int C_BANK, int REUSED>
static double cycles_per_ffma(const float4 *in, float4 *out, long long *cycles)
{
    double best = 0.0;
    for (int t = 0; t < TRIALS; ++t) {
        bank_stream<A_BANK, B_BANK, C_BANK, REUSED><<<1, 32>>>(in, out, cycles, ITERS);
        cuda_check_launch("the bank benchmark", 1);
        long long c = 0;
        cuda_check(cudaMemcpy(&c, cycles, sizeof c, cudaMemcpyDeviceToHost), "copying the cycle count");
        const double per = (double)c / ((double)ITERS * (double)UNROLL);
        if (t == 0 || per < best)
            best = per;
    }
    return best;
}

/** Times each pattern's kernel and prints its cycles per FFMA. */
int main(int argc, char **argv)
{
    error_set_prog("bank_bench");
    error_catch_exits();
    if (argc > 1) {
        if (strcmp(argv[1], "--help") == 0 && argc == 2) {
            printf("usage: bank_bench\nTimes one warp's stream of FFMAs for each register-bank pattern of its three "
                   "operands\n(cycles per FFMA; 1.00 is one FFMA issued every cycle).\n");
            error_exit(EXIT_VERIFIED);
        }
        fprintf(stderr, "bank_bench: error: unknown argument '%s'\nusage: bank_bench [--help]\n", argv[1]);
        error_exit(EXIT_USAGE);
    }
    gpu_require_device();
    float4 *in = NULL, *out = NULL;
    long long *cycles = NULL;
    float4 host[8 * 32];
    for (int q = 0; q < 8 * 32; ++q) /* a, b just under 1, accumulators small: no overflow in 262 144 FFMAs */
        host[q] = q % 8 < 4 ? make_float4(0.999f, 0.998f, 0.997f, 0.996f) : make_float4(0.1f, 0.2f, 0.3f, 0.4f);
    cuda_check(cudaMalloc(&in, sizeof host), "cudaMalloc");
    cuda_check(cudaMalloc(&out, 5 * 32 * sizeof(float4)), "cudaMalloc");
    cuda_check(cudaMalloc(&cycles, sizeof *cycles), "cudaMalloc");
    cuda_check(cudaMemcpy(in, host, sizeof host, cudaMemcpyHostToDevice), "cudaMemcpy");
    const double per[PATTERN_COUNT] = {
        cycles_per_ffma<0, 1, 1, 0>(in, out, cycles), cycles_per_ffma<1, 0, 1, 0>(in, out, cycles),
        cycles_per_ffma<0, 0, 1, 0>(in, out, cycles), cycles_per_ffma<1, 1, 0, 0>(in, out, cycles),
        cycles_per_ffma<0, 0, 0, 0>(in, out, cycles), cycles_per_ffma<1, 1, 1, 0>(in, out, cycles),
        cycles_per_ffma<0, 0, 0, 1>(in, out, cycles)};
    printf("%-22s %-60s %s\n", "kernel", "the operands' banks the source asks for (a, b, accumulator c)",
           "cycles per FFMA");
    for (int t = 0; t < PATTERN_COUNT; ++t)
        printf("bank_stream<%d,%d,%d,%d>  %-60s %.3f\n", PATTERNS[t].a, PATTERNS[t].b, PATTERNS[t].c,
               PATTERNS[t].reuse, PATTERNS[t].name, per[t]);
    cuda_check(cudaFree(in), "cudaFree");
    cuda_check(cudaFree(out), "cudaFree");
    cuda_check(cudaFree(cycles), "cudaFree");
    error_exit(EXIT_VERIFIED);
}
