package eig

import (
	"fmt"
	"runtime"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/gram"
	"github.com/kdual/kdual/internal/bigmem"
	"github.com/kdual/kdual/internal/par"
	"github.com/kdual/kdual/internal/scratch"
)

// Float64Full is a symmetric kernel matrix kept exactly, in float64, in
// full n×n row-major storage of which only the upper triangle is written
// and read: off the Go heap (internal/bigmem), so in 4 KB pages the
// strict lower triangle is never touched and costs no memory (about 4n²
// bytes resident, as the tiles of Float64Tiles; 8n² of address space);
// matrices of at most heapFullBytes (1 MiB) on the Go heap, lent by
// package scratch and given back by Free.
// Apply is Dense's: OpenBLAS dsymv for one vector, the calibrated block
// product otherwise. Built by gram.GramMapInto in place, with no copy.
// Not safe for concurrent use.
//
// It is the float64 layout NewKernelOperator uses when pages are 4 KB
// (float64Layout): its Gram is written in place and its one-vector passes
// are OpenBLAS's dsymv, both faster than the tiles' there
// (docs/measurements.md).
type Float64Full struct {
	mem *bigmem.Float64s
	d   Dense
}

// newFloat64Full computes the upper triangle of the kernel matrix of x in
// place, its pages made resident first (populateUpper) rather than faulted
// in one by one inside dgemm (docs/measurements.md). The lower triangle
// stays untouched.
//
// Matrices of at most heapFullBytes live on the Go heap instead.
func newFloat64Full(src *gram.Source, o gram.GramOptions) (*Float64Full, error) {
	n, _ := src.Dims()
	var data []float64
	var mem *bigmem.Float64s
	if int64(n)*int64(n)*8 <= heapFullBytes {
		data = scratch.Float64s(n * n)
	} else {
		m, err := bigmem.NewFloat64s(n * n)
		if err != nil {
			return nil, fmt.Errorf("eig: NewKernelOperator: %w", err)
		}
		mem, data = m, m.Data
		populateUpper(mem, n)
	}
	o.UpperOnly = true
	if err := src.GramInto(o, data, n); err != nil {
		mem.Free()
		return nil, err
	}
	return &Float64Full{mem: mem, d: Dense{a: mat.NewSymDense(n, data)}}, nil
}

// heapFullBytes is the largest Float64Full kept on the Go heap (n ≤ 362),
// lent by package scratch: small fits measured faster with it there than
// with the matrix mapped, faulted in and unmapped at every fit
// (docs/measurements.md).
const heapFullBytes = 1 << 20

// populateUpper makes resident the pages of the n×n row-major mem that
// hold its upper triangle, in par.Workers(0) parts of equal size
// (upperParts) in parallel: one part, on the calling goroutine, with one
// worker, so that a run limited to one thread faults its pages on one.
func populateUpper(mem *bigmem.Float64s, n int) {
	b := upperParts(n, par.Workers(0))
	var wg sync.WaitGroup
	for p := len(b) - 2; p >= 0; p-- {
		run := func() {
			for _, r := range upperRanges(b[p], b[p+1], n) {
				mem.PopulateRange(r[0], r[1])
			}
		}
		if p == 0 {
			run()
			break
		}
		wg.Add(1)
		go func() { defer wg.Done(); run() }()
	}
	wg.Wait()
}

// upperParts splits the rows of an n×n upper triangle into at most w ≥ 1
// parts [b[p], b[p+1]) of about equal entries: b[p] for 0 < p < w is the
// first row h with rows [0, h) holding at least p/w of the n(n+1)/2
// entries; empty parts are left out (b is strictly increasing, b[0] = 0,
// and its last entry is n).
func upperParts(n, w int) []int {
	w = max(1, w)
	total := n * (n + 1) / 2
	b := []int{0}
	acc, p := 0, 1
	for i := 0; i < n && p < w; i++ {
		acc += n - i
		for p < w && w*acc >= p*total {
			if i+1 > b[len(b)-1] && i+1 < n {
				b = append(b, i+1)
			}
			p++
		}
	}
	return append(b, n)
}

// upperRanges returns the element ranges [lo, hi) of the n×n row-major
// matrix that hold the upper triangle of rows [i0, i1), in order: a row's
// segment [i·n + i, (i+1)·n) joins the previous range when the gap between
// them (the next row's lower part) is under 512 entries (4 KB: within one
// page).
func upperRanges(i0, i1, n int) [][2]int {
	var out [][2]int
	for i := i0; i < i1; {
		lo, hi := i*n+i, (i+1)*n
		i++
		for i < i1 && i*n+i-hi < 512 {
			hi = (i + 1) * n
			i++
		}
		out = append(out, [2]int{lo, hi})
	}
	return out
}

// Dim returns n.
func (f *Float64Full) Dim() int { return f.d.Dim() }

// Bytes returns the bytes of storage written (the upper triangle and
// diagonal).
func (f *Float64Full) Bytes() int64 {
	n := int64(f.d.Dim())
	return 8 * n * (n + 1) / 2
}

// Apply sets dst = A·x.
func (f *Float64Full) Apply(dst, x *mat.Dense) error {
	err := f.d.Apply(dst, x)
	runtime.KeepAlive(f) // the storage is unmapped when f is collected
	return err
}

// SymMatrix returns the matrix (Matrixer: read only, and not after Free):
// its own storage when that is on the Go heap, else a copy on the Go heap
// (8n² more bytes, so that the mapping's lifetime stays f's).
func (f *Float64Full) SymMatrix() *mat.SymDense {
	if f.mem == nil {
		return f.d.a
	}
	n := f.d.Dim()
	a := mat.NewSymDense(n, nil)
	a.CopySym(f.d.a)
	runtime.KeepAlive(f)
	return a
}

// Free releases the storage now (unmaps it; storage on the Go heap goes
// back to package scratch); f must not be used afterwards.
func (f *Float64Full) Free() {
	if f.mem == nil && f.d.a != nil {
		scratch.Put(f.d.a.RawSymmetric().Data)
	}
	f.mem.Free()
	f.d.a = nil
}

// float64Layout says whether a float64 kernel matrix of n points is kept
// in full storage with its upper triangle written (Float64Full) or in
// tiles (Float64Tiles), and why. Below bigmem.AdviseMin bytes (n < 2897)
// it is full storage. Larger, full storage only costs its triangle when
// pages are 4 KB: with huge pages (asked for by package paths, see
// bigmem.Huge, or the system's "always") every 2 MB page would be
// touched, 8n² bytes, and the tiles are kept. Its address space, 8n²,
// must also fit in half of the memory (bigmem.Total, so the system does
// not refuse the mapping; not the memory free at the moment, so the
// layout is the same in every run).
func float64Layout(n int) (full bool, why string) {
	switch forceLayout {
	case "full":
		return true, "full storage (forced)"
	case "tiles":
		return false, "tiles (forced)"
	}
	bytes := 8 * int64(n) * int64(n)
	if bytes < bigmem.AdviseMin {
		return true, "full storage, upper triangle"
	}
	h := bigmem.Huge()
	if h.Advise || h.System == "always" {
		return false, "tiles: huge pages would make full storage resident in both triangles"
	}
	if total := bigmem.Total(); total > 0 && bytes > total/2 {
		return false, "tiles: full storage's address space exceeds half the memory"
	}
	return true, "full storage, upper triangle (4 KB pages)"
}

// forceLayout overrides float64Layout in tests ("full" or "tiles").
var forceLayout string
