/**
 * @file
 * @brief Step 23: distributed DGEMM over MPI, SUMMA on a P x Q process grid.
 *
 * Part III's last layer: C = alpha * A * B + beta * C over many processes, on one machine or many. The
 * ranks form a P x Q grid and each owns one block of every matrix (common/dist.h): the rank at (r, c)
 * holds rows block r of P and columns block c of Q of A, B and C. Nobody holds a whole matrix.
 *
 * SUMMA (van de Geijn and Watts, 1997) writes the product as a sum over panels of K:
 *
 *   C(r, c) = beta * C(r, c) + alpha * sum over panels t of A(r, t) * B(t, c)
 *
 * A(r, t), the panel's columns of A in process row r, lives on one rank of that row; B(t, c), the
 * panel's rows of B in process column c, on one rank of that column. So for each panel:
 *
 *   1. the owner of A(r, t) broadcasts it along its process row (every rank of row r needs it);
 *   2. the owner of B(t, c) broadcasts it along its process column;
 *   3. every rank updates its own block of C with the node-level routine: C(r, c) += A(r, t) * B(t, c).
 *
 * Panels are `--param panel=` wide (default 512) and never cross the edge of an owner's block, so each
 * has exactly one owner in each direction; the last one before an edge is narrower. Each panel is one
 * call of the node-level routine with beta = 1 after the first (step 21 then leaves C unscaled): wide
 * panels make fewer calls, narrow ones start the overlap sooner (lesson 23). With overlap=1 (the default) the broadcasts of panel t + 1 are started (MPI_Ibcast) before panel
 * t is computed, into a second pair of buffers; overlap=0 broadcasts and computes in turn (MPI_Bcast).
 * The node-level routine is step 21 (OpenMP on OMP_NUM_THREADS threads per rank), or step 22's hybrid
 * CPU+GPU routine with `--param local=hybrid` where that is built in. With `--param local=gpu` each rank
 * keeps its blocks on its own GPU and the whole of SUMMA runs there (summa_gpu.c).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist.h"
#include "dist_layout.h"
#include "cli.h"
#include "matrix.h"
#include "node.h"
#include "summa.h"
#include "timing.h"

/* Panels on the CPU are 512 wide; on a GPU (local=gpu) 2048: each panel's GEMM reads and writes all of the
 * rank's C (16 bytes an element) for 2 w flops an element, and on the H200 at 16384^3 on one GPU, 512-wide
 * panels ran at 0.90 of one cuBLAS call and 2048-wide ones at 0.99 (lesson 23). */
enum { DEFAULT_PANEL = 512, DEFAULT_GPU_PANEL = 2048, MAX_PANEL = 1 << 16 };

static int panel_width = DEFAULT_PANEL; /* --param panel= */
static int panel_said;                  /* 1: panel= was given */
static int overlap = 1;                 /* --param overlap= */
static const struct step *node;         /* the node-level routine (--param local=cpu|hybrid) */

/* The node-level routines a rank can update its block with: the first is the default. One not built
 * into this binary names what is missing (a new routine is one line here and one in node.h). */
static const struct {
    const char *name;
    const struct step *routine;
    const char *missing;
} NODE_ROUTINES[] = {
    {"cpu", &NODE_CPU_STEP, NULL},
#ifdef HAVE_NODE_HYBRID
    {"hybrid", &NODE_HYBRID_STEP, NULL},
#else
    {"hybrid", NULL, "local=hybrid: step 22's hybrid CPU+GPU routine is not built into this binary"},
#endif
};
/* local=gpu is no routine on host memory: the whole of SUMMA moves to the GPUs (summa_gpu.c). */
static int on_gpu;

static int min_int(int a, int b)
{
    return a < b ? a : b;
}

struct panel summa_panel_at(const struct local *L, int k0, int width)
{
    const int k = L->k;
    struct panel p = {k0, 0, dist_owner(k, L->g->Q, k0), dist_owner(k, L->g->P, k0), 0, 0};
    const struct dist_range a = dist_block(k, L->g->Q, p.a_root), b = dist_block(k, L->g->P, p.b_root);
    p.w = min_int(width, min_int(a.lo + a.len, b.lo + b.len) - k0);
    p.a_col = k0 - a.lo; /* the owner's block of A starts at global column a.lo */
    p.b_row = k0 - b.lo; /* and its block of B at global row b.lo */
    return p;
}

/* Two buffers of each panel, kept from call to call and grown when a call needs more: with overlap, one
 * is computed with while the next panel arrives in the other. */
