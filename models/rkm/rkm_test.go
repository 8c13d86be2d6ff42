package rkm

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/dataset"
	"github.com/kdual/kdual/eig"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/status"
	"github.com/kdual/kdual/stiefel"
)

const sinesP, sinesS = 40, 4

// sines returns the standardised training pairs and the held-out truth of
// the paper's sum-of-sines setting (400 train, 100 test, p = 40).
func sines(t *testing.T) (x, y *mat.Dense, train, test []float64) {
	t.Helper()
	series := dataset.SumOfSines(500)
	st, err := FitStandardizer(series[:400])
	require.NoError(t, err)
	train, test = st.Apply(series[:400]), st.Apply(series[400:])
	x, y, err = LagEmbed(train, sinesP)
	require.NoError(t, err)
	return x, y, train, test
}

func linearModel(setting Setting, training Training) *Model {
	return &Model{Views: []View{{Features: Identity{}}, {Features: Identity{}}}, Components: sinesS,
		Setting: setting, Training: training, Rotate: true,
		Stiefel: stiefel.Settings{Tol: 1e-10, MaxIter: 20000}}
}

func fitForecast(t *testing.T, m *Model) []float64 {
	t.Helper()
	x, y, train, test := sines(t)
	require.NoError(t, m.Fit([]*mat.Dense{x, y}))
	f, err := Forecast(m, train, sinesP, len(test))
	require.NoError(t, err)
	return f
}

func relDiff(a, b []float64) float64 {
	num, den := 0.0, 0.0
	for i := range a {
		num += (a[i] - b[i]) * (a[i] - b[i])
		den += b[i] * b[i]
	}
	return math.Sqrt(num / den)
}

// columnsEqualUpToSign compares matrices column by column, up to sign.
func columnsEqualUpToSign(t *testing.T, a, b *mat.Dense, tol float64) {
	t.Helper()
	r, c := a.Dims()
	for j := 0; j < c; j++ {
		sign := 1.0
		if mat.Dot(a.ColView(j), b.ColView(j)) < 0 {
			sign = -1
		}
		scale := mat.Norm(b.ColView(j), math.Inf(1))
		for i := 0; i < r; i++ {
			require.InDelta(t, b.At(i, j), sign*a.At(i, j), tol*scale, "column %d", j)
		}
	}
}

// Primal and dual eig training: the same latent components up to sign, the
// same forecasts, and U_v = Φ_vᵀH.
func TestPrimalDualEigAgree(t *testing.T) {
	p, d := linearModel(Primal, Eig), linearModel(Dual, Eig)
	fp, fd := fitForecast(t, p), fitForecast(t, d)
	require.Less(t, relDiff(fp, fd), 1e-8)
	hp, err := p.H()
	require.NoError(t, err)
	hd, err := d.H()
	require.NoError(t, err)
	columnsEqualUpToSign(t, hp, hd, 1e-8)
	for v := 0; v < 2; v++ {
		up, err := p.U(v)
		require.NoError(t, err)
		ud, err := d.U(v)
		require.NoError(t, err)
		columnsEqualUpToSign(t, ud, up, 1e-8)
	}
	gp, _ := p.Gamma()
	gd, _ := d.Gamma()
	for i := 0; i < sinesS; i++ {
		require.InDelta(t, gd.At(i, i), gp.At(i, i), 1e-9*gd.At(0, 0))
	}
	// The forecast is good: the series is nearly periodic.
	_, _, _, test := sines(t)
	mse, _ := Errors(fp, test)
	require.Less(t, mse, 0.05)
}

