package gonum

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/lapack"
	native "gonum.org/v1/gonum/lapack/gonum"
)

// spd is an n×n symmetric positive definite row-major matrix with stride
// ld, in a slice of exactly the length gonum requires.
func spd(n, ld int) []float64 {
	a := make([]float64, max(0, (n-1)*ld+n))
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			v := 1 / float64(1+i+j)
			if i == j {
				v += float64(n)
			}
			a[i*ld+j] = v
		}
	}
	return a
}

func fs(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = 1 + float64(i%5)/7
	}
	return v
}

func perm(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = n - 1 - i
	}
	return p
}

// goodCalls gives, for every method of lapack.Float64, the arguments of a
// valid call (fresh slices each time: the methods write them). Sizes: 4×4
// (m×n = 5×4 where rectangular), 2 right-hand sides, band width 1.
func goodCalls() map[string]func() []any {
	const n, m, nrhs, kd = 4, 5, 2, 1
	w := func() []float64 { return make([]float64, 1024) }
	return map[string]func() []any{
		"Dsyev": func() []any { return []any{lapack.EVCompute, blas.Upper, n, spd(n, n), n, fs(n), w(), 1024} },
		"Dgesvd": func() []any {
			return []any{lapack.SVDAll, lapack.SVDAll, m, n, fs(m * n), n, fs(n), fs(m * m), m, fs(n * n), n, w(), 1024}
		},
		"Dgeev": func() []any {
			return []any{lapack.LeftEVCompute, lapack.RightEVCompute, n, spd(n, n), n, fs(n), fs(n), fs(n * n), n, fs(n * n), n, w(), 1024}
		},
		"Dggsvd3": func() []any {
			return []any{lapack.GSVDU, lapack.GSVDV, lapack.GSVDQ, m, n, n, fs(m * n), n, spd(n, n), n, fs(n), fs(n), fs(m * m), m, fs(n * n), n, fs(n * n), n, w(), 1024, make([]int, n)}
		},
		"Dpotrf": func() []any { return []any{blas.Upper, n, spd(n, n), n} },
		"Dpotri": func() []any { return []any{blas.Lower, n, spd(n, n), n} },
		"Dpotrs": func() []any { return []any{blas.Upper, n, nrhs, spd(n, n), n, fs(n * nrhs), nrhs} },
		"Dpocon": func() []any { return []any{blas.Upper, n, spd(n, n), n, 2.0, fs(3 * n), make([]int, n)} },
		"Dpstrf": func() []any { return []any{blas.Lower, n, spd(n, n), n, make([]int, n), -1.0, fs(2 * n)} },
		"Dpbtrf": func() []any { return []any{blas.Upper, n, kd, spd(n, kd+1)[:n*(kd+1)], kd + 1} },
		"Dpbtrs": func() []any {
			return []any{blas.Lower, n, kd, nrhs, spd(n, kd+1)[:n*(kd+1)], kd + 1, fs(n * nrhs), nrhs}
		},
		"Dpbcon": func() []any {
			return []any{blas.Upper, n, kd, spd(n, kd+1)[:n*(kd+1)], kd + 1, 3.0, fs(3 * n), make([]int, n)}
		},
		"Dgetrf": func() []any { return []any{m, n, fs(m * n), n, make([]int, n)} },
		// Second calls: the other jobs, sides and shapes.
		"Dsyev values": func() []any { return []any{lapack.EVNone, blas.Lower, n, spd(n, n), n, fs(n), w(), 1024} },
		"Dgesvd store": func() []any {
			return []any{lapack.SVDStore, lapack.SVDStore, m, n, fs(m * n), n, fs(n), fs(m * n), n, fs(n * n), n, w(), 1024}
		},
		"Dgesvd wide": func() []any {
			return []any{lapack.SVDStore, lapack.SVDAll, n, m, fs(m * n), m, fs(n), fs(n * n), n, fs(m * m), m, w(), 1024}
		},
		"Dgesvd none": func() []any {
			return []any{lapack.SVDNone, lapack.SVDNone, m, n, fs(m * n), n, fs(n), nil, 1, nil, 1, w(), 1024}
		},
		"Dgeev none": func() []any {
			return []any{lapack.LeftEVNone, lapack.RightEVNone, n, spd(n, n), n, fs(n), fs(n), nil, 1, nil, 1, w(), 1024}
		},
		"Dggsvd3 none": func() []any {
			return []any{lapack.GSVDNone, lapack.GSVDNone, lapack.GSVDNone, n, n, m, spd(n, n), n, fs(m * n), n, fs(n), fs(n), nil, 1, nil, 1, nil, 1, w(), 1024, make([]int, n)}
		},
		"Dgetrf wide":  func() []any { return []any{n, m, fs(m * n), m, make([]int, n)} },
		"Dpotrf lower": func() []any { return []any{blas.Lower, n, spd(n, n), n} },
		"Dtrtrs lower": func() []any {
			return []any{blas.Lower, blas.NoTrans, blas.Unit, n, nrhs, spd(n, n), n, fs(n * nrhs), nrhs}
		},
		"Dormqr right": func() []any {
			return []any{blas.Right, blas.NoTrans, m, n, 3, fs(n * 3), 3, fs(3), fs(m * n), n, w(), 1024}
		},
		"Dormlq left": func() []any {
			return []any{blas.Left, blas.Trans, m, n, 3, fs(3 * m), m, fs(3), fs(m * n), n, w(), 1024}
		},
		"Dlange max":    func() []any { return []any{lapack.MaxAbs, m, n, fs(m * n), n, nil} },
		"Dlange rows":   func() []any { return []any{lapack.MaxRowSum, m, n, fs(m * n), n, nil} },
		"Dlange frob":   func() []any { return []any{lapack.Frobenius, m, n, fs(m * n), n, nil} },
		"Dlansy column": func() []any { return []any{lapack.MaxColumnSum, blas.Upper, n, spd(n, n), n, fs(n)} },
		"Dlantr lower":  func() []any { return []any{lapack.MaxRowSum, blas.Lower, blas.Unit, n, m, fs(m * n), m, fs(m)} },
		"Dgecon inf":    func() []any { return []any{lapack.MaxRowSum, n, spd(n, n), n, 5.0, fs(4 * n), make([]int, n)} },
		"Dgetri":        func() []any { return []any{n, spd(n, n), n, []int{0, 1, 2, 3}, w(), 1024} },
		"Dgetrs":        func() []any { return []any{blas.Trans, n, nrhs, spd(n, n), n, []int{1, 1, 2, 3}, fs(n * nrhs), nrhs} },
		"Dgecon":        func() []any { return []any{lapack.MaxColumnSum, n, spd(n, n), n, 5.0, fs(4 * n), make([]int, n)} },
		"Dtrtri":        func() []any { return []any{blas.Lower, blas.NonUnit, n, spd(n, n), n} },
		"Dtrtrs": func() []any {
			return []any{blas.Upper, blas.Trans, blas.NonUnit, n, nrhs, spd(n, n), n, fs(n * nrhs), nrhs}
		},
		"Dtbtrs": func() []any {
			return []any{blas.Lower, blas.NoTrans, blas.Unit, n, kd, nrhs, spd(n, kd+1)[:n*(kd+1)], kd + 1, fs(n * nrhs), nrhs}
		},
		"Dtrcon": func() []any {
			return []any{lapack.MaxRowSum, blas.Upper, blas.NonUnit, n, spd(n, n), n, fs(3 * n), make([]int, n)}
		},
		"Dlange": func() []any { return []any{lapack.MaxColumnSum, m, n, fs(m * n), n, fs(n)} },
		"Dlansy": func() []any { return []any{lapack.MaxRowSum, blas.Lower, n, spd(n, n), n, fs(n)} },
		"Dlantr": func() []any { return []any{lapack.MaxColumnSum, blas.Upper, blas.NonUnit, m, n, fs(m * n), n, fs(n)} },
		"Dlapmr": func() []any { return []any{true, m, n, fs(m * n), n, perm(m)} },
		"Dlapmt": func() []any { return []any{false, m, n, fs(m * n), n, perm(n)} },
		"Dgeqrf": func() []any { return []any{m, n, fs(m * n), n, fs(n), w(), 1024} },
		"Dgelqf": func() []any { return []any{n, m, fs(m * n), m, fs(n), w(), 1024} },
		"Dorgqr": func() []any { return []any{m, n, 3, fs(m * n), n, fs(3), w(), 1024} },
		"Dorglq": func() []any { return []any{n, m, 3, fs(m * n), m, fs(3), w(), 1024} },
		"Dormqr": func() []any {
			return []any{blas.Left, blas.Trans, m, n, 3, fs(m * 3), 3, fs(3), fs(m * n), n, w(), 1024}
		},
		"Dormlq": func() []any {
			return []any{blas.Right, blas.NoTrans, m, n, 3, fs(3 * n), n, fs(3), fs(m * n), n, w(), 1024}
		},
		"Dgeqp3": func() []any { return []any{m, n, fs(m * n), n, make([]int, n), fs(n), w(), 1024} },
		"Dgels": func() []any {
			return []any{blas.NoTrans, m, n, nrhs, fs(m * n), n, fs(m * nrhs), nrhs, w(), 1024}
		},
	}
}

