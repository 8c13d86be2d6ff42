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
#include <time.h>
#include <sched.h>

// Arrivals: on entering its k-th collective each rank sends one message
// to every other rank on a private communicator; a rank that waits too
// long in a collective names the ranks whose k-th message has not come.
static MPI_Comm kd_arrive_comm = MPI_COMM_NULL;
static int kd_size_ = 1, kd_rank_ = 0;
static long long kd_seq = 0;           // collectives this rank has entered
static long long *kd_arrived = NULL;   // per rank: arrival messages received
static long long *kd_inbox = NULL;     // per rank: one receive buffer
static MPI_Request *kd_rreq = NULL;    // per rank: the posted receive
static const long long kd_token = 1;   // what an arrival message carries

static int kd_init(int *provided) {
	int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, provided);
	if (rc != MPI_SUCCESS) return rc;
	if ((rc = MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)) != MPI_SUCCESS) return rc;
	if ((rc = MPI_Comm_size(MPI_COMM_WORLD, &kd_size_)) != MPI_SUCCESS) return rc;
	if ((rc = MPI_Comm_rank(MPI_COMM_WORLD, &kd_rank_)) != MPI_SUCCESS) return rc;
	if ((rc = MPI_Comm_dup(MPI_COMM_WORLD, &kd_arrive_comm)) != MPI_SUCCESS) return rc;
	kd_arrived = calloc(kd_size_, sizeof(long long));
	kd_inbox = calloc(kd_size_, sizeof(long long));
	kd_rreq = calloc(kd_size_, sizeof(MPI_Request));
	for (int r = 0; r < kd_size_; r++) {
		kd_rreq[r] = MPI_REQUEST_NULL;
		if (r == kd_rank_) continue;
		if ((rc = MPI_Irecv(&kd_inbox[r], 1, MPI_LONG_LONG, r, 0, kd_arrive_comm, &kd_rreq[r])) != MPI_SUCCESS) return rc;
	}
	return MPI_SUCCESS;
}

// kd_poll counts the arrival messages that have come.
static int kd_poll(void) {
	for (int r = 0; r < kd_size_; r++) {
		while (kd_rreq != NULL && kd_rreq[r] != MPI_REQUEST_NULL) {
			int flag = 0, rc = MPI_Test(&kd_rreq[r], &flag, MPI_STATUS_IGNORE);
			if (rc != MPI_SUCCESS) return rc;
			if (!flag) break;
			kd_arrived[r]++;
			if ((rc = MPI_Irecv(&kd_inbox[r], 1, MPI_LONG_LONG, r, 0, kd_arrive_comm, &kd_rreq[r])) != MPI_SUCCESS) return rc;
		}
	}
	return MPI_SUCCESS;
}

// kd_enter announces this rank's next collective to every other rank.
static int kd_enter(void) {
	kd_seq++;
	for (int r = 0; r < kd_size_; r++) {
		if (r == kd_rank_) continue;
		MPI_Request q;
		int rc = MPI_Isend(&kd_token, 1, MPI_LONG_LONG, r, 0, kd_arrive_comm, &q);
		if (rc != MPI_SUCCESS) return rc;
		if ((rc = MPI_Request_free(&q)) != MPI_SUCCESS) return rc;
	}
	return MPI_SUCCESS;
}

// kd_wait completes req, polling on this thread: with timeout > 0 it gives
// up after that many seconds and sets *late (req is then left pending).
static int kd_wait(MPI_Request *req, double timeout, int *late) {
	*late = 0;
	if (timeout <= 0) return MPI_Wait(req, MPI_STATUS_IGNORE);
	double start = MPI_Wtime();
	for (long spins = 0;; spins++) {
		int flag = 0, rc = MPI_Test(req, &flag, MPI_STATUS_IGNORE);
		if (rc != MPI_SUCCESS || flag) return rc;
		if ((rc = kd_poll()) != MPI_SUCCESS) return rc;
		if (MPI_Wtime() - start > timeout) { *late = 1; return MPI_SUCCESS; }
		if (spins < 2000) {
			sched_yield();
		} else {
			struct timespec ts = {0, 100000}; // 0.1 ms
			nanosleep(&ts, NULL);
		}
	}
}

// kd_missing writes the ranks that have not entered this rank's latest
// collective to out (at most cap) and returns how many there are.
static int kd_missing(int *out, int cap) {
	kd_poll();
	int k = 0;
	for (int r = 0; r < kd_size_; r++) {
		if (r != kd_rank_ && kd_arrived[r] < kd_seq) {
			if (k < cap) out[k] = r;
			k++;
		}
	}
	return k;
}

