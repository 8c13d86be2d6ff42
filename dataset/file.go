package dataset

import (
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// ReadMatrix reads a numeric matrix from a file (ReadTable with default
// options), at most maxRows rows when maxRows > 0.
func ReadMatrix(path string, maxRows int) (*mat.Dense, error) {
	t, err := ReadTable(path, CSVOptions{MaxRows: maxRows})
	if err != nil {
		return nil, err
	}
	return t.X, nil
}

// ReadTable reads a table from a file, chosen by its name:
//   - IDX ("idx" in the name or ".ubyte", gzip or not): every dimension
//     after the first flattened into columns;
//   - CSV otherwise, through ReadCSV: ".tsv" means tab-separated unless
//     opt.Comma says otherwise, and ".gz" at the end is gunzipped first
//     (the gzip checksum is verified).
//
// Errors name the file.
func ReadTable(path string, opt CSVOptions) (*Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	base := strings.ToLower(filepath.Base(path))
	if strings.Contains(base, "idx") || strings.HasSuffix(base, ".ubyte") || strings.HasSuffix(base, ".ubyte.gz") {
		a, err := ReadIDX(f, opt.MaxRows)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		cols := 1
		for _, d := range a.Dims[1:] {
			cols *= d
		}
		return &Table{X: mat.NewDense(a.Dims[0], cols, a.Data)}, nil
	}
	var r io.Reader = f
	name := base
	if strings.HasSuffix(name, ".gz") {
		gz, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, formatf("gzip: %v", err))
		}
		defer gz.Close()
		r, name = gz, strings.TrimSuffix(name, ".gz")
	}
	if opt.Comma == 0 && strings.HasSuffix(name, ".tsv") {
		opt.Comma = '\t'
	}
	t, err := ReadCSV(r, opt)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}
