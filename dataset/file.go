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
//   - NumPy ".npy" and ".npz" through ReadNPY and ReadNPZ;
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
		t := &Table{X: mat.NewDense(a.Dims[0], cols, a.Data)}
		if err := t.choose(opt); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return t, nil
	}
	if strings.HasSuffix(base, ".npy") || strings.HasSuffix(base, ".npz") {
		var t *Table
		if strings.HasSuffix(base, ".npy") {
			t, err = ReadNPY(f, opt)
		} else {
			var st os.FileInfo
			if st, err = f.Stat(); err == nil {
				t, err = ReadNPZ(f, st.Size(), opt)
			}
		}
		if err == nil {
			err = t.choose(opt)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return t, nil
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

// choose applies opt.LabelColumn and opt.Columns (indices only: the
// table has no header) to a numeric table read whole.
func (t *Table) choose(opt CSVOptions) error {
	if opt.LabelColumn == 0 && len(opt.Columns) == 0 {
		return nil
	}
	rows, cols := t.X.Dims()
	li := -2
	if opt.LabelColumn != 0 {
		if li = labelIndex(opt.LabelColumn, cols); li < 0 || li >= cols || cols < 2 {
			return formatf("label column %d of a table with %d columns", opt.LabelColumn, cols)
		}
		if t.Labels != nil {
			return formatf("labels given twice (an array y and a label column)")
		}
	}
	if hasNames(opt.Columns) {
		return formatf("columns by name need a header; this file has none: give column numbers")
	}
	sel, err := resolveColumns(opt.Columns, nil, cols, li)
	if err != nil {
		return err
	}
	if sel == nil {
		for j := 0; j < cols; j++ {
			if j != li {
				sel = append(sel, j)
			}
		}
	}
	x := mat.NewDense(rows, len(sel), nil)
	if li >= 0 {
		t.Labels = make([]string, rows)
	}
	for i := 0; i < rows; i++ {
		row := t.X.RawRowView(i)
		if li >= 0 {
			t.Labels[i] = fmt.Sprint(row[li])
		}
		dst := x.RawRowView(i)
		for e, j := range sel {
			dst[e] = row[j]
		}
	}
	t.X = x
	return nil
}
