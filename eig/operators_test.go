package eig

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/gram"
	"github.com/kdual/kdual/internal/bigmem"
	"github.com/kdual/kdual/internal/scratch"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/status"
)

func randData(seed uint64, n, d int) *mat.Dense {
	rng := rand.New(rand.NewPCG(seed, 11))
	x := mat.NewDense(n, d, nil)
	x.Apply(func(_, j int, _ float64) float64 { return rng.NormFloat64() + float64(j) }, x)
	return x
}

// opCase is one operator over a kernel matrix and the explicit float64
// matrix it stands for.
type opCase struct {
	name string
	op   Operator
	// storage is the bound factor of the operator against the explicit
	// matrix: |(Ax − Âx)_i| ≤ storage·Σ_j |a_ij||x_j| (0 for float64).
	storage float64
}

const u32 = 1.0 / (1 << 24) // float32 unit roundoff

// kernelCases returns every operator kind over the Gaussian kernel of x,
// uncentred and implicitly centred, with the explicit matrices.
func kernelCases(t *testing.T, x *mat.Dense, k kernel.Kernel) (plain, centred *mat.SymDense, cases []opCase) {
	t.Helper()
	g, err := kernel.Gram(x, k)
	require.NoError(t, err)
	c := mat.NewSymDense(g.SymmetricDim(), nil)
	c.CopySym(g)
	_, err = linalg.CenterKernelInPlace(c)
	require.NoError(t, err)
	dense, err := NewDense(g)
	require.NoError(t, err)
	tiles, err := kernel.GramTiles32(x, k, gram.GramOptions{})
	require.NoError(t, err)
	f32, err := NewFloat32Tiles(tiles)
	require.NoError(t, err)
	free, err := NewKernelOp(x, k, gram.GramOptions{})
	require.NoError(t, err)
	// The float64 kernel operator in both layouts: one triangle in tiles,
	// and full storage with the upper triangle written (exact up to the
	// rounding of the products' summation order).
	forceLayout = "tiles"
	t64, err := NewKernelOperator(x, k, OperatorFloat64, false, gram.GramOptions{})
	require.NoError(t, err)
	require.IsType(t, &Float64Tiles{}, t64)
	forceLayout = "full"
	full, err := NewKernelOperator(x, k, OperatorFloat64, false, gram.GramOptions{})
	forceLayout = ""
	require.NoError(t, err)
	require.IsType(t, &Float64Full{}, full)
	cases = []opCase{{"dense", dense, 0}, {"float32", f32, u32}, {"matrix-free", free, 0}, {"float64 tiles", t64, 0},
		{"float64 full", full, 0}}
	for _, base := range cases[:5] {
		cen, err := NewCentered(base.op)
		require.NoError(t, err)
		// Centring a float32 matrix in float64 keeps its storage error;
		// the centred error is bounded through M's rows (‖M‖∞ ≤ 2).
		cases = append(cases, opCase{"centred " + base.name, cen, 4 * base.storage})
	}
	return g, c, cases
}

