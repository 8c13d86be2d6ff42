package approx

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/kdual/kdual/gram"
	"github.com/kdual/kdual/internal/bigmem"
	"github.com/kdual/kdual/internal/par"
	"github.com/kdual/kdual/internal/rng"
	"github.com/kdual/kdual/internal/scratch"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/status"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// rpc is the state of a block RPCholesky (or uniform) factorisation:
// the residual diagonal, the factor so far and the round's scratch.
type rpc struct {
	ny       Nystrom
	src      nySource
	k        kernel.Kernel
	m, b     int
	seed     uint64
	r        *rand.Rand
	krow     func(i int, dst []float64)
	trace    float64 // of the kernel
	floor    float64 // residuals at most this are explained
	res      []float64
	resTrace float64
	fac      factor
	ft32     *linalg.Dense32
	kcols    int
	pivots   []int
	chosen   []bool
	order    []int // Uniform's order
	next     int
	info     Info
	empty    int // consecutive rounds that accepted nothing
	rfull    *mat.Dense
	// The rounds' scratch, carved from one slab of the pool at its largest
	// (b candidates, m features; cols and l b×b): ks, h K and H among the
	// candidates, fs their features, cols the accepted ones' Cholesky
	// columns, l and ft the new landmarks' L and features (the factor's
	// own scratch comes from the slab too).
	scr  struct{ ks, fs, h, ft, cols, l []float64 }
	slab []float64
}

// fit is the block RPCholesky (or uniform) factorisation on a source:
// rounds of sampled candidates, accepted by rejection on their residual
// among themselves, until Rank landmarks, TraceTol or the cut-off.
func (ny Nystrom) fit(src nySource, k kernel.Kernel, start time.Time) (*NystromMap, error) {
	st, err := newRPC(ny, src, k)
	if err != nil {
		return nil, err
	}
	for st.kcols < st.m {
		if ny.TraceTol > 0 && st.resTrace <= ny.TraceTol*st.trace {
			break
		}
		if ny.Context != nil && ny.Context.Err() != nil {
			st.free()
			return nil, status.Cancelled(context.Cause(ny.Context), fmt.Sprintf("Nyström round %d, %d landmarks", st.info.Rounds+1, st.kcols))
		}
		more, err := st.round()
		if err != nil {
			st.free()
			return nil, err
		}
		if !more {
			break
		}
	}
	if st.kcols == 0 {
		st.free()
		return nil, invalidf("Nystrom: no landmark was accepted (the kernel's residual is below the cut-off)")
	}
	return st.result(start)
}

// newRPC sets up a factorisation: the options' defaults, the kernel's
// diagonal (the first residual), the factor's storage.
func newRPC(ny Nystrom, src nySource, k kernel.Kernel) (*rpc, error) {
	st := &rpc{ny: ny, src: src, k: k, m: ny.Rank, b: ny.Block, seed: ny.Seed, krow: src.krow}
	if st.b == 0 {
		st.b = 256
	}
	st.b = min(st.b, st.m)
	cut := ny.Cutoff
	if cut == 0 {
		cut = 1e-12
		if src.f32 {
			// The float32 residuals carry errors of about 10⁻⁷ of the
			// diagonal: smaller ones are noise.
			cut = 1e-5
		}
	}
	if st.seed == 0 {
		st.seed = 1
	}
	st.r = rng.New(st.seed)
	if st.krow == nil {
		st.krow = src.row
	}
	diag, err := kernelDiagonal(src, k)
	if err != nil {
		return nil, err
	}
	top := 0.0
	for _, v := range diag {
		st.trace += v
		top = math.Max(top, v)
	}
	if !(st.trace > 0) {
		return nil, invalidf("Nystrom: the kernel's trace is %g", st.trace)
	}
	st.floor = cut * top
	st.res = diag // the residual diagonal
	st.resTrace = st.trace
	// Fᵀ (m×n, row e the e-th feature of every point: contiguous for the
	// updates); the first kcols rows are in use.
	n, m := src.n, st.m
	size := int64(8)
	if src.f32 {
		size = 4
	}
	if err := bigmem.Fits(fmt.Sprintf("Nystrom: the factor of %d landmarks over %d points", m, n), size, m, n); err != nil {
		return nil, err
	}
	switch {
	case src.f32 && ny.pool != nil:
		st.ft32 = &linalg.Dense32{Rows: m, Cols: n, Data: ny.pool.Float32s(m * n)}
	case src.f32:
		if st.ft32, err = linalg.NewDense32(m, n); err != nil {
			return nil, err
		}
	}
	bb, bm := st.b*st.b, st.b*m
	st.slab = ny.pool.Float64s(4*bb + 3*bm + (bm+1)/2 + (bb+1)/2)
	rest := st.slab
	carve := func(n int) []float64 {
		s := rest[:n:n]
		rest = rest[n:]
		return s
	}
	st.scr.ks, st.scr.h, st.scr.cols, st.scr.l = carve(bb), carve(bb), carve(bb), carve(bb)
	st.scr.fs, st.scr.ft = carve(bm), carve(bm)
	tr := carve(bm) // gather's transposed features
	if src.f32 {
		fs := scratch.AsFloat32s(carve((bm+1)/2), bm)
		st.fac = factor32{ft: st.ft32, gt: new([]float64), tr: &tr, fs: &fs, l32: scratch.AsFloat32s(carve((bb+1)/2), bb), sums: make([]float64, m)}
	} else {
		st.fac = factor64{ft: mat.NewDense(m, n, nil), gt: new([]float64), tr: &tr}
	}
	st.chosen = make([]bool, n)
	st.order = st.r.Perm(n)
	st.info = Info{Method: "nystrom", Sampler: ny.Sampler.String(), Products: src.rows.Arithmetic()}
	if src.f32 {
		st.info.Precision = "float32"
	}
	return st, nil
}

