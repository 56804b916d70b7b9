package localsock

import (
	"errors"
	"net"
)

func isClosedErr(err error) bool { return err != nil && errors.Is(err, net.ErrClosed) }
