package gram

import (
	"fmt"
	"runtime"

	"github.com/kdual/kdual/linalg"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/internal/bigmem"
	"github.com/kdual/kdual/internal/par"
	"github.com/kdual/kdual/native"
	"github.com/kdual/kdual/paths"
)

// TileSize is the side of the tiles of SymTiles32: a 256×256 float32 tile
// (256 KB) and the two 256-long float64 vector blocks it meets stay in L2.
const TileSize = 256

// SymTiles32 is a symmetric n×n matrix stored in float32 as T×T tiles of
// its upper triangle: tile (I, J), J ≥ I, holds rows [I·T, (I+1)·T) and
// columns [J·T, (J+1)·T) row-major; diagonal tiles hold both of their
// triangles; rows and columns past n are zero. It takes 2·N(N+T) bytes
// for N = n rounded up to T: half of a full float32 matrix (n = 60 000:
// 7.2 GB). The storage lives outside the Go heap (package bigmem): it is
// released by Free, or when s becomes unreachable, so Data is valid only
// while s itself is kept.
//
// A band (NewSymTiles32Band, GramTiles32Band) holds only the tile rows
// [I0, I1) of the upper triangle — one process's share of a matrix split
// by rows — and its products are that share's contribution to A·x.
type SymTiles32 struct {
	N      int // matrix dimension n
	T      int // tile side
	NT     int // tiles per side, ⌈n/T⌉
	I0, I1 int // the tile rows held: [0, NT) unless a band
	Data   []float32
	mem    *bigmem.Float32s
	// EntryRel bounds the relative error of every stored entry against
	// the exact kernel: 2⁻²⁴ for the rounding to float32, plus the bound
	// of float32 inner products when the Gram was built with them
	// (GramOptions.Products; see KernelRows.EntryBound). Entries of
	// magnitude below float32's smallest normal, 2⁻¹²⁶ ≈ 1.2·10⁻³⁸, are
	// stored as 0 (an absolute error below 2⁻¹²⁶ each, ‖E‖₂ < n·2⁻¹²⁶):
	// subnormal values made a float32 block product 19 times slower on
	// the Intel processor measured (docs/operators.md).
	EntryRel float64
	// SingleBlocks has MulBlock multiply blocks of more than symmTMax32
	// columns in float32 arithmetic (native.TileRowSymmS32): each entry of
	// the product is then within BlockRel·(|A|·|x|) of the stored matrix
	// times x, where float64 arithmetic adds nothing comparable. It
	// halves the vector work per stored entry (docs/measurements.md). GramTiles32 sets it
	// when the inner products were float32 (GramOptions.Products): the
	// caller has accepted float32 arithmetic, whose entry bound (EntryRel,
	// about 1e-4 on Fashion-MNIST) is far above BlockRel; or when asked
	// (GramOptions.SingleBlocks: the planner's rule for nonnegative
	// kernels, eig.Plan.SingleBlocks).
	SingleBlocks bool
}

// BlockRel is the relative bound per entry, (γ_64 + 2⁻²⁴)·(|A|·|x|) with
// γ_k = k·2⁻²⁴/(1 − k·2⁻²⁴), of MulBlock's float32 arithmetic
// (SingleBlocks): partial sums of at most native.SymmSingleChunk products,
// and x rounded to float32 (about 3.9e-6).
const BlockRel = native.SymmSingleChunk*(1.0/(1<<24))/(1-native.SymmSingleChunk*(1.0/(1<<24))) + 1.0/(1<<24)

// NewSymTiles32 allocates a zero n×n tiled matrix.
func NewSymTiles32(n int) (*SymTiles32, error) {
	return NewSymTiles32Band(n, 0, (n+TileSize-1)/TileSize)
}

