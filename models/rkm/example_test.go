package rkm_test

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/models/rkm"
)

// A two-view RKM on lagged windows of a sine forecasts the next values.
func ExampleForecast() {
	series := make([]float64, 300)
	for i := range series {
		series[i] = math.Sin(0.2 * float64(i))
	}
	const lag = 6
	x, y, err := rkm.LagEmbed(series[:280], lag)
	if err != nil {
		fmt.Println(err)
		return
	}
	m := &rkm.Model{Views: []rkm.View{{Features: rkm.Identity{}}, {Features: rkm.Identity{}}}, Components: 2}
	if err := m.Fit([]*mat.Dense{x, y}); err != nil {
		fmt.Println(err)
		return
	}
	f, err := rkm.Forecast(m, series[:280], lag, 5)
	if err != nil {
		fmt.Println(err)
		return
	}
	mse, _ := rkm.Errors(f, series[280:285])
	fmt.Printf("5-step MSE below 1e-6: %v\n", mse < 1e-6)
	// Output:
	// 5-step MSE below 1e-6: true
}
