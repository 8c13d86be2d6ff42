package lbfgs

import "math"

// lineFunc evaluates φ(α) and φ'(α).
type lineFunc func(alpha float64) (phi, dphi float64)

// lineResult is where a line search ended.
type lineResult struct {
	alpha, phi, dphi float64
	evals            int
	ok               bool    // the strong Wolfe conditions hold
	minPhi           float64 // the lowest finite φ among all trials
}

// moreThuente searches for α satisfying the strong Wolfe conditions
// (Moré and Thuente, "Line search algorithms with guaranteed sufficient
// decrease", ACM TOMS 20, 1994), starting from alpha0 > 0, with
// φ(0) = phi0 and φ'(0) = dphi0 < 0. The interval of uncertainty is kept
// with safeguarded cubic and quadratic interpolation steps (step below).
func moreThuente(f lineFunc, phi0, dphi0, alpha0, ftol, gtol, alphaMax float64, maxEvals int) lineResult {
	const (
		xtol   = 1e-12 // relative width at which the interval is too small
		xtrapL = 1.1   // extrapolation bounds before a bracket is found
		xtrapU = 4.0
	)
	stp := alpha0
	brackt := false
	stage := 1
	gtest := ftol * dphi0
	width := alphaMax
	width1 := 2 * width
	stx, fx, gx := 0.0, phi0, dphi0
	sty, fy, gy := 0.0, phi0, dphi0
	stmin, stmax := 0.0, stp+xtrapU*stp
	best := lineResult{alpha: 0, phi: phi0, dphi: dphi0, minPhi: math.Inf(1)}
	minPhi := math.Inf(1)
	for evals := 1; evals <= maxEvals; evals++ {
		fp, gp := f(stp)
		if !math.IsNaN(fp) {
			minPhi = math.Min(minPhi, fp)
		}
		best.minPhi = minPhi
		res := lineResult{alpha: stp, phi: fp, dphi: gp, evals: evals, minPhi: minPhi}
		if math.IsNaN(fp) || math.IsNaN(gp) || math.IsInf(fp, 0) {
			// Step into a region where the function is undefined: shrink.
			stmax = stp
			brackt = true
			sty, fy, gy = stp, math.Inf(1), 0
			stp = stx + 0.5*(stp-stx)
			best.evals = evals
			continue
		}
		ftest := phi0 + stp*gtest
		if fp <= ftest && fp < best.phi {
			best = res
		}
		best.evals = evals
		if stage == 1 && fp <= ftest && gp >= 0 {
			stage = 2
		}
		if fp <= ftest && math.Abs(gp) <= gtol*(-dphi0) {
			res.ok = true
			return res
		}
		if brackt && (stp <= stmin || stp >= stmax) {
			return best // rounding errors prevent progress
		}
		if brackt && stmax-stmin <= xtol*stmax {
			return best
		}
		if stp == alphaMax && fp <= ftest && gp <= gtest {
			return res
		}
		if stage == 1 && fp <= fx && fp > ftest {
			// The modified function ψ(α) = φ(α) − φ(0) − gtest·α.
			fm, fxm, fym := fp-stp*gtest, fx-stx*gtest, fy-sty*gtest
			gm, gxm, gym := gp-gtest, gx-gtest, gy-gtest
			stx, fxm, gxm, sty, fym, gym, stp, brackt = step(stx, fxm, gxm, sty, fym, gym, stp, fm, gm, brackt, stmin, stmax)
			fx, fy = fxm+stx*gtest, fym+sty*gtest
			gx, gy = gxm+gtest, gym+gtest
		} else {
			stx, fx, gx, sty, fy, gy, stp, brackt = step(stx, fx, gx, sty, fy, gy, stp, fp, gp, brackt, stmin, stmax)
		}
		if brackt {
			if math.Abs(sty-stx) >= 0.66*width1 {
				stp = stx + 0.5*(sty-stx)
			}
			width1 = width
			width = math.Abs(sty - stx)
			stmin, stmax = math.Min(stx, sty), math.Max(stx, sty)
		} else {
			stmin = stp + xtrapL*(stp-stx)
			stmax = stp + xtrapU*(stp-stx)
		}
		stp = math.Max(0, math.Min(stp, alphaMax))
		if brackt && (stp <= stmin || stp >= stmax || stmax-stmin <= xtol*stmax) {
			stp = stx
		}
	}
	return best
}

