package dataset

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// IDX is an array read from an IDX file (the format of MNIST and
// Fashion-MNIST): its dimensions and its values in row-major order.
type IDX struct {
	Dims []int
	Data []float64
}

// idxTypes maps the IDX type code to the element size in bytes.
var idxTypes = map[byte]int{0x08: 1, 0x09: 1, 0x0B: 2, 0x0C: 4, 0x0D: 4, 0x0E: 8}

// maxIDXElements bounds what ReadIDX allocates (about 4 GiB of float64).
const maxIDXElements = 1 << 29

// maxIDXPrealloc bounds what ReadIDX allocates from a header alone when
// the caller limits the items (512 MiB of float64: all of Fashion-MNIST's
// 47 million pixels).
const maxIDXPrealloc = 1 << 26

// ReadIDX reads an IDX array, gzip-compressed or not. When maxItems > 0
// only the first maxItems entries along the first dimension are read, and
// Dims[0] says how many were.
//
// Memory grows with the data that arrive, never on the header's word
// alone: a header claiming more elements than the stream holds fails when
// the data end, having allocated about what was read. A gzip stream read
// to its end has its trailer (CRC-32 and length) verified; a truncated or
// corrupted stream is reported as the gzip error.
func ReadIDX(r io.Reader, maxItems int) (*IDX, error) {
	s, err := openIDXStream(r, maxItems)
	if err != nil {
		return nil, err
	}
	defer s.close()
	// The header is not trusted: start small and grow as data arrive,
	// unless the caller bounded the items; then allocate the header's size
	// at once, up to maxIDXPrealloc elements (growing a slice of hundreds
	// of megabytes costs copies and page faults) (docs/measurements.md).
	start := min(s.total, 1<<16)
	if maxItems > 0 {
		start = min(s.total, maxIDXPrealloc)
	}
	out := &IDX{Dims: s.dims, Data: make([]float64, 0, start)}
	buf := make([]byte, s.size*4096)
	for off := 0; off < s.total; {
		chunk := min(4096, s.total-off)
		if err := s.read(buf[:chunk*s.size], off); err != nil {
			return nil, err
		}
		out.Data = growFloats(out.Data, chunk)
		for i := 0; i < chunk; i++ {
			out.Data[off+i] = idxValue(s.code, buf[i*s.size:(i+1)*s.size])
		}
		off += chunk
	}
	if err := s.finish(); err != nil {
		return nil, err
	}
	return out, nil
}

// ReadIDX8 reads an IDX array of unsigned bytes (type 0x08, the format of
// MNIST's and Fashion-MNIST's images) as its bytes, gzip-compressed or
// not, under ReadIDX's rules (maxItems, memory that grows with the data,
// the gzip trailer checked); an array of any other type is refused.
func ReadIDX8(r io.Reader, maxItems int) (dims []int, data []uint8, err error) {
	s, err := openIDXStream(r, maxItems)
	if err != nil {
		return nil, nil, err
	}
	defer s.close()
	if s.code != 0x08 {
		return nil, nil, formatf("IDX: type code 0x%02x, want 0x08 (unsigned bytes)", s.code)
	}
	data = make([]uint8, 0, min(s.total, 1<<16))
	for off := 0; off < s.total; {
		chunk := min(1<<16, s.total-off)
		data = slices.Grow(data, chunk)[:off+chunk]
		if err := s.read(data[off:off+chunk], off); err != nil {
			return nil, nil, err
		}
		off += chunk
	}
	if err := s.finish(); err != nil {
		return nil, nil, err
	}
	return s.dims, data, nil
}

// idxStream is an IDX array's stream after its header: the type code,
// the element size, the dimensions (the first cut to the items asked
// for) and their product.
type idxStream struct {
	br    *bufio.Reader
	gz    *gzip.Reader
	ge    *gzErr
	code  byte
	size  int
	dims  []int
	total int
	whole bool // every item of the stream is read
}

