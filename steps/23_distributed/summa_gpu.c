/**
 * @file
 * @brief Step 23 with `--param local=gpu`: SUMMA with every block on the rank's own GPU.
 *
 * Each rank binds to one GPU (its rank among the ranks of its node) and keeps its blocks of A, B and C
 * there: the harness asks summa_gpu_memory where to put them. The loop is kernel.c's, moved to the GPU:
 * the owner of a panel packs it with a strided device-to-device copy, the panel travels GPU to GPU through
 * NCCL (A's piece along the process row, B's along the process column), and the update is one
 * cublasDgemm per panel (or step 22's own FP64 tensor-core kernel, `gpu=own`).
 *
 * Two streams and two sets of panel buffers overlap the two halves. The copy stream packs and broadcasts
 * panel t + 1 while the compute stream multiplies panel t; events order them without the host waiting:
 *
 *     copy:     [pack+bcast 0][pack+bcast 1]              [pack+bcast 2]          ...
 *                           |ready[0]     |ready[1]       ^freed[0]
 *     compute:              [gemm 0 ...................][gemm 1 ...............][gemm 2 ...
 *
 * ready[s] says that the panel in buffer set s has arrived (the compute stream waits on it before its
 * GEMM); freed[s] that the GEMM reading set s is done (the copy stream waits on it before it overwrites set
 * s with the panel after next). The host enqueues a whole call and waits once, at its end. overlap=0
 * puts everything on one stream: broadcast, then multiply, panel after panel.
 *
 * Without NCCL (a build without it, `bcast=host`, or ranks sharing a GPU, which NCCL refuses) the panels
 * are staged through pinned host memory and broadcast with MPI, the fallback of an MPI that cannot send
 * from GPU memory: the owner copies its packed panel to the host, MPI_Ibcast sends it while the GPU
 * multiplies the previous panel, and every receiver copies it to its GPU. The host drives that path.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#ifdef HAVE_NCCL
#include <nccl.h>
#endif

#include "cli.h" /* exit codes */
#include "error.h"
#include "gpu.h"
#include "summa.h"
#include "tc_dgemm.h" /* step 22's own FP64 kernel */
#include "timing.h"

enum { SETS = 2 }; /* panel buffer sets: one multiplied, one arriving */

/* Four timing events per panel: its copy stream's work (pack and broadcast) starts and ends (the NCCL
 * path; the staged path's host times its own), its GEMM starts and ends. */
enum { COPY_START, COPY_END, GEMM_START, GEMM_END, MARKS_PER_PANEL };

static struct {
    int device;              /* this rank's CUDA device */
    char name[256];          /* its name, commas removed (it goes into CSV) */
    int own;                 /* gpu=own: step 22's kernel, else cuBLAS */
    int share;               /* share=1: ranks may share a GPU */
    int nccl;                /* 1: panels travel through NCCL; 0: staged through host memory and MPI */
    cudaStream_t comp, copy; /* the GEMMs; the packing and broadcasts */
    cublasHandle_t blas;     /* on comp */
    double *abuf[SETS], *bbuf[SETS]; /* panels of A and B in device memory */
    size_t a_len, b_len;             /* doubles in each */
    double *ha[SETS], *hb[SETS];     /* the staged path's pinned host copies */
    size_t ha_len, hb_len;
    cudaEvent_t ready[SETS], freed[SETS]; /* see the file's comment */
    cudaEvent_t *marks;                  /* MARKS_PER_PANEL a panel */
    int npanels;                         /* panels the marks can time */
#ifdef HAVE_NCCL
    const struct dist_grid *grid; /* the grid the communicators below were made for */
    ncclComm_t row, col;          /* the process row's and the process column's */
#endif
} G;

/* ---------------------------------------------------------------- checks */

#ifdef HAVE_NCCL
static void nccl_check(ncclResult_t r, const char *what)
{
    if (r != ncclSuccess)
        die(EXIT_RUNTIME, "%s failed: %s", what, ncclGetErrorString(r));
}

