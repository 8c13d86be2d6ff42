// Command kdual is the command-line face of the kdual library: kernel PCA
// and its relatives on OpenBLAS.
//
// Usage:
//
//	kdual info                  OpenBLAS build, core, threads, Go version, code paths
//	kdual tune --out FILE       time the code paths here; later commands load --profile FILE
//	kdual eig [flags]           a symmetric eigensolve, checked end to end
//	kdual bench kpca [flags]    KPCA solvers to accuracy η < δ (the paper's protocol)
//	kdual kpca fit|transform    kernel PCA on CSV or IDX data
//	kdual kpca robust|sparse    the dual-KPCA paper's Table 4 and Fig. 4 settings
//	kdual rkm forecast [flags]  multi-view RKM forecasting: sines, SantaFe, a file
//	kdual kmvda [flags]         (kernel) MvDA cross-view recognition; kmvda table
//	kdual ppca [flags]          dual probabilistic PCA: σ², reconstructions, samples
//
// Run "kdual COMMAND -h" for a command's flags. Errors go to standard error
// with exit status 1 (2 for usage errors).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kdual/kdual/native"
	"github.com/kdual/kdual/status"
)

type command struct {
	name, summary string
	run           func(args []string, stdout io.Writer) error
}

var commands = []command{
	{"info", "print the OpenBLAS build, core, threads, Go version and every code path's rule", runInfo},
	{"tune", "time the code paths' alternatives here and write a profile (--out FILE) for --profile", runTune},
	{"eig", "eigendecomposition of a built-in symmetric matrix, with residual checks", runEig},
	{"bench", "bench kpca: the dual-KPCA paper's training-time protocol", runBench},
	{"kpca", "kpca fit|transform|robust|sparse: kernel PCA and the paper's experiments", runKPCA},
	{"rkm", "rkm forecast: multi-view RKM time-series forecasting (primal/dual, eig/Stiefel)", runRKM},
	{"kmvda", "kernel multi-view discriminant analysis: cross-view recognition; kmvda table", runKMvDA},
	{"ppca", "probabilistic PCA in dual form: σ², MAP reconstructions, samples, image grids", runPPCA},
	{"data", "data augment: write a seeded 8-bit image set of any size (Fashion-MNIST and moved copies) as an IDX file", runData},
}

// errUsage marks errors that are the caller's wording, not a failure.
var errUsage = errors.New("usage")

func main() {
	// OpenBLAS's core is fixed when the library loads: a generic choice is
	// corrected by restarting before anything else (MPI included) runs.
	restartForCore(os.Stderr)
	if err := setupProcess(); err != nil {
		fmt.Fprintf(os.Stderr, "kdual: %v\n", err)
		os.Exit(2)
	}
	// The first Ctrl-C (or SIGTERM) cancels runCtx: long library calls stop
	// within a panel or a pass and the command exits 130 with a message; a
	// second one kills the process as usual. A command still running 3 s
	// later (a step that does not watch the context, such as one LAPACK
	// call) is ended the same way.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
		time.Sleep(3 * time.Second)
		fmt.Fprintln(os.Stderr, "\nkdual: interrupted; nothing written")
		os.Exit(exitStopped)
	}()
	runCtx = ctx
	if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		stderrIsTerminal = true
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// runCtx is the context of the command's long calls, cancelled by Ctrl-C
// in main.
var runCtx = context.Background()

// stderrIsTerminal turns on progress lines (see progressLine).
var stderrIsTerminal bool

// exitStopped is the exit status of a command stopped by Ctrl-C (128 +
// SIGINT, as shells report it).
const exitStopped = 130

// diag is where commands write notes for people (the planner's choice, a
// check's result): the stderr of run, or nothing with --quiet.
var diag io.Writer = os.Stderr

// errw is where errors go that are not returned by run (an MPI rank's,
// before it ends the job): the stderr of run, whatever --quiet says.
var errw io.Writer = os.Stderr