// NewSymTiles32Band allocates the zero tile rows [i0, i1) of the upper
// triangle of an n×n tiled matrix: rows [i0·T, min(i1·T, n)), every column
// from the diagonal tile on.
func NewSymTiles32Band(n, i0, i1 int) (*SymTiles32, error) {
	if n < 1 {
		return nil, invalidf("NewSymTiles32: n = %d", n)
	}
	t := TileSize
	nt := (n + t - 1) / t
	if i0 < 0 || i1 > nt || i0 >= i1 {
		return nil, invalidf("NewSymTiles32Band: tile rows [%d, %d) of %d", i0, i1, nt)
	}
	s := &SymTiles32{N: n, T: t, NT: nt, I0: i0, I1: i1}
	mem, err := bigmem.NewFloat32s((s.tileBase(i1) - s.tileBase(i0)) * t * t)
	if err != nil {
		return nil, fmt.Errorf("linalg: NewSymTiles32: n = %d: %w", n, err)
	}
	// Every tile is written (by the Gram or a copy): its pages are
	// made resident at once (bigmem's Populate, measured there).
	mem.Populate()
	s.Data, s.mem = mem.Data, mem
	return s, nil
}

// tileBase is the number of tiles in the tile rows before I.
func (s *SymTiles32) tileBase(I int) int { return I*s.NT - I*(I-1)/2 }

// Rows returns the matrix rows the stored tile rows cover: [0, n) unless
// a band.
func (s *SymTiles32) Rows() (lo, hi int) { return s.I0 * s.T, min(s.I1*s.T, s.N) }

// Bytes returns the bytes of storage.
func (s *SymTiles32) Bytes() int64 { return 4 * int64(len(s.Data)) }

// Free releases the storage; s must not be used afterwards.
func (s *SymTiles32) Free() {
	if s.mem != nil {
		s.mem.Free()
	}
	s.Data = nil
}

// TileOffset returns the index in Data of tile (I, J), I ≤ J, I a stored
// tile row.
func (s *SymTiles32) TileOffset(I, J int) int {
	if I < s.I0 || I >= s.I1 {
		panic(fmt.Sprintf("linalg: SymTiles32: tile row %d is not stored (rows [%d, %d))", I, s.I0, s.I1))
	}
	return (s.tileBase(I) - s.tileBase(s.I0) + (J - I)) * s.T * s.T
}

// tileRow returns the stored tiles (I, I) … (I, NT−1), one after another.
func (s *SymTiles32) tileRow(I int) []float32 {
	o := s.TileOffset(I, I)
	return s.Data[o : o+(s.NT-I)*s.T*s.T]
}

// packedRow describes a row of tiles packed t×t one after another, the
// first on the diagonal.
func packedRow(t, tiles int) native.TileRow {
	return native.TileRow{M: t, T: t, Tiles: tiles, Last: t, Step: t * t, Lda: t, Diag: true}
}

// Tile returns tile (I, J), I ≤ J.
func (s *SymTiles32) Tile(I, J int) []float32 {
	o := s.TileOffset(I, J)
	return s.Data[o : o+s.T*s.T]
}

// At returns entry (i, j); in a band, min(i, j) must be a stored row.
func (s *SymTiles32) At(i, j int) float64 {
	if i > j {
		i, j = j, i
	}
	I, J := i/s.T, j/s.T
	v := s.Data[s.TileOffset(I, J)+(i-I*s.T)*s.T+(j-J*s.T)]
	runtime.KeepAlive(s)
	return float64(v)
}

// TilesFromSym rounds the symmetric matrix a (upper triangle read) into
// tiled float32 storage.
func TilesFromSym(a *mat.SymDense) (*SymTiles32, error) {
	if a == nil || a.IsEmpty() {
		return nil, invalidf("TilesFromSym: empty matrix")
	}
	if err := linalg.CheckFinite("TilesFromSym: a", a); err != nil {
		return nil, err
	}
	n := a.SymmetricDim()
	s, err := NewSymTiles32(n)
	if err != nil {
		return nil, err
	}
	raw := a.RawSymmetric()
	t := s.T
	par.For(0, s.NT, func(I int) float64 { return float64(s.NT - I) }, func(lo, hi int) {
		for I := lo; I < hi; I++ {
			for J := I; J < s.NT; J++ {
				tl := s.Tile(I, J)
				for r := 0; r < t && I*t+r < n; r++ {
					i := I*t + r
					for c := 0; c < t && J*t+c < n; c++ {
						j := J*t + c
						if i <= j {
							tl[r*t+c] = float32(raw.Data[i*raw.Stride+j])
						} else {
							tl[r*t+c] = float32(raw.Data[j*raw.Stride+i])
						}
					}
				}
			}
		}
	})
	return s, nil
}

