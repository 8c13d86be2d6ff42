package gram

import (
	"math"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// subnormalWorks reports whether float64 arithmetic on this thread still
// produces subnormal numbers (MXCSR's flush-to-zero and
// denormals-are-zero bits clear).
//
//go:noinline
func subnormalWorks(a, b float64) bool { return a*b != 0 && a*b < 0x1p-1022 }

// Float32 block products over tiles whose products fall below 2⁻¹²⁶ give
// every entry within 2⁻¹²⁶ per product of the exact sum (flushed
// products), and leave every thread's floating-point state as it was: Go
// code afterwards still computes subnormal numbers.
func TestFloat32BlocksFlushAndRestore(t *testing.T) {
	const n, b = 600, 16
	st, err := NewSymTiles32(n)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Free()
	for i := range st.Data {
		st.Data[i] = 0x1p-120
	}
	st.SingleBlocks = true
	x := mat.NewDense(n, b, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < b; j++ {
			x.Set(i, j, 0x1p-10)
		}
	}
	y := mat.NewDense(n, b, nil)
	st.MulBlock(y, x)
	for i := 0; i < n; i++ {
		for j := 0; j < b; j++ {
			if d := math.Abs(y.At(i, j) - n*0x1p-130); d > n*0x1p-126 {
				t.Fatalf("y(%d,%d) = %g, exact %g", i, j, y.At(i, j), n*0x1p-130)
			}
		}
	}
	var wg sync.WaitGroup
	bad := make(chan bool, 64)
	for g := 0; g < 64; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !subnormalWorks(0x1p-1000, 0x1p-40) {
				bad <- true
			}
		}()
	}
	wg.Wait()
	close(bad)
	if <-bad {
		t.Fatal("a thread flushes subnormal float64 results after the float32 block product")
	}
}
