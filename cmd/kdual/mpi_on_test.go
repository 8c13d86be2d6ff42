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

// kdual kpca fit --mpi under mpirun (2 and 3 ranks, float64 and
// matrix-free, centred) gives the single process's eigenvalues to 1e-10
// and its scores; only rank 0 writes. Run by make test-mpi.
func TestKPCAFitMPI(t *testing.T) {
	mpirun, err := exec.LookPath("mpirun")
	require.NoError(t, err, "make test-mpi runs this test where Open MPI is installed")
	dir := t.TempDir()
	bin := filepath.Join(dir, "kdual")
	build := exec.Command("go", "build", "-tags", "mpi", "-o", bin, ".")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	args := []string{"kpca", "fit", "--data", "fashion", "--n", "1201", "--components", "6", "--solver", "block", "--tol", "1e-12", "--json", "-"}
	single, err := exec.Command(bin, args...).Output()
	require.NoError(t, err)
	var want struct {
		Eigenvalues []float64   `json:"eigenvalues"`
		Scores      [][]float64 `json:"scores"`
	}
	require.NoError(t, json.Unmarshal(single, &want))
	env := append(os.Environ(), "OMPI_MCA_plm=isolated", "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1", "OMPI_MCA_rmaps_base_oversubscribe=1", "OMPI_MCA_btl_vader_single_copy_mechanism=none")
	for _, np := range []string{"2", "3"} {
		for _, op := range []string{"float64", "matrix-free"} {
			cmd := exec.Command(mpirun, append([]string{"-np", np, bin}, append(args, "--mpi", "--operator", op)...)...)
			cmd.Env = env
			got, err := cmd.Output()
			require.NoError(t, err, "np %s %s", np, op)
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
				require.InDelta(t, want.Eigenvalues[j], r.Eigenvalues[j], 1e-10*want.Eigenvalues[0], "np %s %s λ_%d", np, op, j)
			}
			worst := 0.0
			for i := range want.Scores {
				for j := range want.Scores[i] {
					worst = math.Max(worst, math.Abs(want.Scores[i][j]-r.Scores[i][j]))
				}
			}
			require.Less(t, worst, 1e-8, "np %s %s scores", np, op)
		}
	}
	// A flag the distributed fit does not take is a usage error on every rank.
	cmd := exec.Command(mpirun, append([]string{"-np", "2", bin}, append(args, "--mpi", "--approx", "nystrom", "--landmarks", "10")...)...)
	cmd.Env = env
	err = cmd.Run()
	require.Error(t, err)
}
