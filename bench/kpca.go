package bench

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/dataset"
	"github.com/kdual/kdual/eig"
	"github.com/kdual/kdual/gram"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/linalg"
	"github.com/kdual/kdual/models/kpca"
	"github.com/kdual/kdual/status"
)

// KPCAProblem is one benchmark problem of the dual-KPCA paper's protocol.
type KPCAProblem struct {
	Data      string  `json:"data"` // randn or fashion
	N         int     `json:"n"`
	D         int     `json:"d"`
	S         int     `json:"components"`
	Kernel    string  `json:"kernel"`    // laplace or gaussian
	Bandwidth string  `json:"bandwidth"` // paper, median or a number
	Sigma     float64 `json:"sigma"`
	Center    bool    `json:"center"`
	Float32   bool    `json:"float32"`
	Seed      uint64  `json:"seed"`
	// Operator asks for a kernel operator ("", "auto": eig.PlanOperator
	// chooses from n, d, s, the smallest δ and Memory; "float64",
	// "float32", "matrix-free"); after Build it holds the one used and
	// PlanReason why. Float32 is the former switch for "float32".
	Operator   string `json:"operator"`
	PlanReason string `json:"plan_reason"`
	// Memory is the planner's budget in bytes (0: the memory available);
	// Tol the accuracy it plans for (the smallest δ).
	Memory int64   `json:"memory,omitempty"`
	Tol    float64 `json:"-"`
	// Products is the arithmetic of the inner products of the float32 and
	// matrix-free operators: "float64" (default) or "float32".
	Products string `json:"products,omitempty"`
	// Decay is c of the decay problem (Fig. 1): D_ii = exp(−c·i).
	Decay    float64 `json:"c,omitempty"`
	GramSecs float64 `json:"gram_seconds"`
	DOpt     float64 `json:"d_opt"`
	// Float64GramSecs is the float64 operator's build time when the rows
	// were also timed on it (kdual bench kpca --float64-time).
	Float64GramSecs float64 `json:"float64_gram_seconds,omitempty"`
	// PeakRSSGB is the process's peak resident memory at the end of the
	// run (Linux VmHWM), in GB.
	PeakRSSGB float64 `json:"peak_rss_gb"`
	// DataOut, when set, receives the data matrix for peer programs.
	DataOut string `json:"-"`
	// block is the planner's block Krylov for this problem (set by
	// Build; zero when it chose another solver, and after BuildOn):
	// SearchBlock runs it with the tolerance searched.
	block eig.BlockKrylov
}

// UnmarshalJSON reads a problem, also from reports written before the
// number of components was called "components" (then "s").
func (p *KPCAProblem) UnmarshalJSON(b []byte) error {
	type plain KPCAProblem
	aux := struct {
		*plain
		OldS *int `json:"s"`
	}{plain: (*plain)(p)}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	if aux.OldS != nil && p.S == 0 {
		p.S = *aux.OldS
	}
	return nil
}

// Built is a problem's kernel matrix as an operator.
type Built struct {
	Op eig.Operator
	G  *mat.SymDense // the explicit matrix of the decay problem; nil otherwise

	// searched remembers each eigensolver setting already run on this
	// matrix (its η does not depend on δ), so the search for a smaller δ
	// does not run the settings that failed a larger one again.
	searched map[string]searchRun
}

type searchRun struct {
	eta                         float64
	passes, matvecs, iterations int
	seconds                     float64
	failed                      bool
	status                      status.Code
	h                           *mat.Dense // the answer as a dual H (EigenEta)
}

// PeakRSSGB reads the process's peak resident set size (Linux VmHWM) in
// GB; 0 where /proc is not available.
func PeakRSSGB() float64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			var kb float64
			if _, err := fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(line, "VmHWM:")), "%g kB", &kb); err == nil {
				return kb * 1024 / 1e9
			}
		}
	}
	return 0
}

