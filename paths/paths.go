// Package paths holds every code-path choice kdual makes from facts about
// the machine — native or BLAS inner products, the exponential map,
// integer products for data on a grid, the block-product kernels, float32
// block arithmetic, AVX-512 forms, huge pages — in one value, Paths.
//
// The default value follows written rules (Rules, rules.go) on stated
// facts (Facts: processor features, OpenBLAS's core, the kernel's
// huge-page settings); no timing decides anything, so the same inputs,
// options, threads and memory budget give the same bits in every process.
// A program may inspect the value (Current), change it in code (Set),
// save it and load it (Save, Load); an explicit tuning step times the
// alternatives on the user's machine and writes such a profile
// (gram.Tune, `kdual tune`), which later runs load only when asked
// (`--profile FILE`). The package reads no environment variable: the
// kdual command maps its own (KDUAL_GRAM, KDUAL_AVX512, KDUAL_HUGEPAGES)
// onto Override.
package paths

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/kdual/kdual/internal/bigmem"
	"github.com/kdual/kdual/native"
	"github.com/kdual/kdual/status"
)

// Version is the format version of saved profiles.
const Version = 1

// Paths is one choice for each code path. The zero value is valid (every
// portable path: BLAS products, Go map, float64 products, dsymm, no
// AVX-512 forms, no huge pages); Rules gives the default.
type Paths struct {
	// InnerNative: the Gram engine's inner products by native.DotNT on
	// 64×64 tiles (AVX-512) instead of OpenBLAS dgemm/dsyrk on panels.
	InnerNative bool `json:"inner_native"`
	// MapNative: the Gaussian and Laplace maps by native's vectorised
	// exponential instead of math.Exp per entry.
	MapNative bool `json:"map_native"`
	// Grid: distance kernels on data on an integer grid take exact float32
	// products (sgemm, widened) instead of dgemm.
	Grid bool `json:"grid"`
	// Int8: kernel rows of data on an 8-bit grid by exact integer products
	// (native.Int8Map, AVX-512 VNNI) instead of float32 products and a map.
	Int8 bool `json:"int8"`
	// SymmNative: float64 symmetric matrices multiply blocks of b ≥ 2
	// columns through linalg's tile kernel instead of OpenBLAS dsymm, and
	// the matrix-free operator's panels go into both sides through it
	// instead of two dgemm (gram.PanelSymm).
	SymmNative bool `json:"symm_native"`
	// SyrkNative: C·Cᵀ of float32 rows (a Nyström fit's C_cC_cᵀ,
	// linalg.AddOuterRows32) by kdual's AVX-512 kernel (native.Syrk32Tiles
	// on packed panels) instead of OpenBLAS ssyrk.
	SyrkNative bool `json:"syrk_native"`
	// GemmNative: the float32 inner products of a Nyström fit's landmarks
	// with its points (gram.KernelRows.RangeRows32's products) by kdual's
	// AVX-512 kernel (native.Gemm32Run on packed panels) instead of
	// OpenBLAS sgemm.
	GemmNative bool `json:"gemm_native"`
	// SingleBlocks: the operator planner may store a nonnegative kernel as
	// float32 tiles and multiply blocks in float32 arithmetic for speed,
	// where the tolerance allows the rounding (eig.PlanOperator).
	SingleBlocks bool `json:"single_blocks"`
	// WideSymm, WideSingle, WideSymv: the AVX-512 forms of the
	// float64-arithmetic block kernel, the float32-arithmetic block kernel
	// and the one-vector kernel on float32 tiles (native.Build.WithWide).
	WideSymm   bool `json:"avx512_float64_blocks"`
	WideSingle bool `json:"avx512_float32_blocks"`
	WideSymv   bool `json:"avx512_one_vector"`
	// HugePages: buffers of bigmem.AdviseMin bytes or more, and fresh
	// scratch of bigmem.ScratchMin bytes or more (bigmem.AdviseScratch),
	// ask for transparent huge pages.
	HugePages bool `json:"huge_pages"`

	// Source says where the value came from: "rules", "profile FILE",
	// "tuned", or what a program set.
	Source string `json:"source"`
	// Reasons says, path by path, why the value is what it is.
	Reasons []Reason `json:"reasons,omitempty"`
	// Core is the check of OpenBLAS's core (CheckCore) on the facts the
	// value was made from.
	Core CoreCheck `json:"core"`
}

