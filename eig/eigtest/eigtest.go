// Package eigtest is the shared test suite of kdual's eigensolvers and
// operators, importable (on the pattern of gonum's testlapack) so that
// every solver — eig's own, bench's, and those of other packages — and
// every operator runs the same checks:
//
//	func TestMySolver(t *testing.T) {
//		eigtest.Run(t, eigtest.Solver{Name: "mine", New: func(tol float64) eig.Solver { return Mine{Tol: tol} }})
//	}
//
// Run checks, on matrices with known spectra and fixed seeds: the status
// first (converged by a named test, Err nil), then the true residuals
// against the reported ones and the tolerance, orthonormal vectors, values
// against the spectrum, decreasing order, the sign convention, the passes
// counted by a wrapper against the reported ones and a documented bound,
// every copy of a repeated eigenvalue up to the solver's guarantee, an
// unchanged matrix, and identical output for the same seed.
// RunOperator checks an operator against its explicit matrix for blocks of
// 1, 3 and 8 columns, strided and contiguous, inputs unchanged.
package eigtest

import (
	"errors"
	"math"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/eig"
	"github.com/kdual/kdual/internal/testmat"
	"github.com/kdual/kdual/status"
)

// Solver describes a solver for Run.
type Solver struct {
	Name string
	// New returns the solver for the relative tolerance tol (direct
	// solvers ignore it).
	New func(tol float64) eig.Solver
	// PowerMethod marks solvers whose documented scope excludes operators
	// with more than l − k eigenvalues above λ_k in magnitude (the
	// randomized range finder): there they must return ErrNotConverged.
	PowerMethod bool
	// Copies is how many copies of a repeated eigenvalue the solver is
	// documented to find (its block size; 1 for single-vector Lanczos, 0
	// for all of them, as a direct solver does).
	Copies int
	// MaxPasses, when set, is the solver's documented bound on passes for
	// an n×n problem and k pairs at tolerance tol; Run checks it.
	MaxPasses func(n, k int, tol float64) int
}

// Problem is a symmetric matrix Q·diag(Lambda)·Qᵀ and the number of pairs.
type Problem struct {
	Name   string
	Lambda []float64
	K      int
	// DominatedByNegative: more than l − k eigenvalues exceed λ_k in
	// magnitude (outside a power method's scope).
	DominatedByNegative bool
	// Repeated is the multiplicity of the largest eigenvalue (0 or 1:
	// simple).
	Repeated int
}

// Spectrum returns f(0), …, f(n−1).
func Spectrum(n int, f func(i int) float64) []float64 {
	l := make([]float64, n)
	for i := range l {
		l[i] = f(i)
	}
	return l
}

// Problems are Run's matrices: fast and slow decay, a tight cluster,
// repeated eigenvalues, negative and indefinite spectra, k = 1 and
// k = n − 1, a spectrum of scale 10⁻⁶, tiny n.
var Problems = []Problem{
	{Name: "fast decay", Lambda: Spectrum(300, func(i int) float64 { return math.Pow(0.7, float64(i)) }), K: 10},
	{Name: "slow decay", Lambda: Spectrum(300, func(i int) float64 { return 1 / float64(i+1) }), K: 8},
	{Name: "clustered", Lambda: Spectrum(250, func(i int) float64 {
		switch {
		case i < 4:
			return 10 + 1e-9*float64(i) // a tight cluster at the top
		case i < 8:
			return 5
		}
		return 1 / float64(i)
	}), K: 6},
	{Name: "repeated x3", Lambda: Spectrum(300, func(i int) float64 {
		if i < 3 {
			return 4
		}
		return 2 * math.Pow(0.95, float64(i))
	}), K: 5, Repeated: 3},
	{Name: "flat with one gap", Lambda: Spectrum(300, func(i int) float64 {
		if i < 5 {
			return 2
		}
		return 1
	}), K: 5, Repeated: 5},
	{Name: "negative", Lambda: Spectrum(200, func(i int) float64 { return 3 - 0.1*float64(i) }), K: 4, DominatedByNegative: true},
	{Name: "indefinite, large negative", Lambda: Spectrum(200, func(i int) float64 {
		if i == 0 {
			return -50 // largest in magnitude, smallest algebraically
		}
		return 1 / float64(i)
	}), K: 3},
	{Name: "k=1", Lambda: Spectrum(150, func(i int) float64 { return 1 / math.Sqrt(float64(i+1)) }), K: 1},
	{Name: "k=n-1", Lambda: Spectrum(40, func(i int) float64 { return float64(40 - i) }), K: 39},
	// The checks scale with max|λ|: an absolute threshold in a solver's
	// stopping test or deflation shows here.
	{Name: "small scale", Lambda: Spectrum(200, func(i int) float64 { return 1e-6 * math.Pow(0.8, float64(i)) }), K: 6},
	{Name: "tiny n=1", Lambda: []float64{2.5}, K: 1},
	{Name: "tiny n=3", Lambda: []float64{1, -2, 0.5}, K: 2},
}

