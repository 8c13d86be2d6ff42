package kernel

// Spec is a Kernel as model files write it (in a header's JSON).
type Spec struct {
	Kind     string  `json:"kind"`
	Sigma    float64 `json:"sigma"`
	Degree   int     `json:"degree"`
	Gamma    float64 `json:"gamma"`
	Coef0    float64 `json:"coef0"`
	Coef0Set bool    `json:"coef0_set,omitempty"`
}

// Spec returns k as a model file writes it: c₀ of the polynomial and
// sigmoid kernels resolved (C0) and marked as set, so the file means the
// same kernel whatever the defaults of the kdual that reads it.
func (k Kernel) Spec() Spec {
	s := Spec{Kind: k.Kind.String(), Sigma: k.Sigma, Degree: k.Degree, Gamma: k.Gamma, Coef0: k.Coef0, Coef0Set: k.Coef0Set}
	if k.Kind == Polynomial || k.Kind == Sigmoid {
		s.Coef0, s.Coef0Set = k.C0(), true
	}
	return s
}

// Kernel returns the kernel s describes, checked (errors wrap ErrInvalid).
// A polynomial kernel without coef0_set comes from a file written before
// c₀ had a default, when c₀ = 0 meant the homogeneous kernel: its Coef0
// is used as written, 0 included.
func (s Spec) Kernel() (Kernel, error) {
	kind, err := ParseKind(s.Kind)
	if err != nil {
		return Kernel{}, err
	}
	k := Kernel{Kind: kind, Sigma: s.Sigma, Degree: s.Degree, Gamma: s.Gamma, Coef0: s.Coef0, Coef0Set: s.Coef0Set}
	if kind == Polynomial {
		k.Coef0Set = true
	}
	if err := k.Check(); err != nil {
		return Kernel{}, err
	}
	return k, nil
}