static struct {
    double *a[2], *b[2];
    size_t a_len, b_len; /* doubles in each */
} bufs;

static void free_buffers(void)
{
    for (int s = 0; s < 2; ++s) {
        host_free(bufs.a[s]);
        host_free(bufs.b[s]);
    }
}

static void grow_buffers(size_t a_need, size_t b_need)
{
    for (int s = 0; s < 2; ++s) {
        if (a_need > bufs.a_len) {
            host_free(bufs.a[s]);
            bufs.a[s] = host_alloc(a_need * sizeof(double), "a panel of A");
        }
        if (b_need > bufs.b_len) {
            host_free(bufs.b[s]);
            bufs.b[s] = host_alloc(b_need * sizeof(double), "a panel of B");
        }
    }
    bufs.a_len = a_need > bufs.a_len ? a_need : bufs.a_len;
    bufs.b_len = b_need > bufs.b_len ? b_need : bufs.b_len;
}

/** A panel in flight: the buffers it arrives in, where the update reads it, and its two broadcasts. */
struct flight {
    struct panel p;       /**< which panel */
    double *abuf;         /**< A(rows, panel) arrives here: rows.len x w, leading dimension rows.len */
    double *bbuf;         /**< B(panel, cols) arrives here: w x cols.len, leading dimension w */
    const double *a;      /**< where the update reads A's piece: abuf, or this rank's own A where nobody sends */
    const double *b;      /**< where it reads B's piece: bbuf, or this rank's own B */
    int lda;              /**< a's leading dimension */
    int ldb;              /**< b's leading dimension */
    MPI_Request req[2];   /**< the broadcasts of A's and B's pieces (MPI_REQUEST_NULL: none) */
};

/** Where panel f->p is read from, and its owner's copy into the buffers that the broadcasts send. With one
 *  process column (Q = 1) every rank owns all of A's columns of its rows: it reads A's panel in place and
 *  nothing is sent along the row; likewise B's panel with one process row (P = 1). */
static void prepare_panel(const struct local *L, struct flight *f)
{
    const struct panel *p = &f->p;
    const int j0 = p->a_col, i0 = p->b_row;
    if (L->g->Q == 1) {
        f->a = &L->A[(size_t)j0 * L->lda], f->lda = L->lda;
    } else {
        f->a = f->abuf, f->lda = L->rows.len;
        if (L->g->col == p->a_root) /* the owner packs A(rows, k0..k0+w-1): its local columns j0.. */
            for (int j = 0; j < p->w; ++j)
                memcpy(&f->abuf[(size_t)j * L->rows.len], &L->A[(size_t)(j0 + j) * L->lda],
                       (size_t)L->rows.len * sizeof(double));
    }
    if (L->g->P == 1) {
        f->b = &L->B[i0], f->ldb = L->ldb;
    } else {
        f->b = f->bbuf, f->ldb = p->w;
        if (L->g->row == p->b_root) /* the owner packs B(k0..k0+w-1, cols): its local rows i0.. */
            for (int j = 0; j < L->cols.len; ++j)
                memcpy(&f->bbuf[(size_t)j * p->w], &L->B[(size_t)i0 + (size_t)j * L->ldb],
                       (size_t)p->w * sizeof(double));
    }
}

double summa_received(const struct local *L, const struct panel *p)
{
    double bytes = 0.0;
    if (L->g->col != p->a_root)
        bytes += (double)L->rows.len * p->w * sizeof(double);
    if (L->g->row != p->b_root)
        bytes += (double)p->w * L->cols.len * sizeof(double);
    return bytes;
}

/** Steps 1 and 2, blocking: the panel's A along the process row, its B along the process column. */
static void broadcast_panel(const struct local *L, struct flight *f, struct dist_stats *st)
{
    const double t0 = wall_seconds();
    prepare_panel(L, f);
    /* LAB-BEGIN: steps 1 and 2, blocking: A's panel (f->abuf, rows.len x w) from its owner a_root to the process row (row_comm), B's (f->bbuf, w x cols.len) from b_root down the process column (col_comm) */
    if (L->g->Q > 1)
        mpi_check(MPI_Bcast(f->abuf, L->rows.len * f->p.w, MPI_DOUBLE, f->p.a_root, L->g->row_comm),
                  "MPI_Bcast of A's panel");
    if (L->g->P > 1)
        mpi_check(MPI_Bcast(f->bbuf, f->p.w * L->cols.len, MPI_DOUBLE, f->p.b_root, L->g->col_comm),
                  "MPI_Bcast of B's panel");
    /* LAB-END */
    st->recv_bytes += summa_received(L, &f->p);
    st->comm_s += wall_seconds() - t0;
}

