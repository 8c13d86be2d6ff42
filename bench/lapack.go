package bench

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"time"

	"gonum.org/v1/gonum/lapack"
	native "gonum.org/v1/gonum/lapack/gonum"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/internal/rng"
	kdlapack "github.com/kdual/kdual/lapack/gonum"
)

// LAPACKOps are the gonum decompositions LAPACK times, each the match of a
// NumPy/SciPy call on the same OpenBLAS (bench/peers/lapack.py):
//
//	eigensym  mat.EigenSym.Factorize(A, vectors)      numpy.linalg.eigh(A)
//	svd       mat.SVD.Factorize(A, SVDThin)           numpy.linalg.svd(A, full_matrices=False)
//	qr        mat.QR.Factorize(A), QTo, RTo           numpy.linalg.qr(A)
//	lu        mat.LU.Factorize(A)                     scipy.linalg.lu_factor(A)
//	cholesky  mat.Cholesky.Factorize(S)               numpy.linalg.cholesky(S)
//	eigen     mat.Eigen.Factorize(A, EigenRight)      numpy.linalg.eig(A)
//
// A is n×n with N(0, 1) entries, symmetric (A + Aᵀ)/2 for eigensym and
// S = A Aᵀ/n + I for cholesky.
var LAPACKOps = []string{"eigensym", "svd", "qr", "lu", "cholesky", "eigen"}

// LAPACKTiming is one timed decomposition.
type LAPACKTiming struct {
	Op      string  `json:"op"`
	N       int     `json:"n"`
	Impl    string  `json:"impl"`
	Seconds float64 `json:"seconds"`
	// Check is a relative residual of the result (‖A V − V Λ‖/‖A‖ and the
	// like), so a fast wrong answer cannot pass unnoticed.
	Check float64 `json:"check"`
}

// LAPACK times the gonum decompositions ops at size n, with gonum's LAPACK
// set to impl ("openblas": kdual's lapack/gonum, "gonum": gonum's own Go
// code), and restores kdual's implementation afterwards. Each op is timed
// once per call, the inputs generated before the clock starts; with
// kdual's implementation it first runs once untimed, so that the time is
// the steady state of a process that factorises repeatedly (as the
// Python side's repeats are), not the first touch of fresh memory — on
// the development machine, a virtual machine, that alone made one
// n = 2000 mat.LU take 0.17–0.35 s against 0.13 s warm. gonum's own Go
// code, tens of seconds per call at that size, runs only the timed call.
// It switches
// gonum's process-wide LAPACK, so nothing else may use gonum meanwhile.
func LAPACK(n int, ops []string, impl string, seed uint64) ([]LAPACKTiming, error) {
	if n < 1 {
		return nil, fmt.Errorf("bench: lapack n = %d < 1", n)
	}
	var li lapack.Float64
	switch impl {
	case "openblas":
		li = kdlapack.Implementation{}
	case "gonum":
		li = native.Implementation{}
	default:
		return nil, fmt.Errorf("bench: lapack implementation %q: want openblas or gonum", impl)
	}
	for _, op := range ops {
		if !slices.Contains(LAPACKOps, op) {
			return nil, fmt.Errorf("bench: lapack op %q: want one of %v", op, LAPACKOps)
		}
	}
	lapack64.Use(li)
	defer lapack64.Use(kdlapack.Implementation{})

	r := rng.New(seed)
	data := make([]float64, n*n)
	for i := range data {
		data[i] = r.NormFloat64()
	}
	a := mat.NewDense(n, n, data)
	var out []LAPACKTiming
	for _, op := range ops {
		if impl == "openblas" {
			if _, _, err := timeOp(op, a); err != nil {
				return nil, err
			}
		}
		secs, check, err := timeOp(op, a)
		if err != nil {
			return out, err
		}
		out = append(out, LAPACKTiming{Op: op, N: n, Impl: impl, Seconds: secs, Check: check})
	}
	return out, nil
}

