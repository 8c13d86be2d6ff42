package main

// The random mutation run: every arithmetic operator, comparison and
// numeric constant in the compiled Go files of the named packages is a
// mutation site; a seeded hash of each site's stable name orders them, and the first N that
// compile are tested, each alone, against its own package's tests.
//
// The rewrites (one per site):
//
//	+ ↔ -   * ↔ /   % → *   += ↔ -=   *= ↔ /=
//	< → <=  <= → <  > → >=  >= → >    == ↔ !=
//	integer k: 1 → 0, otherwise k+1
//	float x: 1 and 2 → 0, otherwise → 1
//
// Not mutated: the other results of a return statement whose last result
// is built there — a call such as fmt.Errorf(…) or a &SomeError{…} — which
// in this code is always an error on a failure path, or a sentinel error
// (ErrNotFitted, …), or false (the comma-ok idiom): by Go's convention
// callers do not read the other results, so every such mutant would be
// equivalent.
//
// A mutant that does not compile is not counted and the next site in the
// shuffle takes its place. Before the first mutant of a package, each of its
// tests (and examples) is run alone on the unmutated code with coverage, to
// learn which tests execute which statements; a mutant is then tested with
// the tests that execute its statement (all of the package's for a site
// outside any function body), and a mutant no test executes survives
// without a run ("not covered"). A mutant is killed when those tests fail or
// run past the time limit (twice the unmutated package's time plus 30 s); it
// survives when they pass — unless its package has a companion (code
// whose tests live in another package: the LAPACK wrappers' in the gonum
// adapter's suite, the benchmarks' in the command's), whose whole suite
// then runs with the mutant in place and kills it when it fails (or runs
// past twice its unmutated time plus 30 s). Mutants listed in the
// equivalents file (one per line: the mutant's stable name, a tab, the
// one-line argument) are reported but not counted. A mutant's stable name (file:function#k:old→new, k the
// like sites before it in that function) keys both the sample order (a
// seeded hash, so edits elsewhere leave the sample alone) and the
// equivalents file.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"hash/fnv"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type site struct {
	pkg, file string // import path; file path relative to the module root
	line, col int
	off, end  int // byte range replaced
	old, new  string
	inBody    bool // inside a function body
	// The function body's first and last line.
	body0, body1 int
	// stable names the site independently of lines elsewhere: the file,
	// the enclosing function and the count of like sites (same rewrite)
	// before it in that function.
	stable string
}

func (s site) key() string {
	return fmt.Sprintf("%s:%d:%d:%s→%s", s.file, s.line, s.col, s.old, s.new)
}

var swaps = map[token.Token]token.Token{
	token.ADD: token.SUB, token.SUB: token.ADD, token.MUL: token.QUO, token.QUO: token.MUL,
	token.REM: token.MUL, token.ADD_ASSIGN: token.SUB_ASSIGN, token.SUB_ASSIGN: token.ADD_ASSIGN,
	token.MUL_ASSIGN: token.QUO_ASSIGN, token.QUO_ASSIGN: token.MUL_ASSIGN,
	token.LSS: token.LEQ, token.LEQ: token.LSS, token.GTR: token.GEQ, token.GEQ: token.GTR,
	token.EQL: token.NEQ, token.NEQ: token.EQL,
}

// constant returns the rewrite of a numeric literal ("" for none).
func constant(lit *ast.BasicLit) string {
	switch lit.Kind {
	case token.INT:
		k, err := strconv.ParseInt(strings.ReplaceAll(lit.Value, "_", ""), 0, 64)
		if err != nil {
			return ""
		}
		if k == 1 {
			return "0"
		}
		return strconv.FormatInt(k+1, 10)
	case token.FLOAT:
		x, err := strconv.ParseFloat(strings.ReplaceAll(lit.Value, "_", ""), 64)
		if err != nil {
			return ""
		}
		if x == 1 || x == 2 {
			return "0.0"
		}
		return "1.0"
	}
	return ""
}

