package dataset

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"path"
	"sort"
	"strings"

	"github.com/sbinet/npyio/npy"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/internal/bigmem"
)

// maxNPYHeader bounds the header of an .npy file (NumPy writes a few
// hundred bytes; the format allows 4 GiB).
const maxNPYHeader = 1 << 20

// ReadNPY reads a NumPy .npy array as a matrix: a 2-d array as it is, a
// 1-d array as one column, more dimensions flattened after the first (as
// ReadIDX does). Every numeric dtype NumPy writes (float16 excepted) is
// read: float32/64, signed and unsigned integers of 1–8 bytes, bool, either
// byte order, C or Fortran order. With opt.MaxRows > 0 at most that many
// rows are kept; NaN and ±Inf are errors unless opt.AllowNonFinite. The
// header is parsed by github.com/sbinet/npyio after its length has been
// checked; the data are decoded here, as they arrive (memory is never
// allocated on the header's word alone). Errors wrap ErrFormat.
func ReadNPY(r io.Reader, opt CSVOptions) (t *Table, err error) {
	br := bufio.NewReader(r)
	pre, err := br.Peek(12)
	if err != nil || !bytes.Equal(pre[:6], npy.Magic[:]) {
		return nil, formatf(".npy: not a NumPy array file")
	}
	var hlen int
	switch pre[6] {
	case 1:
		hlen = int(binary.LittleEndian.Uint16(pre[8:10]))
	case 2, 3:
		hlen = int(binary.LittleEndian.Uint32(pre[8:12]))
	default:
		return nil, formatf(".npy: format version %d", pre[6])
	}
	if hlen > maxNPYHeader {
		return nil, formatf(".npy: header of %d bytes", hlen)
	}
	if pre[6] == 3 {
		// Version 3 differs from 2 only in allowing UTF-8 in the header,
		// which the header parser does not look at; it reads 1 and 2.
		b := []byte(string(pre[:8]))
		b[6] = 2
		br = bufio.NewReader(io.MultiReader(bytes.NewReader(b), discardN(br, 8)))
	}
	hdr, err := parseNPYHeader(br)
	if err != nil {
		return nil, err
	}
	shape := hdr.Descr.Shape
	rows, cols := 1, 1
	switch len(shape) {
	case 0:
	case 1:
		rows = shape[0]
	default:
		rows = shape[0]
		for _, d := range shape[1:] {
			if d > 0 && cols > maxIDXElements/d {
				return nil, formatf(".npy: shape %v is more than kdual reads", shape)
			}
			cols *= d
		}
	}
	if rows == 0 || cols == 0 {
		return nil, formatf(".npy: empty array (shape %v)", shape)
	}
	if rows > maxIDXElements/cols {
		return nil, formatf(".npy: shape %v is more than kdual reads", shape)
	}
	dec, size, err := npyDecoder(hdr.Descr.Type)
	if err != nil {
		return nil, err
	}
	keep := rows
	if opt.MaxRows > 0 && opt.MaxRows < rows && !hdr.Descr.Fortran {
		keep = opt.MaxRows
	}
	total := keep * cols
	data := make([]float64, 0, min(total, 1<<16))
	buf := make([]byte, size*4096)
	for off := 0; off < total; {
		chunk := min(4096, total-off)
		if _, err := io.ReadFull(br, buf[:chunk*size]); err != nil {
			return nil, formatf(".npy: data end after %d of %d values", off, total)
		}
		for i := 0; i < chunk; i++ {
			v := dec(buf[i*size : (i+1)*size])
			if !opt.AllowNonFinite && (math.IsNaN(v) || math.IsInf(v, 0)) {
				k := off + i
				if hdr.Descr.Fortran {
					return nil, formatf(".npy: value %g at row %d column %d", v, k%rows+1, k/rows+1)
				}
				return nil, formatf(".npy: value %g at row %d column %d", v, k/cols+1, k%cols+1)
			}
			if len(data) == cap(data) {
				data = growFloats(data, 1)[:len(data)] // in preemptible pieces
			}
			data = append(data, v)
		}
		off += chunk
	}
	if keep == rows {
		// Reading to the end lets a compressed archive member verify its
		// checksum.
		if _, err := io.Copy(io.Discard, br); err != nil {
			return nil, formatf(".npy: %v", err)
		}
	}
	x := mat.NewDense(keep, cols, data)
	if hdr.Descr.Fortran {
		// Column-major on disk: the data are the cols×rows transpose.
		x = mat.DenseCopyOf(mat.NewDense(cols, rows, data).T())
		if opt.MaxRows > 0 && opt.MaxRows < rows {
			x = mat.DenseCopyOf(x.Slice(0, opt.MaxRows, 0, cols))
		}
	}
	return &Table{X: x}, nil
}

