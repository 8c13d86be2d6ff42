package rkm

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/internal/bigmem"
	"github.com/kdual/kdual/linalg"
)

// Standardizer maps a series to zero mean and unit variance with the
// training statistics.
type Standardizer struct {
	Mean float64 `json:"mean"`
	Std  float64 `json:"std"`
}

// FitStandardizer takes the mean and the (population) standard deviation of
// the training part of a series.
func FitStandardizer(train []float64) (Standardizer, error) {
	if len(train) < 2 {
		return Standardizer{}, invalidf("a series of %d values cannot be standardised", len(train))
	}
	if err := linalg.CheckFiniteSlice("rkm: series", train); err != nil {
		return Standardizer{}, err
	}
	s := Standardizer{}
	for _, v := range train {
		s.Mean += v
	}
	s.Mean /= float64(len(train))
	for _, v := range train {
		s.Std += (v - s.Mean) * (v - s.Mean)
	}
	s.Std = math.Sqrt(s.Std / float64(len(train)))
	if !(s.Std > 0) {
		return Standardizer{}, invalidf("the training series is constant")
	}
	return s, nil
}

// Apply standardises a copy of v.
func (s Standardizer) Apply(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = (x - s.Mean) / s.Std
	}
	return out
}

// Invert maps standardised values back to the original scale.
func (s Standardizer) Invert(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = x*s.Std + s.Mean
	}
	return out
}

// LagEmbed builds the NAR training pairs of a series x_1…x_T with lag p:
// inputs (x_ℓ, x_{ℓ−1}, …, x_{ℓ−p}) (newest first, p+1 values) and targets
// x_{ℓ+1}, for every ℓ with a full window and a next value: T − p − 1 pairs.
func LagEmbed(series []float64, p int) (inputs, targets *mat.Dense, err error) {
	if p < 0 {
		return nil, nil, invalidf("lag p = %d < 0", p)
	}
	n := len(series) - p - 1
	if n < 2 {
		return nil, nil, invalidf("a series of %d values gives %d pairs at lag %d", len(series), max(n, 0), p)
	}
	inputs, targets = mat.NewDense(n, p+1, nil), mat.NewDense(n, 1, nil)
	for i := 0; i < n; i++ {
		l := i + p // the newest value of the window
		row := inputs.RawRowView(i)
		for j := 0; j <= p; j++ {
			row[j] = series[l-j]
		}
		targets.Set(i, 0, series[l+1])
	}
	return inputs, targets, nil
}

// Forecast predicts steps values after history recursively with a two-view
// model (view 0: the lag window, view 1: the next value): each prediction
// becomes the newest value of the next window. history holds at least p+1
// values on the model's scale.
func Forecast(m *Model, history []float64, p, steps int) ([]float64, error) {
	if m == nil || !m.fitted {
		return nil, ErrNotFitted
	}
	if len(m.views) != 2 {
		return nil, invalidf("forecasting needs a two-view model (window, next value), have %d views", len(m.views))
	}
	if _, d := m.views[0].x.Dims(); d != p+1 {
		return nil, invalidf("the model's window has %d values, lag %d needs %d", d, p, p+1)
	}
	if len(history) < p+1 || steps < 1 {
		return nil, invalidf("history of %d values, lag %d, %d steps", len(history), p, steps)
	}
	if err := bigmem.Fits(fmt.Sprintf("rkm: a forecast of %d steps", steps), 8, steps); err != nil {
		return nil, err
	}
	window := mat.NewDense(1, p+1, nil)
	row := window.RawRowView(0)
	for j := 0; j <= p; j++ {
		row[j] = history[len(history)-1-j]
	}
	out := make([]float64, steps)
	xs := []*mat.Dense{window, nil}
	for t := 0; t < steps; t++ {
		y, err := m.Infer(1, xs)
		if err != nil {
			return nil, err
		}
		out[t] = y.At(0, 0)
		copy(row[1:], row[:p])
		row[0] = out[t]
	}
	return out, nil
}

// Errors returns the mean squared and mean absolute errors of a forecast
// over its first min(len(forecast), len(truth)) values; with none, both
// are NaN (a mean of nothing).
func Errors(forecast, truth []float64) (mse, mae float64) {
	n := min(len(forecast), len(truth))
	for i := 0; i < n; i++ {
		d := forecast[i] - truth[i]
		mse += d * d
		mae += math.Abs(d)
	}
	return mse / float64(n), mae / float64(n)
}