// Every operator agrees with the explicit float64 matrix for blocks of
// 1, 2, 5, 8 and 32 columns, with strided blocks, within its storage
// bound; no operator modifies its input block or the data.
func TestOperatorsApplyAgree(t *testing.T) {
	x := randData(1, 700, 5) // 700: three 256-tiles, the last partial
	before := mat.DenseCopyOf(x)
	k := kernel.Kernel{Kind: kernel.Gaussian, Sigma: 3}
	g, c, cases := kernelCases(t, x, k)
	gBefore := mat.NewSymDense(700, nil)
	gBefore.CopySym(g)
	rng := rand.New(rand.NewPCG(2, 2))
	for _, oc := range cases {
		want := g
		if oc.name[:3] == "cen" {
			want = c
		}
		for _, b := range []int{1, 2, 5, 8, 32} {
			// A strided block: a column slice of a wider matrix.
			wide := mat.NewDense(700, b+3, nil)
			wide.Apply(func(_, _ int, _ float64) float64 { return rng.NormFloat64() }, wide)
			xb := wide.Slice(0, 700, 1, 1+b).(*mat.Dense)
			xCopy := mat.DenseCopyOf(xb)
			dstWide := mat.NewDense(700, b+2, nil)
			dst := dstWide.Slice(0, 700, 2, 2+b).(*mat.Dense)
			require.NoError(t, oc.op.Apply(dst, xb))
			require.True(t, mat.Equal(xCopy, xb), "%s b=%d modified its input", oc.name, b)
			var exact mat.Dense
			exact.Mul(want, xb)
			for i := 0; i < 700; i++ {
				for j := 0; j < b; j++ {
					abs := 0.0
					for l := 0; l < 700; l++ {
						abs += math.Abs(want.At(i, l) * xb.At(l, j))
					}
					bound := oc.storage*abs + 1e-13*abs + 1e-300
					require.InDelta(t, exact.At(i, j), dst.At(i, j), bound, "%s b=%d (%d,%d)", oc.name, b, i, j)
				}
			}
			for i := 0; i < 700; i++ {
				require.Zero(t, dstWide.At(i, 0), "%s wrote outside dst", oc.name)
			}
		}
	}
	require.True(t, mat.Equal(before, x), "data modified")
	require.True(t, mat.Equal(gBefore, g), "kernel matrix modified")
}

// Every operator kind passes the solvers: the top eigenvalues agree with
// LAPACK's on the explicit float64 matrix (within the storage bound
// ‖E‖₂ ≤ ‖E‖_F ≤ c·u·‖A‖_F for float32), residuals measured against the
// operator meet the tolerance, and the counting is exact.
func TestOperatorsThroughSolvers(t *testing.T) {
	x := randData(3, 530, 4)
	k := kernel.Kernel{Kind: kernel.Gaussian, Sigma: 2}
	g, c, cases := kernelCases(t, x, k)
	const kk, tol = 6, 1e-9
	for _, oc := range cases {
		want := g
		if oc.name[:3] == "cen" {
			want = c
		}
		ref, err := linalg.SymEig(want, kk)
		require.NoError(t, err)
		fro := mat.Norm(want, 2)
		for _, sv := range solvers {
			t.Run(oc.name+"/"+sv.name, func(t *testing.T) {
				counter := &Counting{Op: oc.op}
				res, err := sv.make(tol).Solve(counter, kk)
				require.NoError(t, err)
				require.True(t, res.Status.Converged(), "status %v", res.Status)
				require.Equal(t, counter.Passes, res.Passes)
				require.Equal(t, counter.MatVecs, res.MatVecs)
				bound := oc.storage*fro + 1e-8*ref.Values[0]
				for j := 0; j < kk; j++ {
					require.InDelta(t, ref.Values[j], res.Values[j], bound, "value %d", j)
				}
				av := mat.NewDense(530, kk, nil)
				require.NoError(t, oc.op.Apply(av, res.Vectors))
				for j := 0; j < kk; j++ {
					s := 0.0
					for i := 0; i < 530; i++ {
						d := av.At(i, j) - res.Values[j]*res.Vectors.At(i, j)
						s += d * d
					}
					require.LessOrEqual(t, math.Sqrt(s), tol*ref.Values[0]*10+1e-12*fro, "residual %d", j)
				}
			})
		}
	}
}

// The matrix-free operator never forms an n×n matrix: at n = 4000 (an
// n×n float64 matrix is 128 MB) building it and one pass allocate less
// than a quarter of that.
func TestKernelOpMemory(t *testing.T) {
	const n = 4000
	x := randData(4, n, 8)
	runtime.GC()
	var s0, s1 runtime.MemStats
	runtime.ReadMemStats(&s0)
	op, err := NewKernelOp(x, kernel.Kernel{Kind: kernel.Laplace, Sigma: 4}, gram.GramOptions{})
	require.NoError(t, err)
	v := mat.NewDense(n, 4, nil)
	for i := 0; i < n; i++ {
		v.Set(i, i%4, 1)
	}
	y := mat.NewDense(n, 4, nil)
	require.NoError(t, op.Apply(y, v))
	runtime.ReadMemStats(&s1)
	alloc := s1.TotalAlloc - s0.TotalAlloc
	require.Less(t, alloc, uint64(n*n*8/4), "allocated %d bytes", alloc)
	require.Less(t, op.Bytes(), int64(n*n*8/4))
	require.Greater(t, mat.Norm(y, 1), 0.0)
}

