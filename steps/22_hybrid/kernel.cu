/**
 * @file
 * @brief Step 22: CPU and GPU together on matrices in host memory; transfers overlapped; the split measured.
 *
 * The user hands over A, B and C in ordinary (pageable) host memory and wants C back there.
 * The GPU takes the first `ng` columns of C, the CPU (step 21, linked as it is: common/node.h)
 * the other N - ng, at the same time. Both need all of A; each needs only its own columns of
 * B and C, so the columns are the natural cut:
 *
 *        C = [ C_gpu | C_cpu ]  =  A * [ B_gpu | B_cpu ]       T(x) = max(T_gpu(x), T_cpu(1 - x))
 *
 * The GPU side is a pipeline over panels of `panel` columns and three CUDA streams, one per
 * engine: copy-in (host to device), the SMs, copy-out (device to host). The DMA engines read
 * only pinned (page-locked) memory, so every transfer goes through a pinned staging slot; the
 * host copies between the user's pageable arrays and the slots on `stagers` threads.
 *
 *   host     stage B(p+1) | drain C(p-2) | stage B(p+2) | drain C(p-1) ...
 *   copy-in  B(p+1)       |              | B(p+2)
 *   SMs      C(p) = A B(p)                | C(p+1) = A B(p+1)
 *   copy-out C(p-1)                       | C(p)
 *
 * A goes in chunks of `panel` columns, and every panel needs all of it. `order=panels` (the default) is
 * the pipeline above: panel 0 alone takes A's chunks, each multiplied into it as it lands. The lead
 * panels (`order=lead`, a setting): while A's chunks arrive, the first L panels of B come in between them
 * (panel c just before chunk c), each into a device buffer of its own, and every chunk of A, once landed,
 * is multiplied into every panel present (C(j) = A(:,k0..k1) B(k0..k1,j) + C(j); a panel that lands after
 * some chunks first catches up on them in one product). The SMs so have L panels of work while A
 * arrives, not one panel's thin slices. After A, the other panels flow as above through the L + 1
 * device buffers: panel p waits until panel p - (L + 1) has left its buffer. `order=panels` is L = 1.
 * `overlap=0` runs the same work on one stream, each panel's stages one after the other (all of A, then
 * one product per panel), for the lesson's comparison. `order=blocks` (blocks.h) brings A in by rows and B
 * by panels, in turn, and multiplies each block of C as soon as its row chunk and its panel have landed.
 *
 * Pinning: `pin=stage` (the default) copies through the pinned slots; `pin=register` page-locks the
 * caller's A and the GPU's columns of B and C in place for the call (cudaHostRegister, released at its
 * end: both inside the call's time, as a user pays them) and the copy engines read and write them
 * straight, with 2D copies over the leading dimensions: no host copies. Where a registration fails
 * (memory already registered, over `ulimit -l`, not host memory) the call stages, and says so once.
 *
 * The split: the first call at a shape probes the GPU side at two widths (its time is
 * a + b * columns: a is A's transfer and the pipeline's fill) and the CPU side on a slice
 * (c per column), into scratch memory, and gives the GPU the ng that makes both finish
 * together: a + b * ng = c * (N - ng). `split=X` forces ng = X * N.
 *
 * Settings (`--param`): gpu=own|cublas (the FP64 tensor-core kernel of tc_dgemm.cu, or cuBLAS
 * DGEMM), split=X (0..1), panel=W, overlap=0|1, order=panels|lead|blocks, lead=L (forces order=lead's L, and
 * with no order= given selects order=lead; without it: the rule in lead_rule), pin=stage|register,
 * gpu_sms=N (own kernel on N SMs: a smaller GPU), stagers=T, log=FILE (each call: ng, both sides' times,
 * L, the CPU side's threads, the pinning), timeline=FILE (the last call's copies, kernels and host work,
 * for the lesson's picture).
 */
#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <unistd.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "cli.h"
#include "error.h"
#include "gpu.h"
#include "matrix.h"
#include "node.h"
#include "step.h"
#include "tc_dgemm.h"
#include "timing.h"

enum {
    SLOTS = 2,                  /* pinned slots for C coming back */
    IN_SLOTS = 2,               /* pinned slots for what goes in */
    MAX_LEAD = 32,              /* lead panels (order=lead's L) at most */
    MAX_BUFFERS = MAX_LEAD + 1, /* device panel buffers: the L lead panels and one more */
    FIRST_LEAD = 4,             /* L until a call has measured the rates that lead_rule needs */
    OUTS_PER_PANEL = 2,         /* panels' C sent back per panel brought in, at most: the lead panels'
                                   C, all done at once when A is complete, so catches up */
    PANELS = 16,                /* the default panel width aims at this many panels ... */
    MIN_PANEL = 256,            /* ... but no narrower than this */
    MAX_PANEL = 2048,           /* ... nor wider */
    PANEL_ALIGN = 128,          /* the own kernel's tile */
    TIMELINE_EVENTS = 4096      /* GPU events of one call's timeline */
};
/* The L + 1 panel buffers take at most this share of the device memory free beside A: the rest is for
 * cuBLAS's workspace, the harness's own buffers (its bound: A, B and C on the device) and other processes. */
static const double LEAD_MEMORY_SHARE = 0.5;

/* ------------------------------------------------------------------ settings */
static struct {
    int own;              /* 1: tc_dgemm; 0: cuBLAS DGEMM */
    double split;         /* GPU share of the columns; < 0: probed */
    int panel;            /* columns per panel; 0: from N */
    int overlap;          /* 1: three streams; 0: one stream, stage after stage */
    int order_lead;       /* 1: order=lead (L lead panels); 0: order=panels (L = 1) */
    int order_blocks;     /* 1: order=blocks (blocks.h: A by rows, B by panels, C in blocks) */
    int lead;             /* L forced by lead=L; 0: lead_rule's */
    int pin_register;     /* 1: pin=register (the caller's arrays page-locked in place); 0: pin=stage */
    int sms;              /* own kernel on this many SMs (0: all) */
    int stagers;          /* host threads for pageable <-> pinned copies while the CPU side computes */
    int stagers_alone;    /* ... and while it does not (no columns, or the probe) */
    int cpu_busy;         /* the CPU side is computing now */
    int cpu_threads;      /* threads of the CPU side */
    int gpu;              /* 1: a CUDA device is present */
    const char *log_path, *timeline_path;
} cfg = {1, -1.0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, NULL};
/* The default schedule is order=panels (order_lead 0), as measured: on an H100 and its 16-core host, five
 * turns of each setting, each run in its own process (steps/22_hybrid/turns.sh; the medians and their
 * turns in plots/data/h100/step22_turns_*.csv), the lead panels lost at 16384^3, where lead_rule chose
 * L = 12 to 16 of the 16 panels: 293.1 ms against order=panels' 226.5 ms (0.526 and 0.682 of the bound),
 * order=panels faster in 5 of 5 turns. At 8192^3 the rule chose L = 1, the same schedule, and the two tie
 * (66.0 and 64.3 ms, order=panels faster in 3 of 5 turns). On the H200 and its host (plots/data/h200/
 * step22_turns_*.csv) the same: 209.3 ms against the lead panels' 268.4 at 16384^3 (0.744 and 0.582 of
 * the bound), 38.7 against 50.6 at 8192^3. order=lead stays a setting (lesson 22's exercise 4). */

