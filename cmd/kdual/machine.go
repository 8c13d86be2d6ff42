package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	"github.com/kdual/kdual/gram"
	kdlapack "github.com/kdual/kdual/lapack/gonum"
	"github.com/kdual/kdual/native"
	"github.com/kdual/kdual/paths"
)

// The environment variables the kdual command reads (the library reads
// none): they are mapped here onto explicit library calls.
const (
	// envGram, envAVX512, envHuge override code paths (paths.Override):
	// KDUAL_GRAM=inner=blas|native,map=go|native,symm=…,syrk=…,gemm=…,single=…,grid=…,int8=…,
	// KDUAL_AVX512=on|off, KDUAL_HUGEPAGES=on|off.
	envGram   = "KDUAL_GRAM"
	envAVX512 = "KDUAL_AVX512"
	envHuge   = "KDUAL_HUGEPAGES"
	// envRestarted is set by the core restart (the core OpenBLAS had
	// chosen), so the restarted process knows and never restarts again.
	envRestarted = "KDUAL_CORE_RESTARTED"
	// envFakeCore makes the core check read this name instead of
	// OpenBLAS's choice: the only way to test the restart on a machine
	// whose OpenBLAS knows its processor. For tests.
	envFakeCore = "KDUAL_TEST_OPENBLAS_CORE"
)

// coreFacts are the facts of this process as the command sees them: the
// library's, with whether the user chose OpenBLAS's core and, for tests,
// a faked core.
func coreFacts() paths.Facts {
	f := paths.Detect()
	f.CoreSetByUser = os.Getenv("OPENBLAS_CORETYPE") != ""
	if fake := os.Getenv(envFakeCore); fake != "" && !f.CoreSetByUser {
		f.Core = fake
	}
	return f
}

// restartForCore restarts the process once, before anything else runs
// (MPI included), with OPENBLAS_CORETYPE set to the core that matches the
// processor when OpenBLAS chose a generic one and the user did not choose
// (paths.CheckCore); it returns only when no restart is needed or the
// restart failed (then with a warning on stderr).
func restartForCore(stderr io.Writer) {
	if os.Getenv(envRestarted) != "" {
		return
	}
	c := paths.CheckCore(coreFacts())
	if !c.Restart {
		return
	}
	if !quietArgs(os.Args[1:]) {
		fmt.Fprintf(stderr, "kdual: OpenBLAS chose its generic %s kernels for this processor; restarting with OPENBLAS_CORETYPE=%s\n", c.Core, c.Want)
	}
	env := append(os.Environ(), "OPENBLAS_CORETYPE="+c.Want, envRestarted+"="+c.Core)
	exe, err := os.Executable()
	if err == nil {
		err = syscall.Exec(exe, os.Args, env)
	}
	fmt.Fprintf(stderr, "kdual: warning: the restart failed (%v); going on with %s\n", err, c.Core)
}

// spinSource says who set OpenBLAS's thread timeout, for kdual info.
var spinSource = "openblas"

// setupProcess makes the process-wide settings of the command, in this
// order: gonum's BLAS and LAPACK on OpenBLAS (lapack/gonum.Use: the
// command's own gonum calls run there); OpenBLAS's thread timeout
// (native.SpinDefault unless OPENBLAS_THREAD_TIMEOUT is given); the code
// paths of the rules with the environment's overrides.
func setupProcess() error {
	kdlapack.Use()
	if os.Getenv("OPENBLAS_THREAD_TIMEOUT") != "" {
		spinSource = "environment"
	} else if native.SpinSupported() {
		if err := os.Setenv("OPENBLAS_THREAD_TIMEOUT", fmt.Sprint(native.SpinDefault)); err != nil {
			return err
		}
		if err := native.ReloadThreads("kdual"); err != nil {
			return err
		}
		spinSource = "kdual"
	}
	return applyPaths(paths.Rules(coreFacts()))
}

// applyPaths puts p in force with the environment's overrides on top.
func applyPaths(p paths.Paths) error {
	spec := []string{}
	if v := os.Getenv(envGram); v != "" {
		spec = append(spec, v)
	}
	for _, e := range []struct{ name, key string }{{envAVX512, "avx512"}, {envHuge, "hugepages"}} {
		switch v := os.Getenv(e.name); v {
		case "":
		case "on", "off":
			spec = append(spec, e.key+"="+v)
		default:
			return fmt.Errorf("%s=%s: want on or off", e.name, v)
		}
	}
	if len(spec) > 0 {
		if err := p.Override(strings.Join(spec, ",")); err != nil {
			return fmt.Errorf("%s/%s/%s: %w", envGram, envAVX512, envHuge, err)
		}
	}
	return paths.Set(p)
}

// loadProfile reads a profile written by kdual tune and puts it in force
// (the environment's overrides still apply on top).
func loadProfile(file string) error {
	f, err := os.Open(file)
	if err != nil {
		return fmt.Errorf("--profile: %w", err)
	}
	defer f.Close()
	p, err := paths.Load(f)
	if err != nil {
		return fmt.Errorf("--profile %s: %w", file, err)
	}
	p.Source = "profile " + file
	p.Core = paths.CheckCore(coreFacts())
	return applyPaths(p)
}

// runTune times every code path's alternatives on this machine and writes
// the faster ones as a profile that later commands load with --profile.
func runTune(args []string, stdout io.Writer) error {
	fs := newFlags("tune")
	out := fs.String("out", "", "write the profile to FILE (JSON; load it with --profile FILE)")
	if err := parse(fs, args); err != nil {
		return err
	}
	p, _ := gram.Tune()
	p.Core = paths.CheckCore(coreFacts())
	for _, r := range p.Reasons {
		fmt.Fprintf(stdout, "%-11s %-40s %s\n", r.Path+":", r.Choice, r.Why)
	}
	if *out == "" {
		fmt.Fprintln(stdout, "(no --out FILE: nothing saved)")
		return nil
	}
	return atomicWrite(*out, func(w io.Writer) error { return p.Save(w) })
}

// atomicWrite writes a file through a temporary name in the same folder,
// renamed at the end, so that a failed or interrupted write leaves none.
func atomicWrite(path string, write func(w io.Writer) error) (err error) {
	f, err := os.CreateTemp(dirOf(path), ".kdual-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err = write(f); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

func dirOf(path string) string {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		if i == 0 {
			return "/"
		}
		return path[:i]
	}
	return "."
}

// quietArgs reports whether the command line asks for --quiet, help or
// the version (read before the flags are parsed: the restart notice is
// left out of those).
func quietArgs(args []string) bool {
	for _, a := range args {
		if a == "--" {
			break
		}
		switch a {
		case "--quiet", "-quiet", "--quiet=true", "-quiet=true", "-h", "--h", "-help", "--help", "help", "--version", "-version":
			return true
		}
	}
	return false
}
