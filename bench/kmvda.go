package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/dataset"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/models/kmvda"
	"github.com/kdual/kdual/status"
)

// MvTask is a cross-view recognition task: training and test views of
// disjoint identities, and the (gallery, probe) view pairs scored.
type MvTask struct {
	Name        string
	Train, Test []*mat.Dense
	TrainLabels [][]int
	TestLabels  [][]int
	ViewNames   []string
	Pairs       [][2]int // (gallery view, probe view)
	Note        string
	// Context, when set, is checked before every fit: once it has ended,
	// Evaluate (and so Choose) returns an error wrapping status.ErrStopped.
	Context context.Context
}

// taskCounts checks the identities of a stand-in task: at least two to
// train on (a discriminant needs two classes) and one to test.
func taskCounts(train, test int) error {
	if train < 2 || test < 1 {
		return fmt.Errorf("bench: %d training and %d test identities, want ≥ 2 and ≥ 1: %w", train, test, status.ErrInvalid)
	}
	return nil
}

// SketchTask is kdual's CUFSF stand-in (dataset.SketchViews on the first
// train+test Fashion-MNIST training images, one identity each): the first
// train identities train, the next test ones test; gallery photos and
// sketch probes, and the reverse.
func SketchTask(train, test int, seed uint64) (*MvTask, error) {
	if err := taskCounts(train, test); err != nil {
		return nil, err
	}
	f, err := dataset.LoadFashion("", "train", train+test)
	if err != nil {
		return nil, err
	}
	photos, sketches, err := dataset.SketchViews(f.X, 28, seed)
	if err != nil {
		return nil, err
	}
	t := &MvTask{Name: "sketch", ViewNames: []string{"photo", "sketch"}, Pairs: [][2]int{{0, 1}, {1, 0}},
		Note: "CUFSF stand-in: Fashion-MNIST items as identities, view 2 = Sobel edges of a randomly warped copy"}
	ids := func(lo, hi int) []int {
		out := make([]int, 0, hi-lo)
		for i := lo; i < hi; i++ {
			out = append(out, i)
		}
		return out
	}
	for _, v := range []*mat.Dense{photos, sketches} {
		t.Train = append(t.Train, mat.DenseCopyOf(v.Slice(0, train, 0, 784)))
		t.Test = append(t.Test, mat.DenseCopyOf(v.Slice(train, train+test, 0, 784)))
		t.TrainLabels = append(t.TrainLabels, ids(0, train))
		t.TestLabels = append(t.TestLabels, ids(train, train+test))
	}
	return t, nil
}

// PoseAngles are the seven poses of the Multi-PIE stand-in.
var PoseAngles = []float64{-45, -30, -15, 0, 15, 30, 45}

// PoseTask is kdual's Multi-PIE stand-in: seven rotated views (−45°…45°)
// of Fashion-MNIST items with samples noisy copies each (pixel noise of
// standard deviation 0.2, shifts up to one pixel), 14×14 pixels;
// train identities train, the next test ones test. Pairs: gallery 0°,
// probe −45°, and the reverse (the paper's −45° → 0° cross-view).
func PoseTask(train, test, samples int, seed uint64) (*MvTask, error) {
	if err := taskCounts(train, test); err != nil {
		return nil, err
	}
	if samples < 1 {
		return nil, fmt.Errorf("bench: %d samples per identity, want ≥ 1: %w", samples, status.ErrInvalid)
	}
	f, err := dataset.LoadFashion("", "train", train+test)
	if err != nil {
		return nil, err
	}
	views, labels, err := dataset.PoseViews(f.X, 28, PoseAngles, samples, 0.2, seed)
	if err != nil {
		return nil, err
	}
	t := &MvTask{Name: "poses", Pairs: [][2]int{{3, 0}, {0, 3}},
		Note: "Multi-PIE stand-in: Fashion-MNIST items rotated by −45°…45° in 15° steps, noisy copies, 14×14"}
	for j, v := range views {
		t.ViewNames = append(t.ViewNames, fmt.Sprintf("%+g°", PoseAngles[j]))
		cut := train * samples
		r, c := v.Dims()
		t.Train = append(t.Train, mat.DenseCopyOf(v.Slice(0, cut, 0, c)))
		t.Test = append(t.Test, mat.DenseCopyOf(v.Slice(cut, r, 0, c)))
		t.TrainLabels = append(t.TrainLabels, labels[j][:cut])
		t.TestLabels = append(t.TestLabels, labels[j][cut:])
	}
	return t, nil
}

