package paths

import (
	"fmt"
	"strings"

	"github.com/kdual/kdual/internal/bigmem"
	"github.com/kdual/kdual/native"
	"github.com/kdual/kdual/status"
)

// Facts are what the rules read: stated facts about the machine, the same
// in every process on it.
type Facts struct {
	// CPU: the processor's features (cpuid).
	CPU native.CPUFeatures
	// Core: the OpenBLAS core in use (native.CoreName).
	Core string
	// CoreSetByUser: OPENBLAS_CORETYPE chose the core. The library reads
	// no environment, so Detect leaves it false; the kdual command sets it.
	CoreSetByUser bool
	// THP: the kernel's transparent huge pages setting ("always",
	// "madvise", "never" or "").
	THP string
	// ReportingOrder: the page order from which free memory is reported to
	// a hypervisor (free page reporting), −1 where there is none.
	ReportingOrder int
}

// Detect reads the facts of this machine and process.
func Detect() Facts { return detect(bigmem.ReportingOrder) }

// detect is Detect with the free page reporting order read by order (ok
// false: the machine reports no free pages).
func detect(order func() (int, bool)) Facts {
	f := Facts{CPU: native.CPU(), Core: native.CoreName(), THP: bigmem.THPSetting(), ReportingOrder: -1}
	if o, ok := order(); ok {
		f.ReportingOrder = o
	}
	return f
}

// Rules returns the default paths on the facts f. Each rule's reason,
// with the measurement behind it, is recorded in Reasons (printed by
// `kdual info`; docs/paths.md has the tables and their machines):
//
//   - InnerNative where the processor has AVX-512 F and FMA (native.DotNT
//     needs them): never measured more than 5 % behind dgemm, often ahead;
//   - MapNative always: the vectorised exponential is several times
//     math.Exp's rate on every core (it has an SSE2 build too);
//   - Grid always: sgemm runs at about twice dgemm's rate on every
//     OpenBLAS core, and on a grid its products are exact;
//   - Int8 where the processor has AVX-512 VNNI (and BW): integer kernel
//     rows beat sgemm and the map;
//   - SymmNative always: the tile kernel reads one triangle once and beats
//     dsymm on blocks;
//   - SyrkNative where the processor has AVX-512 F, VL and DQ: kdual's
//     packed 8×48 kernel, on threads of its own, took about 0.55 of the
//     time of OpenBLAS's Haswell ssyrk on C_cC_cᵀ's chunks and 0.9–1.0 of
//     its Cooperlake one, and the million-point 8-bit fit 0.7 and 0.9 of
//     its time under those cores (docs/paths.md);
//   - GemmNative where the processor has AVX-512 F, VL and DQ: the same
//     kernel's rectangular form took about 0.5–0.6 of the time of
//     OpenBLAS's Haswell sgemm on a landmarks-by-points chunk and was
//     within 8 % of its Cooperlake and SkylakeX ones either way; the
//     float32 million-point fit 0.72 of its time under Haswell and the
//     same under Cooperlake (docs/paths.md);
//   - SingleBlocks where the processor has AVX2: float32 block arithmetic
//     beats the float64 product there (the SSE2 build never did);
//   - WideSymm and WideSingle where the processor has AVX-512 F, VL and DQ
//     (faster than AVX2 there); WideSymv never (its AVX-512 form was not);
//   - HugePages never by default: where the hypervisor takes free memory
//     back, huge pages come back cold and slow a Gram build several times;
//     only a tuned profile (which measures the first touch) turns them on.
func Rules(f Facts) Paths {
	c := f.CPU
	avx512 := c.AVX512F && c.AVX2
	wide := avx512 && c.AVX512VL && c.AVX512DQ
	p := Paths{
		InnerNative:  avx512,
		MapNative:    true,
		Grid:         true,
		Int8:         avx512 && c.VNNI && c.AVX512BW,
		SymmNative:   true,
		SyrkNative:   wide,
		GemmNative:   wide,
		SingleBlocks: c.AVX2,
		WideSymm:     wide,
		WideSingle:   wide,
		WideSymv:     false,
		HugePages:    false,
		Source:       "rules",
		Core:         CheckCore(f),
	}
	why := map[string]string{
		"inner": onOff(avx512,
			"AVX-512: native 64×64 tiles were never more than 5 % behind dgemm and up to 1.6× ahead on four OpenBLAS cores",
			"no AVX-512: OpenBLAS dgemm/dsyrk is the only path"),
		"map":  "the vectorised exponential was 5× math.Exp on every core measured",
		"grid": "exact float32 products of integer-grid data: sgemm and widening 1.5–3× faster than dgemm on every core measured",
		"int8": onOff(p.Int8,
			"AVX-512 VNNI: exact integer kernel rows 3–30× faster than sgemm and the map",
			"no AVX-512 VNNI: 8-bit data take float32 products"),
		"symm": "float64 blocks by the tile kernel 1.5–4× faster than dsymm",
		"syrk": syrkWhy(wide),
		"gemm": gemmWhy(wide),
		"single": onOff(p.SingleBlocks,
			"AVX2: float32 tiles in float32 arithmetic 1.4–3× faster than the float64 block product",
			"no AVX2: the SSE2 float32 kernel is not used for speed"),
		"avx512": onOff(wide,
			"AVX-512 F/VL/DQ: block kernels 1.3–2× faster in 512-bit form; the one-vector kernel 10–20 % slower, kept in AVX2",
			"the processor lacks AVX-512 F/VL/DQ"),
		"huge pages": hugeWhy(f),
	}
	for _, path := range Known {
		c, _ := p.Choice(path)
		p.Reasons = append(p.Reasons, Reason{path, c, why[path]})
	}
	if p.Core.Generic && p.Core.Want != "" {
		p.Reasons = append(p.Reasons, Reason{"openblas core", p.Core.Core, p.Core.Why})
	}
	return p
}