// openIDXStream reads an IDX header from r, through gzip when r starts
// with gzip's magic bytes, and checks it: known type, nonzero dimensions,
// at most maxIDXElements elements after the cut to maxItems (> 0).
func openIDXStream(r io.Reader, maxItems int) (*idxStream, error) {
	s := &idxStream{br: bufio.NewReader(r), whole: true}
	if magic, err := s.br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		s.gz, err = gzip.NewReader(s.br)
		if err != nil {
			return nil, formatf("IDX: gzip: %v", err)
		}
		s.ge = &gzErr{r: s.gz}
		s.br = bufio.NewReader(s.ge)
	}
	fail := func(err error) (*idxStream, error) {
		s.close()
		return nil, err
	}
	var head [4]byte
	if _, err := io.ReadFull(s.br, head[:]); err != nil {
		return fail(s.short("header", err))
	}
	if head[0] != 0 || head[1] != 0 {
		return fail(formatf("IDX: bad magic %x", head[:2]))
	}
	size, ok := idxTypes[head[2]]
	if !ok {
		return fail(formatf("IDX: unknown type code 0x%02x", head[2]))
	}
	s.code, s.size = head[2], size
	nd := int(head[3])
	if nd == 0 {
		return fail(formatf("IDX: zero dimensions"))
	}
	s.dims, s.total = make([]int, nd), 1
	for i := range s.dims {
		var d uint32
		if err := binary.Read(s.br, binary.BigEndian, &d); err != nil {
			return fail(s.short("dimension list", err))
		}
		s.dims[i] = int(d)
		if s.dims[i] == 0 {
			return fail(formatf("IDX: dimension %d of %d is zero", i, nd))
		}
		if i == 0 && maxItems > 0 && s.dims[0] > maxItems {
			s.dims[0], s.whole = maxItems, false
		}
		if s.total > maxIDXElements/s.dims[i] {
			return fail(formatf("IDX: %v elements is more than kdual reads", s.dims))
		}
		s.total *= s.dims[i]
	}
	return s, nil
}

// short reports a read that ended early, as the gzip error when the
// stream itself is broken.
func (s *idxStream) short(what string, err error) error {
	if s.ge != nil && s.ge.err != nil {
		return formatf("IDX: gzip: %v (reading the %s)", s.ge.err, what)
	}
	return formatf("IDX: short %s: %v", what, err)
}

// read fills buf with the elements from element off on.
func (s *idxStream) read(buf []byte, off int) error {
	if _, err := io.ReadFull(s.br, buf); err != nil {
		if s.ge != nil && s.ge.err != nil {
			return formatf("IDX: gzip: %v (after %d of %d elements)", s.ge.err, off, s.total)
		}
		return formatf("IDX: data ends after %d of %d elements", off, s.total)
	}
	return nil
}

// finish reads a gzip stream whose every item was read to its end, which
// makes the gzip reader check its trailer.
func (s *idxStream) finish() error {
	if s.ge != nil && s.whole {
		if _, err := io.Copy(io.Discard, s.br); err != nil {
			return formatf("IDX: gzip: %v", err)
		}
	}
	return nil
}

func (s *idxStream) close() {
	if s.gz != nil {
		s.gz.Close()
	}
}

// gzErr remembers the first error of a gzip stream other than its clean
// end, so that a truncated or corrupted stream is told apart from a
// well-formed one that holds too little data.
type gzErr struct {
	r   io.Reader
	err error
}

func (g *gzErr) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	if err != nil && err != io.EOF && g.err == nil {
		g.err = err
	}
	return n, err
}

// FashionDir is where Debian's dataset-fashion-mnist package puts the data.
const FashionDir = "/usr/share/datasets/fashion-mnist"

// Fashion is a set of Fashion-MNIST images: X is n×784 with pixels scaled
// to [0, 1], Labels the class of each row (0…9).
type Fashion struct {
	X      *mat.Dense
	Labels []int
}

