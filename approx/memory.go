package approx

import (
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/internal/scratch"
)

// collectScanMax bounds the memory that the garbage collection before a
// fit's buffers, and between a sampled fit's halves, may scan
// (scratch.Collect). Garbage left before them — the caller's (data read
// and converted), the sample fit's (its points' copies, the rounds'
// blocks) — holds resident pages that the fit's buffers then take
// instead of fresh ones, which cost a fault each: Fashion n = 20 000,
// k = 1000 in the CLI, 11 800–12 000 page faults in the fit against
// 17 400–17 700 without them (docs/measurements.md).
// A collection took about 0.8 ms plus 0.15 ms a scanned MB (two cores),
// and a thousand fresh pages about 10 ms on a machine whose faults are
// slow: 32 MB keeps the marking near 6 ms.
const collectScanMax = 32 << 20

// collectMin is the least memory of a fit's factor and data, 4·n·(k + d)
// bytes, before which collect collects: a smaller fit's buffers are a
// few MB (a few hundred faults) and it runs in milliseconds, of which
// a collection's 1–6 ms would be a large share.
const collectMin = 16 << 20

// collect runs scratch.Collect before the buffers of a fit of n points
// of d features at rank Rank when they reach collectMin, except in a
// sampled fit's own fit (the completion collects after it).
func (ny Nystrom) collect(n, d int) {
	if !ny.ofSample && 4*int64(n)*int64(ny.Rank+d) >= collectMin {
		scratch.Collect(collectScanMax)
	}
}

// landmarkRows returns the rows idx of src as the caller gave them (the
// map keeps them): memory of the pool that is never given back.
func landmarkRows(pool *scratch.Pool, src nySource, idx []int) *mat.Dense {
	xl := mat.NewDense(len(idx), src.dim, pool.Float64s(len(idx)*src.dim))
	for a, p := range idx {
		src.row(p, xl.RawRowView(a))
	}
	return xl
}