// outOfRange marks an index slice whose contents are out of range: where
// gonum's own accepts it (it does not read those indices), OpenBLAS might,
// so this implementation is not run on it.
type outOfRange []int

// variants of one argument: the bad (or boundary) values to try.
func variants(v any) []any {
	switch x := v.(type) {
	case nil: // an unused output
		return []any{[]float64{}}
	case int:
		out := []any{-1, 0}
		for _, y := range []int{x - 1, x + 1} {
			if y > 0 {
				out = append(out, y)
			}
		}
		return out
	case float64:
		return []any{-1.0, 0.0, math.NaN()}
	case bool:
		return []any{!x}
	case []float64:
		if len(x) == 0 {
			return nil
		}
		return []any{x[:len(x)-1], []float64(nil)}
	case []int:
		out := []any{[]int(nil)}
		if len(x) > 0 {
			out = append(out, x[:len(x)-1])
			bad := append([]int(nil), x...)
			bad[0] = -2 // an index out of range
			out = append(out, outOfRange(bad))
		}
		return out
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Uint8 { // gonum's enums (blas.Uplo, lapack.SVDJob, …)
		bad := reflect.New(rv.Type()).Elem()
		bad.SetUint('x')
		return []any{bad.Interface()}
	}
	panic(fmt.Sprintf("no variants for %T", v))
}

// call runs method name of impl with args and returns its panic ("" for
// none).
func call(impl any, name string, args []any) (msg string) {
	msg, _ = callResults(impl, name, args)
	return msg
}

// callResults is call with the method's boolean results (ok flags), when
// it returned.
func callResults(impl any, name string, args []any) (msg string, oks []bool) {
	m := reflect.ValueOf(impl).MethodByName(name)
	in := make([]reflect.Value, len(args))
	for i, a := range args {
		if o, ok := a.(outOfRange); ok {
			a = []int(o)
		}
		if a == nil {
			in[i] = reflect.Zero(m.Type().In(i))
		} else {
			in[i] = reflect.ValueOf(a).Convert(m.Type().In(i))
		}
	}
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprint(r)
		}
	}()
	for _, out := range m.Call(in) {
		if out.Kind() == reflect.Bool {
			oks = append(oks, out.Bool())
		}
	}
	return "", oks
}

