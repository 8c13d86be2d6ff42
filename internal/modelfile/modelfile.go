// Package modelfile reads and writes kdual's saved models: a NumPy .npz
// archive (numpy.load reads it) whose member header.npy holds a JSON
// header as uint8 and whose other members are float64 arrays, C-ordered.
// Each model defines its header (with "format" and "version") and its
// members; this package writes them, and reads them back checking sizes,
// shapes and finiteness, never trusting a length it has not read and never
// panicking on a corrupted file.
package modelfile

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/sbinet/npyio/npy"
	"github.com/sbinet/npyio/npz"
	"gonum.org/v1/gonum/mat"
)

// Writer writes one model file.
type Writer struct {
	z   *npz.Writer
	err error
}

// NewWriter starts a model file on w with header (JSON-encoded).
func NewWriter(w io.Writer, header any) *Writer {
	mw := &Writer{z: npz.NewWriter(w)}
	head, err := json.Marshal(header)
	if err != nil {
		mw.err = err
		return mw
	}
	mw.put("header.npy", head)
	return mw
}

func (w *Writer) put(name string, v any) {
	if w.err == nil {
		w.err = w.z.Write(name, v)
	}
}

// Vec writes a float64 vector as member name (".npy" is added).
func (w *Writer) Vec(name string, v []float64) { w.put(name+".npy", v) }

// Mat writes a matrix as member name (".npy" is added).
func (w *Writer) Mat(name string, m *mat.Dense) {
	if w.err != nil {
		return
	}
	if m == nil {
		w.err = fmt.Errorf("modelfile: %s: no matrix", name)
		return
	}
	// npyio writes a *mat.Dense's storage; a view would carry its stride.
	if raw := m.RawMatrix(); raw.Stride != raw.Cols {
		m = mat.DenseCopyOf(m)
	}
	w.put(name+".npy", m)
}

// Sym writes a symmetric matrix as a full square member.
func (w *Writer) Sym(name string, s *mat.SymDense) {
	if s == nil {
		w.Mat(name, nil)
		return
	}
	w.Mat(name, mat.DenseCopyOf(s))
}

// Close finishes the archive and returns the first error.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	return w.z.Close()
}

// Reader reads one model file.
type Reader struct {
	z    *zip.Reader
	kind error // wrapped by every error
}

// Open reads a whole model file from r, parses its header into header
// (unknown fields are an error) and returns a reader of its arrays. Every
// error wraps kind (the model package's "bad model file" error), except a
// failure of r itself.
func Open(r io.Reader, kind error, header any) (rd *Reader, err error) {
	raw, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	zr, err := zip.NewReader(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		return nil, fmt.Errorf("%w: not an .npz archive: %v", kind, err)
	}
	if err := checkSizes(zr); err != nil {
		return nil, fmt.Errorf("%w: %v", kind, err)
	}
	rd = &Reader{z: zr, kind: kind}
	var head []uint8
	if err := rd.read("header.npy", 1<<20, &head); err != nil {
		return nil, fmt.Errorf("%w: no header: %v", kind, err)
	}
	dec := json.NewDecoder(bytes.NewReader(head))
	dec.DisallowUnknownFields()
	if err := dec.Decode(header); err != nil {
		return nil, fmt.Errorf("%w: header: %v", kind, err)
	}
	return rd, nil
}

// maxRatio bounds a member's declared expansion (uncompressed over
// compressed size) past its first MiB: the float64 arrays of a model
// deflate by a few percent, a compression bomb by a thousand times.
const maxRatio = 64

// maxTotal bounds the archive's declared uncompressed size.
const maxTotal = 64 << 30

// checkSizes refuses an archive whose members declare more than the input
// can justify, before any member is inflated: archive/zip then holds each
// member to its declared size while reading.
func checkSizes(z *zip.Reader) error {
	var total uint64
	for _, f := range z.File {
		if f.UncompressedSize64 > 1<<20 && f.UncompressedSize64 > maxRatio*f.CompressedSize64 {
			return fmt.Errorf("member %s declares %d bytes from %d compressed (over %d×: a compression bomb?)",
				f.Name, f.UncompressedSize64, f.CompressedSize64, maxRatio)
		}
		total += f.UncompressedSize64
		if total > maxTotal {
			return fmt.Errorf("members declare over %d GiB in all", maxTotal>>30)
		}
	}
	return nil
}

// Errorf returns an error wrapping the reader's kind.
func (r *Reader) Errorf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{r.kind}, args...)...)
}

// Has reports whether the archive has member name (".npy" added).
func (r *Reader) Has(name string) bool {
	f, err := r.z.Open(name + ".npy")
	if err != nil {
		return false
	}
	f.Close()
	return true
}