// identityList returns the distinct identities of the first view's
// training rows, in increasing order.
func (t *MvTask) identityList() []int {
	ids := map[int]bool{}
	for _, l := range t.TrainLabels[0] {
		ids[l] = true
	}
	all := make([]int, 0, len(ids))
	for id := range ids {
		all = append(all, id)
	}
	sort.Ints(all)
	return all
}

// Identities is the number of distinct training identities (of the first
// view).
func (t *MvTask) Identities() int { return len(t.identityList()) }

// DefaultValidation is the validation identities the choices hold out when
// none are given: a quarter of the training identities, at least 2, but
// leaving two to train on (1 at the least).
func (t *MvTask) DefaultValidation() int {
	ids := t.Identities()
	return max(1, min(max(2, ids/4), ids-2))
}

// split returns the task with its last val training identities as the test
// part (for choosing σ and l without the test set); 0 ≤ val ≤ identities.
func (t *MvTask) split(val int) *MvTask {
	all := t.identityList()
	held := map[int]bool{}
	for _, id := range all[len(all)-val:] {
		held[id] = true
	}
	out := &MvTask{Name: t.Name + "-validation", Pairs: t.Pairs, ViewNames: t.ViewNames, Context: t.Context}
	for j, v := range t.Train {
		_, c := v.Dims()
		var tr, te []float64
		var trl, tel []int
		for i, l := range t.TrainLabels[j] {
			if held[l] {
				te = append(te, v.RawRowView(i)...)
				tel = append(tel, l)
			} else {
				tr = append(tr, v.RawRowView(i)...)
				trl = append(trl, l)
			}
		}
		out.Train = append(out.Train, mat.NewDense(len(trl), c, tr))
		out.Test = append(out.Test, mat.NewDense(len(tel), c, te))
		out.TrainLabels, out.TestLabels = append(out.TrainLabels, trl), append(out.TestLabels, tel)
	}
	return out
}

// gallery keeps the first sample of each identity in a view.
func gallery(x *mat.Dense, labels []int) (*mat.Dense, []int) {
	seen := map[int]bool{}
	_, c := x.Dims()
	var data []float64
	var out []int
	for i, l := range labels {
		if !seen[l] {
			seen[l] = true
			data = append(data, x.RawRowView(i)...)
			out = append(out, l)
		}
	}
	return mat.NewDense(len(out), c, data), out
}

// MvScore is a trained model's rank-1 accuracy on each pair, for each l in
// Ls (the first l directions).
type MvScore struct {
	Kind     string      `json:"kind"`
	M        int         `json:"m,omitempty"`
	Sigma    float64     `json:"sigma,omitempty"`
	Ls       []int       `json:"ls"`
	Accuracy [][]float64 `json:"accuracy"` // [pair][l]
	Seconds  float64     `json:"train_seconds"`
	Form     string      `json:"form"`
}