// Stiefel training with rotation gives a diagonal Γ equal to Λ and
// forecasts within 1e-4 of the eig solution, primal and dual; without
// rotation Γ' is not diagonal but the forecasts are the same.
func TestStiefelMatchesEig(t *testing.T) {
	ref := fitForecast(t, linearModel(Dual, Eig))
	eigModel := linearModel(Dual, Eig)
	fitForecast(t, eigModel)
	lam, _ := eigModel.Gamma()
	for _, setting := range []Setting{Primal, Dual} {
		m := linearModel(setting, Stiefel)
		f := fitForecast(t, m)
		require.Less(t, relDiff(f, ref), 1e-4, "%v", setting)
		g, _ := m.Gamma()
		for i := 0; i < sinesS; i++ {
			require.InDelta(t, lam.At(i, i), g.At(i, i), 1e-6*lam.At(0, 0))
			for j := 0; j < sinesS; j++ {
				if i != j {
					require.InDelta(t, 0, g.At(i, j), 1e-12*lam.At(0, 0))
				}
			}
		}
		m.Rotate = false
		f2 := fitForecast(t, m)
		require.Less(t, relDiff(f2, ref), 1e-4)
		g2, _ := m.Gamma()
		off := 0.0
		for i := 0; i < sinesS; i++ {
			for j := 0; j < sinesS; j++ {
				if i != j {
					off = math.Max(off, math.Abs(g2.At(i, j)))
				}
			}
		}
		require.Greater(t, off, 1e-3*lam.At(0, 0), "a random start leaves Γ' non-diagonal")
	}
}

// Without U = ŨΛ^{1/2} the primal forecast breaks (the paper's Fig. 7).
func TestNoRescaleBreaksForecast(t *testing.T) {
	_, _, _, test := sines(t)
	good, _ := Errors(fitForecast(t, linearModel(Primal, Eig)), test)
	m := linearModel(Primal, Eig)
	m.NoRescale = true
	bad, _ := Errors(fitForecast(t, m), test)
	require.Greater(t, bad, 10*good, "mse %g against %g", bad, good)
}

// Inference of a missing view on held-out points equals the closed form
// h* = (Γ − HᵀK_yH)^{-1}Hᵀk_x, ŷ = Y_cᵀHh* + ȳ, and satisfies the
// stationarity conditions h = Γ^{-1}Σ_v U_vᵀφ_v with φ_y = U_y h.
func TestInferClosedForm(t *testing.T) {
	x, y, _, _ := sines(t)
	xTrain, yTrain := mat.DenseCopyOf(x.Slice(0, 300, 0, sinesP+1)), mat.DenseCopyOf(y.Slice(0, 300, 0, 1))
	xTest := mat.DenseCopyOf(x.Slice(300, 359, 0, sinesP+1))
	for _, setting := range []Setting{Primal, Dual} {
		m := linearModel(setting, Eig)
		require.NoError(t, m.Fit([]*mat.Dense{xTrain, yTrain}))
		got, err := m.Infer(1, []*mat.Dense{xTest, nil})
		require.NoError(t, err)

		xc, yc := mat.DenseCopyOf(xTrain), mat.DenseCopyOf(yTrain)
		xm, ym := linalg.CenterColumns(xc), linalg.CenterColumns(yc)
		h, _ := m.H()
		g, _ := m.Gamma()
		var ky, kyh, a mat.Dense
		ky.Mul(yc, yc.T())
		kyh.Mul(&ky, h)
		a.Mul(h.T(), &kyh)
		a.Sub(g, &a)
		tc := mat.DenseCopyOf(xTest)
		for i := 0; i < 59; i++ {
			for j := range xm {
				tc.Set(i, j, tc.At(i, j)-xm[j])
			}
		}
		var kx, rhs, hs mat.Dense
		kx.Mul(xc, tc.T()) // n×m: columns are k_x(x*)
		rhs.Mul(h.T(), &kx)
		require.NoError(t, hs.Solve(&a, &rhs))
		var yhat mat.Dense
		var ych mat.Dense
		ych.Mul(yc.T(), h)
		yhat.Mul(&ych, &hs)
		for i := 0; i < 59; i++ {
			require.InDelta(t, yhat.At(0, i)+ym[0], got.At(i, 0), 1e-10, "%v point %d", setting, i)
		}
		// Stationarity: Γh = U_xᵀφ_x + U_yᵀφ_y at φ_y = U_y h.
		ux, _ := m.U(0)
		uy, _ := m.U(1)
		for i := 0; i < 59; i++ {
			hi := hs.ColView(i)
			var gh, lhs, py, t2 mat.VecDense
			gh.MulVec(g, hi)
			lhs.MulVec(ux.T(), tc.RowView(i))
			py.MulVec(uy, hi)
			t2.MulVec(uy.T(), &py)
			lhs.AddVec(&lhs, &t2)
			lhs.SubVec(&lhs, &gh)
			require.Less(t, mat.Norm(&lhs, 2), 1e-9*mat.Norm(&gh, 2))
		}
	}
}