/* A communicator over the ranks of @p comm, its id sent from its rank 0 over MPI. */
static ncclComm_t nccl_comm(MPI_Comm comm)
{
    int size = 1, rank = 0;
    mpi_check(MPI_Comm_size(comm, &size), "MPI_Comm_size");
    mpi_check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
    ncclUniqueId id;
    if (rank == 0)
        nccl_check(ncclGetUniqueId(&id), "ncclGetUniqueId");
    mpi_check(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, comm), "MPI_Bcast of the NCCL id");
    ncclComm_t c;
    nccl_check(ncclCommInitRank(&c, size, id, rank), "ncclCommInitRank");
    return c;
}

/* The row's and column's communicators, made on the first call on a grid: the harness's checked run or
 * a warm-up run, unless both are switched off (--no-check --warmup 0), when the first timed run pays for
 * them. They, the streams, the handle and the buffers last as long as the process. */
static void nccl_for(const struct dist_grid *g)
{
    if (G.grid == g)
        return;
    if (G.grid != NULL) {
        nccl_check(ncclCommDestroy(G.row), "ncclCommDestroy");
        nccl_check(ncclCommDestroy(G.col), "ncclCommDestroy");
    }
    G.row = nccl_comm(g->row_comm);
    G.col = nccl_comm(g->col_comm);
    G.grid = g;
}
#endif

/* ---------------------------------------------------------------- memory (the harness's arrays) */

static void *device_alloc(size_t bytes, const char *what)
{
    void *p = NULL;
    const cudaError_t e = cudaMalloc(&p, bytes > 0 ? bytes : 1);
    if (e != cudaSuccess)
        die(EXIT_RUNTIME, "cannot allocate %zu bytes of GPU memory for %s on GPU %d: %s", bytes, what, G.device,
            cudaGetErrorString(e));
    return p;
}

static void device_free(void *p)
{
    cuda_check(cudaFree(p), "cudaFree");
}

static void put(void *dst, const void *src, size_t bytes)
{
    cuda_check(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "cudaMemcpy to the GPU");
    /* From pageable memory, cudaMemcpy may return before the last chunk has landed, and the step's
     * streams do not wait for the default stream (cudaStreamNonBlocking): wait here. */
    cuda_check(cudaDeviceSynchronize(), "cudaMemcpy to the GPU (completion)");
}