// GramTiles32 returns the kernel matrix of the rows of x in tiled float32
// half storage (SymTiles32), without ever forming an n×n float64 matrix:
// for each row of tiles, column chunks of 2048 are computed in float64 by
// the engine of Gram (OpenBLAS or native products, then the element map),
// then rounded once to float32. Every stored entry is within half an ulp
// of float32 (relative 2⁻²⁴) of the float64 Gram entry; only the storage
// is rounded. Memory: the tiles plus one 256×2048 float64 chunk.
func GramTiles32(x *mat.Dense, em ElementMap, o GramOptions) (*SymTiles32, error) {
	src, err := Prepare(x, em, o, false)
	if err != nil {
		return nil, err
	}
	n, _ := src.Dims()
	return src.Tiles32Band(o, 0, (n+TileSize-1)/TileSize)
}

// GramTiles32Band computes the tile rows [i0, i1) of GramTiles32's matrix
// (NewSymTiles32Band): the same chunks and products, so every stored
// entry equals GramTiles32's.
func GramTiles32Band(x *mat.Dense, em ElementMap, o GramOptions, i0, i1 int) (*SymTiles32, error) {
	src, err := Prepare(x, em, o, false)
	if err != nil {
		return nil, err
	}
	return src.Tiles32Band(o, i0, i1)
}

// Tiles32 is GramTiles32 of the prepared rows.
func (src *Source) Tiles32(o GramOptions) (*SymTiles32, error) {
	n, _ := src.Dims()
	return src.Tiles32Band(o, 0, (n+TileSize-1)/TileSize)
}

// Tiles32Band is GramTiles32Band of the prepared rows. Kernels whose
// values may leave float32's range are refused (Store32Range).
func (src *Source) Tiles32Band(o GramOptions, i0, i1 int) (*SymTiles32, error) {
	if !src.s.em.distance() {
		top := 0.0 // the largest squared norm (none for empty norms)
		for _, v := range src.s.norms {
			top = max(top, v)
		}
		if err := Store32Range(src.s.em, top); err != nil {
			return nil, err
		}
	}
	n, _ := src.Dims()
	st, err := NewSymTiles32Band(n, i0, i1)
	if err != nil {
		return nil, err
	}
	if s := src.s; s.int8Tiles(o) {
		// Exact integer products and the map in one pass per tile.
		c, laplace := s.em.C, s.em.Kind == MapExpDist
		if err := s.tilesInt8(o, st.T, st.I0, st.I1, func(I, J int, y *native.Int8Landmarks, c0, c1 int) {
			tile := st.Tile(I, J)
			s.build.Int8Map32(s.i8, y, c0, c1, c, laplace, tile, st.T)
			if I == J {
				symmetricDiagTile(tile, st.T, y.T)
			}
		}); err != nil {
			st.Free()
			return nil, err
		}
		st.EntryRel = 1.0 / (1 << 24)
		st.SingleBlocks = o.Products == ProductsFloat32 || o.SingleBlocks
		return st, nil
	}
	b := o.build()
	rel, err := gramBand(src.s, o, st.T, st.I0, st.I1, func(I, J int, src []float64, lds, rows, cols int) {
		b.Narrow(rows, cols, src, lds, st.Tile(I, J), st.T)
	}, func(I, J int, src []float32, lds, rows, cols int, ni, nj []float64, em ElementMap) {
		tile := st.Tile(I, J)
		b.RBFMap32To32(rows, cols, src, lds, tile, st.T, ni, nj, em.C, em.Kind == MapExpDist)
		if I == J {
			symmetricDiagTile(tile, st.T, rows)
		}
	})
	if err != nil {
		st.Free()
		return nil, err
	}
	st.EntryRel = 1.0/(1<<24) + rel
	st.SingleBlocks = o.Products == ProductsFloat32 || o.SingleBlocks
	return st, nil
}

