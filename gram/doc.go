// Package gram owns kdual's data on its way to kernel entries: it prepares
// the rows of X once (checked finite, shifted by their mean for distance
// maps, their squared norms, an integer grid when the data lie on one, the
// float32 or 8-bit packed copies) and computes kernel matrices and blocks
// from them:
//
//   - GramMap, GramMapInto, CrossGramMap: the float64 Gram engine, level-3
//     BLAS (or native tile) products by panels with the element map fused
//     per panel, mirrored while recent;
//   - GramTiles32, GramTiles64Band, SymTiles32, SymTiles64: the half-stored
//     tiled forms and their products (SymMulUpper for float64 matrices);
//   - on data on an 8-bit grid (images) with a distance kernel, all of the
//     above by exact 8-bit integer products with the map in the same pass
//     where the integer path runs (GramOptions.Int8);
//   - KernelRows (NewKernelRows, NewKernelRowsInt8, NewKernelRows32): blocks
//     of the kernel on demand, for matrix-free operators, landmarks and new
//     points, by float64, float32 or exact 8-bit integer products.
//
// The engine does not know kernels: it takes an ElementMap, a plain value
// that package kernel builds from a Kernel (the map of the inner product
// given the squared norms: identity, exp of a scaled squared distance or
// distance, a power, tanh, the cosine, or exp of the L1 distance, which has
// no inner-product form and is computed directly). The code paths (BLAS or
// native products, float or integer products) follow the written rules of
// package paths; no timing decides anything unless Tune is called.
//
// Errors about bad input wrap ErrInvalid (status.ErrInvalid).
package gram
