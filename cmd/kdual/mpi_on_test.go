//go:build mpi

package main

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// kdual kpca fit --mpi under mpirun (2 and 3 ranks; float64, float32 and
// matrix-free; block Krylov and the dual L-BFGS; centred) gives the single
// process's eigenvalues to 1e-10 (float32: within its storage bound) and
// its scores; only rank 0 writes. kdual bench kpca --mpi reaches every δ
// and reports the ranks. Run by make test-mpi.
func TestKPCAFitMPI(t *testing.T) {
	mpirun, err := exec.LookPath("mpirun")
	require.NoError(t, err, "make test-mpi runs this test where Open MPI is installed")
	dir := t.TempDir()
	bin := filepath.Join(dir, "kdual")
	build := exec.Command("go", "build", "-tags", "mpi", "-o", bin, ".")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	args := []string{"kpca", "fit", "--data", "fashion", "--n", "1201", "--kernel", "gaussian", "--components", "6", "--tol", "1e-12", "--json", "-"}
	type fit struct {
		Eigenvalues []float64   `json:"eigenvalues"`
		Scores      [][]float64 `json:"scores"`
	}
	single := map[string]fit{}
	for _, solver := range []string{"block", "lbfgs"} {
		out, err := exec.Command(bin, append(args, "--solver", solver)...).Output()
		require.NoError(t, err)
		var f fit
		require.NoError(t, json.Unmarshal(out, &f))
		single[solver] = f
	}
	env := append(os.Environ(), "OMPI_MCA_plm=isolated", "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1", "OMPI_MCA_rmaps_base_oversubscribe=1", "OMPI_MCA_btl_vader_single_copy_mechanism=none")
	for _, np := range []string{"2", "3"} {
		for _, c := range [][2]string{{"float64", "block"}, {"matrix-free", "block"}, {"float32", "block"}, {"float64", "lbfgs"}, {"float32", "lbfgs"}} {
			op := c[0] + " " + c[1]
			cmd := exec.Command(mpirun, append([]string{"-np", np, bin}, append(args, "--mpi", "--operator", c[0], "--solver", c[1])...)...)
			cmd.Env = env
			got, err := cmd.Output()
			require.NoError(t, err, "np %s %s", np, op)
			want := single[c[1]]
			// float32 storage: |Δλ| ≤ u·‖K‖_F ≤ u·√n·λ₁ (u = 2⁻²⁴, plus
			// the single process's rounding), and the scores accordingly.
			tolλ, tolScores := 1e-10, 1e-8
			if c[0] == "float32" {
				tolλ, tolScores = math.Sqrt(1201)/(1<<24)+1e-10, 1e-4
			}
			if c[1] == "lbfgs" {
				// Rounding steers the two L-BFGS paths apart; each stops
				// where its own test passes, with vectors accurate to
				// about 1e-8 at this tolerance (kpca.LBFGS: scores to 1e-6).
				tolScores = max(tolScores, 1e-6)
			}
			var r struct {
				Eigenvalues []float64   `json:"eigenvalues"`
				Scores      [][]float64 `json:"scores"`
				Ranks       int         `json:"ranks"`
				Sent        []float64   `json:"rank_bytes_sent_per_pass"`
			}
			require.NoError(t, json.Unmarshal(got, &r), "one JSON document (only rank 0 writes): %s", got)
			require.Equal(t, np, map[int]string{2: "2", 3: "3"}[r.Ranks])
			require.Len(t, r.Sent, r.Ranks)
			for j := range want.Eigenvalues {
				require.InDelta(t, want.Eigenvalues[j], r.Eigenvalues[j], tolλ*want.Eigenvalues[0], "np %s %s λ_%d", np, op, j)
			}
			worst := 0.0
			for i := range want.Scores {
				for j := range want.Scores[i] {
					worst = math.Max(worst, math.Abs(want.Scores[i][j]-r.Scores[i][j]))
				}
			}
			require.Less(t, worst, tolScores, "np %s %s scores", np, op)
		}
	}
	// kdual bench kpca --mpi: every row reaches its δ; one report, with the
	// ranks' figures.
	benchArgs := []string{"-np", "2", bin, "bench", "kpca", "--mpi", "--data", "fashion", "--n", "1500", "--components", "5",
		"--solvers", "lbfgs,lanczos,block", "--delta", "1e-3", "--repeat", "1", "--operator", "float32", "--json", "-"}
	cmd := exec.Command(mpirun, benchArgs...)
	cmd.Env = env
	got, err := cmd.Output()
	require.NoError(t, err)
	var rep struct {
		Problem struct {
			Operator string  `json:"operator"`
			DOpt     float64 `json:"d_opt"`
		} `json:"problem"`
		Results []struct {
			Solver  string   `json:"solver"`
			Seconds *float64 `json:"seconds"`
			Eta     float64  `json:"eta"`
		} `json:"results"`
		Ranks int       `json:"ranks"`
		Sent  []float64 `json:"rank_bytes_sent_per_pass"`
		Bytes []float64 `json:"rank_operator_bytes"`
	}
	require.NoError(t, json.Unmarshal(got, &rep), "one JSON document (only rank 0 writes): %s", got)
	require.Equal(t, 2, rep.Ranks)
	require.Equal(t, "float32", rep.Problem.Operator)
	require.Len(t, rep.Results, 3)
	for _, r := range rep.Results {
		require.NotNil(t, r.Seconds, "%s did not reach δ", r.Solver)
		require.Less(t, r.Eta, 1e-3, r.Solver)
	}
	require.Len(t, rep.Sent, 2)
	require.Positive(t, rep.Sent[0])
	require.Positive(t, rep.Bytes[1])
	// A flag the distributed fit does not take is a usage error on every rank.
	cmd = exec.Command(mpirun, append([]string{"-np", "2", bin}, append(args, "--mpi", "--approx", "nystrom", "--landmarks", "10")...)...)
	cmd.Env = env
	err = cmd.Run()
	require.Error(t, err)
	for _, bad := range [][]string{{"--solvers", "randomized"}, {"--operator", "float16"}} {
		cmd = exec.Command(mpirun, append(benchArgs[:len(benchArgs)-2:len(benchArgs)-2], bad...)...)
		cmd.Env = env
		var ee *exec.ExitError
		require.ErrorAs(t, cmd.Run(), &ee, "%v", bad)
		require.NotZero(t, ee.ExitCode(), "%v", bad)
	}
}