// Build makes the data, the bandwidth, the kernel matrix and the operator,
// and d_opt = −½ Σ_{i≤s} λ_i(G) from a converged eigensolve (not timed).
func (p *KPCAProblem) Build() (*Built, error) {
	if p.Data == "decay" {
		return p.buildDecay()
	}
	x, kind, err := p.prepare()
	if err != nil {
		return nil, err
	}
	want := eig.OperatorAuto
	if p.Operator != "" {
		if want, err = eig.ParseOperatorKind(p.Operator); err != nil {
			return nil, err
		}
	}
	if p.Float32 && want == eig.OperatorAuto {
		want = eig.OperatorFloat32
	}
	_, d := x.Dims()
	plan, err := eig.PlanOperator(eig.PlanInput{N: p.N, D: d, K: p.S, Tol: p.Tol, Budget: p.Memory, Want: want,
		NonNegative: kernel.Kernel{Kind: kind}.NonNegative()})
	if err != nil {
		return nil, err
	}
	p.Operator, p.PlanReason = plan.Operator.String(), plan.Reason
	if bk, ok := plan.Solver.(eig.BlockKrylov); ok {
		p.block = bk
	}
	p.Float32 = plan.Operator == eig.OperatorFloat32
	prec := gram.ProductsFloat64
	switch p.Products {
	case "", "float64":
		p.Products = "float64"
	case "float32":
		prec = gram.ProductsFloat32
	default:
		return nil, fmt.Errorf("bench: products %q: want float64 or float32: %w", p.Products, status.ErrInvalid)
	}
	if plan.Bytes >= 1<<30 {
		// Return the data loader's garbage to the system before the
		// n²-sized allocation: the peak (VmHWM) then counts the data
		// and the matrix, not what reading them left behind.
		debug.FreeOSMemory()
	}
	switch plan.Operator {
	case eig.OperatorFloat32:
		return p.buildFloat32(x, kind, gram.GramOptions{Products: prec, SingleBlocks: plan.SingleBlocks})
	case eig.OperatorMatrixFree:
		start := time.Now()
		op, err := eig.NewKernelOperator(x, kernel.Kernel{Kind: kind, Sigma: p.Sigma}, eig.OperatorMatrixFree, p.Center, gram.GramOptions{Products: prec})
		if err != nil {
			return nil, err
		}
		p.GramSecs = time.Since(start).Seconds()
		// The reference at a tight tolerance with the planner's wide
		// blocks: every pass forms the kernel again.
		ref, err := eig.BlockKrylov{Tol: 1e-12, Block: plan.Solver.(eig.BlockKrylov).Block}.Solve(op, p.S)
		if err != nil {
			return nil, fmt.Errorf("bench: reference eigensolve: %w", err)
		}
		if p.DOpt, err = kpca.OptimalCost(ref.Values); err != nil {
			return nil, err
		}
		return &Built{Op: op}, nil
	}
	// float64: one triangle in tiles (eig.Float64Tiles), centred
	// implicitly; the dense solvers get the matrix from it when they run.
	start := time.Now()
	op, err := eig.NewKernelOperator(x, kernel.Kernel{Kind: kind, Sigma: p.Sigma}, eig.OperatorFloat64, p.Center, gram.GramOptions{})
	if err != nil {
		return nil, err
	}
	p.GramSecs = time.Since(start).Seconds()
	if err := p.reference(op); err != nil {
		return nil, err
	}
	return &Built{Op: op}, nil
}

// prepare makes the data (written to DataOut when asked) and the kernel
// with its bandwidth.
func (p *KPCAProblem) prepare() (*mat.Dense, kernel.Kind, error) {
	x, err := p.data()
	if err != nil {
		return nil, 0, err
	}
	if p.DataOut != "" {
		if err := writeFloats(p.DataOut, mat.DenseCopyOf(x).RawMatrix().Data); err != nil {
			return nil, 0, err
		}
	}
	kind, err := kernel.ParseKind(p.Kernel)
	if err != nil {
		return nil, 0, err
	}
	if kind != kernel.Gaussian && kind != kernel.Laplace {
		return nil, 0, fmt.Errorf("bench: kernel %q: want laplace or gaussian: %w", p.Kernel, status.ErrInvalid)
	}
	if p.Bandwidth == "" {
		p.Bandwidth = "paper"
	}
	if p.Sigma, err = kernel.Bandwidth(p.Bandwidth, kind, x); err != nil {
		return nil, 0, err
	}
	return x, kind, nil
}