// An implicit kernel view trains in the dual only, and infers through the
// kernel smoother; RFF views go both ways with the same results.
func TestImplicitAndRFFViews(t *testing.T) {
	x, y, train, _ := sines(t)
	m := &Model{Views: []View{{Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 4}}, {Features: Identity{}}}, Components: 6}
	require.NoError(t, m.Fit([]*mat.Dense{x, y}))
	require.Equal(t, "dual", m.Info().Setting)
	f, err := Forecast(m, train, sinesP, 5)
	require.NoError(t, err)
	require.Len(t, f, 5)
	// One value cannot determine six latent variables: a clear error.
	_, err = m.Infer(0, []*mat.Dense{nil, y})
	require.ErrorIs(t, err, ErrSingular)
	// Two kernel views: the next value (Gaussian kernel) is inferred from
	// the window through the kernel smoother, close to the linear model's
	// prediction on training points.
	k2 := &Model{Views: []View{{Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 4}},
		{Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 0.3}}}, Components: 6}
	require.NoError(t, k2.Fit([]*mat.Dense{x, y}))
	yk, err := k2.Infer(1, []*mat.Dense{x, nil})
	require.NoError(t, err)
	var d mat.Dense
	d.Sub(yk, y)
	require.Less(t, mat.Norm(&d, 2)/mat.Norm(y, 2), 0.75) // the training mean scores 1

	p := &Model{Views: m.Views, Components: 6, Setting: Primal}
	require.ErrorIs(t, p.Fit([]*mat.Dense{x, y}), status.ErrInvalid)
}

func TestChooseSetting(t *testing.T) {
	require.Equal(t, Dual, ChooseSetting(100, 1000, true))
	require.Equal(t, Primal, ChooseSetting(1000, 100, true))
	require.Equal(t, Dual, ChooseSetting(1000, 100, false))
	m := linearModel(Auto, Eig)
	x, y, _, _ := sines(t)
	require.NoError(t, m.Fit([]*mat.Dense{x, y}))
	require.Equal(t, "primal", m.Info().Setting) // n = 359 > df = 42
}

func TestErrors(t *testing.T) {
	x, y, _, _ := sines(t)
	m := linearModel(Dual, Eig)
	require.ErrorIs(t, m.Fit([]*mat.Dense{x}), status.ErrInvalid)
	require.ErrorIs(t, m.Fit([]*mat.Dense{x, mat.NewDense(10, 1, nil)}), status.ErrInvalid)
	bad := mat.DenseCopyOf(x)
	bad.Set(2, 2, math.Inf(1))
	require.ErrorIs(t, m.Fit([]*mat.Dense{bad, y}), status.ErrInvalid)
	m.Components = 359
	require.ErrorIs(t, m.Fit([]*mat.Dense{x, y}), status.ErrInvalid)
	m.Components = 0
	err := m.Fit([]*mat.Dense{x, y})
	require.ErrorIs(t, err, status.ErrInvalid)
	require.ErrorContains(t, err, "s = 0: want 1 ≤ s < n = 359", "refused by the model, before any solver")
	m.Components = 4
	_, err = m.Infer(1, []*mat.Dense{x, nil})
	require.ErrorIs(t, err, ErrNotFitted)
	require.NoError(t, m.Fit([]*mat.Dense{x, y}))
	_, err = m.Infer(1, []*mat.Dense{mat.NewDense(3, 5, nil), nil})
	require.ErrorIs(t, err, status.ErrInvalid)
	_, err = m.Infer(2, []*mat.Dense{x, nil})
	require.ErrorIs(t, err, status.ErrInvalid)
	_, err = Forecast(m, []float64{1, 2}, sinesP, 3)
	require.ErrorIs(t, err, status.ErrInvalid)
	_, _, err = LagEmbed([]float64{1, 2, 3}, 5)
	require.ErrorIs(t, err, status.ErrInvalid)
	_, err = FitStandardizer([]float64{2, 2, 2})
	require.ErrorIs(t, err, status.ErrInvalid)
}

