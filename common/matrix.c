/**
 * @file
 * @brief Host matrices: allocation, seeded random fill, precision rounding.
 */
#define _GNU_SOURCE /* posix_memalign, MAP_ANONYMOUS, REG_ERR */
#include "matrix.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "cli.h"
#include "error.h"

/* Host buffers are aligned for 512-bit vector loads and cache lines. */
enum { HOST_ALIGNMENT = 64 };

/* bfloat16: the top 16 bits of a float. Its exponent range is float's; it keeps 8 significant bits. */
enum { BF16_SHIFT = 16 };                 /* bits below a bfloat16 in its float */
static const uint32_t BF16_QUIET_NAN = 0x7FC0u;

size_t precision_bytes(precision_t p)
{
    switch (p) {
    case PRECISION_FP64: return sizeof(double);
    case PRECISION_BF16: return sizeof(bf16_bits);
    default: return sizeof(float);
    }
}

const char *precision_name(precision_t p)
{
    switch (p) {
    case PRECISION_FP64: return "FP64";
    case PRECISION_BF16: return "BF16";
    default: return "FP32";
    }
}

double precision_unit_roundoff(precision_t p)
{
    /* Round-to-nearest unit round-off of the accumulation: half the gap between 1 and the next number.
     * BF16 steps accumulate in float. */
    return p == PRECISION_FP64 ? ldexp(1.0, -53) : ldexp(1.0, -24);
}

double precision_output_roundoff(precision_t p)
{
    /* BF16 keeps 8 significant bits (7 stored): half the gap after 1 is 2^-8. */
    return p == PRECISION_BF16 ? ldexp(1.0, -8) : precision_unit_roundoff(p);
}

double precision_round(precision_t p, double x)
{
    return p == PRECISION_FP64 ? x : (double)(float)x; /* BF16 steps take float scalars */
}

double precision_max(precision_t p)
{
    switch (p) {
    case PRECISION_FP64: return DBL_MAX;
    case PRECISION_BF16: return ldexp(2.0 - ldexp(1.0, -7), 127); /* 0x7F7F: float's exponent, 7 bits */
    default: return FLT_MAX;
    }
}

double precision_tiniest(precision_t p)
{
    /* The gap between 0 and the smallest subnormal: 2^-1074 in FP64, 2^-149 in FP32, 2^-133 in BF16. */
    switch (p) {
    case PRECISION_FP64: return ldexp(1.0, -1074);
    case PRECISION_BF16: return ldexp(1.0, -133);
    default: return ldexp(1.0, -149);
    }
}

bf16_bits bf16_from_float(float x)
{
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    if (isnan(x))
        return (bf16_bits)BF16_QUIET_NAN;
    /* Round to nearest, ties to even: add half of the dropped part's range, less one unless the kept
     * part is odd, and truncate. A carry into the exponent is the right answer (up to infinity). */
    uint32_t kept_is_odd = (bits >> BF16_SHIFT) & 1u;
    bits += 0x7FFFu + kept_is_odd;
    return (bf16_bits)(bits >> BF16_SHIFT);
}

float bf16_to_float(bf16_bits h)
{
    uint32_t bits = (uint32_t)h << BF16_SHIFT; /* exact: every bfloat16 is a float */
    float x;
    memcpy(&x, &bits, sizeof x);
    return x;
}

void *host_alloc(size_t bytes, const char *what)
{
    /* Exactly the bytes asked for (posix_memalign takes any size, unlike aligned_alloc): an access one
     * element past the end lands outside the block, where AddressSanitizer sees it. Never 0 bytes. */
    void *p = NULL;
    if (posix_memalign(&p, HOST_ALIGNMENT, bytes > 0 ? bytes : 1) != 0)
        die(EXIT_RUNTIME, "out of host memory allocating %s (%zu bytes)", what, bytes);
    return p;
}

void host_free(void *p)
{
    free(p);
}

/* ---------------------------------------------------------------- matrices between guard pages */

static const char *volatile running; /* what runs now (matrix_guard_running), NULL: the harness */

/* Under AddressSanitizer (make sanitize) the heap's redzones are checked to the byte, and ASan reports the
 * access with its stack: the plain allocation is the better guard there, and ASan keeps its own SIGSEGV
 * handler. */
#if defined(__SANITIZE_ADDRESS__)
static const int GUARD_PAGES = 0;
#else
static const int GUARD_PAGES = 1;
#endif

