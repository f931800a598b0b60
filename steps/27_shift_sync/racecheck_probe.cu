/**
 * @file
 * @brief Can compute-sanitizer's racecheck follow a hand-off through mbarriers? A probe with a
 * textbook producer/consumer ring, correct by the PTX memory model, for `make sanitize` to ask.
 *
 *   racecheck_probe syncthreads|mbarrier|cp.async|lane0 [ROUNDS]
 *
 * Warp 0 writes a stage of a two-stage ring in shared memory, warp 1 reads it, ROUNDS times (default
 * 8: every stage is reused). The hand-off is
 *
 *   syncthreads  __syncthreads() after the writes and after the reads (the control: racecheck
 *                has always understood it);
 *   mbarrier     step 27's: the producer's lanes store, then arrive on the stage's full barrier
 *                (release); the consumer's lanes wait on it (acquire), read, and arrive on the
 *                stage's empty barrier; the producer waits on that before it writes the stage
 *                again;
 *   cp.async     the same with the producer's writes made by cp.async from global memory and its
 *                arrive by cp.async.mbarrier.arrive.noinc (step 27's fast path);
 *   lane0        as mbarrier, but only the consumer's lane 0 arrives on the empty barrier, after a
 *                __syncwarp (also correct: __syncwarp orders the lanes' reads before lane 0's
 *                release; racecheck on CUDA 13 does not see that, and reports the producer's next
 *                write as racing with the reads).
 *
 * Exits 0 when the consumer read what it should have (every mode), 1 when not, 2 on bad arguments,
 * 3 on a CUDA error or when host memory runs out (the project's exit codes, common/cli.h). `make sanitize` runs it under racecheck: if racecheck reports hazards on the
 * syncthreads, mbarrier or cp.async hand-off, it cannot judge step 27's, and says so.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "mbarrier.h"

enum { WARP = 32, STAGES = 2, DEFAULT_ROUNDS = 8, MAX_ROUNDS = 1000 };
/** The hand-off between the two warps (the file's comment describes each). */
enum mode { SYNCTHREADS, MBARRIER, CP_ASYNC, LANE0 };

/** Copies 4 bytes from global @p src to shared @p dst, asynchronously. */
static __device__ void copy4(int *dst, const int *src)
{
    const unsigned s = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(s), "l"(src) : "memory");
}

/** Round r's value for lane l: what the producer writes and the consumer must read. */
static __device__ __host__ int value(int r, int l) { return r * WARP + l; }

/** One block of two warps; out[l] = the sum over rounds of what consumer lane l read. */
static __global__ void probe(enum mode mode, int rounds, const int *values, int *out)
{
    __shared__ int ring[STAGES][WARP];
    __shared__ __align__(8) uint64_t full[STAGES], empty[STAGES];
    const int warp = threadIdx.x / WARP, lane = threadIdx.x % WARP;
    if (threadIdx.x == 0)
        for (int st = 0; st < STAGES; ++st) {
            barrier_init(&full[st], WARP); /* the producer's lanes */
            barrier_init(&empty[st], mode == LANE0 ? 1 : WARP); /* the consumer's lanes (or lane 0) */
        }
    __syncthreads();
    int sum = 0;
    for (int r = 0; r < rounds; ++r) {
        const int st = r % STAGES, reader = (lane + 1) % WARP; /* each lane reads its neighbour's word */
        if (mode == SYNCTHREADS) {
            if (warp == 0)
                ring[st][lane] = value(r, lane);
            __syncthreads();
            if (warp == 1)
                sum += ring[st][reader];
            __syncthreads();
        } else if (warp == 0) {
            if (r >= STAGES) /* the consumer has released round r - STAGES's use of the stage */
                barrier_wait(&empty[st], (r / STAGES - 1) % 2);
            if (mode != CP_ASYNC) {
                ring[st][lane] = value(r, lane);
                barrier_arrive(&full[st]);
            } else {
                copy4(&ring[st][lane], values + r * WARP + lane);
                barrier_arrive_after_copies(&full[st]);
            }
        } else {
            barrier_wait(&full[st], (r / STAGES) % 2);
            sum += ring[st][reader];
            if (mode != LANE0) {
                barrier_arrive(&empty[st]); /* this lane's read is done */
            } else {
                __syncwarp(); /* every lane's read is done before lane 0 releases the stage */
                if (lane == 0)
                    barrier_arrive(&empty[st]);
            }
        }
    }
    if (mode == CP_ASYNC && warp == 0)
        asm volatile("cp.async.wait_all;\n" ::: "memory");
    if (warp == 1)
        out[lane] = sum;
}

/** Runs the probe in the mode named by argv[1], ROUNDS times (argv[2]), and checks what was read. */
int main(int argc, char **argv)
{
    const char *names[] = {"syncthreads", "mbarrier", "cp.async", "lane0"}; /* in enum mode's order */
    const int n_modes = (int)(sizeof names / sizeof names[0]);
    int mode = -1;
    long rounds = DEFAULT_ROUNDS;
    for (int m = 0; argc > 1 && m < n_modes; ++m)
        if (strcmp(argv[1], names[m]) == 0)
            mode = m;
    if (argc > 2) {
        char *end = NULL;
        rounds = strtol(argv[2], &end, 10);
        if (end == argv[2] || *end != '\0')
            rounds = 0; /* not a whole number: refused below */
    }
    if (mode < 0 || argc > 3 || rounds < 1 || rounds > MAX_ROUNDS) {
        fprintf(stderr, "usage: racecheck_probe syncthreads|mbarrier|cp.async|lane0 [ROUNDS 1..%d]\n", MAX_ROUNDS);
        return 2;
    }
    int *host = (int *)malloc(sizeof(int) * WARP * (size_t)rounds);
    if (host == NULL) {
        fprintf(stderr, "racecheck_probe: out of memory\n");
        return 3;
    }
    for (int r = 0; r < rounds; ++r)
        for (int l = 0; l < WARP; ++l)
            host[r * WARP + l] = value(r, l);
    int *values = NULL, *out = NULL;
    cuda_check(cudaMalloc(&values, sizeof(int) * WARP * (size_t)rounds), "cudaMalloc (values)");
    cuda_check(cudaMalloc(&out, sizeof(int) * WARP), "cudaMalloc (out)");
    cuda_check(cudaMemcpy(values, host, sizeof(int) * WARP * (size_t)rounds, cudaMemcpyHostToDevice),
               "cudaMemcpy (values)");
    probe<<<1, 2 * WARP>>>((enum mode)mode, (int)rounds, values, out);
    cuda_check_launch("probe", 1);
    int sums[WARP];
    cuda_check(cudaMemcpy(sums, out, sizeof sums, cudaMemcpyDeviceToHost), "cudaMemcpy (out)");
    int wrong = 0;
    for (int l = 0; l < WARP; ++l) {
        int want = 0;
        for (int r = 0; r < rounds; ++r)
            want += value(r, (l + 1) % WARP);
        wrong += sums[l] != want;
    }
    printf("racecheck_probe %s, %ld rounds: %s\n", names[mode], rounds, wrong ? "WRONG values" : "values right");
    cuda_check(cudaFree(values), "cudaFree");
    cuda_check(cudaFree(out), "cudaFree");
    free(host);
    return wrong ? 1 : 0;
}
