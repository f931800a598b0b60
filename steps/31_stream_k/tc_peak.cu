/**
 * @file
 * @brief build/tc_peak: the BF16 tensor-core rate of this GPU, measured two ways, for Part IV's roofline.
 *
 *  - `mma.sync` m16n8k16 (the Ampere path of steps 24-27): every warp of 2 blocks of 8 warps per SM runs
 *    CHAINS independent accumulator chains, so that the tensor cores, not an instruction's latency, are the
 *    limit.
 *  - `wgmma` m64n256k16 (Hopper, steps 28-31): two warpgroups per SM issue wgmmas from shared memory, 4 to
 *    a group, one group always queued, as the GEMM kernels' main loops do.
 *
 * The operands are random (never zeros: the H200 runs faster on zeros). Each kernel is timed after a
 * warm-up, best of TRIALS runs. The flops counted are those of the instructions issued (2 per multiply-add).
 *
 * usage: build/tc_peak [--csv FILE] [--help]; exit codes as the steps (4: not an sm_90 GPU).
 * Built for sm_90a (the Makefile gives step 31's directory its own -gencode).
 *
 * Measured on the H200 (plots/data/h200/tc_peak.csv, 2026-12-01): 960 TFLOP/s through wgmma, 644 through
 * mma.sync; 961 again on 2026-12-02 (plots/data/h200/step31_epilogue/power_runs.txt).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cuda_bf16.h>

#include "cli.h"
#include "error.h"
#include "gpu.h"
#include "hopper.h"

enum {
    TRIALS = 5,
    WARP = 32,
    WARPGROUP = 4 * WARP,
    /* mma.sync */
    MMA_WARPS = 8,          /* warps per block */
    MMA_BLOCKS_PER_SM = 2,  /* two blocks of 8 warps: 4 warps per scheduler */
    CHAINS = 8,             /* independent accumulator chains per warp */
    MMA_ITERS = 8192,       /* loop trips; CHAINS mma.sync each */
    MMA_FLOPS = 2 * 16 * 8 * 16,
    /* wgmma */
    WG_PER_BLOCK = 2,       /* warpgroups per block, one block per SM */
    WG_ACC = 128,           /* accumulators per thread of m64n256 */
    WG_ITERS = 2048,        /* loop trips; WG_GROUP wgmmas each */
    WG_GROUP = 4,           /* wgmmas per commit group: one 64-deep slice of K */
    WG_FLOPS = 2 * 64 * 256 * 16,
    ELEM = 2,
    ROW_BYTES = 128,        /* the 128-byte swizzle's row */
    ATOM_BYTES = 8 * ROW_BYTES,
    A_TILE = 64 * 64 * ELEM,  /* 64 (m) x 64 (k): 8 KB */
    B_TILE = 256 * 64 * ELEM, /* 256 (n) x 64 (k): 32 KB */
    SMEM = A_TILE + B_TILE + ATOM_BYTES
};

/** A pseudo-random BF16 pair (never zero) from @p seed: the operands of the peak kernels. */
__device__ uint32_t random_pair(uint32_t seed)
{
    seed = seed * 1664525u + 1013904223u; /* one step of a linear congruential generator */
    const float lo = 0.5f + (seed >> 8 & 0xFFFF) / 65536.0f, hi = -0.5f - (seed >> 16 & 0xFF) / 256.0f;
    const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const uint32_t *>(&v);
}

