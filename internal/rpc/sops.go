package rpc

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw-go/zeroclaw/internal/sop"
	"github.com/zeroclaw-go/zeroclaw/internal/tools"
)

// The SOP authoring methods (upstream/sop.md §3) over a sop.Library: they read and write the SOPs directory
// on disk, so they answer whether or not the runtime runs. Reading needs sops:read, writing sops:write.
// Errors carry upstream's messages; the sop sentinels map through errmap (-32020 exists, -32021 not found on
// delete, -32602 for the rest).

func (s *Server) registerSops(lib *sop.Library) {
	if lib == nil {
		return
	}
	s.register(api.MethodSopsList, handle(api.GrantSopsRead, func(context.Context, *Peer, *noParams) ([]sop.Sop, error) {
		c := lib.List()
		if c.Sops == nil {
			return []sop.Sop{}, nil
		}
		return c.Sops, nil
	}))
	s.register(api.MethodSopsDiagnostics, handle(api.GrantSopsRead, func(_ context.Context, p *Peer, _ *noParams) (api.SopDiagnosticsResult, error) {
		res := SopDiagnostics(lib.List())
		if p == nil || p.Principal() == nil || !p.Principal().Admin {
			res = redactSopDiagnostics(res)
		}
		return res, nil
	}))
	s.register(api.MethodSopsGet, handle(api.GrantSopsRead, func(_ context.Context, _ *Peer, p *api.SopNameParams) (sop.Sop, error) {
		return lib.Get(p.Name)
	}))
	s.register(api.MethodSopsGraph, handle(api.GrantSopsRead, func(_ context.Context, _ *Peer, p *api.SopNameParams) (sop.Graph, error) {
		def, err := lib.Get(p.Name)
		if err != nil {
			return sop.Graph{}, err
		}
		return sop.BuildGraph(def, sopToolSpecs()), nil
	}))
	s.register(api.MethodSopsValidate, handle(api.GrantSopsRead, func(_ context.Context, _ *Peer, p *api.SopValidateParams) (api.SopValidateResult, error) {
		var def sop.Sop
		var err error
		if present(p.Sop) {
			def, err = decodeSop(p.Sop)
		} else {
			def, err = lib.Get(p.Name)
		}
		if err != nil {
			return api.SopValidateResult{}, err
		}
		v := sop.Validate(def)
		res := api.SopValidateResult{Blocking: v.Blocking, Warnings: v.Warnings, OK: v.OK}
		if !present(p.Sop) {
			for _, c := range lib.Check(p.Name) {
				res.Issues = append(res.Issues, c.String())
			}
		}
		return res, nil
	}))
	s.register(api.MethodSopsSave, handle(api.GrantSopsWrite, func(_ context.Context, _ *Peer, p *api.SopSaveParams) (api.SopSavedResult, error) {
		def, err := decodeSop(p.Sop)
		if err != nil {
			return api.SopSavedResult{}, err
		}
		out, err := lib.Save(def, p.OriginalName)
		if err != nil {
			return api.SopSavedResult{}, err
		}
		return api.SopSavedResult{Saved: out.Name}, nil
	}))
	s.register(api.MethodSopsCreate, handle(api.GrantSopsWrite, func(_ context.Context, _ *Peer, p *api.SopSaveParams) (api.SopCreatedResult, error) {
		def, err := decodeSop(p.Sop)
		if err != nil {
			return api.SopCreatedResult{}, err
		}
		out, err := lib.Create(def)
		if err != nil {
			return api.SopCreatedResult{}, err
		}
		return api.SopCreatedResult{Created: out.Name}, nil
	}))
	s.register(api.MethodSopsDelete, handle(api.GrantSopsWrite, func(_ context.Context, _ *Peer, p *api.SopNameParams) (api.SopDeletedResult, error) {
		if err := lib.Delete(p.Name); err != nil {
			return api.SopDeletedResult{}, err
		}
		return api.SopDeletedResult{Deleted: p.Name}, nil
	}))
	s.register(api.MethodSopsGraphDraft, handle(api.GrantSopsRead, func(_ context.Context, _ *Peer, p *api.SopGraphDraftParams) (sop.Graph, error) {
		def, err := requiredSop(p.Sop)
		if err != nil {
			return sop.Graph{}, err
		}
		return sop.BuildGraph(def, sopToolSpecs()), nil
	}))
	s.register(api.MethodSopsWireDraft, handle(api.GrantSopsRead, func(_ context.Context, _ *Peer, p *api.SopWireDraftParams) (WireDraftResult, error) {
		return WireDraft(p.Sop, p.Edit)
	}))
	s.register(api.MethodSopsTriggerSources, handle(api.GrantSopsRead, func(context.Context, *Peer, *noParams) (sop.TriggerSources, error) {
		return sop.Registry(nil), nil
	}))
}

