package cli

import (
	"context"
	"errors"
)

func runAgent(_ context.Context, _ Env, _ []string) error {
	return errors.New("agent: not implemented yet")
}