// WithSpectrum returns Q·diag(lambda)·Qᵀ for a seeded random orthogonal Q.
func WithSpectrum(seed uint64, lambda []float64) *mat.SymDense {
	return testmat.WithSpectrum(rand.New(rand.NewPCG(seed, 5)), lambda)
}

func maxAbs(l []float64) float64 {
	m := 0.0
	for _, v := range l {
		m = math.Max(m, math.Abs(v))
	}
	return m
}

// Tol is the tolerance Run asks of iterative solvers.
const Tol = 1e-9

const epsilon = 0x1p-53

// Run runs the suite on s.
func Run(t *testing.T, s Solver) {
	t.Helper()
	for pi, pr := range Problems {
		t.Run(s.Name+"/"+pr.Name, func(t *testing.T) {
			runProblem(t, s, pr, uint64(len(pr.Lambda)+pi))
		})
	}
}

func runProblem(t *testing.T, s Solver, pr Problem, seed uint64) {
	a := WithSpectrum(seed, pr.Lambda)
	before := mat.NewSymDense(a.SymmetricDim(), nil)
	before.CopySym(a)
	want := append([]float64(nil), pr.Lambda...)
	sort.Sort(sort.Reverse(sort.Float64Slice(want)))
	anorm := maxAbs(pr.Lambda)
	n, k := len(pr.Lambda), pr.K
	dense, err := eig.NewDense(a)
	if err != nil {
		t.Fatal(err)
	}
	counter := &eig.Counting{Op: dense}
	res, err := s.New(Tol).Solve(counter, k)
	if !mat.EqualApprox(a, before, 0) {
		t.Fatal("the solver changed the operator's matrix")
	}
	if pr.DominatedByNegative && s.PowerMethod {
		// Outside the power method's scope: it must say so.
		if !errors.Is(err, eig.ErrNotConverged) {
			t.Fatalf("outside its scope the solver must return ErrNotConverged, got %v", err)
		}
		if res == nil || res.Status.Code != status.IterationLimit || counter.Passes != res.Passes {
			t.Fatalf("a non-converged run returns its partial result with its status and passes")
		}
		return
	}
	if err != nil {
		t.Fatalf("Solve: %v", err)
	}
	// Status first.
	if !res.Status.Converged() || res.Status.Test == "" || res.Status.Err() != nil {
		t.Fatalf("status %v: want converged by a named test", res.Status)
	}
	if res.NumConverged != k {
		t.Errorf("NumConverged = %d, want %d", res.NumConverged, k)
	}
	if counter.Passes != res.Passes || counter.MatVecs != res.MatVecs {
		t.Errorf("reported %d passes / %d matvecs, counted %d / %d", res.Passes, res.MatVecs, counter.Passes, counter.MatVecs)
	}
	if s.MaxPasses != nil {
		if bound := s.MaxPasses(n, k, Tol); res.Passes > bound {
			t.Errorf("%d passes, documented bound %d", res.Passes, bound)
		}
	}
	if len(res.Values) != k || len(res.Residuals) != k {
		t.Fatalf("%d values, %d residuals, want %d", len(res.Values), len(res.Residuals), k)
	}
	if r, c := res.Vectors.Dims(); r != n || c != k {
		t.Fatalf("vectors %d×%d, want %d×%d", r, c, n, k)
	}
	checkPairs(t, a, res, want, anorm)
	checkCopies(t, res.Values, want[0], pr.Repeated, s.Copies, n, anorm)
	// Same seed, identical output.
	again, err := s.New(Tol).Solve(dense, k)
	if err != nil {
		t.Fatalf("second run: %v", err)
	}
	if !equal(res.Values, again.Values) || !mat.Equal(res.Vectors, again.Vectors) {
		t.Error("two runs with the same seed differ")
	}
}

// checkCopies fails t unless values holds every copy of a repeated top
// eigenvalue top (repeated of them) that the solver guarantees:
// min(repeated, len(values)), and at most copies where copies > 0; a copy
// is a value within Tol·anorm plus rounding (64·n·ε·anorm) of top.
func checkCopies(t testing.TB, values []float64, top float64, repeated, copies, n int, anorm float64) {
	if repeated <= 1 {
		return
	}
	guaranteed := min(repeated, len(values))
	if copies > 0 {
		guaranteed = min(guaranteed, copies)
	}
	round := 64 * float64(n) * epsilon * anorm
	found := 0
	for _, v := range values {
		if math.Abs(v-top) <= Tol*anorm+round {
			found++
		}
	}
	if found < guaranteed {
		t.Errorf("%d copies of the repeated eigenvalue found, %d guaranteed", found, guaranteed)
	}
}

