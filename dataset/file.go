package dataset

import (
	"os"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// ReadMatrix reads a numeric matrix from a file: IDX (by its name: "idx",
// ".ubyte" or ".gz"; gzip or not, every dimension after the first
// flattened into columns) or CSV (an optional header), at most maxRows
// rows when maxRows > 0.
func ReadMatrix(path string, maxRows int) (*mat.Dense, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if strings.Contains(path, "idx") || strings.HasSuffix(path, ".ubyte") || strings.HasSuffix(path, ".gz") {
		a, err := ReadIDX(f, maxRows)
		if err != nil {
			return nil, err
		}
		cols := 1
		for _, d := range a.Dims[1:] {
			cols *= d
		}
		return mat.NewDense(a.Dims[0], cols, a.Data), nil
	}
	t, err := ReadCSV(f, CSVOptions{MaxRows: maxRows})
	if err != nil {
		return nil, err
	}
	return t.X, nil
}