// sopToolSpecs types a graph's planned-call pins with the built-in tools' parameter schemas (upstream types
// them from the first agent's tools).
func sopToolSpecs() map[string]sop.ToolSpec {
	specs := tools.Specs()
	out := make(map[string]sop.ToolSpec, len(specs))
	for _, t := range specs {
		out[t.Name] = sop.ToolSpec{Parameters: t.Parameters}
	}
	return out
}

// WireDraftResult is sops/wire-draft's {sop, graph}.
type WireDraftResult struct {
	Sop   sop.Sop   `json:"sop"`
	Graph sop.Graph `json:"graph"`
}

// WireDraft applies one wire edit to a draft (sops/wire-draft and POST /api/sops/wire-draft).
func WireDraft(rawSop, rawEdit json.RawMessage) (WireDraftResult, error) {
	def, err := requiredSop(rawSop)
	if err != nil {
		return WireDraftResult{}, err
	}
	if !present(rawEdit) {
		return WireDraftResult{}, invalidParams("missing 'edit'")
	}
	var e sop.WireEdit
	if err := json.Unmarshal(rawEdit, &e); err != nil {
		return WireDraftResult{}, invalidParams("invalid wire edit: " + err.Error())
	}
	if err := sop.ApplyWire(&def, e); err != nil {
		return WireDraftResult{}, err
	}
	return WireDraftResult{Sop: def, Graph: sop.BuildGraph(def, sopToolSpecs())}, nil
}

// SopDiagnostics renders a catalog's broken SOPs and warnings.
func SopDiagnostics(c *sop.Catalog) api.SopDiagnosticsResult {
	out := api.SopDiagnosticsResult{Dir: c.Dir, Disabled: []api.SopDiagnostic{}, Warnings: []string{}}
	for _, d := range c.Disabled {
		e := api.SopDiagnostic{Dir: d.Dir, Reason: d.Reason}
		for _, is := range d.Issues {
			e.Issues = append(e.Issues, is.String())
		}
		out.Disabled = append(out.Disabled, e)
	}
	for _, w := range c.Warnings {
		out.Warnings = append(out.Warnings, w.String())
	}
	return out
}

// redactSopDiagnostics is the diagnostics for a principal that is not an admin (as status does for the SOP
// store's path): the SOPs' directory as <sops_dir>, any other absolute path as <path>.
func redactSopDiagnostics(res api.SopDiagnosticsResult) api.SopDiagnosticsResult {
	redact := pathRedactor([2]string{res.Dir, "<sops_dir>"})
	out := api.SopDiagnosticsResult{Dir: "", Disabled: make([]api.SopDiagnostic, len(res.Disabled)), Warnings: make([]string, len(res.Warnings))}
	for i, d := range res.Disabled {
		d.Dir, d.Reason = redact(d.Dir), redact(d.Reason)
		issues := make([]string, len(d.Issues))
		for j, is := range d.Issues {
			issues[j] = redact(is)
		}
		if d.Issues == nil {
			issues = nil
		}
		d.Issues = issues
		out.Disabled[i] = d
	}
	for i, w := range res.Warnings {
		out.Warnings[i] = redact(w)
	}
	return out
}

func present(b json.RawMessage) bool {
	t := bytes.TrimSpace(b)
	return len(t) > 0 && !bytes.Equal(t, []byte("null"))
}

func requiredSop(b json.RawMessage) (sop.Sop, error) {
	if !present(b) {
		return sop.Sop{}, invalidParams("missing 'sop'")
	}
	return decodeSop(b)
}

// decodeSop reads a Sop param; what serde would refuse is invalid params with the decoder's message.
func decodeSop(b json.RawMessage) (sop.Sop, error) {
	var def sop.Sop
	if !present(b) {
		return def, invalidParams("missing field `sop`")
	}
	if err := json.Unmarshal(b, &def); err != nil {
		return def, invalidParams(err.Error())
	}
	return def, nil
}

func invalidParams(msg string) error { return jsonrpc.NewError(api.CodeInvalidParams, msg, nil) }