// kernelDiagonal returns k(x_i, x_i) for every row of the source, checked
// nonnegative: exactly 1 for kernels with a unit diagonal (Eval's δ is 0
// exactly for x = y).
func kernelDiagonal(src nySource, k kernel.Kernel) ([]float64, error) {
	diag := make([]float64, src.n)
	if k.UnitDiagonal() {
		for i := range diag {
			diag[i] = 1
		}
		return diag, nil
	}
	par.For(0, src.n, nil, func(lo, hi int) {
		buf := make([]float64, src.dim)
		for i := lo; i < hi; i++ {
			src.row(i, buf)
			diag[i] = k.Eval(buf, buf)
		}
	})
	for i, v := range diag {
		switch {
		case math.IsNaN(v) || math.IsInf(v, 0):
			return nil, invalidf("Nystrom: k(x, x) of row %d is %g: the kernel's values are past float64's range (check its parameters and the data's scale)", i, v)
		case v < 0:
			return nil, invalidf("Nystrom: k(x, x) of row %d is %g: the kernel is not positive semi-definite", i, v)
		}
	}
	return diag, nil
}

// free releases the float32 factor of a fit that ends in an error.
func (st *rpc) free() {
	if st.ft32 != nil {
		st.ft32.Free()
	}
}

// candidates returns up to want new candidates: sampled proportionally
// to the residual (RPCholesky) or the next unchosen points in a seeded
// order (Uniform).
func (st *rpc) candidates(want int) []int {
	if st.ny.Sampler == RPCholesky {
		return sampleProportional(st.r, st.res, want)
	}
	var cand []int
	for len(cand) < want && st.next < st.src.n {
		if i := st.order[st.next]; !st.chosen[i] {
			cand = append(cand, i)
		}
		st.next++
	}
	return cand
}

// round runs one round: candidates, their residual among themselves,
// acceptance, and the accepted landmarks' features. It reports false when
// the factorisation is done (nothing left to sample, or the residual is
// below the cut-off).
func (st *rpc) round() (bool, error) {
	cand := st.candidates(min(st.b, st.m-st.kcols))
	if len(cand) == 0 {
		return false, nil // nothing left: the residual is zero (rank found)
	}
	st.info.Rounds++
	h, fs, err := st.residualAmong(&pointRows{idx: cand, dim: st.src.dim, row: st.krow})
	if err != nil {
		return false, err
	}
	acc, cols := st.accept(cand, h)
	if len(acc) == 0 {
		st.empty++
		// The residual is below the cut-off (or keeps refusing): rank found.
		done := (st.ny.Sampler == Uniform && st.next >= st.src.n) || maxOf(st.res) <= st.floor || st.empty >= 64
		return !done, nil
	}
	st.empty = 0
	return true, st.add(cand, fs, acc, cols)
}

// residualAmong returns H = K(S, S) − F_S·F_Sᵀ among the candidates S
// (its lower triangle, c×c row-major: all the elimination reads) and F_S
// (c×kcols; nil before the first landmark).
func (st *rpc) residualAmong(xs *pointRows) ([]float64, *mat.Dense, error) {
	cand := xs.idx
	c := len(cand)
	ks, err := among(st.src.rows, xs, st.k, grow(&st.scr.ks, c*c))
	if err != nil {
		return nil, nil, err
	}
	var fs *mat.Dense
	if st.kcols > 0 {
		fs = mat.NewDense(c, st.kcols, grow(&st.scr.fs, c*st.kcols))
		st.fac.gather(cand, st.kcols, fs)
		linalg.SymRankK(ks, ks, -1, fs)
	}
	h := grow(&st.scr.h, c*c)
	kraw := ks.RawSymmetric()
	for a := 0; a < c; a++ {
		for e, v := range kraw.Data[a*kraw.Stride+a : a*kraw.Stride+c] {
			h[(a+e)*c+a] = v
		}
	}
	return h, fs, nil
}