func timeOp(op string, a *mat.Dense) (secs, check float64, err error) {
	n, _ := a.Dims()
	anorm := mat.Norm(a, 2)
	switch op {
	case "eigensym":
		s := mat.NewSymDense(n, nil)
		for i := 0; i < n; i++ {
			for j := i; j < n; j++ {
				s.SetSym(i, j, (a.At(i, j)+a.At(j, i))/2)
			}
		}
		var e mat.EigenSym
		t := startClock()
		ok := e.Factorize(s, true)
		secs = time.Since(t).Seconds()
		if !ok {
			return 0, 0, fmt.Errorf("bench: eigensym did not converge")
		}
		var v, av mat.Dense
		e.VectorsTo(&v)
		av.Mul(s, &v)
		vals := e.Values(nil)
		for j := range vals {
			for i := 0; i < n; i++ {
				av.Set(i, j, av.At(i, j)-vals[j]*v.At(i, j))
			}
		}
		return secs, mat.Norm(&av, 2) / mat.Norm(s, 2), nil
	case "svd":
		var s mat.SVD
		t := startClock()
		ok := s.Factorize(a, mat.SVDThin)
		secs = time.Since(t).Seconds()
		if !ok {
			return 0, 0, fmt.Errorf("bench: svd did not converge")
		}
		var u, v, r mat.Dense
		s.UTo(&u)
		s.VTo(&v)
		vals := s.Values(nil)
		u.Apply(func(_, j int, x float64) float64 { return x * vals[j] }, &u)
		r.Mul(&u, v.T())
		r.Sub(&r, a)
		return secs, mat.Norm(&r, 2) / anorm, nil
	case "qr":
		var qr mat.QR
		var q, rr mat.Dense
		t := startClock()
		qr.Factorize(a)
		qr.QTo(&q)
		qr.RTo(&rr)
		secs = time.Since(t).Seconds()
		var res mat.Dense
		res.Mul(&q, &rr)
		res.Sub(&res, a)
		return secs, mat.Norm(&res, 2) / anorm, nil
	case "lu":
		var lu mat.LU
		t := startClock()
		lu.Factorize(a)
		secs = time.Since(t).Seconds()
		return secs, solveResidual(a, func(x *mat.VecDense, b mat.Vector) error { return lu.SolveVecTo(x, false, b) }), nil
	case "cholesky":
		var g mat.SymDense
		g.SymOuterK(1/float64(n), a)
		for i := 0; i < n; i++ {
			g.SetSym(i, i, g.At(i, i)+1)
		}
		var c mat.Cholesky
		t := startClock()
		ok := c.Factorize(&g)
		secs = time.Since(t).Seconds()
		if !ok {
			return 0, 0, fmt.Errorf("bench: cholesky: matrix not positive definite")
		}
		return secs, solveResidual(&g, c.SolveVecTo), nil
	case "eigen":
		var e mat.Eigen
		t := startClock()
		ok := e.Factorize(a, mat.EigenRight)
		secs = time.Since(t).Seconds()
		if !ok {
			return 0, 0, fmt.Errorf("bench: eigen did not converge")
		}
		return secs, eigenResidual(a, &e) / anorm, nil
	}
	return 0, 0, fmt.Errorf("bench: lapack op %q", op)
}

// solveResidual is the backward error ‖A x − b‖ / (‖A‖ ‖x‖) of a solve with
// a factorisation, for b with N(0, 1) entries.
func solveResidual(a mat.Matrix, solve func(x *mat.VecDense, b mat.Vector) error) float64 {
	n, _ := a.Dims()
	r := rng.New(7)
	b := mat.NewVecDense(n, nil)
	for i := 0; i < n; i++ {
		b.SetVec(i, r.NormFloat64())
	}
	var x, res mat.VecDense
	if err := solve(&x, b); err != nil {
		return math.Inf(1)
	}
	res.MulVec(a, &x)
	res.SubVec(&res, b)
	return mat.Norm(&res, 2) / (mat.Norm(a, 2) * mat.Norm(&x, 2))
}

// startClock collects the garbage of the inputs' preparation (the 2-norm
// of A is an SVD) and returns the time, so that the collector does not run
// inside the timed call.
func startClock() time.Time {
	runtime.GC()
	return time.Now()
}

// eigenResidual is the largest ‖A v − λ v‖ over every n/20-th right
// eigenvector of a general matrix (Frobenius norms throughout).
func eigenResidual(a *mat.Dense, e *mat.Eigen) float64 {
	n, _ := a.Dims()
	var v mat.CDense
	e.VectorsTo(&v)
	vals := e.Values(nil)
	// ‖A v − λ v‖ for every n/20-th column, relative to ‖A‖ (Frobenius
	// norms throughout).
	worst := 0.0
	av := make([]complex128, n)
	for j := 0; j < n; j += max(1, n/20) {
		clear(av)
		for k := 0; k < n; k++ {
			vk := v.At(k, j)
			for i := 0; i < n; i++ {
				av[i] += complex(a.At(i, k), 0) * vk
			}
		}
		var ss float64
		for i := 0; i < n; i++ {
			d := av[i] - vals[j]*v.At(i, j)
			ss += real(d)*real(d) + imag(d)*imag(d)
		}
		worst = math.Max(worst, math.Sqrt(ss))
	}
	return worst
}
