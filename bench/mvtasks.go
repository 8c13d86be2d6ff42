package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/dataset"
	"github.com/kdual/kdual/status"
)

// MvTaskFor builds the multi-view task named data: the stand-ins "sketch"
// (train/test identities, 0: 650/544) and "poses" (0: 100/100), or two or
// more CSV files, one per view, each row the features and a last column
// with the identity; identities are split so that the top testFrac of them
// are the test part.
func MvTaskFor(data string, train, test int, testFrac float64, seed uint64) (*MvTask, error) {
	switch data {
	case "sketch":
		if train == 0 {
			train = 650
		}
		if test == 0 {
			test = 544
		}
		return SketchTask(train, test, seed)
	case "poses":
		if train == 0 {
			train = 100
		}
		if test == 0 {
			test = 100
		}
		return PoseTask(train, test, 3, seed)
	}
	files := strings.Split(data, ",")
	if !(testFrac > 0 && testFrac < 1) {
		return nil, fmt.Errorf("bench: test fraction %g, want 0 < f < 1: %w", testFrac, status.ErrInvalid)
	}
	if len(files) < 2 {
		return nil, fmt.Errorf("bench: multi-view data %q: want sketch, poses, or at least two CSV files: %w", data, status.ErrInvalid)
	}
	t := &MvTask{Name: "csv"}
	var views []*mat.Dense
	var labels [][]int
	all := map[int]bool{}
	for _, path := range files {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		tab, err := dataset.ReadCSV(f, dataset.CSVOptions{})
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		r, c := tab.X.Dims()
		if c < 2 {
			return nil, fmt.Errorf("%s: need features and a label column: %w", path, dataset.ErrFormat)
		}
		lab := make([]int, r)
		for i := range lab {
			lab[i] = int(tab.X.At(i, c-1))
			all[lab[i]] = true
		}
		views = append(views, mat.DenseCopyOf(tab.X.Slice(0, r, 0, c-1)))
		labels = append(labels, lab)
		t.ViewNames = append(t.ViewNames, filepath.Base(path))
	}
	// The top testFrac of the identities are the test part: the same
	// split by identities as the validation split of the experiments.
	held := len(all) - int(float64(len(all))*(1-testFrac))
	full := &MvTask{Name: "csv", Train: views, TrainLabels: labels, ViewNames: t.ViewNames, Context: t.Context}
	for j := 1; j < len(views); j++ {
		full.Pairs = append(full.Pairs, [2]int{0, j}, [2]int{j, 0})
	}
	out := full.split(held)
	out.Name = "csv"
	for j := range out.Train {
		if len(out.TrainLabels[j]) == 0 || len(out.TestLabels[j]) == 0 {
			return nil, fmt.Errorf("bench: view %d: the split leaves %d training and %d test rows: %w",
				j, len(out.TrainLabels[j]), len(out.TestLabels[j]), status.ErrInvalid)
		}
	}
	return out, nil
}