// Reason is one path's choice and why.
type Reason struct {
	Path   string `json:"path"`
	Choice string `json:"choice"`
	Why    string `json:"why"`
}

// Known are the paths Reasons records, in the order `kdual info` prints
// them.
var Known = []string{"inner", "map", "grid", "int8", "symm", "syrk", "gemm", "single", "avx512", "huge pages"}

// Choice returns the choice Reasons records for path, read off p's
// values: inner, symm, syrk and gemm "native" or "blas", map "native" or "go", grid,
// int8, single and huge pages "on" or "off", avx512 the AVX-512 forms in
// use ("float64 blocks", "float32 blocks", "one vector", joined by ", ")
// or "none"; false for a path not in Known.
func (p Paths) Choice(path string) (string, bool) {
	switch path {
	case "inner":
		return onOff(p.InnerNative, "native", "blas"), true
	case "map":
		return onOff(p.MapNative, "native", "go"), true
	case "grid":
		return onOff(p.Grid, "on", "off"), true
	case "int8":
		return onOff(p.Int8, "on", "off"), true
	case "symm":
		return onOff(p.SymmNative, "native", "blas"), true
	case "syrk":
		return onOff(p.SyrkNative, "native", "blas"), true
	case "gemm":
		return onOff(p.GemmNative, "native", "blas"), true
	case "single":
		return onOff(p.SingleBlocks, "on", "off"), true
	case "huge pages":
		return onOff(p.HugePages, "on", "off"), true
	case "avx512":
		var forms []string
		for _, f := range []struct {
			on   bool
			name string
		}{{p.WideSymm, "float64 blocks"}, {p.WideSingle, "float32 blocks"}, {p.WideSymv, "one vector"}} {
			if f.on {
				forms = append(forms, f.name)
			}
		}
		if len(forms) == 0 {
			return "none", true
		}
		return strings.Join(forms, ", "), true
	}
	return "", false
}

// onOff is on when b holds, off otherwise.
func onOff(b bool, on, off string) string {
	if b {
		return on
	}
	return off
}

// Build is the native kernels' build these paths run: AVX2 (or SSE2)
// with the AVX-512 forms chosen.
func (p Paths) Build() native.Build {
	return native.AVX2().WithWide(p.WideSymm, p.WideSingle, p.WideSymv)
}

// Check returns an error wrapping ErrInvalid, naming the field, when p
// asks for a path this processor cannot run.
func (p Paths) Check(f Facts) error {
	avx512 := f.CPU.AVX512F && f.CPU.AVX2
	wide := avx512 && f.CPU.AVX512VL && f.CPU.AVX512DQ
	for _, c := range []struct {
		on, can bool
		what    string
	}{
		{p.InnerNative, avx512, "InnerNative needs AVX-512 F and FMA"},
		{p.Int8, f.CPU.VNNI && f.CPU.AVX512BW && avx512, "Int8 needs AVX-512 VNNI and BW"},
		{p.SyrkNative, wide, "SyrkNative needs AVX-512 F, VL and DQ"},
		{p.GemmNative, wide, "GemmNative needs AVX-512 F, VL and DQ"},
		{p.WideSymm, wide, "WideSymm needs AVX-512 F, VL and DQ"},
		{p.WideSingle, wide, "WideSingle needs AVX-512 F, VL and DQ"},
		{p.WideSymv, wide, "WideSymv needs AVX-512 F, VL and DQ"},
	} {
		if c.on && !c.can {
			return fmt.Errorf("paths: %s, which this processor lacks: %w", c.what, status.ErrInvalid)
		}
	}
	return nil
}