// tilesInt8 computes the tile rows [i0, i1) of the upper triangle in t×t
// tiles by native.Int8Map (the source on an 8-bit grid, its levels
// packed): each tile row's points are the landmarks, its tiles shared
// among the workers, and tile(I, J, y, c0, c1) writes tile (I, J) from
// landmarks y against the points [c0, c1) — a diagonal tile computed
// whole, symmetric with a unit diagonal as exact integer distances make
// it (tile enforces it with symmetricDiagTile). Cancellation is checked
// before every tile row.
func (s *gramSource) tilesInt8(o GramOptions, t, i0, i1 int, tile func(I, J int, y *native.Int8Landmarks, c0, c1 int)) error {
	n := s.x.Rows
	nt := (n + t - 1) / t
	lo, hi := i0*t, min(i1*t, n)
	total, done := int64(hi-lo)*int64(2*n-lo-hi+1)/2, int64(0)
	for I := i0; I < i1; I++ {
		if err := o.cancelled(fmt.Sprintf("Gram tile row %d of %d", I-i0+1, i1-i0)); err != nil {
			return err
		}
		r0, r1 := I*t, min((I+1)*t, n)
		y := s.int8Landmarks(s, r0, r1)
		par.Each(s.workers, nt-I, 0, func(q int, _ []float64) {
			J := I + q
			tile(I, J, y, J*t, min((J+1)*t, n))
		})
		done += int64(r1-r0) * int64(2*n-r0-r1+1) / 2
		if o.Progress != nil {
			o.Progress(done, total)
		}
	}
	return nil
}

// int8Tiles reports whether the tiles of s go by tilesInt8: a distance
// map on the native path and 8-bit data (int8Gram).
func (s *gramSource) int8Tiles(o GramOptions) bool {
	return s.x32 != nil && s.em.distance() && s.mp == MapNative && s.int8Gram(o)
}

