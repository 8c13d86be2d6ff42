package dataset

import (
	"bufio"
	"encoding/csv"
	"errors"
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
	// HeaderAuto treats the first row as a header when none of its
	// non-empty fields is a number (so ",a,b" and "sepal_length,…,species"
	// are headers, and a first row with one number among bad fields is data,
	// whose bad fields are then errors). A number is what strconv.ParseFloat
	// reads, out of range included ("1e400"); a decimal comma ("1,5") is not
	// one.
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
	// white space (no quoting then).
	Comma rune
	// AllowNonFinite accepts NaN and ±Inf fields; by default they are errors.
	AllowNonFinite bool
	// MaxRows stops after this many data rows; 0 means all.
	MaxRows int
	// LabelColumn, when not 0, is a column of labels (any text) kept apart
	// from the numbers in Table.Labels: 1 is the first column, −1 the last.
	LabelColumn int
	// Columns, when not empty, are the feature columns, in this order:
	// each a 1-based index (negative from the last) or a header name
	// (names need a header, which is then assumed). Other columns are not
	// read, so they may hold anything.
	Columns []string
}

// resolveColumns returns the 0-based indices of opt.Columns among cols
// fields with the given header (nil when Columns is empty).
func resolveColumns(specs, header []string, cols, label int) ([]int, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	seen := map[int]bool{}
	var out []int
	for _, spec := range specs {
		spec = strings.TrimSpace(spec)
		j := -1
		if v, err := strconv.Atoi(spec); err == nil {
			j = v - 1
			if v < 0 {
				j = cols + v
			}
			if v == 0 || j < 0 || j >= cols {
				return nil, formatf("column %d of %d", v, cols)
			}
		} else {
			for c, h := range header {
				if h == spec {
					if j >= 0 {
						return nil, formatf("column name %s appears twice in the header", quote(spec))
					}
					j = c
				}
			}
			if j < 0 {
				return nil, formatf("no column named %s in the header", quote(spec))
			}
		}
		if j == label {
			return nil, formatf("column %s is the label column", quote(spec))
		}
		if seen[j] {
			return nil, formatf("column %s chosen twice", quote(spec))
		}
		seen[j] = true
		out = append(out, j)
	}
	return out, nil
}

// hasNames reports whether any column spec is a name, not an index.
func hasNames(specs []string) bool {
	for _, s := range specs {
		if _, err := strconv.Atoi(strings.TrimSpace(s)); err != nil {
			return true
		}
	}
	return false
}

// Table is a numeric table: the n×d data, the header fields (nil when
// there was no header) and, with CSVOptions.LabelColumn, each row's label.
type Table struct {
	X      *mat.Dense
	Header []string
	Labels []string
}

// maxLine bounds one line of input (every separator) and maxFields the
// separators in one line, so a malformed file cannot exhaust memory: a
// parsed field costs about 40 bytes besides its text, so a 16 MiB line of
// one-character fields would take 300 MB to split.
const (
	maxLine   = 16 << 20
	maxFields = 1 << 20
)

// quote shortens a field for an error message.
func quote(f string) string {
	if len(f) > 40 {
		f = f[:37] + "..."
	}
	return strconv.Quote(f)
}

