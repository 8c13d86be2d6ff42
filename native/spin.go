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
	"sync"
)

// Between calls, OpenBLAS's worker threads spin (calling sched_yield) for
// 2^t processor cycles before they sleep, t = 28 unless OPENBLAS_THREAD_TIMEOUT
// says otherwise: about a tenth of a second after every threaded call.
// kdual's own parallel loops (goroutines and the native kernels) run
// between BLAS calls on the same cores, and the spinning threads take their
// share of them. SpinDefault is the timeout the kdual command sets when the
// environment does not (2^24 cycles, a few milliseconds: longer than the Go
// work between two Lanczos passes, far shorter than the native phases of a
// block solve; docs/paths.md has the measurement). The library never sets
// it on its own: a program calls ReloadThreads after setting the variable.
const SpinDefault = 24

var spinMu sync.Mutex

// SpinInfo says how long OpenBLAS's idle threads spin and who decided it.
type SpinInfo struct {
	// Exponent t: the threads spin 2^t cycles before sleeping (-1 unknown).
	Exponent int
	// Source: "openblas" (whatever OpenBLAS read when it loaded: its
	// default or OPENBLAS_THREAD_TIMEOUT) until ReloadThreads records
	// another, or "error: …" when reloading failed.
	Source string
}

var spinSource = "openblas"

// Spin reports the thread timeout in force and its source.
func Spin() SpinInfo {
	spinMu.Lock()
	defer spinMu.Unlock()
	return SpinInfo{Exponent: ThreadTimeout(), Source: spinSource}
}

// SpinSupported reports whether the linked OpenBLAS lets a program change
// the thread timeout after it loaded (its pthreads builds do).
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

// ReloadThreads has OpenBLAS re-read its environment variables (the thread
// timeout OPENBLAS_THREAD_TIMEOUT among them) and stop its worker threads,
// which the next threaded BLAS call starts again with what was read. It
// must not run while another goroutine is inside a BLAS or LAPACK call: it
// is meant for start-up, after the program set the variable (the kdual
// command does, to SpinDefault, unless the user set it). source names who
// set the variable, for Spin.
func ReloadThreads(source string) error {
	if !SpinSupported() {
		return fmt.Errorf("native: this OpenBLAS (%s) cannot re-read its thread timeout", Parallel())
	}
	spinMu.Lock()
	defer spinMu.Unlock()
	if C.kd_restart_threads() != 0 {
		spinSource = "error: OpenBLAS did not stop its threads"
		return fmt.Errorf("native: OpenBLAS did not stop its threads")
	}
	spinSource = source
	return nil
}
