package cli

import (
	"context"
	"errors"
)

func runConfig(_ context.Context, _ Env, _ []string) error {
	return errors.New("config: not implemented yet")
}
