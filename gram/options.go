package gram

import (
	"context"
	"fmt"

	"github.com/kdual/kdual/native"
	"github.com/kdual/kdual/paths"
	"github.com/kdual/kdual/status"
)

// InnerPath chooses how the Gram engine computes inner products.
type InnerPath int

const (
	// InnerAuto uses the choice of package paths (Paths.InnerNative).
	InnerAuto InnerPath = iota
	// InnerBLAS uses OpenBLAS dsyrk/dgemm on panels of rows.
	InnerBLAS
	// InnerNative uses native.DotNT on 64×64 tiles (AVX-512 processors only).
	InnerNative
)

func (p InnerPath) String() string {
	switch p {
	case InnerAuto:
		return "auto"
	case InnerBLAS:
		return "blas"
	case InnerNative:
		return "native"
	}
	return fmt.Sprintf("InnerPath(%d)", int(p))
}

// MapPath chooses how the Gram engine evaluates exponential maps.
type MapPath int

const (
	// MapAuto uses the choice of package paths (Paths.MapNative).
	MapAuto MapPath = iota
	// MapGo evaluates math.Exp element by element.
	MapGo
	// MapNative uses the vectorised exponential of package native.
	MapNative
)

func (p MapPath) String() string {
	switch p {
	case MapAuto:
		return "auto"
	case MapGo:
		return "go"
	case MapNative:
		return "native"
	}
	return fmt.Sprintf("MapPath(%d)", int(p))
}

// GramOptions tunes the Gram engine. The zero value uses the paths in
// force (paths.Current: written rules unless a program set others).
type GramOptions struct {
	Inner InnerPath
	Map   MapPath
	// Products chooses the arithmetic of the inner products (float64 by
	// default).
	Products ProductPrecision
	// UpperOnly leaves the strict lower triangle of the storage zero
	// instead of mirroring the upper one into it: a valid mat.SymDense
	// (which reads the upper triangle only), for consumers that never read
	// the raw lower triangle (eig.Dense); it saves a pass over n² entries.
	UpperOnly bool
	// Workers is the number of goroutines of the element map, mirror and
	// native tiles (OpenBLAS uses its own threads); 0 means GOMAXPROCS.
	Workers int
	// Baseline runs the native kernels' SSE2 build even where AVX2 is
	// present (tests check that both builds agree).
	Baseline bool
	// Context, when not nil, is checked before every panel (at most
	// 512 rows of the Gram matrix, or one 256×2048 chunk of GramTiles32,
	// or one panel of a KernelRows product): when it has ended the build
	// stops and returns status.Cancelled(context.Cause(ctx)).
	Context context.Context
	// Progress, when not nil, is called after every panel with the
	// entries computed so far and the total (both in units of one kernel
	// entry), from the goroutine that called the build.
	Progress func(done, total int64)
	// SingleBlocks has float32 tiles (GramTiles32) multiply blocks in
	// float32 arithmetic (SymTiles32.SingleBlocks) whatever the products'
	// precision: for callers whose tolerance covers BlockRel (see
	// eig.Plan.SingleBlocks).
	SingleBlocks bool
	// Grid chooses whether distance kernels with float64 products run on
	// exact float32 products when the data lie on an integer grid (see
	// grid.go): GridAuto by package paths's rule (Paths.Grid).
	Grid GridPath
	// Int8 chooses whether kernel blocks of data on an 8-bit grid (every
	// column spanning at most 255 steps) of a distance kernel on the
	// native map path are computed by exact integer products and the map
	// in one pass (native.Int8Map, AVX-512 VNNI) instead of float32
	// products then the map: KernelRows's blocks, and the stored Gram
	// matrix (GramInto's panels, the float32 and float64 tiles), whose
	// build packs the levels on first use; with either Products,
	// KernelRows's blocks among the first rows of data whose head only lies
	// on an 8-bit grid (KernelRows.IntegerHead):
	// GridAuto where the processor has VNNI and package paths says so
	// (Paths.Int8); GridOn also without VNNI (a portable loop: for tests).
	Int8 GridPath
}

// GridPath chooses whether the Gram engine uses exact float32 inner
// products for data on an integer grid (8-bit images, counts; grid.go
// states the condition and the proof of exactness).
type GridPath int

const (
	// GridAuto uses them where package paths says so (Paths.Grid).
	GridAuto GridPath = iota
	// GridOff always computes float64 products.
	GridOff
	// GridOn uses them whenever the data qualify.
	GridOn
)

func (p GridPath) String() string {
	switch p {
	case GridAuto:
		return "auto"
	case GridOff:
		return "off"
	case GridOn:
		return "on"
	}
	return fmt.Sprintf("GridPath(%d)", int(p))
}

// gridWanted reports whether o lets a distance kernel with float64
// products try the integer grid.
func (o GramOptions) gridWanted() bool {
	return o.Products == ProductsFloat64 && o.Grid != GridOff
}

// gridFaster reports whether o takes the exact float32 products for data
// found on a grid: always for GridOn, else by the rule of package paths
// (Paths.Grid).
func (o GramOptions) gridFaster() bool {
	return o.Grid == GridOn || paths.Current().Grid
}

// int8Wanted reports whether o lets KernelRows take the integer path of
// an 8-bit grid: always for Int8 = GridOn, never for GridOff, else where
// the processor has VNNI and package paths says so (Paths.Int8).
func (o GramOptions) int8Wanted() bool {
	switch o.Int8 {
	case GridOn:
		return true
	case GridOff:
		return false
	}
	return native.HasInt8() && paths.Current().Int8
}

// cancelled returns the error of an ended context, nil while it runs.
func (o GramOptions) cancelled(where string) error {
	if o.Context == nil || o.Context.Err() == nil {
		return nil
	}
	return status.Cancelled(context.Cause(o.Context), where)
}

// build is the native build o asks for. The engine runs element maps and
// conversions, which have no AVX-512 forms: native.AVX2.
func (o GramOptions) build() native.Build {
	if o.Baseline {
		return native.Baseline()
	}
	return native.AVX2()
}

// ProductPrecision is the arithmetic of the Gram engine's inner products.
type ProductPrecision int

const (
	// ProductsFloat64 multiplies in float64 (dgemm): kernel entries are
	// correct to a few ulp of float64.
	ProductsFloat64 ProductPrecision = iota
	// ProductsFloat32 rounds the (shifted) data to float32 and multiplies
	// by OpenBLAS sgemm, at about twice dgemm's rate; the norms and the
	// map stay in float64. Each entry's error is bounded by
	// KernelRows.EntryBound (for the Gaussian kernel, relative to the
	// entry; the Laplace kernel's square root makes it weaker near zero
	// distance).
	ProductsFloat32
)

func (p ProductPrecision) String() string {
	switch p {
	case ProductsFloat64:
		return "float64"
	case ProductsFloat32:
		return "float32"
	}
	return fmt.Sprintf("ProductPrecision(%d)", int(p))
}

// resolve returns the concrete paths of o on this machine.
func (o GramOptions) resolve() (InnerPath, MapPath) {
	inner, mp := o.Inner, o.Map
	if inner == InnerAuto || mp == MapAuto {
		c := paths.Current()
		if inner == InnerAuto {
			inner = InnerBLAS
			if c.InnerNative {
				inner = InnerNative
			}
		}
		if mp == MapAuto {
			mp = MapGo
			if c.MapNative {
				mp = MapNative
			}
		}
	}
	if inner == InnerNative && !native.HasDotKernel() {
		inner = InnerBLAS
	}
	return inner, mp
}