/* GUARDED_MAX: the matrices alive at once, at most (main() holds A, B and C0, a backend its C, step 23's
 * harness four). GUARD_BYTES: the size of each guard region (whole pages, at least one): address space only,
 * never memory, so more than a page costs nothing and lets a read a column or more away from a matrix still
 * land on its own guard. (One enum: Doxygen 1.9 numbers anonymous enums with the anonymous namespaces of the
 * .cu files, and one more shifted step 22's off its members.) */
enum { GUARDED_MAX = 32, GUARD_BYTES = 1 << 16 };

/** A matrix of matrix_alloc, for matrix_free and for the fault handler (which only reads them). */
struct guarded {
    char *base;       /**< the mapping: leading guard, the matrix's pages, trailing guard (NULL: a free slot) */
    size_t length;    /**< of the whole mapping */
    char *start;      /**< the matrix's first byte */
    size_t bytes;     /**< its size: start + bytes is the trailing guard */
    const char *what; /**< "A", "B", ... (a string literal of the caller's) */
};
static struct guarded guarded[GUARDED_MAX];

static size_t page_size(void)
{
    static size_t page;
    if (page == 0) {
        const long p = sysconf(_SC_PAGESIZE);
        page = p > 0 ? (size_t)p : 4096;
    }
    return page;
}

/* The guard regions' size: GUARD_BYTES rounded up to whole pages. */
static size_t guard_size(void)
{
    const size_t page = page_size();
    return (GUARD_BYTES + page - 1) / page * page;
}

void *matrix_alloc(size_t bytes, const char *what)
{
    if (!GUARD_PAGES)
        return host_alloc(bytes, what);
    const size_t page = page_size(), guard = guard_size(), size = bytes > 0 ? bytes : 1;
    if (size > SIZE_MAX - 2 * guard - page)
        die(EXIT_RUNTIME, "out of host memory allocating %s (%zu bytes)", what, bytes);
    const size_t inner = (size + page - 1) / page * page, length = guard + inner + guard;
    int slot = 0;
    while (slot < GUARDED_MAX && guarded[slot].base != NULL)
        ++slot;
    if (slot == GUARDED_MAX) /* a harness that forgot to free: a bug, said in one line */
        die(EXIT_RUNTIME, "allocating %s: more than %d guarded matrices at once", what, GUARDED_MAX);
    char *base = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED)
        die(EXIT_RUNTIME, "out of host memory allocating %s (%zu bytes, between guard pages): mmap: %s", what, bytes,
            strerror(errno));
    char *trailing = base + guard + inner;
    if (mprotect(base, guard, PROT_NONE) != 0 || mprotect(trailing, guard, PROT_NONE) != 0)
        die(EXIT_RUNTIME, "cannot make the guard pages of %s (%zu bytes): mprotect: %s", what, bytes, strerror(errno));
    char *start = trailing - size;
    memset(base + guard, 0xFF, (size_t)(start - (base + guard))); /* the slack: NaN in FP64, FP32 and BF16 */
    guarded[slot] = (struct guarded){base, length, start, size, what};
    return start;
}

void matrix_free(void *p)
{
    if (!GUARD_PAGES) {
        host_free(p);
        return;
    }
    if (p == NULL)
        return;
    for (int slot = 0; slot < GUARDED_MAX; ++slot)
        if (guarded[slot].start == p) {
            char *base = guarded[slot].base;
            const size_t length = guarded[slot].length;
            guarded[slot].base = NULL;
            guarded[slot].start = NULL;
            if (munmap(base, length) != 0)
                die(EXIT_RUNTIME, "freeing %s: munmap: %s", guarded[slot].what, strerror(errno));
            return;
        }
    die(EXIT_RUNTIME, "matrix_free: %p is not a matrix from matrix_alloc", p);
}

/** The fault's message, built without stdio (not async-signal-safe): text and decimal numbers. */
struct line {
    char text[512]; /**< the message so far */
    size_t len;     /**< its length */
};

static void put_text(struct line *l, const char *s)
{
    while (*s != '\0' && l->len < sizeof l->text - 1)
        l->text[l->len++] = *s++;
}

static void put_number(struct line *l, size_t v)
{
    char digits[24];
    int n = 0;
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v > 0);
    while (n > 0 && l->len < sizeof l->text - 1)
        l->text[l->len++] = digits[--n];
}

/* Did the faulting access write? (x86-64 Linux: bit 1 of the page fault's error code.) -1: not known. */
static int fault_was_write(const void *context)
{
#if defined(__x86_64__) && defined(__linux__) && defined(REG_ERR)
    const ucontext_t *uc = context;
    return (uc->uc_mcontext.gregs[REG_ERR] & 2) != 0;
#else
    (void)context;
    return -1;
#endif
}