func run(args []string, stdout, stderr io.Writer) int {
	diag, errw = stderr, stderr
	if len(args) > 0 && (args[0] == "--version" || args[0] == "version") {
		fmt.Fprintln(stdout, version())
		return 0
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range commands {
		if c.name == args[0] {
			err := c.run(args[1:], stdout)
			switch {
			case err == nil:
				return 0
			case errors.Is(err, flag.ErrHelp):
				return 0
			case errors.Is(err, errUsage):
				fmt.Fprintf(stderr, "kdual %s: %s\n", c.name, errorText(err.Error()))
				return 2
			case errors.Is(err, status.ErrStopped) && runCtx.Err() != nil:
				detail := "interrupted"
				if st, ok := status.StatusOf(err); ok && st.Detail != "" {
					detail += ": " + st.Detail
				}
				fmt.Fprintf(stderr, "kdual %s: %s; nothing written\n", c.name, detail)
				return exitStopped
			}
			fmt.Fprintf(stderr, "kdual %s: %s\n", c.name, errorText(err.Error()))
			return 1
		}
	}
	fmt.Fprintf(stderr, "kdual: unknown command %q\n", args[0])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: kdual COMMAND [flags]")
	fmt.Fprintln(w, "commands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
}

// newFlags returns a flag set whose parse errors are usage errors, with
// the flags every command has: --threads N (OpenBLAS threads and Go's
// GOMAXPROCS; 0 keeps the defaults) and --quiet is added where a command
// shows progress.
func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("kdual "+name, flag.ContinueOnError)
	fs.SetOutput(diag) // run's stderr
	fs.Int("threads", 0, "threads for OpenBLAS and Go (0: OpenBLAS's default and every CPU)")
	fs.String("profile", "", "load the code paths from FILE, written by kdual tune (default: the written rules, kdual info)")
	return fs
}

// givenFlags returns the names of the flags given on the command line.
func givenFlags(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}

// parse parses args; a bare --json (last, or followed by another flag)
// means --json - (JSON on standard output).
func parse(fs *flag.FlagSet, args []string) error {
	args = append([]string(nil), args...)
	for i, a := range args {
		if (a == "--json" || a == "-json") && fs.Lookup("json") != nil {
			if i+1 == len(args) || (strings.HasPrefix(args[i+1], "-") && args[i+1] != "-") {
				args[i] = "--json=-"
			}
		}
	}
	// The flag package would print the error and every flag; kdual
	// prints the flags for -h only, and one line for a mistake.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.SetOutput(diag)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(diag, "Usage of %s:\n", fs.Name())
			fs.PrintDefaults()
			return err
		}
		msg := err.Error()
		if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
			msg = fmt.Sprintf("unknown flag --%s", name)
			if near := closestFlag(fs, name); near != "" {
				msg += fmt.Sprintf("; did you mean --%s?", near)
			}
		}
		return fmt.Errorf("%w: %s (%s -h lists the flags)", errUsage, msg, fs.Name())
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	if err := checkOutputs(fs); err != nil {
		return err
	}
	if f := fs.Lookup("profile"); f != nil && f.Value.String() != "" {
		if err := loadProfile(f.Value.String()); err != nil {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
	}
	if f := fs.Lookup("threads"); f != nil {
		n, _ := strconv.Atoi(f.Value.String())
		switch {
		case n < 0 || n > maxThreads:
			return usagef("--threads %d: want 1 to %d, or 0 for the defaults", n, maxThreads)
		case n > 0:
			if err := native.SetThreads(n); err != nil {
				return fmt.Errorf("%w: --threads: %v", errUsage, err)
			}
			runtime.GOMAXPROCS(n)
		}
	}
	return nil
}

// maxThreads bounds --threads: OpenBLAS's builds are compiled for at most a
// few hundred threads, and more than this oversubscribes any machine.
const maxThreads = 1024

// alias makes old a deprecated name of the flag name: it sets the same
// value and warns on stderr. Old names keep working for one release.
func alias(fs *flag.FlagSet, old, name string) {
	f := fs.Lookup(name)
	if f == nil {
		panic("kdual: alias of an unknown flag " + name)
	}
	fs.Var(&deprecated{Value: f.Value, old: old, name: name}, old, "deprecated name of --"+name)
}

type deprecated struct {
	flag.Value
	old, name string
}

func (d *deprecated) Set(s string) error {
	fmt.Fprintf(diag, "kdual: warning: --%s is deprecated and will be removed; use --%s\n", d.old, d.name)
	return d.Value.Set(s)
}

// String is the current value; flag's help output also calls it on a zero
// deprecated (no Value) to learn the default.
func (d *deprecated) String() string {
	if d == nil || d.Value == nil {
		return ""
	}
	return d.Value.String()
}

func (d *deprecated) IsBoolFlag() bool {
	b, ok := d.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// isHelp reports whether a is a request for help.
func isHelp(a string) bool { return a == "-h" || a == "--help" || a == "-help" || a == "help" }

func usagef(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errUsage}, args...)...)
}

