package cli

import (
	"context"
	"errors"
)

func runSessions(_ context.Context, _ Env, _ []string) error {
	return errors.New("sessions: not implemented yet")
}
