package main

import (
	"go/ast"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every numeric literal has the rewrite the package comment documents:
// integer 1 → 0, any other integer k → k+1 (in decimal, whatever base it
// was written in), float 1 and 2 → 0, any other float → 1; strings and
// characters have none.
func TestConstantRewrites(t *testing.T) {
	for _, c := range []struct {
		kind      token.Token
		lit, want string
	}{
		{token.INT, "1", "0"}, {token.INT, "0", "1"}, {token.INT, "7", "8"}, {token.INT, "0x10", "17"},
		{token.INT, "1_000", "1001"}, {token.INT, "0b11", "4"}, {token.INT, "-1", "0"},
		{token.FLOAT, "1.0", "0.0"}, {token.FLOAT, "2.", "0.0"}, {token.FLOAT, "2e0", "0.0"},
		{token.FLOAT, "0.5", "1.0"}, {token.FLOAT, "1e-9", "1.0"}, {token.FLOAT, "0x1p-53", "1.0"},
		{token.STRING, `"1"`, ""}, {token.CHAR, "'1'", ""}, {token.IMAG, "1i", ""},
	} {
		require.Equal(t, c.want, constant(&ast.BasicLit{Kind: c.kind, Value: c.lit}), c.lit)
	}
}

const sample = `package p

import "fmt"

const limit = 3

type T struct{ v int }

func (t *T) M(a, b int) (int, error) {
	if a < limit {
		return a + b, fmt.Errorf("a = %d", a-1)
	}
	return a * b, nil
}

func f(x float64) (float64, bool) {
	if x == 2.5 {
		return x - 1, false
	}
	return x + 1 + x, true
}
`

// sampleSites writes sample into a module-like directory and lists its
// sites, keyed by their stable names.
func sampleSites(t *testing.T) map[string]site {
	t.Helper()
	root := t.TempDir()
	file := filepath.Join(root, "p", "p.go")
	require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
	require.NoError(t, os.WriteFile(file, []byte(sample), 0o644))
	ss, err := sites("example.com/p", root, file)
	require.NoError(t, err)
	out := map[string]site{}
	for _, s := range ss {
		_, dup := out[s.stable]
		require.False(t, dup, "two sites named %s", s.stable)
		out[s.stable] = s
		require.Equal(t, s.old, sample[s.off:s.end], "the byte range of %s", s.stable)
		require.Equal(t, "p/p.go", s.file)
	}
	return out
}

// The sites of a file: every operator and literal outside imports and
// outside the other results of a return whose last result is an error
// built there or the comma-ok false; named by file, function (methods by
// receiver) and the count of like sites before them in that function.
func TestSitesOfAFile(t *testing.T) {
	ss := sampleSites(t)
	want := []string{
		"p/p.go:(package)#0:3→4",
		"p/p.go:T.M#0:<→<=",
		"p/p.go:T.M#0:-→+", // inside Errorf's arguments: still a site
		"p/p.go:T.M#0:1→0",
		"p/p.go:T.M#0:*→/", // the last return ends in nil: not skipped
		"p/p.go:f#0:==→!=",
		"p/p.go:f#0:2.5→1.0",
		"p/p.go:f#0:+→-",
		"p/p.go:f#1:+→-",
		"p/p.go:f#0:1→0",
	}
	var got []string
	for k := range ss {
		got = append(got, k)
	}
	require.ElementsMatch(t, want, got)
	// Skipped: a + b before fmt.Errorf, x - 1 and its 1 before false.
	for k := range ss {
		require.False(t, strings.Contains(k, "T.M") && strings.Contains(k, ":+→-"), k)
	}
	pkgSite := ss["p/p.go:(package)#0:3→4"]
	require.False(t, pkgSite.inBody)
	require.Equal(t, 5, pkgSite.line)
	lt := ss["p/p.go:T.M#0:<→<="]
	require.True(t, lt.inBody)
	require.Equal(t, [2]int{9, 14}, [2]int{lt.body0, lt.body1})
	require.Equal(t, [2]int{10, 7}, [2]int{lt.line, lt.col})
	require.Equal(t, "p/p.go:10:7:<→<=", lt.key())
	// The two + of one line are two sites.
	require.NotEqual(t, ss["p/p.go:f#0:+→-"].off, ss["p/p.go:f#1:+→-"].off)
}

// A coverage block holds the sites from its start (inclusive) to its end
// (exclusive), in the file it names (a path ending in the site's).
func TestBlockHolds(t *testing.T) {
	b := block{file: "github.com/x/y/p/p.go", line0: 10, col0: 5, line1: 12, col1: 3}
	at := func(file string, line, col int) site { return site{file: file, line: line, col: col} }
	for _, c := range []struct {
		s    site
		want bool
	}{
		{at("p/p.go", 10, 5), true}, {at("p/p.go", 10, 4), false}, {at("p/p.go", 9, 80), false},
		{at("p/p.go", 11, 1), true}, {at("p/p.go", 12, 2), true}, {at("p/p.go", 12, 3), false},
		{at("p/p.go", 13, 1), false}, {at("q/p.go", 11, 1), false}, {at("pp.go", 11, 1), false},
		{at("p/p.go", 10, 90), true},
	} {
		require.Equal(t, c.want, b.holds(c.s), "%s %d:%d", c.s.file, c.s.line, c.s.col)
	}
}

// The tests run on a mutant: all of them outside function bodies; those
// that execute a block holding the site; else those that execute any
// block of the site's function; none when no test executes it.
func TestTestsFor(t *testing.T) {
	f := "mod/p/p.go"
	c := &coverage{tests: []string{"TestA", "TestB", "TestC"}, blocks: map[block][]string{
		{file: f, line0: 3, col0: 2, line1: 5, col1: 1}:   {"TestB", "TestA"},
		{file: f, line0: 6, col0: 2, line1: 8, col1: 1}:   {"TestC"},
		{file: f, line0: 20, col0: 2, line1: 22, col1: 1}: nil,
	}}
	in := func(line, col, body0, body1 int) site {
		return site{file: "p/p.go", line: line, col: col, inBody: true, body0: body0, body1: body1}
	}
	require.Equal(t, c.tests, c.testsFor(site{file: "p/p.go", line: 1}))
	require.Equal(t, []string{"TestA", "TestB"}, c.testsFor(in(4, 1, 2, 9)))
	require.Equal(t, []string{"TestC"}, c.testsFor(in(7, 9, 2, 9)))
	// Between blocks (a case expression): every test of the function.
	require.Equal(t, []string{"TestA", "TestB", "TestC"}, c.testsFor(in(5, 5, 2, 9)))
	require.Empty(t, c.testsFor(in(21, 1, 19, 23)))
}

// The equivalents file: blank lines and comments skipped, each other line
// a key, a tab and a non-empty argument; a missing file is an empty list.
func TestReadEquivalents(t *testing.T) {
	dir := t.TempDir()
	eq, err := readEquivalents(filepath.Join(dir, "none.txt"))
	require.NoError(t, err)
	require.Empty(t, eq)
	good := filepath.Join(dir, "good.txt")
	require.NoError(t, os.WriteFile(good, []byte("# header\n\na.go:f#0:+→-\tsame sum\nb.go:g#1:1→0\tunused\n"), 0o644))
	eq, err = readEquivalents(good)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"a.go:f#0:+→-": "same sum", "b.go:g#1:1→0": "unused"}, eq)
	for _, bad := range []string{"a.go:f#0:+→- no tab\n", "a.go:f#0:+→-\t  \n"} {
		p := filepath.Join(dir, "bad.txt")
		require.NoError(t, os.WriteFile(p, []byte(bad), 0o644))
		_, err := readEquivalents(p)
		require.Error(t, err, bad)
	}
	// The project's own file parses, every entry a stable name.
	eq, err = readEquivalents("equivalent.txt")
	require.NoError(t, err)
	require.NotEmpty(t, eq)
	for k := range eq {
		require.Regexp(t, `^[a-z0-9_/]+\.go:[^:#]+#[0-9]+:[^→]+→[^→]+$`, k)
	}
}

