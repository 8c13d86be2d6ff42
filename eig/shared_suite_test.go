package eig_test

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/eig"
	"github.com/kdual/kdual/eig/eigtest"
	"github.com/kdual/kdual/gram"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/linalg"
)

// Every solver of package eig through the shared, importable suite, with
// the pass bounds their doc comments state.
func TestSharedSuite(t *testing.T) {
	krylov := func(b int) func(n, k int, tol float64) int {
		// At most MaxRestarts (1000) restarts of at most ⌈m/b⌉ passes.
		return func(n, k int, _ float64) int {
			m := max(2*k+1, 20)
			if b > 1 {
				m = max(3*k+b, 4*b)
			}
			return 1000 * int(math.Ceil(float64(m)/float64(b)))
		}
	}
	for _, s := range []eigtest.Solver{
		{Name: "dense", New: func(float64) eig.Solver { return eig.DenseSolver{} },
			MaxPasses: func(int, int, float64) int { return 1 }},
		{Name: "lanczos", New: func(tol float64) eig.Solver { return eig.Lanczos{Tol: tol} }, Copies: 1, MaxPasses: krylov(1)},
		{Name: "lanczos-ncv12", New: func(tol float64) eig.Solver { return eig.Lanczos{Tol: tol, NCV: 12} }, Copies: 1},
		{Name: "block", New: func(tol float64) eig.Solver { return eig.BlockKrylov{Tol: tol} }, Copies: 8, MaxPasses: krylov(8)},
		{Name: "block-b3", New: func(tol float64) eig.Solver { return eig.BlockKrylov{Tol: tol, Block: 3} }, Copies: 3, MaxPasses: krylov(3)},
		{Name: "randomized", New: func(tol float64) eig.Solver { return eig.Randomized{Tol: tol} }, PowerMethod: true, Copies: 10,
			// 2q + 2 passes (q ≤ 7), then at most MaxIter (500) steps of one.
			MaxPasses: func(int, int, float64) int { return 2*7 + 2 + 500 }},
		{Name: "randomized-qr", New: func(tol float64) eig.Solver {
			return eig.Randomized{Tol: tol, Normalizer: eig.NormQR, PowerIters: 2}
		}, PowerMethod: true, Copies: 10},
		{Name: "auto", New: func(tol float64) eig.Solver { return eig.Auto{Tol: tol} }, Copies: 8},
	} {
		eigtest.Run(t, s)
	}
}

