package linalg

import (
	"cmp"
	"math"
	"slices"

	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/internal/scratch"
	"github.com/kdual/kdual/lapack"
	"github.com/kdual/kdual/native"
)

// Eigen holds k eigenpairs of a symmetric n×n matrix: Values in decreasing
// order and the matching orthonormal eigenvectors as the columns of the
// n×k Vectors (nil when only values were asked for). Each eigenvector's
// sign is fixed so that its largest-magnitude entry (the first one, on ties)
// is positive.
type Eigen struct {
	Values  []float64
	Vectors *mat.Dense
}

// SymEig returns the k largest eigenpairs of the symmetric matrix a (only
// its upper triangle is read); k = 0 means all n. a is not modified.
//
// Routing: up to order SmallSym the package's own tridiagonal reduction,
// then dsterf and dstein (0 < k < n) or dstevr (all pairs) on the
// tridiagonal matrix; above it, k = 0 or k = n uses LAPACK dsyevd (divide
// and conquer, about 9n³ flops with vectors) and 0 < k < n dsyevr with
// RANGE = 'I' (the reduction costing 4n³/3); where RANGE = 'I' finds
// fewer than k values (it can miss a cluster that holds the k-th), every
// pair is computed and the top k kept. Memory: one n×n copy. A matrix
// whose largest entry is below 2⁻³⁰⁰ or above 2³⁰⁰ is scaled by a power
// of two first (exact) and its eigenvalues scaled back, so that the
// reduction's norms neither underflow nor overflow.
//
// Errors: k < 0 or k > n, or a non-finite entry, wrap ErrInvalid; an
// eigenvalue past float64's range wraps ErrInvalid too; a LAPACK
// convergence failure wraps lapack.ErrNotConverged.
func SymEig(a *mat.SymDense, k int) (*Eigen, error) {
	return symEig(a, k, true)
}

// SymEigValues is SymEig without eigenvectors.
func SymEigValues(a *mat.SymDense, k int) ([]float64, error) {
	e, err := symEig(a, k, false)
	if err != nil {
		return nil, err
	}
	return e.Values, nil
}

func symEig(a *mat.SymDense, k int, vectors bool) (*Eigen, error) {
	if a == nil || a.IsEmpty() {
		return nil, invalidf("SymEig: empty matrix")
	}
	n := a.SymmetricDim()
	if k < 0 || k > n {
		return nil, invalidf("SymEig: k = %d outside 0..n = %d", k, n)
	}
	if err := CheckFinite("SymEig: a", a); err != nil {
		return nil, err
	}
	if k == 0 {
		k = n
	}
	raw := a.RawSymmetric()
	// Row-major upper storage is column-major lower storage of the same
	// symmetric matrix: LAPACK reads it with uplo = 'L' and no transpose.
	work := scratch.Float64s(n * n)
	defer scratch.Put(work) // nothing returned aliases it
	amax := 0.0
	for i := 0; i < n; i++ {
		row := raw.Data[i*raw.Stride+i : i*raw.Stride+n]
		copy(work[i*n+i:i*n+n], row)
		for _, v := range row {
			amax = math.Max(amax, math.Abs(v))
		}
	}
	shift := 0 // work holds a·2^shift
	if amax > 0 && (amax < 0x1p-300 || amax > 0x1p300) {
		_, exp := math.Frexp(amax)
		shift = -exp
		for i := 0; i < n; i++ {
			ldexpAll(work[i*n+i:i*n+n], shift)
		}
	}
	jobz := byte('N')
	if vectors {
		jobz = 'V'
	}
	w := make([]float64, n)
	var vecs []float64 // column-major n×k, ascending
	if n <= tridiagMax {
		var err error
		if vecs, err = symEigTridiag(jobz, n, k, work, w); err != nil {
			return nil, fmt.Errorf("linalg: SymEig: %w", err)
		}
	} else if k == n {
		if err := lapack.Dsyevd(jobz, 'L', n, work, n, w); err != nil {
			return nil, fmt.Errorf("linalg: SymEig: %w", err)
		}
		vecs = work
	} else {
		var z []float64
		if vectors {
			z = make([]float64, n*k)
		}
		m, err := lapack.Dsyevr(jobz, 'I', 'L', n, work, n, 0, 0, n-k+1, n, 0, w, z, n, nil)
		if err != nil {
			return nil, fmt.Errorf("linalg: SymEig: %w", err)
		}
		vecs = z
		if m != k {
			// dsyevr's RANGE='I' can find none of a cluster that holds
			// the k-th value (its bisection's count; the centred identity
			// I − 11ᵀ/n at n = 250 gives m = 0): every pair by dsyevd
			// instead, the top k kept.
			for i := 0; i < n; i++ {
				copy(work[i*n+i:i*n+n], raw.Data[i*raw.Stride+i:i*raw.Stride+n])
				ldexpAll(work[i*n+i:i*n+n], shift)
			}
			if err := lapack.Dsyevd(jobz, 'L', n, work, n, w); err != nil {
				return nil, fmt.Errorf("linalg: SymEig: dsyevr found %d of %d eigenvalues, then %w", m, k, err)
			}
			copy(w, w[n-k:])
			vecs = work[(n-k)*n:]
		}
	}
	e := &Eigen{Values: make([]float64, k)}
	for c := 0; c < k; c++ {
		e.Values[c] = math.Ldexp(w[k-1-c], -shift)
		if math.IsInf(e.Values[c], 0) {
			return nil, invalidf("SymEig: eigenvalue %d is past float64's range (the matrix's largest entry is %g)", c+1, amax)
		}
	}
	if vectors {
		e.Vectors = mat.NewDense(n, k, nil)
		columnsReversed(e.Vectors, vecs, n, k)
		FixSigns(e.Vectors)
	}
	return e, nil
}

