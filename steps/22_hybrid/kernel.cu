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
 * A goes first, in chunks of `panel` columns, and panel 0 is computed chunk by chunk as they
 * arrive (C(0) = A(:,k0..k1) B(k0..k1,0) + C(0)), so that the SMs start after one chunk rather
 * than after all of A. Two device slots for B and C: panel p's copy waits until panel p-2 has
 * left them. `overlap=0` runs the same work on one stream, each panel's stages one after the
 * other, for the lesson's comparison.
 *
 * The split: the first call at a shape probes the GPU side at two widths (its time is
 * a + b * columns: a is A's transfer and the pipeline's fill) and the CPU side on a slice
 * (c per column), into scratch memory, and gives the GPU the ng that makes both finish
 * together: a + b * ng = c * (N - ng). `split=X` forces ng = X * N.
 *
 * Settings (`--param`): gpu=own|cublas (the FP64 tensor-core kernel of tc_dgemm.cu, or cuBLAS
 * DGEMM), split=X (0..1), panel=W, overlap=0|1, gpu_sms=N (own kernel on N SMs: a smaller GPU),
 * stagers=T, log=FILE (each call: ng and both sides' times), timeline=FILE (the last call's
 * copies, kernels and host work, for the lesson's picture).
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
    SLOTS = 2,              /* device slots for B and C panels, and pinned slots for C coming back */
    IN_SLOTS = 2,           /* pinned slots for what goes in */
    PANELS = 16,            /* the default panel width aims at this many panels ... */
    MIN_PANEL = 256,        /* ... but no narrower than this */
    MAX_PANEL = 2048,       /* ... nor wider */
    PANEL_ALIGN = 128,      /* the own kernel's tile */
    TIMELINE_EVENTS = 4096  /* GPU events of one call's timeline */
};

/* ------------------------------------------------------------------ settings */
static struct {
    int own;              /* 1: tc_dgemm; 0: cuBLAS DGEMM */
    double split;         /* GPU share of the columns; < 0: probed */
    int panel;            /* columns per panel; 0: from N */
    int overlap;          /* 1: three streams; 0: one stream, stage after stage */
    int sms;              /* own kernel on this many SMs (0: all) */
    int stagers;          /* host threads for pageable <-> pinned copies while the CPU side computes */
    int stagers_alone;    /* ... and while it does not (no columns, or the probe) */
    int cpu_busy;         /* the CPU side is computing now */
    int cpu_threads;      /* threads of the CPU side */
    int gpu;              /* 1: a CUDA device is present */
    const char *log_path, *timeline_path;
} cfg = {1, -1.0, 0, 1, 0, 0, 0, 0, 0, 0, NULL, NULL};

/* ------------------------------------------------------------------ GPU state, kept across calls */
static struct {
    cudaStream_t in, comp, out;                 /* one per engine (all the same stream with overlap=0) */
    cublasHandle_t blas;
    double *dA, *dB[SLOTS], *dC[SLOTS];
    double *pin_in[IN_SLOTS], *pin_out[SLOTS];
    size_t a_len, panel_len;                    /* doubles: dA; each panel buffer (device and pinned) */
    cudaEvent_t in_free[IN_SLOTS];              /* the copy out of this pinned slot has finished */
    cudaEvent_t b_free[SLOTS];                  /* the kernel that read this device slot has finished */
    cudaEvent_t c_back[SLOTS];                  /* this slot's C is in its pinned slot */
    cudaEvent_t inputs[SLOTS];                  /* this slot's inputs are on the device */
    cudaEvent_t chunk;                          /* the last chunk of A is on the device */
    int next_in;                                /* the pinned-in slot the next copy uses */
} g;

/* ------------------------------------------------------------------ timeline (optional) */
/** The rows of the timeline picture: the three engines, the host's copies, the CPU side. */
enum lane { LANE_COPY_IN, LANE_SMS, LANE_COPY_OUT, LANE_HOST, LANE_CPU, LANES };
static const char *const LANE_NAME[LANES] = {"copy-in", "SMs", "copy-out", "host-staging", "CPU-GEMM"};
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

