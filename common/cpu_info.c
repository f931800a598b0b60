/**
 * @file
 * @brief What the CPU offers the CPU steps: vector instruction sets and cache sizes.
 */
#define _GNU_SOURCE /* sysconf(_SC_LEVEL1_DCACHE_SIZE, ...) */
#include "cpu_info.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

cpu_isa cpu_best_isa(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        return ISA_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return ISA_AVX2;
#endif
    return ISA_PORTABLE;
}

int cpu_has_prefetchw(void)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    if (__get_cpuid(0x80000001u, &a, &b, &c, &d))
        return (c & (1u << 8)) != 0; /* PRFCHW ("3dnowprefetch" in /proc/cpuinfo) */
#endif
    return 0;
}

const char *cpu_isa_name(cpu_isa isa)
{
    return isa == ISA_AVX512 ? "avx512" : (isa == ISA_AVX2 ? "avx2" : "c");
}

int cpu_isa_parse(const char *name, cpu_isa *out)
{
    const cpu_isa all[] = {ISA_PORTABLE, ISA_AVX2, ISA_AVX512};
    for (int t = 0; t < 3; ++t)
        if (strcmp(name, cpu_isa_name(all[t])) == 0) {
            *out = all[t];
            return 0;
        }
    return -1;
}

/* Size of cache `index` of cpu0 from /sys ("48K", "2048K", "32M"), or 0. */
static long sys_cache_size(int index)
{
    char path[96], text[32];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", index);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return 0;
    long v = 0;
    char unit = 0;
    if (fgets(text, sizeof text, f) != NULL && sscanf(text, "%ld%c", &v, &unit) >= 1)
        v *= unit == 'K' ? 1024L : (unit == 'M' ? 1024L * 1024L : 1L);
    fclose(f);
    return v;
}

struct cpu_caches cpu_cache_sizes(void)
{
    /* /sys lists index0 = L1d, index1 = L1i, index2 = L2, index3 = L3 on x86 Linux; it is
     * what the kernel found, where sysconf (from CPUID) can be what a hypervisor invented. */
    struct cpu_caches c = {sys_cache_size(0), sys_cache_size(2), sys_cache_size(3)};
#ifdef _SC_LEVEL1_DCACHE_SIZE
    if (c.l1d <= 0)
        c.l1d = sysconf(_SC_LEVEL1_DCACHE_SIZE);
    if (c.l2 <= 0)
        c.l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    if (c.l3 <= 0)
        c.l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
    if (c.l1d <= 0)
        c.l1d = 32L * 1024;
    if (c.l2 <= 0)
        c.l2 = 1024L * 1024;
    if (c.l3 < 0)
        c.l3 = 0;
    return c;
}

void cpu_model_name(char *out, size_t len)
{
    snprintf(out, len, "CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f == NULL)
        return;
    char line[256];
    while (fgets(line, sizeof line, f) != NULL) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon != NULL) {
            snprintf(out, len, "%s", colon + 2);
            out[strcspn(out, "\n")] = '\0';
            break;
        }
    }
    fclose(f);
    for (char *c = out; *c; ++c) /* the name goes into a CSV field */
        if (*c == ',')
            *c = ' ';
}