/** Steps 1 and 2, started: they complete in finish_panel. */
static void start_panel(const struct local *L, struct flight *f, struct dist_stats *st)
{
    const double t0 = wall_seconds();
    prepare_panel(L, f);
    f->req[0] = f->req[1] = MPI_REQUEST_NULL; /* (a broadcast in a communicator of one is not started) */
    /* LAB-BEGIN: steps 1 and 2, started: the same two broadcasts, non-blocking, their requests in f->req[0] and f->req[1] (finish_panel waits for both) */
    if (L->g->Q > 1)
        mpi_check(MPI_Ibcast(f->abuf, L->rows.len * f->p.w, MPI_DOUBLE, f->p.a_root, L->g->row_comm, &f->req[0]),
                  "MPI_Ibcast of A's panel");
    if (L->g->P > 1)
        mpi_check(MPI_Ibcast(f->bbuf, f->p.w * L->cols.len, MPI_DOUBLE, f->p.b_root, L->g->col_comm, &f->req[1]),
                  "MPI_Ibcast of B's panel");
    /* LAB-END */
    st->recv_bytes += summa_received(L, &f->p);
    st->comm_s += wall_seconds() - t0;
}

static void finish_panel(struct flight *f, struct dist_stats *st)
{
    const double t0 = wall_seconds();
    mpi_check(MPI_Waitall(2, f->req, MPI_STATUSES_IGNORE), "MPI_Waitall on a panel's broadcasts");
    st->comm_s += wall_seconds() - t0;
}

/** Step 3: C(rows, cols) = beta * C + alpha * A(rows, panel) * B(panel, cols), on this rank alone. */
static void update(const struct local *L, const struct flight *f, double alpha, double beta, double *C, int ldc,
                   struct dist_stats *st)
{
    if (L->rows.len == 0 || L->cols.len == 0) /* a rank that owns no rows or no columns of C */
        return;
    const double t0 = wall_seconds();
    node->dgemm(L->rows.len, L->cols.len, f->p.w, alpha, f->a, f->lda, f->b, f->ldb, beta, C, ldc);
    st->gemm_s += wall_seconds() - t0;
}

/** SUMMA, one panel after the other: broadcast, then compute. */
static void summa_blocking(const struct local *L, double alpha, double beta, double *C, int ldc,
                           struct dist_stats *st)
{
    struct flight f = {.abuf = bufs.a[0], .bbuf = bufs.b[0]};
    for (int k0 = 0; k0 < L->k; k0 += f.p.w) {
        f.p = summa_panel_at(L, k0, panel_width);
        broadcast_panel(L, &f, st);
        update(L, &f, alpha, k0 == 0 ? beta : 1.0, C, ldc, st); /* beta once: the first panel scales C */
    }
}

/** SUMMA with the next panel's broadcasts in flight while the current one is computed. */
static void summa_overlapped(const struct local *L, double alpha, double beta, double *C, int ldc,
                             struct dist_stats *st)
{
    struct flight f[2] = {{.abuf = bufs.a[0], .bbuf = bufs.b[0]}, {.abuf = bufs.a[1], .bbuf = bufs.b[1]}};
    f[0].p = summa_panel_at(L, 0, panel_width);
    start_panel(L, &f[0], st);
    /* LAB-BEGIN: the panel loop: wait for panel t, start panel t + 1 into the other buffers (if any is left), then update C with panel t (beta on the first panel only) */
    /* LAB-STUB: finish_panel(&f[0], st); */
    /* LAB-STUB: (void)alpha, (void)beta, (void)C, (void)ldc; */
    for (int t = 0;; ++t) {
        struct flight *now = &f[t % 2], *next = &f[(t + 1) % 2];
        finish_panel(now, st); /* panel t has arrived */
        const int k1 = now->p.k0 + now->p.w;
        if (k1 < L->k) { /* panel t + 1 travels into the other buffers while panel t is computed */
            next->p = summa_panel_at(L, k1, panel_width);
            start_panel(L, next, st);
        }
        update(L, now, alpha, t == 0 ? beta : 1.0, C, ldc, st);
        if (k1 >= L->k)
            return;
    }
    /* LAB-END */
}

