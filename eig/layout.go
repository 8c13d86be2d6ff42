package eig

import (
	"fmt"

	"github.com/kdual/kdual/gram"
	"github.com/kdual/kdual/status"
)

// The split of a kernel matrix's rows over the ranks of a distributed run
// (package dist builds its operators on it; PlanOperator plans with it).

// Layout is the split of n rows into contiguous blocks, one per rank
// (NewTriangleLayout).
type Layout struct {
	N      int
	Starts []int // Starts[r] is rank r's first row; Starts[P] = N
}

// NewTriangleLayout splits n rows over p ranks for the float32 triangle:
// at tile boundaries (gram.TileSize rows), each rank's tile rows holding
// about the same number of tiles of the upper triangle (so the first ranks
// get more rows). Every rank needs at least one tile row: n > TileSize·(p−1).
func NewTriangleLayout(n, p int) (Layout, error) { return TriangleLayout(n, p, gram.TileSize) }

// TriangleLayout is NewTriangleLayout for tiles of side t.
func TriangleLayout(n, p, t int) (Layout, error) {
	nt := (n + t - 1) / t
	if p < 1 || nt < p {
		return Layout{}, fmt.Errorf("eig: the triangle of %d rows over %d ranks: each rank needs a tile row of %d, so at least %d rows: %w",
			n, p, t, t*(p-1)+1, status.ErrInvalid)
	}
	// Tile row I holds nt − I tiles; cut where the running count passes
	// r/p of the total, leaving every rank at least one tile row.
	total := nt * (nt + 1) / 2
	l := Layout{N: n, Starts: make([]int, p+1)}
	acc, I := 0, 0
	for r := 1; r < p; r++ {
		target := float64(total) * float64(r) / float64(p)
		prev := I
		// Take tile row I while its middle is below the target, at least
		// one row per rank, and leave one for each rank after r.
		for I < nt-(p-r) && (I == prev || float64(acc)+float64(nt-I)/2 <= target) {
			acc += nt - I
			I++
		}
		l.Starts[r] = I * t
	}
	l.Starts[p] = n
	return l, nil
}

// TileSide64 is the tile side of the float64 triangle split over p ranks:
// gram.TileSize, or the largest multiple of 4 at most n/p when n has
// fewer than p tile rows of that size (so small problems still split).
func TileSide64(n, p int) int {
	t := gram.TileSize
	if (n+t-1)/t < p {
		t = max(4, n/max(p, 1)/4*4)
	}
	return t
}

// bandBytes is the largest rank's storage of the triangle in tiles of side
// t with entries of size bytes; -1 when the layout is impossible.
func bandBytes(n, p, t, size int) int64 {
	l, err := TriangleLayout(n, p, t)
	if err != nil {
		return -1
	}
	nt := (n + t - 1) / t
	most := int64(0)
	for r := 0; r < p; r++ {
		lo, hi := l.Rows(r)
		tiles := 0
		for I := lo / t; I < (hi+t-1)/t; I++ {
			tiles += nt - I
		}
		most = max(most, int64(size)*int64(tiles)*int64(t*t))
	}
	return most
}

// Rows returns rank r's rows [lo, hi).
func (l Layout) Rows(r int) (lo, hi int) { return l.Starts[r], l.Starts[r+1] }
