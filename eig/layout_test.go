package eig

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/kdual/kdual/gram"
	"github.com/kdual/kdual/status"
)

// The float32 triangle's layout cuts at tile rows, gives every rank one at
// least, balances the tiles, and refuses too few rows or no ranks.
func TestTriangleLayout(t *testing.T) {
	for _, c := range []struct {
		n, p int
		want string
	}{
		{700, 3, "[0 256 512 700]"},
		{700, 2, "[0 256 700]"},
		{700, 1, "[0 700]"},
		{513, 3, "[0 256 512 513]"},
	} {
		l, err := NewTriangleLayout(c.n, c.p)
		if err != nil {
			t.Fatal(c, err)
		}
		if fmt.Sprint(l.Starts) != c.want {
			t.Errorf("n = %d over %d: %v, want %s", c.n, c.p, l.Starts, c.want)
		}
	}
	// 100 tile rows over 8 ranks: each rank's tile count within one tile
	// row (at most 100 tiles) of the mean.
	l, err := NewTriangleLayout(100*256, 8)
	if err != nil {
		t.Fatal(err)
	}
	mean := 100.0 * 101 / 2 / 8
	for r := 0; r < 8; r++ {
		lo, hi := l.Rows(r)
		tiles := 0
		for I := lo / 256; I < hi/256; I++ {
			tiles += 100 - I
		}
		if math.Abs(float64(tiles)-mean) > 100 {
			t.Errorf("rank %d: %d tiles, mean %.0f (starts %v)", r, tiles, mean, l.Starts)
		}
	}
	// The cut rule itself: rank r's first tile row is the first whose
	// middle lies past r/p of the triangle's tiles, so the tiles before
	// it, acc, satisfy target − (next row)/2 < acc ≤ target + (last row)/2.
	total := 100 * 101 / 2
	for r := 1; r < 8; r++ {
		cut := l.Starts[r] / 256
		acc := 0
		for I := 0; I < cut; I++ {
			acc += 100 - I
		}
		target := float64(total) * float64(r) / 8
		next, last := float64(100-cut), float64(100-cut+1)
		if !(target-next/2 < float64(acc) && float64(acc) <= target+last/2) {
			t.Errorf("rank %d starts at tile row %d: %d tiles before it, target %.1f (starts %v)", r, cut, acc, target, l.Starts)
		}
	}
	if _, err := NewTriangleLayout(512, 3); err == nil {
		t.Error("512 rows (2 tile rows) over 3 ranks accepted")
	} else if !strings.Contains(err.Error(), "at least 513 rows") {
		t.Errorf("512 rows over 3 ranks: %v, want the 513 rows it needs named", err)
	}
	if _, err := NewTriangleLayout(513, 3); err != nil {
		t.Errorf("513 rows over 3 ranks (the least it needs): %v", err)
	}
	for _, p := range []int{0, -1} {
		if _, err := NewTriangleLayout(1000, p); !errors.Is(err, status.ErrInvalid) {
			t.Errorf("%d ranks: %v, want an invalid-input error", p, err)
		}
	}
}

// The planner for rows split over ranks: each rank's share of the
// triangle decides (float64 when it fits the budget per rank, then the
// float32 triangle within tol, then matrix-free); the dense solver is
// refused; the solver is block Krylov in blocks of 8, or max(3k, 32)
// matrix-free; more ranks need less per rank.
func TestPlanRanks(t *testing.T) {
	// Ranks 0 and 1 both plan one process's operator (the dense solver
	// included, which needs one process).
	for _, one := range []PlanInput{{N: 150, D: 5, K: 3, Budget: 1 << 30}, {N: 20000, D: 784, K: 20, Budget: 4 << 30},
		{N: 3000, D: 10, K: 5, Budget: 1 << 30, Dense: true}} {
		p0, err0 := PlanOperator(one)
		one.Ranks = 1
		p1, err1 := PlanOperator(one)
		if err0 != nil || err1 != nil || !reflect.DeepEqual(p0, p1) {
			t.Fatalf("n = %d: 0 ranks %+v (%v), 1 rank %+v (%v)", one.N, p0, err0, p1, err1)
		}
	}
	in := PlanInput{N: 20000, D: 784, K: 20, Ranks: 2, Budget: 4 << 30}
	p, err := PlanOperator(in)
	if err != nil || p.Operator != OperatorFloat64 || p.Solver != (BlockKrylov{Block: 8}) {
		t.Fatalf("4 GiB per rank: %+v, %v", p, err)
	}
	in.Budget = p.Bytes - 1
	in.Tol = 1e-4
	if p, err = PlanOperator(in); err != nil || p.Operator != OperatorFloat32 || p.StorageBound == 0 {
		t.Fatalf("just under float64's bytes, tol 1e-4: %+v, %v", p, err)
	}
	in.Tol = 1e-12 // below the float32 bound u·√n
	if p, err = PlanOperator(in); err != nil || p.Operator != OperatorMatrixFree || p.Solver != (BlockKrylov{Tol: 1e-12, Block: 60, CheckEachBlock: true, NormTest: true}) {
		t.Fatalf("tol 1e-12: %+v, %v", p, err)
	}
	four := in
	four.Ranks, four.Budget, four.Tol = 4, 4<<30, 0
	p2, _ := PlanOperator(PlanInput{N: 20000, D: 784, K: 20, Ranks: 2, Budget: 4 << 30})
	p4, err := PlanOperator(four)
	if err != nil || p4.Bytes >= p2.Bytes {
		t.Fatalf("4 ranks need %d bytes each, 2 ranks %d (%v)", p4.Bytes, p2.Bytes, err)
	}
	in.Budget = 1 << 20
	if _, err := PlanOperator(in); err == nil {
		t.Fatal("1 MiB per rank accepted")
	}
	in.Budget, in.Dense = 4<<30, true
	if _, err := PlanOperator(in); err == nil {
		t.Fatal("the dense solver over ranks accepted")
	}
	for _, want := range []OperatorKind{OperatorFloat64, OperatorFloat32, OperatorMatrixFree} {
		p, err := PlanOperator(PlanInput{N: 3000, D: 10, K: 5, Ranks: 3, Want: want, Budget: 1 << 30})
		if err != nil || p.Operator != want {
			t.Errorf("want %v: %+v, %v", want, p, err)
		}
	}
}

