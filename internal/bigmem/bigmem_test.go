package bigmem

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/kdual/kdual/internal/probe"
	"github.com/kdual/kdual/status"
)

// checkSlice maps 2²⁰ values: zeroed, writable, freed twice harmlessly;
// zero or impossibly many values are ErrNoMemory.
func checkSlice[T float32 | float64](t *testing.T, alloc func(int) (*Slice[T], error)) {
	f, err := alloc(1 << 20)
	require.NoError(t, err)
	require.Len(t, f.Data, 1<<20)
	for _, v := range f.Data[:1000] {
		require.Zero(t, v)
	}
	f.Data[12345] = 3
	f.Data[1<<20-1] = 2.5
	require.Equal(t, T(3), f.Data[12345])
	require.Equal(t, T(2.5), f.Data[1<<20-1])
	f.Free()
	require.Nil(t, f.Data)
	f.Free() // harmless twice
	_, err = alloc(0)
	require.ErrorIs(t, err, ErrNoMemory)
	_, err = alloc(math.MaxInt / 4)
	require.ErrorIs(t, err, ErrNoMemory)
}

// fileBytes reads "key value [kB]" lines: kB are 1024 bytes, a value
// without a unit is bytes, and a missing key, a missing or unreadable value
// or a missing file give 0.
func TestFileBytes(t *testing.T) {
	p := filepath.Join(t.TempDir(), "meminfo")
	require.NoError(t, os.WriteFile(p, []byte("MemTotal:  2048 kB\nLimit: 4096\nBad: x kB\nEmpty:\nNeg: -3 kB\n"), 0o644))
	require.Equal(t, int64(2048*1024), fileBytes(p, "MemTotal:"))
	require.Equal(t, int64(4096), fileBytes(p, "Limit:"))
	require.Zero(t, fileBytes(p, "Bad:"))
	require.Zero(t, fileBytes(p, "Empty:"))
	require.Zero(t, fileBytes(p, "Absent:"))
	require.Zero(t, fileBytes(p+".none", "MemTotal:"))
}

// The total is MemTotal, or a smaller positive cgroup limit; "max", a
// larger limit, zero or an unreadable file leave MemTotal, and a limit
// alone (no meminfo) is taken.
func TestTotalOf(t *testing.T) {
	dir := t.TempDir()
	mem := filepath.Join(dir, "meminfo")
	require.NoError(t, os.WriteFile(mem, []byte("MemTotal: 1000 kB\n"), 0o644))
	limit := func(text string) string {
		p := filepath.Join(dir, "max")
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		return p
	}
	require.Equal(t, int64(1000*1024), totalOf(mem, limit("max\n")))
	require.Equal(t, int64(5000), totalOf(mem, limit("5000\n")))
	require.Equal(t, int64(1000*1024), totalOf(mem, limit("99999999\n")))
	require.Equal(t, int64(1000*1024), totalOf(mem, limit("0\n")))
	require.Equal(t, int64(1000*1024), totalOf(mem, filepath.Join(dir, "none")))
	require.Equal(t, int64(7000), totalOf(filepath.Join(dir, "none"), limit("7000")))
}

func TestFloat32sAndMemoryFigures(t *testing.T) {
	checkSlice(t, NewFloat32s)
	require.Greater(t, PeakRSS(), int64(1<<20))
	require.Greater(t, Available(), int64(1<<20))
	s := make([]float64, 1<<19)
	AdviseHuge(s)
	s[len(s)-1] = 1
	require.Equal(t, 1.0, s[len(s)-1])
}

// Huge pages are asked for only after SetHugePages(true) (nothing is
// measured to decide it), and the measurement of an explicit tuning step
// times both ways and counts itself.
func TestHugePages(t *testing.T) {
	require.False(t, Huge().Advise, "huge pages asked for before anyone set them")
	SetHugePages(true)
	require.True(t, Huge().Advise)
	SetHugePages(false)
	require.False(t, Huge().Advise)
	before := probe.Count()
	hs, ss, ok := MeasureHuge()
	require.True(t, ok)
	require.Greater(t, hs, 0.0)
	require.Greater(t, ss, 0.0)
	require.Equal(t, before+1, probe.Count())
	if o, ok := ReportingOrder(); ok {
		require.GreaterOrEqual(t, o, 0)
	}
	// The setting is the bracketed word of the kernel's file where it can
	// be read, "" where it cannot.
	if b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled"); err == nil {
		require.Contains(t, string(b), "["+THPSetting()+"]")
		require.Contains(t, []string{"always", "madvise", "never"}, THPSetting())
	} else {
		require.Equal(t, "", THPSetting())
	}
	// The probe's measurement itself, both ways, on any system.
	for _, huge := range []bool{false, true} {
		m, sec, ok := touchFresh(huge)
		require.True(t, ok)
		require.Greater(t, sec, 0.0)
		require.GreaterOrEqual(t, len(m), probeBytes)
		require.NoError(t, syscall.Munmap(m))
	}
	// The advice itself, forced, leaves an ordinary slice.
	s := make([]float64, 1<<19)
	adviseHuge(s)
	s[len(s)-1] = 2
	require.Equal(t, 2.0, s[len(s)-1])
}

