package eig

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/linalg"
)

// onePart is a Reduction over a single part that is not Local: its sums
// and maxima are the part's own values.
type onePart struct{}

func (onePart) Sum([]float64) error    { return nil }
func (onePart) MaxAbs([]float64) error { return nil }

// The distributed sign rule over one part is the local one: the first
// entry near each column's largest magnitude made positive — wherever
// that entry lies (the first row included), and with ties.
func TestSignFlipsOnePartIsLocal(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for trial := 0; trial < 20; trial++ {
		v := mat.NewDense(9, 4, nil)
		for i := 0; i < 9; i++ {
			for j := 0; j < 4; j++ {
				v.Set(i, j, r.NormFloat64())
			}
		}
		switch trial % 4 {
		case 1:
			v.Set(0, 1, -9) // the largest in the first row, negative
		case 2:
			v.Set(0, 2, 9) // … positive
		case 3:
			v.Set(0, 3, -9) // a tie: the first row's comes first
			v.Set(5, 3, 9)
		}
		got, err := signFlips(v, 0, 9, onePart{})
		require.NoError(t, err)
		require.Equal(t, linalg.SignFlips(v), got, "trial %d", trial)
	}
}
