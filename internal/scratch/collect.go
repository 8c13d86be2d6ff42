package scratch

import (
	"runtime"
	"runtime/metrics"
)

// scanMetrics are the parts of the heap a collection marks, as of the
// last cycle (runtime/metrics).
var scanMetrics = []string{"/gc/scan/heap:bytes", "/gc/scan/globals:bytes", "/gc/scan/stack:bytes"}

// ScanBytes returns the memory a garbage collection scans: the scannable
// heap, globals and goroutine stacks as of the last cycle.
func ScanBytes() uint64 {
	s := make([]metrics.Sample, len(scanMetrics))
	for i, name := range scanMetrics {
		s[i].Name = name
	}
	metrics.Read(s)
	total := uint64(0)
	for _, v := range s {
		if v.Value.Kind() == metrics.KindUint64 {
			total += v.Value.Uint64()
		}
	}
	return total
}

// Collect runs a garbage collection when ScanBytes is at most maxScan, and
// reports whether it did. A computation whose first steps leave megabytes
// of garbage calls it before the next: collected, those pages are
// resident memory for the next steps' buffers instead of fresh pages,
// which cost a fault each on their first write; where much of the heap
// holds pointers the marking could cost more than the faults it saves.
// Nothing a computation returns depends on it.
func Collect(maxScan uint64) bool {
	if ScanBytes() > maxScan {
		return false
	}
	runtime.GC()
	return true
}