/* ------------------------------------------------------------------ GPU state, kept across calls */
static struct {
    cudaStream_t in, comp, out;                 /* one per engine (all the same stream with overlap=0) */
    cublasHandle_t blas;
    double *dA, *dB[MAX_BUFFERS], *dC[MAX_BUFFERS];
    double *pin_in[IN_SLOTS], *pin_out[SLOTS];
    size_t a_len, b_len, c_len, pin_len;        /* doubles: dA; each dB and each dC; each pinned slot */
    int buffers;                                /* device panel buffers held: dB[0..buffers), dC[0..buffers) */
    cudaEvent_t in_free[IN_SLOTS];              /* the copy out of this pinned-in slot has finished */
    cudaEvent_t out_full[SLOTS];                /* this pinned-out slot holds its panel's C */
    cudaEvent_t b_free[MAX_BUFFERS];            /* the last product that read this device buffer has finished */
    cudaEvent_t c_back[MAX_BUFFERS];            /* this buffer's C has left the device: dC may be written */
    cudaEvent_t inputs[MAX_BUFFERS];            /* this buffer's B (and C) are on the device */
    cudaEvent_t chunk;                          /* the last chunk of A sent is on the device */
    cudaEvent_t lead_t0, lead_t1;               /* timed: the lead's inputs (A and L panels) arriving */
    cudaEvent_t gemm_t0, gemm_t1;               /* timed: one later panel's product */
    int next_in;                                /* the pinned-in slot the next copy uses */
} g;

/** What lead_rule needs, measured by the calls with overlap (the latest that measured): how fast the
 * inputs arrived during the lead (the host's staging and the copy engine together), how fast the SMs
 * multiplied one later panel; and L once chosen from rates measured at a GPU shape, kept for the later
 * calls at that shape (so that a call's L does not follow the noise of the one before). */
static struct lead_rates {
    double in_bytes_per_s;                      /**< the lead's inputs' arrival rate (0: not measured yet) */
    double flop_per_s;                          /**< one later panel's product rate (0: not measured yet) */
    int m, n, k;                                /* the GPU shape they were measured at */
    int lead, lead_m, lead_n, lead_k;           /* L fixed for this GPU shape (lead 0: none yet) */
} rates;

/** What the last GPU side did, for the log: its L and whether it ran on the arrays pinned in place. */
static struct last_call {
    int lead;     /**< L */
    int in_place; /**< 1 where the arrays were page-locked in place */
} last = {0, 0};

/* ------------------------------------------------------------------ timeline (optional) */
/** The rows of the timeline picture: the three engines, the host's copies, the CPU side, the page-locking. */
enum lane { LANE_COPY_IN, LANE_SMS, LANE_COPY_OUT, LANE_HOST, LANE_CPU, LANE_REGISTER, LANES };
static const char *const LANE_NAME[LANES] = {"copy-in", "SMs", "copy-out", "host-staging", "CPU-GEMM", "host-register"};
static struct {
    int on, used;
    cudaEvent_t start, ev[TIMELINE_EVENTS];
    struct { int lane, panel, gpu; double t0, t1; int e0, e1; } span[TIMELINE_EVENTS / 2];
    int spans;
    double host_t0;
} tl;

/** Marks the start of a GPU span on @p s; returns its index (or -1 with no timeline or no events left). */
static int span_begin(enum lane lane, int panel, cudaStream_t s)
{
    if (!tl.on || tl.used + 2 > TIMELINE_EVENTS)
        return -1;
    const int i = tl.spans++;
    tl.span[i].lane = lane, tl.span[i].panel = panel, tl.span[i].gpu = 1;
    tl.span[i].e0 = tl.used++, tl.span[i].e1 = tl.used++;
    cuda_check(cudaEventRecord(tl.ev[tl.span[i].e0], s), "cudaEventRecord (timeline)");
    return i;
}

static void span_end(int i, cudaStream_t s)
{
    if (i >= 0)
        cuda_check(cudaEventRecord(tl.ev[tl.span[i].e1], s), "cudaEventRecord (timeline)");
}

/** A span of host work, from host clock readings. */
static void host_span(enum lane lane, int panel, double t0, double t1)
{
    if (!tl.on || tl.spans >= TIMELINE_EVENTS / 2)
        return;
    const int i = tl.spans++;
    tl.span[i].lane = lane, tl.span[i].panel = panel, tl.span[i].gpu = 0;
    tl.span[i].t0 = 1e3 * (t0 - tl.host_t0), tl.span[i].t1 = 1e3 * (t1 - tl.host_t0);
}

/** Writes the last call's spans (lane, panel, start and end in ms from the call's start) to the file. */
static void timeline_write(void)
{
    FILE *f = fopen(cfg.timeline_path, "w");
    if (f == NULL)
        die(EXIT_RUNTIME, "cannot write the timeline to '%s'", cfg.timeline_path);
    fprintf(f, "lane,panel,start_ms,end_ms\n");
    for (int i = 0; i < tl.spans; ++i) {
        double t0 = tl.span[i].t0, t1 = tl.span[i].t1;
        if (tl.span[i].gpu) {
            float a, b;
            cuda_check(cudaEventElapsedTime(&a, tl.start, tl.ev[tl.span[i].e0]), "cudaEventElapsedTime");
            cuda_check(cudaEventElapsedTime(&b, tl.start, tl.ev[tl.span[i].e1]), "cudaEventElapsedTime");
            t0 = a, t1 = b;
        }
        fprintf(f, "%s,%d,%.3f,%.3f\n", LANE_NAME[tl.span[i].lane], tl.span[i].panel, t0, t1);
    }
    if (fclose(f) != 0)
        die(EXIT_RUNTIME, "cannot write the timeline to '%s'", cfg.timeline_path);
}

/* ------------------------------------------------------------------ host copies */
/** dst[0..n) = src[0..n) with non-temporal (streaming) stores where the CPU has them. An ordinary store
 *  first reads the line it writes into the cache (read for ownership): a copy then moves three bytes
 *  through memory for each byte copied. A streaming store writes the line without reading it: two.
 *  (glibc's memcpy streams only copies larger than most of L3; a column is far smaller.) */
static void stream_copy(double *dst, const double *src, size_t n)
{
#if defined(__SSE2__)
    size_t i = 0;
    for (; i < n && ((uintptr_t)&dst[i] % 16) != 0; ++i) /* to a 16-byte boundary */
        dst[i] = src[i];
    for (; i + 2 <= n; i += 2)
        _mm_stream_pd(&dst[i], _mm_loadu_pd(&src[i]));
    for (; i < n; ++i)
        dst[i] = src[i];
#else
    memcpy(dst, src, n * sizeof(double));
#endif
}

/** dst (ld dld) = src (ld sld), rows x cols, the columns split over the staging threads. */
static void copy_columns(double *dst, long dld, const double *src, long sld, int rows, int cols)
{
#pragma omp parallel num_threads(cfg.cpu_busy ? cfg.stagers : cfg.stagers_alone)
    {
#pragma omp for schedule(static)
        for (int j = 0; j < cols; ++j)
            stream_copy(&dst[(size_t)j * dld], &src[(size_t)j * sld], (size_t)rows);
#if defined(__SSE2__)
        _mm_sfence(); /* streaming stores are weakly ordered: make them visible before the DMA reads them */
#endif
    }
}

/** Grows a device buffer (its contents are not kept). */
static void device_grow(double **p, size_t *have, size_t need, const char *what)
{
    if (*have >= need)
        return;
    if (*p != NULL)
        cuda_check(cudaFree(*p), "cudaFree");
    cuda_check(cudaMalloc((void **)p, need * sizeof(double)), what);
    *have = need;
}

