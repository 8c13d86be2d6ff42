package dataset

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/status"
)

// ErrFormat is wrapped by every error about malformed input.
var ErrFormat = fmt.Errorf("malformed input: %w", status.ErrInvalid)

func formatf(format string, args ...any) error {
	return fmt.Errorf("dataset: "+format+": %w", append(args, ErrFormat)...)
}

// HeaderMode says whether a CSV file starts with a header row.
type HeaderMode int

const (
	// HeaderAuto treats the first row as a header when any of its fields is
	// not a number.
	HeaderAuto HeaderMode = iota
	// HeaderYes always treats the first row as a header.
	HeaderYes
	// HeaderNo treats every row as data.
	HeaderNo
)

// CSVOptions configure ReadCSV. The zero value reads comma-separated values
// with an automatically detected header.
type CSVOptions struct {
	Header HeaderMode
	// Comma is the field separator; 0 means ','. ' ' splits on any run of
	// white space.
	Comma rune
	// AllowNonFinite accepts NaN and ±Inf fields; by default they are errors.
	AllowNonFinite bool
	// MaxRows stops after this many data rows; 0 means all.
	MaxRows int
}

// Table is a numeric table: the n×d data and the header fields (nil when
// there was no header).
type Table struct {
	X      *mat.Dense
	Header []string
}

// maxLine bounds one CSV line, so a malformed file cannot exhaust memory.
const maxLine = 16 << 20

// ReadCSV reads a numeric table. Blank lines and lines starting with '#' are
// skipped. Every data row must have the same number of fields.
func ReadCSV(r io.Reader, opt CSVOptions) (*Table, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	split := func(line string) []string {
		if opt.Comma == ' ' {
			return strings.Fields(line)
		}
		c := opt.Comma
		if c == 0 {
			c = ','
		}
		return strings.Split(line, string(c))
	}
	var (
		t     Table
		data  []float64
		cols  = -1
		rows  int
		first = true
		line  int
	)
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields := split(text)
		if first {
			first = false
			header := opt.Header == HeaderYes
			if opt.Header == HeaderAuto {
				for _, f := range fields {
					if _, err := strconv.ParseFloat(strings.TrimSpace(f), 64); err != nil {
						header = true
						break
					}
				}
			}
			if header {
				for _, f := range fields {
					t.Header = append(t.Header, strings.TrimSpace(f))
				}
				continue
			}
		}
		if cols < 0 {
			cols = len(fields)
		} else if len(fields) != cols {
			return nil, formatf("line %d has %d fields, earlier rows have %d", line, len(fields), cols)
		}
		for j, f := range fields {
			v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil {
				return nil, formatf("line %d field %d: %q is not a number", line, j+1, f)
			}
			if !opt.AllowNonFinite && (math.IsNaN(v) || math.IsInf(v, 0)) {
				return nil, formatf("line %d field %d: %q is not finite", line, j+1, f)
			}
			data = append(data, v)
		}
		rows++
		if opt.MaxRows > 0 && rows == opt.MaxRows {
			break
		}
	}
	if err := sc.Err(); err != nil {
		return nil, formatf("reading line %d: %v", line+1, err)
	}
	if rows == 0 {
		return nil, formatf("no data rows")
	}
	t.X = mat.NewDense(rows, cols, data)
	return &t, nil
}