// sites lists every mutation site of one file.
func sites(pkg, root, file string) ([]site, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	rel, _ := filepath.Rel(root, file)
	var out []site
	var bodies, skip [][2]token.Pos
	var funcs []struct {
		name     string
		from, to token.Pos
	}
	seen := map[string]int{}
	add := func(pos token.Pos, old, new string) {
		for _, r := range skip {
			if pos >= r[0] && pos < r[1] {
				return
			}
		}
		p := fset.Position(pos)
		st := site{pkg: pkg, file: rel, line: p.Line, col: p.Column, off: p.Offset, end: p.Offset + len(old), old: old, new: new}
		for _, b := range bodies {
			if pos >= b[0] && pos < b[1] {
				st.inBody, st.body0, st.body1 = true, fset.Position(b[0]).Line, fset.Position(b[1]).Line
			}
		}
		fn := "(package)"
		for _, f := range funcs {
			if pos >= f.from && pos < f.to {
				fn = f.name
			}
		}
		like := rel + ":" + fn + ":" + old + "→" + new
		st.stable = fmt.Sprintf("%s:%s#%d:%s→%s", rel, fn, seen[like], old, new)
		seen[like]++
		out = append(out, st)
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			if n.Body != nil {
				bodies = append(bodies, [2]token.Pos{n.Body.Pos(), n.Body.End()})
			}
			name := n.Name.Name
			if n.Recv != nil && len(n.Recv.List) == 1 {
				t := n.Recv.List[0].Type
				if st, ok := t.(*ast.StarExpr); ok {
					t = st.X
				}
				if id, ok := t.(*ast.Ident); ok {
					name = id.Name + "." + name
				}
			}
			funcs = append(funcs, struct {
				name     string
				from, to token.Pos
			}{name, n.Pos(), n.End()})
		case *ast.ReturnStmt:
			// return v₁, …, fmt.Errorf(…) (or &SomeError{…}): by Go's
			// convention callers do not read the other results.
			// Likewise v, false (the comma-ok idiom).
			if k := len(n.Results); k >= 2 {
				last := n.Results[k-1]
				id, isIdent := last.(*ast.Ident)
				_, isCall := last.(*ast.CallExpr)
				_, isUnary := last.(*ast.UnaryExpr)
				_, isLit := last.(*ast.CompositeLit)
				sentinel := isIdent && strings.HasPrefix(id.Name, "Err") // ErrNotFitted, …
				if isCall || isUnary || isLit || sentinel || isIdent && id.Name == "false" {
					for _, r := range n.Results[:k-1] {
						skip = append(skip, [2]token.Pos{r.Pos(), r.End()})
					}
				}
			}
		case *ast.GenDecl:
			// Imports carry no arithmetic; build constraints and
			// cgo preambles are comments.
			return n.Tok != token.IMPORT
		case *ast.BinaryExpr:
			if to, ok := swaps[n.Op]; ok {
				add(n.OpPos, n.Op.String(), to.String())
			}
		case *ast.AssignStmt:
			if to, ok := swaps[n.Tok]; ok {
				add(n.TokPos, n.Tok.String(), to.String())
			}
		case *ast.BasicLit:
			if to := constant(n); to != "" {
				add(n.ValuePos, n.Value, to)
			}
		}
		return true
	})
	return out, nil
}

// block is one statement block of a coverage profile.
type block struct {
	file                     string
	line0, col0, line1, col1 int
}

func (b block) holds(s site) bool {
	if !strings.HasSuffix(b.file, "/"+s.file) {
		return false
	}
	after := s.line > b.line0 || s.line == b.line0 && s.col >= b.col0
	before := s.line < b.line1 || s.line == b.line1 && s.col < b.col1
	return after && before
}

// coverage is which tests of one package execute which blocks.
type coverage struct {
	base   time.Duration // the whole package's tests, unmutated
	tests  []string
	blocks map[block][]string // the tests executing each block
}

// measure runs pkg's tests once as a whole (its time), then each test
// alone with a coverage profile.
func measure(pkg string) (*coverage, error) {
	v, why, took := runTests(pkg, nil, time.Hour)
	if v != survived {
		return nil, fmt.Errorf("%s fails without a mutant: %s", pkg, why)
	}
	dir, err := os.MkdirTemp("", "mutate")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "pkg.test")
	if out, err := exec.Command("go", "test", "-c", "-cover", "-covermode=set", "-o", bin, pkg).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%s: %v\n%s", pkg, err, out)
	}
	if _, err := os.Stat(bin); err != nil {
		// No test files: go test -c writes no binary, and no test covers
		// any of the package's mutants.
		return &coverage{base: took, blocks: map[block][]string{}}, nil
	}
	pdir, err := exec.Command("go", "list", "-f", "{{.Dir}}", pkg).Output()
	if err != nil {
		return nil, err
	}
	list := exec.Command(bin, "-test.list", ".*")
	list.Dir = strings.TrimSpace(string(pdir))
	names, err := list.Output()
	if err != nil {
		return nil, fmt.Errorf("%s: listing tests: %v", pkg, err)
	}
	c := &coverage{base: took, blocks: map[block][]string{}}
	for _, name := range strings.Fields(string(names)) {
		if strings.HasPrefix(name, "Benchmark") {
			continue
		}
		c.tests = append(c.tests, name)
		prof := filepath.Join(dir, "cover.out")
		cmd := exec.Command(bin, "-test.run", "^"+name+"$", "-test.count=1", "-test.coverprofile", prof)
		cmd.Dir = list.Dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("%s: %s alone: %v\n%s", pkg, name, err, out)
		}
		text, err := os.ReadFile(prof)
		if err != nil {
			return nil, err
		}
		for _, l := range strings.Split(string(text), "\n")[1:] {
			var b block
			var stmts, count int
			colon := strings.LastIndex(l, ".go:")
			if colon < 0 {
				continue
			}
			b.file = l[:colon+3]
			if _, err := fmt.Sscanf(l[colon+4:], "%d.%d,%d.%d %d %d", &b.line0, &b.col0, &b.line1, &b.col1, &stmts, &count); err != nil {
				continue
			}
			if count == 0 {
				if _, ok := c.blocks[b]; !ok {
					c.blocks[b] = nil // a block no test has executed yet
				}
				continue
			}
			c.blocks[b] = append(c.blocks[b], name)
		}
	}
	return c, nil
}