// ldexpAll multiplies every entry of v by 2^e (exact unless a result is
// subnormal or past float64's range).
func ldexpAll(v []float64, e int) {
	for i := range v {
		v[i] = math.Ldexp(v[i], e)
	}
}

// SmallSym is the largest order of a symmetric matrix on which kdual
// keeps OpenBLAS's threaded level-2 routines out: OpenBLAS 0.3.21 runs
// dsymv on all its threads at every order, and at these orders waking and
// synchronising them costs more than the arithmetic, and their spinning
// afterwards takes the other cores from the rest of the fit
// (docs/measurements.md). SymEig reduces such matrices to tridiagonal
// form by the package's own Householder loops (native.SymTridiag), takes
// the tridiagonal matrix's values by LAPACK's dsterf and the top k vectors
// by dstein (all pairs: dstevr), and native.TridiagQ for the vectors,
// instead of dsyevr or dsyevd; eig's dense operator multiplies single
// vectors by gonum's dsymv.
const SmallSym = 200

// tridiagMax is SmallSym, a variable for tests that compare the paths.
var tridiagMax = SmallSym

// bisectTop reports whether the top k of n tridiagonal eigenvalues come
// from bisection rather than from all n values by dsterf: when 40·k ≤ n.
// Bisection costs about k·n Sturm steps for each of its ~50 halvings,
// dsterf about n² QR steps with a smaller constant; the rule keeps
// bisection where it measured well ahead (docs/measurements.md).
func bisectTop(n, k int) bool { return bisectRatio*k <= n }

// bisectRatio is bisectTop's 40, a variable for tests that compare the
// paths.
var bisectRatio = 40

