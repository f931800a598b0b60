/**
 * @file
 * @brief mbarriers (sm_80 on): 64-bit counters in shared memory with a phase bit, in small typed
 * helpers. Shared by step 27's kernel and its racecheck probe.
 *
 * A barrier is initialized with the number of arrivals that complete a phase. A phase completes when
 * that many arrivals have come; the barrier then starts the next phase with the count restored. A
 * waiter names the phase it waits for by its parity (phase n has parity n % 2), so a ring of stages
 * can reuse each barrier: the k-th use of a stage waits for parity k % 2.
 */
#ifndef STEP27_MBARRIER_H
#define STEP27_MBARRIER_H

#include <stdint.h>

/** mbarrier.init: the barrier at @p bar expects @p count arrivals per phase. */
static __device__ __forceinline__ void barrier_init(uint64_t *bar, unsigned count)
{
    const unsigned s = (unsigned)__cvta_generic_to_shared(bar);
    asm volatile("mbarrier.init.shared.b64 [%0], %1;\n" ::"r"(s), "r"(count) : "memory");
}

/** mbarrier.arrive: one arrival, with release semantics (this thread's earlier writes are seen by
 *  whoever observes the phase complete). */
static __device__ __forceinline__ void barrier_arrive(uint64_t *bar)
{
    const unsigned s = (unsigned)__cvta_generic_to_shared(bar);
    asm volatile("mbarrier.arrive.shared.b64 _, [%0];\n" ::"r"(s) : "memory"); /* _: no phase token kept */
}

/** cp.async.mbarrier.arrive.noinc: one arrival, made when all of this thread's earlier cp.async copies
 *  have completed (noinc: it counts as one of the expected arrivals, not an extra one). */
static __device__ __forceinline__ void barrier_arrive_after_copies(uint64_t *bar)
{
    const unsigned s = (unsigned)__cvta_generic_to_shared(bar);
    asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];\n" ::"r"(s) : "memory");
}

/** Wait until the phase of parity @p parity of the barrier at @p bar has completed (acquire). */
static __device__ __forceinline__ void barrier_wait(uint64_t *bar, unsigned parity)
{
    const unsigned s = (unsigned)__cvta_generic_to_shared(bar);
    unsigned done = 0;
    while (!done)
        asm volatile("{\n .reg .pred p;\n mbarrier.test_wait.parity.shared.b64 p, [%1], %2;\n"
                     " selp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done) : "r"(s), "r"(parity) : "memory");
}

#endif
