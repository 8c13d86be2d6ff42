package gram

import (
	"github.com/kdual/kdual/internal/par"
	"github.com/kdual/kdual/internal/scratch"
	"github.com/kdual/kdual/native"
	"github.com/kdual/kdual/paths"
)

// PackedSyrk reports whether C·Cᵀ of float32 rows (linalg.Syrk32 and the
// products built on it, a Nyström fit's C_cC_cᵀ) takes kdual's packed
// kernel on the paths in force (paths.Paths.SyrkNative), for the layers
// that multiply kernel data without reading the paths themselves.
func PackedSyrk() bool { return paths.Current().SyrkNative }

// PackedGemm reports whether the float32 inner products of landmarks with
// the data's points (RangeRows32, Rows32 on float32 products) take kdual's
// packed kernel on the paths in force (paths.Paths.GemmNative) rather
// than OpenBLAS sgemm.
func PackedGemm() bool { return paths.Current().GemmNative }

// gemmDepth is the depth block of the packed products (native.Gemm32Run):
// a block of 48 points over 1024 features is 192 KB of packed panels, in
// L2 while every landmark passes over it; d = 784 (images) is one block.
const gemmDepth = 1024

// packedProducts packs the m landmarks' float32 rows a (depth d) once and
// returns a function that sets blk (stride ld) to their inner products
// with the w points from q0 of x (rows of depth d) by the packed kernel,
// on par.Workers(workers) threads of its own: the products sgemm32Into
// gives, each within the products' bound of it (another order of the
// same float32 sums), the same bits for the same points every time.
func packedProducts(m, d int, a, x []float32, workers int) func(q0, w int, blk []float32, ld int) {
	wide := native.HasWide()
	pa := make([]float32, native.Gemm32PackLen(m, d))
	native.Gemm32PackA(wide, m, d, a, d, pa)
	return func(q0, w int, blk []float32, ld int) {
		threads := par.Workers(workers)
		size := native.Gemm32ScratchLen(threads, min(gemmDepth, d))
		buf := scratch.Float64s((size + 1) / 2)
		defer scratch.Put(buf)
		native.Gemm32Run(wide, threads, m, w, d, gemmDepth, pa, x[q0*d:], d, scratch.AsFloat32s(buf, size), blk, ld)
	}
}
