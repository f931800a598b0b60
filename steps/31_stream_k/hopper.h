/**
 * @file
 * @brief Hopper's (sm_90a) instructions for step 31, each in a small typed helper: step 30's (the tensor
 * memory accelerator's tile copy and store, mbarriers with transaction counts, the 64 x 256 warpgroup MMA
 * from shared memory, setmaxnreg, stmatrix), and new here: the flags with which stream-K's blocks hand
 * partial tiles to each other, and the cluster's barrier, remote arrivals and multicast copies.
 *
 * Compiled only for sm_90a (the Makefile gives this step its own -gencode): wgmma and setmaxnreg exist
 * on no other architecture, not even later ones.
 */
#ifndef STEP31_HOPPER_H
#define STEP31_HOPPER_H

#include <stdint.h>

/** The 32-bit shared-memory address of @p p (what every instruction below takes). */
static __device__ __forceinline__ unsigned smem_addr(const void *p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}

/* ---- mbarriers with transaction counts ---- */

/** mbarrier.init: @p count arrivals complete a phase. */
static __device__ __forceinline__ void bar_init(uint64_t *bar, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}

/** Makes the initialized barriers visible to the asynchronous proxy (the TMA unit) before first use. */
static __device__ __forceinline__ void bar_init_fence()
{
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

/** One arrival, and @p bytes more expected in this phase: the phase completes when every arrival has
 *  come and that many bytes have landed (the TMA copies that name this barrier count them down). */
static __device__ __forceinline__ void bar_arrive_expect(uint64_t *bar, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(bytes)
                 : "memory");
}

/** One arrival (release: this thread's earlier accesses happen before the phase completes). */
static __device__ __forceinline__ void bar_arrive(uint64_t *bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_addr(bar)) : "memory");
}

/** Waits until the phase of parity @p parity has completed. try_wait may suspend the thread for a
 *  while inside the instruction, instead of spinning the way step 27's test_wait does. */
static __device__ __forceinline__ void bar_wait(uint64_t *bar, unsigned parity)
{
    unsigned done = 0;
    while (!done)
        asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                     " selp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done) : "r"(smem_addr(bar)), "r"(parity) : "memory");
}

/* ---- the tensor memory accelerator ---- */

/**
 * One 2-D tile, global to shared, by the TMA unit: the box of the tensor map @p map whose first element
 * has coordinates (@p c0, @p c1) (c0 along the contiguous dimension) lands at @p dst, swizzled as the map
 * says; elements outside the tensor arrive as zeros. Completion counts the box's bytes down on @p bar.
 * One thread issues it; the copy runs on its own.
 */
static __device__ __forceinline__ void tma_load_2d(void *dst, const void *map, int c0, int c1, uint64_t *bar)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];\n"
                 ::"r"(smem_addr(dst)), "l"(map), "r"(c0), "r"(c1), "r"(smem_addr(bar))
                 : "memory");
}

/* ---- warpgroup MMA ---- */

/**
 * A shared-memory matrix descriptor (64 bits): where an operand tile starts and how it is laid out.
 * Bits 0-13: start address / 16; 16-29: leading byte offset / 16; 32-45: stride byte offset / 16;
 * 62-63: swizzle (1 = 128-byte). With the 128-byte swizzle a "core" block is 8 rows of 128 bytes (1 KB)
 * whose 16-byte chunks are permuted by row (chunk c of row r sits at chunk c ^ (r % 8)); the two offsets
 * say how far apart consecutive 8-row blocks lie (stride) and, where the operand is wider than 128 bytes
 * in its contiguous dimension, consecutive 128-byte columns (leading).
 */
static __device__ __forceinline__ uint64_t smem_desc(const void *tile, unsigned leading_bytes,
                                                     unsigned stride_bytes)
{
    const uint64_t SWIZZLE_128B = 1;
    return (uint64_t)((smem_addr(tile) & 0x3FFFF) >> 4) | (uint64_t)((leading_bytes & 0x3FFFF) >> 4) << 16 |
           (uint64_t)((stride_bytes & 0x3FFFF) >> 4) << 32 | SWIZZLE_128B << 62;
}

