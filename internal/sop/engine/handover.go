package engine

import "fmt"

// StepPrompt is the context of the step an active run stands at, framed as the engine frames its own step
// turns (the trigger payload as untrusted data between the run's markers): what the sop_execute and
// sop_advance tools hand to the agent that drives the run. A run that is not active is ErrNotActive (or
// ErrNotFound).
func (e *Engine) StepPrompt(id string) (string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	rs, ok := e.active[id]
	if !ok {
		if _, _, err := e.runLocked(id); err != nil {
			return "", err
		}
		return "", fmt.Errorf("%w: run '%s'", ErrNotActive, id)
	}
	st := rs.def.step(rs.run.CurrentStep)
	if st == nil {
		return "", fmt.Errorf("%w: step %d does not exist", ErrNotActive, rs.run.CurrentStep)
	}
	return e.stepContext(rs, st), nil
}
