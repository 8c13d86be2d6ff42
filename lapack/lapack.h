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
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
#endif