// ReadCSV reads a numeric table with encoding/csv (RFC 4180: quoted fields,
// separators and newlines inside quotes). Blank lines and lines starting
// with '#' are skipped; leading spaces of fields are ignored. Every row
// must have the same number of fields. Errors name the line and column and
// quote at most 40 characters of a field.
func ReadCSV(r io.Reader, opt CSVOptions) (*Table, error) {
	next, err := rowsOf(r, opt)
	if err != nil {
		return nil, err
	}
	var (
		t     Table
		data  []float64
		cols  = -1
		rows  int
		first = true
		sel   []int // chosen feature columns (nil: all but the label)
	)
	for {
		fields, line, err := next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if first {
			first = false
			header := opt.Header == HeaderYes || (opt.Header == HeaderAuto && hasNames(opt.Columns))
			if opt.Header == HeaderAuto && !header {
				header = true
				for _, f := range fields {
					if isNumber(f) {
						header = false
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
			li := -2
			if opt.LabelColumn != 0 {
				if li = labelIndex(opt.LabelColumn, cols); li < 0 || li >= cols || cols < 2 {
					return nil, formatf("line %d: label column %d of %d fields", line, opt.LabelColumn, cols)
				}
			}
			if sel, err = resolveColumns(opt.Columns, t.Header, cols, li); err != nil {
				return nil, err
			}
		} else if len(fields) != cols {
			return nil, formatf("line %d has %d fields, earlier rows have %d", line, len(fields), cols)
		}
		li := -1
		if opt.LabelColumn != 0 {
			li = labelIndex(opt.LabelColumn, cols)
			t.Labels = append(t.Labels, strings.TrimSpace(fields[li]))
		}
		for j, f := range fields {
			if sel != nil {
				if j >= len(sel) {
					break
				}
				j = sel[j]
				f = fields[j]
			} else if j == li {
				continue
			}
			v, err := parseField(f, line, j, opt.AllowNonFinite)
			if err != nil {
				return nil, err
			}
			if len(data) == cap(data) {
				data = growFloats(data, 1)[:len(data)] // in preemptible pieces
			}
			data = append(data, v)
		}
		rows++
		if opt.MaxRows > 0 && rows == opt.MaxRows {
			break
		}
	}
	if rows == 0 {
		return nil, formatf("no data rows")
	}
	d := cols
	if opt.LabelColumn != 0 {
		d--
	}
	if sel != nil {
		d = len(sel)
	}
	t.X = mat.NewDense(rows, d, data)
	return &t, nil
}

// isNumber reports whether a CSV field is a number for the header rule:
// what strconv.ParseFloat reads, out of range included.
func isNumber(f string) bool {
	f = strings.TrimSpace(f)
	if f == "" {
		return false
	}
	_, err := strconv.ParseFloat(f, 64)
	return err == nil || errors.Is(err, strconv.ErrRange)
}

// labelIndex is the 0-based index of LabelColumn c among cols fields.
func labelIndex(c, cols int) int {
	if c < 0 {
		return cols + c
	}
	return c - 1
}

// rowsOf returns a function giving the rows of r with their line numbers,
// io.EOF at the end.
func rowsOf(r io.Reader, opt CSVOptions) (func() ([]string, int, error), error) {
	comma := byte(',')
	if opt.Comma != 0 && opt.Comma < 0x80 {
		comma = byte(opt.Comma)
	}
	r = &lineCap{r: stripBOM(r), max: maxLine, comma: comma}
	if opt.Comma == ' ' {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), maxLine)
		line := 0
		return func() ([]string, int, error) {
			for sc.Scan() {
				line++
				text := strings.TrimSpace(sc.Text())
				if text == "" || strings.HasPrefix(text, "#") {
					continue
				}
				return strings.Fields(text), line, nil
			}
			if err := sc.Err(); err != nil {
				if errors.Is(err, ErrFormat) {
					return nil, line, fmt.Errorf("line %d: %w", line+1, err)
				}
				return nil, line, formatf("reading line %d: %v", line+1, err)
			}
			return nil, line, io.EOF
		}, nil
	}
	cr := csv.NewReader(r)
	if opt.Comma != 0 {
		if opt.Comma == '"' || opt.Comma == '\r' || opt.Comma == '\n' || opt.Comma == '#' {
			return nil, formatf("separator %q", opt.Comma)
		}
		cr.Comma = opt.Comma
	}
	cr.Comment = '#'
	cr.TrimLeadingSpace = true
	cr.FieldsPerRecord = -1 // checked here, with our message
	cr.ReuseRecord = false
	return func() ([]string, int, error) {
		for {
			rec, err := cr.Read()
			if err == io.EOF {
				return nil, 0, io.EOF
			}
			if err != nil {
				var pe *csv.ParseError
				if errors.As(err, &pe) {
					return nil, pe.Line, formatf("line %d column %d: %v", pe.Line, pe.Column, pe.Err)
				}
				if errors.Is(err, ErrFormat) {
					return nil, 0, err // the line cap's own
				}
				return nil, 0, formatf("reading: %v", err)
			}
			line, _ := cr.FieldPos(0)
			if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
				continue // a line of spaces
			}
			return rec, line, nil
		}
	}, nil
}

// stripBOM drops a UTF-8 byte order mark at the start of r.
func stripBOM(r io.Reader) io.Reader {
	br := bufio.NewReader(r)
	if b, err := br.Peek(3); err == nil && string(b) == "\uFEFF" {
		_, _ = br.Discard(3)
	}
	return br
}

// lineCap fails a read once a line grows past max bytes, whatever the
// separator, so one endless line cannot grow the reader's buffers without
// bound.
type lineCap struct {
	r      io.Reader
	max    int
	line   int  // bytes since the last newline
	comma  byte // the separator (' ': any run of spaces and tabs counts each)
	fields int  // separators since the last newline
}

func (l *lineCap) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	for _, b := range p[:n] {
		if b == '\n' {
			l.line, l.fields = 0, 0
			continue
		}
		l.line++
		if l.line > l.max {
			return 0, formatf("a line longer than %d MiB", l.max>>20)
		}
		if b == l.comma || l.comma == ' ' && b == '\t' {
			if l.fields++; l.fields >= maxFields {
				return 0, formatf("a line with more than %d fields", maxFields)
			}
		}
	}
	return n, err
}

// sepIn names the first likely field separator inside a field that did
// not parse (a semicolon, tab, bar or a space between characters), or "".
func sepIn(f string) string {
	t := strings.TrimSpace(f)
	if i := strings.IndexAny(t, ";\t| "); i >= 0 {
		return strconv.Quote(t[i : i+1])
	}
	return ""
}

// parseField reads field f (line, column j counted from 0) as a float64,
// with an error naming why it is not one: empty, out of float64's range,
// a decimal comma, a likely separator inside it, not a number, or (unless
// allowed) not finite.
func parseField(f string, line, j int, allowNonFinite bool) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
	switch {
	case err == nil:
	case strings.TrimSpace(f) == "":
		return 0, formatf("line %d column %d: empty field", line, j+1)
	case errors.Is(err, strconv.ErrRange):
		return 0, formatf("line %d column %d: %s is out of the range of float64", line, j+1, quote(f))
	case strings.Contains(f, ","):
		return 0, formatf("line %d column %d: %s is not a number (a decimal comma is not read as a decimal point)", line, j+1, quote(f))
	case sepIn(f) != "":
		return 0, formatf("line %d column %d: %s is not a number (it holds %s: is that the field separator?)", line, j+1, quote(f), sepIn(f))
	default:
		return 0, formatf("line %d column %d: %s is not a number", line, j+1, quote(f))
	}
	if !allowNonFinite && (math.IsNaN(v) || math.IsInf(v, 0)) {
		return 0, formatf("line %d column %d: %s is not finite", line, j+1, quote(f))
	}
	return v, nil
}