// Centring: the centred operator annihilates constants (M·1 = 0) and its
// Centering matches linalg.CenterKernelInPlace's statistics; the deferred
// one (row means from the first pass) gives the same products and
// statistics without a pass of its own, and Centering before any Apply
// runs that pass, as does SymMatrix (the dense solver's matrix).
func TestCenteredStatistics(t *testing.T) {
	x := randData(7, 300, 3)
	k := kernel.Kernel{Kind: kernel.Laplace, Sigma: 2}
	g, err := kernel.Gram(x, k)
	require.NoError(t, err)
	c := mat.NewSymDense(300, nil)
	c.CopySym(g)
	stats, err := linalg.CenterKernelInPlace(c)
	require.NoError(t, err)
	d, err := NewDense(g)
	require.NoError(t, err)
	cen, err := NewCentered(d)
	require.NoError(t, err)
	got, err := cen.Centering()
	require.NoError(t, err)
	require.InDelta(t, stats.Mean, got.Mean, 1e-13)
	for i := range stats.RowMeans {
		require.InDelta(t, stats.RowMeans[i], got.RowMeans[i], 1e-13)
	}
	ones := mat.NewDense(300, 1, nil)
	for i := 0; i < 300; i++ {
		ones.Set(i, 0, 1)
	}
	y := mat.NewDense(300, 1, nil)
	require.NoError(t, cen.Apply(y, ones))
	require.Less(t, mat.Norm(y, math.Inf(1)), 1e-12)
	// Deferred: the first Apply is the only pass and equals the eager
	// operator's, and so do later ones and the statistics.
	counted := &Counting{Op: d}
	def, err := NewCenteredDeferred(counted)
	require.NoError(t, err)
	require.Zero(t, counted.Passes)
	xb := randData(8, 300, 3)
	for round := 0; round < 2; round++ {
		want, have := mat.NewDense(300, 3, nil), mat.NewDense(300, 3, nil)
		require.NoError(t, cen.Apply(want, xb))
		require.NoError(t, def.Apply(have, xb))
		require.True(t, mat.EqualApprox(want, have, 1e-12*mat.Norm(want, math.Inf(1))), "round %d", round)
		require.Equal(t, round+1, counted.Passes)
	}
	dgot, err := def.Centering()
	require.NoError(t, err)
	require.Equal(t, 2, counted.Passes, "the statistics came with the first pass")
	require.InDelta(t, stats.Mean, dgot.Mean, 1e-13)
	for i := range stats.RowMeans {
		require.InDelta(t, stats.RowMeans[i], dgot.RowMeans[i], 1e-13)
	}
	early, err := NewCenteredDeferred(d)
	require.NoError(t, err)
	egot, err := early.Centering()
	require.NoError(t, err)
	require.Equal(t, got, egot)
	// SymMatrix before any Apply (the dense solver's first call) computes
	// the row means itself: M·A·M, as linalg.CenterKernelInPlace makes it.
	late, err := NewCenteredDeferred(d)
	require.NoError(t, err)
	m := late.SymMatrix()
	require.NotNil(t, m)
	require.True(t, mat.EqualApprox(c, m, 1e-12*mat.Norm(c, math.Inf(1))))
	res, err := DenseSolver{}.Solve(late, 4)
	require.NoError(t, err)
	want, err := linalg.SymEig(c, 4)
	require.NoError(t, err)
	for i, v := range want.Values {
		require.InDelta(t, v, res.Values[i], 1e-11*want.Values[0])
	}
	_, err = NewCenteredDeferred(nil)
	require.ErrorIs(t, err, status.ErrInvalid)
}