// OperatorMaker builds a problem's kernel operator from its data and
// kernel (BuildOn): the operator, its name, why it was chosen, and whether
// it is matrix-free (every pass forms the kernel again).
type OperatorMaker func(x *mat.Dense, k kernel.Kernel) (op eig.Operator, name, reason string, matrixFree bool, err error)

// BuildOn makes the data and bandwidth as Build does and the operator with
// mk — for example this rank's part of a row-distributed operator, on
// which the benchmark's runs work unchanged (RunLBFGS, and RunEigen with
// Lanczos or block Krylov); mk's time is the Gram time. d_opt comes from
// a converged solve on that operator (not timed): Lanczos at 1e-13, or,
// matrix-free, block Krylov at 1e-12 in blocks of max(3s, 32). The decay
// problem has no data and is refused.
func (p *KPCAProblem) BuildOn(mk OperatorMaker) (*Built, error) {
	if p.Data == "decay" {
		return nil, fmt.Errorf("bench: the decay problem is a matrix, not data: %w", status.ErrInvalid)
	}
	x, kind, err := p.prepare()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	op, name, reason, free, err := mk(x, kernel.Kernel{Kind: kind, Sigma: p.Sigma})
	if err != nil {
		return nil, err
	}
	p.GramSecs = time.Since(start).Seconds()
	p.Operator, p.PlanReason = name, reason
	p.Float32 = name == "float32"
	if p.Products == "" {
		p.Products = "float64"
	}
	if !free {
		return &Built{Op: op}, p.reference(op)
	}
	ref, err := eig.BlockKrylov{Tol: 1e-12, Block: max(3*p.S, 32)}.Solve(op, p.S)
	if err != nil {
		return nil, fmt.Errorf("bench: reference eigensolve: %w", err)
	}
	p.DOpt, err = kpca.OptimalCost(ref.Values)
	return &Built{Op: op}, err
}

// buildDecay builds Fig. 1's matrix G = 0.01(X + Xᵀ) + U·diag(e^{−c·i})·Uᵀ
// (i = 0…n−1) with U a seeded random orthogonal matrix and
// X_ij ~ N(0, 1/(100n)), so that ‖0.01(X + Xᵀ)‖ ≈ 0.003 perturbs the
// prescribed spectrum without hiding the top s = 20 eigenvalues for
// c ≤ 0.2 (e^{−0.2·19} ≈ 0.02); the paper does not give X's distribution,
// and a larger perturbation makes G indefinite within its top s, where the
// dual cost is not defined. From c ≈ 0.2 on (n = 2000) the spectrum has so
// few large eigenvalues that HᵀGH of the standard-normal start is already
// indefinite; the figures use c ≤ 0.1.
func (p *KPCAProblem) buildDecay() (*Built, error) {
	if p.Seed == 0 {
		p.Seed = 1
	}
	if !(p.Decay > 0) {
		return nil, fmt.Errorf("bench: decay needs c > 0, have %g: %w", p.Decay, status.ErrInvalid)
	}
	n := p.N
	start := time.Now()
	g, err := dataset.StandardNormal(n, n, p.Seed+1)
	if err != nil {
		return nil, err
	}
	u, _, err := linalg.QR(g)
	if err != nil {
		return nil, err
	}
	ud := mat.DenseCopyOf(u)
	for i := 0; i < n; i++ {
		row := ud.RawRowView(i)
		for j := range row {
			row[j] *= math.Exp(-p.Decay * float64(j))
		}
	}
	var m mat.Dense
	m.Mul(ud, u.T())
	x, err := dataset.StandardNormal(n, n, p.Seed+2)
	if err != nil {
		return nil, err
	}
	sc := 0.01 / (10 * math.Sqrt(float64(n)))
	sym := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			sym.SetSym(i, j, 0.5*(m.At(i, j)+m.At(j, i))+sc*(x.At(i, j)+x.At(j, i)))
		}
	}
	linalg.Symmetrize(sym)
	p.Kernel, p.Bandwidth, p.D = "none", "none", n
	p.GramSecs = time.Since(start).Seconds()
	op, err := eig.NewDense(sym)
	if err != nil {
		return nil, err
	}
	if err := p.reference(op); err != nil {
		return nil, err
	}
	return &Built{Op: op, G: sym}, nil
}

