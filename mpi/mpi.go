//go:build mpi

// Package mpi is a thin cgo binding to the MPI C API (Open MPI): start and
// stop, rank and size, and the collectives kdual's distributed solvers use
// (Allreduce, Allgatherv, Reduce_scatter, Bcast, Barrier, Abort). The error handler of
// MPI_COMM_WORLD is set to return codes, which become Go errors naming the
// call and the rank. It builds only with the build tag mpi (make builds
// bin/kdual with it when Open MPI is installed), so machines without MPI
// build everything else unchanged.
//
// MPI is initialised with MPI_THREAD_FUNNELED: every call must come from
// the goroutine that called Init, locked to its OS thread (Init does the
// locking).
package mpi

/*
#cgo pkg-config: ompi-c
#include <mpi.h>
#include <stdlib.h>

static int kd_init(int *provided) {
	int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, provided);
	if (rc != MPI_SUCCESS) return rc;
	return MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}
static int kd_rank(int *r) { return MPI_Comm_rank(MPI_COMM_WORLD, r); }
static int kd_size(int *s) { return MPI_Comm_size(MPI_COMM_WORLD, s); }
static int kd_allreduce_sum(double *x, int n) {
	return MPI_Allreduce(MPI_IN_PLACE, x, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}
static int kd_allreduce_max(double *x, int n) {
	return MPI_Allreduce(MPI_IN_PLACE, x, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
}
static int kd_allreduce_sum_long(long long *x, int n) {
	return MPI_Allreduce(MPI_IN_PLACE, x, n, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
}
static int kd_allgatherv(double *send, int count, double *recv, int *counts, int *displs) {
	return MPI_Allgatherv(send, count, MPI_DOUBLE, recv, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD);
}
static int kd_reduce_scatter(double *send, double *recv, int *counts) {
	return MPI_Reduce_scatter(send, recv, counts, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}
static int kd_bcast(double *x, int n, int root) {
	return MPI_Bcast(x, n, MPI_DOUBLE, root, MPI_COMM_WORLD);
}
static int kd_barrier(void) { return MPI_Barrier(MPI_COMM_WORLD); }
static int kd_abort(int code) { return MPI_Abort(MPI_COMM_WORLD, code); }
static int kd_finalize(void) { return MPI_Finalize(); }
static int kd_initialized(int *flag) { return MPI_Initialized(flag); }
static void kd_error_string(int code, char *buf, int *len) { MPI_Error_string(code, buf, len); }
*/
import "C"

import (
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"
)

// ErrMPI is wrapped by every error of an MPI call.
var ErrMPI = errors.New("mpi")

var rank = -1

func check(call string, rc C.int) error {
	if rc == C.MPI_SUCCESS {
		return nil
	}
	buf := make([]byte, C.MPI_MAX_ERROR_STRING)
	var n C.int
	C.kd_error_string(rc, (*C.char)(unsafe.Pointer(&buf[0])), &n)
	return fmt.Errorf("%w: %s on rank %d: %s", ErrMPI, call, rank, string(buf[:n]))
}

// Init starts MPI and locks the calling goroutine to its thread (every
// later call must come from it).
func Init() error {
	runtime.LockOSThread()
	var provided C.int
	if err := check("MPI_Init_thread", C.kd_init(&provided)); err != nil {
		return err
	}
	if provided < C.MPI_THREAD_FUNNELED {
		return fmt.Errorf("%w: the MPI library gives thread level %d, kdual needs MPI_THREAD_FUNNELED", ErrMPI, int(provided))
	}
	var r C.int
	if err := check("MPI_Comm_rank", C.kd_rank(&r)); err != nil {
		return err
	}
	rank = int(r)
	return nil
}

// Initialized reports whether Init has run.
func Initialized() bool {
	var f C.int
	C.kd_initialized(&f)
	return f != 0
}

// Finalize stops MPI.
func Finalize() error { return check("MPI_Finalize", C.kd_finalize()) }

// Rank returns this process's rank in MPI_COMM_WORLD.
func Rank() int { return rank }

// Size returns the number of ranks.
func Size() (int, error) {
	var s C.int
	if err := check("MPI_Comm_size", C.kd_size(&s)); err != nil {
		return 0, err
	}
	return int(s), nil
}

// AllreduceSum replaces each x[i] by its sum over the ranks.
func AllreduceSum(x []float64) error {
	defer watch("MPI_Allreduce")()
	if len(x) == 0 {
		return nil
	}
	return check("MPI_Allreduce", C.kd_allreduce_sum((*C.double)(&x[0]), C.int(len(x))))
}

// AllreduceMax replaces each x[i] by its maximum over the ranks.
func AllreduceMax(x []float64) error {
	defer watch("MPI_Allreduce")()
	if len(x) == 0 {
		return nil
	}
	return check("MPI_Allreduce", C.kd_allreduce_max((*C.double)(&x[0]), C.int(len(x))))
}

