package main

import (
	"fmt"
	"io"
	"runtime"

	"github.com/kdual/kdual/native"
)

type infoReport struct {
	OpenBLAS   string `json:"openblas"`
	Core       string `json:"core"`
	Threads    int    `json:"threads"`
	Parallel   string `json:"parallel"`
	Go         string `json:"go"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	CPUs       int    `json:"cpus"`
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
		CPUs: runtime.NumCPU(),
	}
	if *jsonOut != "" {
		return writeJSON(*jsonOut, stdout, r)
	}
	fmt.Fprintf(stdout, "OpenBLAS:   %s\ncore:       %s\nthreads:    %d (%s)\nGo:         %s (GOMAXPROCS %d, %d CPUs)\n",
		r.OpenBLAS, r.Core, r.Threads, r.Parallel, r.Go, r.GOMAXPROCS, r.CPUs)
	return nil
}