static void summa(const struct dist_grid *g, int m, int n, int k, double alpha, const double *A, int lda,
                  const double *B, int ldb, double beta, double *C, int ldc, struct dist_stats *st)
{
    const struct local L = {g, m, n, k, dist_block(m, g->P, g->row), dist_block(n, g->Q, g->col), A, B, lda, ldb};
#ifdef HAVE_SUMMA_GPU
    if (on_gpu) { /* A, B and C are in this rank's GPU memory (the harness asked summa_gpu_memory) */
        summa_gpu(&L, alpha, beta, C, ldc, panel_width, overlap, st);
        return;
    }
#endif
    const size_t w = (size_t)min_int(panel_width, k);
    grow_buffers(L.rows.len > 0 ? L.rows.len * w : 1, L.cols.len > 0 ? w * L.cols.len : 1); /* never NULL */
    if (overlap)
        summa_overlapped(&L, alpha, beta, C, ldc, st);
    else
        summa_blocking(&L, alpha, beta, C, ldc, st);
}

/* local=gpu: the GPU side takes the settings this file does not know. */
static const char *configure_gpu(int nparams, const char *const *params, char *desc, unsigned desclen)
{
#ifdef HAVE_SUMMA_GPU
    char gpu_desc[256] = "";
    const char *bad = summa_gpu_configure(nparams, params, gpu_desc, sizeof gpu_desc);
    if (bad != NULL)
        return bad;
    on_gpu = 1;
    if (!panel_said)
        panel_width = DEFAULT_GPU_PANEL;
    snprintf(desc, desclen, "panel=%d overlap=%d local=gpu (%s)", panel_width, overlap, gpu_desc);
    return NULL;
#else
    (void)nparams, (void)params, (void)desc, (void)desclen;
    dist_cannot_run("local=gpu: this binary is built without the GPU path (it needs nvcc and the CUDA libraries)");
#endif
}

/** --param panel=, overlap=0|1, local=cpu|hybrid|gpu (and local=gpu's own settings). */
static const char *configure(int nparams, const char *const *params, char *desc, unsigned desclen)
{
    const char *bad = NULL, *local = NODE_ROUTINES[0].name;
    const char *rest[MAX_PARAMS]; /* the settings that are not this file's: local=gpu's, or a mistake */
    int nrest = 0;
    for (int t = 0; t < nparams && bad == NULL; ++t) {
        if (strncmp(params[t], "local=", 6) == 0)
            local = params[t] + 6;
        else if (step_param_int(params[t], "panel", 1, MAX_PANEL, &panel_width, &bad))
            panel_said = 1;
        else if (!step_param_int(params[t], "overlap", 0, 1, &overlap, &bad) && nrest < MAX_PARAMS)
            rest[nrest++] = params[t];
    }
    if (bad != NULL)
        return bad;
    if (strcmp(local, "gpu") == 0)
        return configure_gpu(nrest, rest, desc, desclen);
    if (nrest > 0)
        return "this step takes --param panel=, overlap=0|1, local=cpu|hybrid|gpu (local=gpu also gpu=cublas|own, "
               "share=0|1, bcast=nccl|host), and the harness's grid=PxQ, nb=, baseline=";
    size_t r = 0, count = sizeof NODE_ROUTINES / sizeof NODE_ROUTINES[0];
    while (r < count && strcmp(NODE_ROUTINES[r].name, local) != 0)
        ++r;
    if (r == count)
        return "--param local must be cpu, hybrid or gpu";
    if (NODE_ROUTINES[r].routine == NULL)
        dist_cannot_run("%s", NODE_ROUTINES[r].missing);
    node = NODE_ROUTINES[r].routine;
    char node_desc[256] = "";
    bad = node->configure != NULL ? node->configure(0, NULL, node_desc, sizeof node_desc) : NULL;
    if (bad != NULL)
        return bad;
    atexit(free_buffers);
    snprintf(desc, desclen, "panel=%d overlap=%d local=%s (step %02d: %s)", panel_width, overlap, local,
             node->number, node_desc);
    return NULL;
}

/* NULL with local=gpu: no routine on host memory (the harness then checks no CPU ceiling). */
static const struct step *local_routine(void)
{
    return on_gpu ? NULL : node;
}

/* NULL (host memory) unless local=gpu. */
static const struct dist_memory *memory(void)
{
#ifdef HAVE_SUMMA_GPU
    return on_gpu ? summa_gpu_memory() : NULL;
#else
    return NULL;
#endif
}

const struct dist_step DIST_STEP = {
    .number = 23,
    .name = "distributed",
    .summary = "MPI on a P x Q process grid: SUMMA, panels broadcast along rows and columns, the next one in flight",
    .dgemm = summa,
    .configure = configure,
    .local = local_routine,
    .memory = memory,
};