// The per-rank bytes of each kind, written out from the plan's
// documented parts: the largest rank's tiles of the triangle (8 or 4 bytes
// an entry), the data (n·d float64s, twice matrix-free), the solver's
// basis on the rank's rows (3k + 8 columns; matrix-free 3k + 2·max(3k, 32)),
// and the gathered blocks (two of 8 columns; matrix-free three of
// max(3k, 32) and one kernel panel).
func TestPlanRanksBytes(t *testing.T) {
	const n, d, k, p = 3000, 10, 5, 3
	tileRows := func(l Layout, t, r int) (tiles, rows int) {
		lo, hi := l.Rows(r)
		nt := (n + t - 1) / t
		for I := lo / t; I < (hi+t-1)/t; I++ {
			tiles += nt - I
		}
		return tiles, hi - lo
	}
	most := func(t int) (tiles, rows int) {
		l, err := TriangleLayout(n, p, t)
		if err != nil {
			panic(err)
		}
		for r := 0; r < p; r++ {
			a, b := tileRows(l, t, r)
			tiles, rows = max(tiles, a), max(rows, b)
		}
		return tiles, rows
	}
	t64 := TileSide64(n, p)
	tiles64, maxRows := most(t64)
	tiles32, _ := most(256)
	data := int64(8 * n * d)
	basis := int64(8 * maxRows * (3*k + 8))
	blocks := int64(2 * 8 * n * 8)
	want := map[OperatorKind]int64{
		OperatorFloat64: int64(8*tiles64*t64*t64) + data + basis + blocks,
		OperatorFloat32: int64(4*tiles32*256*256) + data + basis + blocks,
	}
	fb := max(3*k, 32)
	want[OperatorMatrixFree] = 2*data + int64(8*min(maxRows, 512)*min(n, 4096)) + int64(8*maxRows*(3*k+2*fb)) + int64(3*8*n*fb)
	for kind, bytes := range want {
		pl, err := PlanOperator(PlanInput{N: n, D: d, K: k, Ranks: p, Want: kind, Budget: 1 << 40})
		if err != nil || pl.Bytes != bytes {
			t.Errorf("%v: %d bytes (%v), want %d", kind, pl.Bytes, err, bytes)
		}
	}
}

// The planner pairs stored kernel matrices of more than 200 rows with
// block Krylov in blocks of 8 (k ≤ n/5), and leaves smaller ones, or many
// pairs, to eig.Auto; SourceOptions asks float64 products for the float64
// operator only.
func TestPlanPairing(t *testing.T) {
	for _, c := range []struct {
		n, k  int
		block bool
	}{{200, 5, false}, {201, 5, true}, {1000, 200, true}, {1000, 201, false}} {
		p, err := PlanOperator(PlanInput{N: c.n, D: 10, K: c.k, Want: OperatorFloat64, Tol: 1e-9})
		if err != nil {
			t.Fatal(err)
		}
		b, isBlock := p.Solver.(BlockKrylov)
		if isBlock != c.block || isBlock && (b.Block != 8 || b.Tol != 1e-9) {
			t.Errorf("n = %d, k = %d: %#v", c.n, c.k, p.Solver)
		}
	}
	o := gram.GramOptions{Products: gram.ProductsFloat32}
	if SourceOptions(OperatorFloat64, o).Products != gram.ProductsFloat64 {
		t.Error("the float64 operator's source must have float64 products")
	}
	for _, kind := range []OperatorKind{OperatorFloat32, OperatorMatrixFree} {
		if SourceOptions(kind, o).Products != gram.ProductsFloat32 {
			t.Errorf("%v: the products asked for must stay", kind)
		}
	}
}

// TileSide64 is gram.TileSize while n has at least p tile rows of it (the
// row count rounded up), and otherwise the largest multiple of 4 at most
// n/p, never below 4.
func TestTileSide64(t *testing.T) {
	const T = gram.TileSize
	for _, c := range []struct{ n, p, want int }{
		{2 * T, 2, T}, {2*T - 1, 2, T}, {T + 1, 2, T}, {T, 2, T / 2},
		{2*T - 1, 3, (2*T - 1) / 3 / 4 * 4}, {2*T - 2, 3, (2*T - 2) / 3 / 4 * 4}, {2*T + 1, 3, T},
		{10, 4, 4}, {3, 2, 4}, {5 * T, 1, T}, {100, 0, T},
	} {
		if got := TileSide64(c.n, c.p); got != c.want {
			t.Errorf("n = %d, p = %d: %d, want %d", c.n, c.p, got, c.want)
		}
	}
}
