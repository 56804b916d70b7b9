package api

// Cost methods (upstream's cost/*). cost/query returns upstream's CostSummary (plus by_day); cost/org returns
// <data>/org_cost.json as it is, or null.
const (
	MethodCostQuery = "cost/query"
	MethodCostOrg   = "cost/org"
)

// CostQueryParams: agent selects one agent's records; from/to (RFC 3339) bound the fleet-wide summary [from, to).
type CostQueryParams struct {
	Agent string `json:"agent,omitempty"`
	From  string `json:"from,omitempty"`
	To    string `json:"to,omitempty"`
}
