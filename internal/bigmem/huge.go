package bigmem

import (
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/kdual/kdual/internal/probe"
)

// HugePages says whether large buffers ask for transparent huge pages.
type HugePages struct {
	Advise bool
	// System is the kernel's setting ("always", "madvise", "never", or
	// "" where /sys/kernel/mm/transparent_hugepage/enabled cannot be read).
	System string
}

// The measurement maps probeRounds × 2 regions of probeBytes.
const (
	probeRounds = 2
	probeBytes  = 8 << 20
	hugePage    = 2 << 20
)

var advise atomic.Bool

// SetHugePages sets whether buffers of AdviseMin bytes or more, and fresh
// scratch of ScratchMin bytes or more (AdviseScratch), ask for transparent
// huge pages (madvise); false until called. Package paths calls
// it with its HugePages choice (paths.Set), so the process-wide choice is
// that value's.
func SetHugePages(on bool) { advise.Store(on) }

// Huge returns whether large buffers ask for huge pages and the system's
// setting. Asking only matters under the setting "madvise" ("always" needs
// no advice, "never" ignores it).
func Huge() HugePages { return HugePages{Advise: advise.Load(), System: THPSetting()} }

// MeasureHuge times the first touch of fresh memory in huge pages against
// 4 KB pages: regions of 8 MB, touched with and without the advice in
// turn, twice (tens of milliseconds); ok is false when no memory could be
// mapped. Only an explicit tuning step calls it (gram.Tune).
func MeasureHuge() (hugeSeconds, smallSeconds float64, ok bool) {
	probe.Note()
	var maps [][]byte
	defer func() {
		for _, m := range maps {
			_ = syscall.Munmap(m)
		}
	}()
	for r := 0; r < probeRounds; r++ {
		for _, huge := range []bool{false, true} {
			m, sec, ok := touchFresh(huge)
			if !ok {
				return 0, 0, false
			}
			maps = append(maps, m)
			if huge {
				hugeSeconds += sec
			} else {
				smallSeconds += sec
			}
		}
	}
	return hugeSeconds, smallSeconds, true
}

// touchFresh maps probeBytes (2 MB aligned, advised huge when asked),
// writes one byte per 4 KB page and returns the mapping and the seconds
// the writes took.
func touchFresh(huge bool) ([]byte, float64, bool) {
	m, err := syscall.Mmap(-1, 0, probeBytes+hugePage, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, 0, false
	}
	off := int((hugePage - uintptr(unsafe.Pointer(&m[0]))%hugePage) % hugePage)
	region := m[off : off+probeBytes]
	if huge {
		_ = syscall.Madvise(region, madvHugepage)
	}
	start := time.Now()
	for i := 0; i < len(region); i += 4096 {
		region[i] = 1
	}
	return m, time.Since(start).Seconds(), true
}

// HugeOrder is the page order of a 2 MB huge page (4 KB pages).
const HugeOrder = 9

// ReportingOrder returns the page order from which the kernel reports
// free blocks to its host (free page reporting of a virtual machine), and
// false where it does not.
func ReportingOrder() (int, bool) {
	b, err := os.ReadFile("/sys/module/page_reporting/parameters/page_reporting_order")
	if err != nil {
		return 0, false
	}
	v, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || v < 0 {
		return 0, false
	}
	return v, true
}

// THPSetting returns the kernel's transparent huge pages setting
// ("always", "madvise", "never"), or "" where it cannot be read.
func THPSetting() string {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil {
		return ""
	}
	return bracketed(string(b))
}

// bracketed returns the word the kernel marks as chosen in a sysfs list
// ("always [madvise] never" → "madvise"), or "" when none is marked.
func bracketed(s string) string {
	i, j := strings.IndexByte(s, '['), strings.IndexByte(s, ']')
	if i < 0 || j <= i {
		return ""
	}
	return s[i+1 : j]
}