/** Orders this thread's earlier register writes (the accumulators) before the warpgroup's next wgmma. */
static __device__ __forceinline__ void wgmma_fence()
{
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

/** Closes the wgmmas issued since the last commit into one group. */
static __device__ __forceinline__ void wgmma_commit()
{
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

/** Waits until at most @p PENDING groups of this warpgroup's wgmmas are still running. */
template <int PENDING> static __device__ __forceinline__ void wgmma_wait()
{
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(PENDING) : "memory");
}

/**
 * d (64 x 256, FP32, in the 128 threads of the warpgroup) = A (64 x 16, BF16) * B (16 x 256, BF16)
 * + (@p accumulate ? d : 0),
 * both from shared memory through their descriptors; A is M-major (its 64 rows contiguous: imm-trans-a
 * = 1, column-major A as BLAS stores it), B is K-major (its 16 k contiguous per column: imm-trans-b = 0).
 * Asynchronous: the registers of d are not to be touched until a wgmma_wait covers this instruction.
 * Accumulator layout: warp w of the warpgroup holds rows 16w..16w+15; with g = lane / 4, t = lane % 4,
 * d[4j + e] is D(16w + g + 8 (e / 2), 8j + 2t + e % 2), j = 0..31.
 */
static __device__ __forceinline__ void wgmma_m64n256k16(float d[128], uint64_t desc_a, uint64_t desc_b,
                                                        int accumulate)
{
    asm volatile(
        "{\n .reg .pred acc;\n setp.ne.b32 acc, %130, 0;\n" /* scale-d: d = A*B + d (acc) or A*B */
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
        "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
        "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
        "%128, %129, acc, 1, 1, 1, 0;\n}\n" /* scale-a, scale-b = 1; trans-a = 1, trans-b = 0 */
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
          "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
          "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
          "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
          "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
          "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
          "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
          "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
          "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "l"(desc_a), "l"(desc_b), "r"(accumulate)
        : "memory");
}

/* ---- register reallocation between warpgroups ---- */

/** Lowers this warpgroup's registers per thread to @p REGS (all 128 threads execute it together): what
 *  they give up returns to the SM's pool, for another warpgroup's setmaxnreg_inc. */
template <int REGS> static __device__ __forceinline__ void setmaxnreg_dec()
{
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(REGS));
}

/** Raises this warpgroup's registers per thread to @p REGS, waiting until the pool has them. */
template <int REGS> static __device__ __forceinline__ void setmaxnreg_inc()
{
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(REGS));
}

/* ---- the TMA store (the epilogue) ---- */

/** Makes this thread's ordinary writes to shared memory visible to the asynchronous proxy, so that a TMA
 *  store issued after a barrier reads them (generic and async proxies are not ordered otherwise). */
static __device__ __forceinline__ void fence_async_shared()
{
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

/** One 2-D tile, shared to global, by the TMA unit: @p src (laid out as the map's box and swizzle) goes to
 *  the box of @p map at (@p c0, @p c1); elements outside the tensor are not written (this step uses it only
 *  where a column of C holds whole 16-byte pieces: see epilogue_mode). Asynchronous: it joins this thread's
 *  open bulk group (bulk_commit closes it). */
static __device__ __forceinline__ void tma_store_2d(const void *map, int c0, int c1, const void *src)
{
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n"
                 ::"l"(map), "r"(c0), "r"(c1), "r"(smem_addr(src))
                 : "memory");
}

/** Closes this thread's bulk copies issued since the last commit into one group. */
static __device__ __forceinline__ void bulk_commit()
{
    asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}

/** Waits until at most @p PENDING of this thread's bulk groups are still reading their shared memory
 *  (their writes to global memory may still be under way): the source may then be overwritten. */
