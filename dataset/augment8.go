package dataset

import (
	"math"
	"math/rand/v2"

	"github.com/kdual/kdual/internal/par"
)

// augment8Block is the images per generator stream of FashionAugmented8:
// each block of this many generated images draws from its own stream
// (the seed and the block's index), so the images do not depend on how
// many goroutines make them.
const augment8Block = 4096

// FashionAugmented8 writes n 8-bit Fashion-MNIST images (levels 0 … 255,
// row-major n×784) into dst: the 60 000 training images, then the 10 000
// test images, then, past 70 000, copies of the training images in order
// (cycling), each moved as 8-bit image collections are: shifted by
// (dr, dc) pixels, dr and dc drawn from {−1, 0, 1}, rotated by an angle
// drawn uniformly from [−10°, 10°] about the image's centre (bilinear
// interpolation, zero outside the image), N(0, 2²) noise added in levels
// (by the normal quantiles of 16-bit uniforms), then rounded to the
// nearest level and clamped to 0 … 255. Seeded: the same seed gives the
// same bytes whatever the machine and threads (each block of
// augment8Block copies draws from its own stream).
func FashionAugmented8(dir string, n int, seed uint64, dst []uint8) error {
	if n < 1 || len(dst) < n*784 {
		return formatf("Fashion-MNIST augmented 8-bit: n = %d, %d bytes for %d", n, len(dst), n*784)
	}
	a, err := NewAugment8(dir, seed)
	if err != nil {
		return err
	}
	a.Fill(0, dst[:n*784])
	return nil
}

// Augment8 makes the images of FashionAugmented8 in any range, for sets
// larger than memory (kdual data augment writes them to a file chunk by
// chunk).
type Augment8 struct {
	base, test []uint8 // the training and test images' levels
	seed       uint64
}

// NewAugment8 reads Fashion-MNIST (dir "": the system's copy) for the
// images of FashionAugmented8 with seed.
func NewAugment8(dir string, seed uint64) (*Augment8, error) {
	train, err := LoadFashionLevels(dir, "train", 60000)
	if err != nil {
		return nil, err
	}
	test, err := LoadFashionLevels(dir, "test", 10000)
	if err != nil {
		return nil, err
	}
	return &Augment8{base: train, test: test, seed: seed}, nil
}

// Fill writes images [i0, i0 + len(dst)/784) into dst (whole images), in
// parallel: the same bytes as FashionAugmented8's images at those
// positions.
func (a *Augment8) Fill(i0 int, dst []uint8) {
	const d = 784
	n := len(dst) / d
	i1 := i0 + n
	for i := i0; i < min(i1, 70000); i++ {
		src := a.base[min(i, 59999)*d:]
		if i >= 60000 {
			src = a.test[(i-60000)*d:]
		}
		copy(dst[(i-i0)*d:(i-i0+1)*d], src[:d])
	}
	if i1 <= 70000 {
		return
	}
	first, last := (max(i0, 70000)-70000)/augment8Block, (i1-70000-1)/augment8Block
	par.Blocks(0, last-first+1, func(b0, b1 int) {
		for b := first + b0; b < first+b1; b++ {
			r := rand.New(rand.NewPCG(a.seed, 0x38626974<<20+uint64(b)))
			for i := 70000 + b*augment8Block; i < min(i1, 70000+(b+1)*augment8Block); i++ {
				// Every image of the block draws, those before i0 too: the
				// stream's position decides each image's bytes.
				img := a.moved(r, i)
				if i >= i0 {
					copy(dst[(i-i0)*d:(i-i0+1)*d], img[:])
				}
			}
		}
	})
}

// moved draws image i's motion and noise from r and returns the image.
// The source is read from a copy with a zero border of augPad pixels
// (every source point of a shift of at most one pixel and a rotation of
// at most 10° lies within 4 pixels of the image), so that the
// interpolation needs no bounds tests: the same values, products and sums
// as bilinear's on the unpadded image, in the same order.
func (a *Augment8) moved(r *rand.Rand, i int) (out [784]uint8) {
	const side, ps = 28, 28 + 2*augPad
	from := a.base[((i-70000)%60000)*784:][:784]
	var pad [(ps + 1) * ps]uint8 // one more row: the last row's c+1 reads
	for y := 0; y < side; y++ {
		copy(pad[(y+augPad)*ps+augPad:], from[y*side:(y+1)*side])
	}
	dr, dc := float64(r.IntN(3)-1), float64(r.IntN(3)-1)
	th := (r.Float64()*20 - 10) * math.Pi / 180
	cs, sn := math.Cos(th), math.Sin(th)
	const c0 = (side - 1) / 2.0
	var bits uint64
	for y := 0; y < side; y++ {
		py := float64(y) - dr - c0
		cpy, spy := cs*py, -sn*py
		for x := 0; x < side; x++ {
			// The source point of (y, x): undo the shift, then the
			// rotation about the centre (bilinear's arguments).
			px := float64(x) - dc - c0
			sy, sx := cpy+sn*px+c0, spy+cs*px+c0
			// Floors by truncation of positive values, as bilinear.
			const off = 4
			rr, cc := int(sy+off)-off, int(sx+off)-off
			fy, fx := sy-float64(rr), sx-float64(cc)
			k := (rr+augPad)*ps + cc + augPad
			va, vb := float64(pad[k]), float64(pad[k+1])
			ve, vf := float64(pad[k+ps]), float64(pad[k+ps+1])
			v := (1-fy)*((1-fx)*va+fx*vb) + fy*((1-fx)*ve+fx*vf)
			// The noise: four 16-bit uniforms a draw, each through the
			// normal quantile table.
			if x%4 == 0 {
				bits = r.Uint64()
			}
			v += float64(normal16[bits&0xffff])
			bits >>= 16
			// To the nearest level, clamped to 0 … 255: v + ½ truncated
			// (it floors v + ½ ≥ 0, and gives at most 0 below), then
			// clamped as an integer (no branch on the noise's sign).
			q := int(v + 0.5)
			q = max(q, 0)
			q = min(q, 255)
			out[y*side+x] = uint8(q)
		}
	}
	return out
}

// augPad is the zero border of moved's padded source, in pixels.
const augPad = 5

// normal16 holds the quantiles of N(0, 2²) at (i + ½)/65536: a 16-bit
// uniform drawn through it is the N(0, 2²) noise of FashionAugmented8, to
// a resolution of 2⁻¹⁶ in probability.
var normal16 = func() (t [1 << 16]float32) {
	for i := range t {
		t[i] = float32(2 * math.Sqrt2 * math.Erfinv(2*(float64(i)+0.5)/(1<<16)-1))
	}
	return
}()
