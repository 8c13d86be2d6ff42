package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/dataset"
	"github.com/kdual/kdual/models/kpca"
)

// streamReport is kdual kpca fit --stream's JSON.
type streamReport struct {
	Eigenvalues []float64 `json:"eigenvalues"`
	Info        struct {
		N               int     `json:"n"`
		D               int     `json:"d"`
		Components      int     `json:"components"`
		Landmarks       int     `json:"landmarks"`
		Sample          int     `json:"sample"`
		Chunk           int     `json:"chunk"`
		Kernel          string  `json:"kernel"`
		Sigma           float64 `json:"sigma,omitempty"`
		TraceError      float64 `json:"trace_error"`
		EigenvalueBound float64 `json:"eigenvalue_bound"`
		Passes          int     `json:"passes"`
		SampleSeconds   float64 `json:"sample_seconds"`
		FirstSeconds    float64 `json:"first_pass_seconds"`
		SolveSeconds    float64 `json:"solve_seconds"`
		SecondSeconds   float64 `json:"second_pass_seconds"`
		Seconds         float64 `json:"seconds"`
		Bytes           int64   `json:"bytes"`
		ScoresOut       string  `json:"scores_out,omitempty"`
	} `json:"info"`
}

// maybeStream runs the streamed fit when --stream is given (streamed
// true) and refuses its options otherwise.
func (f *kpcaFlags) maybeStream(cmd string, set map[string]bool, stdout io.Writer) (streamed bool, err error) {
	if set["stream"] {
		return true, f.streamFit(cmd, set, stdout)
	}
	for _, name := range []string{"chunk", "sample", "scores-out"} {
		if set[name] && !(name == "sample" && *f.approxName == "nystrom") {
			return false, usagef("--%s is for --stream", name)
		}
	}
	return false, nil
}

// streamFit is kdual kpca fit --stream: Nyström KPCA of an 8-bit IDX file
// read in chunks (kpca.Stream), the scores written to --scores-out.
func (f *kpcaFlags) streamFit(cmd string, set map[string]bool, stdout io.Writer) error {
	if cmd != "fit" {
		return usagef("--stream is for kdual kpca fit")
	}
	if *f.approxName != "nystrom" {
		return usagef("--stream: give --approx nystrom (a streamed fit is a Nyström fit)")
	}
	for _, name := range []string{"input", "data", "n", "apply", "max-rows", "solver", "loss", "param", "relative", "tol", "operator",
		"memory", "products", "start-rank", "check", "save", "plot", "fit-inverse", "alpha", "mpi", "mpi-timeout", "sampler", "trace-tol",
		"features", "approx-precision", "format", "delimiter", "label-column", "columns", "degree", "coef0"} {
		if set[name] {
			return usagef("--%s does not apply to --stream", name)
		}
	}
	if *f.chunk < 1 || *f.sample < 0 {
		return usagef("--chunk %d, --sample %d: want a chunk ≥ 1 and a sample ≥ 0", *f.chunk, *f.sample)
	}
	src, err := dataset.OpenIDX8(*f.stream)
	if err != nil {
		return err
	}
	defer src.Close()
	n, d := src.Dims()
	m := *f.landmarks
	if m == 0 {
		m = min(1000, n)
	}
	// The kernel's parameters from the first rows (the median bandwidth
	// reads the first 1000).
	head := mat.NewDense(min(n, 1000), d, nil)
	row := make([]uint8, d)
	for i := 0; i < head.RawMatrix().Rows; i++ {
		if err := src.ReadRows(i, row); err != nil {
			return err
		}
		for j, v := range row {
			head.Set(i, j, *f.scale*float64(v))
		}
	}
	k, _, err := kpcaKernelOf(*f.kern, set, "auto", *f.bw, *f.gamma, *f.degree, *f.coef0, head)
	if err != nil {
		return err
	}
	st := kpca.Stream{Components: *f.s, Kernel: k, Rank: m, Step: *f.scale, Sample: *f.sample, Chunk: *f.chunk, Seed: *f.seed,
		NoCenter: *f.noCenter, Context: runCtx}
	var npy *npyWriter
	if *f.scoresOut != "" {
		if npy, err = newNPYWriter(*f.scoresOut, n, *f.s); err != nil {
			return err
		}
		defer npy.abort()
		st.Scores = func(_ int, sc *mat.Dense) error { return npy.rows(sc) }
	}
	start := time.Now()
	res, err := st.Fit(src)
	if err != nil {
		return err
	}
	var rep streamReport
	if npy != nil {
		if err := npy.close(); err != nil {
			return err
		}
		rep.Info.ScoresOut = *f.scoresOut
	}
	rep.Eigenvalues = res.Values
	in := &rep.Info
	in.N, in.D, in.Components, in.Landmarks, in.Sample, in.Chunk = n, d, *f.s, res.Rank, res.Sample, res.Chunk
	in.Kernel, in.Sigma = k.Kind.String(), k.Sigma
	in.TraceError, in.EigenvalueBound, in.Passes = res.TraceError, res.EigenvalueBound, res.Passes
	in.SampleSeconds, in.FirstSeconds, in.SolveSeconds, in.SecondSeconds = res.SampleSeconds, res.FirstSeconds, res.SolveSeconds, res.SecondSeconds
	in.Seconds, in.Bytes = time.Since(start).Seconds(), res.Bytes
	return writeJSONOrTable(stdout, *f.jsonOut, rep, func() {
		fmt.Fprintf(stdout, "streamed Nyström KPCA: n = %d, d = %d, m = %d landmarks (sample %d), %d passes, trace error %.4g, %.1f s\n",
			n, d, res.Rank, res.Sample, res.Passes, res.TraceError, in.Seconds)
		for i, v := range res.Values {
			fmt.Fprintf(stdout, "λ%d = %.10g\n", i+1, v)
		}
	})
}

