package dist

import (
	"testing"
	"time"
)

// The watchdog's default: ten slow Gram builds split over the ranks, at
// least 5 minutes, shrinking with more ranks.
func TestDefaultTimeout(t *testing.T) {
	if got := DefaultTimeout(1000, 10, 2); got != 5*time.Minute {
		t.Errorf("small problem: %v, want 5m", got)
	}
	want := time.Duration(10 * 40000.0 * 40000 * 784 / (1e9 * 4) * float64(time.Second))
	if got := DefaultTimeout(40000, 784, 4); got != want {
		t.Errorf("n = 40000 on 4 ranks: %v, want %v", got, want)
	}
	if DefaultTimeout(40000, 784, 1) <= DefaultTimeout(40000, 784, 4) {
		t.Error("one rank does not wait longer than four")
	}
	// No ranks counted (a caller's zero) is one rank, not a division by 0.
	for _, r := range []int{0, -3} {
		if got, one := DefaultTimeout(40000, 784, r), DefaultTimeout(40000, 784, 1); got != one {
			t.Errorf("%d ranks: %v, want one rank's %v", r, got, one)
		}
	}
}
