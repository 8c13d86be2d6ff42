// Command sizes reports the non-test Go and C files over 600 lines and the
// non-test Go functions over 100 lines (the house's limits), longest first.
//
//	go run ./scripts/sizes [-files 600] [-funcs 100]
//
// It exits 1 when something is over a limit and -strict is given.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

type item struct {
	name  string
	lines int
}

func main() {
	fileMax := flag.Int("files", 600, "the most lines of a file")
	funcMax := flag.Int("funcs", 100, "the most lines of a function")
	strict := flag.Bool("strict", false, "exit 1 when something is over a limit")
	flag.Parse()
	var files, funcs []item
	err := filepath.Walk(".", func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if info.IsDir() {
			if name := info.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, "_test.go") || !(strings.HasSuffix(path, ".go") || strings.HasSuffix(path, ".c")) {
			return nil
		}
		n, err := countLines(path)
		if err != nil {
			return err
		}
		if n > *fileMax {
			files = append(files, item{path, n})
		}
		if strings.HasSuffix(path, ".go") {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Body == nil {
					continue
				}
				lines := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
				if lines > *funcMax {
					name := fd.Name.Name
					if fd.Recv != nil && len(fd.Recv.List) == 1 {
						t := fd.Recv.List[0].Type
						if st, ok := t.(*ast.StarExpr); ok {
							t = st.X
						}
						if id, ok := t.(*ast.Ident); ok {
							name = id.Name + "." + name
						}
					}
					funcs = append(funcs, item{path + ": " + name, lines})
				}
			}
		}
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "sizes:", err)
		os.Exit(2)
	}
	for _, list := range []*[]item{&files, &funcs} {
		sort.Slice(*list, func(i, j int) bool { return (*list)[i].lines > (*list)[j].lines })
	}
	fmt.Printf("%d files over %d lines:\n", len(files), *fileMax)
	for _, f := range files {
		fmt.Printf("  %5d  %s\n", f.lines, f.name)
	}
	fmt.Printf("%d functions over %d lines:\n", len(funcs), *funcMax)
	for _, f := range funcs {
		fmt.Printf("  %5d  %s\n", f.lines, f.name)
	}
	if *strict && len(files)+len(funcs) > 0 {
		os.Exit(1)
	}
}

func countLines(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	n := 0
	for sc.Scan() {
		n++
	}
	return n, sc.Err()
}