// Evaluate trains m on the task's training part and scores the test part
// for every l in ls (each ≥ 1; those past the model's l give way to it).
func (t *MvTask) Evaluate(m *kmvda.Model, ls []int) (*MvScore, error) {
	if t.Context != nil && t.Context.Err() != nil {
		return nil, status.Cancelled(context.Cause(t.Context), "before a kmvda fit")
	}
	for _, l := range ls {
		if l < 1 {
			return nil, fmt.Errorf("bench: %d directions, want ≥ 1: %w", l, status.ErrInvalid)
		}
	}
	if err := m.Fit(t.Train, t.TrainLabels); err != nil {
		return nil, err
	}
	sc := &MvScore{Kind: m.Kind.String(), Sigma: m.Sigma, Seconds: m.Info().Seconds, Form: m.Info().Form}
	if m.Kind == kmvda.RFF {
		sc.M = m.Features
	}
	vals, _ := m.Eigenvalues()
	lmax := len(vals)
	for _, l := range ls {
		if l <= lmax {
			sc.Ls = append(sc.Ls, l)
		}
	}
	if len(sc.Ls) == 0 || sc.Ls[len(sc.Ls)-1] < lmax && maxInt(ls) > lmax {
		sc.Ls = append(sc.Ls, lmax) // the largest l the classes allow
	}
	for _, p := range t.Pairs {
		gx, gl := gallery(t.Test[p[0]], t.TestLabels[p[0]])
		g, err := m.Transform(p[0], gx)
		if err != nil {
			return nil, err
		}
		pr, err := m.Transform(p[1], t.Test[p[1]])
		if err != nil {
			return nil, err
		}
		var accs []float64
		for _, l := range sc.Ls {
			gn, _ := g.Dims()
			pn, _ := pr.Dims()
			acc, err := kmvda.Rank1(g.Slice(0, gn, 0, l).(*mat.Dense), pr.Slice(0, pn, 0, l).(*mat.Dense), gl, t.TestLabels[p[1]])
			if err != nil {
				return nil, err
			}
			accs = append(accs, acc)
		}
		sc.Accuracy = append(sc.Accuracy, accs)
	}
	return sc, nil
}

// MedianSigma is the median pairwise distance of up to 1000 training rows
// pooled over the views.
func (t *MvTask) MedianSigma() (float64, error) {
	var rows []float64
	_, c := t.Train[0].Dims()
	count := 0
	for k := 0; count < 1000; k++ {
		added := false
		for _, v := range t.Train {
			r, _ := v.Dims()
			if k < r && count < 1000 {
				rows = append(rows, v.RawRowView(k)...)
				count++
				added = true
			}
		}
		if !added {
			break
		}
	}
	return kernel.MedianDistance(mat.NewDense(count, c, rows), 1000)
}

// MvChoice is the σ and l chosen on the validation split.
type MvChoice struct {
	Sigma    float64 `json:"sigma"`
	L        int     `json:"components"`
	Reg      float64 `json:"reg"`
	Accuracy float64 `json:"validation_accuracy"` // mean over pairs
}

// UnmarshalJSON reads a choice, also from tables written before the number
// of directions was called "components" (then "l").
func (c *MvChoice) UnmarshalJSON(b []byte) error {
	type plain MvChoice
	aux := struct {
		*plain
		OldL *int `json:"l"`
	}{plain: (*plain)(c)}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	if aux.OldL != nil && c.L == 0 {
		c.L = *aux.OldL
	}
	return nil
}

// MvRegs are the regularisation levels (kmvda.Model.Reg) tried on
// validation.
var MvRegs = []float64{1e-3, 1e-2, 1e-1}

// Choose picks σ, the regularisation (regs) and l on a validation split of
// the training identities (the last val ones), by the mean rank-1 accuracy
// over the task's pairs: σ is sigma itself when it is positive, else the
// best of factors times the median distance of the split's training rows
// (MedianSigma); the linear kind has none (0).
func (t *MvTask) Choose(kind kmvda.Kind, m int, sigma float64, factors, regs []float64, ls []int, val int, seed uint64) (MvChoice, error) {
	if ids := t.Identities(); val < 1 || val > ids-2 {
		return MvChoice{}, fmt.Errorf("bench: %d validation identities of %d, want 1 … %d (two left to train on): %w", val, ids, ids-2, status.ErrInvalid)
	}
	v := t.split(val)
	var sigmas []float64
	switch {
	case kind == kmvda.Linear:
		sigmas = []float64{0}
	case sigma > 0:
		sigmas = []float64{sigma}
	default:
		med, err := v.MedianSigma()
		if err != nil {
			return MvChoice{}, err
		}
		for _, f := range factors {
			sigmas = append(sigmas, f*med)
		}
	}
	best := MvChoice{Accuracy: -1}
	for _, sg := range sigmas {
		for _, reg := range regs {
			model := &kmvda.Model{Kind: kind, Sigma: sg, Features: m, Dim: v.capL(maxInt(ls)), Reg: reg, Seed: seed}
			sc, err := v.Evaluate(model, ls)
			if err != nil {
				return MvChoice{}, err
			}
			for li, l := range sc.Ls {
				mean := 0.0
				for _, acc := range sc.Accuracy {
					mean += acc[li] / float64(len(sc.Accuracy))
				}
				if mean > best.Accuracy {
					best = MvChoice{Sigma: sg, L: l, Reg: reg, Accuracy: mean}
				}
			}
		}
	}
	return best, nil
}