// symEigTridiag is SymEig's small path: work (n×n, column-major lower) is
// reduced in place, w gets the eigenvalues in ascending order (the top k
// in w[:k]), and the vectors (jobz = 'V') come back column-major n×k.
func symEigTridiag(jobz byte, n, k int, work, w []float64) ([]float64, error) {
	d, e, tau := make([]float64, n), make([]float64, n), make([]float64, n)
	nb := native.AVX2()
	nb.SymTridiag(n, work, n, d, e, tau)
	if k < n {
		if z, ok := topTridiag(jobz, n, k, d, e, w); ok {
			if jobz == 'V' {
				nb.TridiagQ(n, k, work, n, tau, z, n)
			}
			return z, nil
		}
	}
	rng := byte('I')
	if k == n {
		rng = 'A'
	}
	var z []float64
	if jobz == 'V' {
		z = make([]float64, n*k)
	}
	d0, e0 := slices.Clone(d), slices.Clone(e) // dstevr may scale d and e
	m, err := lapack.Dstevr(jobz, rng, n, d, e, 0, 0, n-k+1, n, 0, w, z, n, nil)
	if err != nil {
		return nil, err
	}
	if m != k {
		// RANGE='I' can find none of a cluster that holds the k-th value
		// (see symEig): every pair instead, the top k kept.
		var za []float64
		if jobz == 'V' {
			za = make([]float64, n*n)
		}
		ma, err := lapack.Dstevr(jobz, 'A', n, d0, e0, 0, 0, 0, 0, 0, w, za, n, nil)
		if err != nil {
			return nil, err
		}
		if ma != n {
			return nil, fmt.Errorf("dstevr found %d of %d eigenvalues, then %d of all %d: %w", m, k, ma, n, lapack.ErrNotConverged)
		}
		copy(w, w[n-k:])
		if jobz == 'V' {
			z = za[(n-k)*n:]
		}
	}
	if jobz == 'V' {
		nb.TridiagQ(n, k, work, n, tau, z, n)
	}
	return z, nil
}

// topTridiag returns the top k < n eigenpairs of the tridiagonal (d, e)
// as dstevr's range 'I' would — w[:k] ascending, the vectors (jobz 'V')
// column-major n×k — with the k vectors by inverse iteration (dstein) and
// the values by LAPACK's dsterf (every eigenvalue, O(n²)), or by bisection
// (dstebz, O(k·n) with a larger constant) for the top k alone where
// bisectTop says it is the cheaper. The matrix is split as dstebz splits
// it (e_j² ≤ |d_j·d_{j+1}|·ulp² + safmin), each block's values found
// apart. ok is false when dsterf, dstebz or dstein did not converge (the
// caller then takes dstevr). d and e are not modified.
func topTridiag(jobz byte, n, k int, d, e, w []float64) (z []float64, ok bool) {
	const ulp, safmin = 0x1p-52, 0x1p-1022
	type pair struct {
		v     float64
		block int32
	}
	all := make([]pair, 0, n)
	var isplit []int32
	if bisectTop(n, k) {
		// The top k alone by bisection, ascending, with their blocks.
		bw, bb, bs := make([]float64, n), make([]int32, n), make([]int32, n)
		m, _, err := lapack.Dstebz('I', 'E', n, 0, 0, n-k+1, n, 0, d, e[:n-1], bw, bb, bs)
		if err != nil || m != k {
			return nil, false
		}
		for i := 0; i < k; i++ {
			all = append(all, pair{bw[i], bb[i]})
		}
		isplit = bs
	} else {
		dd, ee := make([]float64, n), make([]float64, n)
		copy(dd, d)
		copy(ee, e[:n-1])
		b0 := 0
		for j := 0; j < n; j++ {
			if j < n-1 && !(math.Abs(d[j]*d[j+1])*ulp*ulp+safmin > e[j]*e[j]) {
				continue
			}
			// Block [b0, j].
			if err := lapack.Dsterf(j-b0+1, dd[b0:j+1], ee[b0:max(j, b0)]); err != nil {
				return nil, false
			}
			isplit = append(isplit, int32(j+1))
			for _, v := range dd[b0 : j+1] {
				all = append(all, pair{v, int32(len(isplit))})
			}
			b0 = j + 1
		}
	}
	// The top k values, then in dstein's order: by block, ascending within.
	slices.SortStableFunc(all, func(a, b pair) int { return cmp.Compare(a.v, b.v) })
	top := all[len(all)-k:]
	for i, p := range top {
		w[i] = p.v
	}
	if jobz != 'V' {
		return nil, true
	}
	order := make([]int, k)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(top[a].block, top[b].block) })
	wb, iblock := make([]float64, k), make([]int32, k)
	for i, o := range order {
		wb[i], iblock[i] = top[o].v, top[o].block
	}
	for len(isplit) < n {
		isplit = append(isplit, 0)
	}
	zb := make([]float64, n*k)
	if lapack.Dstein(n, d, e[:n-1], k, wb, iblock, isplit, zb, n) != nil {
		return nil, false // some vector did not converge: dstevr instead
	}
	z = make([]float64, n*k)
	for i, o := range order {
		copy(z[o*n:(o+1)*n], zb[i*n:(i+1)*n])
	}
	return z, true
}

