package kmvda_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/models/kmvda"
)

// Two views of two classes (the second view a mixed copy of the first):
// linear multi-view discriminant analysis maps both into one space where
// each probe of view 1 finds its class among the gallery of view 0.
func ExampleModel() {
	v0 := mat.NewDense(8, 2, []float64{
		0, 0, 0.2, 0.1, 0.1, 0.3, 0.3, 0.2, // class 0
		3, 3, 3.2, 2.9, 2.8, 3.1, 3.1, 3.2, // class 1
	})
	v1 := mat.NewDense(8, 2, nil)
	v1.Mul(v0, mat.NewDense(2, 2, []float64{1, 2, -1, 1}))
	labels := []int{0, 0, 0, 0, 1, 1, 1, 1}
	m := &kmvda.Model{Kind: kmvda.Linear, Dim: 1}
	if err := m.Fit([]*mat.Dense{v0, v1}, [][]int{labels, labels}); err != nil {
		fmt.Println(err)
		return
	}
	g, _ := m.Transform(0, v0)
	p, _ := m.Transform(1, v1)
	rate, _ := kmvda.Rank1(g, p, labels, labels)
	fmt.Println("rank-1 rate:", rate)
	// Output:
	// rank-1 rate: 1
}
