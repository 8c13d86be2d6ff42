package main

import (
	"regexp"
	"strings"
)

// kdualPackages are the package names that prefix library errors
// ("kpca: Fit: eig: PlanOperator: …"): the command's own prefix says
// where the error came from, so these are left out of what is printed.
var kdualPackages = map[string]bool{
	"kpca": true, "ppca": true, "rkm": true, "kmvda": true, "eig": true, "linalg": true, "kernel": true,
	"approx": true, "dist": true, "mpi": true, "lbfgs": true, "stiefel": true, "status": true,
	"modelfile": true, "dataset": true, "lapack": true, "native": true, "bigmem": true, "paths": true,
}

// noiseSegments are the texts of sentinel errors (status.ErrInvalid,
// dataset's malformed input, errUsage) that end or start a chain: the
// exit code already tells a usage error from a failure.
var noiseSegments = map[string]bool{"invalid input": true, "malformed input": true, "usage": true}

// funcName matches a Go function or method name used as a prefix
// ("Fit", "PlanOperator", "KernelRows.Cross").
var funcName = regexp.MustCompile(`^[A-Z][a-z][A-Za-z0-9]*(\.[A-Z][A-Za-z0-9]*)?$`)

// errorText is err's message as the command prints it after its one
// prefix ("kdual kpca: "): the segments of the chain (separated by ": ")
// that are package or function prefixes or sentinel texts are left out,
// and a segment equal to the one before it is said once. A message that
// would be left empty is printed whole.
func errorText(msg string) string {
	var kept []string
	for _, seg := range strings.Split(msg, ": ") {
		t := strings.TrimSpace(seg)
		if kdualPackages[t] || noiseSegments[t] || (funcName.MatchString(t) && t != "NaN" && t != "Inf") {
			continue
		}
		if len(kept) > 0 && kept[len(kept)-1] == seg {
			continue
		}
		kept = append(kept, seg)
	}
	if len(kept) == 0 {
		return msg
	}
	return strings.Join(kept, ": ")
}
