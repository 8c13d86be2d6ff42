package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
)

// Report is the JSON written by `kdual bench kpca` and by the peers.
type Report struct {
	Problem KPCAProblem  `json:"problem"`
	Results []KPCAResult `json:"results"`
	// Under MPI (kdual bench kpca --mpi): the ranks, and per rank the
	// operator's bytes, the bytes it sent per pass (averaged over the
	// run) and its peak resident memory.
	Ranks                int       `json:"ranks,omitempty"`
	RankOperatorBytes    []float64 `json:"rank_operator_bytes,omitempty"`
	RankBytesSentPerPass []float64 `json:"rank_bytes_sent_per_pass,omitempty"`
	RankPeakRSSBytes     []float64 `json:"rank_peak_rss_bytes,omitempty"`
}

// ReadReport reads a report file.
func ReadReport(path string) (*Report, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("bench: %s: %w", path, err)
	}
	return &r, nil
}

// Compare prints, per δ, every solver of both reports side by side, then
// the fastest of each side and their ratio, and the paper's speed-up
// (randomized SVD time over L-BFGS time).
func Compare(w io.Writer, ours, peers *Report) {
	p := ours.Problem
	fmt.Fprintf(w, "%s n=%d d=%d s=%d %s σ=%.4g center=%v; Gram: kdual %.2fs, peer %.2fs\n\n",
		p.Data, p.N, p.D, p.S, p.Kernel, p.Sigma, p.Center, p.GramSecs, peers.Problem.GramSecs)
	deltas := map[float64]bool{}
	for _, r := range append(append([]KPCAResult(nil), ours.Results...), peers.Results...) {
		deltas[r.Delta] = true
	}
	var ds []float64
	for d := range deltas {
		ds = append(ds, d)
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(ds)))
	fmt.Fprintln(w, "| δ | side | solver | seconds | η | passes | matvecs |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	type best struct {
		name string
		secs float64
	}
	summary := []string{}
	for _, d := range ds {
		bo, bp := best{secs: -1}, best{secs: -1}
		var lbfgs, rsvd float64
		for side, rep := range []*Report{ours, peers} {
			label := [2]string{"kdual", "peer"}[side]
			for _, r := range rep.Results {
				if r.Delta != d {
					continue
				}
				secs := "-"
				if r.Seconds != nil {
					secs = fmt.Sprintf("%.3f", *r.Seconds)
					b := &bo
					if side == 1 {
						b = &bp
					}
					if b.secs < 0 || *r.Seconds < b.secs {
						*b = best{r.Solver, *r.Seconds}
					}
					if side == 0 && r.Solver == "lbfgs" {
						lbfgs = *r.Seconds
					}
					if side == 1 && r.Solver == "randomized_svd" {
						rsvd = *r.Seconds
					}
				}
				fmt.Fprintf(w, "| %g | %s | %s | %s | %.1e | %d | %d |\n", d, label, r.Solver, secs, r.Eta, r.Passes, r.MatVecs)
			}
		}
		line := fmt.Sprintf("δ=%g:", d)
		if bo.secs > 0 && bp.secs > 0 {
			line += fmt.Sprintf(" kdual best %s %.3fs, peer best %s %.3fs, kdual-best/peer-best %.2f;", bo.name, bo.secs, bp.name, bp.secs, bo.secs/bp.secs)
		}
		if lbfgs > 0 && rsvd > 0 {
			line += fmt.Sprintf(" speed-up RSVD/L-BFGS (the paper's) %.2f", rsvd/lbfgs)
		}
		summary = append(summary, line)
	}
	fmt.Fprintln(w)
	for _, l := range summary {
		fmt.Fprintln(w, l)
	}
}
