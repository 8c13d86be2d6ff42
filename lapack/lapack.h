#ifndef KDUAL_LAPACK_H
#define KDUAL_LAPACK_H
#include <stddef.h>

// Prototypes of the Fortran LAPACK routines inside libopenblas (32-bit
// integers, as Debian builds it). CHARACTER arguments carry hidden length
// arguments appended after all others, as LAPACK_FORTRAN_STRLEN_END does;
// every call below passes them (always 1).
void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda,
	double* w, double* work, const int* lwork, int* iwork, const int* liwork, int* info,
	size_t, size_t);
void dsyevr_(const char* jobz, const char* range, const char* uplo, const int* n,
	double* a, const int* lda, const double* vl, const double* vu, const int* il,
	const int* iu, const double* abstol, int* m, double* w, double* z, const int* ldz,
	int* isuppz, double* work, const int* lwork, int* iwork, const int* liwork, int* info,
	size_t, size_t, size_t);
void dstevr_(const char* jobz, const char* range, const int* n, double* d, double* e,
	const double* vl, const double* vu, const int* il, const int* iu, const double* abstol,
	int* m, double* w, double* z, const int* ldz, int* isuppz, double* work,
	const int* lwork, int* iwork, const int* liwork, int* info, size_t, size_t);
void dsterf_(const int* n, double* d, double* e, int* info);
void dstebz_(const char* range, const char* order, const int* n, const double* vl, const double* vu,
	const int* il, const int* iu, const double* abstol, const double* d, const double* e, int* m,
	int* nsplit, double* w, int* iblock, int* isplit, double* work, int* iwork, int* info, size_t, size_t);
void dstein_(const int* n, const double* d, const double* e, const int* m, const double* w,
	const int* iblock, const int* isplit, double* z, const int* ldz, double* work, int* iwork,
	int* ifail, int* info);
void dgesdd_(const char* jobz, const int* m, const int* n, double* a, const int* lda,
	double* s, double* u, const int* ldu, double* vt, const int* ldvt, double* work,
	const int* lwork, int* iwork, int* info, size_t);
void dgeqrf_(const int* m, const int* n, double* a, const int* lda, double* tau,
	double* work, const int* lwork, int* info);
void dorgqr_(const int* m, const int* n, const int* k, double* a, const int* lda,
	const double* tau, double* work, const int* lwork, int* info);
void dgelqf_(const int* m, const int* n, double* a, const int* lda, double* tau,
	double* work, const int* lwork, int* info);
void dorglq_(const int* m, const int* n, const int* k, double* a, const int* lda,
	const double* tau, double* work, const int* lwork, int* info);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info, size_t);
void dpotrs_(const char* uplo, const int* n, const int* nrhs, const double* a,
	const int* lda, double* b, const int* ldb, int* info, size_t);
void dsygvd_(const int* itype, const char* jobz, const char* uplo, const int* n, double* a,
	const int* lda, double* b, const int* ldb, double* w, double* work, const int* lwork,
	int* iwork, const int* liwork, int* info, size_t, size_t);
void dsygst_(const int* itype, const char* uplo, const int* n, double* a, const int* lda,
	const double* b, const int* ldb, int* info, size_t);
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
// Routines behind the gonum lapack.Float64 implementation (package lapack/gonum).
void dgecon_(const char* norm, const int* n, const double* a, const int* lda, const double* anorm,
	double* rcond, double* work, int* iwork, int* info, size_t);
void dgeev_(const char* jobvl, const char* jobvr, const int* n, double* a, const int* lda,
	double* wr, double* wi, double* vl, const int* ldvl, double* vr, const int* ldvr,
	double* work, const int* lwork, int* info, size_t, size_t);
void dgels_(const char* trans, const int* m, const int* n, const int* nrhs, double* a,
	const int* lda, double* b, const int* ldb, double* work, const int* lwork, int* info, size_t);
void dgeqp3_(const int* m, const int* n, double* a, const int* lda, int* jpvt, double* tau,
	double* work, const int* lwork, int* info);
