package api

// MethodDoctorRun inspects the install and reports what is wrong with it (upstream's doctor/run).
const MethodDoctorRun = "doctor/run"

// Diagnostic severities (upstream's Severity, lowercase).
const (
	SeverityOK    = "ok"
	SeverityWarn  = "warn"
	SeverityError = "error"
)

// DiagResult is one finding: upstream's {severity, category, message} plus ours: a stable id, the path it
// concerns and the concrete fix.
type DiagResult struct {
	Severity string `json:"severity"`
	Category string `json:"category"`
	Message  string `json:"message"`
	ID       string `json:"id"`
	Path     string `json:"path,omitempty"`
	Fix      string `json:"fix,omitempty"`
}

// DoctorSummary counts the findings by severity.
type DoctorSummary struct {
	OK       int `json:"ok"`
	Warnings int `json:"warnings"`
	Errors   int `json:"errors"`
}

// DoctorResult is doctor/run's result: upstream's {results, summary, log_path?, timed_out_phase?}.
type DoctorResult struct {
	Results       []DiagResult  `json:"results"`
	Summary       DoctorSummary `json:"summary"`
	LogPath       string        `json:"log_path,omitempty"`
	TimedOutPhase string        `json:"timed_out_phase,omitempty"`
}

// DoctorRunParams are doctor/run's params (upstream takes none). Offline skips the providers' reachability
// probes. Locale (ours) is the registry code the findings are written in; "" is the daemon's config locale.
type DoctorRunParams struct {
	Offline bool   `json:"offline,omitempty"`
	Locale  string `json:"locale,omitempty"`
}
