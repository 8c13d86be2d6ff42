package ppca

import (
	"math"
	"sort"

	"gonum.org/v1/gonum/mat"
)

// preimageFloor is τ of the package documentation: below it the positive
// weights of a kernel vector are treated as absent.
const preimageFloor = 1e-12

// PreImage maps centred kernel vectors (rows of kc, N columns: from
// Reconstruct, Generate or Sample) back to input space with the kernel
// smoother x̂ = Σ_i w_i x_i / Σ_i w_i with w_i = v_i − min_l v_l,
// v_i = (k_c)_i + m_i (see the package documentation). nearest > 0 keeps only the nearest largest
// weights. It also returns how many rows had no positive weight and were
// given the training mean.
func (m *Dual) PreImage(kc *mat.Dense, nearest int) (*mat.Dense, int, error) {
	if err := m.check(); err != nil {
		return nil, 0, err
	}
	if m.x == nil {
		return nil, 0, invalidf("PreImage: the model was fitted on a kernel matrix, not on inputs")
	}
	if err := m.checkKernelRows("PreImage", kc); err != nil {
		return nil, 0, err
	}
	if nearest < 0 || nearest > m.n {
		return nil, 0, invalidf("PreImage: nearest = %d: want 0 (all) … N = %d", nearest, m.n)
	}
	rows, _ := kc.Dims()
	_, d := m.x.Dims()
	mean := make([]float64, d)
	for i := 0; i < m.n; i++ {
		for j, v := range m.x.RawRowView(i) {
			mean[j] += v / float64(m.n)
		}
	}
	out := mat.NewDense(rows, d, nil)
	w := make([]float64, m.n)
	idx := make([]int, m.n)
	fallback := 0
	for r := 0; r < rows; r++ {
		lo := math.Inf(1)
		for i, v := range kc.RawRowView(r) {
			w[i] = v + m.center.RowMeans[i]
			lo = math.Min(lo, w[i])
			idx[i] = i
		}
		for i := range w {
			w[i] -= lo
		}
		if nearest > 0 && nearest < m.n {
			sort.Slice(idx, func(a, b int) bool { return w[idx[a]] > w[idx[b]] })
			for _, i := range idx[nearest:] {
				w[i] = 0
			}
		}
		sum := 0.0
		for _, v := range w {
			sum += v
		}
		dst := out.RawRowView(r)
		if sum < preimageFloor {
			copy(dst, mean)
			fallback++
			continue
		}
		for i, v := range w {
			if v == 0 {
				continue
			}
			for j, x := range m.x.RawRowView(i) {
				dst[j] += v / sum * x
			}
		}
	}
	return out, fallback, nil
}