// writeJSON writes v as indented JSON to path, or to stdout when path is "-".
func writeJSON(path string, stdout io.Writer, v any) (err error) {
	w := stdout
	if path != "-" {
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		defer func() {
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}()
		w = f
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // "n > 600" reads as written
	return enc.Encode(v)
}

// version is "kdual" with the module version and, for a build from a
// repository, its revision, and the Go version.
// release is the version in the repository's VERSION file, stamped by the
// Makefile (-ldflags -X main.release=…); a plain go build leaves it
// empty and the module's version stands in.
var release string

// commit is the repository's commit, stamped by the Makefile where the Go
// build records none (GOFLAGS=-buildvcs=false, or a tarball).
var commit string

// version is "kdual X.Y.Z", then the commit (+modified for a build from a
// changed tree) and the Go version.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "kdual " + release + " (unknown build)"
	}
	rel := release
	if rel == "" {
		rel = info.Main.Version
	}
	v := "kdual " + rel
	vcs := false
	for _, s := range info.Settings {
		vcs = vcs || s.Key == "vcs.revision"
	}
	if !vcs && commit != "" {
		v += " " + commit
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			v += " " + s.Value
		case "vcs.modified":
			if s.Value == "true" {
				v += "+modified"
			}
		}
	}
	return v + " " + info.GoVersion
}

// progressLine returns a function that keeps one line on stderr up to date
// with a long computation's progress ("kernel 43%", "solve: 120 passes"),
// or nil when stderr is not a terminal or quiet is set. Nothing is shown
// for the first two seconds, then at most five updates a second; done
// ends the line.
func progressLine(quiet bool) (update func(stage string, done, total int64), done func()) {
	if quiet || !stderrIsTerminal {
		return nil, func() {}
	}
	start, last, shown := time.Now(), time.Time{}, false
	update = func(stage string, d, total int64) {
		now := time.Now()
		if now.Sub(start) < 2*time.Second || now.Sub(last) < 200*time.Millisecond {
			return
		}
		last, shown = now, true
		if total > 0 {
			fmt.Fprintf(diag, "\rkdual: %s %3.0f%%   ", stage, 100*float64(d)/float64(total))
		} else {
			fmt.Fprintf(diag, "\rkdual: %s: %d   ", stage, d)
		}
	}
	return update, func() {
		if shown {
			fmt.Fprint(diag, "\r\033[K")
			shown = false
		}
	}
}

// closestFlag returns the flag of fs nearest to name by edit distance
// (at most a third of its length, and at least 1 edit), or "".
func closestFlag(fs *flag.FlagSet, name string) string {
	best, bestD := "", len(name)/3+1
	fs.VisitAll(func(f *flag.Flag) {
		if d := editDistance(name, f.Name); d < bestD || (d == bestD && best == "" && d <= 2) {
			best, bestD = f.Name, d
		}
	})
	return best
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// outputFlags are the flags that name a file (or, when their usage says
// "directory", a directory) a command writes.
var outputFlags = map[string]bool{"save": true, "json": true, "plot": true, "png": true, "out": true,
	"start-out": true, "data-out": true, "vectors-out": true}

// checkOutputs checks, before any work, that every output given can be
// written: it is not a directory (unless its usage says so), its directory
// exists and a probe file can be created there (and is removed).
func checkOutputs(fs *flag.FlagSet) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		path := f.Value.String()
		if err != nil || !outputFlags[f.Name] || path == "" || path == "-" {
			return
		}
		dir := filepath.Dir(path)
		if strings.Contains(f.Usage, "directory") {
			dir = path
		} else if st, serr := os.Stat(path); serr == nil && st.IsDir() {
			err = fmt.Errorf("%w: --%s %s: a directory; give a file name", errUsage, f.Name, path)
			return
		}
		if st, serr := os.Stat(dir); serr != nil || !st.IsDir() {
			err = fmt.Errorf("%w: --%s %s: the directory %s does not exist", errUsage, f.Name, path, dir)
			return
		}
		probe, perr := os.CreateTemp(dir, ".kdual-probe-*")
		if perr != nil {
			err = fmt.Errorf("%w: --%s %s: cannot write in %s: %v", errUsage, f.Name, path, dir, perr)
			return
		}
		probe.Close()
		os.Remove(probe.Name())
	})
	return err
}