// LoadFashion reads the first n images (all when n ≤ 0) of the "train"
// (60 000) or "test" (10 000) split from dir (FashionDir when empty).
func LoadFashion(dir, split string, n int) (*Fashion, error) {
	if dir == "" {
		dir = FashionDir
	}
	prefix, err := fashionPrefix(split)
	if err != nil {
		return nil, err
	}
	images, err := readIDXFile(filepath.Join(dir, prefix+"-images-idx3-ubyte.gz"), n)
	if err != nil {
		return nil, err
	}
	labels, err := readIDXFile(filepath.Join(dir, prefix+"-labels-idx1-ubyte.gz"), n)
	if err != nil {
		return nil, err
	}
	if len(images.Dims) != 3 || len(labels.Dims) != 1 || images.Dims[0] != labels.Dims[0] {
		return nil, formatf("Fashion-MNIST: images %v and labels %v do not match", images.Dims, labels.Dims)
	}
	if n > 0 && images.Dims[0] < n {
		return nil, formatf("Fashion-MNIST %s has %d images, %d asked for", split, images.Dims[0], n)
	}
	rows, d := images.Dims[0], images.Dims[1]*images.Dims[2]
	for i := range images.Data {
		images.Data[i] /= 255
	}
	f := &Fashion{X: mat.NewDense(rows, d, images.Data), Labels: make([]int, rows)}
	for i, v := range labels.Data {
		f.Labels[i] = int(v)
	}
	return f, nil
}

// fashionPrefix names a split's files.
func fashionPrefix(split string) (string, error) {
	switch split {
	case "train":
		return "train", nil
	case "test":
		return "t10k", nil
	}
	return "", formatf("Fashion-MNIST: split %q, want train or test", split)
}

// LoadFashionLevels reads the first n images (all when n ≤ 0) of the
// "train" or "test" split from dir (FashionDir when empty) as their 8-bit
// levels, row-major n×784: LoadFashion's pixels times 255, without the
// labels and without a float64 copy.
func LoadFashionLevels(dir, split string, n int) ([]uint8, error) {
	if dir == "" {
		dir = FashionDir
	}
	prefix, err := fashionPrefix(split)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, prefix+"-images-idx3-ubyte.gz")
	fh, err := os.Open(path)
	if err != nil {
		return nil, missingf(path, err)
	}
	defer fh.Close()
	dims, data, err := ReadIDX8(fh, n)
	if err != nil {
		return nil, err
	}
	if len(dims) != 3 || dims[1]*dims[2] != 784 {
		return nil, formatf("Fashion-MNIST: images %v, want 28×28", dims)
	}
	if n > 0 && dims[0] < n {
		return nil, formatf("Fashion-MNIST %s has %d images, %d asked for", split, dims[0], n)
	}
	return data, nil
}

// growFloats returns s extended by k zeros. When it must move s it copies
// a million elements at a time: one copy of hundreds of megabytes into
// fresh memory cannot be preempted, and a garbage collection that starts
// meanwhile spins, signalling the copying goroutine, until it ends — a
// third of the processor time of a kdual run that loaded 20 000
// Fashion-MNIST images went there. Capacity doubles, as append's would.
func growFloats(s []float64, k int) []float64 {
	n := len(s) + k
	if n <= cap(s) {
		clear(s[len(s):n])
		return s[:n]
	}
	t := make([]float64, n, max(n, 2*cap(s)))
	const piece = 1 << 20
	for i := 0; i < len(s); i += piece {
		copy(t[i:min(i+piece, len(s))], s[i:])
	}
	return t
}

func readIDXFile(path string, maxItems int) (*IDX, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, missingf(path, err)
	}
	defer fh.Close()
	idx, err := ReadIDX(fh, maxItems)
	if err != nil {
		return nil, err
	}
	return idx, nil
}