// withL returns ls with l added (sorted, no repeats).
func withL(ls []int, l int) []int {
	out := []int{l}
	for _, x := range ls {
		if x != l {
			out = append(out, x)
		}
	}
	sort.Ints(out)
	return out
}

// capL caps l at c − 1 for the task's c training classes (identities).
func (t *MvTask) capL(l int) int {
	ids := map[int]bool{}
	for _, labels := range t.TrainLabels {
		for _, id := range labels {
			ids[id] = true
		}
	}
	return min(l, len(ids)-1)
}

func maxInt(v []int) int {
	m := 0
	for _, x := range v {
		m = max(m, x)
	}
	return m
}

// MvTableRow is one method on one task in Table 1's layout.
type MvTableRow struct {
	Task     string    `json:"task"`
	Kind     string    `json:"kind"`
	M        int       `json:"m,omitempty"`
	Choice   MvChoice  `json:"choice"`
	Pairs    []string  `json:"pairs"`
	Accuracy []float64 `json:"accuracy"` // per pair, at the chosen l
	Seconds  float64   `json:"train_seconds"`
}

// MvExperiment is Table 1 and Figs. 3–4 on one task.
type MvExperiment struct {
	Task    string       `json:"task"`
	Note    string       `json:"note"`
	Rows    []MvTableRow `json:"rows"`
	MCurve  []MvScore    `json:"accuracy_vs_m"` // RFF at its chosen σ, reg and l, m = 2^6…2^13
	LCurve  []MvScore    `json:"accuracy_vs_l"` // linear, RBF, RFF at m_table
	RBFBest []float64    `json:"rbf_accuracy"`  // per pair, for the m curve's reference line
}

// RunMvExperiment chooses σ and l per method on validation, then scores the
// test identities: linear, RBF and RFF (m = mTable) for the table and the
// l curve, RFF over ms for the m curve. Progress goes to log.
func RunMvExperiment(t *MvTask, ls, ms []int, mTable, val int, seed uint64, log io.Writer) (*MvExperiment, error) {
	ex := &MvExperiment{Task: t.Name, Note: t.Note}
	factors := []float64{0.5, 1, 2}
	pairNames := make([]string, len(t.Pairs))
	for i, p := range t.Pairs {
		pairNames[i] = t.ViewNames[p[0]] + " gallery, " + t.ViewNames[p[1]] + " probe"
	}
	var rffChoice MvChoice
	for _, kind := range []kmvda.Kind{kmvda.Linear, kmvda.RBF, kmvda.RFF} {
		start := time.Now()
		ch, err := t.Choose(kind, mTable, 0, factors, MvRegs, ls, val, seed)
		if err != nil {
			return nil, err
		}
		if kind == kmvda.RFF {
			rffChoice = ch
		}
		evalLs := withL(ls, ch.L)
		model := &kmvda.Model{Kind: kind, Sigma: ch.Sigma, Features: mTable, Dim: t.capL(maxInt(evalLs)), Reg: ch.Reg, Seed: seed}
		sc, err := t.Evaluate(model, evalLs)
		if err != nil {
			return nil, err
		}
		row := MvTableRow{Task: t.Name, Kind: kind.String(), Choice: ch, Pairs: pairNames, Seconds: sc.Seconds}
		if kind == kmvda.RFF {
			row.M = mTable
		}
		for _, acc := range sc.Accuracy {
			for li, l := range sc.Ls {
				if l == ch.L {
					row.Accuracy = append(row.Accuracy, acc[li])
				}
			}
		}
		if kind == kmvda.RBF {
			ex.RBFBest = row.Accuracy
		}
		ex.Rows = append(ex.Rows, row)
		ex.LCurve = append(ex.LCurve, *sc)
		fmt.Fprintf(log, "kmvda %s %s: σ=%.4g reg=%g l=%d (validation %.3f): test %v (%.1fs)\n", t.Name, kind, ch.Sigma, ch.Reg, ch.L, ch.Accuracy, row.Accuracy, time.Since(start).Seconds())
	}
	// The m curve at the σ, regularisation and l chosen for RFF.
	for _, m := range ms {
		model := &kmvda.Model{Kind: kmvda.RFF, Sigma: rffChoice.Sigma, Features: m, Dim: rffChoice.L, Reg: rffChoice.Reg, Seed: seed}
		sc, err := t.Evaluate(model, []int{rffChoice.L})
		if err != nil {
			return nil, err
		}
		ex.MCurve = append(ex.MCurve, *sc)
		fmt.Fprintf(log, "kmvda %s rff m=%d: %v (%s form, %.1fs)\n", t.Name, m, sc.Accuracy, sc.Form, sc.Seconds)
	}
	return ex, nil
}