static void get(void *dst, const void *src, size_t bytes)
{
    cuda_check(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy from the GPU");
}

/* One GEMM of the local routine on the compute stream. */
static void local_gemm(int m, int n, int k, double alpha, const double *A, int lda, const double *B, int ldb,
                       double beta, double *C, int ldc)
{
    if (G.own) {
        tc_dgemm(m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, 0, G.comp);
        cuda_check(cudaGetLastError(), "step 22's FP64 kernel (launch)");
    } else {
        cublas_check(cublasDgemm(G.blas, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, A, lda, B, ldb, &beta, C, ldc),
                     "cublasDgemm");
    }
}

/* The baseline of the 1x1 grid: the whole product in one call of the same routine, on the same GPU. */
static void alone(int m, int n, int k, double alpha, const double *A, int lda, const double *B, int ldb, double beta,
                  double *C, int ldc)
{
    local_gemm(m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    cuda_check(cudaStreamSynchronize(G.comp), "the baseline's GEMM");
}

static struct dist_memory memory = {.alloc = device_alloc, .release = device_free, .put = put, .get = get,
                                    .alone = alone};

const struct dist_memory *summa_gpu_memory(void)
{
    memory.device = G.name;
    memory.alone_desc = G.own ? "step 22's FP64 kernel alone on one GPU (one call)" : "cuBLAS DGEMM alone on one GPU";
    return &memory;
}

/* ---------------------------------------------------------------- binding ranks to GPUs */

enum { BOUND, SHARED_GPU, NO_GPU }; /* a rank's state after binding, worst last (the one reported) */
enum { REASON_LEN = 160 };          /* bytes of the reason a rank sends with a failure */

/** The CUDA devices this rank sees (CUDA_VISIBLE_DEVICES may show it one of the node's); 0, and why in
 *  @p why, if none. */
static int visible_gpus(char *why)
{
    int gpus = 0;
    const cudaError_t e = cudaGetDeviceCount(&gpus);
    const char *absent = gpu_absent_reason(e, gpus); /* no driver, a driver too old, no device: in words */
    snprintf(why, REASON_LEN, "%s", absent != NULL ? absent : "");
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return gpus;
}

/** 1 if another rank of @p node (the ranks of this machine) is bound to the same GPU: the GPUs' UUIDs are
 *  compared, so that ranks given one GPU each through CUDA_VISIBLE_DEVICES, all of them device 0, are not
 *  taken for ranks that share one. */
static int gpu_shared_on_node(MPI_Comm node, const cudaUUID_t *mine)
{
    int locals = 1, local = 0;
    mpi_check(MPI_Comm_size(node, &locals), "MPI_Comm_size");
    mpi_check(MPI_Comm_rank(node, &local), "MPI_Comm_rank");
    cudaUUID_t *all = malloc((size_t)locals * sizeof *all);
    if (all == NULL)
        die(EXIT_RUNTIME, "out of host memory (the GPUs' ids of %d ranks)", locals);
    mpi_check(MPI_Allgather(mine, sizeof *mine, MPI_BYTE, all, sizeof *mine, MPI_BYTE, node), "MPI_Allgather");
    int shared = 0;
    for (int r = 0; r < locals; ++r)
        shared |= r != local && memcmp(&all[r], mine, sizeof *mine) == 0;
    free(all);
    return shared;
}

/** Every rank takes GPU (its rank on its node) mod (the GPUs it sees). A rank that sees none, or ranks on
 *  one GPU without share=1, end every rank with one line (exit 4), after all ranks agree (no rank is left
 *  waiting). Returns 1 if ranks share a GPU anywhere. */
static int bind_gpu(void)
{
    MPI_Comm node;
    mpi_check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node),
              "MPI_Comm_split_type");
    int local = 0;
    mpi_check(MPI_Comm_rank(node, &local), "MPI_Comm_rank");
    char why[REASON_LEN];
    const int gpus = visible_gpus(why);
    cudaUUID_t uuid;
    memset(&uuid, 0, sizeof uuid); /* (a rank without a GPU sends zeros: it fails below anyway) */
    if (gpus > 0) { /* (no context yet: cudaSetDevice waits until every rank agrees, below) */
        G.device = local % gpus;
        struct cudaDeviceProp prop;
        cuda_check(cudaGetDeviceProperties(&prop, G.device), "cudaGetDeviceProperties");
        snprintf(G.name, sizeof G.name, "%s", prop.name);
        for (char *c = G.name; *c != '\0'; ++c)
            *c = *c == ',' ? ' ' : *c; /* (the name goes into CSV) */
        uuid = prop.uuid;
    }
    const int shared = gpu_shared_on_node(node, &uuid);
    mpi_check(MPI_Comm_free(&node), "MPI_Comm_free");
    int state = BOUND;
    if (gpus == 0)
        state = NO_GPU;
    else if (shared && !G.share)
        state = SHARED_GPU;
    int me[2] = {state, 0}, worst[2];
    mpi_check(MPI_Comm_rank(MPI_COMM_WORLD, &me[1]), "MPI_Comm_rank");
    mpi_check(MPI_Allreduce(me, worst, 1, MPI_2INT, MPI_MAXLOC, MPI_COMM_WORLD), "MPI_Allreduce");
    mpi_check(MPI_Bcast(why, REASON_LEN, MPI_CHAR, worst[1], MPI_COMM_WORLD), "MPI_Bcast"); /* the worst rank's */
    if (worst[0] == NO_GPU)
        dist_cannot_run("local=gpu: rank %d sees no CUDA device (%s)", worst[1], why);
    if (worst[0] == SHARED_GPU)
        dist_cannot_run("local=gpu: rank %d shares its GPU with another rank of its node: start at most one rank per "
                        "GPU, or add --param share=1 to let ranks share GPUs (for correctness, not speed)", worst[1]);
    cuda_check(cudaSetDevice(G.device), "cudaSetDevice");
    int any = 0;
    mpi_check(MPI_Allreduce(&shared, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
    return any;
}

/* The path of the panels: NCCL where it is built in and every rank has a GPU of its own (NCCL refuses two
 * ranks of one communicator on one GPU), else staged through host memory; bcast= forces one. */
static const char *choose_bcast(const char *asked, int shared)
{
#ifdef HAVE_NCCL
    const int built = 1;
#else
    const int built = 0;
#endif
    if (strcmp(asked, "host") == 0) {
        G.nccl = 0;
        return "staged through host memory and MPI (bcast=host)";
    }
    if (strcmp(asked, "nccl") == 0 && !built)
        dist_cannot_run("bcast=nccl: this binary is built without NCCL (the Makefile found no nccl.h and libnccl)");
    if (strcmp(asked, "nccl") == 0 && shared)
        dist_cannot_run("bcast=nccl: ranks share a GPU, and NCCL needs a GPU of its own for every rank");
    G.nccl = built && !shared;
    if (G.nccl)
        return "NCCL";
    return built ? "staged through host memory and MPI (ranks share a GPU: NCCL needs one per rank)"
                 : "staged through host memory and MPI (built without NCCL)";
}

const char *summa_gpu_configure(int nparams, const char *const *params, char *desc, unsigned desclen)
{
    const char *bad = NULL, *bcast = "auto";
    for (int t = 0; t < nparams && bad == NULL; ++t) {
        if (strcmp(params[t], "gpu=own") == 0 || strcmp(params[t], "gpu=cublas") == 0)
            G.own = strcmp(params[t], "gpu=own") == 0;
        else if (strcmp(params[t], "bcast=nccl") == 0 || strcmp(params[t], "bcast=host") == 0)
            bcast = params[t] + strlen("bcast=");
        else if (!step_param_int(params[t], "share", 0, 1, &G.share, &bad))
            bad = "with local=gpu this step takes --param gpu=cublas|own, share=0|1, bcast=nccl|host, panel=, "
                  "overlap=0|1, and the harness's grid=PxQ, nb=, baseline=";
    }
    if (bad != NULL)
        return bad;
    const char *path = choose_bcast(bcast, bind_gpu());
    cuda_check(cudaStreamCreateWithFlags(&G.comp, cudaStreamNonBlocking), "cudaStreamCreate (the GEMMs' stream)");
    cuda_check(cudaStreamCreateWithFlags(&G.copy, cudaStreamNonBlocking), "cudaStreamCreate (the panels' stream)");
    cublas_check(cublasCreate(&G.blas), "cublasCreate");
    cublas_check(cublasSetStream(G.blas, G.comp), "cublasSetStream");
    for (int s = 0; s < SETS; ++s) {
        cuda_check(cudaEventCreateWithFlags(&G.ready[s], cudaEventDisableTiming), "cudaEventCreate (ready)");
        cuda_check(cudaEventCreateWithFlags(&G.freed[s], cudaEventDisableTiming), "cudaEventCreate (freed)");
    }
    snprintf(desc, desclen, "one GPU per rank (rank 0: device %d of those it sees): %s; local GEMM %s; panels %s",
             G.device, G.name, G.own ? "step 22's FP64 kernel" : "cuBLAS DGEMM", path);
    return NULL;
}

/* ---------------------------------------------------------------- buffers */

static void grow(double **set, size_t *len, size_t need, int pinned, const char *what)
{
    if (need <= *len)
        return;
    for (int s = 0; s < SETS; ++s) {
        if (pinned) {
            if (set[s] != NULL)
                cuda_check(cudaFreeHost(set[s]), "cudaFreeHost");
            const cudaError_t e = cudaMallocHost((void **)&set[s], need * sizeof(double));
            if (e != cudaSuccess)
                die(EXIT_RUNTIME, "cannot allocate %zu bytes of pinned host memory for %s: %s", need * sizeof(double),
                    what, cudaGetErrorString(e));
        } else {
            if (set[s] != NULL)
                device_free(set[s]);
            set[s] = device_alloc(need * sizeof(double), what);
        }
    }
    *len = need;
}

static void grow_marks(int panels)
{
    if (panels <= G.npanels)
        return;
    cudaEvent_t *more = realloc(G.marks, (size_t)panels * MARKS_PER_PANEL * sizeof *more);
    if (more == NULL)
        die(EXIT_RUNTIME, "out of host memory (timing events for %d panels)", panels);
    G.marks = more;
    for (int e = G.npanels * MARKS_PER_PANEL; e < panels * MARKS_PER_PANEL; ++e)
        cuda_check(cudaEventCreate(&G.marks[e]), "cudaEventCreate (timing)");
    G.npanels = panels;
}

static cudaEvent_t mark(int t, int which)
{
    return G.marks[t * MARKS_PER_PANEL + which];
}

/* ---------------------------------------------------------------- one panel */

/** Where the update of panel p reads A's and B's pieces. */
struct view {
    struct panel p;  /**< which panel */
    int set;         /**< its buffer set */
    const double *a; /**< A(rows, panel): the set's buffer, or this rank's A where nobody sends (Q = 1) */
    const double *b; /**< B(panel, cols): the set's buffer, or this rank's B (P = 1) */
    int lda;         /**< a's leading dimension */
    int ldb;         /**< b's leading dimension */
};

static struct view view_of(const struct local *L, struct panel p, int t)
{
    struct view v = {p, t % SETS, G.abuf[t % SETS], G.bbuf[t % SETS], L->rows.len, p.w};
    if (L->g->Q == 1) /* every column of A of this rank's rows is here: read the panel in place */
        v.a = &L->A[(size_t)p.a_col * L->lda], v.lda = L->lda;
    if (L->g->P == 1)
        v.b = &L->B[p.b_row], v.ldb = L->ldb;
    return v;
}

/* The owner packs its piece of the panel into the set's buffers (strided device-to-device copies on
 * @p stream): A's columns a_col.. of its rows (contiguous but for lda), B's rows b_row.. of its columns. */
static void pack(const struct local *L, const struct view *v, cudaStream_t stream)
{
    const size_t d = sizeof(double);
    if (L->g->Q > 1 && L->g->col == v->p.a_root && L->rows.len > 0)
        cuda_check(cudaMemcpy2DAsync(G.abuf[v->set], L->rows.len * d, &L->A[(size_t)v->p.a_col * L->lda],
                                     (size_t)L->lda * d, L->rows.len * d, v->p.w, cudaMemcpyDeviceToDevice, stream),
                   "cudaMemcpy2DAsync (packing A's panel)");
    if (L->g->P > 1 && L->g->row == v->p.b_root && L->cols.len > 0)
        cuda_check(cudaMemcpy2DAsync(G.bbuf[v->set], v->p.w * d, &L->B[v->p.b_row], (size_t)L->ldb * d, v->p.w * d,
                                     L->cols.len, cudaMemcpyDeviceToDevice, stream),
                   "cudaMemcpy2DAsync (packing B's panel)");
}

/* The update of panel t on the compute stream, once its panel is in (ready), timed by marks. */
static void enqueue_gemm(const struct local *L, const struct view *v, int t, double alpha, double beta, double *C,
                         int ldc)
{
    cuda_check(cudaStreamWaitEvent(G.comp, G.ready[v->set], 0), "cudaStreamWaitEvent");
    cuda_check(cudaEventRecord(mark(t, GEMM_START), G.comp), "cudaEventRecord");
    if (L->rows.len > 0 && L->cols.len > 0) /* a rank may own no rows or no columns of C */
        local_gemm(L->rows.len, L->cols.len, v->p.w, alpha, v->a, v->lda, v->b, v->ldb, beta, C, ldc);
    cuda_check(cudaEventRecord(mark(t, GEMM_END), G.comp), "cudaEventRecord");
    cuda_check(cudaEventRecord(G.freed[v->set], G.comp), "cudaEventRecord");
}

#ifdef HAVE_NCCL
/* Panel t through NCCL on @p stream: pack, then both broadcasts as one group; ready when done. */
static void enqueue_nccl_panel(const struct local *L, const struct view *v, int t, cudaStream_t stream)
{
    cuda_check(cudaStreamWaitEvent(stream, G.freed[v->set], 0), "cudaStreamWaitEvent"); /* panel t - 2's GEMM */
    cuda_check(cudaEventRecord(mark(t, COPY_START), stream), "cudaEventRecord");
    pack(L, v, stream);
    const size_t na = (size_t)L->rows.len * v->p.w, nb = (size_t)v->p.w * L->cols.len;
    nccl_check(ncclGroupStart(), "ncclGroupStart");
    if (L->g->Q > 1 && na > 0) /* (na is the same on every rank of the row: they share its rows) */
        nccl_check(ncclBroadcast(G.abuf[v->set], G.abuf[v->set], na, ncclDouble, v->p.a_root, G.row, stream),
                   "ncclBroadcast of A's panel");
    if (L->g->P > 1 && nb > 0)
        nccl_check(ncclBroadcast(G.bbuf[v->set], G.bbuf[v->set], nb, ncclDouble, v->p.b_root, G.col, stream),
                   "ncclBroadcast of B's panel");
    nccl_check(ncclGroupEnd(), "ncclGroupEnd");
    cuda_check(cudaEventRecord(mark(t, COPY_END), stream), "cudaEventRecord");
    cuda_check(cudaEventRecord(G.ready[v->set], stream), "cudaEventRecord");
}
#endif

/* ---------------------------------------------------------------- the staged path */

/** A staged panel's two host broadcasts. */
struct staged {
    struct view v;      /**< the panel and its buffers */
    MPI_Request req[2]; /**< the broadcasts of A's and B's pieces (MPI_REQUEST_NULL: none) */
};

/* The owner packs and copies its piece to pinned host memory; then the broadcasts start (MPI needs the
 * bytes on the host: the host waits for the copy stream first). */
static void start_staged(const struct local *L, struct staged *f, struct dist_stats *st)
{
    const struct view *v = &f->v;
    const size_t na = (size_t)L->rows.len * v->p.w, nb = (size_t)v->p.w * L->cols.len, d = sizeof(double);
    /* The GEMM of panel t - 2 read this set: wait for it here, before the clock starts, so that its time
     * (already counted as GEMM time) does not count as communication. */
    cuda_check(cudaEventSynchronize(G.freed[v->set]), "cudaEventSynchronize (a panel's GEMM)");
    const double t0 = wall_seconds();
    pack(L, v, G.copy);
    if (L->g->Q > 1 && L->g->col == v->p.a_root && na > 0)
        cuda_check(cudaMemcpyAsync(G.ha[v->set], G.abuf[v->set], na * d, cudaMemcpyDeviceToHost, G.copy),
                   "cudaMemcpyAsync (A's panel to the host)");
    if (L->g->P > 1 && L->g->row == v->p.b_root && nb > 0)
        cuda_check(cudaMemcpyAsync(G.hb[v->set], G.bbuf[v->set], nb * d, cudaMemcpyDeviceToHost, G.copy),
                   "cudaMemcpyAsync (B's panel to the host)");
    cuda_check(cudaStreamSynchronize(G.copy), "the panel's copy to the host"); /* (also panel t - 2's copies in) */
    f->req[0] = f->req[1] = MPI_REQUEST_NULL;
    if (L->g->Q > 1)
        mpi_check(MPI_Ibcast(G.ha[v->set], (int)na, MPI_DOUBLE, v->p.a_root, L->g->row_comm, &f->req[0]),
                  "MPI_Ibcast of A's panel");
    if (L->g->P > 1)
        mpi_check(MPI_Ibcast(G.hb[v->set], (int)nb, MPI_DOUBLE, v->p.b_root, L->g->col_comm, &f->req[1]),
                  "MPI_Ibcast of B's panel");
    st->comm_s += wall_seconds() - t0;
}

/* Wait for the broadcasts; the receivers copy the panel to their GPU (the owner's is there already). */
static void finish_staged(const struct local *L, struct staged *f, struct dist_stats *st)
{
    const double t0 = wall_seconds();
    const struct view *v = &f->v;
    const size_t na = (size_t)L->rows.len * v->p.w, nb = (size_t)v->p.w * L->cols.len, d = sizeof(double);
    mpi_check(MPI_Waitall(2, f->req, MPI_STATUSES_IGNORE), "MPI_Waitall on a panel's broadcasts");
    if (L->g->Q > 1 && L->g->col != v->p.a_root && na > 0)
        cuda_check(cudaMemcpyAsync(G.abuf[v->set], G.ha[v->set], na * d, cudaMemcpyHostToDevice, G.copy),
                   "cudaMemcpyAsync (A's panel to the GPU)");
    if (L->g->P > 1 && L->g->row != v->p.b_root && nb > 0)
        cuda_check(cudaMemcpyAsync(G.bbuf[v->set], G.hb[v->set], nb * d, cudaMemcpyHostToDevice, G.copy),
                   "cudaMemcpyAsync (B's panel to the GPU)");
    cuda_check(cudaEventRecord(G.ready[v->set], G.copy), "cudaEventRecord");
    st->comm_s += wall_seconds() - t0;
}

/* ---------------------------------------------------------------- SUMMA */

static int count_panels(const struct local *L, int width)
{
    int n = 0;
    for (int k0 = 0; k0 < L->k; k0 += summa_panel_at(L, k0, width).w)
        ++n;
    return n;
}

/* The staged path: the host waits for each panel's broadcasts; with overlap, panel t + 1's are started
 * after panel t's GEMM is enqueued, so that they travel while it runs. */
static int summa_staged(const struct local *L, double alpha, double beta, double *C, int ldc, int width,
                        int overlap, struct dist_stats *st)
{
    struct staged f[SETS];
    int t = 0;
    f[0].v = view_of(L, summa_panel_at(L, 0, width), 0);
    start_staged(L, &f[0], st);
    for (;; ++t) {
        struct staged *now = &f[t % SETS], *next = &f[(t + 1) % SETS];
        finish_staged(L, now, st);
        enqueue_gemm(L, &now->v, t, alpha, t == 0 ? beta : 1.0, C, ldc); /* beta once: the first panel scales C */
        const int k1 = now->v.p.k0 + now->v.p.w;
        if (k1 >= L->k)
            return t + 1;
        if (!overlap) /* broadcast and multiply in turn */
            cuda_check(cudaStreamSynchronize(G.comp), "a panel's GEMM");
        next->v = view_of(L, summa_panel_at(L, k1, width), t + 1);
        start_staged(L, next, st);
    }
}

void summa_gpu(const struct local *L, double alpha, double beta, double *C, int ldc, int width, int overlap,
               struct dist_stats *st)
{
    /* Panel buffers where panels arrive: along the row for A (Q > 1), along the column for B (P > 1);
     * otherwise the panel is read in place (view_of). */
    const size_t w = (size_t)(width < L->k ? width : L->k);
    const size_t a_need = L->rows.len > 0 ? L->rows.len * w : 1, b_need = L->cols.len > 0 ? w * L->cols.len : 1;
    if (L->g->Q > 1)
        grow(G.abuf, &G.a_len, a_need, 0, "a panel of A");
    if (L->g->P > 1)
        grow(G.bbuf, &G.b_len, b_need, 0, "a panel of B");
    const int panels = count_panels(L, width);
    grow_marks(panels);
    int done = 0;
    if (G.nccl) {
#ifdef HAVE_NCCL
        nccl_for(L->g);
        /* The whole call enqueued: the copy stream runs up to SETS panels ahead of the compute stream. */
        cudaStream_t copy = overlap ? G.copy : G.comp;
        for (int k0 = 0; k0 < L->k; k0 += summa_panel_at(L, k0, width).w, ++done) {
            const struct view v = view_of(L, summa_panel_at(L, k0, width), done);
            enqueue_nccl_panel(L, &v, done, copy);
            enqueue_gemm(L, &v, done, alpha, done == 0 ? beta : 1.0, C, ldc); /* beta once: the first panel */
        }
#endif
    } else {
        if (L->g->Q > 1)
            grow(G.ha, &G.ha_len, a_need, 1, "a panel of A (host)");
        if (L->g->P > 1)
            grow(G.hb, &G.hb_len, b_need, 1, "a panel of B (host)");
        done = summa_staged(L, alpha, beta, C, ldc, width, overlap, st);
    }
    cuda_check(cudaStreamSynchronize(G.comp), "SUMMA's GEMMs");
    cuda_check(cudaStreamSynchronize(G.copy), "SUMMA's broadcasts");
    /* The split: the GEMMs' time on the GPU; the copy stream's (NCCL) or the host's (staged) for the rest. */
    for (int t = 0; t < done; ++t) {
        float ms = 0.0f;
        cuda_check(cudaEventElapsedTime(&ms, mark(t, GEMM_START), mark(t, GEMM_END)), "cudaEventElapsedTime");
        st->gemm_s += 1e-3 * ms;
        if (G.nccl) {
            cuda_check(cudaEventElapsedTime(&ms, mark(t, COPY_START), mark(t, COPY_END)), "cudaEventElapsedTime");
            st->comm_s += 1e-3 * ms;
        }
    }
    for (int k0 = 0; k0 < L->k;) {
        const struct panel p = summa_panel_at(L, k0, width);
        st->recv_bytes += summa_received(L, &p);
        k0 += p.w;
    }
}
