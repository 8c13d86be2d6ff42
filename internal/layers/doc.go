// Package layers holds the test of kdual's layer table (docs/architecture.md):
// which of kdual's packages each package may import.
package layers
