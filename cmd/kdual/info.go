package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/kdual/kdual/internal/bigmem"
	"github.com/kdual/kdual/native"
	"github.com/kdual/kdual/paths"
)

type infoReport struct {
	OpenBLAS string `json:"openblas"`
	Core     string `json:"core"`
	// CoreSource: who chose the core: "openblas" (its detection),
	// "OPENBLAS_CORETYPE=…" (the user), or "kdual restart from …" (the
	// command corrected a generic choice, see paths.CheckCore).
	CoreSource string `json:"core_source"`
	// CoreCheck: the verdict on the core (paths.CheckCore).
	CoreCheck  paths.CoreCheck `json:"core_check"`
	Threads    int             `json:"threads"`
	Parallel   string          `json:"parallel"`
	Go         string          `json:"go"`
	GOMAXPROCS int             `json:"gomaxprocs"`
	CPUs       int             `json:"cpus"`
	// CPU: the processor features the rules read.
	CPU native.CPUFeatures `json:"cpu"`
	// HugePages: the kernel's setting and whether large buffers ask for
	// huge pages (the paths' choice).
	HugePages hugeInfo `json:"huge_pages"`
	// BLASSpin: how long OpenBLAS's idle threads spin (native.Spin).
	BLASSpin spinInfo `json:"blas_spin"`
	// Paths: every code path's choice and why (paths.Current).
	Paths paths.Paths `json:"paths"`
	// Kernels: the instruction set of kdual's native kernels.
	Kernels string `json:"kernels"`
}

type spinInfo struct {
	Exponent int    `json:"exponent"`
	Source   string `json:"source"`
}

type hugeInfo struct {
	Advise bool   `json:"advise"`
	System string `json:"system"`
}

func runInfo(args []string, stdout io.Writer) error {
	fs := newFlags("info")
	jsonOut := fs.String("json", "", "write JSON to FILE, or - (or --json alone) for standard output")
	restarted := fs.Bool("restarted-core", false, "print only the core kdual restarted with (empty when OpenBLAS's own choice stands), for scripts that run other programs on the same core")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *restarted {
		if os.Getenv(envRestarted) != "" {
			fmt.Fprintln(stdout, native.CoreName())
		}
		return nil
	}
	p := paths.Current()
	r := infoReport{
		OpenBLAS: native.Config(), Core: native.CoreName(), Threads: native.Threads(),
		Parallel: native.Parallel(), Go: runtime.Version(), GOMAXPROCS: runtime.GOMAXPROCS(0),
		CPUs: runtime.NumCPU(), CoreSource: "openblas", CPU: native.CPU(), Paths: p,
		CoreCheck: paths.CheckCore(coreFacts()), Kernels: p.Build().Name(),
	}
	if v := os.Getenv("OPENBLAS_CORETYPE"); v != "" {
		// OpenBLAS reads it when it loads, in place of its own detection.
		r.CoreSource = "OPENBLAS_CORETYPE=" + v
		if from := os.Getenv(envRestarted); from != "" {
			r.CoreSource = "kdual restart from " + from
		}
	}
	h := bigmem.Huge()
	r.HugePages = hugeInfo{Advise: h.Advise, System: h.System}
	sp := native.Spin()
	r.BLASSpin = spinInfo{Exponent: sp.Exponent, Source: spinSource}
	if *jsonOut != "" {
		return writeJSON(*jsonOut, stdout, r)
	}
	core := r.Core + " (OpenBLAS's choice for this processor)"
	switch {
	case strings.HasPrefix(r.CoreSource, "kdual restart from "):
		core = fmt.Sprintf("%s (kdual restarted with OPENBLAS_CORETYPE=%s: OpenBLAS had chosen its generic %s kernels)",
			r.Core, r.Core, strings.TrimPrefix(r.CoreSource, "kdual restart from "))
	case r.CoreSource != "openblas":
		core = r.Core + " (set by the environment: " + r.CoreSource + ")"
	}
	if r.CoreCheck.Generic && r.CoreCheck.Want != "" {
		core += "; warning: " + r.CoreCheck.Why
	}
	fmt.Fprintf(stdout, "OpenBLAS:   %s\ncore:       %s\nthreads:    %d (%s)\nGo:         %s (GOMAXPROCS %d, %d CPUs)\n",
		r.OpenBLAS, core, r.Threads, r.Parallel, r.Go, r.GOMAXPROCS, r.CPUs)
	fmt.Fprintf(stdout, "processor:  %s\n", cpuWords(r.CPU))
	fmt.Fprintln(stdout, spinLine(sp.Exponent, spinSource))
	fmt.Fprintf(stdout, "kernels:    %s\n", r.Kernels)
	fmt.Fprintf(stdout, "paths:      %s\n", p.Source)
	for _, why := range p.Reasons {
		fmt.Fprintf(stdout, "  %-11s %s — %s\n", why.Path+":", why.Choice, why.Why)
	}
	return nil
}

func cpuWords(c native.CPUFeatures) string {
	var f []string
	for _, x := range []struct {
		on   bool
		name string
	}{{c.AVX2, "AVX2+FMA"}, {c.AVX512F, "AVX-512 F"}, {c.AVX512VL, "VL"}, {c.AVX512BW, "BW"}, {c.AVX512DQ, "DQ"},
		{c.AVX512BF16, "BF16"}, {c.VNNI, "VNNI"}} {
		if x.on {
			f = append(f, x.name)
		}
	}
	if len(f) == 0 {
		f = append(f, "no AVX2")
	}
	return c.Vendor + ", " + strings.Join(f, " ")
}

// spinLine is kdual info's line on OpenBLAS's thread timeout 2^t cycles
// (t < 0: the linked OpenBLAS does not say — a build without the
// thread-server entry points, OpenBLAS linked statically say — and kdual
// cannot set it) set by source.
func spinLine(t int, source string) string {
	if t < 0 {
		return "BLAS spin:  unknown: this OpenBLAS does not report its thread timeout, and kdual cannot set it (OpenBLAS's default is 2^28 cycles)"
	}
	return fmt.Sprintf("BLAS spin:  idle OpenBLAS threads spin 2^%d cycles, then sleep (%s)", t, spinWords(source))
}

func spinWords(s string) string {
	switch s {
	case "kdual":
		return "kdual's default; OPENBLAS_THREAD_TIMEOUT overrides"
	case "environment":
		return "OPENBLAS_THREAD_TIMEOUT"
	case "openblas":
		return "OpenBLAS's default"
	}
	return s
}
