/**
 * @file
 * @brief A stand-in for the CUDA runtime, cuBLAS and NCCL on the host, for testing step 23's `local=gpu`
 *        orchestration where there is no GPU (tests/mpi.sh loads it with LD_PRELOAD).
 *
 * It replaces only the calls that summa_gpu.c and the harness make. "Device memory" is host memory filled
 * with NaN; a stream is a queue of operations (copies, strided copies, DGEMMs through the host BLAS,
 * broadcasts through MPI); an event is a position in a queue. What it tests is the order of things: that
 * every GEMM waits for its panel, every overwrite of a buffer for the GEMM that read it, every host read
 * for its copy. FAKE_MODE says when queued operations run:
 *
 *   late  (default) only when something waits for them: a missing wait between streams, or a host read
 *         before a synchronization, leaves the reader with NaN or an old panel, and the check fails;
 *   eager each one as it is enqueued (what a GPU that is never busy would do);
 *   skew  the first stream created (the GEMMs') late, the others eager: panels run far ahead.
 *
 * FAKE_GPUS is the number of devices each process sees (default 1, 0: none); device d of every process
 * has the UUID d, so ranks of a node that pick the same device share it. FAKE_DRIVER=none plays a machine
 * without the NVIDIA driver (no GPU), FAKE_DRIVER=old one whose driver is older than the runtime: the
 * runtime then answers cudaErrorInsufficientDriver, and the driver's version is 0 or 11.0. This is no GPU: it says nothing
 * about speed, kernels or the real libraries' behaviour, only about the host code's ordering.
 */
#define _GNU_SOURCE
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef HAVE_NCCL
#include <nccl.h>
#endif

/* The host BLAS's DGEMM (column-major, no transposes), declared here to avoid a second BLAS header. */
void cblas_dgemm(int order, int transa, int transb, int m, int n, int k, double alpha, const double *A, int lda,
                 const double *B, int ldb, double beta, double *C, int ldc);
enum { CBLAS_COL_MAJOR = 102, CBLAS_NO_TRANS = 111, MAX_STREAMS = 64 };

/** Stop with one line: a call this stand-in does not model (the test then fails loudly). */
static void fake_fail(const char *what)
{
    fprintf(stderr, "fake_cuda: error: %s\n", what);
    exit(3);
}

/** A zeroed object of @p bytes, or stop with one line naming @p what. */
static void *fake_new(size_t bytes, const char *what)
{
    void *p = calloc(1, bytes);
    if (p == NULL) {
        fprintf(stderr, "fake_cuda: error: out of memory (%s)\n", what);
        exit(3);
    }
    return p;
}

enum op_kind { OP_COPY, OP_COPY2D, OP_GEMM, OP_WAIT, OP_BCAST };

struct fake_stream;

/** One queued operation. */
struct op {
    enum op_kind kind;
    void *dst;                     /**< copies, broadcast: where to */
    const void *src;               /**< copies: from where */
    size_t bytes;                  /**< OP_COPY: bytes; OP_BCAST: doubles */
    size_t dpitch, spitch;         /**< OP_COPY2D: bytes from row to row */
    size_t width, height;          /**< OP_COPY2D: bytes a row, rows */
    int m, n, k, lda, ldb, ldc;    /**< OP_GEMM */
    double alpha, beta;            /**< OP_GEMM */
    const double *A, *B;           /**< OP_GEMM */
    double *C;                     /**< OP_GEMM */
    struct fake_stream *on;        /**< OP_WAIT: the stream waited for */
    size_t upto;                   /**< OP_WAIT: up to this many of its operations */
    MPI_Comm comm;                 /**< OP_BCAST */
    int root;                      /**< OP_BCAST */
};

/** A stream: its queue and how much of it has run. */
struct fake_stream {
    struct op *ops;
    size_t n, cap, done;
};

/** An event: a position in a stream's queue (on == NULL: never recorded). */
struct fake_event {
    struct fake_stream *on;
    size_t pos;
};

static struct fake_stream *streams[MAX_STREAMS];
static int nstreams;

static void run(struct op *o);

/** Run @p s's operations up to @p upto (a wait first runs what it waits for). */
static void drain(struct fake_stream *s, size_t upto)
{
    while (s->done < upto) {
        struct op *o = &s->ops[s->done++];
        if (o->kind == OP_WAIT)
            drain(o->on, o->upto);
        else
            run(o);
    }
}

static void drain_all(void)
{
    for (int i = 0; i < nstreams; ++i)
        drain(streams[i], streams[i]->n);
}

