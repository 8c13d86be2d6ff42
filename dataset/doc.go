// Package dataset loads the data kdual's papers use and generates seeded
// synthetic data.
//
// Loaders: numeric CSV (optional header), IDX (the format of MNIST and
// Fashion-MNIST, plain or gzip), the SantaFe laser series, Iris and the
// 8×8 digits. Iris, digits and SantaFe are small and embedded in the
// package (from the files in data/); Fashion-MNIST is read from Debian's
// dataset-fashion-mnist package at FashionDir.
//
// Generators take a seed and give the same output for the same seed on every
// machine (math/rand/v2's PCG).
//
// Parsers never panic on malformed input: they return an error wrapping
// ErrFormat that says where the input went wrong. They are fuzzed
// (go test -fuzz=Fuzz ./dataset).
package dataset
