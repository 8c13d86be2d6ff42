package dataset_test

import (
	"fmt"
	"strings"

	"github.com/kdual/kdual/dataset"
)

// A CSV table with a header; the built-in iris data.
func ExampleReadCSV() {
	t, err := dataset.ReadCSV(strings.NewReader("a,b\n1,2\n3,4.5\n"), dataset.CSVOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	r, c := t.X.Dims()
	fmt.Println(t.Header, r, c, t.X.At(1, 1))
	iris, _ := dataset.Iris()
	r, c = iris.X.Dims()
	fmt.Println(r, c, iris.Classes)
	// Output:
	// [a b] 2 2 4.5
	// 150 4 [setosa versicolor virginica]
}