// Every argument check of every method against gonum's: each argument of
// a valid call is replaced in turn by bad and boundary values (negative and
// zero sizes, sizes one off, a slice one short or nil, an index out of
// range, an enum out of range, a negative or NaN norm); wherever gonum's
// own implementation panics, this one panics with the same message (with a
// clear "lapack: …" one where gonum's fails with a runtime error), and
// where gonum's accepts the arguments (a zero size, a larger leading
// dimension or workspace) this one does too — except index contents out of
// range that gonum's never reads, which this one is not given (OpenBLAS
// might read them).
func TestEveryArgumentCheckMatchesGonum(t *testing.T) {
	lf := reflect.TypeOf((*lapack.Float64)(nil)).Elem()
	calls := goodCalls()
	methods := map[string]bool{}
	for key := range calls {
		methods[strings.Fields(key)[0]] = true
	}
	require.Len(t, methods, lf.NumMethod(), "a valid call for every method of lapack.Float64")
	compared := 0
	for key, good := range calls {
		name := strings.Fields(key)[0]
		_, ok := lf.MethodByName(name)
		require.True(t, ok, name)
		theirMsg, theirOK := callResults(native.Implementation{}, name, good())
		require.Empty(t, theirMsg, "%s: the valid call panics in gonum's", key)
		ourMsg, ourOK := callResults(impl, name, good())
		require.Empty(t, ourMsg, "%s: the valid call panics", key)
		require.Equal(t, theirOK, ourOK, "%s: ok", key)
		for i, arg := range good() {
			for _, bad := range variants(arg) {
				theirs := func() []any { a := good(); a[i] = bad; return a }
				want := call(native.Implementation{}, name, theirs())
				if _, contents := bad.(outOfRange); want == "" && contents {
					continue
				}
				compared++
				got := call(impl, name, theirs())
				samePanic(t, fmt.Sprintf("%s, argument %d = %v", key, i, bad), got, want, true)
			}
		}
	}
	// Pairs of integer arguments zero at once (a zero size with a zero
	// leading dimension or workspace, say): the same panic or none.
	for key, good := range calls {
		name := strings.Fields(key)[0]
		args := good()
		for i := range args {
			for j := i + 1; j < len(args); j++ {
				_, iInt := args[i].(int)
				_, jInt := args[j].(int)
				if !iInt || !jInt {
					continue
				}
				zeroed := func() []any { a := good(); a[i], a[j] = 0, 0; return a }
				want, wantOK := callResults(native.Implementation{}, name, zeroed())
				got, gotOK := callResults(impl, name, zeroed())
				if want == "" && got == "" {
					require.Equal(t, wantOK, gotOK, "%s, arguments %d and %d zero: ok", key, i, j)
				}
				compared++
				samePanic(t, fmt.Sprintf("%s, arguments %d and %d zero", key, i, j), got, want, true)
			}
		}
	}
	// An empty slice with an integer argument −1 or 0 (an empty workspace
	// with a workspace query, say). Where gonum's own fails with a runtime
	// error this one must not: a lapack panic, or an answer (a workspace
	// query does not read the matrix).
	for key, good := range calls {
		name := strings.Fields(key)[0]
		args := good()
		for i := range args {
			if _, ok := args[i].([]float64); !ok {
				continue
			}
			for j := range args {
				if _, ok := args[j].(int); !ok {
					continue
				}
				for _, v := range []int{-1, 0} {
					edited := func() []any { a := good(); a[i], a[j] = []float64{}, v; return a }
					want := call(native.Implementation{}, name, edited())
					got := call(impl, name, edited())
					compared++
					samePanic(t, fmt.Sprintf("%s, argument %d empty, %d = %d", key, i, j, v), got, want, false)
				}
			}
		}
	}
	require.Greater(t, compared, 1000)
}

// samePanic requires got, this implementation's panic ("" for none), to be
// want, gonum's own — except where gonum's fails with a Go runtime error:
// then this one must not, and with lapackPanic it must panic with a
// "lapack: …" message (without, an answer will do: a workspace query does
// not read the matrix).
func samePanic(t *testing.T, what, got, want string, lapackPanic bool) {
	t.Helper()
	switch {
	case !strings.HasPrefix(want, "runtime error"):
		if got != want {
			t.Errorf("%s: panic %q, gonum's %q", what, got, want)
		}
	case strings.HasPrefix(got, "runtime error"), lapackPanic && !strings.HasPrefix(got, "lapack: "):
		t.Errorf("%s: panic %q where gonum's fails with %q", what, got, want)
	}
}
