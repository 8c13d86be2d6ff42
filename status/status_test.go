package status

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
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
