package gram

import (
	"fmt"

	"github.com/kdual/kdual/status"
)

// ErrInvalid is wrapped by every error about bad input (status.ErrInvalid).
var ErrInvalid = status.ErrInvalid

func invalidf(format string, args ...any) error {
	return fmt.Errorf("gram: "+format+": %w", append(args, ErrInvalid)...)
}