// gramBand computes the tile rows [i0, i1) of the upper triangle of the
// kernel matrix of x in t×t tiles and hands each tile (rows × cols of
// src, row stride lds; diagonal tiles with both triangles) to store, which
// may run concurrently for different tiles. OpenBLAS computes the products
// of a chunk of gramChunkRows/t tile rows by gramChunkCols/t tiles (1024 ×
// 4096 products: with 256-row tiles, four tile rows at once) while a
// goroutine maps the previous chunk and stores it; the part of a chunk
// below the diagonal is not stored (with float64 products not computed
// either). When the products are float32 (float32 products, or exact ones
// on an integer grid) and the map a distance kernel's on the native path,
// the chunk stays in float32 and each tile goes to store32 unmapped, with
// its rows' and columns' squared norms and the source's map (scaled to
// grid units on a grid): store32 maps and stores in one pass, and must
// make a diagonal tile symmetric with a unit diagonal
// (symmetricDiagTile). After a cancellation the remaining chunks are
// skipped and the error returned. It returns the bound of the inner
// products' relative error (KernelRows.MaxEntryRel).
func gramBand(s *gramSource, o GramOptions, t, i0, i1 int, store func(I, J int, src []float64, lds, rows, cols int),
	store32 func(I, J int, src []float32, lds, rows, cols int, ni, nj []float64, em ElementMap)) (float64, error) {
	n := s.x.Rows
	nt := (n + t - 1) / t
	// Float32 products of a distance map go from sgemm's float32 chunk
	// through the map straight into the tiles (store32).
	fused := s.x32 != nil && s.em.distance() && s.mp == MapNative
	chunkTiles := max(1, gramChunkCols/t)
	rowTiles := max(1, gramChunkRows/t)
	type chunk struct{ I, R, J0, J1 int }
	var chunks []chunk
	for I := i0; I < i1; I += rowTiles {
		r := min(rowTiles, i1-I)
		for J0 := I; J0 < nt; J0 += chunkTiles {
			chunks = append(chunks, chunk{I, r, J0, min(J0+chunkTiles, nt)})
		}
	}
	ld := chunkTiles * t
	const depth = 2
	bufs := make([][]float64, depth)
	bufs32 := make([][]float32, depth)
	for i := range bufs {
		if fused {
			bufs32[i] = make([]float32, rowTiles*t*ld)
		} else {
			bufs[i] = make([]float64, rowTiles*t*ld)
		}
	}
	var stop error
	skipped := make([]bool, len(chunks))
	lo, hi := i0*t, min(i1*t, n)
	total, done := int64(hi-lo)*int64(2*n-lo-hi+1)/2, int64(0)
	par.Pipeline(len(chunks), depth, func(c int) {
		if stop == nil {
			stop = o.cancelled(fmt.Sprintf("Gram chunk %d of %d", c+1, len(chunks)))
		}
		if stop != nil {
			skipped[c] = true
			return
		}
		ch := chunks[c]
		r0, r1 := ch.I*t, min((ch.I+ch.R)*t, n)
		c0, c1 := ch.J0*t, min(ch.J1*t, n)
		if fused {
			sgemm32Into(s, s, r0, r1, c0, c1, bufs32[c%depth], ld)
		} else {
			s.products(bufs[c%depth], ld, r0, r1, c0, c1, ch.J0 == ch.I)
		}
		if o.Progress != nil {
			o.Progress(done, total)
		}
		done += int64(r1-r0) * int64(c1-c0)
		if ch.J0 == ch.I {
			done -= int64(r1-r0) * int64(r1-r0-1) / 2
		}
	}, func(c int) {
		if skipped[c] {
			return
		}
		ch, buf := chunks[c], bufs[c%depth]
		r0, r1 := ch.I*t, min((ch.I+ch.R)*t, n)
		c0, c1 := ch.J0*t, min(ch.J1*t, n)
		diag := ch.J0 == ch.I
		if fused {
			buf32 := bufs32[c%depth]
			jobs := tileJobs(ch.I, ch.R, ch.J0, ch.J1)
			par.Blocks(0, len(jobs), func(lo, hi int) {
				for _, jb := range jobs[lo:hi] {
					I, J := ch.I+jb[0], jb[1]
					store32(I, J, buf32[jb[0]*t*ld+(J-ch.J0)*t:], ld, min(t, n-I*t), min(t, n-J*t),
						s.norms[I*t:], s.norms[J*t:], s.em)
				}
			})
			return
		}
		s.mapPanel(buf, ld, r0, r1, c0, c1, diag, s.norms[c0:])
		if diag {
			// Each diagonal tile holds both triangles.
			for q := 0; q < ch.R; q++ {
				mirrorTile(buf[q*t*ld+q*t:], ld, min(t, r1-r0-q*t))
			}
		}
		jobs := tileJobs(ch.I, ch.R, ch.J0, ch.J1)
		par.Blocks(0, len(jobs), func(lo, hi int) {
			for _, jb := range jobs[lo:hi] {
				I, J := ch.I+jb[0], jb[1]
				store(I, J, buf[jb[0]*t*ld+(J-ch.J0)*t:], ld, min(t, n-I*t), min(t, n-J*t))
			}
		})
	})
	if stop != nil {
		return 0, stop
	}
	if o.Progress != nil {
		o.Progress(total, total)
	}
	return s.maxEntryRel(), nil
}

// symmetricDiagTile makes the diagonal tile (t×t, its first rows rows
// used) of a distance kernel exactly symmetric and its diagonal exactly 1:
// the lower triangle is copied from the upper one (sgemm computed both
// triangles, not necessarily to the same rounding with float32 products).
// tileJobs lists a chunk's tiles of the upper triangle: (q, J) for its
// tile rows I+q, q < rows, and tile columns J in [j0, j1) with J ≥ I+q.
func tileJobs(I, rows, j0, j1 int) [][2]int {
	var jobs [][2]int
	for q := 0; q < rows; q++ {
		for J := max(j0, I+q); J < j1; J++ {
			jobs = append(jobs, [2]int{q, J})
		}
	}
	return jobs
}

