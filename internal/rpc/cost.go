package rpc

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/cost"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw-go/zeroclaw/internal/router"
)

func (s *Server) registerCost(t *cost.Tracker) {
	s.register(api.MethodCostQuery, handle(api.GrantCostRead, func(_ context.Context, _ *Peer, p *api.CostQueryParams) (cost.Summary, error) {
		bound := func(name, raw string) (time.Time, error) {
			if raw == "" {
				return time.Time{}, nil
			}
			at, err := time.Parse(time.RFC3339Nano, raw)
			if err != nil {
				return time.Time{}, router.InvalidParams(fmt.Sprintf("invalid date %q for %s: want RFC 3339", raw, name))
			}
			return at.UTC(), nil
		}
		from, err := bound("from", p.From)
		if err != nil {
			return cost.Summary{}, err
		}
		to, err := bound("to", p.To)
		if err != nil {
			return cost.Summary{}, err
		}
		sum, err := t.Query(p.Agent, from, to)
		if err != nil {
			return cost.Summary{}, jsonrpc.NewError(jsonrpc.CodeInternalError, "Cost query failed: "+err.Error(), nil)
		}
		return sum, nil
	}))
	s.register(api.MethodCostOrg, handle(api.GrantCostRead, func(context.Context, *Peer, *noParams) (json.RawMessage, error) {
		raw, err := cost.Org(filepath.Join(s.opts.Info.DataDir, "org_cost.json"))
		if err != nil {
			return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, err.Error(), nil)
		}
		if raw == nil {
			return json.RawMessage("null"), nil
		}
		return raw, nil
	}))
}