// member returns the bytes of name, at most limit of them. The .npy parser
// does not handle the short reads of a zip stream, so members are read
// whole before parsing.
func (r *Reader) member(name string, limit int64) ([]byte, error) {
	f, err := r.z.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("more than %d bytes", limit)
	}
	return b, nil
}

// parse returns the .npy reader of member name; the .npy parser panics on
// some corrupted headers, which is an error here.
func (r *Reader) parse(name string, limit int64) (rd *npy.Reader, err error) {
	defer func() {
		if p := recover(); p != nil {
			rd, err = nil, fmt.Errorf("corrupted array (%v)", p)
		}
	}()
	b, err := r.member(name, limit)
	if err != nil {
		return nil, err
	}
	return npy.NewReader(bytes.NewReader(b))
}

func (r *Reader) read(name string, limit int64, ptr any) (err error) {
	rd, err := r.parse(name, limit)
	if err != nil {
		return err
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("corrupted array (%v)", p)
		}
	}()
	return rd.Read(ptr)
}

// limit is the most bytes a member of count float64s may have: the data
// and a header of at most 64 KiB.
func limit(count int) int64 { return 8*int64(count) + 1<<16 }

// Vec reads member name (".npy" added) as n finite float64s.
func (r *Reader) Vec(name string, n int) ([]float64, error) {
	if n < 0 || n > 1<<31 {
		return nil, r.Errorf("%s: %d values", name, n)
	}
	var v []float64
	if err := r.read(name+".npy", limit(n), &v); err != nil {
		return nil, r.Errorf("%s: %v", name, err)
	}
	if len(v) != n {
		return nil, r.Errorf("%s has %d values, want %d", name, len(v), n)
	}
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, r.Errorf("%s[%d] = %g", name, i, x)
		}
	}
	return v, nil
}

// Mat reads member name (".npy" added) as a finite rows×cols matrix.
func (r *Reader) Mat(name string, rows, cols int) (*mat.Dense, error) {
	if rows < 1 || cols < 1 || rows > 1<<31/cols {
		return nil, r.Errorf("%s: shape %d×%d", name, rows, cols)
	}
	rd, err := r.parse(name+".npy", limit(rows*cols))
	if err != nil {
		return nil, r.Errorf("%s: %v", name, err)
	}
	if sh := rd.Header.Descr.Shape; len(sh) != 2 || sh[0] != rows || sh[1] != cols {
		return nil, r.Errorf("%s has shape %v, want [%d %d]", name, sh, rows, cols)
	}
	if rd.Header.Descr.Type != "<f8" {
		return nil, r.Errorf("%s has dtype %s, want <f8", name, rd.Header.Descr.Type)
	}
	var m mat.Dense
	if err := func() (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("corrupted array (%v)", p)
			}
		}()
		return rd.Read(&m)
	}(); err != nil {
		return nil, r.Errorf("%s: %v", name, err)
	}
	if mr, mc := m.Dims(); mr != rows || mc != cols {
		return nil, r.Errorf("%s has %d×%d values, want %d×%d", name, mr, mc, rows, cols)
	}
	for _, x := range m.RawMatrix().Data {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, r.Errorf("%s has a value %g", name, x)
		}
	}
	return &m, nil
}

// Sym reads member name as a symmetric n×n matrix (its upper triangle).
func (r *Reader) Sym(name string, n int) (*mat.SymDense, error) {
	m, err := r.Mat(name, n, n)
	if err != nil {
		return nil, err
	}
	return mat.NewSymDense(n, m.RawMatrix().Data), nil
}

// Check returns an error when the header's format or version is not the
// one wanted.
func (r *Reader) Check(format string, version int, wantFormat string, wantVersion int) error {
	if format != wantFormat {
		return r.Errorf("format %q, want %q", format, wantFormat)
	}
	if version != wantVersion {
		return r.Errorf("version %d, this kdual reads version %d", version, wantVersion)
	}
	return nil
}

// CheckVersions is Check for formats of which this kdual reads every
// version from oldest to newest.
func (r *Reader) CheckVersions(format string, version int, wantFormat string, oldest, newest int) error {
	if format != wantFormat {
		return r.Errorf("format %q, want %q", format, wantFormat)
	}
	if version < oldest || version > newest {
		return r.Errorf("version %d, this kdual reads versions %d to %d", version, oldest, newest)
	}
	return nil
}

// WriteFile writes a model to path with save (a model's Save method): into
// a temporary file beside it, renamed to path only when everything was
// written, so that a failed or interrupted save never leaves a partial
// file (nor replaces an existing one).
func WriteFile(path string, save func(io.Writer) error) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(f.Name(), path)
		}
		if err != nil {
			os.Remove(f.Name())
		}
	}()
	return save(f)
}