func TestParseCompanions(t *testing.T) {
	c, err := parseCompanions(" ./lapack=./lapack/gonum  bench=./cmd/kdual ")
	require.NoError(t, err)
	require.Equal(t, map[string]string{"lapack": "./lapack/gonum", "bench": "./cmd/kdual"}, c)
	c, err = parseCompanions("")
	require.NoError(t, err)
	require.Empty(t, c)
	for _, bad := range []string{"lapack", "=./x", "lapack="} {
		_, err := parseCompanions(bad)
		require.Error(t, err, bad)
	}
}

// The fixed mutants' file: blocks of name, file, old, new and test; the
// project's list parses, each mutant's old text once in its file.
func TestParseMutants(t *testing.T) {
	ms, err := parse("mutants.txt")
	require.NoError(t, err)
	require.NotEmpty(t, ms)
	for _, m := range ms {
		require.NotEmpty(t, m.tests, m.name)
		src, err := os.ReadFile(filepath.Join("..", "..", m.file))
		require.NoError(t, err, m.name)
		require.Equal(t, 1, strings.Count(string(src), m.old), "%s: old text once in %s", m.name, m.file)
	}
	dir := t.TempDir()
	for _, bad := range []string{
		"# a\nfile: x.go\nold: a\nnew: b\n",         // no test
		"# a\nold: a\nnew: b\ntest: ./x\n",          // no file
		"# a\nfile: x.go\nnew: b\ntest: ./x\n",      // no old
		"# a\nfile: x.go\nold: a\nsomething else\n", // an unknown line
	} {
		p := filepath.Join(dir, "m.txt")
		require.NoError(t, os.WriteFile(p, []byte(bad), 0o644))
		_, err := parse(p)
		require.Error(t, err, bad)
	}
	p := filepath.Join(dir, "m.txt")
	require.NoError(t, os.WriteFile(p, []byte("# a\nfile: x.go\nold: a\nnew: b\ntest: ./x ./y\n\n# b\nfile: y.go\nold: c\nnew: \ntest: ./y\n"), 0o644))
	ms, err = parse(p)
	require.NoError(t, err)
	require.Equal(t, []mutant{
		{name: "a", file: "x.go", old: "a", new: "b", tests: []string{"./x", "./y"}},
		{name: "b", file: "y.go", old: "c", new: "", tests: []string{"./y"}},
	}, ms)
}