// A block as wide as a fifth of n: the basis and the next block cannot
// both fit, so the solver must not build them (it used to return wrong
// values, far above the spectrum).
func TestWideBlockSmallN(t *testing.T) {
	lambda := spectrum(150, func(i int) float64 { return 1 / float64(i+1) })
	d, err := NewDense(symWithSpectrum(6, lambda))
	require.NoError(t, err)
	for _, b := range []int{32, 40, 75} {
		res, err := BlockKrylov{Tol: 1e-12, Block: b}.Solve(d, 3)
		require.NoError(t, err, "b=%d", b)
		for j := 0; j < 3; j++ {
			require.InDelta(t, lambda[j], res.Values[j], 1e-12, "b=%d", b)
		}
	}
}

// slowOp adds a delay to every pass: per column (perCol) or per pass.
type slowOp struct {
	Operator
	perCol, perPass time.Duration
}

func (s slowOp) Apply(dst, x *mat.Dense) error {
	_, b := x.Dims()
	time.Sleep(s.perPass + time.Duration(b)*s.perCol)
	return s.Operator.Apply(dst, x)
}

// An eigenvalue repeated 12 times at the top of the spectrum: block
// Krylov with blocks of 8 (Auto's choice) returns every copy, where
// single-vector Lanczos misses some and still passes its residual test —
// the reason Auto takes blocks.
func TestAutoFindsRepeatedEigenvalues(t *testing.T) {
	lambda := spectrum(900, func(i int) float64 {
		if i < 12 {
			return 5
		}
		return 4 * math.Pow(0.99, float64(i))
	})
	d, err := NewDense(symWithSpectrum(8, lambda))
	require.NoError(t, err)
	const k = 12
	res, err := Auto{}.Solve(d, k)
	require.NoError(t, err)
	require.True(t, res.Status.Converged())
	for j := 0; j < k; j++ {
		require.InDelta(t, 5, res.Values[j], 1e-9, "copy %d", j)
	}
	lz, err := Lanczos{}.Solve(d, k)
	require.NoError(t, err)
	require.True(t, lz.Status.Converged(), "Lanczos passes its own test")
	missed := 0
	for j := 0; j < k; j++ {
		if math.Abs(lz.Values[j]-5) > 1e-6 {
			missed++
		}
	}
	t.Logf("Lanczos found %d of %d copies", k-missed, k)
	require.Greater(t, missed, 0, "single-vector Lanczos misses copies of a repeated eigenvalue")
}

// failingOp fails on pass failAt, as a cancelled or distributed pass can:
// every solver must stop and return that error, not a result.
type failingOp struct {
	Operator
	passes, failAt int
}

var errPass = errors.New("pass failed")

func (f *failingOp) Apply(dst, x *mat.Dense) error {
	f.passes++
	if f.passes == f.failAt {
		return errPass
	}
	return f.Operator.Apply(dst, x)
}

func TestSolversReturnTheOperatorsError(t *testing.T) {
	a := symWithSpectrum(4, spectrum(300, func(i int) float64 { return 1 / float64(i+1) }))
	d, err := NewDense(a)
	require.NoError(t, err)
	for _, s := range []Solver{Lanczos{}, BlockKrylov{Block: 4}, Randomized{}, Randomized{Tol: 1e-10}, Auto{}, DenseSolver{}} {
		for _, at := range []int{1, 3} {
			res, err := s.Solve(&failingOp{Operator: opOnly{d}, failAt: at}, 5)
			if at == 3 && (s == Solver(Auto{}) || s == Solver(DenseSolver{})) {
				continue // one pass: the matrix is built at pass 1
			}
			require.ErrorIs(t, err, errPass, "%T, failing pass %d", s, at)
			require.Nil(t, res, "%T", s)
		}
	}
	// Shapes that do not fit are an error, not a panic.
	require.ErrorIs(t, d.Apply(mat.NewDense(300, 2, nil), mat.NewDense(300, 3, nil)), status.ErrInvalid)
	// No vectors (an n×0 view) is a shape error too, not an empty product.
	none := mat.NewDense(300, 2, nil).Slice(0, 300, 0, 0).(*mat.Dense)
	require.ErrorIs(t, d.Apply(none, none), status.ErrInvalid)
}

// countdownCtx is a context whose Err turns to context.Canceled at its
// (after+1)-th call: a deterministic cancellation in the middle of a pass.
type countdownCtx struct {
	context.Context
	after, calls int
}

