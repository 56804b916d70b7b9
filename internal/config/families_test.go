package config

import (
	"slices"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/config/upstream"
)

// The migration maps upstream's provider types onto the families the schema accepts, spelled in its own
// package (which imports nothing of config): the two lists must agree.
func TestUpstreamFamiliesAreTheSchemas(t *testing.T) {
	if got := upstream.Families(); !slices.Equal(got, Families) {
		t.Fatalf("upstream.Families() = %v, config.Families = %v", got, Families)
	}
}