// AllreduceSumInt64 replaces each x[i] by its sum over the ranks.
func AllreduceSumInt64(x []int64) error {
	defer watch("MPI_Allreduce")()
	if len(x) == 0 {
		return nil
	}
	return check("MPI_Allreduce", C.kd_allreduce_sum_long((*C.longlong)(unsafe.Pointer(&x[0])), C.int(len(x))))
}

// Allgatherv concatenates every rank's send into recv in rank order:
// rank r's part goes to recv[displs[r] : displs[r]+counts[r]], and
// len(send) must be counts[Rank()].
func Allgatherv(send, recv []float64, counts, displs []int) error {
	defer watch("MPI_Allgatherv")()
	size, err := Size()
	if err != nil {
		return err
	}
	if len(counts) != size || len(displs) != size || len(send) != counts[rank] {
		return fmt.Errorf("%w: Allgatherv: %d counts, %d displacements for %d ranks, %d values to send (want %d)",
			ErrMPI, len(counts), len(displs), size, len(send), counts[min(rank, len(counts)-1)])
	}
	cc := make([]C.int, size)
	cd := make([]C.int, size)
	for i := range cc {
		if displs[i]+counts[i] > len(recv) {
			return fmt.Errorf("%w: Allgatherv: rank %d's part ends at %d, recv holds %d", ErrMPI, i, displs[i]+counts[i], len(recv))
		}
		cc[i], cd[i] = C.int(counts[i]), C.int(displs[i])
	}
	var sp *C.double
	if len(send) > 0 {
		sp = (*C.double)(&send[0])
	}
	return check("MPI_Allgatherv", C.kd_allgatherv(sp, C.int(len(send)), (*C.double)(&recv[0]), &cc[0], &cd[0]))
}

// ReduceScatterSum sums send over the ranks element by element and gives
// rank r the part [Σ_{q<r} counts[q], Σ_{q≤r} counts[q]) of the sum in
// recv (len(recv) ≥ counts[Rank()]; len(send) = Σ counts).
func ReduceScatterSum(send, recv []float64, counts []int) error {
	defer watch("MPI_Reduce_scatter")()
	size, err := Size()
	if err != nil {
		return err
	}
	total := 0
	for _, c := range counts {
		total += c
	}
	if len(counts) != size || len(send) != total || len(recv) < counts[min(rank, len(counts)-1)] || total > math.MaxInt32 {
		return fmt.Errorf("%w: ReduceScatter: %d counts for %d ranks, %d values to send (want %d), %d to receive", ErrMPI, len(counts), size, len(send), total, len(recv))
	}
	cc := make([]C.int, size)
	for i, c := range counts {
		cc[i] = C.int(c)
	}
	var rp *C.double
	if len(recv) > 0 {
		rp = (*C.double)(&recv[0])
	}
	return check("MPI_Reduce_scatter", C.kd_reduce_scatter((*C.double)(&send[0]), rp, &cc[0]))
}

// Bcast copies root's x to every rank's x.
func Bcast(x []float64, root int) error {
	defer watch("MPI_Bcast")()
	if len(x) == 0 {
		return nil
	}
	return check("MPI_Bcast", C.kd_bcast((*C.double)(&x[0]), C.int(len(x)), C.int(root)))
}

// Barrier waits for every rank.
func Barrier() error {
	defer watch("MPI_Barrier")()
	return check("MPI_Barrier", C.kd_barrier())
}

// Abort ends every rank of the job with code.
func Abort(code int) { C.kd_abort(C.int(code)) }

// The collective watchdog. A rank that waits in one collective longer than
// the timeout (a rank stopped, hung, or on another path) writes which
// collective it waited in and for how long, and exits with status 3, so
// that mpirun ends the whole job. MPI is initialised MPI_THREAD_FUNNELED:
// the watchdog's goroutine makes no MPI call, it only exits.
var timeout atomic.Int64 // nanoseconds; 0: no watchdog

// SetTimeout sets the longest wait in one collective (0: none, the
// default).
func SetTimeout(d time.Duration) { timeout.Store(int64(max(d, 0))) }

// Timeout returns the watchdog's timeout (0: none).
func Timeout() time.Duration { return time.Duration(timeout.Load()) }

// stalled is what the watchdog does when a wait is too long; tests
// replace it.
var stalled = func(call string, waited time.Duration) {
	fmt.Fprintf(os.Stderr, "kdual: rank %d: waited %v in %s for the other ranks (one stopped, hung or took another path); ending the job (--mpi-timeout)\n", rank, waited.Round(time.Second), call)
	os.Exit(3)
}

// watch arms the watchdog for one collective and returns its disarm.
func watch(call string) func() {
	d := Timeout()
	if d <= 0 {
		return func() {}
	}
	t := time.AfterFunc(d, func() { stalled(call, d) })
	return func() { t.Stop() }
}
