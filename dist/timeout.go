package dist

import "time"

// DefaultTimeout is the collective watchdog's default (mpi.SetTimeout)
// for n points of dimension d on ranks ranks: ten times the seconds of one
// Gram's n²·d multiply-adds split over the ranks at a deliberately slow
// 10⁹ per second — no collective waits longer than the slowest rank's part
// of one pass or build — and at least 5 minutes.
func DefaultTimeout(n, d, ranks int) time.Duration {
	sec := 10 * float64(n) * float64(n) * float64(d) / (1e9 * float64(max(ranks, 1)))
	return max(5*time.Minute, time.Duration(sec*float64(time.Second)))
}