void dgetri_(const int* n, double* a, const int* lda, const int* ipiv, double* work,
	const int* lwork, int* info);
void dgetrs_(const char* trans, const int* n, const int* nrhs, const double* a, const int* lda,
	const int* ipiv, double* b, const int* ldb, int* info, size_t);
void dggsvd3_(const char* jobu, const char* jobv, const char* jobq, const int* m, const int* n,
	const int* p, int* k, int* l, double* a, const int* lda, double* b, const int* ldb,
	double* alpha, double* beta, double* u, const int* ldu, double* v, const int* ldv,
	double* q, const int* ldq, double* work, const int* lwork, int* iwork, int* info,
	size_t, size_t, size_t);
double dlange_(const char* norm, const int* m, const int* n, const double* a, const int* lda,
	double* work, size_t);
double dlansy_(const char* norm, const char* uplo, const int* n, const double* a, const int* lda,
	double* work, size_t, size_t);
double dlantr_(const char* norm, const char* uplo, const char* diag, const int* m, const int* n,
	const double* a, const int* lda, double* work, size_t, size_t, size_t);
void dlapmr_(const int* forwrd, const int* m, const int* n, double* x, const int* ldx, int* k);
void dlapmt_(const int* forwrd, const int* m, const int* n, double* x, const int* ldx, int* k);
void dormqr_(const char* side, const char* trans, const int* m, const int* n, const int* k,
	const double* a, const int* lda, const double* tau, double* c, const int* ldc,
	double* work, const int* lwork, int* info, size_t, size_t);
void dormlq_(const char* side, const char* trans, const int* m, const int* n, const int* k,
	const double* a, const int* lda, const double* tau, double* c, const int* ldc,
	double* work, const int* lwork, int* info, size_t, size_t);
void dpbcon_(const char* uplo, const int* n, const int* kd, const double* ab, const int* ldab,
	const double* anorm, double* rcond, double* work, int* iwork, int* info, size_t);
void dpbtrf_(const char* uplo, const int* n, const int* kd, double* ab, const int* ldab,
	int* info, size_t);
void dpbtrs_(const char* uplo, const int* n, const int* kd, const int* nrhs, const double* ab,
	const int* ldab, double* b, const int* ldb, int* info, size_t);
void dpocon_(const char* uplo, const int* n, const double* a, const int* lda, const double* anorm,
	double* rcond, double* work, int* iwork, int* info, size_t);
void dpotri_(const char* uplo, const int* n, double* a, const int* lda, int* info, size_t);
void dpstrf_(const char* uplo, const int* n, double* a, const int* lda, int* piv, int* rank,
	const double* tol, double* work, int* info, size_t);
void dtbtrs_(const char* uplo, const char* trans, const char* diag, const int* n, const int* kd,
	const int* nrhs, const double* ab, const int* ldab, double* b, const int* ldb, int* info,
	size_t, size_t, size_t);
void dtrcon_(const char* norm, const char* uplo, const char* diag, const int* n, const double* a,
	const int* lda, double* rcond, double* work, int* iwork, int* info, size_t, size_t, size_t);
void dtrtri_(const char* uplo, const char* diag, const int* n, double* a, const int* lda,
	int* info, size_t, size_t);
void dtrtrs_(const char* uplo, const char* trans, const char* diag, const int* n, const int* nrhs,
	const double* a, const int* lda, double* b, const int* ldb, int* info, size_t, size_t, size_t);
void dlacn2_(const int* n, double* v, double* x, int* isgn, double* est, int* kase, int* isave);
void dlatrs_(const char* uplo, const char* trans, const char* diag, const char* normin,
	const int* n, const double* a, const int* lda, double* x, double* scale, double* cnorm,
	int* info, size_t, size_t, size_t, size_t);
void drscl_(const int* n, const double* sa, double* sx, const int* incx);
void dtrsv_(const char* uplo, const char* trans, const char* diag, const int* n, const double* a,
	const int* lda, double* x, const int* incx, size_t, size_t, size_t);
#endif
