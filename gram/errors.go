package gram

import (
	"fmt"

	"github.com/kdual/kdual/status"
)

func invalidf(format string, args ...any) error {
	return fmt.Errorf("gram: "+format+": %w", append(args, status.ErrInvalid)...)
}
