package status

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestErrMatchesCode(t *testing.T) {
	cases := map[Code]error{
		Converged:      nil,
		FixedSchedule:  nil,
		IterationLimit: ErrNotConverged,
		NotRun:         ErrNotConverged,
		Stopped:        ErrStopped,
		Breakdown:      ErrBreakdown,
	}
	for c, want := range cases {
		err := Status{Code: c, Test: "t"}.Err()
		if want == nil {
			if err != nil {
				t.Errorf("%v: Err() = %v, want nil", c, err)
			}
			continue
		}
		if !errors.Is(err, want) {
			t.Errorf("%v: Err() = %v, want one wrapping %v", c, err, want)
		}
		var se *Error
		if !errors.As(err, &se) || se.Status.Code != c {
			t.Errorf("%v: Err() does not carry its status", c)
		}
	}
	if !(Status{Code: Converged}).Converged() || (Status{Code: FixedSchedule}).Converged() {
		t.Error("Converged() must be true for Converged only")
	}
}

func TestNamesRoundTripAndUnknownCodesDoNotPanic(t *testing.T) {
	for c := NotRun; c <= Breakdown; c++ {
		b, err := json.Marshal(Status{Code: c})
		if err != nil {
			t.Fatal(err)
		}
		var back Status
		if err := json.Unmarshal(b, &back); err != nil || back.Code != c {
			t.Fatalf("%v: round trip %s gave %v, %v", c, b, back.Code, err)
		}
	}
	if got := Code(99).String(); got != "code(99)" {
		t.Errorf("unknown code: %q", got)
	}
	if _, err := json.Marshal(Status{Code: -1}); err == nil {
		t.Error("marshalling an unknown code must fail")
	}
	var c Code
	if err := c.UnmarshalText([]byte("done")); !errors.Is(err, ErrInvalid) {
		t.Errorf("unknown name: %v", err)
	}
	b, _ := json.Marshal(Status{Code: Converged, Test: "‖g‖ ≤ tol"})
	if string(b) != `{"code":"converged","test":"‖g‖ ≤ tol"}` {
		t.Errorf("JSON %s", b)
	}
}

// Cancelled names the cause (or that the context ended) and where, wraps
// both ErrStopped and the cause, and carries Status Stopped; the first
// code past the names is unknown to MarshalText.
func TestCancelledAndLastCode(t *testing.T) {
	cause := errors.New("deadline passed")
	err := Cancelled(cause, "pass 41")
	if !errors.Is(err, ErrStopped) || !errors.Is(err, cause) {
		t.Fatalf("%v wraps neither ErrStopped nor its cause", err)
	}
	if !strings.Contains(err.Error(), "deadline passed (pass 41)") {
		t.Errorf("message %q", err.Error())
	}
	if st, ok := StatusOf(err); !ok || st.Code != Stopped {
		t.Errorf("status %+v, %v", st, ok)
	}
	if got := Cancelled(nil, "").Error(); !strings.Contains(got, "the context ended") || strings.Contains(got, "(") {
		t.Errorf("no cause, nowhere: %q", got)
	}
	if _, err := Code(len(names)).MarshalText(); !errors.Is(err, ErrInvalid) {
		t.Errorf("code %d: %v", len(names), err)
	}
}

// NumericalRank counts the values strictly above rel times the largest
// magnitude — negative values and NaN never count, the largest value is
// counted whatever its sign among the others — and does not change when
// every value is scaled by a positive number.
func TestNumericalRank(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		v    []float64
		rel  float64
		want int
	}{
		{nil, 1e-12, 0},
		{[]float64{0, 0}, 1e-12, 0},
		{[]float64{nan, nan}, 1e-12, 0},
		{[]float64{3, 2, 1}, 1e-12, 3},
		{[]float64{3, 2, 1}, 0.5, 2},             // 1 is not above 1.5
		{[]float64{4, 2, 1}, 0.5, 1},             // 2 is not above 2: strictly above
		{[]float64{3, -5, 1e-20, nan}, 1e-12, 1}, // top 5 from the negative value; only 3 counts
		{[]float64{-1, -2}, 1e-12, 0},
		{[]float64{1, 1e-13, 1e-11}, 1e-12, 2},
	}
	for _, c := range cases {
		require.Equal(t, c.want, NumericalRank(c.v, c.rel), "%v rel %g", c.v, c.rel)
		for _, s := range []float64{0x1p-600, 3, 0x1p600} {
			w := make([]float64, len(c.v))
			for i, x := range c.v {
				w[i] = s * x
			}
			require.Equal(t, c.want, NumericalRank(w, c.rel), "%v scaled by %g", c.v, s)
		}
	}
}

// A RankError wraps ErrInvalid, carries its numbers through errors.As,
// and says what to ask for (or that nothing can be fitted at rank 0).
func TestRankError(t *testing.T) {
	err := fmt.Errorf("fit: %w", &RankError{Matrix: "the matrix", Rank: 3, Asked: 5})
	require.ErrorIs(t, err, ErrInvalid)
	var re *RankError
	require.True(t, errors.As(err, &re))
	require.Equal(t, [2]int{3, 5}, [2]int{re.Rank, re.Asked})
	require.Contains(t, err.Error(), "the matrix has numerical rank 3, below the 5 components asked for; ask for at most 3")
	zero := (&RankError{Matrix: "the matrix", Rank: 0, Asked: 2}).Error()
	require.Contains(t, zero, "numerical rank 0")
	require.Contains(t, zero, "no component can be fitted")
}
