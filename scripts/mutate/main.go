// Command mutate runs kdual's mutation test: every mutant in mutants.txt is
// a one-line change to a key formula; each is applied alone, the packages
// it names are tested, and the mutant is killed when a test fails (or does
// not build). The original file is restored after each run.
//
//	go run ./scripts/mutate [-list scripts/mutate/mutants.txt] [-only N] [-timeout 10m]
//
// mutants.txt has blocks separated by blank lines:
//
//	# name
//	file: path/to/file.go
//	old: exact text, once in the file
//	new: the replacement
//	test: ./pkg ./other/pkg
//
// It prints one line per mutant and the fraction killed.
//
// With -random N it instead draws N mutants at random from every
// arithmetic operator, comparison and numeric constant of -pkgs (random.go
// says how) and prints the mutation score per package.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

type mutant struct {
	name, file, old, new string
	tests                []string
}

func parse(path string) ([]mutant, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []mutant
	var cur mutant
	flush := func() error {
		if cur.name == "" {
			return nil
		}
		if cur.file == "" || cur.old == "" || len(cur.tests) == 0 {
			return fmt.Errorf("mutant %q: need file, old, new and test", cur.name)
		}
		out = append(out, cur)
		cur = mutant{}
		return nil
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.TrimSpace(line) == "":
			if err := flush(); err != nil {
				return nil, err
			}
		case strings.HasPrefix(line, "# "):
			cur.name = strings.TrimPrefix(line, "# ")
		case strings.HasPrefix(line, "file: "):
			cur.file = strings.TrimPrefix(line, "file: ")
		case strings.HasPrefix(line, "old: "):
			cur.old = strings.TrimPrefix(line, "old: ")
		case strings.HasPrefix(line, "new: "):
			cur.new = strings.TrimPrefix(line, "new: ")
		case strings.HasPrefix(line, "test: "):
			cur.tests = strings.Fields(strings.TrimPrefix(line, "test: "))
		default:
			return nil, fmt.Errorf("unexpected line %q", line)
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return out, sc.Err()
}

func run(m mutant, timeout time.Duration) (killed bool, why string, err error) {
	orig, err := os.ReadFile(m.file)
	if err != nil {
		return false, "", err
	}
	src := string(orig)
	if n := strings.Count(src, m.old); n != 1 {
		return false, "", fmt.Errorf("%s: the old text occurs %d times in %s", m.name, n, m.file)
	}
	if err := os.WriteFile(m.file, []byte(strings.Replace(src, m.old, m.new, 1)), 0o644); err != nil {
		return false, "", err
	}
	defer os.WriteFile(m.file, orig, 0o644)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	args := append([]string{"test", "-count=1", "-failfast"}, m.tests...)
	out, err := exec.CommandContext(ctx, "go", args...).CombinedOutput()
	if ctx.Err() != nil {
		return true, "timeout", nil
	}
	if err == nil {
		return false, "", nil
	}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "--- FAIL") || strings.Contains(l, "build failed") {
			return true, strings.TrimSpace(l), nil
		}
	}
	return true, "go test failed", nil
}

func main() {
	list := flag.String("list", "scripts/mutate/mutants.txt", "the mutant list")
	only := flag.String("only", "", "run only the mutants whose name contains this")
	timeout := flag.Duration("timeout", 10*time.Minute, "time limit per mutant")
	random := flag.Int("random", 0, "test this many randomly drawn mutants of -pkgs instead of the list")
	seed := flag.Uint64("seed", 1, "the random run's seed")
	pkgs := flag.String("pkgs", "./models/... ./approx/... ./eig ./lbfgs/... ./stiefel/... ./lapack/gonum/...", "the random run's packages")
	equivalents := flag.String("equivalents", "scripts/mutate/equivalent.txt", "the random run's equivalent mutants, each with its argument")
	companions := flag.String("companions", "lapack=./lapack/gonum bench=./cmd/kdual eig/eigtest=./eig",
		"the random run's companion test packages, DIR=PATTERN: a mutant of package DIR that its own tests leave alive is tested again with PATTERN's tests")
	flag.Parse()
	if *random > 0 {
		comp, err := parseCompanions(*companions)
		if err != nil {
			fmt.Fprintln(os.Stderr, "mutate:", err)
			os.Exit(2)
		}
		os.Exit(runRandom(strings.Fields(*pkgs), *random, *seed, *equivalents, comp))
	}
	ms, err := parse(*list)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mutate:", err)
		os.Exit(2)
	}
	killed, total := 0, 0
	var survivors []string
	for _, m := range ms {
		if *only != "" && !strings.Contains(m.name, *only) {
			continue
		}
		start := time.Now()
		k, why, err := run(m, *timeout)
		if err != nil {
			fmt.Fprintln(os.Stderr, "mutate:", err)
			os.Exit(2)
		}
		total++
		state := "SURVIVED"
		if k {
			killed++
			state = "killed  "
		} else {
			survivors = append(survivors, m.name)
		}
		fmt.Printf("%s %-58s %5.1fs %s\n", state, m.name, time.Since(start).Seconds(), why)
	}
	fmt.Printf("\n%d of %d mutants killed (%.0f%%)\n", killed, total, 100*float64(killed)/float64(max(total, 1)))
	for _, s := range survivors {
		fmt.Println("survivor:", s)
	}
}