template <int PENDING> static __device__ __forceinline__ void bulk_wait_read()
{
    asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(PENDING) : "memory");
}

/** Waits until at most @p PENDING of this thread's bulk groups are still under way, writes included. */
template <int PENDING> static __device__ __forceinline__ void bulk_wait()
{
    asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(PENDING) : "memory");
}

/** stmatrix .x4 .trans: the warp stores four 8 x 8 matrices of 16-bit values, transposed. Lane l holds in
 *  @p r[q] two neighbouring elements of matrix q, (l / 4, 2 (l % 4)) and the next column, packed low
 *  first (the layout of a row-major mma fragment), and gives in @p row the address of row l % 8 of matrix
 *  l / 8 in memory, 16 bytes; transposed, memory row c of a matrix holds its column c. */
static __device__ __forceinline__ void stmatrix_x4_trans(void *row, const uint32_t r[4])
{
    asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n"
                 ::"r"(smem_addr(row)), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3])
                 : "memory");
}

/* ---- flags between blocks (stream-K's partial tiles) ---- */

/** Sets @p flag to @p value with release semantics at GPU scope: this thread's earlier writes, and those it
 *  has observed (through a barrier), are visible to a thread that reads the value with acquire. */
static __device__ __forceinline__ void flag_release(int *flag, int value)
{
    asm volatile("st.release.gpu.global.b32 [%0], %1;\n" ::"l"(flag), "r"(value) : "memory");
}

/** Reads @p flag with acquire semantics at GPU scope: what the writer released is visible after it. */
static __device__ __forceinline__ int flag_acquire(const int *flag)
{
    int v;
    asm volatile("ld.acquire.gpu.global.b32 %0, [%1];\n" : "=r"(v) : "l"(flag) : "memory");
    return v;
}

/** The GPU's nanosecond timer (a bound on waits that must never be long). */
static __device__ __forceinline__ uint64_t global_ns()
{
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t));
    return t;
}

/* ---- clusters: two blocks that share operands ---- */

/** Every thread of every block of the cluster arrives, then waits for all (release / acquire: shared-memory
 *  writes before, such as barrier initializations, are visible to the other block after). */
static __device__ __forceinline__ void cluster_sync()
{
    asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
}

/** One arrival on the mbarrier at @p bar's offset in block @p cta of this cluster (mapa translates the
 *  address into that block's shared memory), with the default semantics (release at CTA scope), as
 *  CUTLASS's ClusterBarrier does. A consumer's arrival says only "my reads of the stage are done", and
 *  the wgmma wait before it has already made sure of that; `.release.cluster` would add a cluster-scope
 *  fence to every arrival, which waits for all of the warp's memory operations: on the H200 that made
 *  the clustered kernel 0.60 of cuBLAS instead of 0.99 (Nsight Compute: 35% of its stall cycles on the
 *  memory barrier). */
static __device__ __forceinline__ void bar_arrive_remote(uint64_t *bar, unsigned cta)
{
    asm volatile("{\n .reg .b32 remote;\n mapa.shared::cluster.u32 remote, %0, %1;\n"
                 " mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n"
                 ::"r"(smem_addr(bar)), "r"(cta)
                 : "memory");
}

/** tma_load_2d to every block of the cluster named in @p cta_mask (bit r: block r): the tile lands at the
 *  same offset @p dst in each, and each block's mbarrier at @p bar's offset counts its bytes. */
static __device__ __forceinline__ void tma_load_2d_multicast(void *dst, const void *map, int c0, int c1,
                                                             uint64_t *bar, uint16_t cta_mask)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
                 " [%0], [%1, {%2, %3}], [%4], %5;\n"
                 ::"r"(smem_addr(dst)), "l"(map), "r"(c0), "r"(c1), "r"(smem_addr(bar)), "h"(cta_mask)
                 : "memory");
}

#endif
