package install

import (
	"os"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/install/helperproc"
)

// The test binary doubles as a helper process (helperproc): in mode "lock" it holds path until its stdin closes.
const envHelper = "ZC_INSTALL_TEST_HELPER"

func TestMain(m *testing.M) {
	helperproc.Main(m, envHelper, map[string]helperproc.Hold{"lock": func(path string) (func() error, error) {
		l, err := AcquireLock(path)
		if err != nil {
			return nil, err
		}
		return l.Release, nil
	}})
}

// startHelper starts the helper in mode and waits until it holds path.
func startHelper(t *testing.T, mode, path string) *helperproc.Process {
	return helperproc.Start(t, envHelper, mode, path)
}

// sockDir returns a short temporary directory (the lock tests share it with the socket tests of localsock, whose
// paths are limited to ~104 bytes).
func sockDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "zci")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
