package controlplane

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sync"

	"github.com/zeroclaw-go/zeroclaw/internal/atomicfile"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// Delegate result statuses written in files; lost and timed_out are only ever overlaid from the control plane.
const (
	ResultRunning   = "running"
	ResultCompleted = "completed"
	ResultFailed    = "failed"
	ResultCancelled = "cancelled"
)

// ErrTaskID reports a task id that is not a UUID (it names a file: nothing else may reach the filesystem).
var ErrTaskID = errors.New("controlplane: task id must be a UUID")

// DelegateResult is <workspace>/delegate_results/<task-id>.json (upstream's BackgroundDelegateResult).
type DelegateResult struct {
	TaskID     string  `json:"task_id"`
	Agent      string  `json:"agent"`
	Status     string  `json:"status"`
	Output     *string `json:"output"`
	Error      *string `json:"error"`
	StartedAt  string  `json:"started_at"`
	FinishedAt *string `json:"finished_at"`
}

var uuidRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
})

func resultPath(workspace, taskID string) (string, error) {
	if !uuidRE().MatchString(taskID) {
		return "", fmt.Errorf("%w: %q", ErrTaskID, taskID)
	}
	return filepath.Join(workspace, "delegate_results", taskID+".json"), nil
}

// WriteResult writes r's file atomically (temp file, fsync, rename), creating delegate_results/ (0700) lazily.
func WriteResult(workspace string, r DelegateResult) error {
	p, err := resultPath(workspace, r.TaskID)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("controlplane: delegate result %s: %w", r.TaskID, err)
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(p, b, 0o600); err != nil {
		return fmt.Errorf("controlplane: delegate result %s: %w", r.TaskID, err)
	}
	return nil
}

// ReadResult reads task id's result. The file is the truth; while it still says running, the control plane's
// lost or timed_out (its owner died, or it outlived the max runtime) is overlaid. A missing file wraps
// fs.ErrNotExist.
func (p *Plane) ReadResult(ctx context.Context, workspace, taskID string) (DelegateResult, error) {
	path, err := resultPath(workspace, taskID)
	if err != nil {
		return DelegateResult{}, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return DelegateResult{}, fmt.Errorf("controlplane: delegate result %s: %w", taskID, err)
	}
	var r DelegateResult
	if err := json.Unmarshal(b, &r); err != nil {
		return DelegateResult{}, fmt.Errorf("controlplane: delegate result %s: %w", taskID, err)
	}
	if r.Status != ResultRunning || p == nil {
		return r, nil
	}
	t, err := p.o.Store.Task(ctx, taskID)
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return DelegateResult{}, err
	}
	if t.Status == store.TaskLost || t.Status == store.TaskTimedOut {
		r.Status = t.Status
	}
	return r, nil
}
