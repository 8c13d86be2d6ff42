package bench_test

import (
	"fmt"

	"github.com/kdual/kdual/bench"
)

// The medians the benchmarks quote; the input is not reordered.
func ExampleMedian() {
	runs := []float64{3.1, 2.9, 3.4, 2.8}
	fmt.Println(bench.Median(runs), runs)
	// Output:
	// 3 [3.1 2.9 3.4 2.8]
}