static int kd_allreduce(double *x, int n, int max, double timeout, int *late) {
	MPI_Request q;
	int rc = kd_enter();
	if (rc != MPI_SUCCESS) return rc;
	rc = MPI_Iallreduce(MPI_IN_PLACE, x, n, MPI_DOUBLE, max ? MPI_MAX : MPI_SUM, MPI_COMM_WORLD, &q);
	return rc != MPI_SUCCESS ? rc : kd_wait(&q, timeout, late);
}
static int kd_allreduce_sum_long(long long *x, int n, double timeout, int *late) {
	MPI_Request q;
	int rc = kd_enter();
	if (rc != MPI_SUCCESS) return rc;
	rc = MPI_Iallreduce(MPI_IN_PLACE, x, n, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD, &q);
	return rc != MPI_SUCCESS ? rc : kd_wait(&q, timeout, late);
}
static int kd_allgatherv(double *send, int count, double *recv, int *counts, int *displs, double timeout, int *late) {
	MPI_Request q;
	int rc = kd_enter();
	if (rc != MPI_SUCCESS) return rc;
	rc = MPI_Iallgatherv(send, count, MPI_DOUBLE, recv, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD, &q);
	return rc != MPI_SUCCESS ? rc : kd_wait(&q, timeout, late);
}
static int kd_reduce_scatter(double *send, double *recv, int *counts, double timeout, int *late) {
	MPI_Request q;
	int rc = kd_enter();
	if (rc != MPI_SUCCESS) return rc;
	rc = MPI_Ireduce_scatter(send, recv, counts, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &q);
	return rc != MPI_SUCCESS ? rc : kd_wait(&q, timeout, late);
}
static int kd_bcast(double *x, int n, int root, double timeout, int *late) {
	MPI_Request q;
	int rc = kd_enter();
	if (rc != MPI_SUCCESS) return rc;
	rc = MPI_Ibcast(x, n, MPI_DOUBLE, root, MPI_COMM_WORLD, &q);
	return rc != MPI_SUCCESS ? rc : kd_wait(&q, timeout, late);
}
static int kd_barrier(double timeout, int *late) {
	MPI_Request q;
	int rc = kd_enter();
	if (rc != MPI_SUCCESS) return rc;
	rc = MPI_Ibarrier(MPI_COMM_WORLD, &q);
	return rc != MPI_SUCCESS ? rc : kd_wait(&q, timeout, late);
}
static int kd_rank(int *r) { return MPI_Comm_rank(MPI_COMM_WORLD, r); }
static int kd_size(int *s) { return MPI_Comm_size(MPI_COMM_WORLD, s); }
static int kd_abort(int code) { return MPI_Abort(MPI_COMM_WORLD, code); }

// kd_finalize takes the arrival messages still on their way (every rank
// entered the same collectives), cancels the posted receives and stops MPI.
static int kd_finalize(void) {
	double start = MPI_Wtime();
	for (;;) {
		int rc = kd_poll(), pending = 0;
		if (rc != MPI_SUCCESS) return rc;
		for (int r = 0; r < kd_size_; r++) pending += r != kd_rank_ && kd_arrived[r] < kd_seq;
		if (!pending || MPI_Wtime() - start > 10) break;
		sched_yield();
	}
	for (int r = 0; kd_rreq != NULL && r < kd_size_; r++) {
		if (kd_rreq[r] == MPI_REQUEST_NULL) continue;
		MPI_Cancel(&kd_rreq[r]);
		MPI_Wait(&kd_rreq[r], MPI_STATUS_IGNORE);
	}
	if (kd_arrive_comm != MPI_COMM_NULL) MPI_Comm_free(&kd_arrive_comm);
	return MPI_Finalize();
}
static long long kd_seq_now(void) { return kd_seq; }
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
	"strings"
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
	if len(x) == 0 {
		return nil
	}
	return collective("MPI_Allreduce", func(t C.double, late *C.int) C.int {
		return C.kd_allreduce((*C.double)(&x[0]), C.int(len(x)), 0, t, late)
	})
}

