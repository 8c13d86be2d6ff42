package bench

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/models/kmvda"
	"github.com/kdual/kdual/status"
)

// The validation split holds out the last val identities of every view
// and keeps the rest, so that together they are the training part; Choose
// keeps a σ it is given (only l and the regularisation are chosen) and
// otherwise picks σ among the factors of the split's median distance.
func TestMvSplitAndChoose(t *testing.T) {
	task, err := PoseTask(8, 4, 2, 3)
	require.NoError(t, err)
	ids := task.identityList()
	require.Len(t, ids, 8)
	require.Equal(t, 8, task.Identities())
	require.Equal(t, 2, task.DefaultValidation())
	v := task.split(3)
	for j := range task.Train {
		r, _ := task.Train[j].Dims()
		rt, _ := v.Train[j].Dims()
		re, _ := v.Test[j].Dims()
		require.Equal(t, r, rt+re, "view %d", j)
		require.Len(t, v.TestLabels[j], re)
		for _, l := range v.TestLabels[j] {
			require.GreaterOrEqual(t, l, ids[5], "view %d: identity %d held out", j, l)
		}
		for _, l := range v.TrainLabels[j] {
			require.Less(t, l, ids[5], "view %d: identity %d kept", j, l)
		}
	}

	// Cross-view recognition: every pair joins two different views, each
	// ordered pair's reverse is there too, and the names are the views'.
	sketch, err := SketchTask(4, 3, 1)
	require.NoError(t, err)
	for _, tk := range []*MvTask{task, sketch} {
		require.NotEmpty(t, tk.Pairs, tk.Name)
		for _, p := range tk.Pairs {
			require.NotEqual(t, p[0], p[1], "%s: %v", tk.Name, p)
			require.Less(t, max(p[0], p[1]), len(tk.ViewNames), tk.Name)
			require.Contains(t, tk.Pairs, [2]int{p[1], p[0]}, "%s: %v", tk.Name, p)
		}
		require.Len(t, tk.Train, len(tk.ViewNames), tk.Name)
		require.Len(t, tk.Test, len(tk.ViewNames), tk.Name)
	}

	ch, err := task.Choose(kmvda.RBF, 0, 3.5, []float64{0.5, 1, 2}, []float64{1e-2}, []int{2, 4}, 3, 1)
	require.NoError(t, err)
	require.Equal(t, 3.5, ch.Sigma)
	require.Equal(t, 1e-2, ch.Reg)
	require.Contains(t, []int{2, 4}, ch.L)
	med, err := v.MedianSigma()
	require.NoError(t, err)
	ch, err = task.Choose(kmvda.RBF, 0, 0, []float64{0.5, 2}, []float64{1e-2}, []int{2}, 3, 1)
	require.NoError(t, err)
	require.Contains(t, []float64{0.5 * med, 2 * med}, ch.Sigma)
	ch, err = task.Choose(kmvda.Linear, 0, 3.5, nil, []float64{1e-2}, []int{2}, 3, 1)
	require.NoError(t, err)
	require.Zero(t, ch.Sigma)
	require.GreaterOrEqual(t, ch.Accuracy, 0.0)
	require.LessOrEqual(t, ch.Accuracy, 1.0)
}

// Counts that leave nothing to train, test or validate on, directions
// below one and a test fraction outside (0, 1) are typed errors, not
// index panics.
func TestMvTaskRefusals(t *testing.T) {
	for _, c := range [][2]int{{1, 4}, {0, 4}, {-3, 4}, {8, 0}, {8, -1}} {
		_, err := PoseTask(c[0], c[1], 2, 1)
		require.ErrorIs(t, err, status.ErrInvalid, "train %d test %d", c[0], c[1])
		_, err = SketchTask(c[0], c[1], 1)
		require.ErrorIs(t, err, status.ErrInvalid, "train %d test %d", c[0], c[1])
	}
	_, err := PoseTask(8, 4, 0, 1)
	require.ErrorIs(t, err, status.ErrInvalid)
	task, err := PoseTask(8, 4, 2, 1)
	require.NoError(t, err)
	for _, val := range []int{0, -1, 7, 8, 100} {
		_, err = task.Choose(kmvda.RBF, 0, 1, nil, []float64{1e-2}, []int{2}, val, 1)
		require.ErrorIs(t, err, status.ErrInvalid, "val %d", val)
	}
	_, err = task.Choose(kmvda.RBF, 0, 1, nil, []float64{1e-2}, []int{2}, 6, 1)
	require.NoError(t, err, "val 6 leaves two identities")
	for _, l := range []int{0, -2} {
		_, err = task.Evaluate(&kmvda.Model{Kind: kmvda.Linear, Reg: 1e-2}, []int{l})
		require.ErrorIs(t, err, status.ErrInvalid, "l %d", l)
	}
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.csv")
	rows := []byte("1,2,0\n2,1,0\n3,3,1\n4,2,1\n5,5,2\n6,4,2\n")
	require.NoError(t, os.WriteFile(a, rows, 0o644))
	require.NoError(t, os.WriteFile(b, rows, 0o644))
	for _, f := range []float64{0, 1, -0.5, 1.5} {
		_, err = MvTaskFor(a+","+b, 0, 0, f, 1)
		require.ErrorIs(t, err, status.ErrInvalid, "test fraction %g", f)
	}
	task, err = MvTaskFor(a+","+b, 0, 0, 0.3, 1)
	require.NoError(t, err)
	require.Equal(t, []int{0, 0, 1, 1}, task.TrainLabels[0])
	require.Equal(t, []int{2, 2}, task.TestLabels[1])
}