/** Device panel buffers, kept across calls: @p count of them, each a B panel of @p b_len doubles and a C
 *  panel of @p c_len. Held buffers that are too few or too small are all freed, and exactly these allocated
 *  (lead_fit counted the held ones as free). */
static void device_panels(int count, size_t b_len, size_t c_len)
{
    if (g.buffers >= count && g.b_len >= b_len && g.c_len >= c_len)
        return;
    for (int i = 0; i < g.buffers; ++i) {
        cuda_check(cudaFree(g.dB[i]), "cudaFree");
        cuda_check(cudaFree(g.dC[i]), "cudaFree");
        g.dB[i] = g.dC[i] = NULL;
    }
    g.buffers = 0; /* (so that a failed allocation below leaves nothing counted twice) */
    for (int i = 0; i < count; ++i) {
        cuda_check(cudaMalloc((void **)&g.dB[i], b_len * sizeof(double)), "cudaMalloc (B panel)");
        cuda_check(cudaMalloc((void **)&g.dC[i], c_len * sizeof(double)), "cudaMalloc (C panel)");
        g.buffers = i + 1;
    }
    g.b_len = b_len, g.c_len = c_len;
}

/** The pinned staging slots (two in, two out) of @p len doubles each, kept across calls. */
static void pinned_slots(size_t len)
{
    if (g.pin_len >= len)
        return;
    for (int s = 0; s < SLOTS; ++s) {
        if (g.pin_len > 0)
            cuda_check(cudaFreeHost(g.pin_out[s]), "cudaFreeHost");
        cuda_check(cudaMallocHost((void **)&g.pin_out[s], len * sizeof(double)), "cudaMallocHost (C out)");
    }
    for (int s = 0; s < IN_SLOTS; ++s) {
        if (g.pin_len > 0)
            cuda_check(cudaFreeHost(g.pin_in[s]), "cudaFreeHost");
        cuda_check(cudaMallocHost((void **)&g.pin_in[s], len * sizeof(double)), "cudaMallocHost (staging)");
    }
    g.pin_len = len;
}

/** Creates @p n events (without timing). */
static void events(cudaEvent_t *e, int n)
{
    for (int i = 0; i < n; ++i)
        cuda_check(cudaEventCreateWithFlags(&e[i], cudaEventDisableTiming), "cudaEventCreate");
}

/** Streams, events and the cuBLAS handle, once. */
static void gpu_setup(void)
{
    static int done;
    if (done)
        return;
    done = 1;
    cuda_check(cudaStreamCreateWithFlags(&g.in, cudaStreamNonBlocking), "cudaStreamCreate");
    cuda_check(cudaStreamCreateWithFlags(&g.comp, cudaStreamNonBlocking), "cudaStreamCreate");
    cuda_check(cudaStreamCreateWithFlags(&g.out, cudaStreamNonBlocking), "cudaStreamCreate");
    events(g.in_free, IN_SLOTS);
    events(g.out_full, SLOTS);
    events(g.b_free, MAX_BUFFERS);
    events(g.c_back, MAX_BUFFERS);
    events(g.inputs, MAX_BUFFERS);
    events(&g.chunk, 1);
    cudaEvent_t *timed[] = {&g.lead_t0, &g.lead_t1, &g.gemm_t0, &g.gemm_t1};
    for (int i = 0; i < 4; ++i)
        cuda_check(cudaEventCreate(timed[i]), "cudaEventCreate");
    cublas_check(cublasCreate(&g.blas), "cublasCreate");
    if (cfg.timeline_path != NULL) {
        cuda_check(cudaEventCreate(&tl.start), "cudaEventCreate");
        for (int e = 0; e < TIMELINE_EVENTS; ++e)
            cuda_check(cudaEventCreate(&tl.ev[e]), "cudaEventCreate");
    }
}

/* ------------------------------------------------------------------ one call of the GPU side */
/** One call of the GPU side: its operands, its panels and its schedule. */
struct plan {
    int m;                     /**< rows of C and of A */
    int n;                     /**< the GPU side's columns of C (C(:, 0..n-1) = alpha A B + beta C) */
    int k;                     /**< the inner dimension */
    double alpha;              /**< the scalars of the call */
    double beta;               /**< ... */
    const double *A;           /**< the caller's A (host memory) */
    const double *B;           /**< the caller's B, from the GPU side's first column */
    double *C;                 /**< the caller's C, from the GPU side's first column */
    int lda;                   /**< the leading dimensions of the call */
    int ldb;                   /**< ... */
    int ldc;                   /**< ... */
    int width;                 /**< columns per panel, and A's columns per chunk */
    int panels;                /**< panels of C's n columns */
    int chunks;                /**< chunks of A's k columns */
    int lead;                  /**< L: panels 0..L-1 come in between A's chunks */
    int buffers;               /**< device panel buffers: L + 1; panel p uses buffer p % buffers */
    int in_place;              /**< 1: the caller's arrays are page-locked (pin=register) and copied straight */
    int applied[MAX_LEAD];     /**< chunks of A multiplied into each lead panel so far: chunks 0..applied-1 */
    int next_out;              /**< the next panel whose C goes back (they go in panel order) */
    int timed_panel;           /**< the panel whose product is timed for lead_rule (-1: none) */
};

/** Panel @p p: its first column and width. */
static void panel_cols(const struct plan *pl, int p, int *j0, int *w)
{
    *j0 = p * pl->width;
    *w = pl->n - *j0 < pl->width ? pl->n - *j0 : pl->width;
}

/** rows x cols of a host block (leading dimension sld) to the device (dst, leading dimension dld) on the
 *  copy-in stream: straight from the caller's page-locked array, or through the next pinned slot. */
static void send(const struct plan *pl, const double *src, long sld, int rows, int cols, double *dst, long dld,
                 int panel)
{
    const size_t row_bytes = (size_t)rows * sizeof(double), dpitch = (size_t)dld * sizeof(double);
    if (pl->in_place) {
        const int sp = span_begin(LANE_COPY_IN, panel, g.in);
        cuda_check(cudaMemcpy2DAsync(dst, dpitch, src, (size_t)sld * sizeof(double), row_bytes, (size_t)cols,
                                     cudaMemcpyHostToDevice, g.in), "cudaMemcpy2DAsync (to the device)");
        span_end(sp, g.in);
        return;
    }
    const int s = g.next_in++ % IN_SLOTS;
    cuda_check(cudaEventSynchronize(g.in_free[s]), "cudaEventSynchronize"); /* the slot's last copy is done */
    const double t0 = wall_seconds();
    copy_columns(g.pin_in[s], rows, src, sld, rows, cols);
    host_span(LANE_HOST, panel, t0, wall_seconds());
    const int sp = span_begin(LANE_COPY_IN, panel, g.in);
    if (dld == rows) /* one contiguous block */
        cuda_check(cudaMemcpyAsync(dst, g.pin_in[s], row_bytes * cols, cudaMemcpyHostToDevice, g.in),
                   "cudaMemcpyAsync (to the device)");
    else
        cuda_check(cudaMemcpy2DAsync(dst, dpitch, g.pin_in[s], row_bytes, row_bytes, (size_t)cols,
                                     cudaMemcpyHostToDevice, g.in), "cudaMemcpy2DAsync (to the device)");
    span_end(sp, g.in);
    cuda_check(cudaEventRecord(g.in_free[s], g.in), "cudaEventRecord");
}

