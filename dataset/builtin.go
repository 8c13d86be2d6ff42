package dataset

import (
	"bytes"
	"compress/gzip"
	"embed"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"
)

//go:embed data/iris.csv data/digits.csv.gz data/lasertrain.dat data/laserpred.dat
var builtin embed.FS

// ErrMissing is wrapped when a data file is not installed.
var ErrMissing = errors.New("data not installed")

func missingf(path string, err error) error {
	return fmt.Errorf("dataset: %s: %v (on Debian: apt-get install dataset-fashion-mnist): %w", path, err, ErrMissing)
}

// Labeled is a classification data set: X is n×d, Labels[i] ∈ 0…len(Classes)−1.
type Labeled struct {
	X       *mat.Dense
	Labels  []int
	Classes []string
}

// Iris returns Fisher's iris data: 150×4 (sepal length, sepal width, petal
// length, petal width in cm), three classes.
func Iris() (*Labeled, error) {
	raw, err := builtin.ReadFile("data/iris.csv")
	if err != nil {
		return nil, err
	}
	return ParseIris(bytes.NewReader(raw))
}

// ParseIris reads the iris layout: a header row "n,d,class names…", then n
// rows of d features and an integer class index.
func ParseIris(r io.Reader) (*Labeled, error) {
	t, err := ReadCSV(r, CSVOptions{Header: HeaderYes})
	if err != nil {
		return nil, err
	}
	if len(t.Header) < 3 {
		return nil, formatf("iris: header %q needs n, d and class names", t.Header)
	}
	n, err1 := strconv.Atoi(t.Header[0])
	d, err2 := strconv.Atoi(t.Header[1])
	if err1 != nil || err2 != nil {
		return nil, formatf("iris: header %q does not start with n, d", t.Header)
	}
	classes := t.Header[2:]
	return splitLabels(t.X, n, d, classes, "iris")
}

// Digits returns the 1797 8×8 handwritten digits (pixels 0…16), 64 columns,
// labels 0…9.
func Digits() (*Labeled, error) {
	raw, err := builtin.ReadFile("data/digits.csv.gz")
	if err != nil {
		return nil, err
	}
	gz, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, formatf("digits: %v", err)
	}
	t, err := ReadCSV(gz, CSVOptions{Header: HeaderNo})
	if err != nil {
		return nil, err
	}
	classes := make([]string, 10)
	for i := range classes {
		classes[i] = strconv.Itoa(i)
	}
	return splitLabels(t.X, 1797, 64, classes, "digits")
}

// splitLabels splits the last column of x off as integer class labels.
func splitLabels(x *mat.Dense, n, d int, classes []string, name string) (*Labeled, error) {
	r, c := x.Dims()
	if r != n || c != d+1 {
		return nil, formatf("%s: table is %d×%d, want %d×%d", name, r, c, n, d+1)
	}
	out := &Labeled{X: mat.NewDense(n, d, nil), Labels: make([]int, n), Classes: classes}
	for i := 0; i < n; i++ {
		row := x.RawRowView(i)
		copy(out.X.RawRowView(i), row[:d])
		l := row[d]
		if l != float64(int(l)) || l < 0 || int(l) >= len(classes) {
			return nil, formatf("%s: row %d has class %g, want 0…%d", name, i+1, l, len(classes)-1)
		}
		out.Labels[i] = int(l)
	}
	return out, nil
}

// SantaFe returns the SantaFe competition series A (far-infrared laser):
// the 1000 training values and the 100 values that follow them.
func SantaFe() (train, test []float64, err error) {
	a, err := builtin.ReadFile("data/lasertrain.dat")
	if err != nil {
		return nil, nil, err
	}
	b, err := builtin.ReadFile("data/laserpred.dat")
	if err != nil {
		return nil, nil, err
	}
	if train, err = ParseSeries(bytes.NewReader(a)); err != nil {
		return nil, nil, err
	}
	if test, err = ParseSeries(bytes.NewReader(b)); err != nil {
		return nil, nil, err
	}
	return train, test, nil
}

// ParseSeries reads a univariate series: numbers separated by white space
// (one per line in the SantaFe files). Non-finite values are errors.
func ParseSeries(r io.Reader) ([]float64, error) {
	t, err := ReadCSV(r, CSVOptions{Header: HeaderNo, Comma: ' '})
	if err != nil {
		return nil, err
	}
	n, d := t.X.Dims()
	if d != 1 {
		return nil, formatf("series: %d values per line, want 1", d)
	}
	out := make([]float64, n)
	mat.Col(out, 0, t.X)
	return out, nil
}

// SeriesString formats a series one value per line (for tests and CLI output).
func SeriesString(v []float64) string {
	var b strings.Builder
	for _, x := range v {
		b.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
		b.WriteByte('\n')
	}
	return b.String()
}