// step computes a safeguarded trial step and updates the interval
// [stx, sty] that contains a step satisfying the conditions: x is the
// endpoint with the lowest function value, p the trial. The four cases are
// those of Moré and Thuente's paper (higher value; derivatives of opposite
// sign; smaller derivative magnitude; larger one).
func step(stx, fx, dx, sty, fy, dy, stp, fp, dp float64, brackt bool, stpmin, stpmax float64) (
	float64, float64, float64, float64, float64, float64, float64, bool) {
	sgnd := dp * math.Copysign(1, dx)
	var stpf float64
	switch {
	case fp > fx:
		// Case 1: the minimum is bracketed; cubic unless the quadratic is closer to x.
		theta := 3*(fx-fp)/(stp-stx) + dx + dp
		gamma := cubicGamma(theta, dx, dp)
		if stp < stx {
			gamma = -gamma
		}
		p := (gamma - dx) + theta
		q := ((gamma - dx) + gamma) + dp
		stpc := stx + (p/q)*(stp-stx)
		stpq := stx + ((dx/((fx-fp)/(stp-stx)+dx))/2)*(stp-stx)
		if math.Abs(stpc-stx) < math.Abs(stpq-stx) {
			stpf = stpc
		} else {
			stpf = stpc + (stpq-stpc)/2
		}
		brackt = true
	case sgnd < 0:
		// Case 2: derivatives of opposite sign bracket a minimum.
		theta := 3*(fx-fp)/(stp-stx) + dx + dp
		gamma := cubicGamma(theta, dx, dp)
		if stp > stx {
			gamma = -gamma
		}
		p := (gamma - dp) + theta
		q := ((gamma - dp) + gamma) + dx
		stpc := stp + (p/q)*(stx-stp)
		stpq := stp + (dp/(dp-dx))*(stx-stp)
		if math.Abs(stpc-stp) > math.Abs(stpq-stp) {
			stpf = stpc
		} else {
			stpf = stpq
		}
		brackt = true
	case math.Abs(dp) < math.Abs(dx):
		// Case 3: the derivative magnitude decreases.
		stpf = stepDecreasing(stx, fx, dx, sty, stp, fp, dp, brackt, stpmin, stpmax)
	default:
		// Case 4: the derivative magnitude does not decrease.
		switch {
		case brackt:
			theta := 3*(fp-fy)/(sty-stp) + dy + dp
			gamma := cubicGamma(theta, dy, dp)
			if stp > sty {
				gamma = -gamma
			}
			p := (gamma - dp) + theta
			q := ((gamma - dp) + gamma) + dy
			stpf = stp + (p/q)*(sty-stp)
		case stp > stx:
			stpf = stpmax
		default:
			stpf = stpmin
		}
	}
	// Update the interval.
	if fp > fx {
		sty, fy, dy = stp, fp, dp
	} else {
		if sgnd < 0 {
			sty, fy, dy = stx, fx, dx
		}
		stx, fx, dx = stp, fp, dp
	}
	return stx, fx, dx, sty, fy, dy, stpf, brackt
}

// stepDecreasing is Moré and Thuente's case 3 (the derivative's magnitude
// decreases, no sign change): the cubic step if it goes the right way,
// else the interval's end; within a bracket the nearer of it and the
// secant step, kept within 0.66 of the way to the far end; else the
// farther, clamped to [stpmin, stpmax].
func stepDecreasing(stx, fx, dx, sty, stp, fp, dp float64, brackt bool, stpmin, stpmax float64) float64 {
	var stpf float64
	theta := 3*(fx-fp)/(stp-stx) + dx + dp
	gamma := cubicGamma(theta, dx, dp)
	if stp > stx {
		gamma = -gamma
	}
	p := (gamma - dp) + theta
	q := (gamma + (dx - dp)) + gamma
	r := p / q
	var stpc float64
	switch {
	case r < 0 && gamma != 0:
		stpc = stp + r*(stx-stp)
	case stp > stx:
		stpc = stpmax
	default:
		stpc = stpmin
	}
	stpq := stp + (dp/(dp-dx))*(stx-stp)
	if brackt {
		if math.Abs(stpc-stp) < math.Abs(stpq-stp) {
			stpf = stpc
		} else {
			stpf = stpq
		}
		if stp > stx {
			stpf = math.Min(stp+0.66*(sty-stp), stpf)
		} else {
			stpf = math.Max(stp+0.66*(sty-stp), stpf)
		}
	} else {
		if math.Abs(stpc-stp) > math.Abs(stpq-stp) {
			stpf = stpc
		} else {
			stpf = stpq
		}
		stpf = math.Max(stpmin, math.Min(stpmax, stpf))
	}
	return stpf
}

// cubicGamma is the square root in the minimiser of the cubic that
// interpolates two points with slopes a and b (θ from their values),
// √(θ² − a·b) scaled by s = max(|θ|, |a|, |b|) against overflow, and 0
// where rounding makes the radicand negative.
func cubicGamma(theta, a, b float64) float64 {
	s := math.Max(math.Abs(theta), math.Max(math.Abs(a), math.Abs(b)))
	return s * math.Sqrt(math.Max(0, (theta/s)*(theta/s)-(a/s)*(b/s)))
}
