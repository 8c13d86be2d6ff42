package native

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Each flag bit sets its own field and nothing else; the vendor bits
// name Intel, AMD, or neither.
func TestCPUFeaturesDecode(t *testing.T) {
	require.Equal(t, CPUFeatures{Vendor: "other"}, cpuFeatures(0))
	fields := []func(c CPUFeatures) bool{
		func(c CPUFeatures) bool { return c.AVX2 }, func(c CPUFeatures) bool { return c.AVX512F },
		func(c CPUFeatures) bool { return c.AVX512VL }, func(c CPUFeatures) bool { return c.AVX512BW },
		func(c CPUFeatures) bool { return c.AVX512DQ }, func(c CPUFeatures) bool { return c.AVX512BF16 },
		func(c CPUFeatures) bool { return c.VNNI },
	}
	for i := range fields {
		c := cpuFeatures(1 << i)
		require.Equal(t, "other", c.Vendor)
		for j, g := range fields {
			require.Equal(t, i == j, g(c), "bit %d, field %d", i, j)
		}
	}
	require.Equal(t, "intel", cpuFeatures(128).Vendor)
	require.Equal(t, "amd", cpuFeatures(256).Vendor)
	all := cpuFeatures(127 | 256)
	require.Equal(t, CPUFeatures{Vendor: "amd", AVX2: true, AVX512F: true, AVX512VL: true, AVX512BW: true,
		AVX512DQ: true, AVX512BF16: true, VNNI: true}, all)
}

// CPU agrees with the kernel's view of this processor (/proc/cpuinfo's
// first flags line and vendor).
func TestCPUMatchesProcCPUInfo(t *testing.T) {
	raw, err := os.ReadFile("/proc/cpuinfo") // kdual builds for Linux only
	require.NoError(t, err)
	flags, vendor := map[string]bool{}, ""
	for _, line := range strings.Split(string(raw), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "flags":
			if len(flags) == 0 {
				for _, f := range strings.Fields(v) {
					flags[f] = true
				}
			}
		case "vendor_id":
			if vendor == "" {
				vendor = strings.TrimSpace(v)
			}
		}
	}
	require.NotEmpty(t, flags, "/proc/cpuinfo lists no flags")
	c := CPU()
	require.Equal(t, flags["avx2"] && flags["fma"], c.AVX2)
	require.Equal(t, flags["avx512f"], c.AVX512F)
	require.Equal(t, flags["avx512vl"], c.AVX512VL)
	require.Equal(t, flags["avx512bw"], c.AVX512BW)
	require.Equal(t, flags["avx512dq"], c.AVX512DQ)
	require.Equal(t, flags["avx512_bf16"], c.AVX512BF16)
	require.Equal(t, flags["avx512_vnni"], c.VNNI)
	want := map[string]string{"GenuineIntel": "intel", "AuthenticAMD": "amd"}[vendor]
	if want == "" {
		want = "other"
	}
	require.Equal(t, want, c.Vendor)
}