// testsFor returns the tests that execute the site's statement (nil: none):
// all of the package's for a site outside any function body, and those
// that execute any statement of its function for a site outside every
// coverage block (a case expression, say).
func (c *coverage) testsFor(s site) []string {
	if !s.inBody {
		return c.tests
	}
	collect := func(in func(block) bool) []string {
		seen := map[string]bool{}
		var out []string
		for b, names := range c.blocks {
			if in(b) {
				for _, n := range names {
					if !seen[n] {
						seen[n] = true
						out = append(out, n)
					}
				}
			}
		}
		sort.Strings(out)
		return out
	}
	held := false
	for b := range c.blocks {
		held = held || b.holds(s)
	}
	if held {
		return collect(func(b block) bool { return b.holds(s) })
	}
	return collect(func(b block) bool {
		return strings.HasSuffix(b.file, "/"+s.file) && b.line0 >= s.body0 && b.line1 <= s.body1
	})
}

type listed struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	CgoFiles   []string
}

func allSites(patterns []string) ([]site, error) {
	root, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	out, err := exec.Command("go", append([]string{"list", "-json"}, patterns...)...).Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w", err)
	}
	var all []site
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p listed
		if err := dec.Decode(&p); err != nil {
			return nil, err
		}
		for _, name := range append(p.GoFiles, p.CgoFiles...) {
			s, err := sites(p.ImportPath, root, filepath.Join(p.Dir, name))
			if err != nil {
				return nil, err
			}
			all = append(all, s...)
		}
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].file != all[j].file {
			return all[i].file < all[j].file
		}
		return all[i].off < all[j].off
	})
	return all, nil
}

func readEquivalents(path string) (map[string]string, error) {
	eq := map[string]string{}
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return eq, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, why, ok := strings.Cut(line, "\t")
		if !ok || strings.TrimSpace(why) == "" {
			return nil, fmt.Errorf("%s: %q: want the mutant's key, a tab and the argument", path, line)
		}
		eq[key] = why
	}
	return eq, sc.Err()
}

// tally counts one package's mutants.
type tally struct{ killed, survived, equivalent int }

// The states a tested mutant is printed with.
const (
	stateKilled     = "killed    "
	stateEquivalent = "equivalent"
	stateSurvived   = "SURVIVED  "
)

// count adds a tested mutant to t — killed when its tests failed, else
// equivalent when the equivalents file argues it, else survived — and
// returns its state.
func (t *tally) count(v verdict, equivalent bool) string {
	switch {
	case v == killed:
		t.killed++
		return stateKilled
	case equivalent:
		t.equivalent++
		return stateEquivalent
	}
	t.survived++
	return stateSurvived
}