// MvTiming is one point of the exact-RBF-versus-RFF training-time curve.
type MvTiming struct {
	N       int     `json:"n"` // training samples over all views
	RBF     float64 `json:"rbf_seconds"`
	RFF     float64 `json:"rff_seconds"`
	M       int     `json:"m"`
	RFFForm string  `json:"rff_form"`
}

// MvCrossover times exact RBF and RFF (m features per view) training on
// the sketch stand-in with growing numbers of identities (median of
// repeat runs each).
func MvCrossover(ids []int, m, l, repeat int, seed uint64, log io.Writer) ([]MvTiming, error) {
	var out []MvTiming
	for _, n := range ids {
		t, err := SketchTask(n, 1, seed)
		if err != nil {
			return nil, err
		}
		sigma, err := t.MedianSigma()
		if err != nil {
			return nil, err
		}
		row := MvTiming{N: 2 * n, M: m}
		for _, kind := range []kmvda.Kind{kmvda.RBF, kmvda.RFF} {
			var times []float64
			for r := 0; r < repeat; r++ {
				model := &kmvda.Model{Kind: kind, Sigma: sigma, Features: m, Dim: min(l, n-1), Seed: seed}
				if err := model.Fit(t.Train, t.TrainLabels); err != nil {
					return nil, err
				}
				times = append(times, model.Info().Seconds)
				row.RFFForm = model.Info().Form
			}
			if kind == kmvda.RBF {
				row.RBF = Median(times)
			} else {
				row.RFF = Median(times)
			}
		}
		fmt.Fprintf(log, "kmvda crossover n=%d: rbf %.3fs, rff(m=%d, %s) %.3fs\n", row.N, row.RBF, m, row.RFFForm, row.RFF)
		out = append(out, row)
	}
	return out, nil
}

// WriteMvTable prints Table 1's layout: rank-1 accuracy (%) per method and
// pair.
func WriteMvTable(w io.Writer, exps []*MvExperiment) {
	fmt.Fprintln(w, "| task | method | σ | reg | l | pair | rank-1 (%) | train s |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	for _, ex := range exps {
		for _, r := range ex.Rows {
			name := r.Kind
			if r.M > 0 {
				name = fmt.Sprintf("rff (m=%d)", r.M)
			}
			sigma := "-"
			if r.Choice.Sigma > 0 {
				sigma = fmt.Sprintf("%.3g", r.Choice.Sigma)
			}
			for i, p := range r.Pairs {
				fmt.Fprintf(w, "| %s | %s | %s | %g | %d | %s | %.1f | %.2f |\n", r.Task, name, sigma, r.Choice.Reg, r.Choice.L, p, 100*r.Accuracy[i], r.Seconds)
			}
		}
	}
}

// meanAcc averages a score's accuracy over pairs at l index li.
func meanAcc(sc MvScore, li int) float64 {
	s := 0.0
	for _, a := range sc.Accuracy {
		s += a[li]
	}
	return s / math.Max(1, float64(len(sc.Accuracy)))
}