// accept takes the candidates in sampling order, each with probability
// its residual given the accepted ones over its residual when sampled
// (RPCholesky; always for Uniform) and above the cut-off, eliminating
// each accepted candidate from the ones after it (the rest of H is never
// read again). It returns the accepted positions in cand and their
// Cholesky columns over cand (entries at or below their own position).
func (st *rpc) accept(cand []int, h []float64) (acc []int, cols [][]float64) {
	c := len(cand)
	slab := grow(&st.scr.cols, c*c)
	clear(slab)
	for j := 0; j < c; j++ {
		rj := h[j*c+j]
		i := cand[j]
		if st.chosen[i] || !(rj > st.floor) {
			// Explained to the cut-off: never sampled again (the
			// tracked residual may differ from rj by rounding).
			st.res[i] = 0
			st.info.Rejected++
			continue
		}
		if st.ny.Sampler == RPCholesky && !(st.r.Float64()*st.res[i] < rj) {
			st.info.Rejected++
			continue
		}
		sq := math.Sqrt(rj)
		col := slab[len(acc)*c : (len(acc)+1)*c]
		for a := j; a < c; a++ {
			col[a] = h[a*c+j] / sq
		}
		// The lower triangle only: column j below the diagonal and
		// the diagonal are all that later steps read.
		for a := j + 1; a < c; a++ {
			if col[a] != 0 {
				floats.AddScaled(h[a*c+j+1:a*c+a+1], -col[a], col[j+1:a+1])
			}
		}
		acc = append(acc, j)
		cols = append(cols, col)
		st.chosen[i] = true
	}
	return acc, cols
}

// add appends the accepted landmarks T: their features (their kernel
// rows only now), their rows of R, and the residual they leave.
func (st *rpc) add(cand []int, fs *mat.Dense, acc []int, cols [][]float64) error {
	t, kcols := len(acc), st.kcols
	l := grow(&st.scr.l, t*t)
	clear(l)
	nr := newRows{idx: make([]int, t), l: mat.NewDense(t, t, l)}
	nr.xt = &pointRows{idx: nr.idx, dim: st.src.dim, row: st.krow}
	for a, j := range acc {
		nr.idx[a] = cand[j]
		for e := 0; e <= a; e++ {
			nr.l.Set(a, e, cols[e][j])
		}
	}
	if kcols > 0 {
		nr.ft = mat.NewDense(t, kcols, grow(&st.scr.ft, t*kcols))
		for a, j := range acc {
			copy(nr.ft.RawRowView(a), fs.RawRowView(j))
		}
	}
	if err := st.fac.extend(kcols, st.src.rows, nr, st.pivots, st.res); err != nil {
		return err
	}
	st.pivots = append(st.pivots, nr.idx...)
	// The new landmarks' rows of F, as stored: their earlier features
	// (F_T), then L (pivot columns were set to it), zeros after.
	if st.rfull == nil {
		st.rfull = mat.NewDense(st.m, st.m, nil)
	}
	for a := 0; a < t; a++ {
		row := st.rfull.RawRowView(kcols + a)
		if kcols > 0 {
			copy(row, nr.ft.RawRowView(a))
		}
		for e := 0; e <= a; e++ {
			v := nr.l.At(a, e)
			if st.src.f32 {
				v = float64(float32(v))
			}
			row[kcols+e] = v
		}
	}
	st.resTrace = 0
	for a, v := range st.res {
		if v < 0 || st.chosen[a] {
			v = 0
			st.res[a] = 0
		}
		st.resTrace += v
	}
	st.kcols += t
	if st.ny.Progress != nil {
		st.ny.Progress(st.kcols, st.m)
	}
	return nil
}

// result assembles the map: the landmarks, R (the landmarks' rows of F,
// lower triangular, assembled round by round), the trace error and, with
// ResidualSample, the sampled lower bound on ‖K − K̂‖₂.
func (st *rpc) result(start time.Time) (*NystromMap, error) {
	// The rounds are over: their scratch goes back to the pool (the
	// residual's sample takes it).
	st.scr.ks, st.scr.h, st.scr.fs, st.scr.ft, st.scr.cols, st.scr.l = nil, nil, nil, nil, nil, nil
	st.fac.release()
	st.ny.pool.Put(st.slab)
	st.slab = nil
	kcols, src := st.kcols, st.src
	rr := st.rfull
	if kcols < st.m {
		rr = linalg.CopyOf(st.rfull.Slice(0, kcols, 0, kcols))
	}
	info := st.info
	info.Rank = kcols
	info.TraceError = st.resTrace / st.trace
	info.EigenvalueBound = st.resTrace
	var means []float64
	if st.ft32 != nil {
		sums := st.fac.(factor32).sums
		means = make([]float64, kcols)
		for e := range means {
			means[e] = sums[e] / float64(src.n)
		}
	}
	if st.ny.ResidualSample > 0 {
		// A sampled fit's own fit (its pool set: Nystrom.sampled) keeps
		// R, the landmarks and the means, not F: the residual estimate
		// gives F back to the pool once it has read F_S.
		lmax, err := st.sampledResidual(st.ny.pool != nil)
		if err != nil {
			return nil, err
		}
		info.ResidualNormLower = math.Max(lmax, 0)
	}
	var xl *mat.Dense
	if !st.ny.ofSample {
		xl = landmarkRows(st.ny.pool, src, st.pivots)
	}
	info.Seconds = time.Since(start).Seconds()
	out := &NystromMap{Kernel: st.k, Landmarks: st.pivots, XL: xl, R: rr, info: info, means: means}
	if !src.f32 || st.ft32 != nil {
		out.train, out.ft32 = st.fac.train(kcols), st.ft32
	}
	return out, nil
}