func runRandom(patterns []string, n int, seed uint64, eqPath string, companions map[string]string) int {
	all, err := allSites(patterns)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mutate:", err)
		return 2
	}
	eq, err := readEquivalents(eqPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mutate:", err)
		return 2
	}
	// The order: a seeded hash of each site's stable name, so that an edit
	// elsewhere does not reshuffle the sample.
	rank := func(st site) uint64 {
		h := fnv.New64a()
		fmt.Fprintf(h, "%d\x00%s", seed, st.stable)
		return h.Sum64()
	}
	sort.SliceStable(all, func(i, j int) bool { return rank(all[i]) < rank(all[j]) })
	fmt.Printf("%d mutation sites in %s; seed %d; testing the first %d that compile\n", len(all), strings.Join(patterns, " "), seed, n)

	// Restore the file being mutated on an interrupt.
	var current struct {
		path string
		orig []byte
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		if current.path != "" {
			os.WriteFile(current.path, current.orig, 0o644)
		}
		os.Exit(130)
	}()

	cov := map[string]*coverage{}
	comp := map[string]*companion{}
	per := map[string]*tally{}
	var survivors []string
	tested := 0
	for _, s := range all {
		if tested == n {
			break
		}
		if _, ok := cov[s.pkg]; !ok {
			c, err := measure(s.pkg)
			if err != nil {
				fmt.Fprintln(os.Stderr, "mutate:", err)
				return 2
			}
			cov[s.pkg] = c
			if pattern, ok := companions[filepath.Dir(s.file)]; ok {
				v, why, took := runTests(pattern, nil, time.Hour)
				if v != survived {
					fmt.Fprintf(os.Stderr, "mutate: companion %s of %s fails without a mutant: %s\n", pattern, s.pkg, why)
					return 2
				}
				comp[s.pkg] = &companion{pattern: pattern, base: took}
			}
		}
		v, why, took, err := testMutant(s, cov[s.pkg], comp[s.pkg], func(path string, orig []byte) { current.path, current.orig = path, orig })
		if err != nil {
			fmt.Fprintln(os.Stderr, "mutate:", err)
			return 2
		}
		current.path = ""
		if v == unbuildable {
			continue
		}
		tested++
		t := per[s.pkg]
		if t == nil {
			t = &tally{}
			per[s.pkg] = t
		}
		state := t.count(v, eq[s.stable] != "")
		switch state {
		case stateEquivalent:
			why = eq[s.stable]
		case stateSurvived:
			survivors = append(survivors, s.key()+"  "+s.stable)
		}
		fmt.Printf("%3d %s %-60s %5.1fs %s  [%s]\n", tested, state, s.key(), took.Seconds(), why, s.stable)
	}
	report(os.Stdout, per, tested, survivors)
	return 0
}

// testMutant applies the mutant of site s, runs the tests that execute it
// (c says which) and, where they leave it alive, the companion's suite
// (cp, nil for none), and restores the file; mutating is told the file and
// its original text while the mutant is in place (to restore it on an
// interrupt).
func testMutant(s site, c *coverage, cp *companion, mutating func(path string, orig []byte)) (verdict, string, time.Duration, error) {
	orig, err := os.ReadFile(s.file)
	if err != nil {
		return 0, "", 0, err
	}
	if string(orig[s.off:s.end]) != s.old {
		return 0, "", 0, fmt.Errorf("%s: the text moved", s.key())
	}
	mutated := append(append(append([]byte(nil), orig[:s.off]...), s.new...), orig[s.end:]...)
	mutating(s.file, orig)
	if err := os.WriteFile(s.file, mutated, 0o644); err != nil {
		return 0, "", 0, err
	}
	tests := c.testsFor(s)
	v, why, took := killed, "", time.Duration(0)
	if len(tests) == 0 {
		// Compiled but not executed by any test: it survives.
		v, why = survived, "not covered"
		if out, err := exec.Command("go", "test", "-count=1", "-vet=off", "-run", "^$", s.pkg).CombinedOutput(); err != nil &&
			(strings.Contains(string(out), "[build failed]") || strings.Contains(string(out), "[setup failed]")) {
			v = unbuildable
		}
	} else {
		v, why, took = runTests(s.pkg, tests, 2*c.base+30*time.Second)
	}
	if v == survived && cp != nil {
		cv, cwhy, ctook := runTests(cp.pattern, nil, 2*cp.base+30*time.Second)
		took += ctook
		if cv == killed {
			v, why = killed, "by "+cp.pattern+": "+cwhy
		}
	}
	if err := os.WriteFile(s.file, orig, 0o644); err != nil {
		return 0, "", 0, fmt.Errorf("restoring %s: %v", s.file, err)
	}
	return v, why, took, nil
}

// report writes the score per package and overall, and the survivors.
func report(w io.Writer, per map[string]*tally, tested int, survivors []string) {
	var pkgs []string
	for p := range per {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	var k, sv, e int
	fmt.Fprintln(w)
	for _, p := range pkgs {
		t := per[p]
		k, sv, e = k+t.killed, sv+t.survived, e+t.equivalent
		fmt.Fprintf(w, "%-40s killed %3d  survived %3d  equivalent %2d  score %5.1f%%\n", p, t.killed, t.survived, t.equivalent, 100*float64(t.killed)/float64(max(t.killed+t.survived, 1)))
	}
	fmt.Fprintf(w, "\nmutation score: %d killed of %d (%.1f%%), %d equivalent excluded (%.1f%% of the sample)\n",
		k, k+sv, 100*float64(k)/float64(max(k+sv, 1)), e, 100*float64(e)/float64(max(tested, 1)))
	for _, s := range survivors {
		fmt.Fprintln(w, "survivor:", s)
	}
}