func syrkWhy(wide bool) string {
	if !wide {
		return "no AVX-512 F/VL/DQ: OpenBLAS ssyrk is the only path"
	}
	return "AVX-512: C·Cᵀ of float32 rows by the packed kernel in about 0.55 of the time of OpenBLAS's Haswell ssyrk and 0.9–1.0 of its Cooperlake one (Zen 5)"
}

func gemmWhy(wide bool) string {
	if !wide {
		return "no AVX-512 F/VL/DQ: OpenBLAS sgemm is the only path"
	}
	return "AVX-512: landmarks-by-points float32 products by the packed kernel in 0.5–0.6 of the time of OpenBLAS's Haswell sgemm and within 8 % of its Cooperlake one (Zen 5)"
}

func hugeWhy(f Facts) string {
	switch {
	case f.THP == "always":
		return "the system uses transparent huge pages always: no advice needed"
	case f.THP != "madvise":
		return "transparent huge pages are " + orUnknown(f.THP) + " here"
	case f.ReportingOrder >= 0 && f.ReportingOrder <= bigmem.HugeOrder:
		return fmt.Sprintf("free page reporting returns free blocks of order %d (≥ 2 MB) to the host: huge pages would come back cold", f.ReportingOrder)
	}
	return "not asked unless a tuned profile measured them faster (first touch can be slower in a virtual machine)"
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// CoreCheck is the verdict on OpenBLAS's core.
type CoreCheck struct {
	// Core is the core OpenBLAS runs.
	Core string `json:"core"`
	// Generic: OpenBLAS chose a core without the processor's AVX2 or
	// AVX-512 kernels (its fallback for a processor it does not know).
	Generic bool `json:"generic"`
	// Want is the core that matches the processor's features, "" where
	// Core already does or nothing better is known.
	Want string `json:"want,omitempty"`
	// Restart: a program should restart with OPENBLAS_CORETYPE=Want (the
	// core is generic, Want is known and the user did not choose the core).
	Restart bool `json:"restart"`
	// Why says so in a sentence.
	Why string `json:"why"`
}

// genericCores are OpenBLAS's cores whose kernels predate AVX2 (its
// fallbacks for processors it does not recognise).
var genericCores = map[string]bool{
	"prescott": true, "core2": true, "penryn": true, "dunnington": true, "nehalem": true,
	"atom": true, "barcelona": true, "opteron": true, "opteron_sse3": true, "bobcat": true,
	"katmai": true, "coppermine": true, "northwood": true, "banias": true, "nano": true,
	"sandybridge": true, "bulldozer": true, "piledriver": true, "steamroller": true, "generic": true,
}

// WantCore returns OpenBLAS's core that matches the processor features c:
// Cooperlake with AVX-512 F/VL/BW/DQ and BF16, SkylakeX with AVX-512
// F/VL/BW/DQ, Zen on AMD processors with AVX2, Haswell on others with AVX2
// and FMA; "" without AVX2.
func WantCore(c native.CPUFeatures) string {
	avx512 := c.AVX2 && c.AVX512F && c.AVX512VL && c.AVX512BW && c.AVX512DQ
	switch {
	case !c.AVX2:
		return ""
	case c.Vendor == "amd" && !avx512:
		return "Zen"
	case avx512 && c.AVX512BF16:
		return "Cooperlake"
	case avx512:
		return "SkylakeX"
	case c.Vendor == "amd":
		return "Zen"
	}
	return "Haswell"
}

// CheckCore says whether OpenBLAS runs a generic core on a processor that
// has AVX2 or AVX-512, which core would match it, and whether to restart
// with it: only when the user did not choose the core (f.CoreSetByUser).
func CheckCore(f Facts) CoreCheck {
	c := CoreCheck{Core: f.Core}
	c.Generic = genericCores[strings.ToLower(strings.TrimSpace(f.Core))]
	want := WantCore(f.CPU)
	if !c.Generic || want == "" {
		c.Why = "OpenBLAS's " + orUnknown(f.Core) + " core matches this processor"
		if c.Generic {
			c.Why = "OpenBLAS's generic " + f.Core + " core: this processor has no AVX2 for a better one"
		}
		return c
	}
	c.Want = want
	if f.CoreSetByUser {
		c.Why = fmt.Sprintf("OpenBLAS runs its generic %s kernels as OPENBLAS_CORETYPE asks; %s would match this processor", f.Core, want)
		return c
	}
	c.Restart = true
	c.Why = fmt.Sprintf("OpenBLAS chose its generic %s kernels on a processor with %s: %s matches it (set OPENBLAS_CORETYPE=%s before the process starts)",
		f.Core, featureWords(f.CPU), want, want)
	return c
}

func featureWords(c native.CPUFeatures) string {
	switch {
	case c.AVX512F && c.AVX512BF16:
		return "AVX-512 (BF16)"
	case c.AVX512F:
		return "AVX-512"
	}
	return "AVX2"
}

// Override applies a comma-separated list of settings to p, each
// key=value: inner=blas|native, map=go|native, symm=blas|native,
// syrk=blas|native, gemm=blas|native,
// single=on|off, grid=on|off, int8=on|off, avx512=on|off (all three
// AVX-512 kernel forms),
// hugepages=on|off. An unknown key or value is an error wrapping
// ErrInvalid. Source gains the text applied, and the reason of every path
// whose choice it changed says so (its Choice read off the new values).
func (p *Paths) Override(spec string) error {
	if strings.TrimSpace(spec) == "" {
		return nil
	}
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			return fmt.Errorf("paths: setting %q is not key=value: %w", part, status.ErrInvalid)
		}
		set, ok := map[string]*bool{
			"inner": &p.InnerNative, "map": &p.MapNative, "symm": &p.SymmNative, "syrk": &p.SyrkNative,
			"gemm":   &p.GemmNative,
			"single": &p.SingleBlocks,
			"grid":   &p.Grid, "int8": &p.Int8, "hugepages": &p.HugePages,
		}[k]
		var on bool
		switch v {
		case "on", "native":
			on = true
		case "off", "blas", "go":
		default:
			return fmt.Errorf("paths: setting %q: unknown value %q: %w", part, v, status.ErrInvalid)
		}
		switch {
		case k == "avx512":
			p.WideSymm, p.WideSingle, p.WideSymv = on, on, on
		case ok:
			*set = on
		default:
			return fmt.Errorf("paths: setting %q: unknown key %q: %w", part, k, status.ErrInvalid)
		}
	}
	p.Source += " + " + spec
	p.reconcile(func(Reason, bool) string { return fmt.Sprintf("set by the override %q", spec) })
	return nil
}