func TestFloat64s(t *testing.T) { checkSlice(t, NewFloat64s) }

// Populate makes the whole buffer resident at once (VmRSS grows by about
// its size before anything is written) and keeps it zero; where the kernel
// lacks MADV_POPULATE_WRITE it says so and nothing changes. A freed or nil
// buffer reports false.
func TestPopulate(t *testing.T) {
	const n = 160 << 20 / 4 // 160 MB of float32s, split over the workers
	f, err := NewFloat32s(n)
	require.NoError(t, err)
	defer f.Free()
	require.Zero(t, f.ResidentBytes(), "fresh pages are not resident")
	ok := f.Populate()
	if ok {
		require.Equal(t, int64(4*n), f.ResidentBytes())
	} else {
		t.Logf("the kernel has no MADV_POPULATE_WRITE: %d bytes resident", f.ResidentBytes())
	}
	for i := 0; i < n; i += 4099 {
		require.Zero(t, f.Data[i])
	}
	f.Data[n-1] = 1
	f.Free()
	require.Zero(t, f.ResidentBytes())
	require.False(t, f.Populate())
	var nilSlice *Float32s
	require.False(t, nilSlice.Populate())
}

// Populate's parts are whole pages, one per 64 MB of the mapping, at least
// one and at most one per worker, and they cover it.
func TestPopulateStep(t *testing.T) {
	const mb = 1 << 20
	for _, size := range []int{1, 400, 4095, 4096, 4097, 64*mb - 1, 64 * mb, 128*mb + 12<<10, 1<<30 + 1} {
		for _, procs := range []int{1, 2, 16} {
			step := populateStep(size, procs)
			parts := (size + step - 1) / step
			want := max(1, min(procs, size/(64*mb)))
			require.Positive(t, step, "%d bytes, %d workers", size, procs)
			require.Zero(t, step%4096, "%d bytes, %d workers", size, procs)
			require.LessOrEqual(t, parts, want, "%d bytes, %d workers", size, procs)
			require.Greater(t, step*want, size-4096*want, "%d bytes, %d workers: parts of about size/%d", size, procs, want)
		}
	}
}

// PopulateRange makes resident the pages of one range only.
func TestPopulateRange(t *testing.T) {
	const n = 64 << 20 / 8
	f, err := NewFloat64s(n)
	require.NoError(t, err)
	defer f.Free()
	if !f.PopulateRange(n/4+3, n/2) {
		t.Skip("the kernel has no MADV_POPULATE_WRITE")
	}
	// Exactly the pages holding Data[n/4+3 : n/2]: from the page of entry
	// n/4+3 (n/4 is page-aligned: the first 3 entries share its page) to
	// the end of entry n/2−1, in 4 KB pages unless huge pages were asked.
	if !Huge().Advise {
		require.Equal(t, int64(8*n/4), f.ResidentBytes())
	} else {
		require.GreaterOrEqual(t, f.ResidentBytes(), int64(8*n/4))
	}
	require.False(t, f.PopulateRange(5, 5))
	require.False(t, f.PopulateRange(-1, 5))
	require.False(t, f.PopulateRange(0, n+1))
	require.True(t, f.PopulateRange(0, 1), "a range from the first entry")
	require.True(t, f.PopulateRange(n-1, n), "a range to the last entry")
}

// Size picks the largest unit the count reaches, on either sign, with the
// boundaries in the unit above.
func TestSize(t *testing.T) {
	for _, c := range []struct {
		b    int64
		want string
	}{
		{0, "0 B"}, {1023, "1023 B"}, {1 << 10, "1.0 KiB"}, {-1 << 10, "-1.0 KiB"}, {1<<20 - 1, "1024.0 KiB"},
		{1 << 20, "1.0 MiB"}, {3 << 19, "1.5 MiB"}, {1<<30 - 1, "1024.0 MiB"}, {1 << 30, "1.00 GiB"}, {-3 << 30, "-3.00 GiB"}, {5 << 40, "5120.00 GiB"},
	} {
		if got := Size(c.b); got != c.want {
			t.Errorf("Size(%d) = %q, want %q", c.b, got, c.want)
		}
	}
}

