// Package bigmem allocates the n²-sized buffers of kdual (kernel matrices
// in half storage) outside the Go heap, with anonymous memory maps: the
// garbage collector neither scans them nor counts them towards its next
// collection target, so a 7 GB matrix does not let the heap grow to
// 14 GB before a collection, and the memory returns to the system as soon
// as the buffer is freed. The process's peak resident memory (VmHWM in
// /proc/self/status, see PeakRSS) counts them like any other memory.
package bigmem

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"github.com/kdual/kdual/status"
)

// madvHugepage is MADV_HUGEPAGE of Linux.
const madvHugepage = 14

// AdviseMin is the smallest buffer (bytes) worth the huge-page question
// (SetHugePages); smaller ones are never advised.
const AdviseMin = 64 << 20

// ErrNoMemory is returned when the system refuses a mapping.
var ErrNoMemory = errors.New("bigmem: cannot allocate")

// Slice is an off-heap []T. Free releases it; a Slice that becomes
// unreachable without Free is released by a cleanup. Pages never written
// are never resident: a matrix of which only one triangle is written
// costs the memory of that triangle (in 4 KB pages; with huge pages, each
// 2 MB touched).
type Slice[T float32 | float64] struct {
	Data []T
	mem  *[]byte
}

// Float32s is an off-heap []float32; Float64s an off-heap []float64.
type (
	Float32s = Slice[float32]
	Float64s = Slice[float64]
)

// NewFloat32s maps n zeroed float32 values (n ≥ 1).
func NewFloat32s(n int) (*Float32s, error) { return newSlice[float32](n, "float32") }

// NewFloat64s maps n zeroed float64 values (n ≥ 1).
func NewFloat64s(n int) (*Float64s, error) { return newSlice[float64](n, "float64") }

func newSlice[T float32 | float64](n int, what string) (*Slice[T], error) {
	var zero T
	b, err := mapZeroed(n, int(unsafe.Sizeof(zero)), what)
	if err != nil {
		return nil, err
	}
	f := &Slice[T]{Data: unsafe.Slice((*T)(unsafe.Pointer(&b[0])), n), mem: &b}
	runtime.AddCleanup(f, unmap, f.mem)
	return f, nil
}

// madvPopulateWrite is MADV_POPULATE_WRITE of Linux (5.14 and later).
const madvPopulateWrite = 23

// Populate makes every page of the buffer resident and writable now, by
// MADV_POPULATE_WRITE on GOMAXPROCS parts of the map in parallel, rather
// than one page fault at a time at first touch. It is for buffers that will
// be written whole (it costs the memory of every page at once); it reports
// whether the kernel did it (false where it lacks the advice, and the
// pages then come at first touch as before). It pays where fresh pages
// are slow and their faults would compete with the products that write
// them (docs/measurements.md).
func (f *Slice[T]) Populate() bool {
	if f == nil || f.mem == nil || len(*f.mem) == 0 {
		return false
	}
	b := *f.mem
	step := populateStep(len(b), runtime.GOMAXPROCS(0))
	errs := make(chan error, (len(b)+step-1)/step)
	for lo := 0; lo < len(b); lo += step {
		part := b[lo:min(lo+step, len(b))]
		go func() { errs <- syscall.Madvise(part, madvPopulateWrite) }()
	}
	ok := true
	for lo := 0; lo < len(b); lo += step {
		if err := <-errs; err != nil {
			ok = false
		}
	}
	return ok
}

// populateStep is the length of each of Populate's parts of a mapping of
// size > 0 bytes with procs workers: whole 4 KB pages, and as many parts
// as there are 64 MB in it, at least one and at most procs.
func populateStep(size, procs int) int {
	parts := max(1, min(procs, size/(64<<20)))
	return ((size+parts-1)/parts + 4095) / 4096 * 4096
}

