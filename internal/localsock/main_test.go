package localsock

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/install/helperproc"
)

// The test binary doubles as a helper process (helperproc): in mode "listen" it holds path until its stdin closes.
const envHelper = "ZC_LOCALSOCK_TEST_HELPER"

func TestMain(m *testing.M) {
	helperproc.Main(m, envHelper, map[string]helperproc.Hold{"listen": func(path string) (func() error, error) {
		l, err := Listen(path)
		if err != nil {
			return nil, err
		}
		return l.Close, nil
	}})
}

// startHelper starts the helper in mode and waits until it holds path.
func startHelper(t *testing.T, mode, path string) *helperproc.Process {
	return helperproc.Start(t, envHelper, mode, path)
}

func readPIDFile(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("lock file content %q: %v", b, err)
	}
	return pid
}