// mirrorTile copies the upper triangle of a diagonal tile's first rows
// (stride ld) into its lower triangle.
func mirrorTile(b []float64, ld, rows int) {
	for r := 0; r < rows; r++ {
		for c := 0; c < r; c++ {
			b[r*ld+c] = b[c*ld+r]
		}
	}
}

// symmetricDiagTile mirrors a diagonal tile (side t) of a distance kernel
// and sets its diagonal to exactly 1.
func symmetricDiagTile[T float32 | float64](tile []T, t, rows int) {
	for r := 0; r < rows; r++ {
		for c := 0; c < r; c++ {
			tile[r*t+c] = tile[c*t+r]
		}
		tile[r*t+r] = 1
	}
}

// MulVec sets y = A·x (n-vectors) in float64 arithmetic, reading every
// stored tile once (half the bytes of a full float32 matrix): bands of
// tile rows run in parallel, each with a private accumulator (balanced by
// the number of tiles), summed at the end. x and y must not alias. For a
// band, y is the band's contribution (as MulBlock).
func (s *SymTiles32) MulVec(y, x []float64) { s.MulVecOn(paths.Current().Build(), y, x) }

// MulVecOn is MulVec on the native build b.
func (s *SymTiles32) MulVecOn(b native.Build, y, x []float64) {
	tiledSymv(s.N, s.T, s.I0, s.I1, y, x, func(I int, xi, xj, yi, yj []float64) {
		b.TileRowSymv(s.T, s.NT-I, s.tileRow(I), xi, xj, yi, yj, true)
	})
	runtime.KeepAlive(s) // the tiles are unmapped when s is collected
}

// MulBlock sets dst = A·x for an n×b block x (row-major, any stride),
// in float64 arithmetic — or, with SingleBlocks and b > 6, in float32
// arithmetic within BlockRel — reading every stored tile once for all
// columns (native.TileRowSymm32 or TileRowSymmS32 in parallel bands of
// tile rows). dst must not alias x. For a band, dst (still n×b) is the
// band's contribution: the stored tiles times x, on both sides of the
// diagonal.
func (s *SymTiles32) MulBlock(dst, x *mat.Dense) { s.MulBlockOn(paths.Current().Build(), dst, x) }

// MulBlockOn is MulBlock on the native build b.
func (s *SymTiles32) MulBlockOn(b native.Build, dst, x *mat.Dense) {
	defer runtime.KeepAlive(s) // the tiles are unmapped when s is collected
	if _, nb := x.Dims(); s.SingleBlocks && nb > symmTMax32 {
		tiledSymmS32(b, s.N, s.T, s.I0, s.I1, x, dst, func(I int) (native.TileRow, []float32) {
			return packedRow(s.T, s.NT-I), s.tileRow(I)
		})
		return
	}
	tiledSymm(b, s.N, s.T, s.I0, s.I1, x, dst, func(I int) (native.TileRow, []float32) {
		return packedRow(s.T, s.NT-I), s.tileRow(I)
	})
}

// balancedBounds splits [0, n) into parts contiguous ranges of about equal
// total weight.
func balancedBounds(n, parts int, weight func(i int) float64) []int {
	bounds := make([]int, parts+1)
	total := 0.0
	for i := 0; i < n; i++ {
		total += weight(i)
	}
	acc, next := 0.0, 1
	for i := 0; i < n && next < parts; i++ {
		acc += weight(i)
		for next < parts && acc >= total*float64(next)/float64(parts) {
			bounds[next] = i + 1
			next++
		}
	}
	for ; next < parts; next++ {
		bounds[next] = n
	}
	bounds[parts] = n
	return bounds
}