func (c *countdownCtx) Err() error {
	c.calls++
	if c.calls > c.after {
		return context.Canceled
	}
	return nil
}

func (c *countdownCtx) Done() <-chan struct{} { return make(chan struct{}) }

// The matrix-free operator checks its context before every panel: a pass
// cancelled after three panels computes no fourth; WithContext refuses a
// pass once its context has ended, without touching dst.
func TestCancelledPasses(t *testing.T) {
	const n = 3000 // 6 row panels
	x := randData(9, n, 4)
	ctx := &countdownCtx{Context: context.Background(), after: 3}
	op, err := NewKernelOp(x, kernel.Kernel{Kind: kernel.Gaussian, Sigma: 3}, gram.GramOptions{Context: ctx})
	require.NoError(t, err)
	v := mat.NewDense(n, 2, nil)
	y := mat.NewDense(n, 2, nil)
	err = op.Apply(y, v)
	require.ErrorIs(t, err, status.ErrStopped)
	require.ErrorIs(t, err, context.Canceled)
	// Three checks let a panel through, the fourth stopped the pass (a
	// fifth call is context.Cause reading the error).
	require.Equal(t, 5, ctx.calls, "context checks")

	dense, err := NewDense(mat.NewSymDense(n, nil))
	require.NoError(t, err)
	cctx, cancel := context.WithCancel(context.Background())
	w := WithContext(cctx, dense)
	require.NoError(t, w.Apply(y, v))
	cancel()
	y.Set(0, 0, 7)
	err = w.Apply(y, v)
	require.ErrorIs(t, err, status.ErrStopped)
	require.Equal(t, 7.0, y.At(0, 0))
	res, err := Lanczos{}.Solve(w, 2)
	require.Nil(t, res)
	require.ErrorIs(t, err, status.ErrStopped)
}

// Both float64 layouts give back the Gram matrix in LAPACK's layout (for
// the dense solver); the tiles refuse a band; full storage never writes
// its strict lower triangle.
func TestFloat64TilesSymMatrix(t *testing.T) {
	x := randData(9, 600, 3)
	k := kernel.Kernel{Kind: kernel.Laplace, Sigma: 2}
	g, err := kernel.Gram(x, k)
	require.NoError(t, err)
	defer func() { forceLayout = "" }()
	for _, layout := range []string{"tiles", "full"} {
		forceLayout = layout
		op, err := NewKernelOperator(x, k, OperatorFloat64, false, gram.GramOptions{})
		require.NoError(t, err)
		a := op.(Matrixer).SymMatrix()
		for i := 0; i < 600; i++ {
			for j := 0; j < 600; j++ {
				require.InDelta(t, g.At(i, j), a.At(i, j), 1e-14, "%s (%d,%d)", layout, i, j)
			}
		}
		res, err := DenseSolver{}.Solve(op, 4)
		require.NoError(t, err)
		ref, err := linalg.SymEig(g, 4)
		require.NoError(t, err)
		for j := range res.Values {
			require.InDelta(t, ref.Values[j], res.Values[j], 1e-12*ref.Values[0], layout)
		}
		if f, ok := op.(*Float64Full); ok {
			for i := 1; i < 600; i++ {
				for _, v := range f.d.a.RawSymmetric().Data[i*600 : i*600+i] {
					require.Zero(t, v, "lower triangle of row %d written", i)
				}
			}
			require.Equal(t, int64(8*600*601/2), f.Bytes())
			f.Free()
		}
	}
	// The layout rule: full storage when small, else only in 4 KB pages.
	forceLayout = ""
	full, why := float64Layout(100)
	require.True(t, full, why)
	full, why = float64Layout(4000)
	h := bigmem.Huge()
	require.NotEmpty(t, why)
	if h.Advise || h.System == "always" {
		require.False(t, full, why)
	}
	band, err := gram.GramTiles64Band(x, k.ElementMap(3), gram.GramOptions{}, 256, 1, 3)
	require.NoError(t, err)
	_, err = NewFloat64Tiles(band)
	require.ErrorIs(t, err, status.ErrInvalid)
	_, err = NewFloat64Tiles(&gram.SymTiles64{T: 256}) // no rows: the whole (empty) triangle is still refused
	require.ErrorIs(t, err, status.ErrInvalid)
	_, err = NewFloat64Tiles(nil)
	require.ErrorIs(t, err, status.ErrInvalid)
}

