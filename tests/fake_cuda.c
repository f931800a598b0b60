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
 * FAKE_SKEW_STREAM=N,... makes the streams created N-th, ... (from 0) the late ones of skew instead.
 *
 * FAKE_GPUS is the number of devices each process sees (default 1, 0: none); device d of every process
 * has the UUID d, so ranks of a node that pick the same device share it. FAKE_DRIVER=none plays a machine
 * without the NVIDIA driver (no GPU), FAKE_DRIVER=old one whose driver is older than the runtime: the
 * runtime then answers cudaErrorInsufficientDriver, and the driver's version is 0 or 11.0. This is no GPU: it says nothing
 * about speed, kernels or the real libraries' behaviour, only about the host code's ordering.
 *
 * For step 22 (tests/hybrid_fake.sh; its binary linked with the shared CUDA runtime, so that these calls
 * replace the runtime's): the harness's calls too (cublasXt on the host BLAS, synchronous; kernel launches,
 * which do nothing: only cuBLAS computes here), and
 *
 *   FAKE_DEFAULT_STREAM=sync  work on the default stream runs at once (else it stops the run: step 23's
 *                             orchestration must not use it);
 *   FAKE_DEVICE_MEMORY=BYTES  the device's memory (default 80 GiB): cudaMemGetInfo's total, less what
 *                             cudaMalloc holds for its free; a cudaMalloc beyond it fails;
 *   FAKE_PINNED=check         an asynchronous copy whose host side is not pinned (cudaMallocHost) or
 *                             registered (cudaHostRegister) stops the run, as does a cudaHostUnregister
 *                             while a queued copy still uses the memory;
 *   FAKE_REGISTER=fail|failN  every cudaHostRegister fails (as over `ulimit -l`), or only the N-th of the
 *                             process; a range that shares a page with a registered one fails as the
 *                             runtime's does (already registered). A failure is also the last error.
 */
#define _GNU_SOURCE
#include <cublasXt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <malloc.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef HAVE_NCCL
#include <nccl.h>
#endif

/* The host BLAS's DGEMM (column-major, no transposes), declared here to avoid a second BLAS header. */
void cblas_dgemm(int order, int transa, int transb, int m, int n, int k, double alpha, const double *A, int lda,
                 const double *B, int ldb, double beta, double *C, int ldc);
enum { CBLAS_COL_MAJOR = 102, CBLAS_NO_TRANS = 111, MAX_STREAMS = 64, MAX_PINNED = 256, PAGE = 4096 };

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
    const char *host_lo, *host_hi; /**< copies: the host side's bytes [lo, hi) (NULL: none) */
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
static struct fake_stream default_stream; /* FAKE_DEFAULT_STREAM=sync: its work runs at once */
static cudaError_t last_error = cudaSuccess;

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
    if (s == &default_stream)
        return 1;
    const char *mode = getenv("FAKE_MODE");
    if (mode == NULL || strcmp(mode, "late") == 0)
        return 0;
    if (strcmp(mode, "eager") == 0)
        return 1;
    if (strcmp(mode, "skew") == 0) { /* late: the streams FAKE_SKEW_STREAM lists (default: the first) */
        const char *late = getenv("FAKE_SKEW_STREAM") != NULL ? getenv("FAKE_SKEW_STREAM") : "0";
        for (char *end; *late != '\0'; late = *end == ',' ? end + 1 : end) {
            const long i = strtol(late, &end, 10);
            if (end == late)
                fake_fail("FAKE_SKEW_STREAM must list stream numbers, as 0 or 1,2");
            if (i >= 0 && i < nstreams && s == streams[i])
                return 0;
        }
        return 1;
    }
    fake_fail("FAKE_MODE must be late, eager or skew");
    return 0;
}

/** The stream @p stream names: the default stream (NULL) only with FAKE_DEFAULT_STREAM=sync. */
static struct fake_stream *stream_of(cudaStream_t stream)
{
    if (stream != NULL)
        return (struct fake_stream *)stream;
    const char *d = getenv("FAKE_DEFAULT_STREAM");
    if (d == NULL || strcmp(d, "sync") != 0) /* summa_gpu.c uses its own streams only */
        fake_fail("work on the default stream, which this stand-in models only with FAKE_DEFAULT_STREAM=sync");
    return &default_stream;
}