/** C = alpha*A*B + beta*C on the device, on the compute stream, with the chosen routine. */
static void device_gemm(int m, int n, int k, double alpha, const double *A, int lda, const double *B, int ldb,
                        double beta, double *C, int ldc, int panel)
{
    const int sp = span_begin(LANE_SMS, panel, g.comp);
    if (cfg.own) {
        tc_dgemm(m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, cfg.sms, g.comp);
    } else {
        cublas_check(cublasSetStream(g.blas, g.comp), "cublasSetStream");
        cublas_check(cublasDgemm(g.blas, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, A, lda, B, ldb, &beta, C, ldc),
                     "cublasDgemm");
    }
    span_end(sp, g.comp);
}

/** Panel @p p's B (and its C, where beta != 0 reads it) into the panel's device buffer, once the panel that
 *  used the buffer before has let go of it; the products into panel p wait for both. */
static void bring_in(const struct plan *pl, int p)
{
    const int b = p % pl->buffers;
    int j0, w;
    panel_cols(pl, p, &j0, &w);
    cuda_check(cudaStreamWaitEvent(g.in, g.b_free[b], 0), "cudaStreamWaitEvent"); /* dB[b] has been read */
    send(pl, &pl->B[(size_t)j0 * pl->ldb], pl->ldb, pl->k, w, g.dB[b], pl->k, p);
    if (pl->beta != 0.0) {
        cuda_check(cudaStreamWaitEvent(g.in, g.c_back[b], 0), "cudaStreamWaitEvent"); /* dC[b] has left */
        send(pl, &pl->C[(size_t)j0 * pl->ldc], pl->ldc, pl->m, w, g.dC[b], pl->m, p);
    }
    cuda_check(cudaEventRecord(g.inputs[b], g.in), "cudaEventRecord");
    cuda_check(cudaStreamWaitEvent(g.comp, g.inputs[b], 0), "cudaStreamWaitEvent");
    cuda_check(cudaStreamWaitEvent(g.comp, g.c_back[b], 0), "cudaStreamWaitEvent"); /* beta = 0 writes dC too */
}

/** A's chunk @p c (its columns c * width on) to the device; the compute stream waits for it. */
static void send_chunk(const struct plan *pl, int c)
{
    const int k0 = c * pl->width, kc = pl->k - k0 < pl->width ? pl->k - k0 : pl->width;
    send(pl, &pl->A[(size_t)k0 * pl->lda], pl->lda, pl->m, kc, &g.dA[(size_t)k0 * pl->m], pl->m, 0);
    cuda_check(cudaEventRecord(g.chunk, g.in), "cudaEventRecord");
    cuda_check(cudaStreamWaitEvent(g.comp, g.chunk, 0), "cudaStreamWaitEvent");
}

/** Panel @p p's product with A's chunks c0..c1-1, one GEMM over their columns k0..k1-1 of A (rows k0..k1-1 of
 *  the panel's B): C(p) = alpha A(:, k0..k1-1) B(k0..k1-1, p) + (c0 == 0 ? beta : 1) C(p). */
static void product(const struct plan *pl, int p, int c0, int c1)
{
    if (c1 <= c0)
        return;
    const int b = p % pl->buffers, k0 = c0 * pl->width, k1 = c1 * pl->width < pl->k ? c1 * pl->width : pl->k;
    int j0, w;
    panel_cols(pl, p, &j0, &w);
    device_gemm(pl->m, w, k1 - k0, pl->alpha, &g.dA[(size_t)k0 * pl->m], pl->m, &g.dB[b][k0], pl->k,
                c0 == 0 ? pl->beta : 1.0, g.dC[b], pl->m, p);
}

/** Waits for panel @p q's C in its pinned slot and copies it into the user's C. */
static void drain(const struct plan *pl, int q)
{
    int j0, w;
    panel_cols(pl, q, &j0, &w);
    cuda_check(cudaEventSynchronize(g.out_full[q % SLOTS]), "cudaEventSynchronize");
    const double t0 = wall_seconds();
    copy_columns(&pl->C[(size_t)j0 * pl->ldc], pl->ldc, g.pin_out[q % SLOTS], pl->m, pl->m, w);
    host_span(LANE_HOST, q, t0, wall_seconds());
}

/** Panel @p q's C back to the host once its last product is done: through pinned slot q % SLOTS, or
 *  straight into the caller's C where it is page-locked in place. */
static void copy_out(const struct plan *pl, int q)
{
    /* LAB-BEGIN: C(:, panel q) back to the host: staged, drain panel q-2 out of pinned slot q % SLOTS, then the copy-out of dC[q % pl->buffers] into the slot on g.out once the panel's last product is done (b_free), then record c_back (the buffer) and out_full (the slot); with overlap=0, drain q at once; in place (pl->in_place), a 2D copy straight into the caller's C */
    /* LAB-STUB: (void)pl, (void)q; */
    const int b = q % pl->buffers, o = q % SLOTS;
    int j0, w;
    panel_cols(pl, q, &j0, &w);
    if (!pl->in_place && q >= SLOTS && cfg.overlap)
        drain(pl, q - SLOTS); /* the slot's last panel, into the caller's C, before the slot is refilled */
    cuda_check(cudaStreamWaitEvent(g.out, g.b_free[b], 0), "cudaStreamWaitEvent");
    const int sp = span_begin(LANE_COPY_OUT, q, g.out);
    const size_t col_bytes = (size_t)pl->m * sizeof(double);
    if (pl->in_place)
        cuda_check(cudaMemcpy2DAsync(&pl->C[(size_t)j0 * pl->ldc], (size_t)pl->ldc * sizeof(double), g.dC[b],
                                     col_bytes, col_bytes, (size_t)w, cudaMemcpyDeviceToHost, g.out),
                   "cudaMemcpy2DAsync (to the host)");
    else
        cuda_check(cudaMemcpyAsync(g.pin_out[o], g.dC[b], col_bytes * w, cudaMemcpyDeviceToHost, g.out),
                   "cudaMemcpyAsync (to the host)");
    span_end(sp, g.out);
    cuda_check(cudaEventRecord(g.c_back[b], g.out), "cudaEventRecord");
    if (!pl->in_place) {
        cuda_check(cudaEventRecord(g.out_full[o], g.out), "cudaEventRecord");
        if (!cfg.overlap)
            drain(pl, q);
    }
    /* LAB-END */
}

/** Bytes of device memory this call's buffers may take beside an A of @p m x @p k: the memory free, plus the
 *  panel buffers the step holds (they are given back for this call's where they differ), plus its A where
 *  this call needs a larger one (device_grow keeps an A that is large enough), less this call's A. */
static double memory_beside_a(int m, int k)
{
    size_t free_bytes = 0, total = 0;
    cuda_check(cudaMemGetInfo(&free_bytes, &total), "cudaMemGetInfo");
    const int a_held = g.a_len >= (size_t)m * k; /* dA stays as it is */
    const double held = (double)g.buffers * (double)(g.b_len + g.c_len) + (a_held ? 0.0 : (double)g.a_len);
    return (double)free_bytes + sizeof(double) * (held - (a_held ? 0.0 : (double)m * k));
}

#include "blocks.h" /* order=blocks */

