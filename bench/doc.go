// Package bench holds kdual's benchmark problems and protocol.
//
// Problems (all seeded):
//   - RandSym: Q·diag(λ)·Qᵀ with a seeded random orthogonal Q and λ_i = 1/i,
//     a matrix whose spectrum is known exactly;
//   - FashionGram: the Gaussian kernel exp(−‖x−y‖²/(2σ²)) of the first n
//     Fashion-MNIST training images scaled to [0, 1] with centred columns,
//     σ by default the median pairwise distance of the first min(n, 1000)
//     images.
package bench