// From n = 8·512 on the float64 kernel is stored in 512×512 tiles; its
// products (one vector and a block) equal the explicit Gram matrix's.
func TestFloat64KernelLargeTiles(t *testing.T) {
	n := 8 * gram.TileSize64
	x := mat.NewDense(n, 3, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < 3; j++ {
			x.Set(i, j, math.Sin(float64(i*(j+1))))
		}
	}
	k := kernel.Kernel{Kind: kernel.Gaussian, Sigma: 0.7}
	forceLayout = "tiles"
	op, err := NewKernelOperator(x, k, OperatorFloat64, false, gram.GramOptions{})
	forceLayout = ""
	require.NoError(t, err)
	require.Equal(t, gram.TileSize64, op.(*Float64Tiles).s.T)
	g, err := kernel.Gram(x, k)
	require.NoError(t, err)
	for _, b := range []int{1, 8} {
		v := mat.NewDense(n, b, nil)
		for i := 0; i < n; i++ {
			for j := 0; j < b; j++ {
				v.Set(i, j, math.Cos(float64(i+7*j)))
			}
		}
		got := mat.NewDense(n, b, nil)
		require.NoError(t, op.Apply(got, v))
		var want mat.Dense
		want.Mul(g, v)
		var d mat.Dense
		d.Sub(got, &want)
		require.Less(t, mat.Norm(&d, math.Inf(1)), 1e-12*mat.Norm(&want, math.Inf(1)), "b = %d", b)
	}
}

// Release frees a kernel operator's storage now, through the centring:
// full storage on the Go heap up to heapFullBytes (n ≤ 362), a map above
// (unmapped by Release).
func TestReleaseKernelOperator(t *testing.T) {
	k := kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1.5}
	defer func() { forceLayout = "" }()
	forceLayout = "full"
	// n = 512: mapped storage of 2¹⁸ entries, a size class of package
	// scratch — unmapped at Release, it must never be lent again.
	for _, n := range []int{300, 362, 363, 512} {
		x := randData(5, n, 4)
		op, err := NewKernelOperator(x, k, OperatorFloat64, true, gram.GramOptions{})
		require.NoError(t, err)
		full := op.(*Centered).op.(*Float64Full)
		require.Equal(t, n > 362, full.mem != nil, "n = %d: mapped", n)
		require.NotNil(t, full.d.a)
		mem, first := full.mem, &full.d.a.RawSymmetric().Data[0]
		Release(op)
		require.Nil(t, full.d.a)
		if mem != nil {
			require.Nil(t, mem.Data)
			for range 4 {
				b := scratch.Float64s(n * n)
				require.NotSame(t, first, &b[0], "n = %d: unmapped storage lent by package scratch", n)
				defer scratch.Put(b)
			}
		}
	}
	x := randData(5, 300, 4)
	op, err := NewKernelOperator(x, k, OperatorFloat32, false, gram.GramOptions{})
	require.NoError(t, err)
	Release(op)
	require.Nil(t, op.(*Float32).s.Data)
	Release(Counting{}.Op) // nil and unknown operators are left alone
}