/* ------------------------------------------------------------------ the lead panels' count */
/** L for a GPU shape, from the rates measured in earlier calls.
 *
 * While A arrives (T_A), the SMs can multiply only what has landed into the panels present. With L
 * panels brought in between A's chunks they have L panel products to do (L t_panel), and the panels' own
 * inputs stretch A's arrival by L t_in. They keep busy through it when
 *
 *     L t_panel >= T_A + L t_in,   so   L = ceil(T_A / (t_panel - t_in)),
 *
 * and where t_panel <= t_in (a panel's inputs take longer to arrive than its product takes) no L keeps
 * them busy: the copies set the time in any order, and L = 1. T_A and t_in are the bytes of A and of one
 * panel's inputs (B, and C where beta != 0) over the rate at which an earlier call's lead inputs arrived
 * (the host's staging and the copy engine together: the slower sets it), t_panel a panel's flops over
 * the rate of an earlier call's timed panel product. Until a call has measured them, L = FIRST_LEAD.
 * More lead panels than the rule's do not make the SMs busier during A, and cost: the L lead panels all
 * finish when A is complete, and their C then leaves in a burst that the later panels must share the host
 * and the copy-out engine with. The caller bounds L further (lead_count).
 */
static int lead_rule(int m, int n, int k, double beta, int width)
{
    if (rates.lead > 0 && rates.lead_m == m && rates.lead_n == n && rates.lead_k == k)
        return rates.lead; /* fixed for this shape by an earlier call */
    if (rates.in_bytes_per_s <= 0.0 || rates.flop_per_s <= 0.0)
        return FIRST_LEAD;
    const double w = n < width ? n : width;
    const double t_a = sizeof(double) * (double)m * k / rates.in_bytes_per_s;
    const double t_in = sizeof(double) * w * (k + (beta != 0.0 ? m : 0)) / rates.in_bytes_per_s;
    const double t_panel = 2.0 * m * w * k / rates.flop_per_s;
    const double lead = t_panel > t_in ? ceil(t_a / (t_panel - t_in)) : 1.0;
    const int l = lead > (double)MAX_LEAD ? MAX_LEAD : (lead < 1.0 ? 1 : (int)lead);
    if (rates.m == m && rates.n == n && rates.k == k) /* measured at this shape: keep it */
        rates.lead = l, rates.lead_m = m, rates.lead_n = n, rates.lead_k = k;
    return l;
}

/** The most lead panels whose L + 1 buffers (a B and a C panel each) fit in LEAD_MEMORY_SHARE of the
 *  device memory free beside A (memory_beside_a). */
static int lead_fit(int m, int k, int width)
{
    const double buffer = sizeof(double) * (double)width * ((double)k + m);
    const double fit = floor(LEAD_MEMORY_SHARE * memory_beside_a(m, k) / buffer) - 1.0;
    return fit < 1.0 ? 1 : (fit > (double)MAX_LEAD ? MAX_LEAD : (int)fit);
}

/** L for this call: 1 with order=panels or overlap=0 (one stream has nothing to overlap A with); forced by
 *  lead=L; else lead_rule's, within device memory (lead_fit). Never more than A's chunks (a panel that
 *  comes after the last chunk is an ordinary one) nor the panels. */
static int lead_count(const struct plan *pl)
{
    if (!cfg.order_lead || !cfg.overlap)
        return 1;
    int lead = cfg.lead;
    if (lead == 0) {
        lead = lead_rule(pl->m, pl->n, pl->k, pl->beta, pl->width);
        const int fit = lead_fit(pl->m, pl->k, pl->width);
        lead = lead < fit ? lead : fit;
    }
    lead = lead < pl->chunks ? lead : pl->chunks;
    lead = lead < pl->panels ? lead : pl->panels;
    return lead < 1 ? 1 : lead;
}

/** After a call with overlap: the rate at which its lead's inputs (@p lead_bytes) arrived and that of its
 *  timed panel product, for lead_rule. (Timings that are not positive, as on a stand-in GPU, count as none.) */
static void measure_rates(const struct plan *pl, double lead_bytes)
{
    float in_ms = 0.0f, gemm_ms = 0.0f;
    cuda_check(cudaEventSynchronize(g.lead_t1), "cudaEventSynchronize");
    cuda_check(cudaEventElapsedTime(&in_ms, g.lead_t0, g.lead_t1), "cudaEventElapsedTime");
    if (pl->timed_panel >= 0) {
        cuda_check(cudaEventSynchronize(g.gemm_t1), "cudaEventSynchronize");
        cuda_check(cudaEventElapsedTime(&gemm_ms, g.gemm_t0, g.gemm_t1), "cudaEventElapsedTime");
    }
    if (in_ms > 0.0f)
        rates.in_bytes_per_s = lead_bytes / (1e-3 * in_ms);
    if (gemm_ms > 0.0f)
        rates.flop_per_s = 2.0 * pl->m * (double)pl->width * pl->k / (1e-3 * gemm_ms);
    const int both = in_ms > 0.0f && gemm_ms > 0.0f; /* both at this shape */
    rates.m = both ? pl->m : 0, rates.n = both ? pl->n : 0, rates.k = both ? pl->k : 0;
}

/* ------------------------------------------------------------------ pinned in place (pin=register) */
/** Bytes from a column-major block's first element to just past its last: rows x cols, leading dimension ld. */
static size_t block_bytes(int rows, int cols, long ld)
{
    return ((size_t)(cols - 1) * (size_t)ld + (size_t)rows) * sizeof(double);
}

/** The GPU's share of the caller's arrays: A, B's first n columns, C's first n columns. */
static void in_place_blocks(const struct plan *pl, void *base[3], size_t bytes[3])
{
    base[0] = (void *)pl->A, bytes[0] = block_bytes(pl->m, pl->k, pl->lda);
    base[1] = (void *)pl->B, bytes[1] = block_bytes(pl->k, pl->n, pl->ldb);
    base[2] = (void *)pl->C, bytes[2] = block_bytes(pl->m, pl->n, pl->ldc);
}

/** Page-locks the GPU's share of the caller's arrays in place for this call. 1 on success; 0 where a
 *  registration fails (already registered, over `ulimit -l`, not host memory, ...): those done are undone,
 *  the error is cleared, and the call stages instead, which the first such call says on stderr. */
static int register_in_place(const struct plan *pl)
{
    static const char *const NAME[3] = {"A", "B", "C"};
    static int said;
    void *base[3];
    size_t bytes[3];
    in_place_blocks(pl, base, bytes);
    const double t0 = wall_seconds();
    for (int i = 0; i < 3; ++i) {
        const cudaError_t err = cudaHostRegister(base[i], bytes[i], cudaHostRegisterDefault);
        if (err == cudaSuccess)
            continue;
        (void)cudaGetLastError(); /* clear it: a later check of the last error would report it */
        for (int j = 0; j < i; ++j)
            cuda_check(cudaHostUnregister(base[j]), "cudaHostUnregister");
        if (!said)
            fprintf(stderr, "%s: note: pin=register: cannot page-lock the caller's %s in place (cudaHostRegister: %s): "
                    "staging through pinned slots instead\n", error_prog(), NAME[i], cudaGetErrorString(err));
        said = 1;
        return 0;
    }
    host_span(LANE_REGISTER, -1, t0, wall_seconds());
    return 1;
}

static void unregister_in_place(const struct plan *pl)
{
    void *base[3];
    size_t bytes[3];
    in_place_blocks(pl, base, bytes);
    const double t0 = wall_seconds();
    for (int i = 0; i < 3; ++i)
        cuda_check(cudaHostUnregister(base[i]), "cudaHostUnregister");
    host_span(LANE_REGISTER, -1, t0, wall_seconds());
}

