package main

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// parseCompanions reads the -companions flag: space-separated DIR=PATTERN
// pairs, DIR a package directory relative to the module root.
func parseCompanions(flagValue string) (map[string]string, error) {
	out := map[string]string{}
	for _, f := range strings.Fields(flagValue) {
		dir, pattern, ok := strings.Cut(f, "=")
		if !ok || dir == "" || pattern == "" {
			return nil, fmt.Errorf("-companions: %q is not DIR=PATTERN", f)
		}
		out[strings.TrimPrefix(dir, "./")] = pattern
	}
	return out, nil
}

// companion is a companion test package and its unmutated suite's time.
type companion struct {
	pattern string
	base    time.Duration
}

type verdict int

const (
	survived verdict = iota
	killed
	unbuildable
)

// runTests runs pkg's tests (only the named ones, when tests is not nil)
// once and says how it went.
func runTests(pkg string, tests []string, limit time.Duration) (verdict, string, time.Duration) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	args := []string{"test", "-count=1", "-failfast", "-vet=off"}
	if tests != nil {
		args = append(args, "-run", "^("+strings.Join(tests, "|")+")$")
	}
	cmd := exec.CommandContext(ctx, "go", append(args, pkg)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	if ctx.Err() != nil {
		return killed, "timeout", took
	}
	if err == nil {
		return survived, "", took
	}
	text := string(out)
	if strings.Contains(text, "[build failed]") || strings.Contains(text, "[setup failed]") {
		return unbuildable, "", took
	}
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "--- FAIL") || strings.HasPrefix(l, "panic:") {
			return killed, strings.TrimSpace(l), took
		}
	}
	return killed, "go test failed", took
}
