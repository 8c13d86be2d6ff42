// Package native is kdual's single cgo link point to OpenBLAS.
//
// Every binary that imports kdual links libopenblas through the directive
// below, so no user sets CGO_LDFLAGS by hand: on Debian the library comes
// from the libopenblas-dev package. The package also exposes the few
// OpenBLAS controls kdual needs: the thread count, the build configuration
// and the name of the computational core selected at run time.
//
// Only this package and package lapack contain cgo.
package native

/*
#cgo LDFLAGS: -lopenblas -lm
int   openblas_get_num_threads(void);
void  openblas_set_num_threads(int);
char* openblas_get_config(void);
char* openblas_get_corename(void);
int   openblas_get_parallel(void);
*/
import "C"

import (
	"fmt"
	"strings"
)

// Threads returns the number of threads OpenBLAS uses for one call.
func Threads() int { return int(C.openblas_get_num_threads()) }

// SetThreads sets the number of threads OpenBLAS uses for one call.
// n must be at least 1.
func SetThreads(n int) error {
	if n < 1 {
		return fmt.Errorf("native: thread count %d must be at least 1", n)
	}
	C.openblas_set_num_threads(C.int(n))
	return nil
}

// Config returns the OpenBLAS build configuration string, for example
// "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Prescott MAX_THREADS=64".
func Config() string { return strings.TrimSpace(C.GoString(C.openblas_get_config())) }

// CoreName returns the name of the computational kernel OpenBLAS selected
// for this processor (with DYNAMIC_ARCH builds this is chosen at start-up).
func CoreName() string { return strings.TrimSpace(C.GoString(C.openblas_get_corename())) }

// Parallel reports how OpenBLAS was built to run in parallel:
// "sequential", "pthreads" or "openmp".
func Parallel() string {
	switch C.openblas_get_parallel() {
	case 0:
		return "sequential"
	case 1:
		return "pthreads"
	case 2:
		return "openmp"
	}
	return "unknown"
}
