package native

/*
static int kd_cpu_flags(void) {
    __builtin_cpu_init();
    int f = 0;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) f |= 1;
    if (__builtin_cpu_supports("avx512f")) f |= 2;
    if (__builtin_cpu_supports("avx512vl")) f |= 4;
    if (__builtin_cpu_supports("avx512bw")) f |= 8;
    if (__builtin_cpu_supports("avx512dq")) f |= 16;
    if (__builtin_cpu_supports("avx512bf16")) f |= 32;
    if (__builtin_cpu_supports("avx512vnni")) f |= 64;
    if (__builtin_cpu_is("intel")) f |= 128;
    if (__builtin_cpu_is("amd")) f |= 256;
    return f;
}
*/
import "C"

// CPUFeatures are the processor facts kdual's rules read (package paths):
// the instruction-set extensions its kernels and OpenBLAS's cores need,
// and the vendor. They come from the cpuid instruction, so they are the
// same in every process on one machine.
type CPUFeatures struct {
	// Vendor is "intel", "amd" or "other".
	Vendor string `json:"vendor"`
	// AVX2 means AVX2 and FMA.
	AVX2 bool `json:"avx2"`
	// AVX512F, AVX512VL, AVX512BW, AVX512DQ, AVX512BF16 and VNNI are the
	// AVX-512 extensions of those names (VNNI: AVX512_VNNI).
	AVX512F    bool `json:"avx512f"`
	AVX512VL   bool `json:"avx512vl"`
	AVX512BW   bool `json:"avx512bw"`
	AVX512DQ   bool `json:"avx512dq"`
	AVX512BF16 bool `json:"avx512bf16"`
	VNNI       bool `json:"vnni"`
}

// CPU returns this processor's features.
func CPU() CPUFeatures { return cpuFeatures(int(C.kd_cpu_flags())) }

// cpuFeatures decodes kd_cpu_flags's bits: 1 AVX2 and FMA, 2 AVX-512 F,
// 4 VL, 8 BW, 16 DQ, 32 BF16, 64 VNNI, 128 an Intel processor, 256 an AMD
// one.
func cpuFeatures(f int) CPUFeatures {
	c := CPUFeatures{
		Vendor: "other", AVX2: f&1 != 0, AVX512F: f&2 != 0, AVX512VL: f&4 != 0, AVX512BW: f&8 != 0,
		AVX512DQ: f&16 != 0, AVX512BF16: f&32 != 0, VNNI: f&64 != 0,
	}
	switch {
	case f&128 != 0:
		c.Vendor = "intel"
	case f&256 != 0:
		c.Vendor = "amd"
	}
	return c
}
