/**
 * @file
 * @brief Step 23's SUMMA, the parts that both of its homes share: the panels and a rank's view of the
 *        matrices. kernel.c runs SUMMA on host memory (local=cpu|hybrid); summa_gpu.c on each rank's GPU
 *        (local=gpu), where nvcc and the CUDA libraries are.
 */
#ifndef STEP23_SUMMA_H
#define STEP23_SUMMA_H

#include "dist.h"
#include "dist_layout.h"

/** One panel of K: columns [k0, k0 + w) of A and rows [k0, k0 + w) of B. */
struct panel {
    int k0;     /**< the panel's first index of K */
    int w;      /**< its width */
    int a_root; /**< the process column that owns A's columns of the panel: the root of the row broadcast */
    int b_root; /**< the process row that owns B's rows of the panel: the root of the column broadcast */
    int a_col;  /**< the panel's first column in its owner's block of A */
    int b_row;  /**< the panel's first row in its owner's block of B */
};

/** The shape of this rank's blocks, and the caller's arrays (host or device memory, as the caller's). */
struct local {
    const struct dist_grid *g; /**< the grid, its communicators and this rank's place */
    int m;                     /**< global rows of A and C */
    int n;                     /**< global columns of B and C */
    int k;                     /**< global K */
    struct dist_range rows;    /**< this rank's rows of A and C */
    struct dist_range cols;    /**< this rank's columns of B and C */
    const double *A;           /**< this rank's block of A */
    const double *B;           /**< this rank's block of B */
    int lda;                   /**< A's leading dimension */
    int ldb;                   /**< B's leading dimension */
};

/** The panel that starts at @p k0: at most @p width wide, and ending at the next edge of a block of A's
 *  columns (K cut Q ways) or of B's rows (K cut P ways), whichever comes first. */
struct panel summa_panel_at(const struct local *L, int k0, int width);

/** Bytes of panel @p p that this rank receives (not those it broadcasts). */
double summa_received(const struct local *L, const struct panel *p);

/* ---- local=gpu (summa_gpu.c) */

/** Parses gpu=cublas|own, share=0|1, bcast=nccl|host; binds every rank to a GPU (collective: a rank
 *  without one, or more ranks on a node than GPUs without share=1, ends every rank with one line, exit 4). */
const char *summa_gpu_configure(int nparams, const char *const *params, char *desc, unsigned desclen);

/** Where the harness keeps A, B and C for local=gpu: this rank's GPU. */
const struct dist_memory *summa_gpu_memory(void);

/** SUMMA with every block and panel in device memory: C += the panels' products on this rank's GPU, the
 *  panels broadcast through NCCL (or staged through host memory and MPI), @p overlap as on the host. */
void summa_gpu(const struct local *L, double alpha, double beta, double *C, int ldc, int width, int overlap,
               struct dist_stats *st);

#endif