// PopulateRange is Populate for the pages holding Data[lo:hi] only; it
// runs on the calling goroutine.
func (f *Slice[T]) PopulateRange(lo, hi int) bool {
	if f == nil || f.mem == nil || len(*f.mem) == 0 || lo < 0 || hi > len(f.Data) || lo >= hi {
		return false
	}
	var zero T
	size := int(unsafe.Sizeof(zero))
	b := *f.mem
	start, end := lo*size/4096*4096, min(len(b), (hi*size+4095)/4096*4096)
	return syscall.Madvise(b[start:end], madvPopulateWrite) == nil
}

// ResidentBytes counts the bytes of the buffer's pages that are resident
// in memory now (mincore): unlike the process's VmRSS it does not move when
// other memory of the process is freed or faulted in meanwhile (the Go
// collector returns heap pages at any time), so tests can check what a
// call made resident. -1 when mincore fails, 0 for a freed buffer.
func (f *Slice[T]) ResidentBytes() int64 {
	if f == nil || f.mem == nil || len(*f.mem) == 0 {
		return 0
	}
	b := *f.mem
	page := os.Getpagesize()
	vec := make([]byte, (len(b)+page-1)/page)
	_, _, e := syscall.Syscall(syscall.SYS_MINCORE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)),
		uintptr(unsafe.Pointer(&vec[0])))
	if e != 0 {
		return -1
	}
	pages := int64(0)
	for _, v := range vec {
		pages += int64(v & 1)
	}
	return pages * int64(page)
}

// Free unmaps the buffer; Data must not be used afterwards. Calling Free
// twice is harmless.
func (f *Slice[T]) Free() {
	if f == nil {
		return
	}
	unmap(f.mem)
	f.Data = nil
}

// mapZeroed maps n zeroed values of size bytes each, asking for huge
// pages where Huge measured them faster.
func mapZeroed(n, size int, what string) ([]byte, error) {
	if n < 1 || n > math.MaxInt/size {
		return nil, fmt.Errorf("%w: %d %s values", ErrNoMemory, n, what)
	}
	b, err := syscall.Mmap(-1, 0, size*n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("%w %d bytes: %v", ErrNoMemory, size*n, err)
	}
	if len(b) >= AdviseMin && Huge().Advise {
		_ = syscall.Madvise(b, madvHugepage)
	}
	return b, nil
}

func unmap(m *[]byte) {
	if m != nil && *m != nil {
		_ = syscall.Munmap(*m)
		*m = nil
	}
}

// PeakRSS returns the process's peak resident set size in bytes (VmHWM of
// /proc/self/status), which counts Go heap, C allocations (OpenBLAS) and
// memory maps alike; 0 where it cannot be read.
func PeakRSS() int64 { return statusBytes("VmHWM:") }

// RSS returns the process's resident set size in bytes now (VmRSS); 0
// where it cannot be read.
func RSS() int64 { return statusBytes("VmRSS:") }

// Size formats a byte count for messages: GiB from 1 GiB up, MiB from
// 1 MiB, KiB from 1 KiB, bytes below (so a small budget does not read
// "0.00 GiB").
func Size(b int64) string {
	switch v := float64(b); {
	case b >= 1<<30 || b <= -1<<30:
		return fmt.Sprintf("%.2f GiB", v/(1<<30))
	case b >= 1<<20 || b <= -1<<20:
		return fmt.Sprintf("%.1f MiB", v/(1<<20))
	case b >= 1<<10 || b <= -1<<10:
		return fmt.Sprintf("%.1f KiB", v/(1<<10))
	}
	return fmt.Sprintf("%d B", b)
}