static void run(struct op *o)
{
    switch (o->kind) {
    case OP_COPY:
        memmove(o->dst, o->src, o->bytes);
        break;
    case OP_COPY2D:
        for (size_t r = 0; r < o->height; ++r)
            memmove((char *)o->dst + r * o->dpitch, (const char *)o->src + r * o->spitch, o->width);
        break;
    case OP_GEMM:
        cblas_dgemm(CBLAS_COL_MAJOR, CBLAS_NO_TRANS, CBLAS_NO_TRANS, o->m, o->n, o->k, o->alpha, o->A, o->lda, o->B,
                    o->ldb, o->beta, o->C, o->ldc);
        break;
    case OP_BCAST:
        if (MPI_Bcast(o->dst, (int)o->bytes, MPI_DOUBLE, o->root, o->comm) != MPI_SUCCESS)
            fake_fail("MPI_Bcast (a fake NCCL broadcast) failed");
        break;
    case OP_WAIT:
        break;
    }
}

/** When FAKE_MODE runs an operation on @p s: 1 at once, 0 when something waits for it. */
static int runs_now(const struct fake_stream *s)
{
    const char *mode = getenv("FAKE_MODE");
    if (mode == NULL || strcmp(mode, "late") == 0)
        return 0;
    if (strcmp(mode, "eager") == 0)
        return 1;
    if (strcmp(mode, "skew") == 0)
        return nstreams > 0 && s != streams[0];
    fake_fail("FAKE_MODE must be late, eager or skew");
    return 0;
}

static void enqueue(cudaStream_t stream, struct op o)
{
    struct fake_stream *s = (struct fake_stream *)stream;
    if (s == NULL) /* summa_gpu.c uses its own streams only */
        fake_fail("an operation on the default stream, which this stand-in does not model");
    if (s->n == s->cap) {
        s->cap = s->cap > 0 ? 2 * s->cap : 64;
        s->ops = realloc(s->ops, s->cap * sizeof *s->ops);
        if (s->ops == NULL)
            fake_fail("out of memory (a stream's queue)");
    }
    s->ops[s->n++] = o;
    if (runs_now(s))
        drain(s, s->n);
}

/* ---------------------------------------------------------------- the runtime */

/** FAKE_DRIVER: "none", "old", or NULL (a driver as new as the runtime). */
static const char *fake_driver(void)
{
    return getenv("FAKE_DRIVER");
}

cudaError_t cudaGetDeviceCount(int *count)
{
    const char *gpus = getenv("FAKE_GPUS");
    *count = gpus != NULL ? atoi(gpus) : 1;
    if (fake_driver() != NULL) {
        *count = 0;
        return cudaErrorInsufficientDriver;
    }
    return *count > 0 ? cudaSuccess : cudaErrorNoDevice;
}

cudaError_t cudaDriverGetVersion(int *version)
{
    const char *d = fake_driver();
    *version = d == NULL ? CUDART_VERSION : strcmp(d, "old") == 0 ? 11000 : 0;
    return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int *version)
{
    *version = CUDART_VERSION;
    return cudaSuccess;
}

cudaError_t cudaSetDevice(int device)
{
    (void)device;
    return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
    memset(prop, 0, sizeof *prop);
    snprintf(prop->name, sizeof prop->name, "fake GPU (host memory, FAKE_MODE=%s)",
             getenv("FAKE_MODE") != NULL ? getenv("FAKE_MODE") : "late");
    prop->uuid.bytes[0] = (char)(1 + device); /* the same device of two processes: the same GPU */
    return cudaSuccess;
}

cudaError_t cudaGetLastError(void)
{
    return cudaSuccess;
}

const char *cudaGetErrorString(cudaError_t err)
{
    return err == cudaErrorNoDevice             ? "FAKE_GPUS=0: no device"
           : err == cudaErrorInsufficientDriver ? "CUDA driver version is insufficient for CUDA runtime version"
                                                : "an error of the fake CUDA";
}

cudaError_t cudaMalloc(void **p, size_t bytes)
{
    *p = malloc(bytes > 0 ? bytes : 1);
    if (*p == NULL)
        return cudaErrorMemoryAllocation;
    memset(*p, 0xff, bytes); /* NaN: reading what was never written poisons the result */
    return cudaSuccess;
}

cudaError_t cudaMallocHost(void **p, size_t bytes)
{
    return cudaMalloc(p, bytes);
}

cudaError_t cudaFree(void *p)
{
    drain_all(); /* (cudaFree waits for the device) */
    free(p);
    return cudaSuccess;
}

cudaError_t cudaFreeHost(void *p)
{
    return cudaFree(p);
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind)
{
    (void)kind; /* the default stream, which does not wait for streams made cudaStreamNonBlocking */
    memmove(dst, src, bytes);
    return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind, cudaStream_t s)
{
    (void)kind;
    enqueue(s, (struct op){.kind = OP_COPY, .dst = dst, .src = src, .bytes = bytes});
    return cudaSuccess;
}

cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                              enum cudaMemcpyKind kind, cudaStream_t s)
{
    (void)kind;
    if (width > dpitch || width > spitch)
        return cudaErrorInvalidPitchValue;
    enqueue(s, (struct op){.kind = OP_COPY2D, .dst = dst, .dpitch = dpitch, .src = src, .spitch = spitch,
                           .width = width, .height = height});
    return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void)
{
    drain_all();
    return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned flags)
{
    (void)flags;
    if (nstreams == MAX_STREAMS)
        fake_fail("too many streams");
    struct fake_stream *s = fake_new(sizeof *s, "a stream");
    streams[nstreams++] = s;
    *stream = (cudaStream_t)s;
    return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    struct fake_stream *s = (struct fake_stream *)stream;
    drain(s, s->n);
    return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t *event)
{
    struct fake_event *e = fake_new(sizeof *e, "an event");
    *event = (cudaEvent_t)e;
    return cudaSuccess;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned flags)
{
    (void)flags;
    return cudaEventCreate(event);
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    struct fake_event *e = (struct fake_event *)event;
    if (stream == NULL)
        fake_fail("an event recorded on the default stream, which this stand-in does not model");
    e->on = (struct fake_stream *)stream;
    e->pos = e->on->n;
    return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
    const struct fake_event *e = (const struct fake_event *)event;
    if (e->on != NULL) /* (an event never recorded is complete) */
        drain(e->on, e->pos);
    return cudaSuccess;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned flags)
{
    (void)flags;
    const struct fake_event *e = (const struct fake_event *)event;
    if (e->on != NULL)
        enqueue(stream, (struct op){.kind = OP_WAIT, .on = e->on, .upto = e->pos});
    return cudaSuccess;
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    (void)start, (void)end;
    *ms = 0.0f; /* no time on a fake device */
    return cudaSuccess;
}

/* ---------------------------------------------------------------- cuBLAS */

/** A handle: the stream its calls go to. */
struct fake_blas {
    cudaStream_t stream;
};

cublasStatus_t cublasCreate_v2(cublasHandle_t *handle)
{
    struct fake_blas *h = fake_new(sizeof *h, "a cuBLAS handle");
    *handle = (cublasHandle_t)h;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream)
{
    ((struct fake_blas *)handle)->stream = stream;
    return CUBLAS_STATUS_SUCCESS;
}

const char *cublasGetStatusString(cublasStatus_t status)
{
    (void)status;
    return "an error of the fake cuBLAS";
}

cublasStatus_t cublasDgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                              int k, const double *alpha, const double *A, int lda, const double *B, int ldb,
                              const double *beta, double *C, int ldc)
{
    if (transa != CUBLAS_OP_N || transb != CUBLAS_OP_N)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    enqueue(((struct fake_blas *)handle)->stream,
            (struct op){.kind = OP_GEMM, .m = m, .n = n, .k = k, .alpha = *alpha, .A = A, .lda = lda, .B = B,
                        .ldb = ldb, .beta = *beta, .C = C, .ldc = ldc});
    return CUBLAS_STATUS_SUCCESS;
}

/* ---------------------------------------------------------------- NCCL, over MPI */
#ifdef HAVE_NCCL

/** A communicator: the MPI communicator of the same ranks. */
struct ncclComm {
    MPI_Comm comm;
};

/* The id names an MPI_Comm_split colour: the creating rank's world rank and how many ids it made. Every
 * rank makes its row's communicator, then its column's, so the splits of the world match up. */
static int ids_made;

ncclResult_t ncclGetUniqueId(ncclUniqueId *id)
{
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    memset(id, 0, sizeof *id);
    const int colour = rank * 1000 + ids_made++;
    memcpy(id->internal, &colour, sizeof colour);
    return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank)
{
    int colour = 0, size = 0;
    memcpy(&colour, id.internal, sizeof colour);
    struct ncclComm *c = fake_new(sizeof *c, "a communicator");
    if (MPI_Comm_split(MPI_COMM_WORLD, colour, rank, &c->comm) != MPI_SUCCESS)
        return ncclSystemError;
    MPI_Comm_size(c->comm, &size);
    if (size != nranks)
        return ncclInvalidUsage;
    *comm = c;
    return ncclSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
    MPI_Comm_free(&comm->comm);
    free(comm);
    return ncclSuccess;
}

const char *ncclGetErrorString(ncclResult_t result)
{
    (void)result;
    return "an error of the fake NCCL";
}

ncclResult_t ncclGroupStart(void)
{
    return ncclSuccess;
}

ncclResult_t ncclGroupEnd(void)
{
    return ncclSuccess;
}

ncclResult_t ncclBroadcast(const void *send, void *recv, size_t count, ncclDataType_t type, int root, ncclComm_t comm,
                           cudaStream_t stream)
{
    if (type != ncclDouble || send != recv) /* summa_gpu.c broadcasts doubles in place */
        return ncclInvalidArgument;
    enqueue(stream, (struct op){.kind = OP_BCAST, .dst = recv, .bytes = count, .root = root, .comm = comm->comm});
    return ncclSuccess;
}

#endif