// FashionAugmented returns n Fashion-MNIST images (pixels in [0, 1]): the
// 60 000 training images, then the 10 000 test images, then, past 70 000,
// copies of the training images in order (cycling) shifted by one pixel in
// a direction drawn from {up, down, left, right} (the vacated row or
// column is zero) with N(0, 0.01²) noise added to every pixel, both from
// the seeded generator: a deterministic stand-in for a larger image set.
func FashionAugmented(dir string, n int, seed uint64) (*mat.Dense, error) {
	if n < 1 {
		return nil, formatf("Fashion-MNIST augmented: n = %d", n)
	}
	if n <= 60000 {
		train, err := LoadFashion(dir, "train", n)
		if err != nil {
			return nil, err
		}
		return train.X, nil
	}
	out := mat.NewDense(n, 784, nil)
	raw := out.RawMatrix().Data
	err := fashionAugmented(dir, n, seed, func(i int, row []float64) { copy(raw[i*784:(i+1)*784], row) })
	if err != nil {
		return nil, err
	}
	return out, nil
}

// FashionAugmented32 writes the rows of FashionAugmented(dir, n, seed),
// rounded to float32, into dst (n×784, row-major), each minus shift[j]
// (nil: no shift) — the images centred near the origin where a float32
// kernel needs them — without ever holding the float64 matrix: a million
// images take 3.1 GB.
func FashionAugmented32(dir string, n int, seed uint64, shift []float64, dst []float32) error {
	const d = 784
	if n < 1 || len(dst) < n*d || (shift != nil && len(shift) != d) {
		return formatf("Fashion-MNIST augmented: n = %d, %d values for %d, %d shifts", n, len(dst), n*d, len(shift))
	}
	return fashionAugmented(dir, n, seed, func(i int, row []float64) {
		out := dst[i*d : (i+1)*d]
		for j, v := range row {
			if shift != nil {
				v -= shift[j]
			}
			out[j] = float32(v)
		}
	})
}

// fashionAugmented calls set(i, row) for the rows of FashionAugmented in
// order (row is reused).
func fashionAugmented(dir string, n int, seed uint64, set func(i int, row []float64)) error {
	const d, side = 784, 28
	train, err := LoadFashion(dir, "train", min(n, 60000))
	if err != nil {
		return err
	}
	src := train.X.RawMatrix().Data
	for i := 0; i < min(n, 60000); i++ {
		set(i, src[i*d:(i+1)*d])
	}
	if n <= 60000 {
		return nil
	}
	test, err := LoadFashion(dir, "test", min(n-60000, 10000))
	if err != nil {
		return err
	}
	tdata := test.X.RawMatrix().Data
	for i := 60000; i < min(n, 70000); i++ {
		set(i, tdata[(i-60000)*d:(i-59999)*d])
	}
	rng := NewRand(seed)
	dst := make([]float64, d)
	for i := 70000; i < n; i++ {
		img := src[((i-70000)%60000)*d:][:d]
		dr, dc := 0, 0
		switch rng.IntN(4) {
		case 0:
			dr = -1
		case 1:
			dr = 1
		case 2:
			dc = -1
		default:
			dc = 1
		}
		for r := 0; r < side; r++ {
			for c := 0; c < side; c++ {
				v := 0.0
				if sr, sc := r-dr, c-dc; sr >= 0 && sr < side && sc >= 0 && sc < side {
					v = img[sr*side+sc]
				}
				dst[r*side+c] = v + 0.01*rng.NormFloat64()
			}
		}
		set(i, dst)
	}
	return nil
}

// idxValue decodes one big-endian element of IDX type code t.
func idxValue(t byte, b []byte) float64 {
	switch t {
	case 0x08:
		return float64(b[0])
	case 0x09:
		return float64(int8(b[0]))
	case 0x0B:
		return float64(int16(binary.BigEndian.Uint16(b)))
	case 0x0C:
		return float64(int32(binary.BigEndian.Uint32(b)))
	case 0x0D:
		return float64(math.Float32frombits(binary.BigEndian.Uint32(b)))
	case 0x0E:
		return math.Float64frombits(binary.BigEndian.Uint64(b))
	}
	return 0
}