func equal(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// RunOperator checks op against its explicit matrix a: for blocks of 1, 3
// and 8 columns, contiguous and strided (views into wider matrices), the
// product must agree with a·x to within tol·‖a‖_max·√n·‖x‖ per entry, x
// must be unchanged, and the columns of dst outside the view untouched; a
// block of the wrong shape must be an error wrapping status.ErrInvalid.
func RunOperator(t *testing.T, op eig.Operator, a *mat.SymDense, tol float64) {
	t.Helper()
	n := a.SymmetricDim()
	if op.Dim() != n {
		t.Fatalf("Dim() = %d, want %d", op.Dim(), n)
	}
	amax := 0.0
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			amax = math.Max(amax, math.Abs(a.At(i, j)))
		}
	}
	r := rand.New(rand.NewPCG(11, 13))
	for _, b := range []int{1, 3, 8} {
		for _, strided := range []bool{false, true} {
			w := b
			if strided {
				w = b + 5
			}
			xw := mat.NewDense(n, w, nil)
			for i := 0; i < n; i++ {
				for c := 0; c < w; c++ {
					xw.Set(i, c, r.NormFloat64())
				}
			}
			dw := mat.NewDense(n, w, nil)
			for i := 0; i < n; i++ {
				for c := 0; c < w; c++ {
					dw.Set(i, c, 42)
				}
			}
			x := xw.Slice(0, n, w-b, w).(*mat.Dense)
			dst := dw.Slice(0, n, 0, b).(*mat.Dense)
			xCopy := mat.DenseCopyOf(xw)
			if err := op.Apply(dst, x); err != nil {
				t.Fatalf("b=%d strided=%v: Apply: %v", b, strided, err)
			}
			if !mat.Equal(xw, xCopy) {
				t.Fatalf("b=%d strided=%v: Apply changed x", b, strided)
			}
			var want mat.Dense
			want.Mul(a, x)
			for c := 0; c < b; c++ {
				xn := mat.Norm(x.ColView(c), 2)
				bound := tol*amax*math.Sqrt(float64(n))*xn + 64*float64(n)*epsilon*amax*xn
				for i := 0; i < n; i++ {
					if d := math.Abs(dst.At(i, c) - want.At(i, c)); d > bound {
						t.Fatalf("b=%d strided=%v: entry (%d,%d) off by %.3g > %.3g", b, strided, i, c, d, bound)
					}
				}
			}
			for i := 0; i < n; i++ {
				for c := b; c < w; c++ {
					if dw.At(i, c) != 42 {
						t.Fatalf("b=%d strided=%v: Apply wrote outside dst", b, strided)
					}
				}
			}
		}
	}
	if err := op.Apply(mat.NewDense(n, 2, nil), mat.NewDense(n, 3, nil)); !errors.Is(err, status.ErrInvalid) {
		t.Errorf("a block of the wrong shape: %v, want an error wrapping status.ErrInvalid", err)
	}
}

// World is P in-process parts that exchange through shared slots and a
// cyclic barrier: a stand-in for MPI, to check that solvers run on
// row-distributed operators through eig.Distributed alone.
type World struct {
	parts int
	mu    sync.Mutex
	cond  *sync.Cond
	count int
	round int
	slots [][]float64
	xg    *mat.Dense // the gathered block
}

// NewWorld returns a world of parts parts.
func NewWorld(parts int) *World {
	w := &World{parts: parts, slots: make([][]float64, parts)}
	w.cond = sync.NewCond(&w.mu)
	return w
}

func (w *World) barrier() {
	w.mu.Lock()
	r := w.round
	w.count++
	if w.count == w.parts {
		w.count = 0
		w.round++
		w.cond.Broadcast()
	} else {
		for r == w.round {
			w.cond.Wait()
		}
	}
	w.mu.Unlock()
}

// Part is one part's view, an eig.Distributed operator: rows [off,
// off+rows) of the n×n matrix a. Every part of a world must call Apply
// and the reductions together (one goroutine each).
type Part struct {
	w         *World
	id        int
	a         *mat.SymDense
	off, rows int
}

func (p *Part) Dim() int                 { return p.rows }
func (p *Part) GlobalDim() int           { return p.a.SymmetricDim() }
func (p *Part) RowOffset() int           { return p.off }
func (p *Part) Reduction() eig.Reduction { return p }
func (p *Part) Sum(x []float64) error    { return p.reduce(x, false) }
func (p *Part) MaxAbs(x []float64) error { return p.reduce(x, true) }

