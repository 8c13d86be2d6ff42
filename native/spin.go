package native

/*
#cgo LDFLAGS: -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>

// The OpenBLAS thread-server entry points used here are looked up at run
// time: they exist in the pthreads builds (Debian's default) and kdual
// still links against builds without them.
static int kd_spin_supported(void) {
    return dlsym(RTLD_DEFAULT, "openblas_read_env") != NULL &&
           dlsym(RTLD_DEFAULT, "openblas_thread_timeout") != NULL &&
           dlsym(RTLD_DEFAULT, "blas_thread_shutdown_") != NULL;
}

static int kd_thread_timeout(void) {
    int (*f)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "openblas_thread_timeout");
    return f ? f() : -1;
}

// kd_restart_threads re-reads OpenBLAS's environment variables and stops
// its worker threads; the next threaded call starts them again, reading
// the thread timeout anew.
static int kd_restart_threads(void) {
    void (*readenv)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "openblas_read_env");
    int (*shutdown)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "blas_thread_shutdown_");
    if (!readenv || !shutdown) return -1;
    readenv();
    return shutdown();
}
*/
import "C"

import (
	"fmt"
	"os"
	"strconv"
	"sync"
)

// Between calls, OpenBLAS's worker threads spin (calling sched_yield) for
// 2^t processor cycles before they sleep, t = 28 unless OPENBLAS_THREAD_TIMEOUT
// says otherwise: about a tenth of a second after every threaded call.
// kdual's own parallel loops (goroutines and the native kernels) run
// between BLAS calls on the same cores, and the spinning threads take their
// share of them. SpinDefault is the timeout kdual sets when the
// environment does not: 2^24 cycles, about 7 ms at 2.4 GHz — longer than
// the Go work between two Lanczos passes (so those find the threads
// awake), far shorter than the native and Go phases of a block solve or an
// L-BFGS iteration. Measured on the 2-core development machine (Fashion
// n = 7000, Gaussian, k = 20, six alternated runs, solve seconds, OpenBLAS's
// 2^28 against 2^24): block Krylov 0.914 → 0.746, Lanczos 0.641 → 0.593
// (2^20: 0.609, and 3–7 % slower than 2^28 in two other series), dual
// L-BFGS at n = 3000 1.056 → 0.871 (docs/operators.md).
const SpinDefault = 24

var spinMu sync.Mutex

// SpinInfo says how long OpenBLAS's idle threads spin and who decided it.
type SpinInfo struct {
	// Exponent t: the threads spin 2^t cycles before sleeping (-1 unknown).
	Exponent int
	// Source: "kdual" (SpinDefault, set at start-up), "environment"
	// (OPENBLAS_THREAD_TIMEOUT was set before the process started),
	// "openblas" (OpenBLAS's own default: this build cannot change it),
	// "SetThreadTimeout" (changed since), or "error: …" when setting it
	// failed.
	Source string
}

var spin SpinInfo

// init sets SpinDefault unless OPENBLAS_THREAD_TIMEOUT was given.
func init() {
	switch {
	case os.Getenv("OPENBLAS_THREAD_TIMEOUT") != "":
		spin.Source = "environment"
	case !SpinSupported():
		spin.Source = "openblas"
	default:
		err := SetThreadTimeout(SpinDefault)
		spin.Source = "kdual"
		if err != nil {
			spin.Source = "error: " + err.Error()
		}
	}
	spin.Exponent = ThreadTimeout()
}

// Spin reports the thread timeout in force and its source.
func Spin() SpinInfo {
	spinMu.Lock()
	defer spinMu.Unlock()
	return spin
}

// SpinSupported reports whether the linked OpenBLAS lets kdual change the
// thread timeout (its pthreads builds do).
func SpinSupported() bool { return C.kd_spin_supported() != 0 }

// ThreadTimeout returns the exponent t of OpenBLAS's thread timeout (its
// idle threads spin 2^t cycles), 28 when it was never set (OpenBLAS's
// default), or -1 when the linked OpenBLAS does not say.
func ThreadTimeout() int {
	t := int(C.kd_thread_timeout())
	if t == 0 {
		return 28
	}
	return t
}

// SetThreadTimeout sets OpenBLAS's thread timeout to 2^t cycles (OpenBLAS
// clamps t to [4, 30]) by setting OPENBLAS_THREAD_TIMEOUT, re-reading
// OpenBLAS's environment and stopping its worker threads, which the next
// threaded BLAS call starts again with the new timeout. It must not run
// while another goroutine is inside a BLAS or LAPACK call; it is meant for
// start-up (kdual's init does it once, see SpinDefault). The variable stays
// in the process's environment, so programs it starts inherit it.
func SetThreadTimeout(t int) error {
	if t < 4 || t > 30 {
		return fmt.Errorf("native: thread timeout exponent %d outside [4, 30]", t)
	}
	if !SpinSupported() {
		return fmt.Errorf("native: this OpenBLAS (%s) has no thread timeout to set", Parallel())
	}
	spinMu.Lock()
	defer spinMu.Unlock()
	if err := os.Setenv("OPENBLAS_THREAD_TIMEOUT", strconv.Itoa(t)); err != nil {
		return fmt.Errorf("native: %w", err)
	}
	if C.kd_restart_threads() != 0 {
		return fmt.Errorf("native: OpenBLAS did not stop its threads")
	}
	spin = SpinInfo{Exponent: ThreadTimeout(), Source: "SetThreadTimeout"}
	return nil
}
