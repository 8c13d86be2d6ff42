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
// (randomized SVD time over L-BFGS time). When kdual's rows ran on the
// float32 operator and were timed again on the float64 one (bench kpca
// --float64-time), the table gains those times and the η of each float32
// answer on the float64 matrix, and the summary the float64 best and its
// ratio too.
func Compare(w io.Writer, ours, peers *Report) {
	p := ours.Problem
	fmt.Fprintf(w, "%s n=%d d=%d s=%d %s σ=%.4g center=%v; Gram: kdual %.2fs, peer %.2fs\n\n",
		p.Data, p.N, p.D, p.S, p.Kernel, p.Sigma, p.Center, p.GramSecs, peers.Problem.GramSecs)
	if p.Operator != "" {
		fmt.Fprintf(w, "kdual's operator: %s (%s)\n\n", p.Operator, p.PlanReason)
	}
	deltas := map[float64]bool{}
	f64 := false
	for _, r := range append(append([]KPCAResult(nil), ours.Results...), peers.Results...) {
		deltas[r.Delta] = true
	}
	for _, r := range ours.Results {
		f64 = f64 || r.Float64Seconds != nil
	}
	var ds []float64
	for d := range deltas {
		ds = append(ds, d)
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(ds)))
	if f64 {
		fmt.Fprintf(w, "kdual's rows ran on %s and again on float64 (Gram %.2fs): float64 seconds, and η of each %s answer on the float64 matrix\n\n", p.Operator, p.Float64GramSecs, p.Operator)
		fmt.Fprintln(w, "| δ | side | solver | seconds | η | passes | matvecs | float64 seconds | η on float64 |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	} else {
		fmt.Fprintln(w, "| δ | side | solver | seconds | η | passes | matvecs |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	}
	type best struct {
		name string
		secs float64
	}
	secsOf := func(v *float64) string {
		if v == nil {
			return "-"
		}
		return fmt.Sprintf("%.3f", *v)
	}
	summary := []string{}
	for _, d := range ds {
		bo, bp, bo64 := best{secs: -1}, best{secs: -1}, best{secs: -1}
		var lbfgs, rsvd float64
		for side, rep := range []*Report{ours, peers} {
			label := [2]string{"kdual", "peer"}[side]
			for _, r := range rep.Results {
				if r.Delta != d {
					continue
				}
				if r.Seconds != nil {
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
				if side == 0 && r.Float64Seconds != nil && (bo64.secs < 0 || *r.Float64Seconds < bo64.secs) {
					bo64 = best{r.Solver, *r.Float64Seconds}
				}
				fmt.Fprintf(w, "| %g | %s | %s | %s | %.1e | %d | %d |", d, label, r.Solver, secsOf(r.Seconds), r.Eta, r.Passes, r.MatVecs)
				if f64 {
					if side == 0 {
						fmt.Fprintf(w, " %s | %.1e |", secsOf(r.Float64Seconds), r.EtaOnFloat64)
					} else {
						fmt.Fprint(w, " | |")
					}
				}
				fmt.Fprintln(w)
			}
		}
		line := fmt.Sprintf("δ=%g:", d)
		if bo.secs > 0 && bp.secs > 0 {
			line += fmt.Sprintf(" kdual best %s %.3fs, peer best %s %.3fs, kdual-best/peer-best %.2f;", bo.name, bo.secs, bp.name, bp.secs, bo.secs/bp.secs)
		}
		if f64 && bo64.secs > 0 && bp.secs > 0 {
			line += fmt.Sprintf(" on float64: kdual best %s %.3fs, ratio %.2f;", bo64.name, bo64.secs, bo64.secs/bp.secs)
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