// buildFloat32 builds the kernel matrix straight into float32 half
// storage (no n×n float64 matrix: n = 60 000 takes 7.2 GB), centred
// implicitly.
func (p *KPCAProblem) buildFloat32(x *mat.Dense, kind kernel.Kind, o gram.GramOptions) (*Built, error) {
	start := time.Now()
	tiles, err := kernel.GramTiles32(x, kernel.Kernel{Kind: kind, Sigma: p.Sigma}, o)
	if err != nil {
		return nil, err
	}
	f32, err := eig.NewFloat32Tiles(tiles)
	if err != nil {
		return nil, err
	}
	var op eig.Operator = f32
	if p.Center {
		if op, err = eig.NewCentered(f32); err != nil {
			return nil, err
		}
	}
	p.GramSecs = time.Since(start).Seconds()
	if err := p.reference(op); err != nil {
		return nil, err
	}
	return &Built{Op: op}, nil
}

// reference sets d_opt = −½ Σ_{i≤s} λ_i from Lanczos at a tight tolerance
// (not timed).
func (p *KPCAProblem) reference(op eig.Operator) error {
	ref, err := eig.Lanczos{Tol: 1e-13}.Solve(op, p.S)
	if err != nil {
		return fmt.Errorf("bench: reference eigensolve: %w", err)
	}
	p.DOpt, err = kpca.OptimalCost(ref.Values)
	return err
}

func (p *KPCAProblem) data() (*mat.Dense, error) {
	if p.Seed == 0 {
		p.Seed = 1
	}
	switch p.Data {
	case "randn":
		if p.D == 0 {
			p.D = 256
		}
		x, err := dataset.StandardNormal(p.N, p.D, p.Seed)
		if err != nil {
			return nil, err
		}
		linalg.CenterColumns(x)
		return x, nil
	case "synth1":
		// Multivariate normal with covariance diag(1/j), j = 1…d: a fixed
		// covariance with a decaying spectrum (the paper does not give its
		// covariance). d defaults to 10 000 as in the paper.
		if p.D == 0 {
			p.D = 10000
		}
		scale := make([]float64, p.D)
		for j := range scale {
			scale[j] = 1 / math.Sqrt(float64(j+1))
		}
		x, err := dataset.StandardNormal(p.N, p.D, p.Seed)
		if err != nil {
			return nil, err
		}
		for i := 0; i < p.N; i++ {
			row := x.RawRowView(i)
			for j := range row {
				row[j] *= scale[j]
			}
		}
		linalg.CenterColumns(x)
		return x, nil
	case "fashion":
		f, err := dataset.LoadFashion("", "train", p.N)
		if err != nil {
			return nil, err
		}
		p.D = 784
		linalg.CenterColumns(f.X)
		return f.X, nil
	}
	return nil, fmt.Errorf("bench: data %q: want randn, synth1, fashion or decay: %w", p.Data, status.ErrInvalid)
}

// Median returns the median of v (v is not modified).
func Median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	m := len(s) / 2
	if len(s)%2 == 0 {
		return 0.5 * (s[m-1] + s[m])
	}
	return s[m]
}

func writeFloats(path string, v []float64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return binary.Write(f, binary.LittleEndian, v)
}
