/**
 * @file
 * @brief The few ScaLAPACK, PBLAS and BLACS routines step 23's baseline calls, declared by hand: Debian's
 *  libscalapack-openmpi-dev installs no C header.
 *
 * INTEGER arguments are C ints (the LP64 build that Debian ships). descinit_ and numroc_ are Fortran
 * (every argument by reference); pdgemm_ is PBLAS, written in C with the Fortran calling convention, and
 * reads its TRANS arguments as plain characters (no hidden lengths); the Cblacs_ routines are BLACS's
 * C interface.
 */
#ifndef GEMM_DIST_PBLAS_H
#define GEMM_DIST_PBLAS_H

#ifdef __cplusplus
extern "C" {
#endif

/** The number of descriptor entries of a dense matrix (DLEN_). */
#define DIST_DESC_LEN 9

/** BLACS: the default system context (what = 0) into @p value. */
void Cblacs_get(int context, int what, int *value);
/** BLACS: a @p nprow x @p npcol process grid in @p context; @p order "Row": rank = row * npcol + col. */
void Cblacs_gridinit(int *context, const char *order, int nprow, int npcol);
/** BLACS: the grid's shape and this process's coordinates (-1 for a process outside the grid). */
void Cblacs_gridinfo(int context, int *nprow, int *npcol, int *myrow, int *mycol);
/** BLACS: release a grid. */
void Cblacs_gridexit(int context);

/** ScaLAPACK: the local rows (or columns) that process @p iproc of @p nprocs owns of @p n cut in blocks of @p nb. */
int numroc_(const int *n, const int *nb, const int *iproc, const int *isrcproc, const int *nprocs);
/** ScaLAPACK: fill the descriptor of an @p m x @p n matrix in @p mb x @p nb blocks, local leading dimension @p lld. */
void descinit_(int *desc, const int *m, const int *n, const int *mb, const int *nb, const int *irsrc,
               const int *icsrc, const int *ictxt, const int *lld, int *info);
/** PBLAS: sub(C) = alpha * op(sub(A)) * op(sub(B)) + beta * sub(C) on block-cyclic matrices. */
void pdgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k, const double *alpha,
             const double *a, const int *ia, const int *ja, const int *desca, const double *b, const int *ib,
             const int *jb, const int *descb, const double *beta, double *c, const int *ic, const int *jc,
             const int *descc);

#ifdef __cplusplus
}
#endif

#endif