static void enqueue(cudaStream_t stream, struct op o)
{
    struct fake_stream *s = stream_of(stream);
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
    const cudaError_t err = last_error;
    last_error = cudaSuccess;
    return err;
}

const char *cudaGetErrorString(cudaError_t err)
{
    return err == cudaErrorNoDevice                       ? "FAKE_GPUS=0: no device"
           : err == cudaErrorInsufficientDriver           ? "CUDA driver version is insufficient for CUDA runtime version"
           : err == cudaErrorHostMemoryAlreadyRegistered ? "part of the host memory range is already registered"
           : err == cudaErrorHostMemoryNotRegistered     ? "pointer does not correspond to a registered memory region"
           : err == cudaErrorMemoryAllocation            ? "out of memory (FAKE_REGISTER or FAKE_DEVICE_MEMORY)"
                                                          : "an error of the fake CUDA";
}

/* ---------------------------------------------------------------- memory: device, pinned, registered */

static size_t device_used; /* bytes cudaMalloc holds (as malloc_usable_size counts them) */

/** FAKE_DEVICE_MEMORY, the device's memory in bytes (default 80 GiB). */
static size_t device_memory(void)
{
    const char *v = getenv("FAKE_DEVICE_MEMORY");
    return v != NULL ? (size_t)strtoull(v, NULL, 10) : (size_t)80 << 30;
}

/** A host allocation filled with NaN: reading what was never written poisons the result. */
static void *nan_alloc(size_t bytes)
{
    void *p = malloc(bytes > 0 ? bytes : 1);
    if (p != NULL)
        memset(p, 0xff, bytes);
    return p;
}

cudaError_t cudaMalloc(void **p, size_t bytes)
{
    *p = NULL;
    if (bytes > device_memory() - (device_used < device_memory() ? device_used : device_memory()))
        return last_error = cudaErrorMemoryAllocation;
    *p = nan_alloc(bytes);
    if (*p == NULL)
        return last_error = cudaErrorMemoryAllocation;
    device_used += malloc_usable_size(*p);
    return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total)
{
    *total = device_memory();
    *free_bytes = device_used < *total ? *total - device_used : 0;
    return cudaSuccess;
}

cudaError_t cudaFree(void *p)
{
    drain_all(); /* (cudaFree waits for the device) */
    if (p != NULL)
        device_used -= malloc_usable_size(p);
    free(p);
    return cudaSuccess;
}

/** Host memory the copy engines may use: cudaMallocHost's (host_alloc 1) and cudaHostRegister's ranges. */
static struct {
    const char *p;
    size_t bytes;
    int host_alloc;
} pinned[MAX_PINNED];
static int npinned;

static void pin_add(const void *p, size_t bytes, int host_alloc)
{
    if (npinned == MAX_PINNED)
        fake_fail("too many pinned or registered ranges at once");
    pinned[npinned].p = (const char *)p, pinned[npinned].bytes = bytes, pinned[npinned].host_alloc = host_alloc;
    ++npinned;
}

/** The entry whose range begins at @p p, or -1. */
static int pin_find(const void *p, int host_alloc)
{
    for (int i = 0; i < npinned; ++i)
        if (pinned[i].p == (const char *)p && pinned[i].host_alloc == host_alloc)
            return i;
    return -1;
}

static void pin_remove(int i)
{
    pinned[i] = pinned[--npinned];
}

/** Is [lo, hi) inside one pinned or registered range? */
static int is_pinned(const char *lo, const char *hi)
{
    for (int i = 0; i < npinned; ++i)
        if (lo >= pinned[i].p && hi <= pinned[i].p + pinned[i].bytes)
            return 1;
    return 0;
}

