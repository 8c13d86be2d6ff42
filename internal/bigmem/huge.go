package bigmem

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// HugePages says whether kdual asks for transparent huge pages
// (MADV_HUGEPAGE) on its large buffers, and why.
type HugePages struct {
	Advise bool
	// System is the kernel's setting ("always", "madvise", "never", or
	// "" where /sys/kernel/mm/transparent_hugepage/enabled cannot be read).
	System string
	// HugeSeconds and SmallSeconds are the probe's first-touch times of
	// the same amount of fresh memory (0 when no probe ran).
	HugeSeconds, SmallSeconds float64
	Reason                    string
}

// The probe maps probeRounds × 2 regions of probeBytes.
const (
	probeBytes  = 8 << 20
	probeRounds = 2
	hugePage    = 2 << 20
)

var (
	hugeOnce   sync.Once
	hugeChoice HugePages
)

// Huge returns whether to ask for transparent huge pages, decided once per
// process. Huge pages make the first touch of fresh memory cheaper on most
// machines (one fault per 2 MB), but not on every one: in the virtual
// machine kdual is developed on, which returns free memory to its host,
// the first touch of 392 MB took 0.08 s with huge pages when the memory
// had been freed moments before and 0.9–1.8 s when it had been free a few
// seconds, against 0.25–0.31 s in 4 KB pages either way, and a float64
// Gram of n = 20 000 points spent 10.7–11.5 s in the kernel with huge
// pages against 3.4 s without. Where the kernel reports free blocks of
// 2 MB or more to the host (free page reporting, page_reporting_order ≤
// 9, as there) huge pages are not asked for. Elsewhere it is measured:
// with the system's setting "madvise", fresh regions of 8 MB are touched
// with and without the advice, in turn, twice (tens of milliseconds), and
// huge pages are asked for only when they were faster. "always" needs no advice (the
// kernel uses them anyway) and "never" ignores it; both report Advise
// false. KDUAL_HUGEPAGES=on or off overrides the probe.
func Huge() HugePages {
	hugeOnce.Do(func() { hugeChoice = probeHuge() })
	return hugeChoice
}

func probeHuge() HugePages {
	h := HugePages{System: thpSetting()}
	switch os.Getenv("KDUAL_HUGEPAGES") {
	case "on":
		h.Advise, h.Reason = true, "KDUAL_HUGEPAGES=on"
		return h
	case "off":
		h.Reason = "KDUAL_HUGEPAGES=off"
		return h
	}
	if h.System != "madvise" {
		h.Reason = "transparent huge pages are " + h.System + " on this system: no advice"
		if h.System == "" {
			h.Reason = "transparent huge pages unknown on this system: no advice"
		}
		return h
	}
	if order, ok := reportingOrder(); ok && order <= hugeOrder {
		// A virtual machine that reports free blocks of 2 MB and more to
		// its host: a huge page comes from such a block, which the host
		// has taken back, so its first touch waits for the host; small
		// pages come from the fragments it does not report. The probe
		// would sample whatever was freed last (by chance still backed)
		// and could say yes for a large buffer that is then cold: on the
		// development machine it once did, and a 1.8 GB float32 Gram
		// spent 13–15 s in the kernel instead of 4.4–6.2 s.
		h.Reason = fmt.Sprintf("free page reporting returns free blocks of order %d (≥ 2 MB) to the host: huge pages would come back cold", order)
		return h
	}
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
				h.Reason = "the probe could not map memory: no advice"
				return h
			}
			maps = append(maps, m)
			if huge {
				h.HugeSeconds += sec
			} else {
				h.SmallSeconds += sec
			}
		}
	}
	h.Advise = h.HugeSeconds < h.SmallSeconds
	verdict := "slower"
	if h.Advise {
		verdict = "faster"
	}
	h.Reason = "first touch of fresh memory measured " + verdict + " in huge pages"
	return h
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

// hugeOrder is the page order of a 2 MB huge page (4 KB pages).
const hugeOrder = 9

// reportingOrder returns the order of the smallest free blocks that free
// page reporting hands back to the host (virtio-balloon), if the kernel
// has it.
func reportingOrder() (int, bool) {
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

func thpSetting() string {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil {
		return ""
	}
	s := string(b)
	i, j := strings.IndexByte(s, '['), strings.IndexByte(s, ']')
	if i < 0 || j <= i {
		return ""
	}
	return s[i+1 : j]
}