// parseNPYHeader parses an .npy header with npyio, whose parser panics on
// some malformed headers: those are format errors here.
func parseNPYHeader(r io.Reader) (h npy.Header, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = formatf(".npy: malformed header")
		}
	}()
	rd, err := npy.NewReader(r)
	if err != nil {
		return h, formatf(".npy: %v", err)
	}
	for _, d := range rd.Header.Descr.Shape {
		if d < 0 {
			return h, formatf(".npy: shape %v", rd.Header.Descr.Shape)
		}
	}
	return rd.Header, nil
}

// npyDecoder returns the decoder of one element of dtype descr ("<f8",
// "|u1", ">i4", …) and its size in bytes.
func npyDecoder(descr string) (func([]byte) float64, int, error) {
	bad := formatf(".npy: dtype %q is not a number kdual reads", descr)
	if len(descr) < 2 {
		return nil, 0, bad
	}
	var order binary.ByteOrder = binary.LittleEndian
	switch descr[0] {
	case '<', '|', '=':
		descr = descr[1:]
	case '>':
		order, descr = binary.BigEndian, descr[1:]
	}
	switch descr {
	case "f8":
		return func(b []byte) float64 { return math.Float64frombits(order.Uint64(b)) }, 8, nil
	case "f4":
		return func(b []byte) float64 { return float64(math.Float32frombits(order.Uint32(b))) }, 4, nil
	case "i8":
		return func(b []byte) float64 { return float64(int64(order.Uint64(b))) }, 8, nil
	case "i4":
		return func(b []byte) float64 { return float64(int32(order.Uint32(b))) }, 4, nil
	case "i2":
		return func(b []byte) float64 { return float64(int16(order.Uint16(b))) }, 2, nil
	case "i1":
		return func(b []byte) float64 { return float64(int8(b[0])) }, 1, nil
	case "u8":
		return func(b []byte) float64 { return float64(order.Uint64(b)) }, 8, nil
	case "u4":
		return func(b []byte) float64 { return float64(order.Uint32(b)) }, 4, nil
	case "u2":
		return func(b []byte) float64 { return float64(order.Uint16(b)) }, 2, nil
	case "u1", "b1":
		return func(b []byte) float64 { return float64(b[0]) }, 1, nil
	}
	return nil, 0, bad
}

// discardN returns r after skipping n bytes.
func discardN(r *bufio.Reader, n int) io.Reader {
	_, _ = r.Discard(n)
	return r
}

// ReadNPZ reads one array of a NumPy .npz archive (numpy.savez or
// savez_compressed) with ReadNPY: the archive's only array, or else the
// one named "X" (or "x", "data"); other archives are an error listing
// their arrays. An array "y" (or "labels") with one value per row becomes
// Table.Labels.
func ReadNPZ(r io.ReaderAt, size int64, opt CSVOptions) (*Table, error) {
	z, err := zip.NewReader(r, size)
	if err != nil {
		return nil, formatf(".npz: %v", err)
	}
	members := map[string]*zip.File{}
	var names []string
	for _, f := range z.File {
		if strings.HasSuffix(f.Name, ".npy") {
			name := strings.TrimSuffix(path.Base(f.Name), ".npy")
			members[name] = f
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var pick *zip.File
	if len(names) == 1 {
		pick = members[names[0]]
	} else {
		for _, n := range []string{"X", "x", "data"} {
			if f, ok := members[n]; ok {
				pick = f
				break
			}
		}
	}
	if pick != nil {
		// The declared size bounds what inflating may allocate (archive/zip
		// holds the member to it): refuse what cannot fit in memory.
		if total := bigmem.Total(); total > 0 && pick.UncompressedSize64 > uint64(total) {
			return nil, formatf(".npz: %s declares %d bytes, more than this machine's memory", pick.Name, pick.UncompressedSize64)
		}
	}
	if pick == nil {
		if len(names) > 8 {
			names = append(names[:8], "…")
		}
		return nil, formatf(".npz: arrays %s; want one array, or one named X", strings.Join(names, ", "))
	}
	t, err := readNPZMember(pick, opt)
	if err != nil {
		return nil, err
	}
	for _, n := range []string{"y", "labels"} {
		f, ok := members[n]
		if !ok || f == pick {
			continue
		}
		lab, err := readNPZMember(f, CSVOptions{MaxRows: opt.MaxRows})
		if err != nil {
			return nil, err
		}
		r, c := lab.X.Dims()
		if rr, _ := t.X.Dims(); r != rr || c != 1 {
			return nil, formatf(".npz: %s has shape %d×%d, want %d values", n, r, c, rr)
		}
		t.Labels = make([]string, r)
		for i := range t.Labels {
			t.Labels[i] = fmt.Sprint(lab.X.At(i, 0))
		}
		break
	}
	return t, nil
}

func readNPZMember(f *zip.File, opt CSVOptions) (*Table, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, formatf(".npz: %s: %v", f.Name, err)
	}
	defer rc.Close()
	t, err := ReadNPY(rc, opt)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name, err)
	}
	return t, nil
}