// The test kernel rows of an implicit view are centred like the training
// kernel: k_c(y, y_j) = k(y, y_j) − mean_l k(y, y_l) − mean_l k(y_j, y_l)
// + mean_{l,m} k(y_l, y_m), written out here for a Gaussian view.
func TestImplicitViewTestKernelCentred(t *testing.T) {
	x, y, _, _ := sines(t)
	xTrain, yTrain := mat.DenseCopyOf(x.Slice(0, 300, 0, sinesP+1)), mat.DenseCopyOf(y.Slice(0, 300, 0, 1))
	yTest := mat.DenseCopyOf(y.Slice(300, 320, 0, 1))
	k := kernel.Kernel{Kind: kernel.Gaussian, Sigma: 0.5}
	m := &Model{Views: []View{{Features: Identity{}}, {Kernel: k}}, Components: 3}
	require.NoError(t, m.Fit([]*mat.Dense{xTrain, yTrain}))
	g, err := kernel.Gram(yTrain, k)
	require.NoError(t, err)
	cross, err := kernel.CrossGram(yTest, yTrain, k)
	require.NoError(t, err)
	rowMean := make([]float64, 300)
	grand := 0.0
	for j := 0; j < 300; j++ {
		for l := 0; l < 300; l++ {
			rowMean[j] += g.At(j, l) / 300
		}
		grand += rowMean[j] / 300
	}
	kc, err := m.testKernel(1, yTest)
	require.NoError(t, err)
	for i := 0; i < 20; i++ {
		testMean := 0.0
		for l := 0; l < 300; l++ {
			testMean += cross.At(i, l) / 300
		}
		for j := 0; j < 300; j++ {
			want := cross.At(i, j) - testMean - rowMean[j] + grand
			require.InDelta(t, want, kc.At(i, j), 1e-12, "(%d,%d)", i, j)
		}
	}
}

// FitContext: a context cancelled during Stiefel training keeps the
// feasible point reached as a partial model (Forecast works) with status
// Stopped; cancelled before an eigensolve, nothing is fitted.
func TestFitContextStops(t *testing.T) {
	x, y, train, _ := sines(t)
	ctx, cancel := context.WithCancel(context.Background())
	m := linearModel(Dual, Stiefel)
	m.Stiefel.Callback = func(k int, _ float64, _ *mat.Dense) bool {
		if k == 25 {
			cancel()
		}
		return false
	}
	err := m.FitContext(ctx, []*mat.Dense{x, y})
	require.ErrorIs(t, err, status.ErrStopped)
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, status.Stopped, m.Info().Status.Code)
	require.Equal(t, 25, m.Info().Iterations)
	require.True(t, m.Fitted())
	f, err := Forecast(m, train, sinesP, 5)
	require.NoError(t, err)
	require.Len(t, f, 5)

	e := linearModel(Dual, Eig)
	e.Solver = eig.Lanczos{}
	err = e.FitContext(ctx, []*mat.Dense{x, y})
	require.ErrorIs(t, err, status.ErrStopped)
	require.False(t, e.Fitted())
	require.Equal(t, status.Stopped, e.Info().Status.Code)
	require.NoError(t, e.FitContext(context.Background(), []*mat.Dense{x, y}))
}