/** Device and pinned buffers for A (m x k) and panels of up to @p panel_len doubles, kept across calls. */
static void gpu_buffers(int m, int k, size_t panel_len)
{
    device_grow(&g.dA, &g.a_len, (size_t)m * k, "cudaMalloc (A)");
    if (g.panel_len >= panel_len)
        return;
    for (int s = 0; s < SLOTS; ++s) {
        if (g.panel_len > 0) {
            cuda_check(cudaFree(g.dB[s]), "cudaFree");
            cuda_check(cudaFree(g.dC[s]), "cudaFree");
            cuda_check(cudaFreeHost(g.pin_out[s]), "cudaFreeHost");
        }
        cuda_check(cudaMalloc((void **)&g.dB[s], panel_len * sizeof(double)), "cudaMalloc (B panel)");
        cuda_check(cudaMalloc((void **)&g.dC[s], panel_len * sizeof(double)), "cudaMalloc (C panel)");
        cuda_check(cudaMallocHost((void **)&g.pin_out[s], panel_len * sizeof(double)), "cudaMallocHost (C out)");
    }
    for (int s = 0; s < IN_SLOTS; ++s) {
        if (g.panel_len > 0)
            cuda_check(cudaFreeHost(g.pin_in[s]), "cudaFreeHost");
        cuda_check(cudaMallocHost((void **)&g.pin_in[s], panel_len * sizeof(double)), "cudaMallocHost (staging)");
    }
    g.panel_len = panel_len;
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
    cudaEvent_t *all[] = {g.in_free, g.b_free, g.c_back, g.inputs};
    for (int t = 0; t < 4; ++t)
        for (int s = 0; s < SLOTS; ++s) /* IN_SLOTS == SLOTS */
            cuda_check(cudaEventCreateWithFlags(&all[t][s], cudaEventDisableTiming), "cudaEventCreate");
    cuda_check(cudaEventCreateWithFlags(&g.chunk, cudaEventDisableTiming), "cudaEventCreate");
    cublas_check(cublasCreate(&g.blas), "cublasCreate");
    if (cfg.timeline_path != NULL) {
        cuda_check(cudaEventCreate(&tl.start), "cudaEventCreate");
        for (int e = 0; e < TIMELINE_EVENTS; ++e)
            cuda_check(cudaEventCreate(&tl.ev[e]), "cudaEventCreate");
    }
}
static_assert(IN_SLOTS == SLOTS, "gpu_setup creates both kinds of slot events in one loop");