/** d += a * b: mma.sync m16n8k16, BF16 in, FP32 accumulators (a lane's fragments as PTX lays them out). */
__device__ __forceinline__ void mma_bf16(float d[4], const uint32_t a[4], const uint32_t b[2])
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                 "{%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/** CHAINS independent chains of MMA_ITERS mma.sync per warp; the sums go to @p out so none is dead code. */
__global__ void __launch_bounds__(MMA_WARPS * WARP) mma_sync_peak(float *out)
{
    uint32_t a[4], b[2];
    for (int i = 0; i < 4; ++i)
        a[i] = random_pair(threadIdx.x * 7 + i);
    for (int i = 0; i < 2; ++i)
        b[i] = random_pair(threadIdx.x * 5 + 100 + i);
    float d[CHAINS][4] = {};
    for (int it = 0; it < MMA_ITERS; ++it)
#pragma unroll
        for (int c = 0; c < CHAINS; ++c)
            mma_bf16(d[c], a, b);
    float sum = 0.0f;
    for (int c = 0; c < CHAINS; ++c)
        sum += d[c][0] + d[c][1] + d[c][2] + d[c][3];
    out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

/** Two warpgroups per block: WG_ITERS groups of WG_GROUP wgmmas (m64n256k16, A and B from shared memory,
 *  laid out as step 31's slices), one group always queued behind the running one. */
__global__ void __launch_bounds__(WG_PER_BLOCK * WARPGROUP, 1) wgmma_peak(float *out)
{
    extern __shared__ unsigned char raw[];
    unsigned char *a = raw + ((ATOM_BYTES - smem_addr(raw) % ATOM_BYTES) % ATOM_BYTES), *b = a + A_TILE;
    for (int i = threadIdx.x; i < (A_TILE + B_TILE) / 4; i += blockDim.x)
        reinterpret_cast<uint32_t *>(a)[i] = random_pair(i);
    __syncthreads();
    float acc[WG_ACC] = {};
    for (int it = 0; it < WG_ITERS; ++it) {
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < WG_GROUP; ++kk) /* as step 31's multiply_slice */
            wgmma_m64n256k16(acc, smem_desc(a + kk * 16 * ROW_BYTES, A_TILE, ATOM_BYTES),
                             smem_desc(b + kk * 16 * ELEM, 16, ATOM_BYTES), 1);
        wgmma_commit();
        wgmma_wait<1>();
    }
    wgmma_wait<0>();
    float sum = 0.0f;
    for (int i = 0; i < WG_ACC; ++i)
        sum += acc[i];
    out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

/** Milliseconds of the best of TRIALS launches of @p launch (after one warm-up). */
template <typename F> static float best_ms(F launch)
{
    cudaEvent_t start, stop;
    cuda_check(cudaEventCreate(&start), "cudaEventCreate");
    cuda_check(cudaEventCreate(&stop), "cudaEventCreate");
    launch();
    cuda_check(cudaGetLastError(), "launching a peak kernel");
    float best = 1e30f;
    for (int t = 0; t < TRIALS; ++t) {
        float ms = 0.0f;
        cuda_check(cudaEventRecord(start), "cudaEventRecord");
        launch();
        cuda_check(cudaEventRecord(stop), "cudaEventRecord");
        cuda_check(cudaEventSynchronize(stop), "running a peak kernel");
        cuda_check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
        best = ms < best ? ms : best;
    }
    cuda_check(cudaEventDestroy(start), "cudaEventDestroy");
    cuda_check(cudaEventDestroy(stop), "cudaEventDestroy");
    return best;
}

/** Measure and print both rates; --csv FILE also writes device,mma_sync_bf16_gflops,wgmma_bf16_gflops. */
int main(int argc, char **argv)
{
    error_set_prog("tc_peak");
    error_catch_exits();
    const char *csv = NULL;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc) {
            csv = argv[++i];
        } else if (strcmp(argv[i], "--help") == 0) {
            printf("usage: tc_peak [--csv FILE]\nMeasures the BF16 tensor-core rate of an sm_90 GPU through mma.sync "
                   "and through wgmma\n(the best of %d runs each); --csv writes device,mma_sync_bf16_gflops,"
                   "wgmma_bf16_gflops to FILE.\n", TRIALS);
            error_exit(EXIT_VERIFIED);
        } else {
            fprintf(stderr, "tc_peak: error: unknown argument '%s'\nusage: tc_peak [--csv FILE] [--help]\n", argv[i]);
            error_exit(EXIT_USAGE);
        }
    }
    gpu_require_device(); /* exit 3 with one line where there is none */
    cudaDeviceProp prop;
    cuda_check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    if (prop.major != 9 || prop.minor != 0)
        die(EXIT_UNSUPPORTED, "built for sm_90a (wgmma); this GPU is sm_%d%d", prop.major, prop.minor);

    const int sms = prop.multiProcessorCount;
    const int mma_blocks = sms * MMA_BLOCKS_PER_SM, wg_blocks = sms;
    float *out = NULL;
    const size_t slots = (size_t)mma_blocks * MMA_WARPS * WARP + (size_t)wg_blocks * WG_PER_BLOCK * WARPGROUP;
    cuda_check(cudaMalloc(&out, slots * sizeof(float)), "cudaMalloc");
    cuda_check(cudaFuncSetAttribute(wgmma_peak, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM),
               "opting in to shared memory");

    const float mma_ms = best_ms([&] { mma_sync_peak<<<mma_blocks, MMA_WARPS * WARP>>>(out); });
    float *out2 = out + (size_t)mma_blocks * MMA_WARPS * WARP;
    const float wg_ms = best_ms([&] { wgmma_peak<<<wg_blocks, WG_PER_BLOCK * WARPGROUP, SMEM>>>(out2); });
    cuda_check(cudaFree(out), "cudaFree");

    /* flops issued: per instruction, times instructions per warp (warpgroup), times warps (warpgroups) */
    const double mma_flops = (double)(MMA_FLOPS * CHAINS) * (double)MMA_ITERS * (double)(MMA_WARPS * mma_blocks);
    const double wg_flops = (double)(WG_FLOPS * WG_GROUP) * (double)WG_ITERS * (double)(WG_PER_BLOCK * wg_blocks);
    const double mma_gflops = mma_flops / (mma_ms * 1e6), wg_gflops = wg_flops / (wg_ms * 1e6);
    printf("device:                %s (%d SMs)\n", prop.name, sms);
    printf("BF16 mma.sync m16n8k16: %.0f GFLOP/s (best of %d runs)\n", mma_gflops, TRIALS);
    printf("BF16 wgmma m64n256k16:  %.0f GFLOP/s (best of %d runs)\n", wg_gflops, TRIALS);
    if (csv != NULL) {
        FILE *f = fopen(csv, "w");
        if (f == NULL || fprintf(f, "device,mma_sync_bf16_gflops,wgmma_bf16_gflops\n%s,%.0f,%.0f\n", prop.name,
                                 mma_gflops, wg_gflops) < 0 || fclose(f) != 0)
            die(EXIT_RUNTIME, "cannot write '%s'", csv);
    }
    error_exit(EXIT_VERIFIED); /* (error_catch_exits reports a bare return as an unexpected exit) */
}
