package dataset

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
)

// IDX8File is an uncompressed IDX file of 8-bit items (type 0x08, the
// format of MNIST's images) opened for reading rows at any position
// without loading it: N items of D bytes each (D the product of the
// dimensions after the first), so files larger than memory can be read in
// chunks.
type IDX8File struct {
	N, D   int
	Shape  []int // the header's dimensions
	f      *os.File
	offset int64 // of the first item
}

// OpenIDX8 opens an uncompressed 8-bit IDX file and checks that its size
// matches its header. A gzip-compressed file is refused (it cannot be read
// at an offset: decompress it first).
func OpenIDX8(path string) (*IDX8File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	x, err := openIDX8(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return x, nil
}

func openIDX8(f *os.File) (*IDX8File, error) {
	var head [4]byte
	if _, err := io.ReadFull(f, head[:]); err != nil {
		return nil, formatf("IDX: short header: %v", err)
	}
	if head[0] == 0x1f && head[1] == 0x8b {
		return nil, formatf("IDX: gzip-compressed: a streamed fit reads an uncompressed file (gunzip it first)")
	}
	if head[0] != 0 || head[1] != 0 {
		return nil, formatf("IDX: bad magic %x", head[:2])
	}
	if head[2] != 0x08 {
		return nil, formatf("IDX: type code 0x%02x: want 0x08 (unsigned bytes)", head[2])
	}
	nd := int(head[3])
	if nd == 0 {
		return nil, formatf("IDX: zero dimensions")
	}
	dims := make([]int, nd)
	d := int64(1)
	for i := range dims {
		var v uint32
		if err := binary.Read(f, binary.BigEndian, &v); err != nil {
			return nil, formatf("IDX: short dimension list: %v", err)
		}
		if v == 0 {
			return nil, formatf("IDX: dimension %d of %d is zero", i, nd)
		}
		dims[i] = int(v)
		if i > 0 {
			d *= int64(v)
			if d > 1<<24 {
				return nil, formatf("IDX: items of %v bytes: more than kdual reads", dims[1:])
			}
		}
	}
	offset := int64(4 + 4*nd)
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if want := offset + int64(dims[0])*d; st.Size() != want {
		return nil, formatf("IDX: %d bytes, the header %v says %d", st.Size(), dims, want)
	}
	return &IDX8File{N: dims[0], D: int(d), Shape: dims, f: f, offset: offset}, nil
}

// Dims returns the items and their bytes.
func (x *IDX8File) Dims() (int, int) { return x.N, x.D }

// ReadRows reads items [i0, i0 + len(dst)/D) into dst (a whole number of
// items).
func (x *IDX8File) ReadRows(i0 int, dst []uint8) error {
	if len(dst)%x.D != 0 || i0 < 0 || i0+len(dst)/x.D > x.N {
		return formatf("IDX: items %d … %d of %d (%d bytes for items of %d)", i0, i0+len(dst)/x.D, x.N, len(dst), x.D)
	}
	if _, err := x.f.ReadAt(dst, x.offset+int64(i0)*int64(x.D)); err != nil {
		return formatf("IDX: reading items from %d: %v", i0, err)
	}
	return nil
}

// Close closes the file.
func (x *IDX8File) Close() error { return x.f.Close() }

// WriteIDX8Header writes the header of an uncompressed 8-bit IDX file of
// the given dimensions (the items follow, row-major).
func WriteIDX8Header(w io.Writer, dims ...int) error {
	if len(dims) < 1 || len(dims) > 255 {
		return formatf("IDX: %d dimensions", len(dims))
	}
	head := []byte{0, 0, 0x08, byte(len(dims))}
	for _, v := range dims {
		if v < 1 || int64(v) > 1<<32-1 {
			return formatf("IDX: dimension %d", v)
		}
		head = binary.BigEndian.AppendUint32(head, uint32(v))
	}
	_, err := w.Write(head)
	return err
}