static void on_fault(int sig, siginfo_t *info, void *context)
{
    const char *addr = info->si_addr;
    for (int slot = 0; slot < GUARDED_MAX; ++slot) {
        const struct guarded *g = &guarded[slot];
        if (g->base == NULL || addr < g->base || addr >= g->base + g->length)
            continue;
        const int before = addr < g->base + guard_size(), after = addr >= g->start + g->bytes;
        if (!before && !after)
            break; /* inside the matrix or its slack: not a guard page's fault */
        const int wrote = fault_was_write(context);
        struct line l = {.len = 0};
        put_text(&l, error_prog());
        put_text(&l, ": error: ");
        put_text(&l, wrote == 1 ? "a write" : wrote == 0 ? "a read" : "an access");
        put_text(&l, " outside a matrix (guard page): ");
        put_text(&l, running != NULL ? running : "the harness");
        put_text(&l, wrote == 1 ? " wrote " : wrote == 0 ? " read " : " touched ");
        put_text(&l, after ? "past the end of " : "before the start of ");
        put_text(&l, g->what);
        put_text(&l, " (byte ");
        if (after) {
            put_number(&l, (size_t)(addr - g->start));
        } else {
            put_text(&l, "-");
            put_number(&l, (size_t)(g->start - addr));
        }
        put_text(&l, " of a ");
        put_number(&l, g->bytes);
        put_text(&l, "-byte matrix); exit 1\n");
        /* The table's rows so far first (stdio is not async-signal-safe, but the run ends here, and the
         * fault came from a kernel, not from inside stdio). */
        fflush(stdout);
        ssize_t unused = write(STDERR_FILENO, l.text, l.len);
        (void)unused;
        _exit(EXIT_WRONG);
    }
    /* Not a guard page: the default action (a crash, with its core), as if this handler were not there. */
    signal(sig, SIG_DFL);
}

void matrix_guard_install(void)
{
    if (!GUARD_PAGES)
        return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSEGV, &sa, NULL) != 0)
        die(EXIT_RUNTIME, "sigaction(SIGSEGV): %s", strerror(errno));
}

void matrix_guard_running(const char *who)
{
    running = who;
}

/* splitmix64: a tiny, fast, well-mixed generator; good enough for test data. */
static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [-1, 1): the top 53 bits as a fraction in [0, 1), scaled and shifted. */
static double uniform_pm1(uint64_t *state)
{
    return (double)(splitmix64(state) >> 11) * 0x1.0p-53 * 2.0 - 1.0;
}

static void store(precision_t p, void *X, size_t idx, double v)
{
    if (p == PRECISION_FP64)
        ((double *)X)[idx] = v;
    else if (p == PRECISION_BF16) /* double -> float -> bfloat16: float keeps every bit the rounding needs */
        ((bf16_bits *)X)[idx] = bf16_from_float((float)v);
    else
        ((float *)X)[idx] = (float)v;
}

void matrix_fill_random(precision_t p, void *X, int rows, int cols, long long ld,
                        uint64_t seed, int shape_index, matrix_id id, double pad)
{
    /* One independent stream per (seed, shape, matrix): mix them into the start state. */
    uint64_t state = seed;
    state ^= splitmix64(&state) + (uint64_t)shape_index * 0xD1B54A32D192ED03ull;
    state ^= splitmix64(&state) + (uint64_t)id * 0x8CB92BA72F3D8DD7ull;
    for (int j = 0; j < cols; ++j) {
        size_t col = (size_t)j * (size_t)ld;
        for (int i = 0; i < rows; ++i)
            store(p, X, col + (size_t)i, uniform_pm1(&state));
        for (long long i = rows; i < ld; ++i)
            store(p, X, col + (size_t)i, pad);
    }
}

void matrix_to_double(precision_t p, const void *src, double *dst, size_t count)
{
    if (p == PRECISION_FP64) {
        memcpy(dst, src, count * sizeof(double));
        return;
    }
    if (p == PRECISION_BF16) {
        const bf16_bits *h = (const bf16_bits *)src;
        for (size_t i = 0; i < count; ++i)
            dst[i] = bf16_to_float(h[i]);
        return;
    }
    const float *s = (const float *)src;
    for (size_t i = 0; i < count; ++i)
        dst[i] = s[i];
}
