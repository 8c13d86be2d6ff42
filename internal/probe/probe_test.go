package probe

import "testing"

// Note adds exactly one to Count per call, from any number of goroutines.
func TestNoteCounts(t *testing.T) {
	before := Count()
	Note()
	if got := Count(); got != before+1 {
		t.Fatalf("Count after one Note: %d, want %d", got, before+1)
	}
	done := make(chan struct{})
	for range 8 {
		go func() {
			for range 100 {
				Note()
			}
			done <- struct{}{}
		}()
	}
	for range 8 {
		<-done
	}
	if got := Count(); got != before+801 {
		t.Fatalf("Count after 801 Notes: %d, want %d", got, before+801)
	}
}
