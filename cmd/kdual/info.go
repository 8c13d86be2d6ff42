package main

import (
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/kdual/kdual/internal/bigmem"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/native"
)

type infoReport struct {
	OpenBLAS string `json:"openblas"`
	Core     string `json:"core"`
	// CoreSource: who chose the core (OPENBLAS_CORETYPE or OpenBLAS's
	// detection).
	CoreSource string `json:"core_source"`
	Threads    int    `json:"threads"`
	Parallel   string `json:"parallel"`
	Go         string `json:"go"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	CPUs       int    `json:"cpus"`
	// HugePages: whether large buffers ask for transparent huge pages,
	// and the probe that decided it (bigmem.Huge).
	HugePages hugeInfo `json:"huge_pages"`
	// BLASSpin: how long OpenBLAS's idle threads spin (native.Spin).
	BLASSpin spinInfo `json:"blas_spin"`
	// Gram: the Gram engine's measured paths (linalg.Calibrate).
	Gram gramInfo `json:"gram"`
	// Kernels: the instruction set of kdual's native kernels and the
	// probe of their AVX-512 forms (native.WideKernels).
	Kernels kernelsInfo `json:"kernels"`
}

type kernelsInfo struct {
	ISA          string  `json:"isa"`
	AVX512       bool    `json:"avx512_supported"`
	Symm512      bool    `json:"avx512_float64_blocks"`
	Single512    bool    `json:"avx512_float32_blocks"`
	Symv512      bool    `json:"avx512_one_vector"`
	SymmAVX2s    float64 `json:"float64_blocks_avx2_seconds"`
	SymmAVX512s  float64 `json:"float64_blocks_avx512_seconds"`
	SingleAVX2s  float64 `json:"float32_blocks_avx2_seconds"`
	SingleAVX512 float64 `json:"float32_blocks_avx512_seconds"`
	SymvAVX2s    float64 `json:"one_vector_avx2_seconds"`
	SymvAVX512s  float64 `json:"one_vector_avx512_seconds"`
	Reason       string  `json:"reason"`
}

type gramInfo struct {
	Inner      string  `json:"inner"`
	Map        string  `json:"map"`
	Grid       bool    `json:"grid"`
	GridDgemm  float64 `json:"grid_dgemm_seconds"`
	GridSgemm  float64 `json:"grid_sgemm_seconds"`
	SymmNative bool    `json:"symm_native"`
	// SingleFaster: float32 tiles with float32 block arithmetic beat the
	// float64 block product (linalg.SingleBlocksFaster), with the times.
	SingleFaster bool    `json:"single_faster"`
	Symm64       float64 `json:"symm_float64_seconds"`
	SymmSingle   float64 `json:"symm_single_seconds"`
	// Int8: kernel rows of 8-bit data by exact integer products
	// (linalg GramOptions.Int8), with the probe's times.
	Int8       bool    `json:"int8"`
	Int8Secs   float64 `json:"int8_seconds"`
	Int8Sgemm  float64 `json:"int8_sgemm_seconds"`
	Int8Kernel bool    `json:"int8_vnni"`
	Source     string  `json:"source"`
}

type spinInfo struct {
	Exponent int    `json:"exponent"`
	Source   string `json:"source"`
}

type hugeInfo struct {
	Advise       bool    `json:"advise"`
	System       string  `json:"system"`
	HugeSeconds  float64 `json:"huge_seconds"`
	SmallSeconds float64 `json:"small_seconds"`
	Reason       string  `json:"reason"`
}

func runInfo(args []string, stdout io.Writer) error {
	fs := newFlags("info")
	jsonOut := fs.String("json", "", "write JSON to FILE, or - (or --json alone) for standard output")
	if err := parse(fs, args); err != nil {
		return err
	}
	r := infoReport{
		OpenBLAS: native.Config(), Core: native.CoreName(), Threads: native.Threads(),
		Parallel: native.Parallel(), Go: runtime.Version(), GOMAXPROCS: runtime.GOMAXPROCS(0),
		CPUs: runtime.NumCPU(), CoreSource: "openblas",
	}
	if v := os.Getenv("OPENBLAS_CORETYPE"); v != "" {
		// OpenBLAS reads it when it loads, in place of its own detection.
		r.CoreSource = "OPENBLAS_CORETYPE=" + v
	}
	h := bigmem.Huge()
	r.HugePages = hugeInfo{Advise: h.Advise, System: h.System, HugeSeconds: h.HugeSeconds, SmallSeconds: h.SmallSeconds, Reason: h.Reason}
	sp := native.Spin()
	r.BLASSpin = spinInfo{Exponent: sp.Exponent, Source: sp.Source}
	g := linalg.Calibrate()
	r.Gram = gramInfo{Inner: g.Inner.String(), Map: g.Map.String(), Grid: g.Grid, GridDgemm: g.GridDgemm,
		GridSgemm: g.GridSgemm, SymmNative: g.SymmNative, SingleFaster: g.SingleFaster, Symm64: g.Symm64,
		SymmSingle: g.SymmSingle, Int8: g.Int8, Int8Secs: g.Int8Seconds, Int8Sgemm: g.Int8Sgemm,
		Int8Kernel: native.HasInt8(), Source: g.Source}
	w := native.WideKernels()
	r.Kernels = kernelsInfo{ISA: native.ISA(), AVX512: w.Supported, Symm512: w.Symm, Single512: w.Single, Symv512: w.Symv,
		SymmAVX2s: w.Symm2, SymmAVX512s: w.Symm512, SingleAVX2s: w.Single2, SingleAVX512: w.Single512,
		SymvAVX2s: w.Symv2, SymvAVX512s: w.Symv512, Reason: w.Reason}
	if *jsonOut != "" {
		return writeJSON(*jsonOut, stdout, r)
	}
	core := r.Core + " (OpenBLAS's choice for this processor)"
	if r.CoreSource != "openblas" {
		core = r.Core + " (set by the environment: " + r.CoreSource + ")"
	}
	fmt.Fprintf(stdout, "OpenBLAS:   %s\ncore:       %s\nthreads:    %d (%s)\nGo:         %s (GOMAXPROCS %d, %d CPUs)\n",
		r.OpenBLAS, core, r.Threads, r.Parallel, r.Go, r.GOMAXPROCS, r.CPUs)
	advice := "not asked"
	if h.Advise {
		advice = "asked"
	}
	fmt.Fprintf(stdout, "huge pages: %s (%s", advice, h.Reason)
	if h.HugeSeconds > 0 {
		fmt.Fprintf(stdout, ": 16 MB in %.1f ms huge, %.1f ms in 4 KB pages", 1e3*h.HugeSeconds, 1e3*h.SmallSeconds)
	}
	fmt.Fprintln(stdout, ")")
	fmt.Fprintf(stdout, "BLAS spin:  idle OpenBLAS threads spin 2^%d cycles, then sleep (%s)\n", sp.Exponent, spinSource(sp.Source))
	grid := "float64 products"
	if g.Grid {
		grid = "exact float32 products"
	}
	symm := "dsymm"
	if g.SymmNative {
		symm = "native tiles"
	}
	single := "slower"
	if g.SingleFaster {
		single = "faster"
	}
	fmt.Fprintf(stdout, "Gram:       inner products %s, map %s, blocks %s (float32 tiles in float32 arithmetic %s: %.2f ms against %.2f ms); data on an integer grid: %s (dgemm %.2f ms, sgemm %.2f ms; %s)\n",
		g.Inner, g.Map, symm, single, 1e3*g.SymmSingle, 1e3*g.Symm64, grid, 1e3*g.GridDgemm, 1e3*g.GridSgemm, g.Source)
	switch {
	case !native.HasInt8():
		fmt.Fprintln(stdout, "8-bit data: float32 products (no AVX-512 VNNI for exact integer ones)")
	case g.Int8:
		fmt.Fprintf(stdout, "8-bit data: exact integer products for kernel rows (VNNI %.2f ms, sgemm and map %.2f ms; %s)\n",
			1e3*g.Int8Seconds, 1e3*g.Int8Sgemm, g.Source)
	default:
		fmt.Fprintf(stdout, "8-bit data: float32 products for kernel rows (VNNI %.2f ms, sgemm and map %.2f ms; %s)\n",
			1e3*g.Int8Seconds, 1e3*g.Int8Sgemm, g.Source)
	}
	fmt.Fprintf(stdout, "kernels:    %s (%s)\n", r.Kernels.ISA, w.Reason)
	return nil
}

func spinSource(s string) string {
	switch s {
	case "kdual":
		return "kdual's default; OPENBLAS_THREAD_TIMEOUT overrides"
	case "environment":
		return "OPENBLAS_THREAD_TIMEOUT"
	case "openblas":
		return "OpenBLAS's default: this build cannot change it"
	}
	return s
}
