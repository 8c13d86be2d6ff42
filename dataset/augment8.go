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
	train, err := LoadFashion(dir, "train", 60000)
	if err != nil {
		return nil, err
	}
	test, err := LoadFashion(dir, "test", 10000)
	if err != nil {
		return nil, err
	}
	level := func(v float64) uint8 { return uint8(math.Round(v * 255)) } // exact: the files hold k/255
	a := &Augment8{seed: seed}
	for _, m := range []struct {
		src []float64
		dst *[]uint8
	}{{train.X.RawMatrix().Data, &a.base}, {test.X.RawMatrix().Data, &a.test}} {
		*m.dst = make([]uint8, len(m.src))
		for i, v := range m.src {
			(*m.dst)[i] = level(v)
		}
	}
	return a, nil
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
func (a *Augment8) moved(r *rand.Rand, i int) (out [784]uint8) {
	const side = 28
	from := a.base[((i-70000)%60000)*784:][:784]
	dr, dc := float64(r.IntN(3)-1), float64(r.IntN(3)-1)
	th := (r.Float64()*20 - 10) * math.Pi / 180
	cs, sn := math.Cos(th), math.Sin(th)
	const c0 = (side - 1) / 2.0
	var bits uint64
	for y := 0; y < side; y++ {
		for x := 0; x < side; x++ {
			// The source point of (y, x): undo the shift, then the
			// rotation about the centre.
			py, px := float64(y)-dr-c0, float64(x)-dc-c0
			v := bilinear(from, side, cs*py+sn*px+c0, -sn*py+cs*px+c0)
			// The noise: four 16-bit uniforms a draw, each through the
			// normal quantile table.
			if (y*side+x)%4 == 0 {
				bits = r.Uint64()
			}
			v += float64(normal16[bits&0xffff])
			bits >>= 16
			switch {
			case v < 0:
				v = 0
			case v > 255:
				v = 255
			}
			out[y*side+x] = uint8(v + 0.5) // to the nearest level (v ≥ 0: truncation floors)
		}
	}
	return out
}

// normal16 holds the quantiles of N(0, 2²) at (i + ½)/65536: a 16-bit
// uniform drawn through it is the N(0, 2²) noise of FashionAugmented8, to
// a resolution of 2⁻¹⁶ in probability.
var normal16 = func() (t [1 << 16]float32) {
	for i := range t {
		t[i] = float32(2 * math.Sqrt2 * math.Erfinv(2*(float64(i)+0.5)/(1<<16)-1))
	}
	return
}()

// bilinear interpolates the side×side image at (y, x), zero outside it.
func bilinear(img []uint8, side int, y, x float64) float64 {
	// Floors by truncation of positive values (the points lie within a
	// few pixels of the image: y, x > −4).
	const off = 4
	r, c := int(y+off)-off, int(x+off)-off
	fy, fx := y-float64(r), x-float64(c)
	var a, b, e, f float64 // (r, c), (r, c+1), (r+1, c), (r+1, c+1)
	if r >= 0 && r < side {
		row := img[r*side : (r+1)*side]
		if c >= 0 && c < side {
			a = float64(row[c])
		}
		if c+1 >= 0 && c+1 < side {
			b = float64(row[c+1])
		}
	}
	if r+1 >= 0 && r+1 < side {
		row := img[(r+1)*side : (r+2)*side]
		if c >= 0 && c < side {
			e = float64(row[c])
		}
		if c+1 >= 0 && c+1 < side {
			f = float64(row[c+1])
		}
	}
	return (1-fy)*((1-fx)*a+fx*b) + fy*((1-fx)*e+fx*f)
}
