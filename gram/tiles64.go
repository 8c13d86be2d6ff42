package gram

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/internal/bigmem"
	"github.com/kdual/kdual/native"
	"github.com/kdual/kdual/paths"
)

// TileSize64 is the tile side of a whole float64 kernel matrix in one
// process: 512×512 float64 tiles (2 MB each), faster than 256 for the
// build and the products (docs/measurements.md). (Float32 tiles keep
// TileSize.)
// Small matrices keep TileSize (see TileSide64For): padding n up to a
// multiple of 512 would multiply their work.
const TileSize64 = 512

// TileSide64For is the tile side of a whole n×n float64 kernel matrix:
// TileSize64 from n = 8·TileSize64 on (padding then adds at most 1/8 to
// each side), TileSize below.
func TileSide64For(n int) int {
	if n >= 8*TileSize64 {
		return TileSize64
	}
	return TileSize
}

// SymTiles64 is a band of tile rows [I0, I1) of the upper triangle of a
// symmetric n×n matrix in float64, in T×T tiles laid out as SymTiles32's
// (tile (I, J), J ≥ I, row-major; diagonal tiles hold both triangles; rows
// and columns past n are zero): one process's exact share of a kernel
// matrix split by rows, 8 bytes per stored entry, read once per product by
// the native tile kernel. The tile side is the caller's (a multiple of 4),
// so that small matrices still split over many processes.
type SymTiles64 struct {
	N, T, NT int
	I0, I1   int
	Data     []float64
}

// NewSymTiles64Band allocates the zero tile rows [i0, i1) of an n×n
// matrix in t×t tiles.
func NewSymTiles64Band(n, t, i0, i1 int) (*SymTiles64, error) {
	if n < 1 || t < 4 || t%4 != 0 {
		return nil, invalidf("NewSymTiles64Band: n = %d, tile side %d (want a multiple of 4)", n, t)
	}
	nt := (n + t - 1) / t
	if i0 < 0 || i1 > nt || i0 >= i1 {
		return nil, invalidf("NewSymTiles64Band: tile rows [%d, %d) of %d", i0, i1, nt)
	}
	s := &SymTiles64{N: n, T: t, NT: nt, I0: i0, I1: i1}
	s.Data = make([]float64, (s.tileBase(i1)-s.tileBase(i0))*t*t)
	bigmem.AdviseHuge(s.Data)
	return s, nil
}

func (s *SymTiles64) tileBase(I int) int { return I*s.NT - I*(I-1)/2 }

// Rows returns the matrix rows the band covers.
func (s *SymTiles64) Rows() (lo, hi int) { return s.I0 * s.T, min(s.I1*s.T, s.N) }

// Bytes returns the bytes of storage.
func (s *SymTiles64) Bytes() int64 { return 8 * int64(len(s.Data)) }

// Tile returns tile (I, J), I ≤ J, I a stored tile row.
func (s *SymTiles64) Tile(I, J int) []float64 {
	if I < s.I0 || I >= s.I1 || J < I || J >= s.NT {
		panic(fmt.Sprintf("linalg: SymTiles64: tile (%d, %d) is not stored (tile rows [%d, %d))", I, J, s.I0, s.I1))
	}
	o := (s.tileBase(I) - s.tileBase(s.I0) + (J - I)) * s.T * s.T
	return s.Data[o : o+s.T*s.T]
}

// tileRow returns the stored tiles (I, I) … (I, NT−1), one after another.
func (s *SymTiles64) tileRow(I int) []float64 {
	o := (s.tileBase(I) - s.tileBase(s.I0)) * s.T * s.T
	return s.Data[o : o+(s.NT-I)*s.T*s.T]
}

// At returns entry (i, j); min(i, j) must be a stored row.
func (s *SymTiles64) At(i, j int) float64 {
	if i > j {
		i, j = j, i
	}
	I, J := i/s.T, j/s.T
	return s.Tile(I, J)[(i-I*s.T)*s.T+(j-J*s.T)]
}

// GramTiles64Band computes the tile rows [i0, i1) of the kernel matrix of
// the rows of x in t×t float64 tiles, with the engine of Gram (level-3
// products, the map fused per chunk).
func GramTiles64Band(x *mat.Dense, em ElementMap, o GramOptions, t, i0, i1 int) (*SymTiles64, error) {
	src, err := Prepare(x, em, o, false)
	if err != nil {
		return nil, err
	}
	return src.Tiles64Band(o, t, i0, i1)
}

// Tiles64Band is GramTiles64Band of the prepared rows.
func (src *Source) Tiles64Band(o GramOptions, t, i0, i1 int) (*SymTiles64, error) {
	n, _ := src.Dims()
	st, err := NewSymTiles64Band(n, t, i0, i1)
	if err != nil {
		return nil, err
	}
	if s := src.s; s.int8Tiles(o) {
		// Exact integer products and the map in one pass per tile.
		c, laplace := s.em.C, s.em.Kind == MapExpDist
		if err := s.tilesInt8(o, t, i0, i1, func(I, J int, y *native.Int8Landmarks, c0, c1 int) {
			tile := st.Tile(I, J)
			s.build.Int8Map(s.i8, y, c0, c1, c, laplace, tile, t)
			if I == J {
				symmetricDiagTile(tile, t, y.T)
			}
		}); err != nil {
			return nil, err
		}
		return st, nil
	}
	b := o.build()
	if _, err := gramBand(src.s, o, t, i0, i1, func(I, J int, src []float64, lds, rows, cols int) {
		tile := st.Tile(I, J)
		for r := 0; r < rows; r++ {
			copy(tile[r*t:r*t+cols], src[r*lds:r*lds+cols])
		}
	}, func(I, J int, src []float32, lds, rows, cols int, ni, nj []float64, em ElementMap) {
		tile := st.Tile(I, J)
		b.RBFMap32(rows, cols, src, lds, tile, t, ni, nj, em.C, em.Kind == MapExpDist)
		if I == J {
			symmetricDiagTile(tile, t, rows)
		}
	}); err != nil {
		return nil, err
	}
	return st, nil
}

// MulVec sets y (n) to the band's contribution to A·x for one vector x,
// reading every stored tile once (native.TileRowSymv64), bands of tile rows
// in parallel with private accumulators summed at the end. x and y must
// not alias.
func (s *SymTiles64) MulVec(y, x []float64) { s.MulVecOn(paths.Current().Build(), y, x) }

// MulVecOn is MulVec on the native build b.
func (s *SymTiles64) MulVecOn(b native.Build, y, x []float64) {
	tiledSymv(s.N, s.T, s.I0, s.I1, y, x, func(I int, xi, xj, yi, yj []float64) {
		b.TileRowSymv64(s.T, s.NT-I, s.tileRow(I), xi, xj, yi, yj, true)
	})
}

// MulBlock sets dst (n×b) to the band's contribution to A·x for an n×b
// block x: the stored tiles times x on both sides of the diagonal (rows
// above the band are zero), in parallel bands of tile rows with the native
// tile kernel. dst must not alias x.
func (s *SymTiles64) MulBlock(dst, x *mat.Dense) { s.MulBlockOn(paths.Current().Build(), dst, x) }

// MulBlockOn is MulBlock on the native build b.
func (s *SymTiles64) MulBlockOn(b native.Build, dst, x *mat.Dense) {
	tiledSymm(b, s.N, s.T, s.I0, s.I1, x, dst, func(I int) (native.TileRow, []float64) {
		return packedRow(s.T, s.NT-I), s.tileRow(I)
	})
}