// sampledResidual is the largest eigenvalue of K − K̂ on ResidualSample
// rows S chosen uniformly (TopEigenvalue): a lower bound on ‖K − K̂‖₂.
// F_S·F_Sᵀ is subtracted in the features' own precision: float64 by
// dsyrk, or for float32 features by ssyrk on F_S as stored (float32
// accumulation: each entry within about √k·2⁻²³·‖f_a‖·‖f_b‖ of the exact
// product of the stored features, and ‖f(x)‖² ≤ k(x, x): far below the
// residual's scale) — half the time and memory of a float64 copy. With
// release, float32 features go back to the pool once F_S is read
// (st.ft32 nil after), for the product's scratch to take.
func (st *rpc) sampledResidual(release bool) (float64, error) {
	n, dim := st.src.n, st.src.dim
	p := min(st.ny.ResidualSample, n)
	sample := st.r.Perm(n)[:p]
	pool := st.ny.pool
	var fs []float32
	if st.ft32 != nil {
		// F_Sᵀ first: with release, K(S, S) and the product's scratch
		// then take F's memory.
		fs = pool.Float32s(st.kcols * p)
		defer pool.Put32(fs)
		par.Blocks(0, st.kcols, func(lo, hi int) {
			for f := lo; f < hi; f++ {
				row, out := st.ft32.Row(f), fs[f*p:(f+1)*p]
				for a, i := range sample {
					out[a] = row[i]
				}
			}
		})
		if release {
			pool.Put32(st.ft32.Data)
			st.ft32 = nil
		}
	}
	buf := pool.Float64s(p * p)
	defer pool.Put(buf)
	e, err := among(st.src.rows, &pointRows{idx: sample, dim: dim, row: st.src.row}, st.k, buf)
	if err != nil {
		return 0, err
	}
	if fs != nil {
		acc := pool.Float32s(p * p)
		defer pool.Put32(acc)
		if err := linalg.SubATA32(e, fs, st.kcols, acc); err != nil {
			return 0, err
		}
	} else {
		fst := mat.NewDense(st.kcols, p, nil) // F_Sᵀ
		gatherT(st.fac, sample, st.kcols, fst)
		linalg.SymRankK(e, e, -1, fst.T())
	}
	top := st.ny.TopEigenvalue
	if top == nil {
		top = denseTop
	}
	return top(e, st.seed)
}

// among returns the kernel among the data's rows xs: by the kernel rows'
// exact integer products where they have them (gram.KernelRows.Among),
// else by the Gram engine on those rows (gathered as the kernel rows see
// them).
func among(rows *gram.KernelRows, xs *pointRows, k kernel.Kernel, buf []float64) (*mat.SymDense, error) {
	m := len(xs.idx)
	if buf == nil {
		buf = make([]float64, m*m)
	}
	if rows.Among(xs.idx, buf) {
		return mat.NewSymDense(m, buf), nil
	}
	return kernel.Gram(xs.dense(), k)
}

func maxOf(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = math.Max(m, x)
	}
	return m
}

// sampleProportional draws count indices i.i.d. with probability
// proportional to w (non-negative), by inversion of the cumulative sums;
// none when w is all zero.
func sampleProportional(r interface{ Float64() float64 }, w []float64, count int) []int {
	cum := make([]float64, len(w))
	s := 0.0
	for i, v := range w {
		s += v
		cum[i] = s
	}
	if !(s > 0) {
		return nil
	}
	out := make([]int, count)
	for c := range out {
		u := r.Float64() * s
		lo, hi := 0, len(cum)-1
		for lo < hi {
			mid := (lo + hi) / 2
			if cum[mid] > u {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		// Skip zero-weight entries a rounding could land on.
		for lo < len(w)-1 && w[lo] == 0 {
			lo++
		}
		out[c] = lo
	}
	return out
}