// Every equivalent mutant named in the project's file is a site of the code
// as it is: an entry whose site has gone (its function renamed or
// rewritten) carries an argument about code that no longer exists.
func TestEquivalentsNameSites(t *testing.T) {
	eq, err := readEquivalents("equivalent.txt")
	require.NoError(t, err)
	t.Chdir(filepath.Join("..", ".."))
	all, err := allSites([]string{"./..."})
	require.NoError(t, err)
	names := map[string]bool{}
	for _, s := range all {
		names[s.stable] = true
	}
	var stale []string
	for k := range eq {
		if !names[k] {
			stale = append(stale, k)
		}
	}
	sort.Strings(stale)
	require.Empty(t, stale, "equivalents naming no site of the code")
}

// The report: each package's killed share of its non-equivalent mutants,
// the total, the equivalents' share of the sample, and the survivors.
func TestReport(t *testing.T) {
	var b strings.Builder
	per := map[string]*tally{"b": {killed: 3, survived: 1}, "a": {equivalent: 2}}
	report(&b, per, 6, []string{"x.go:1:2:+→-  x.go:f#0:+→-"})
	out := b.String()
	require.Contains(t, out, "a                                        killed   0  survived   0  equivalent  2  score   0.0%")
	require.Contains(t, out, "b                                        killed   3  survived   1  equivalent  0  score  75.0%")
	require.Less(t, strings.Index(out, "\na "), strings.Index(out, "\nb "), "packages in order")
	require.Contains(t, out, "mutation score: 3 killed of 4 (75.0%), 2 equivalent excluded (33.3% of the sample)")
	require.True(t, strings.HasSuffix(out, "survivor: x.go:1:2:+→-  x.go:f#0:+→-\n"))
}

// A tested mutant is killed when its tests failed (listed as equivalent or
// not), equivalent when it survived and the file argues it, else survived.
func TestTallyCount(t *testing.T) {
	var tl tally
	require.Equal(t, stateKilled, tl.count(killed, false))
	require.Equal(t, stateKilled, tl.count(killed, true))
	require.Equal(t, stateEquivalent, tl.count(survived, true))
	require.Equal(t, stateSurvived, tl.count(survived, false))
	require.Equal(t, tally{killed: 2, survived: 1, equivalent: 1}, tl)
}

// testMutant on a module of its own: a mutant the package's test sees is
// killed, one no test sees survives, and either way the file is given
// back as it was, the mutated text having been written for the run.
func TestTestMutantRestores(t *testing.T) {
	dir := t.TempDir()
	src := "package p\n\nfunc F() int { return 41 }\n\nfunc G() int { return 7 }\n"
	files := map[string]string{
		"go.mod":    "module example.com/p\n\ngo 1.21\n",
		"p.go":      src,
		"p_test.go": "package p\n\nimport \"testing\"\n\nfunc TestF(t *testing.T) {\n\tif F() != 41 {\n\t\tt.Fatal(F())\n\t}\n}\n",
	}
	for name, text := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	t.Chdir(dir)
	c := &coverage{tests: []string{"TestF"}}
	for _, m := range []struct {
		lit  string
		want verdict
	}{{"41", killed}, {"7", survived}} {
		off := strings.Index(src, m.lit)
		s := site{pkg: ".", file: "p.go", off: off, end: off + len(m.lit), old: m.lit, new: m.lit + "0"}
		var seen []byte
		v, _, _, err := testMutant(s, c, nil, func(path string, orig []byte) { seen = append([]byte(nil), orig...) })
		require.NoError(t, err)
		require.Equal(t, m.want, v, "mutant of %s", m.lit)
		require.Equal(t, src, string(seen), "the original handed to the callback")
		got, err := os.ReadFile(filepath.Join(dir, "p.go"))
		require.NoError(t, err)
		require.Equal(t, src, string(got), "p.go restored after the mutant of %s", m.lit)
	}
}
