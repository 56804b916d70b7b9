package memory

import (
	"context"
	"time"
)

// PostgresOptions names a PostgreSQL memory table.
type PostgresOptions struct {
	URL, Schema, Table string
	Now                func() time.Time
}

// OpenPostgres is not implemented yet.
func OpenPostgres(ctx context.Context, o PostgresOptions) (Backend, error) {
	return nil, ErrUnsupported
}
