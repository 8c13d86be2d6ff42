package status_test

import (
	"errors"
	"fmt"

	"github.com/kdual/kdual/status"
)

// A status names the test that passed, and its error says what went wrong
// otherwise.
func ExampleStatus() {
	ok := status.Status{Code: status.Converged, Test: "‖g‖ ≤ 1e-8·‖x‖"}
	limit := status.Status{Code: status.IterationLimit, Test: "‖g‖ ≤ 1e-8·‖x‖", Detail: "100 iterations"}
	fmt.Println(ok, ok.Err())
	fmt.Println(limit.Err(), errors.Is(limit.Err(), status.ErrNotConverged))
	// Output:
	// converged (‖g‖ ≤ 1e-8·‖x‖) <nil>
	// iteration_limit (‖g‖ ≤ 1e-8·‖x‖): 100 iterations true
}
