/**
 * @file
 * @brief What the CPU offers the CPU steps: vector instruction sets and cache sizes.
 */
#ifndef GEMM_CPU_INFO_H
#define GEMM_CPU_INFO_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The vector instruction sets the CPU steps have micro-kernels for, narrowest first. */
typedef enum {
    ISA_PORTABLE, /**< plain C, vectorized (or not) by the compiler for baseline x86-64 */
    ISA_AVX2,     /**< AVX2 + FMA: 4 doubles per register, 16 registers */
    ISA_AVX512    /**< AVX-512F: 8 doubles per register, 32 registers */
} cpu_isa;

/** The widest instruction set this CPU (and OS) supports. */
cpu_isa cpu_best_isa(void);

/** 1 if the CPU has PREFETCHW (prefetch a line for writing: CPUID 0x80000001, ECX bit 8), else 0. */
int cpu_has_prefetchw(void);

/** "avx512", "avx2", "c". */
const char *cpu_isa_name(cpu_isa isa);

/** Parse "avx512" / "avx2" / "c"; returns 0 and sets @p out, or -1 for any other name. */
int cpu_isa_parse(const char *name, cpu_isa *out);

/** Data cache sizes in bytes (L1d and L2 per core, L3 as reported, usually shared). */
struct cpu_caches {
    long l1d; /**< L1 data cache */
    long l2;  /**< L2 cache */
    long l3;  /**< L3 cache (0 if none) */
};

/**
 * The cache sizes, read at run time from sysconf, then /sys; where neither
 * answers, typical values of a current x86 core (32 KiB, 1 MiB, 32 MiB).
 */
struct cpu_caches cpu_cache_sizes(void);

/** The CPU's model name from /proc/cpuinfo ("CPU" where there is none), commas replaced (it goes into CSV). */
void cpu_model_name(char *out, size_t len);

#ifdef __cplusplus
}
#endif

#endif