var (
	mu      sync.Mutex
	current *Paths
)

// Current returns the paths in force in this process: those given to Set,
// or else Rules(Detect()), made on the first call (reading cpuid and two
// files of /sys; nothing is timed).
func Current() Paths {
	mu.Lock()
	defer mu.Unlock()
	if current == nil {
		p := Rules(Detect())
		current = &p
		bigmem.SetHugePages(p.HugePages)
	}
	return *current
}

// Set puts p in force for the whole process (every fit that starts after
// it returns), after checking that this processor runs it. It must not
// run while a fit is under way.
func Set(p Paths) error {
	if err := p.Check(Detect()); err != nil {
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	current = &p
	bigmem.SetHugePages(p.HugePages)
	return nil
}

// Reset puts the rules back in force (Rules(Detect())).
func Reset() {
	mu.Lock()
	current = nil
	mu.Unlock()
	_ = Current()
}

type profile struct {
	Version int   `json:"version"`
	Paths   Paths `json:"paths"`
}

// Save writes p as a JSON profile.
func (p Paths) Save(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(profile{Version: Version, Paths: p})
}

// Load reads a profile written by Save (at most 1 MiB; unknown fields and
// other versions are errors wrapping ErrInvalid). The paths it returns
// keep the profile's Source and values; Set puts them in force. A profile
// edited by hand keeps its values, and its Reasons say so: every path of
// Known has one reason, its Choice read off the values (Paths.Choice);
// where that is not the choice the recorded reason was for, or the
// profile records none, the reason says the value was set in the profile.
func Load(r io.Reader) (Paths, error) {
	dec := json.NewDecoder(io.LimitReader(r, 1<<20))
	dec.DisallowUnknownFields()
	var pr profile
	if err := dec.Decode(&pr); err != nil {
		return Paths{}, fmt.Errorf("paths: profile: %v: %w", err, status.ErrInvalid)
	}
	if pr.Version != Version {
		return Paths{}, fmt.Errorf("paths: profile version %d, this kdual reads %d: %w", pr.Version, Version, status.ErrInvalid)
	}
	p := pr.Paths
	p.reconcile(func(old Reason, recorded bool) string {
		if !recorded {
			return "set in the profile, which records no reason"
		}
		return fmt.Sprintf("set in the profile (its recorded reason was for %q: %s)", old.Choice, old.Why)
	})
	return p, nil
}

// reconcile gives every path of Known one reason whose Choice is read off
// p's values (Choice), in Known's order, then the reasons of other paths:
// a recorded reason for that choice stays; one for another choice, or
// none, is replaced by a reason with why(the recorded one, whether there
// was one).
func (p *Paths) reconcile(why func(old Reason, recorded bool) string) {
	recorded := map[string]Reason{}
	var others []Reason
	for _, r := range p.Reasons {
		if _, ok := p.Choice(r.Path); ok {
			recorded[r.Path] = r
		} else {
			others = append(others, r)
		}
	}
	p.Reasons = nil
	for _, path := range Known {
		c, _ := p.Choice(path)
		r, ok := recorded[path]
		switch {
		case ok && r.Choice != c && r.Choice == p.avx512Before(path):
			r.Choice = c // the same values, as profiles wrote them before
		case !ok || r.Choice != c:
			r = Reason{path, c, why(r, ok)}
		}
		p.Reasons = append(p.Reasons, r)
	}
	p.Reasons = append(p.Reasons, others...)
}

// avx512Before is the avx512 choice as profiles tuned before Choice
// existed wrote it for p's values; "" for other paths.
func (p Paths) avx512Before(path string) string {
	if path != "avx512" {
		return ""
	}
	return fmt.Sprintf("float64 blocks %v, float32 blocks %v, one vector %v", p.WideSymm, p.WideSingle, p.WideSymv)
}
