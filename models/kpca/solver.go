package kpca

import (
	"fmt"

	"github.com/kdual/kdual/eig"
)

// Solver says how KPCA solves and carries the solver's options: one of
// Eigen, LBFGS and DCA. A nil Solver is Eigen{}: eig.Auto, paired by the
// planner with the kernel operator.
type Solver interface {
	// Name is the solver's name in Info and in the command line's output.
	Name() string
	kpcaSolver()
}

// Eigen solves with an eigensolver of package eig, configured on the
// solver value itself (eig.Lanczos{Tol: 1e-12}, eig.Randomized{Oversample:
// 20}, …). A nil Solver, or an eig.Auto, lets the planner pair the
// operator with its solver (blocks of max(3s, 32) for the matrix-free
// operator); eig.Auto's Tol and Seed are kept.
type Eigen struct {
	Solver eig.Solver
}

// Name is auto, dense, lanczos, block, randomized, or the Go type of
// another eigensolver.
func (e Eigen) Name() string { return eigName(e.Solver) }

func (Eigen) kpcaSolver() {}

func eigName(s eig.Solver) string {
	switch s.(type) {
	case nil, eig.Auto:
		return "auto"
	case eig.DenseSolver:
		return "dense"
	case eig.Lanczos:
		return "lanczos"
	case eig.BlockKrylov:
		return "block"
	case eig.Randomized:
		return "randomized"
	}
	return fmt.Sprintf("%T", s)
}

// eigTol is the tolerance an eigensolver of package eig was given (0 for
// the direct and unknown solvers), for the planner's choice of storage.
func eigTol(s eig.Solver) float64 {
	switch v := s.(type) {
	case eig.Auto:
		return v.Tol
	case eig.Lanczos:
		return v.Tol
	case eig.BlockKrylov:
		return v.Tol
	case eig.Randomized:
		return v.Tol
	}
	return 0
}

// LBFGS minimises the dual cost d(H) = ½‖H‖² − Tr√(HᵀGH) with L-BFGS, one
// pass over G per iteration (SolveDual; DualOptions documents the fields).
// The eigenpairs are the Rayleigh–Ritz pairs of span(H).
type LBFGS struct {
	// Tol: ‖∇d‖ ≤ Tol·‖H‖ or a relative decrease of d below Tol over 5
	// iterations; 0 means 1e-8 and 1e-12 (eigenvalues to 1e-8 relative of
	// the dense solver's, scores to 1e-6, on digits and Fashion-MNIST).
	Tol float64
	// MaxIter bounds the iterations; 0 means 10 000.
	MaxIter int
	// Start and Seed of H₀.
	Start Start
	Seed  uint64
	// Stop is called after every iteration with the dual cost; true stops
	// (the benchmark's oracle η-stop uses it).
	Stop func(iter int, cost float64) bool
}

// Name is lbfgs.
func (LBFGS) Name() string { return "lbfgs" }

func (LBFGS) kpcaSolver() {}

// DCA is the DC algorithm for robust and sparse losses (the Huber and
// ε-insensitive kernel PCA of the robust-KPCA paper): H ←
// prox_{Ψ*}(G·H·M^{-1/2}), one pass over G per iteration, from the
// square-loss solution.
type DCA struct {
	// Loss and its parameter.
	Loss Loss
	// Tol: the relative change of the dual objective; 0 means 1e-9.
	Tol float64
	// MaxIter bounds the iterations; 0 means 10 000.
	MaxIter int
	// Start computes the square-loss solution DCA starts from; nil means
	// eig.Auto.
	Start eig.Solver
}

// Name is dca.
func (DCA) Name() string { return "dca" }

func (DCA) kpcaSolver() {}

// solverOf returns k's solver, Eigen{} for nil.
func (k *KPCA) solverOf() Solver {
	if k.Solver == nil {
		return Eigen{}
	}
	return k.Solver
}

// oneVector reports whether s multiplies one vector at a time (Lanczos):
// the planner then stores float32 only for memory, not for speed.
func oneVector(s Solver) bool {
	e, ok := s.(Eigen)
	if !ok {
		return false
	}
	_, lanczos := e.Solver.(eig.Lanczos)
	return lanczos
}

// planTol is the accuracy the planner may trade storage precision for.
func planTol(s Solver) float64 {
	switch v := s.(type) {
	case Eigen:
		return eigTol(v.Solver)
	case LBFGS:
		return v.Tol
	}
	return 0
}