// npyWriter writes an n×s float64 NPY file row block by row block.
type npyWriter struct {
	path, tmp string
	f         *os.File
	w         *bufio.Writer
	want, got int
	buf       []byte
}

func newNPYWriter(path string, n, s int) (*npyWriter, error) {
	tmp := path + ".partial"
	f, err := os.Create(tmp)
	if err != nil {
		return nil, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	header := fmt.Sprintf("{'descr': '<f8', 'fortran_order': False, 'shape': (%d, %d), }", n, s)
	// Magic, version 1.0, the header's length, the header padded with
	// spaces and a newline to a multiple of 64 bytes.
	pad := 64 - (10+len(header)+1)%64
	if pad == 64 {
		pad = 0
	}
	header += fmt.Sprintf("%*s\n", pad, "")
	pre := append([]byte("\x93NUMPY\x01\x00"), 0, 0)
	binary.LittleEndian.PutUint16(pre[8:], uint16(len(header)))
	if _, err := w.Write(append(pre, header...)); err != nil {
		f.Close()
		os.Remove(tmp)
		return nil, err
	}
	return &npyWriter{path: path, tmp: tmp, f: f, w: w, want: n}, nil
}

// rows appends the rows of sc.
func (p *npyWriter) rows(sc *mat.Dense) error {
	r, c := sc.Dims()
	if cap(p.buf) < 8*c {
		p.buf = make([]byte, 8*c)
	}
	b := p.buf[:8*c]
	for i := 0; i < r; i++ {
		for j, v := range sc.RawRowView(i) {
			binary.LittleEndian.PutUint64(b[8*j:], math.Float64bits(v))
		}
		if _, err := p.w.Write(b); err != nil {
			return err
		}
	}
	p.got += r
	return nil
}

// close finishes the file (every row written) and moves it into place.
func (p *npyWriter) close() error {
	if p.got != p.want {
		return fmt.Errorf("kpca fit --stream: %d of %d rows of scores written", p.got, p.want)
	}
	if err := p.w.Flush(); err != nil {
		return err
	}
	if err := p.f.Close(); err != nil {
		return err
	}
	p.f = nil
	return os.Rename(p.tmp, p.path)
}

// abort removes an unfinished file.
func (p *npyWriter) abort() {
	if p.f != nil {
		p.f.Close()
		os.Remove(p.tmp)
	}
}