cudaError_t cudaMallocHost(void **p, size_t bytes)
{
    *p = nan_alloc(bytes);
    if (*p == NULL)
        return last_error = cudaErrorMemoryAllocation;
    pin_add(*p, bytes, 1);
    return cudaSuccess;
}

cudaError_t cudaFreeHost(void *p)
{
    drain_all();
    const int i = pin_find(p, 1);
    if (p != NULL && i < 0)
        fake_fail("cudaFreeHost of memory that cudaMallocHost did not give");
    if (i >= 0)
        pin_remove(i);
    free(p);
    return cudaSuccess;
}

/** Page-locks [ptr, ptr + size) in place. FAKE_REGISTER=fail fails every call, FAKE_REGISTER=failN the N-th. */
cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned flags)
{
    static int calls;
    (void)flags;
    ++calls;
    const char *f = getenv("FAKE_REGISTER");
    if (f != NULL && (strcmp(f, "fail") == 0 || (strncmp(f, "fail", 4) == 0 && atoi(f + 4) == calls)))
        return last_error = cudaErrorMemoryAllocation;
    if (ptr == NULL || size == 0)
        return last_error = cudaErrorInvalidValue;
    /* the runtime locks whole pages: a range that shares a page with a registered one is refused */
    const uintptr_t lo = (uintptr_t)ptr / PAGE * PAGE, hi = ((uintptr_t)ptr + size + PAGE - 1) / PAGE * PAGE;
    for (int i = 0; i < npinned; ++i) {
        const uintptr_t plo = (uintptr_t)pinned[i].p / PAGE * PAGE;
        const uintptr_t phi = ((uintptr_t)pinned[i].p + pinned[i].bytes + PAGE - 1) / PAGE * PAGE;
        if (!pinned[i].host_alloc && lo < phi && plo < hi)
            return last_error = cudaErrorHostMemoryAlreadyRegistered;
    }
    pin_add(ptr, size, 0);
    return cudaSuccess;
}

cudaError_t cudaHostUnregister(void *ptr)
{
    const int i = pin_find(ptr, 0);
    if (i < 0)
        return last_error = cudaErrorHostMemoryNotRegistered;
    if (getenv("FAKE_PINNED") != NULL) /* a queued copy from or to it would then read or write pageable memory */
        for (int s = 0; s < nstreams; ++s)
            for (size_t o = streams[s]->done; o < streams[s]->n; ++o) {
                const struct op *q = &streams[s]->ops[o];
                if (q->host_lo != NULL && q->host_lo < pinned[i].p + pinned[i].bytes && pinned[i].p < q->host_hi)
                    fake_fail("cudaHostUnregister while a queued copy still uses the memory");
            }
    pin_remove(i);
    return cudaSuccess;
}

/** FAKE_PINNED=check: the host side of an asynchronous copy must be pinned or registered. */
static void check_pinned(const char *lo, const char *hi)
{
    if (lo != NULL && getenv("FAKE_PINNED") != NULL && !is_pinned(lo, hi))
        fake_fail("an asynchronous copy to or from host memory that is neither pinned nor registered");
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind)
{
    (void)kind; /* the default stream, which does not wait for streams made cudaStreamNonBlocking */
    memmove(dst, src, bytes);
    return cudaSuccess;
}

/** The host side of a copy of @p kind, as [*lo, *hi): its source to the device, its destination from it. */
static void host_side(enum cudaMemcpyKind kind, const void *dst, const void *src, size_t extent, const char **lo,
                      const char **hi)
{
    const void *h = kind == cudaMemcpyHostToDevice ? src : kind == cudaMemcpyDeviceToHost ? dst : NULL;
    *lo = (const char *)h, *hi = h != NULL ? (const char *)h + extent : NULL;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind, cudaStream_t s)
{
    struct op o = {.kind = OP_COPY, .dst = dst, .src = src, .bytes = bytes};
    host_side(kind, dst, src, bytes, &o.host_lo, &o.host_hi);
    check_pinned(o.host_lo, o.host_hi);
    enqueue(s, o);
    return cudaSuccess;
}

cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                              enum cudaMemcpyKind kind, cudaStream_t s)
{
    if (width > dpitch || width > spitch)
        return last_error = cudaErrorInvalidPitchValue;
    struct op o = {.kind = OP_COPY2D, .dst = dst, .dpitch = dpitch, .src = src, .spitch = spitch, .width = width,
                   .height = height};
    const size_t pitch = kind == cudaMemcpyHostToDevice ? spitch : dpitch;
    if (height > 0)
        host_side(kind, dst, src, pitch * (height - 1) + width, &o.host_lo, &o.host_hi);
    check_pinned(o.host_lo, o.host_hi);
    enqueue(s, o);
    return cudaSuccess;
}

cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                         enum cudaMemcpyKind kind)
{
    (void)kind; /* the default stream, which does not wait for streams made cudaStreamNonBlocking */
    if (width > dpitch || width > spitch)
        return last_error = cudaErrorInvalidPitchValue;
    for (size_t r = 0; r < height; ++r)
        memmove((char *)dst + r * dpitch, (const char *)src + r * spitch, width);
    return cudaSuccess;
}

cudaError_t cudaMemset(void *p, int value, size_t bytes)
{
    memset(p, value, bytes);
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
    struct fake_stream *s = stream_of(stream);
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

cudaError_t cudaEventDestroy(cudaEvent_t event)
{
    free(event);
    return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    struct fake_event *e = (struct fake_event *)event;
    e->on = stream_of(stream);
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

cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
    (void)device;
    *value = attr == cudaDevAttrMultiProcessorCount ? 1 : 0;
    return cudaSuccess;
}

cudaError_t cudaGetDevice(int *device)
{
    *device = 0;
    return cudaSuccess;
}

/* Kernel launches (the harness measures the device's peak with one): accepted, and nothing runs. */
unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shared, struct CUstream_st *stream)
{
    (void)grid, (void)block, (void)shared, (void)stream;
    return 0;
}

cudaError_t __cudaPopCallConfiguration(dim3 *grid, dim3 *block, size_t *shared, void *stream)
{
    memset(grid, 0, sizeof *grid), memset(block, 0, sizeof *block);
    *shared = 0;
    *(cudaStream_t *)stream = NULL;
    return cudaSuccess;
}

cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *fun)
{
    *kernel = (cudaKernel_t)fun;
    return cudaSuccess;
}

cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void **args, size_t shared,
                               cudaStream_t stream)
{
    (void)kernel, (void)grid, (void)block, (void)args, (void)shared, (void)stream;
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

cublasStatus_t cublasDestroy_v2(cublasHandle_t handle)
{
    free(handle);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetVersion_v2(cublasHandle_t handle, int *version)
{
    (void)handle;
    *version = CUBLAS_VERSION;
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

/* cublasXt (the hybrid step's baseline): the host BLAS on the host arrays, at once. */
cublasStatus_t cublasXtCreate(cublasXtHandle_t *handle)
{
    *handle = (cublasXtHandle_t)fake_new(1, "a cublasXt handle");
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasXtDestroy(cublasXtHandle_t handle)
{
    free(handle);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasXtDeviceSelect(cublasXtHandle_t handle, int devices, int ids[])
{
    (void)handle, (void)ids;
    return devices == 1 ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_SUPPORTED;
}

cublasStatus_t cublasXtSetBlockDim(cublasXtHandle_t handle, int dim)
{
    (void)handle;
    return dim > 0 ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}

cublasStatus_t cublasXtDgemm(cublasXtHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, size_t m,
                             size_t n, size_t k, const double *alpha, const double *A, size_t lda, const double *B,
                             size_t ldb, const double *beta, double *C, size_t ldc)
{
    (void)handle;
    if (transa != CUBLAS_OP_N || transb != CUBLAS_OP_N)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    cblas_dgemm(CBLAS_COL_MAJOR, CBLAS_NO_TRANS, CBLAS_NO_TRANS, (int)m, (int)n, (int)k, *alpha, A, (int)lda, B,
                (int)ldb, *beta, C, (int)ldc);
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