/** Pinned in place: every C is in the caller's C once the streams are done; then the arrays are unpinned. */
static void unpin_when_done(const struct plan *pl)
{
    cudaStream_t streams[3] = {g.out, g.comp, g.in};
    for (int s = 0; s < 3; ++s)
        cuda_check(cudaStreamSynchronize(streams[s]), "cudaStreamSynchronize");
    unregister_in_place(pl);
}

/* ------------------------------------------------------------------ the GPU side */
/** The GPU's share: C(:, 0..n-1) = alpha*A*B(:, 0..n-1) + beta*C(:, 0..n-1), host to host. */
static void gpu_part(int m, int n, int k, double alpha, const double *A, int lda, const double *B, int ldb,
                     double beta, double *C, int ldc, int width)
{
    gpu_setup();
    if (!cfg.overlap)
        g.in = g.comp = g.out;
    struct plan pl = {m, n, k, alpha, beta, A, B, C, lda, ldb, ldc, width, (n + width - 1) / width,
                      (k + width - 1) / width, 1, 2, 0, {0}, 0, -1};
    if (cfg.order_blocks && blocks_fit(m, n, k)) { /* A, B and C whole on the device (blocks.h) */
        device_grow(&g.dA, &g.a_len, (size_t)m * k, "cudaMalloc (A)");
        device_panels(1, (size_t)k * n, (size_t)m * n);
        pl.in_place = cfg.pin_register && register_in_place(&pl);
        if (!pl.in_place)
            pinned_slots((size_t)(k > m ? k : m) * width); /* (blocks.h: no piece or strip is larger) */
        gpu_blocks(&pl);
        if (pl.in_place)
            unpin_when_done(&pl);
        last.lead = 0, last.in_place = pl.in_place;
        return;
    }
    pl.lead = lead_count(&pl);
    pl.buffers = pl.lead + 1;
    device_grow(&g.dA, &g.a_len, (size_t)m * k, "cudaMalloc (A)");
    device_panels(pl.buffers, (size_t)k * width, (size_t)m * width);
    pl.in_place = cfg.pin_register && register_in_place(&pl);
    if (!pl.in_place)
        pinned_slots((size_t)(k > m ? k : m) * width);

    /* The lead: panel c comes in just before A's chunk c (c < L). Once chunk c has landed it is multiplied
     * into every panel present; a panel that comes in after some chunks first catches up on them. With
     * overlap=0 (L = 1): all of A, then one product. */
    double lead_bytes = sizeof(double) * (double)m * k; /* A and the lead panels' inputs, for lead_rule */
    if (cfg.overlap)
        cuda_check(cudaEventRecord(g.lead_t0, g.in), "cudaEventRecord");
    for (int c = 0; c < pl.chunks; ++c) {
        if (c < pl.lead) {
            int j0, w;
            panel_cols(&pl, c, &j0, &w);
            bring_in(&pl, c);
            lead_bytes += sizeof(double) * (double)w * (k + (beta != 0.0 ? m : 0));
            if (cfg.overlap) { /* chunks 0..c-1 have landed already: the new panel catches up on them */
                product(&pl, c, 0, c);
                pl.applied[c] = c;
            }
        }
        send_chunk(&pl, c);
        for (int j = 0; cfg.overlap && j < pl.lead && j <= c; ++j) { /* chunk c into every panel present */
            product(&pl, j, pl.applied[j], c + 1);
            pl.applied[j] = c + 1;
        }
    }
    if (cfg.overlap)
        cuda_check(cudaEventRecord(g.lead_t1, g.in), "cudaEventRecord");
    else
        product(&pl, 0, 0, pl.chunks);
    for (int j = 0; j < pl.lead; ++j) /* the lead panels' products are all done with the last chunk's */
        cuda_check(cudaEventRecord(g.b_free[j], g.comp), "cudaEventRecord");

    /* The other panels, one after the other through the L + 1 buffers; the C of those done goes back as
     * they come in, up to OUTS_PER_PANEL a panel. */
    for (int p = pl.lead; p < pl.panels; ++p) {
        const int b = p % pl.buffers;
        while (pl.next_out <= p - pl.buffers) /* the buffer's last panel: its C leaves before the refill */
            copy_out(&pl, pl.next_out++);
        bring_in(&pl, p);
        int j0, w;
        panel_cols(&pl, p, &j0, &w);
        const int timed = cfg.overlap && pl.timed_panel < 0 && w == width; /* lead_rule's panel product */
        if (timed) {
            pl.timed_panel = p;
            cuda_check(cudaEventRecord(g.gemm_t0, g.comp), "cudaEventRecord");
        }
        product(&pl, p, 0, pl.chunks);
        if (timed)
            cuda_check(cudaEventRecord(g.gemm_t1, g.comp), "cudaEventRecord");
        cuda_check(cudaEventRecord(g.b_free[b], g.comp), "cudaEventRecord");
        for (int i = 0; i < OUTS_PER_PANEL && pl.next_out <= p; ++i)
            copy_out(&pl, pl.next_out++);
    }
    while (pl.next_out < pl.panels)
        copy_out(&pl, pl.next_out++);

    if (pl.in_place) {
        unpin_when_done(&pl);
    } else if (cfg.overlap) {
        for (int q = pl.panels > SLOTS ? pl.panels - SLOTS : 0; q < pl.panels; ++q)
            drain(&pl, q);
    }
    if (cfg.overlap)
        measure_rates(&pl, lead_bytes);
    last.lead = pl.lead, last.in_place = pl.in_place;
}

/* ------------------------------------------------------------------ the CPU side, on its own thread */
/** The CPU side's share of one call, handed to its thread. */
struct cpu_job {
    int m;           /**< rows of C */
    int n;           /**< the CPU side's columns */
    int k;           /**< the inner dimension */
    double alpha;    /**< the scalars of the call */
    double beta;     /**< ... */
    const double *A; /**< all of A */
    const double *B; /**< B from the CPU side's first column */
    double *C;       /**< C from the CPU side's first column */
    int lda;         /**< the leading dimensions of the call */
    int ldb;         /**< ... */
    int ldc;         /**< ... */
    double started;  /**< out: when it started (wall_seconds) */
    double seconds;  /**< out: how long it took */
};

static void *cpu_part(void *arg)
{
    struct cpu_job *j = (struct cpu_job *)arg;
    const double t0 = wall_seconds();
    NODE_CPU_STEP.dgemm(j->m, j->n, j->k, j->alpha, j->A, j->lda, j->B, j->ldb, j->beta, j->C, j->ldc);
    j->started = t0;
    j->seconds = wall_seconds() - t0;
    return NULL;
}

/* ------------------------------------------------------------------ the split */
static int panel_width(int n)
{
    if (cfg.panel > 0)
        return cfg.panel;
    int w = (n + PANELS - 1) / PANELS;
    w = (w + PANEL_ALIGN - 1) / PANEL_ALIGN * PANEL_ALIGN;
    return w < MIN_PANEL ? MIN_PANEL : (w > MAX_PANEL ? MAX_PANEL : w);
}

