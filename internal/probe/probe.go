// Package probe counts the timing measurements a process has run. kdual
// chooses its code paths by written rules (package paths); timing runs
// only in an explicit tuning step (gram.Tune, `kdual tune`), and every
// function that times alternatives calls Note first, so a test can prove
// that a default fit timed nothing (Count stays zero).
package probe

import "sync/atomic"

var count atomic.Int64

// Note records that a timing measurement is about to run.
func Note() { count.Add(1) }

// Count returns how many timing measurements this process has run.
func Count() int64 { return count.Load() }