/** Copies a rows x cols block of pageable memory through the next pinned slot to the device (copy-in). */
static void send(const double *src, long sld, int rows, int cols, double *dst, int panel)
{
    const int s = g.next_in++ % IN_SLOTS;
    cuda_check(cudaEventSynchronize(g.in_free[s]), "cudaEventSynchronize"); /* the slot's last copy is done */
    const double t0 = wall_seconds();
    copy_columns(g.pin_in[s], rows, src, sld, rows, cols);
    host_span(LANE_HOST, panel, t0, wall_seconds());
    const int sp = span_begin(LANE_COPY_IN, panel, g.in);
    cuda_check(cudaMemcpyAsync(dst, g.pin_in[s], (size_t)rows * cols * sizeof(double), cudaMemcpyHostToDevice, g.in),
               "cudaMemcpyAsync (to the device)");
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

/** Panel @p p of the GPU's columns: its first column and width. */
static void panel_cols(int p, int width, int n, int *j0, int *w)
{
    *j0 = p * width;
    *w = n - *j0 < width ? n - *j0 : width;
}

/** Waits for panel @p q's C in its pinned slot and copies it into the user's C. */
static void drain(int q, int width, int m, int n, double *C, long ldc)
{
    int j0, w;
    panel_cols(q, width, n, &j0, &w);
    cuda_check(cudaEventSynchronize(g.c_back[q % SLOTS]), "cudaEventSynchronize");
    const double t0 = wall_seconds();
    copy_columns(&C[(size_t)j0 * ldc], ldc, g.pin_out[q % SLOTS], m, m, w);
    host_span(LANE_HOST, q, t0, wall_seconds());
}

/** The GPU's share: C(:, 0..n-1) = alpha*A*B(:, 0..n-1) + beta*C(:, 0..n-1), host to host. */
static void gpu_part(int m, int n, int k, double alpha, const double *A, int lda, const double *B, int ldb,
                     double beta, double *C, int ldc, int width)
{
    gpu_setup();
    const int panels = (n + width - 1) / width, kmax = k > m ? k : m;
    gpu_buffers(m, k, (size_t)kmax * width);
    if (!cfg.overlap)
        g.in = g.comp = g.out;
    const int chunks = (k + width - 1) / width; /* A goes in chunks of `width` of its columns */
    for (int p = 0; p < panels; ++p) {
        const int d = p % SLOTS;
        int j0, w;
        panel_cols(p, width, n, &j0, &w);
        /* B(:, panel), and C(:, panel) when it is read, into device slot d once panel p-2 has left it. */
        cuda_check(cudaStreamWaitEvent(g.in, g.b_free[d], 0), "cudaStreamWaitEvent");
        send(&B[(size_t)j0 * ldb], ldb, k, w, g.dB[d], p);
        if (beta != 0.0) {
            cuda_check(cudaStreamWaitEvent(g.in, g.c_back[d], 0), "cudaStreamWaitEvent");
            send(&C[(size_t)j0 * ldc], ldc, m, w, g.dC[d], p);
        }
        cuda_check(cudaEventRecord(g.inputs[d], g.in), "cudaEventRecord");
        cuda_check(cudaStreamWaitEvent(g.comp, g.inputs[d], 0), "cudaStreamWaitEvent");
        cuda_check(cudaStreamWaitEvent(g.comp, g.c_back[d], 0), "cudaStreamWaitEvent"); /* dC[d] is free */
        if (p == 0) {
            /* A, chunk by chunk, each multiplied into panel 0 as soon as it is there. With overlap=0, all
             * of A first, then one multiplication. */
            for (int c = 0; c < chunks; ++c) {
                const int k0 = c * width, kc = k - k0 < width ? k - k0 : width;
                send(&A[(size_t)k0 * lda], lda, m, kc, &g.dA[(size_t)k0 * m], p);
                cuda_check(cudaEventRecord(g.chunk, g.in), "cudaEventRecord");
                cuda_check(cudaStreamWaitEvent(g.comp, g.chunk, 0), "cudaStreamWaitEvent");
                if (cfg.overlap) /* C(0) = alpha A(:, k0..) B(k0.., 0) + (first chunk ? beta : 1) C(0) */
                    device_gemm(m, w, kc, alpha, &g.dA[(size_t)k0 * m], m, &g.dB[d][k0], k, c == 0 ? beta : 1.0,
                                g.dC[d], m, p);
            }
            if (!cfg.overlap)
                device_gemm(m, w, k, alpha, g.dA, m, g.dB[d], k, beta, g.dC[d], m, p);
        } else {
            device_gemm(m, w, k, alpha, g.dA, m, g.dB[d], k, beta, g.dC[d], m, p);
        }
        cuda_check(cudaEventRecord(g.b_free[d], g.comp), "cudaEventRecord");
        /* LAB-BEGIN: C(:, panel) back to the host through pinned slot d: drain panel p-2 out of the slot, then the copy-out on g.out once the kernel is done (b_free[d]), then record c_back[d]; with overlap=0, drain p at once */
        /* C(:, panel) back through pinned slot d, once panel p-2's C has left that slot. */
        if (p >= SLOTS && cfg.overlap)
            drain(p - SLOTS, width, m, n, C, ldc);
        cuda_check(cudaStreamWaitEvent(g.out, g.b_free[d], 0), "cudaStreamWaitEvent");
        const int sp = span_begin(LANE_COPY_OUT, p, g.out);
        cuda_check(cudaMemcpyAsync(g.pin_out[d], g.dC[d], (size_t)m * w * sizeof(double), cudaMemcpyDeviceToHost,
                                   g.out), "cudaMemcpyAsync (to the host)");
        span_end(sp, g.out);
        cuda_check(cudaEventRecord(g.c_back[d], g.out), "cudaEventRecord");
        if (!cfg.overlap)
            drain(p, width, m, n, C, ldc);
        /* LAB-END */
    }
    if (cfg.overlap)
        for (int q = panels > SLOTS ? panels - SLOTS : 0; q < panels; ++q)
            drain(q, width, m, n, C, ldc);
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
    fprintf(f, "%d,%d,%d,%d,%.4f,%.3f,%.3f,%.3f\n", m, n, k, ng, (double)ng / n, 1e3 * gpu_s, 1e3 * cpu_s,
            1e3 * total_s);
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
    int stagers = 0, threads = 0;
    for (int t = 0; t < nparams && bad == NULL; ++t) {
        const char *p = params[t];
        if (strcmp(p, "gpu=own") == 0 || strcmp(p, "gpu=cublas") == 0)
            cfg.own = strcmp(p, "gpu=own") == 0;
        else if (strncmp(p, "split=", 6) == 0)
            bad = parse_split(p + 6);
        else if (strncmp(p, "log=", 4) == 0 && p[4] != '\0')
            cfg.log_path = p + 4;
        else if (strncmp(p, "timeline=", 9) == 0 && p[9] != '\0')
            cfg.timeline_path = p + 9;
        else if (!step_param_int(p, "panel", 1, 1 << 20, &cfg.panel, &bad) &&
                 !step_param_int(p, "overlap", 0, 1, &cfg.overlap, &bad) &&
                 !step_param_int(p, "gpu_sms", 1, 1 << 16, &cfg.sms, &bad) &&
                 !step_param_int(p, "stagers", 1, 256, &stagers, &bad) &&
                 !step_param_int(p, "cpu_threads", 1, 1024, &threads, &bad))
            bad = "this step takes --param gpu=own|cublas, split=X (0..1), panel=W, overlap=0|1, gpu_sms=N, "
                  "stagers=T, cpu_threads=T, log=FILE, timeline=FILE";
    }
    if (bad == NULL && cfg.sms > 0 && !cfg.own)
        bad = "gpu_sms=N limits the step's own kernel: it needs gpu=own";
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
    snprintf(desc, desclen, "gpu=%s split=%s panel=%s overlap=%d stagers=%d (%d with the CPU side idle) "
             "cpu_threads=%d", cfg.own ? "own" : "cublas", split, cfg.panel > 0 ? "forced" : "N/16 in 256..2048",
             cfg.overlap, cfg.stagers, cfg.stagers_alone, cfg.cpu_threads);
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
