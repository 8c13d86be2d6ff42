package dataset

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Image transforms on square grey images stored row-major with values in
// [0, 1] (a row of a data matrix). Pixels outside the source image read 0.

// Affine resamples img (side×side) through the map taking output pixel p to
// source point A·(p − c) + c + shift, c the image centre, with bilinear
// interpolation.
func Affine(img []float64, side int, a [2][2]float64, shift [2]float64) []float64 {
	out := make([]float64, side*side)
	c := float64(side-1) / 2
	at := func(y, x int) float64 {
		if y < 0 || x < 0 || y >= side || x >= side {
			return 0
		}
		return img[y*side+x]
	}
	for y := 0; y < side; y++ {
		for x := 0; x < side; x++ {
			dx, dy := float64(x)-c, float64(y)-c
			sx := a[0][0]*dx + a[0][1]*dy + c + shift[0]
			sy := a[1][0]*dx + a[1][1]*dy + c + shift[1]
			x0, y0 := int(math.Floor(sx)), int(math.Floor(sy))
			fx, fy := sx-float64(x0), sy-float64(y0)
			out[y*side+x] = (1-fy)*((1-fx)*at(y0, x0)+fx*at(y0, x0+1)) + fy*((1-fx)*at(y0+1, x0)+fx*at(y0+1, x0+1))
		}
	}
	return out
}

// Rotate turns img by deg degrees about its centre (clockwise as displayed,
// with rows going down).
func Rotate(img []float64, side int, deg float64) []float64 {
	t := deg * math.Pi / 180
	// The output pixel p reads the source at R(−t)·p.
	return Affine(img, side, [2][2]float64{{math.Cos(t), math.Sin(t)}, {-math.Sin(t), math.Cos(t)}}, [2]float64{})
}

// Sobel returns the gradient magnitude of img, scaled so its largest value
// is 1 (an all-zero image stays zero).
func Sobel(img []float64, side int) []float64 {
	out := make([]float64, side*side)
	at := func(y, x int) float64 {
		if y < 0 || x < 0 || y >= side || x >= side {
			return 0
		}
		return img[y*side+x]
	}
	peak := 0.0
	for y := 0; y < side; y++ {
		for x := 0; x < side; x++ {
			gx := at(y-1, x+1) + 2*at(y, x+1) + at(y+1, x+1) - at(y-1, x-1) - 2*at(y, x-1) - at(y+1, x-1)
			gy := at(y+1, x-1) + 2*at(y+1, x) + at(y+1, x+1) - at(y-1, x-1) - 2*at(y-1, x) - at(y-1, x+1)
			v := math.Hypot(gx, gy)
			out[y*side+x] = v
			peak = math.Max(peak, v)
		}
	}
	if peak > 0 {
		for i := range out {
			out[i] /= peak
		}
	}
	return out
}

// Downsample2 averages 2×2 blocks: side×side to (side/2)×(side/2).
func Downsample2(img []float64, side int) []float64 {
	h := side / 2
	out := make([]float64, h*h)
	for y := 0; y < h; y++ {
		for x := 0; x < h; x++ {
			out[y*h+x] = 0.25 * (img[2*y*side+2*x] + img[2*y*side+2*x+1] + img[(2*y+1)*side+2*x] + img[(2*y+1)*side+2*x+1])
		}
	}
	return out
}

// SketchViews builds kdual's photo/sketch stand-in for CUFSF from images
// (rows of x, side×side): every row is one identity; view 1 is the image,
// view 2 an edge "sketch" of a deformed copy, the Sobel magnitude after a
// seeded random affine warp (rotation up to ±8°, scale 0.92–1.08 on each
// axis, shear up to ±0.08, shift up to ±1.5 pixels).
func SketchViews(x *mat.Dense, side int, seed uint64) (photos, sketches *mat.Dense, err error) {
	n, d := x.Dims()
	if d != side*side {
		return nil, nil, fmt.Errorf("dataset: SketchViews: %d columns are not %d×%d images: %w", d, side, side, ErrFormat)
	}
	rng := NewRand(seed)
	photos, sketches = mat.DenseCopyOf(x), mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		t := (rng.Float64()*2 - 1) * 8 * math.Pi / 180
		sx, sy := 0.92+0.16*rng.Float64(), 0.92+0.16*rng.Float64()
		sh := (rng.Float64()*2 - 1) * 0.08
		a := [2][2]float64{{math.Cos(t) / sx, math.Sin(t)/sx + sh}, {-math.Sin(t) / sy, math.Cos(t) / sy}}
		shift := [2]float64{(rng.Float64()*2 - 1) * 1.5, (rng.Float64()*2 - 1) * 1.5}
		sketches.SetRow(i, Sobel(Affine(x.RawRowView(i), side, a, shift), side))
	}
	return photos, sketches, nil
}

// PoseViews builds kdual's multi-pose stand-in for Multi-PIE from images
// (rows of x, side×side, one identity each): one view per angle, each with
// samples noisy copies of the rotated image (Gaussian pixel noise of
// standard deviation noise and a random shift of up to one pixel), then
// 2×2-averaged to (side/2)². labels[j] holds the identity (row index of x)
// of each row of views[j].
func PoseViews(x *mat.Dense, side int, angles []float64, samples int, noise float64, seed uint64) (views []*mat.Dense, labels [][]int, err error) {
	n, d := x.Dims()
	if d != side*side || side%2 != 0 || samples < 1 || len(angles) == 0 || !(noise >= 0) {
		return nil, nil, fmt.Errorf("dataset: PoseViews: %d columns, side %d, %d angles, %d samples, noise %g: %w", d, side, len(angles), samples, noise, ErrFormat)
	}
	rng := NewRand(seed)
	h := side / 2
	views, labels = make([]*mat.Dense, len(angles)), make([][]int, len(angles))
	for j, ang := range angles {
		v := mat.NewDense(n*samples, h*h, nil)
		for i := 0; i < n; i++ {
			rot := Rotate(x.RawRowView(i), side, ang)
			for k := 0; k < samples; k++ {
				shift := [2]float64{rng.Float64()*2 - 1, rng.Float64()*2 - 1}
				img := Affine(rot, side, [2][2]float64{{1, 0}, {0, 1}}, shift)
				for p := range img {
					img[p] = math.Min(1, math.Max(0, img[p]+noise*rng.NormFloat64()))
				}
				v.SetRow(i*samples+k, Downsample2(img, side))
				labels[j] = append(labels[j], i)
			}
		}
		views[j] = v
	}
	return views, labels, nil
}