// A single sine has lag-embedding rank 2: asking for 4 components is a
// status.RankError naming rank 2, in the primal and the dual setting.
func TestRankBelowComponents(t *testing.T) {
	series := make([]float64, 200)
	for i := range series {
		series[i] = math.Sin(0.3 * float64(i))
	}
	x, y, err := LagEmbed(series, 10)
	require.NoError(t, err)
	for _, setting := range []Setting{Primal, Dual} {
		m := &Model{Views: []View{{Features: Identity{}}, {Features: Identity{}}}, Components: 4, Setting: setting}
		err := m.Fit([]*mat.Dense{x, y})
		var re *status.RankError
		require.ErrorAs(t, err, &re, "%v", setting)
		require.Equal(t, 2, re.Rank)
		require.Equal(t, 4, re.Asked)
		require.ErrorIs(t, err, status.ErrInvalid)
	}
}

// The time-series helpers against their definitions: the standardiser is
// the training series' mean and population standard deviation (two values
// are enough), Apply and Invert are inverse maps; LagEmbed's pair i is the
// window (x_{i+p}, …, x_i), newest first, and the target x_{i+p+1}.
func TestTimeSeriesHelpers(t *testing.T) {
	s, err := FitStandardizer([]float64{1, 3})
	require.NoError(t, err)
	require.Equal(t, 2.0, s.Mean)
	require.Equal(t, 1.0, s.Std)
	series := []float64{2, 4, 4, 4, 5, 5, 7, 9}
	s, err = FitStandardizer(series)
	require.NoError(t, err)
	require.InDelta(t, 5.0, s.Mean, 1e-15)
	require.InDelta(t, 2.0, s.Std, 1e-15) // the textbook example
	z := s.Apply(series)
	require.InDelta(t, -1.5, z[0], 1e-15)
	require.InDelta(t, 2.0, z[7], 1e-15)
	require.InDeltaSlice(t, series, s.Invert(z), 1e-14)
	require.Equal(t, 2.0, series[0], "Apply works on a copy")
	_, err = FitStandardizer([]float64{1})
	require.ErrorIs(t, err, status.ErrInvalid)

	x := []float64{10, 11, 12, 13, 14, 15}
	in, tg, err := LagEmbed(x, 2)
	require.NoError(t, err)
	r, c := in.Dims()
	require.Equal(t, []int{3, 3}, []int{r, c}) // T − p − 1 = 3 pairs of p + 1 values
	for i := 0; i < r; i++ {
		require.Equal(t, []float64{x[i+2], x[i+1], x[i]}, in.RawRowView(i), "pair %d", i)
		require.Equal(t, x[i+3], tg.At(i, 0), "pair %d", i)
	}
	in, tg, err = LagEmbed(x[:3], 0) // lag 0: (x_ℓ) → x_{ℓ+1}
	require.NoError(t, err)
	require.Equal(t, []float64{10, 11}, in.RawMatrix().Data)
	require.Equal(t, []float64{11, 12}, tg.RawMatrix().Data)
	_, _, err = LagEmbed(x[:3], 1) // one pair only
	require.ErrorIs(t, err, status.ErrInvalid)
}

// Names of settings and trainings, every value and one past the end; a
// forecast needs p + 1 values of history and at least one step.
func TestNamesAndForecastBounds(t *testing.T) {
	require.Equal(t, []string{"auto", "primal", "dual", "Setting(3)", "Setting(-1)"},
		[]string{Setting(0).String(), Primal.String(), Dual.String(), Setting(3).String(), Setting(-1).String()})
	require.Equal(t, []string{"eig", "stiefel", "Training(2)", "Training(-1)"},
		[]string{Eig.String(), Stiefel.String(), Training(2).String(), Training(-1).String()})
	m := linearModel(Dual, Eig)
	x, y, train, _ := sines(t)
	require.NoError(t, m.Fit([]*mat.Dense{x, y}))
	_, err := Forecast(m, train[:sinesP], sinesP, 3)
	require.ErrorIs(t, err, status.ErrInvalid)
	f, err := Forecast(m, train[:sinesP+1], sinesP, 3)
	require.NoError(t, err)
	require.Len(t, f, 3)
	_, err = Forecast(m, train, sinesP, 0)
	require.ErrorIs(t, err, status.ErrInvalid)
	// More steps than the forecast's values fit in memory: refused at once.
	_, err = Forecast(m, train, sinesP, math.MaxInt/2)
	require.ErrorIs(t, err, status.ErrInvalid)
	_, err = Forecast(m, train, sinesP+1, 3)
	require.ErrorIs(t, err, status.ErrInvalid)
	require.Contains(t, err.Error(), fmt.Sprintf("window has %d values, lag %d needs %d", sinesP+1, sinesP+1, sinesP+2))
}

