package approx

import (
	"github.com/kdual/kdual/internal/par"
	"github.com/kdual/kdual/internal/scratch"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/linalg"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// NystromMap is the Nyström feature map of a kernel on training points X:
// F = K(X, L)·R⁻ᵀ with K(L, L) = R·Rᵀ (R lower triangular, the landmarks'
// rows of F), and for a new point f(y) = R⁻¹·K(L, y).
type NystromMap struct {
	Kernel    kernel.Kernel
	Landmarks []int      // indices of the landmarks in X, in pivot order
	XL        *mat.Dense // the landmarks' rows of X (k×d)
	R         *mat.Dense // k×k lower triangular, K(L, L) = R·Rᵀ
	train     mat.Matrix // F (n×k): the transpose of k×n float64 or float32 storage
	ft32      *linalg.Dense32
	means     []float64 // the training features' means, when the fit kept them
	info      Info
	// Landmarks chosen on a sample (fromSample): the training points'
	// kernel rows C = K(L, X) (k×n) instead of F, stored less crossShift
	// (C − crossShift·1ᵀ, each value rounded once), their row means c̄
	// (crossMean), and F_cᵀF_c and μ = R⁻¹·c̄ formed from them; Train
	// forms F.
	cross      *linalg.Dense32
	crossShift []float64
	crossMean  []float64
	gram       *mat.SymDense
	gramMean   []float64
	// crossRows, instead of cross, computes C's columns [p0, p1) again
	// (integer or float32 products: crossByRanges); crossSerial, for
	// integer products, on the calling goroutine, and crossEach, for
	// float32 products, handing over blocks of points in cache
	// (TrainScores); n is the points.
	crossRows, crossSerial func(p0, p1 int, out []float32, ld int)
	crossEach              func(p0, p1 int, out []float32, ld int, use func() func(q0, q1 int))
	n                      int
	// rowsData is the float32 data those functions read (off-heap: it
	// must stay reachable while they may run), freed with them when the
	// map made it (ownsRows: Fit's shifted copy), left to its owner
	// otherwise (Fit32's caller).
	rowsData *linalg.Dense32
	ownsRows bool
	// pool is the fit's, lending TrainScores its buffers (dropped with
	// the training features).
	pool *scratch.Pool
}

// Train returns F as the transpose of the stored Fᵀ: a *mat.Dense, or a
// *linalg.Dense32 with Float32 (nil for a rebuilt or released map). A map
// whose landmarks were chosen on a sample forms F here, once, from the
// kernel rows it holds — or computes them again first, where it keeps
// only the way to (R⁻¹·C in float32, in place: TrainGram reports false
// afterwards).
func (m *NystromMap) Train() mat.Matrix {
	if m.train == nil && m.cross == nil && m.crossRows != nil && !m.materializeCross() {
		return nil
	}
	if m.train == nil && m.cross != nil {
		m.trainFromCross()
	}
	return m.train
}

// ReleaseTrain drops the training features (and frees float32 storage):
// Map, the landmarks and the factor stay; Train returns nil afterwards.
func (m *NystromMap) ReleaseTrain() {
	m.train, m.means = nil, nil
	if m.cross != nil {
		go m.cross.Free()
	}
	m.cross, m.crossShift, m.crossRows, m.crossSerial, m.crossEach, m.crossMean, m.gram, m.gramMean = nil, nil, nil, nil, nil, nil, nil, nil
	m.releaseRowsData()
	m.pool = nil
	if m.ft32 != nil {
		// Unmapping tens of megabytes takes the system milliseconds:
		// nothing waits for it (the storage is the map's alone).
		go m.ft32.Free()
		m.ft32 = nil
	}
}

// releaseRowsData drops the data the kernel rows' functions read (they
// are gone), freeing it where the map made it.
func (m *NystromMap) releaseRowsData() {
	if m.ownsRows && m.rowsData != nil {
		go m.rowsData.Free()
	}
	m.rowsData, m.ownsRows = nil, false
}

// Info reports the map.
func (m *NystromMap) Info() Info { return m.info }

// TrainMeans returns the training features' column means when the fit
// computed them on the way (float32 features), else ColumnMeans of Train;
// nil once the training features are released or centred.
func (m *NystromMap) TrainMeans() []float64 {
	if m.train == nil && (m.cross != nil || m.crossRows != nil) {
		return append([]float64(nil), m.gramMean...)
	}
	if m.means != nil {
		return append([]float64(nil), m.means...)
	}
	if m.train == nil {
		return nil
	}
	return ColumnMeans(m.train)
}

// CenterTrain subtracts mean (one value per feature) from the stored
// training features in place, each difference rounded once to the
// storage's precision: Train returns F − 1μᵀ afterwards. For a model that
// needs only the centred features (kernel PCA's k×k problem) and would
// otherwise centre a copy.
func (m *NystromMap) CenterTrain(mean []float64) error {
	t, ok := m.Train().(mat.Transpose)
	if !ok {
		return invalidf("NystromMap.CenterTrain: no training features")
	}
	m.means = nil
	switch ft := t.Matrix.(type) {
	case *linalg.Dense32:
		return linalg.CenterRows32(ft, mean)
	case *mat.Dense:
		k, _ := ft.Dims()
		if len(mean) != k {
			return invalidf("NystromMap.CenterTrain: %d means for %d features", len(mean), k)
		}
		for e := 0; e < k; e++ {
			row := ft.RawRowView(e)
			for i := range row {
				row[i] -= mean[e]
			}
		}
		return nil
	}
	return invalidf("NystromMap.CenterTrain: features of type %T", t.Matrix)
}

// Map returns f(y)ᵀ = K(y, L)·R⁻ᵀ for the rows of y.
func (m *NystromMap) Map(y *mat.Dense) (*mat.Dense, error) {
	if y == nil || y.IsEmpty() {
		return nil, invalidf("Map: empty data")
	}
	if _, d := y.Dims(); d != m.XL.RawMatrix().Cols {
		return nil, invalidf("Map: data have %d columns, the landmarks %d", d, m.XL.RawMatrix().Cols)
	}
	if err := linalg.CheckFinite("approx: Map", y); err != nil {
		return nil, err
	}
	ky, err := kernel.CrossGram(y, m.XL, m.Kernel)
	if err != nil {
		return nil, err
	}
	linalg.B64.Trsm(blas.Right, blas.Trans, 1, lowerOf(m.R), ky.RawMatrix())
	return ky, nil
}

// NewNystromMap rebuilds a map from its parts (a saved model): the
// training features are not kept, so Train returns nil.
func NewNystromMap(k kernel.Kernel, xl, r *mat.Dense, info Info) (*NystromMap, error) {
	if err := k.Check(); err != nil {
		return nil, err
	}
	kl, d := xl.Dims()
	if rr, rc := r.Dims(); rr != kl || rc != kl || d < 1 {
		return nil, invalidf("landmarks %d×%d with a %d×%d factor", kl, d, rr, rc)
	}
	for i := 0; i < kl; i++ {
		if !(r.At(i, i) > 0) {
			return nil, invalidf("factor diagonal %d is %g", i, r.At(i, i))
		}
	}
	return &NystromMap{Kernel: k, XL: xl, R: r, info: info}, nil
}

func lowerOf(r *mat.Dense) blas64.Triangular {
	raw := r.RawMatrix()
	return blas64.Triangular{Uplo: blas.Lower, Diag: blas.NonUnit, N: raw.Rows, Stride: raw.Stride, Data: raw.Data}
}

// ColumnMeans returns the column means of a feature matrix F (n×k) as
// Train gives it (a *mat.Dense or the transpose of one), reading its
// storage in order.
func ColumnMeans(f mat.Matrix) []float64 {
	n, k := f.Dims()
	out := make([]float64, k)
	if d, ok := f.(*mat.Dense); ok {
		for i := 0; i < n; i++ {
			for j, v := range d.RawRowView(i)[:k] {
				out[j] += v
			}
		}
	} else if t, ok := f.(mat.Transpose); ok && isDense(t.Matrix) {
		d := t.Matrix.(*mat.Dense)
		for j := 0; j < k; j++ {
			s := 0.0
			for _, v := range d.RawRowView(j)[:n] {
				s += v
			}
			out[j] = s
		}
	} else if t, ok := f.(mat.Transpose); ok && is32(t.Matrix) {
		d := t.Matrix.(*linalg.Dense32)
		par.Blocks(0, k, func(lo, hi int) {
			for j := lo; j < hi; j++ {
				s := 0.0
				for _, v := range d.Row(j)[:n] {
					s += float64(v)
				}
				out[j] = s
			}
		})
	} else {
		for i := 0; i < n; i++ {
			for j := 0; j < k; j++ {
				out[j] += f.At(i, j)
			}
		}
	}
	for j := range out {
		out[j] /= float64(n)
	}
	return out
}

func isDense(m mat.Matrix) bool { _, ok := m.(*mat.Dense); return ok }

func is32(m mat.Matrix) bool { _, ok := m.(*linalg.Dense32); return ok }