func (p *Part) reduce(x []float64, maxAbs bool) error {
	p.w.slots[p.id] = append([]float64(nil), x...)
	p.w.barrier()
	for i := range x {
		acc := 0.0
		for q := 0; q < p.w.parts; q++ {
			v := p.w.slots[q][i]
			switch {
			case !maxAbs:
				acc += v
			case math.Abs(v) > math.Abs(acc):
				acc = v
			}
		}
		x[i] = acc
	}
	p.w.barrier()
	return nil
}

func (p *Part) Apply(dst, x *mat.Dense) error {
	n := p.a.SymmetricDim()
	_, b := x.Dims()
	if p.id == 0 {
		p.w.mu.Lock()
		p.w.xg = mat.NewDense(n, b, nil)
		p.w.mu.Unlock()
	}
	p.w.barrier()
	p.w.xg.Slice(p.off, p.off+p.rows, 0, b).(*mat.Dense).Copy(x)
	p.w.barrier()
	rows := mat.NewDense(p.rows, n, nil)
	for i := 0; i < p.rows; i++ {
		for j := 0; j < n; j++ {
			rows.Set(i, j, p.a.At(p.off+i, j))
		}
	}
	dst.Mul(rows, p.w.xg)
	p.w.barrier()
	return nil
}

// NewPart returns part id of w: rows [off, off+rows) of a.
func NewPart(w *World, id int, a *mat.SymDense, off, rows int) *Part {
	return &Part{w: w, id: id, a: a, off: off, rows: rows}
}

// RunParts runs f on every part of a (rows split at bounds: part q holds
// rows [bounds[q], bounds[q+1])), one goroutine each, and returns once all
// have returned.
func RunParts(a *mat.SymDense, bounds []int, f func(id int, op *Part)) {
	w := NewWorld(len(bounds) - 1)
	var wg sync.WaitGroup
	for id := 0; id+1 < len(bounds); id++ {
		wg.Add(1)
		go func(id int) {
			defer wg.Done()
			f(id, NewPart(w, id, a, bounds[id], bounds[id+1]-bounds[id]))
		}(id)
	}
	wg.Wait()
}

// checkPairs checks a converged result against A and its spectrum (want,
// decreasing): true residuals within the tolerance and not above the
// reported ones beyond rounding, orthonormal vectors, the values, their
// order and the vectors' signs.
func checkPairs(t testing.TB, a *mat.SymDense, res *eig.Result, want []float64, anorm float64) {
	t.Helper()
	n, k := a.SymmetricDim(), len(res.Values)
	// True residuals: within the tolerance, and not above the reported
	// ones beyond rounding.
	var av mat.Dense
	av.Mul(a, res.Vectors)
	round := 64 * float64(n) * epsilon * anorm
	for j := 0; j < k; j++ {
		ss := 0.0
		for i := 0; i < n; i++ {
			d := av.At(i, j) - res.Values[j]*res.Vectors.At(i, j)
			ss += d * d
		}
		r := math.Sqrt(ss)
		if r > Tol*anorm+round {
			t.Errorf("pair %d: residual %.3g > tol·‖A‖ = %.3g", j, r, Tol*anorm)
		}
		if r > 1.01*res.Residuals[j]+round {
			t.Errorf("pair %d: true residual %.3g above the reported %.3g", j, r, res.Residuals[j])
		}
	}
	// Orthonormal vectors.
	var vtv mat.Dense
	vtv.Mul(res.Vectors.T(), res.Vectors)
	for i := 0; i < k; i++ {
		vtv.Set(i, i, vtv.At(i, i)-1)
	}
	if e := mat.Norm(&vtv, math.Inf(1)); e > 1e-10 {
		t.Errorf("‖VᵀV − I‖∞ = %.3g", e)
	}
	// Values against the spectrum, decreasing, signs fixed.
	for j := 0; j < k; j++ {
		if math.Abs(want[j]-res.Values[j]) > Tol*anorm+round {
			t.Errorf("value %d: %.15g, want %.15g", j, res.Values[j], want[j])
		}
		if j > 0 && res.Values[j-1] < res.Values[j] {
			t.Errorf("values not decreasing at %d", j)
		}
		best := 0.0
		for i := 0; i < n; i++ {
			if x := res.Vectors.At(i, j); math.Abs(x) > math.Abs(best) {
				best = x
			}
		}
		if !(best > 0) {
			t.Errorf("vector %d: the largest-magnitude entry is not positive", j)
		}
	}
}