// columnsReversed writes the column-major n×k matrix src (ld n) into dst
// with its columns in reverse order, transposing in cache-sized tiles.
func columnsReversed(dst *mat.Dense, src []float64, n, k int) {
	raw := dst.RawMatrix()
	const tile = 32
	for c0 := 0; c0 < k; c0 += tile {
		c1 := min(c0+tile, k)
		for i0 := 0; i0 < n; i0 += tile {
			i1 := min(i0+tile, n)
			for c := c0; c < c1; c++ {
				col := src[(k-1-c)*n:]
				for i := i0; i < i1; i++ {
					raw.Data[i*raw.Stride+c] = col[i]
				}
			}
		}
	}
}

// SignTies is the relative tolerance within which entries of a column
// count as equally large for the sign convention: computed eigenvectors of
// symmetric data carry rounding that would otherwise decide between
// entries of exactly equal magnitude.
const SignTies = 1e-9

// SignFlips reports, per column of v, whether it must be negated so that
// its leading entry is positive: the first entry whose magnitude is within
// SignTies (relative) of the column's largest magnitude. This is kdual's
// sign convention for eigenvectors.
func SignFlips(v mat.Matrix) []bool {
	r, c := v.Dims()
	flip := make([]bool, c)
	if d, ok := v.(*mat.Dense); ok {
		// The same test row by row, reading the storage in order.
		raw := d.RawMatrix()
		big := make([]float64, c)
		for i := 0; i < r; i++ {
			for j, x := range raw.Data[i*raw.Stride : i*raw.Stride+c] {
				big[j] = math.Max(big[j], math.Abs(x))
			}
		}
		found := make([]bool, c)
		left := c
		for i := 0; i < r && left > 0; i++ {
			for j, x := range raw.Data[i*raw.Stride : i*raw.Stride+c] {
				if !found[j] && math.Abs(x) >= big[j]*(1-SignTies) {
					found[j], flip[j] = true, x < 0
					left--
				}
			}
		}
		return flip
	}
	for j := 0; j < c; j++ {
		big := 0.0
		for i := 0; i < r; i++ {
			big = math.Max(big, math.Abs(v.At(i, j)))
		}
		for i := 0; i < r; i++ {
			if x := v.At(i, j); math.Abs(x) >= big*(1-SignTies) {
				flip[j] = x < 0
				break
			}
		}
	}
	return flip
}

// FixSigns negates the columns of v that SignFlips names, making
// eigenvector signs deterministic.
func FixSigns(v *mat.Dense) {
	flip := SignFlips(v)
	r, c := v.Dims()
	raw := v.RawMatrix()
	for i := 0; i < r; i++ {
		row := raw.Data[i*raw.Stride : i*raw.Stride+c]
		for j := range row {
			if flip[j] {
				row[j] = -row[j]
			}
		}
	}
}

// Func returns V·diag(f(λ))·Vᵀ for the stored pairs: a function of the
// symmetric matrix when all n pairs are stored (M^{1/2}, M^{-1/2}, M^{-1}
// of a small positive definite M). It panics without Vectors.
func (e *Eigen) Func(f func(float64) float64) *mat.Dense {
	n, k := e.Vectors.Dims()
	scaled := CopyOf(e.Vectors)
	for j := 0; j < k; j++ {
		c := f(e.Values[j])
		for i := 0; i < n; i++ {
			scaled.Set(i, j, scaled.At(i, j)*c)
		}
	}
	out := mat.NewDense(n, n, nil)
	Mul(out, scaled, e.Vectors.T())
	return out
}

// SymPart returns (A + Aᵀ)/2 of the square matrix a: the symmetric matrix
// that products such as HᵀGH should be, without their rounding asymmetry.
func SymPart(a mat.Matrix) *mat.SymDense {
	n, _ := a.Dims()
	s := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			s.SetSym(i, j, 0.5*(a.At(i, j)+a.At(j, i)))
		}
	}
	return s
}