// The dense solver reads the operator's matrix in place (Matrixer: read
// only) and never writes it: products with the operator are the same bits
// before and after a solve, on the float64 full storage and through the
// centring, whose matrix M·A·M is made once, is the explicit centred
// matrix, and goes back at Release.
func TestDenseSolverLeavesTheMatrix(t *testing.T) {
	k := kernel.Kernel{Kind: kernel.Gaussian, Sigma: 3}
	x := randData(8, 150, 5)
	b := randData(9, 150, 3)
	for _, centre := range []bool{false, true} {
		var values []float64
		for round := 0; round < 2; round++ { // the second on buffers the first released
			op, err := NewKernelOperator(x, k, OperatorFloat64, centre, gram.GramOptions{})
			require.NoError(t, err)
			before := mat.NewDense(150, 3, nil)
			require.NoError(t, op.Apply(before, b))
			res, err := DenseSolver{}.Solve(op, 4)
			require.NoError(t, err)
			after := mat.NewDense(150, 3, nil)
			require.NoError(t, op.Apply(after, b))
			require.True(t, mat.Equal(before, after), "centre %v: the solve changed the matrix", centre)
			if c, ok := op.(*Centered); ok {
				a := c.SymMatrix()
				require.Same(t, a, c.SymMatrix(), "made once")
				var want mat.Dense
				want.Mul(a, b)
				require.True(t, mat.EqualApprox(&want, after, 1e-12*mat.Norm(after, math.Inf(1))), "M·A·M times b")
			}
			Release(op)
			if c, ok := op.(*Centered); ok {
				require.Nil(t, c.sym)
			}
			if round == 1 {
				require.Equal(t, values, res.Values, "centre %v: the same operator on reused buffers", centre)
			}
			values = res.Values
		}
	}
}

// populateUpper makes resident the pages of the upper triangle only:
// about half of the n×n storage (a page more per row near the diagonal at
// most), never the whole.
func TestPopulateUpperHalf(t *testing.T) {
	const n = 3000
	mem, err := bigmem.NewFloat64s(n * n)
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Free()
	if !mem.PopulateRange(0, 1) {
		t.Skip("the kernel has no MADV_POPULATE_WRITE")
	}
	before := mem.ResidentBytes()
	populateUpper(mem, n)
	// The mapping's own pages (mincore), not the process's VmRSS, which
	// the Go collector can shrink meanwhile (it failed that way once).
	grown := float64(mem.ResidentBytes() - before)
	half := 8.0 * n * (n + 1) / 2
	if grown < 0.95*half || grown > half+float64(n)*4096 {
		t.Errorf("populated %.0f bytes for an upper triangle of %.0f", grown, half)
	}
}

// Dense.Apply on one vector — gonum's dsymv up to linalg.SmallSym,
// OpenBLAS's above — and on a strided column is A·x for a symmetric A
// whose lower triangle (never read) holds NaN, on both sides of the rule.
func TestDenseApplyVector(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{1, 2, linalg.SmallSym, linalg.SmallSym + 1} {
		a := mat.NewSymDense(n, nil)
		for i := 0; i < n; i++ {
			for j := i; j < n; j++ {
				a.SetSym(i, j, rng.NormFloat64())
			}
		}
		raw := a.RawSymmetric()
		for i := 0; i < n; i++ {
			for j := 0; j < i; j++ {
				raw.Data[i*raw.Stride+j] = math.NaN()
			}
		}
		op, err := NewDense(a)
		require.NoError(t, err)
		x := mat.NewDense(n, 3, nil)
		x.Apply(func(_, _ int, _ float64) float64 { return rng.NormFloat64() }, x)
		for _, col := range []*mat.Dense{mat.DenseCopyOf(x.ColView(1)), x.Slice(0, n, 2, 3).(*mat.Dense)} {
			dst := mat.NewDense(n, 1, nil)
			require.NoError(t, op.Apply(dst, col))
			for i := 0; i < n; i++ {
				want, abs := 0.0, 0.0
				for j := 0; j < n; j++ {
					v := a.At(i, j) * col.At(j, 0)
					want += v
					abs += math.Abs(v)
				}
				require.InDelta(t, want, dst.At(i, 0), 4*float64(n)*1.1e-16*abs, "n %d row %d", n, i)
			}
		}
	}
}

// emptyOp is an operator of dimension 0.
type emptyOp struct{}

func (emptyOp) Dim() int                    { return 0 }
func (emptyOp) Apply(_, _ *mat.Dense) error { return nil }

// A centred operator needs at least one row: nil and empty operators are
// refused by both constructors.
func TestCenteredRefusesEmpty(t *testing.T) {
	for _, op := range []Operator{nil, emptyOp{}} {
		_, err := NewCenteredDeferred(op)
		require.ErrorIs(t, err, status.ErrInvalid, "%T", op)
		_, err = NewCentered(op)
		require.ErrorIs(t, err, status.ErrInvalid, "%T", op)
	}
}