// Fits returns nil when an array of size-byte values with the given
// dimensions fits in the memory this process may use (Total; always where
// Total cannot be read), else an error wrapping ErrNoMemory and
// status.ErrInvalid that names what and both sizes. Negative dimensions
// are refused; the product is formed without overflow (a product past
// Total is refused however large).
func Fits(what string, size int64, dims ...int) error {
	t := Total()
	need := float64(size)
	room := true
	bytes := size
	for _, d := range dims {
		if d < 0 {
			return fmt.Errorf("%w: %s with a dimension of %d: %w", ErrNoMemory, what, d, status.ErrInvalid)
		}
		need *= float64(d)
		if d > 0 && bytes > math.MaxInt64/int64(d) {
			room = false
			continue
		}
		bytes *= int64(d)
	}
	if t > 0 && (!room || bytes > t) {
		return fmt.Errorf("%w: %s: %.3g GiB, more than this machine's %s: %w", ErrNoMemory, what, need/(1<<30), Size(t), status.ErrInvalid)
	}
	return nil
}

// Available returns MemAvailable of /proc/meminfo in bytes (0 where it
// cannot be read).
func Available() int64 { return fileBytes("/proc/meminfo", "MemAvailable:") }

// Total returns the memory this process may use in bytes: MemTotal of
// /proc/meminfo, or the cgroup's memory.max when that is smaller (0 where
// neither can be read). Unlike Available it does not move with other
// processes, so a budget derived from it is the same in every run. The
// files are read at the first call only: every fit plans with it
// (docs/measurements.md).
func Total() int64 { return total() }

var total = sync.OnceValue(readTotal)

func readTotal() int64 { return totalOf("/proc/meminfo", "/sys/fs/cgroup/memory.max") }

// totalOf is readTotal on the given meminfo and cgroup memory.max files:
// MemTotal, or the cgroup's limit when it is a positive number below it
// (or MemTotal cannot be read); "max" or an unreadable file changes
// nothing.
func totalOf(meminfo, cgroupMax string) int64 {
	t := fileBytes(meminfo, "MemTotal:")
	if b, err := os.ReadFile(cgroupMax); err == nil {
		if v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && v > 0 && (t == 0 || v < t) {
			t = v
		}
	}
	return t
}

func statusBytes(key string) int64 { return fileBytes("/proc/self/status", key) }

func fileBytes(path, key string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, key) {
			continue
		}
		fields := strings.Fields(line[len(key):])
		if len(fields) == 0 {
			return 0
		}
		v, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0
		}
		if len(fields) > 1 && fields[1] == "kB" {
			v *= 1024
		}
		return v
	}
	return 0
}

// AdviseHuge asks for transparent huge pages on the memory of a large
// float64 slice not yet touched, when Huge says they make its first touch
// cheaper here: it then faults in 2 MB pages instead of 4 KB ones. The
// slice stays an ordinary Go slice; a failure is ignored.
func AdviseHuge(s []float64) {
	if len(s) < AdviseMin/8 || !Huge().Advise {
		return
	}
	adviseHuge(s)
}

// ScratchMin is the smallest fresh buffer (bytes) of a computation's
// scratch — a scratch.Pool's allocations, packed 8-bit data — that
// AdviseScratch advises: large enough to hold a whole 2 MB page wherever
// the allocation falls.
const ScratchMin = 4 << 20

// AdviseScratch is AdviseHuge for a fresh scratch buffer of ScratchMin
// bytes or more: where huge pages are on (SetHugePages), the buffer's
// whole 2 MB pages fault in one at a time instead of 512 (on a virtual
// machine whose 4 KB faults are slow, a third of a Nyström fit's time at
// n = 20 000: docs/measurements.md). A failure is ignored.
func AdviseScratch(b []byte) {
	if len(b) < ScratchMin || !Huge().Advise {
		return
	}
	adviseHuge(unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/8))
}

func adviseHuge(s []float64) {
	const page = 4096
	base := unsafe.Pointer(&s[0])
	start := uintptr(base)
	end := start + uintptr(len(s))*8
	first := (start + page - 1) &^ (page - 1)
	last := end &^ (page - 1)
	if last <= first {
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Add(base, first-start)), last-first)
	_ = syscall.Madvise(b, madvHugepage)
}
