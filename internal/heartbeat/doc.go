// Package heartbeat runs the tasks of the heartbeat agent's HEARTBEAT.md every interval, as unattended turns:
// two-phase (a decision turn, then the chosen tasks) and adaptive intervals as upstream, a recorded outcome for
// every scheduled slot (ok, error, skipped, missed while the daemon was down) in history.db, a run that counts as
// ok only when the agent called the heartbeat_complete tool, and one dead-man alert per stale episode.
package heartbeat
