package layers

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "github.com/kdual/kdual/"

// allowed lists, for each of kdual's packages (by path prefix: "models/"
// covers every model), the kdual packages it may import besides status and
// internal/… (which any package may import) — the layer table of
// docs/architecture.md, each layer importing only layers above it.
var allowed = []struct {
	pkg  string
	deps []string
}{
	{"native", nil},
	{"mpi", nil},
	{"status", nil},
	{"internal/", nil},
	{"paths", []string{"native"}},
	{"lapack", []string{"native"}},
	{"lapack/gonum", []string{"lapack"}},
	{"linalg", []string{"lapack", "native"}},
	{"gram", []string{"linalg", "native", "paths"}},
	{"kernel", []string{"gram", "linalg"}},
	{"eig", []string{"gram", "kernel", "linalg", "paths"}},
	{"eig/eigtest", []string{"eig"}},
	{"approx", []string{"gram", "kernel", "linalg"}},
	{"lbfgs", nil},
	{"stiefel", []string{"linalg"}},
	{"dataset", nil},
	{"dist", []string{"eig", "mpi", "gram", "kernel", "linalg"}},
	{"models/", []string{"approx", "eig", "gram", "kernel", "lapack", "linalg", "lbfgs", "stiefel", "dist", "mpi", "dataset"}},
	{"bench", []string{"*"}},
	{"cmd/", []string{"*"}},
	{"scripts/", []string{"*"}},
}

// rulesOf returns the rule of a package: the longest prefix match.
func rulesOf(pkg string) ([]string, bool) {
	best, found := -1, false
	var deps []string
	for _, r := range allowed {
		if (pkg == r.pkg || strings.HasPrefix(pkg, strings.TrimSuffix(r.pkg, "/")+"/") || (strings.HasSuffix(r.pkg, "/") && strings.HasPrefix(pkg, r.pkg))) && len(r.pkg) > best {
			best, deps, found = len(r.pkg), r.deps, true
		}
	}
	return deps, found
}

// Every package's imports (with and without the mpi build tag) follow
// the table; the kernel-data package's whole dependency set names neither
// eig, a model nor the CLI.
func TestLayers(t *testing.T) {
	for _, tags := range []string{"", "mpi"} {
		out, err := exec.Command("go", "list", "-tags", tags, "-f", "{{.ImportPath}}:{{join .Imports \" \"}}", module+"...").Output()
		require.NoError(t, err, "go list")
		n := 0
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			pkg, imports, _ := strings.Cut(line, ":")
			pkg = strings.TrimPrefix(pkg, module)
			deps, ok := rulesOf(pkg)
			require.True(t, ok, "package %s has no row in the layer table", pkg)
			n++
			for _, imp := range strings.Fields(imports) {
				if !strings.HasPrefix(imp, module) {
					continue
				}
				imp = strings.TrimPrefix(imp, module)
				if imp == "status" || strings.HasPrefix(imp, "internal/") || (len(deps) == 1 && deps[0] == "*") {
					continue
				}
				ok := false
				for _, d := range deps {
					ok = ok || imp == d
				}
				require.True(t, ok, "%s imports %s, which the layer table does not allow (tags %q)", pkg, imp, tags)
			}
		}
		require.Greater(t, n, 20, "go list saw too few packages")
	}
	out, err := exec.Command("go", "list", "-deps", module+"gram").Output()
	require.NoError(t, err)
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"eig", "models", "cmd", "kernel", "approx", "dist"} {
			require.False(t, dep == module+banned || strings.HasPrefix(dep, module+banned+"/"), "gram depends on %s", dep)
		}
	}
}