// RunMvExperiment: the table's three methods in order, σ chosen among the
// factors of the validation split's median for the kernel methods (none
// for linear), l among those offered, one accuracy per view pair in
// [0, 1]; the l curve has the three methods and the m curve one score per
// m at RFF's chosen σ and l.
func TestRunMvExperiment(t *testing.T) {
	task, err := PoseTask(8, 4, 2, 3)
	require.NoError(t, err)
	val := task.DefaultValidation()
	med, err := task.split(val).MedianSigma()
	require.NoError(t, err)
	ls, ms := []int{1, 2}, []int{8}
	ex, err := RunMvExperiment(task, ls, ms, 16, val, 1, io.Discard)
	require.NoError(t, err)
	require.Len(t, ex.Rows, 3)
	require.Len(t, ex.LCurve, 3)
	require.Len(t, ex.MCurve, len(ms))
	for i, kind := range []kmvda.Kind{kmvda.Linear, kmvda.RBF, kmvda.RFF} {
		row := ex.Rows[i]
		require.Equal(t, kind.String(), row.Kind)
		require.Contains(t, ls, row.Choice.L, row.Kind)
		require.Len(t, row.Accuracy, len(task.Pairs), row.Kind)
		require.Len(t, row.Pairs, len(task.Pairs), row.Kind)
		for _, a := range row.Accuracy {
			require.True(t, a >= 0 && a <= 1, "%s accuracy %g", row.Kind, a)
		}
		if kind == kmvda.Linear {
			require.Zero(t, row.Choice.Sigma)
		} else {
			require.Contains(t, []float64{0.5 * med, med, 2 * med}, row.Choice.Sigma, row.Kind)
		}
	}
	require.Equal(t, 16, ex.Rows[2].M)
	// Evaluate keeps an l equal to the model's directions and drops those
	// past them.
	m := &kmvda.Model{Kind: kmvda.Linear, Dim: 2, Reg: 1e-2}
	sc, err := task.Evaluate(m, []int{1, 2, 3})
	require.NoError(t, err)
	require.Equal(t, []int{1, 2}, sc.Ls)
	require.Equal(t, ex.Rows[1].Accuracy, ex.RBFBest)
	for i, sc := range ex.MCurve {
		require.Equal(t, ms[i], sc.M)
		require.Equal(t, []int{ex.Rows[2].Choice.L}, sc.Ls)
		require.Len(t, sc.Accuracy, len(task.Pairs))
		// The m curve's model is RFF's choice (σ, regularisation, l).
		ch := ex.Rows[2].Choice
		want, err := task.Evaluate(&kmvda.Model{Kind: kmvda.RFF, Sigma: ch.Sigma, Features: ms[i], Dim: ch.L, Reg: ch.Reg, Seed: 1}, []int{ch.L})
		require.NoError(t, err)
		require.Equal(t, want.Accuracy, sc.Accuracy)
	}
}

// A choice reads its number of directions from "components", or from "l"
// in tables written before that name; "components" wins when both are
// there.
func TestMvChoiceJSON(t *testing.T) {
	for in, want := range map[string]MvChoice{
		`{"sigma": 2, "components": 3, "reg": 0.1, "validation_accuracy": 0.9}`: {Sigma: 2, L: 3, Reg: 0.1, Accuracy: 0.9},
		`{"sigma": 2, "l": 4}`:      {Sigma: 2, L: 4},
		`{"l": 1}`:                  {L: 1},
		`{"components": 5, "l": 4}`: {L: 5},
		`{"sigma": 1.5}`:            {Sigma: 1.5},
	} {
		var c MvChoice
		require.NoError(t, json.Unmarshal([]byte(in), &c), in)
		require.Equal(t, want, c, in)
	}
	var c MvChoice
	require.Error(t, json.Unmarshal([]byte(`{"l": "x"}`), &c))
}

// A stand-in task needs two training identities (two classes) and one
// test identity, no fewer.
func TestTaskCounts(t *testing.T) {
	require.NoError(t, taskCounts(2, 1))
	for _, c := range [][2]int{{1, 1}, {2, 0}, {0, 5}, {-1, -1}} {
		require.ErrorIs(t, taskCounts(c[0], c[1]), status.ErrInvalid, "%v", c)
	}
}

// The pose stand-in's seven views are Multi-PIE's poses: −45° to 45° in
// steps of 15°, 0° (the gallery) among them.
func TestPoseAngles(t *testing.T) {
	require.Len(t, PoseAngles, 7)
	for i, a := range PoseAngles {
		require.Equal(t, -45+15*float64(i), a, "view %d", i)
	}
}

// PPCA's kernels: the Gaussian's bandwidth is the one given, or by default
// 2 on the toy data and 4 on every other set; the linear kernel has none;
// another name is refused.
func TestPPCAKernel(t *testing.T) {
	for _, c := range []struct {
		o     PPCAOptions
		sigma float64
	}{
		{PPCAOptions{Kernel: "rbf", Data: "toy"}, 2},
		{PPCAOptions{Kernel: "gaussian", Data: "digits"}, 4},
		{PPCAOptions{Kernel: "rbf", Data: "fashion"}, 4},
		{PPCAOptions{Kernel: "rbf", Data: "toy", Sigma: 0.5}, 0.5},
	} {
		k, err := c.o.kernel()
		require.NoError(t, err)
		require.Equal(t, kernel.Kernel{Kind: kernel.Gaussian, Sigma: c.sigma}, k, "%+v", c.o)
	}
	k, err := PPCAOptions{Kernel: "linear", Data: "toy"}.kernel()
	require.NoError(t, err)
	require.Equal(t, kernel.Kernel{}, k)
	_, err = PPCAOptions{Kernel: "cubic"}.kernel()
	require.ErrorIs(t, err, status.ErrInvalid)
}