// Invalid Stiefel settings are an error of Fit in both settings (not a
// model silently left without training).
func TestBadStiefelSettings(t *testing.T) {
	x, y, _, _ := sines(t)
	for _, setting := range []Setting{Primal, Dual} {
		m := linearModel(setting, Stiefel)
		m.Stiefel.LR = -1
		err := m.Fit([]*mat.Dense{x, y})
		require.ErrorIs(t, err, status.ErrInvalid, "%v", setting)
		require.False(t, m.Fitted(), "%v", setting)
	}
}

// The Stiefel objective is f(A) = −½·tr(AᵀBA) with gradient −B·A, for the
// B that apply multiplies by.
func TestTraceObjectiveClosedForm(t *testing.T) {
	b := mat.NewDense(4, 4, []float64{
		4, 1, 0, -1,
		1, 3, 2, 0,
		0, 2, 5, 1,
		-1, 0, 1, 2,
	})
	a := mat.NewDense(4, 2, []float64{0.5, -1, 1, 0.25, -0.5, 2, 1.5, 0})
	o := traceObjective{apply: func(dst, x *mat.Dense) { dst.Mul(b, x) }}
	grad := mat.NewDense(4, 2, nil)
	f := o.Eval(a, grad)
	var ba, atba mat.Dense
	ba.Mul(b, a)
	atba.Mul(a.T(), &ba)
	require.InDelta(t, -0.5*mat.Trace(&atba), f, 1e-14)
	ba.Scale(-1, &ba)
	require.True(t, mat.EqualApprox(&ba, grad, 1e-14))
}

// Errors are the means over the pairs both series have: squared and
// absolute differences; NaN over no pair.
func TestErrorsMeans(t *testing.T) {
	mse, mae := Errors([]float64{1, 2, 3, 100}, []float64{1, 1, 1})
	require.InDelta(t, 5.0/3, mse, 1e-15)
	require.InDelta(t, 1.0, mae, 1e-15)
	mse, mae = Errors([]float64{2}, []float64{-2, 50})
	require.Equal(t, [2]float64{16, 4}, [2]float64{mse, mae})
	mse, mae = Errors(nil, []float64{1})
	require.True(t, math.IsNaN(mse) && math.IsNaN(mae))
}

// diagonalMean on explicit features φ_i = φ_c,i + μ (the centred rows and
// their mean, as a fit keeps them) is the mean of ‖φ_i‖², the uncentred
// kernel's mean diagonal, formed here from the rows themselves.
func TestDiagonalMeanExplicit(t *testing.T) {
	const n, d = 9, 4
	raw := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			raw.Set(i, j, math.Sin(float64(3*i+j))+float64(j))
		}
	}
	mean := make([]float64, d)
	for j := range mean {
		mean[j] = mat.Sum(raw.ColView(j)) / n
	}
	phi := mat.NewDense(n, d, nil)
	want := 0.0
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			phi.Set(i, j, raw.At(i, j)-mean[j])
			want += raw.At(i, j) * raw.At(i, j)
		}
	}
	want /= n
	fv := &fitView{explicit: true, phi: phi, mean: mean}
	require.InDelta(t, want, fv.diagonalMean(), 1e-13*want)
}
