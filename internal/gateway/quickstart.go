package gateway

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// quickstartRoutes are upstream's HTTP twins of quickstart/* (api_quickstart.rs), over the same native methods,
// grants and error map as the socket: validate and apply take the bare BuilderSubmission as the body (the
// method wraps it as {submission}), and dismiss answers 204.
func (s *Server) quickstartRoutes(mux *http.ServeMux) {
	s.handle(mux, "GET /api/quickstart/state", s.authed(s.rpcRoute(api.MethodQuickstartState, noParams)))
	s.handle(mux, "POST /api/quickstart/fields", s.authed(s.rpcRoute(api.MethodQuickstartFields, fromRequest(requiredBody))))
	s.handle(mux, "POST /api/quickstart/validate", s.authed(s.rpcRoute(api.MethodQuickstartValidate, submissionBody)))
	s.handle(mux, "POST /api/quickstart/apply", s.authed(s.rpcRoute(api.MethodQuickstartApply, submissionBody)))
	s.handle(mux, "POST /api/quickstart/dismiss", s.authed(func(w http.ResponseWriter, r *http.Request, c caller) error {
		p, err := fromRequest(requiredBody)(r)
		if err != nil {
			return fail(http.StatusBadRequest, err.Error())
		}
		if _, err := s.o.Daemon.Call(r.Context(), c.identity(), api.MethodQuickstartDismiss, p); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}))
}

// submissionBody wraps the JSON object body as {"submission": body}.
func submissionBody(r *http.Request) (json.RawMessage, error) {
	var body json.RawMessage
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, errors.New("request body too large")
		}
		return nil, errors.New("body must be a JSON object: " + strings.TrimPrefix(err.Error(), "json: "))
	}
	if len(body) == 0 || body[0] != '{' {
		return nil, errors.New("body must be a JSON object: the builder submission")
	}
	return json.Marshal(map[string]json.RawMessage{"submission": body})
}
