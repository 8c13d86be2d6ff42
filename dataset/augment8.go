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
// interpolation, zero outside the image), N(0, 2²) noise added in levels,
// then rounded to the nearest level and clamped to 0 … 255. Seeded: the
// same seed gives the same bytes whatever the machine and threads.
func FashionAugmented8(dir string, n int, seed uint64, dst []uint8) error {
	const d, side = 784, 28
	if n < 1 || len(dst) < n*d {
		return formatf("Fashion-MNIST augmented 8-bit: n = %d, %d bytes for %d", n, len(dst), n*d)
	}
	train, err := LoadFashion(dir, "train", min(n, 60000))
	if err != nil {
		return err
	}
	level := func(v float64) uint8 { return uint8(math.Round(v * 255)) } // exact: the files hold k/255
	src := train.X.RawMatrix().Data
	base := make([]uint8, len(src))
	for i, v := range src {
		base[i] = level(v)
	}
	copy(dst, base[:min(n, 60000)*d])
	if n <= 60000 {
		return nil
	}
	test, err := LoadFashion(dir, "test", min(n-60000, 10000))
	if err != nil {
		return err
	}
	for i, v := range test.X.RawMatrix().Data {
		dst[60000*d+i] = level(v)
	}
	if n <= 70000 {
		return nil
	}
	blocks := (n - 70000 + augment8Block - 1) / augment8Block
	par.For(0, blocks, nil, func(b0, b1 int) {
		img := make([]float64, d)
		for b := b0; b < b1; b++ {
			r := rand.New(rand.NewPCG(seed, 0x38626974<<20+uint64(b)))
			for i := 70000 + b*augment8Block; i < min(n, 70000+(b+1)*augment8Block); i++ {
				from := base[((i-70000)%60000)*d:][:d]
				dr, dc := float64(r.IntN(3)-1), float64(r.IntN(3)-1)
				th := (r.Float64()*20 - 10) * math.Pi / 180
				cs, sn := math.Cos(th), math.Sin(th)
				const c0 = (side - 1) / 2.0
				for y := 0; y < side; y++ {
					for x := 0; x < side; x++ {
						// The source point of (y, x): undo the shift, then
						// the rotation about the centre.
						py, px := float64(y)-dr-c0, float64(x)-dc-c0
						sy, sx := cs*py+sn*px+c0, -sn*py+cs*px+c0
						img[y*side+x] = bilinear(from, side, sy, sx)
					}
				}
				out := dst[i*d : (i+1)*d]
				for j, v := range img {
					out[j] = uint8(math.Max(0, math.Min(255, math.Round(v+2*r.NormFloat64()))))
				}
			}
		}
	})
	return nil
}

// bilinear interpolates the side×side image at (y, x), zero outside it.
func bilinear(img []uint8, side int, y, x float64) float64 {
	y0, x0 := math.Floor(y), math.Floor(x)
	fy, fx := y-y0, x-x0
	at := func(r, c int) float64 {
		if r < 0 || r >= side || c < 0 || c >= side {
			return 0
		}
		return float64(img[r*side+c])
	}
	r, c := int(y0), int(x0)
	return (1-fy)*((1-fx)*at(r, c)+fx*at(r, c+1)) + fy*((1-fx)*at(r+1, c)+fx*at(r+1, c+1))
}