/** Seconds of the GPU side alone on @p n columns, into scratch (the best of two runs). */
static double probe_gpu(int m, int n, int k, double alpha, const double *A, int lda, const double *B, int ldb,
                        double beta, double *scratch)
{
    double best = INFINITY;
    for (int r = 0; r < 2; ++r) {
        const double t0 = wall_seconds();
        gpu_part(m, n, k, alpha, A, lda, B, ldb, beta, scratch, m, panel_width(n));
        best = fmin(best, wall_seconds() - t0);
    }
    return best;
}

/** Seconds of the CPU side alone on @p n columns, into scratch (the second of two runs). */
static double probe_cpu(int m, int n, int k, double alpha, const double *A, int lda, const double *B, int ldb,
                        double beta, double *scratch)
{
    double t = 0.0;
    for (int r = 0; r < 2; ++r) {
        const double t0 = wall_seconds();
        NODE_CPU_STEP.dgemm(m, n, k, alpha, A, lda, B, ldb, beta, scratch, m);
        t = wall_seconds() - t0;
    }
    return t;
}

/* The model of this shape: the GPU side takes ag + bg * columns seconds, the CPU side ac + bc * columns
 * (and nothing with no columns). The fixed parts are real: each side reads all of A whatever its share
 * (the GPU side also fills and drains its pipeline), so a side with a few columns costs far more than
 * its share of the flops. */
static struct { int m, n, k; double ag, bg, ac, bc; int ng; } model = {0, 0, 0, 0.0, 0.0, 0.0, 0.0, -1};

static double gpu_model(int ng)
{
    return ng > 0 ? model.ag + model.bg * ng : 0.0;
}

static double cpu_model(int nc)
{
    return nc > 0 ? model.ac + model.bc * nc : 0.0;
}

/** The ng that minimizes max(T_gpu(ng), T_cpu(n - ng)): where the two lines cross, or one side alone. */
static int balance(int n)
{
    /* LAB-BEGIN: the split: the ng in 0..n that minimizes max(gpu_model(ng), cpu_model(n - ng)): where the two lines cross, or one side alone */
    /* LAB-STUB: return n / 2; */
    const double cross = (model.ac + model.bc * n - model.ag) / (model.bg + model.bc);
    const int candidates[3] = {0, n, cross <= 0.0 ? 0 : (cross >= n ? n : (int)lround(cross))};
    int best = n;
    for (int t = 0; t < 3; ++t) {
        const int ng = candidates[t];
        if (fmax(gpu_model(ng), cpu_model(n - ng)) < fmax(gpu_model(best), cpu_model(n - best)))
            best = ng;
    }
    return best;
    /* LAB-END */
}

/** A straight line through two timed widths: t = fixed + per * width (through the origin if noise says
 *  otherwise). */
static void fit(int n1, double t1, int n2, double t2, double *fixed, double *per)
{
    *per = n2 > n1 ? (t2 - t1) / (n2 - n1) : t1 / n1;
    *fixed = t1 - *per * n1;
    if (*per <= 0.0 || *fixed < 0.0)
        *per = t2 / n2, *fixed = 0.0;
}

/** The GPU's columns: forced, or from the model of this shape (probed at its first call). */
static int gpu_columns(int m, int n, int k, double alpha, const double *A, int lda, const double *B, int ldb,
                       double beta)
{
    if (!cfg.gpu)
        return 0;
    if (cfg.split >= 0.0)
        return (int)lround(cfg.split * n);
    if (model.m == m && model.n == n && model.k == k)
        return model.ng;
    /* Each side alone at two widths: the GPU at a quarter and half of the columns, the CPU on slices. */
    const int g2 = n >= 2 ? (n + 1) / 2 : 1, g1 = n >= 2 ? (g2 + 1) / 2 : 1;
    const int c1 = n < 64 ? (n + 1) / 2 : (n / 64 < 32 ? 32 : n / 64), c2 = n < 2 ? 1 : (2 * c1 < n ? 2 * c1 : n);
    double *scratch = (double *)calloc((size_t)m * (g2 > c2 ? g2 : c2), sizeof(double)); /* read if beta != 0 */
    if (scratch == NULL)
        die(EXIT_RUNTIME, "out of host memory for the split's probe (%dx%d doubles)", m, g2);
    const double tg1 = probe_gpu(m, g1, k, alpha, A, lda, B, ldb, beta, scratch);
    const double tg2 = g2 > g1 ? probe_gpu(m, g2, k, alpha, A, lda, B, ldb, beta, scratch) : tg1;
    const double tc1 = probe_cpu(m, c1, k, alpha, A, lda, B, ldb, beta, scratch);
    const double tc2 = c2 > c1 ? probe_cpu(m, c2, k, alpha, A, lda, B, ldb, beta, scratch) : tc1;
    free(scratch);
    fit(g1, tg1, g2, tg2, &model.ag, &model.bg);
    fit(c1, tc1, c2, tc2, &model.ac, &model.bc);
    model.m = m, model.n = n, model.k = k;
    model.ng = balance(n);
    return model.ng;
}

/** After a call with both sides busy: each side ran slower or faster than its probe alone said (together
 *  they share the memory and the cores); scale its line by what was measured, and split again. */
static void rebalance(int n, int ng, double gpu_s, double cpu_s)
{
    if (cfg.split >= 0.0 || ng <= 0 || ng >= n)
        return;
    const double fg = gpu_s / gpu_model(ng), fc = cpu_s / cpu_model(n - ng);
    model.ag *= fg, model.bg *= fg, model.ac *= fc, model.bc *= fc;
    model.ng = balance(n);
}

/* ------------------------------------------------------------------ the step */
static void log_call(int m, int n, int k, int ng, double gpu_s, double cpu_s, double total_s)
{
    FILE *f = fopen(cfg.log_path, "a");
    if (f == NULL)
        die(EXIT_RUNTIME, "cannot append to the log '%s'", cfg.log_path);
    /* m,n,k,ng,x,gpu_ms,cpu_ms,total_ms, then the GPU side's L and pinning (0 and none without it) and the
     * CPU side's threads (0 without columns) */
    fprintf(f, "%d,%d,%d,%d,%.4f,%.3f,%.3f,%.3f,%d,%s,%d\n", m, n, k, ng, (double)ng / n, 1e3 * gpu_s, 1e3 * cpu_s,
            1e3 * total_s, ng > 0 ? last.lead : 0, ng == 0 ? "none" : last.in_place ? "register" : "stage",
            ng < n ? cfg.cpu_threads : 0);
    if (fclose(f) != 0)
        die(EXIT_RUNTIME, "cannot append to the log '%s'", cfg.log_path);
}

static void launch(int M, int N, int K, double alpha, const double *A, int lda, const double *B, int ldb,
                   double beta, double *C, int ldc)
{
    const int ng = gpu_columns(M, N, K, alpha, A, lda, B, ldb, beta);
    tl.spans = tl.used = 0;
    const double t0 = wall_seconds();
    tl.host_t0 = t0;
    if (ng > 0) {
        gpu_setup();
        if (tl.on)
            cuda_check(cudaEventRecord(tl.start, g.in), "cudaEventRecord (timeline)");
    }
    /* LAB-BEGIN: the CPU side's share: C's columns from ng on, and what it must read for them (B's and C's columns from ng, all of A) */
    /* LAB-STUB: struct cpu_job job = {M, 0, K, alpha, beta, A, B, C, lda, ldb, ldc, 0.0, 0.0}; */
    struct cpu_job job = {M, N - ng, K, alpha, beta, A, &B[(size_t)ng * ldb], &C[(size_t)ng * ldc], lda, ldb, ldc,
                          0.0, 0.0};
    /* LAB-END */
    pthread_t cpu;
    cfg.cpu_busy = ng < N;
    if (ng < N && pthread_create(&cpu, NULL, cpu_part, &job) != 0)
        die(EXIT_RUNTIME, "cannot start the CPU side's thread");
    double gpu_s = 0.0;
    if (ng > 0) {
        gpu_part(M, ng, K, alpha, A, lda, B, ldb, beta, C, ldc, panel_width(ng));
        gpu_s = wall_seconds() - t0;
    }
    if (ng < N && pthread_join(cpu, NULL) != 0)
        die(EXIT_RUNTIME, "cannot join the CPU side's thread");
    cfg.cpu_busy = 0;
    const double total = wall_seconds() - t0;
    if (ng < N)
        host_span(LANE_CPU, -1, job.started, job.started + job.seconds);
    rebalance(N, ng, gpu_s, job.seconds);
    if (cfg.log_path != NULL)
        log_call(M, N, K, ng, gpu_s, job.seconds, total);
    if (tl.on)
        timeline_write();
}