// Fits passes what fits in Total and refuses, with both sentinels and the
// sizes in the message, what does not — also where the product of the
// dimensions overflows int64 — and negative dimensions; a zero dimension
// needs nothing.
func TestFits(t *testing.T) {
	total := Total()
	if total <= 0 {
		t.Fatal("Total() cannot be read here: Fits would pass everything")
	}
	require.NoError(t, Fits("x", 8, 1000, 1000))
	require.NoError(t, Fits("x", 8, 0, 1<<62))
	require.NoError(t, Fits("x", 1, int(total)))
	for _, c := range []struct {
		size int64
		dims []int
	}{
		{1, []int{int(total) + 1}}, {8, []int{int(total/8) + 1, 1}}, {8, []int{1 << 40, 1 << 40}}, {8, []int{math.MaxInt, math.MaxInt, 3}},
	} {
		err := Fits("the test's array", c.size, c.dims...)
		require.ErrorIs(t, err, ErrNoMemory, "%v", c)
		require.ErrorIs(t, err, status.ErrInvalid, "%v", c)
		require.Contains(t, err.Error(), "the test's array")
		require.Contains(t, err.Error(), Size(total))
	}
	require.ErrorIs(t, Fits("x", 8, 10, -1), status.ErrInvalid)
	// The size asked for, in GiB: 8 bytes × 2⁴⁰ × 2¹⁰ = 2²³ GiB.
	require.ErrorContains(t, Fits("x", 8, 1<<40, 1<<10), "x: 8.39e+06 GiB, more than")
}

// The transparent huge pages setting is the word in brackets, wherever it
// stands in the kernel's list; a list with none marked gives "".
func TestBracketed(t *testing.T) {
	for s, want := range map[string]string{
		"[always] madvise never\n": "always",
		"always [madvise] never\n": "madvise",
		"always madvise [never]\n": "never",
		"always madvise never\n":   "",
		"never] [always":           "",
		"":                         "",
	} {
		require.Equal(t, want, bracketed(s), "%q", s)
	}
}

// AdviseScratch asks for huge pages on a fresh buffer of ScratchMin bytes
// or more, only while they are on: the kernel then marks the mapping that
// holds its 2 MB pages ("hg" among the VmFlags of /proc/self/smaps, where
// the system has that file and transparent huge pages).
func TestAdviseScratch(t *testing.T) {
	defer SetHugePages(false)
	for _, c := range []struct {
		on    bool
		bytes int
		want  bool
	}{{false, 8 << 20, false}, {true, ScratchMin - 4096, false}, {true, ScratchMin, true}, {true, 8 << 20, true}} {
		SetHugePages(c.on)
		m, err := syscall.Mmap(-1, 0, c.bytes+2*hugePage, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
		require.NoError(t, err)
		// The buffer starts 4 KB past a 2 MB boundary, as an allocation
		// may: its first whole 2 MB page is the next one.
		start := uintptr(unsafe.Pointer(&m[0]))
		skip := int((start+hugePage-1)&^(hugePage-1)-start) + 4096
		b := m[skip : skip+c.bytes]
		AdviseScratch(b)
		b[len(b)-1] = 3
		require.Equal(t, uint8(3), b[len(b)-1])
		page := uintptr(unsafe.Pointer(&b[0])) - 4096 + hugePage
		flags, ok := vmFlags(page)
		if ok && THPSetting() != "" {
			require.Equal(t, c.want, slices.Contains(flags, "hg"), "huge pages %v, %d bytes: VmFlags %v", c.on, len(b), flags)
		}
		require.NoError(t, syscall.Munmap(m))
	}
}

// vmFlags returns the VmFlags of the mapping holding addr in
// /proc/self/smaps; false where the file or the mapping is not there.
func vmFlags(addr uintptr) ([]string, bool) {
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return nil, false
	}
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			lo, hi, _ := strings.Cut(f[0], "-")
			l, err1 := strconv.ParseUint(lo, 16, 64)
			h, err2 := strconv.ParseUint(hi, 16, 64)
			in = err1 == nil && err2 == nil && uint64(addr) >= l && uint64(addr) < h
			continue
		}
		if in && len(f) > 0 && f[0] == "VmFlags:" {
			return f[1:], true
		}
	}
	return nil, false
}
