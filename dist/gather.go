//go:build mpi

package dist

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/internal/bigmem"
	"github.com/kdual/kdual/mpi"
	"github.com/kdual/kdual/status"
)

// GatherRows returns on every rank the n×c matrix whose rows are the
// ranks' local rows (this rank's: local, op.Dim()×c) in the operator's
// layout: one Allgatherv.
func (o *Operator) GatherRows(local *mat.Dense) (*mat.Dense, error) {
	r, c := local.Dims()
	if r != o.Dim() || c < 1 {
		return nil, fmt.Errorf("dist: GatherRows: %d×%d rows, this rank holds %d: %w", r, c, o.Dim(), status.ErrInvalid)
	}
	mine := make([]float64, r*c)
	for i := 0; i < r; i++ {
		copy(mine[i*c:(i+1)*c], local.RawRowView(i)[:c])
	}
	ranks := len(o.layout.Starts) - 1
	counts, displs := make([]int, ranks), make([]int, ranks)
	for q := 0; q < ranks; q++ {
		lo, hi := o.layout.Rows(q)
		counts[q], displs[q] = (hi-lo)*c, lo*c
	}
	full := make([]float64, o.layout.N*c)
	if err := mpi.Allgatherv(mine, full, counts, displs); err != nil {
		return nil, err
	}
	return mat.NewDense(o.layout.N, c, full), nil
}

// RankFigures are every rank's figures, in rank order.
type RankFigures struct {
	OperatorBytes  []float64 // the operator's storage
	SentPerPass    []float64 // bytes handed to MPI per pass
	PeakRSS        []float64 // peak resident memory, bytes
	SecondsPerPass []float64 // seconds in MPI calls per pass
}

// Figures gathers every rank's figures on every rank (one Allgatherv).
func (o *Operator) Figures() (RankFigures, error) {
	st := o.Stats()
	passes := float64(max(st.Passes, 1))
	mine := []float64{float64(o.Bytes()), float64(st.BytesSent) / passes, float64(bigmem.PeakRSS()), st.CommSeconds / passes}
	const k = 4
	ranks := len(o.layout.Starts) - 1
	all := make([]float64, k*ranks)
	counts, displs := make([]int, ranks), make([]int, ranks)
	for r := range counts {
		counts[r], displs[r] = k, k*r
	}
	if err := mpi.Allgatherv(mine, all, counts, displs); err != nil {
		return RankFigures{}, err
	}
	var f RankFigures
	for r := 0; r < ranks; r++ {
		f.OperatorBytes = append(f.OperatorBytes, all[k*r])
		f.SentPerPass = append(f.SentPerPass, all[k*r+1])
		f.PeakRSS = append(f.PeakRSS, all[k*r+2])
		f.SecondsPerPass = append(f.SecondsPerPass, all[k*r+3])
	}
	return f, nil
}