// Every operator against its explicit matrix.
func TestSharedOperatorSuite(t *testing.T) {
	a := eigtest.WithSpectrum(3, eigtest.Spectrum(257, func(i int) float64 { return math.Pow(0.9, float64(i)) }))
	d, err := eig.NewDense(a)
	if err != nil {
		t.Fatal(err)
	}
	eigtest.RunOperator(t, d, a, 0)
	f, err := eig.NewFloat32(a)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Free()
	// Storage rounding: |a32 − a| ≤ 2⁻²⁴|a| per entry.
	eigtest.RunOperator(t, f, a, 0x1p-24)
	eigtest.RunOperator(t, &eig.Counting{Op: d}, a, 0)

	// Implicit centring against M·A·M formed explicitly.
	c, err := eig.NewCentered(d)
	if err != nil {
		t.Fatal(err)
	}
	mam := mat.NewSymDense(257, nil)
	mam.CopySym(a)
	if _, err := linalg.CenterKernelInPlace(mam); err != nil {
		t.Fatal(err)
	}
	eigtest.RunOperator(t, c, mam, 1e-14)

	// The matrix-free kernel operator against the explicit Gram matrix.
	x := mat.NewDense(300, 7, nil)
	for i := 0; i < 300; i++ {
		for j := 0; j < 7; j++ {
			x.Set(i, j, math.Sin(float64(3*i+j)))
		}
	}
	k := kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1.5}
	g, err := kernel.Gram(x, k)
	if err != nil {
		t.Fatal(err)
	}
	mf, err := eig.NewKernelOp(x, k, gram.GramOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eigtest.RunOperator(t, mf, g, 1e-14)
	for _, kind := range []eig.OperatorKind{eig.OperatorFloat64, eig.OperatorFloat32, eig.OperatorMatrixFree} {
		op, err := eig.NewKernelOperator(x, k, kind, false, gram.GramOptions{})
		if err != nil {
			t.Fatal(err)
		}
		tol := 1e-14
		if kind == eig.OperatorFloat32 {
			tol = 0x1p-24
		}
		eigtest.RunOperator(t, op, g, tol)
	}
	// float32 inner products: the stored entries within EntryRel, blocks
	// of more than six columns in float32 arithmetic within BlockRel more.
	op32, err := eig.NewKernelOperator(x, k, eig.OperatorFloat32, false, gram.GramOptions{Products: gram.ProductsFloat32})
	if err != nil {
		t.Fatal(err)
	}
	tiles := op32.(*eig.Float32).Tiles()
	if !tiles.SingleBlocks {
		t.Fatal("float32 products did not ask for float32 block arithmetic")
	}
	eigtest.RunOperator(t, op32, g, tiles.EntryRel+gram.BlockRel)
	// and block Krylov on it finds the float64 kernel's eigenvalues
	// within what the entries allow (‖E‖₂ ≤ (EntryRel + BlockRel)·‖G‖_F).
	op64, err := eig.NewKernelOperator(x, k, eig.OperatorFloat64, false, gram.GramOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ref, err := eig.BlockKrylov{Tol: 1e-10, Block: 8}.Solve(op64, 6)
	if err != nil {
		t.Fatal(err)
	}
	got32, err := eig.BlockKrylov{Tol: 1e-10, Block: 8}.Solve(op32, 6)
	if err != nil {
		t.Fatal(err)
	}
	bound := (tiles.EntryRel + gram.BlockRel) * mat.Norm(g, 2)
	for i := range ref.Values {
		if d := math.Abs(got32.Values[i] - ref.Values[i]); d > bound {
			t.Errorf("λ%d: %g on float32 products and blocks, %g on float64 (bound %g)", i+1, got32.Values[i], ref.Values[i], bound)
		}
	}

	// The low-rank operator F·Fᵀ, plain and centred, against the explicit
	// products; and a solver on it finds F_cᵀF_c's eigenvalues.
	fac := mat.NewDense(300, 9, nil)
	for i := 0; i < 300; i++ {
		for j := 0; j < 9; j++ {
			fac.Set(i, j, math.Cos(float64(i*(j+1)))+0.1*float64(j))
		}
	}
	ffT := mat.NewSymDense(300, nil)
	ffT.SymOuterK(1, fac)
	lr, err := eig.NewLowRank(fac, false)
	if err != nil {
		t.Fatal(err)
	}
	eigtest.RunOperator(t, lr, ffT, 1e-14)
	fc := mat.DenseCopyOf(fac)
	linalg.CenterColumns(fc)
	fcT := mat.NewSymDense(300, nil)
	fcT.SymOuterK(1, fc)
	lrc, err := eig.NewLowRank(fac, true)
	if err != nil {
		t.Fatal(err)
	}
	eigtest.RunOperator(t, lrc, fcT, 1e-13)
	// The same factor stored transposed (k×n, as Nyström keeps it).
	lrt, err := eig.NewLowRank(mat.DenseCopyOf(fac.T()).T(), true)
	if err != nil {
		t.Fatal(err)
	}
	eigtest.RunOperator(t, lrt, fcT, 1e-13)
	if _, err := eig.NewLowRank(mat.NewDiagDense(3, []float64{1, 2, 3}), false); err == nil {
		t.Error("NewLowRank accepted a matrix type it cannot multiply")
	}
	small := mat.NewSymDense(9, nil)
	small.SymOuterK(1, fc.T())
	want, err := linalg.SymEig(small, 4)
	if err != nil {
		t.Fatal(err)
	}
	got, err := eig.BlockKrylov{Tol: 1e-12}.Solve(lrc, 4)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		if math.Abs(got.Values[i]-want.Values[i]) > 1e-10*want.Values[0] {
			t.Errorf("LowRank: λ_%d = %g, FcᵀFc's %g", i, got.Values[i], want.Values[i])
		}
	}
}