/** Parses split=X (a fraction in [0, 1]). */
static const char *parse_split(const char *v)
{
    char *end;
    const double x = strtod(v, &end);
    if (end == v || *end != '\0' || !(x >= 0.0 && x <= 1.0))
        return "split must be a fraction from 0 to 1 (the GPU's share of C's columns)";
    cfg.split = x;
    return NULL;
}

static const char *configure(int nparams, const char *const *params, char *desc, unsigned desclen)
{
    const char *bad = NULL;
    int stagers = 0, threads = 0, order_given = 0;
    for (int t = 0; t < nparams && bad == NULL; ++t) {
        const char *p = params[t];
        if (strcmp(p, "gpu=own") == 0 || strcmp(p, "gpu=cublas") == 0)
            cfg.own = strcmp(p, "gpu=own") == 0;
        else if (strcmp(p, "order=lead") == 0 || strcmp(p, "order=panels") == 0 || strcmp(p, "order=blocks") == 0)
            cfg.order_lead = strcmp(p, "order=lead") == 0, cfg.order_blocks = strcmp(p, "order=blocks") == 0,
            order_given = 1;
        else if (strcmp(p, "pin=stage") == 0 || strcmp(p, "pin=register") == 0)
            cfg.pin_register = strcmp(p, "pin=register") == 0;
        else if (strncmp(p, "split=", 6) == 0)
            bad = parse_split(p + 6);
        else if (strncmp(p, "log=", 4) == 0 && p[4] != '\0')
            cfg.log_path = p + 4;
        else if (strncmp(p, "timeline=", 9) == 0 && p[9] != '\0')
            cfg.timeline_path = p + 9;
        else if (!step_param_int(p, "panel", 1, 1 << 20, &cfg.panel, &bad) &&
                 !step_param_int(p, "overlap", 0, 1, &cfg.overlap, &bad) &&
                 !step_param_int(p, "lead", 1, MAX_LEAD, &cfg.lead, &bad) &&
                 !step_param_int(p, "gpu_sms", 1, 1 << 16, &cfg.sms, &bad) &&
                 !step_param_int(p, "stagers", 1, 256, &stagers, &bad) &&
                 !step_param_int(p, "cpu_threads", 1, 1024, &threads, &bad))
            bad = "this step takes --param gpu=own|cublas, split=X (0..1), panel=W, overlap=0|1, "
                  "order=panels|lead|blocks, lead=L, pin=stage|register, gpu_sms=N, stagers=T, cpu_threads=T, log=FILE, "
                  "timeline=FILE";
    }
    if (bad == NULL && cfg.sms > 0 && !cfg.own)
        bad = "gpu_sms=N limits the step's own kernel: it needs gpu=own";
    if (bad == NULL && cfg.lead > 0 && !order_given)
        cfg.order_lead = 1; /* lead=L is order=lead's L: it selects that schedule */
    if (bad == NULL && cfg.lead > 0 && cfg.order_blocks)
        bad = "lead=L sets order=lead's lead panels: order=blocks has none";
    if (bad == NULL && cfg.lead > 1 && !cfg.order_lead)
        bad = "lead=L sets order=lead's lead panels: not with order=panels (which is L = 1)";
    if (bad != NULL)
        return bad;
    int devices = 0;
    cfg.gpu = cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
    (void)cudaGetLastError(); /* no device is not an error here: the CPU then does all of it */
    /* Cores: with a GPU, one drives it and `stagers` copy for it; the CPU side gets the rest. */
    const int cores = omp_get_num_procs();
    cfg.stagers = stagers > 0 ? stagers : (cores / 2 < 1 ? 1 : cores / 2);
    cfg.stagers_alone = stagers > 0 ? stagers : (cores - 1 < 1 ? 1 : cores - 1);
    const int rest = cfg.gpu ? cores - 1 - cfg.stagers : omp_get_max_threads();
    cfg.cpu_threads = threads > 0 ? threads : (rest < 1 ? 1 : rest);
    tl.on = cfg.timeline_path != NULL && cfg.gpu;
    const int saved = omp_get_max_threads();
    omp_set_num_threads(cfg.cpu_threads); /* the CPU side reads its thread count when configured */
    char cpu_desc[512];
    const char *cpu_bad = NODE_CPU_STEP.configure(0, NULL, cpu_desc, sizeof cpu_desc);
    omp_set_num_threads(saved);
    if (cpu_bad != NULL)
        return cpu_bad;
    char split[48];
    if (cfg.split >= 0.0 && cfg.gpu)
        snprintf(split, sizeof split, "%.3f (forced)", cfg.split);
    else
        snprintf(split, sizeof split, "%s", cfg.gpu ? "probed per shape" : "0 (no CUDA device: all on the CPU)");
    char lead[48];
    if (cfg.order_blocks)
        snprintf(lead, sizeof lead, "none (order=blocks)");
    else if (!cfg.overlap || !cfg.order_lead)
        snprintf(lead, sizeof lead, "1 (%s)", cfg.overlap ? "order=panels" : "overlap=0: one stream");
    else if (cfg.lead > 0)
        snprintf(lead, sizeof lead, "%d (forced)", cfg.lead);
    else
        snprintf(lead, sizeof lead, "from the measured rates (%d at first)", FIRST_LEAD);
    snprintf(desc, desclen, "gpu=%s split=%s panel=%s overlap=%d order=%s lead=%s pin=%s stagers=%d (%d with the CPU "
             "side idle) cpu_threads=%d", cfg.own ? "own" : "cublas", split, cfg.panel > 0 ? "forced" : "N/16 in 256..2048",
             cfg.overlap, cfg.order_blocks ? "blocks" : cfg.order_lead ? "lead" : "panels", lead,
             cfg.pin_register ? "register" : "stage",
             cfg.stagers, cfg.stagers_alone, cfg.cpu_threads);
    if (cfg.sms > 0) {
        size_t used = strlen(desc);
        snprintf(desc + used, desclen - used, " gpu_sms=%d", cfg.sms);
    }
    return NULL;
}

const struct step STEP = {
    .number = 22,
    .name = "hybrid",
    .summary = "CPU and GPU on disjoint columns of C, host to host: transfers overlapped, the split measured",
    .precision = PRECISION_FP64,
    .target = TARGET_HYBRID,
    .max_size = 8192,
    .min_cc = 0,
    .sgemm = NULL,
    .dgemm = launch,
    .cpu_threads = 0,
    .configure = configure,
};