// AllreduceMax replaces each x[i] by its maximum over the ranks.
func AllreduceMax(x []float64) error {
	if len(x) == 0 {
		return nil
	}
	return collective("MPI_Allreduce", func(t C.double, late *C.int) C.int {
		return C.kd_allreduce((*C.double)(&x[0]), C.int(len(x)), 1, t, late)
	})
}

// AllreduceSumInt64 replaces each x[i] by its sum over the ranks.
func AllreduceSumInt64(x []int64) error {
	if len(x) == 0 {
		return nil
	}
	return collective("MPI_Allreduce", func(t C.double, late *C.int) C.int {
		return C.kd_allreduce_sum_long((*C.longlong)(unsafe.Pointer(&x[0])), C.int(len(x)), t, late)
	})
}

// Allgatherv concatenates every rank's send into recv in rank order:
// rank r's part goes to recv[displs[r] : displs[r]+counts[r]], and
// len(send) must be counts[Rank()].
func Allgatherv(send, recv []float64, counts, displs []int) error {
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
	return collective("MPI_Allgatherv", func(t C.double, late *C.int) C.int {
		return C.kd_allgatherv(sp, C.int(len(send)), (*C.double)(&recv[0]), &cc[0], &cd[0], t, late)
	})
}

// ReduceScatterSum sums send over the ranks element by element and gives
// rank r the part [Σ_{q<r} counts[q], Σ_{q≤r} counts[q]) of the sum in
// recv (len(recv) ≥ counts[Rank()]; len(send) = Σ counts).
func ReduceScatterSum(send, recv []float64, counts []int) error {
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
	return collective("MPI_Reduce_scatter", func(t C.double, late *C.int) C.int {
		return C.kd_reduce_scatter((*C.double)(&send[0]), rp, &cc[0], t, late)
	})
}

// Bcast copies root's x to every rank's x.
func Bcast(x []float64, root int) error {
	if len(x) == 0 {
		return nil
	}
	return collective("MPI_Bcast", func(t C.double, late *C.int) C.int {
		return C.kd_bcast((*C.double)(&x[0]), C.int(len(x)), C.int(root), t, late)
	})
}

// Barrier waits for every rank.
func Barrier() error {
	return collective("MPI_Barrier", func(t C.double, late *C.int) C.int { return C.kd_barrier(t, late) })
}

// Abort ends every rank of the job with code.
func Abort(code int) { C.kd_abort(C.int(code)) }

// The collective watchdog. Every collective is started non-blocking and
// completed by polling on the calling thread (MPI is initialised
// MPI_THREAD_FUNNELED: no other thread makes MPI calls); a rank that waits
// in one collective longer than the timeout (a rank stopped, hung, or on
// another path) writes which collective it waited in, for how long, and
// which ranks had not entered it (each rank announces every collective it
// enters to the others with a small message on a private communicator),
// then exits with status 3, so that mpirun ends the whole job.
var timeout atomic.Int64 // nanoseconds; 0: no watchdog

// SetTimeout sets the longest wait in one collective (0: none, the
// default).
func SetTimeout(d time.Duration) { timeout.Store(int64(max(d, 0))) }

// Timeout returns the watchdog's timeout (0: none).
func Timeout() time.Duration { return time.Duration(timeout.Load()) }

// stalled is what the watchdog does when a wait is too long.
var stalled = func(call string, seq int64, waited time.Duration, missing []int) {
	who := "every rank had entered it (one stopped inside it)"
	if len(missing) > 0 {
		ranks := make([]string, len(missing))
		for i, r := range missing {
			ranks[i] = fmt.Sprint(r)
		}
		who = "rank(s) " + strings.Join(ranks, ", ") + " had not entered it (stopped, hung or on another path)"
	}
	fmt.Fprintf(os.Stderr, "kdual: rank %d: waited %v in %s (collective %d); %s; ending the job (--mpi-timeout)\n",
		rank, waited.Round(time.Second), call, seq, who)
	os.Exit(3)
}

// collective runs one collective under the watchdog.
func collective(call string, f func(timeout C.double, late *C.int) C.int) error {
	d := Timeout()
	var late C.int
	rc := f(C.double(d.Seconds()), &late)
	if late != 0 {
		size, _ := Size()
		buf := make([]C.int, max(size, 1))
		k := int(C.kd_missing(&buf[0], C.int(len(buf))))
		missing := make([]int, min(k, len(buf)))
		for i := range missing {
			missing[i] = int(buf[i])
		}
		stalled(call, int64(C.kd_seq_now()), d, missing)
	}
	return check(call, rc)
}
