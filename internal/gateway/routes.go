package gateway

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/auth"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/gateway/dashboard"
	"github.com/zeroclaw-go/zeroclaw/internal/pairing"
)

// unauthorized is upstream's 401 body.
const unauthorized = "Unauthorized — pair first via POST /pair, then send Authorization: Bearer <token>"

// routes builds the mux and the chain around it: security headers, then the path prefix, then per route the
// request metrics, the body limit and the timeout.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	s.handle(mux, "GET /health", s.health)
	s.handle(mux, "GET /metrics", s.metrics)

	s.handle(mux, "POST /pair", s.pairLegacy)
	s.handle(mux, "GET /pair/code", s.pairCode)
	s.handle(mux, "POST /api/pair", s.pairEnhanced)
	s.handle(mux, "POST /api/pairing/initiate", s.authed(s.pairingInitiate))
	s.handle(mux, "GET /api/devices", s.authed(s.rpcRoute(api.MethodDevicesList, noParams)))
	s.handle(mux, "DELETE /api/devices/{id}", s.authed(s.rpcRoute(api.MethodDevicesRevoke, idParams)))
	s.handle(mux, "POST /api/devices/{id}/token/rotate", s.authed(s.rpcRoute(api.MethodDevicesRotate, idParams)))
	s.handle(mux, "POST /api/devices/me/capabilities", s.authed(s.myCapabilities))

	s.handle(mux, "POST /admin/shutdown", s.adminShutdown)
	s.handle(mux, "POST /admin/reload", s.adminReload)
	s.handle(mux, "GET /admin/paircode", s.adminPairCode)
	s.handle(mux, "POST /admin/paircode/new", s.adminPairCode)

	s.handle(mux, "GET /api/status", s.authed(s.apiStatus))
	s.handle(mux, "GET /api/health", s.authed(s.rpcRoute(api.MethodHealth, noParams)))
	s.handle(mux, "GET /api/tuis", s.authed(s.rpcRoute(api.MethodTUIList, noParams)))
	s.handle(mux, "GET /api/sessions", s.authed(s.rpcRoute(api.MethodSessionList, queryParams)))
	s.handle(mux, "GET /api/sessions/{id}/messages", s.authed(s.shaped(api.MethodSessionMsgs, sessionParams, dashboard.Persisted)))
	s.handle(mux, "GET /api/sessions/{id}/state", s.authed(s.rpcRoute(api.MethodSessionState, sessionParams)))
	s.handle(mux, "DELETE /api/sessions/{id}", s.authed(s.rpcRoute(api.MethodSessionDelete, sessionParams)))
	s.handle(mux, "POST /api/sessions/{id}/abort", s.authed(s.rpcRoute(api.MethodSessionCancel, sessionParams)))
	s.configRoutes(mux)
	s.handle(mux, "GET /api/config/prop", s.authed(s.rpcRoute(api.MethodConfigGet, propParams)))
	s.handle(mux, "PUT /api/config/prop", s.authed(s.propPut))
	s.handle(mux, "DELETE /api/config/prop", s.authed(s.rpcRoute(api.MethodConfigDelete, propParams)))

	s.domainRoutes(mux)
	s.sopRoutes(mux)
	s.sopAuthorRoutes(mux)
	s.wsRoutes(mux)
	s.mcpRoutes(mux)

	s.mirrorRoutes(mux)
	s.quickstartRoutes(mux)
	s.dashboardRoutes(mux)
	s.approvalRoutes(mux)
	s.uiRoutes(mux)
	s.fileRoutes(mux)
	s.eventRoutes(mux)
	s.handle(mux, "POST /webhook", s.webhookRoute)
	s.handle(mux, "POST /sop/webhook/{path...}", s.sopWebhookRoute)
	s.handle(mux, "GET /_app/{path...}", s.staticFile)
	mux.Handle("/", s.counted("unmatched", s.serve(func(w http.ResponseWriter, r *http.Request) error {
		if s.spaIndex(w, r) {
			return nil
		}
		return fail(http.StatusNotFound, "not found")
	})))
	return withSecurityHeaders(s.withGuard(true, s.withPrefix(mux)))
}

// handle registers h under pattern with the per-route chain; h's errors go to handleError.
func (s *Server) handle(mux *http.ServeMux, pattern string, h handlerFunc) {
	_, path, _ := strings.Cut(pattern, " ")
	s.patterns = append(s.patterns, pattern)
	mux.Handle(pattern, s.counted(path, withBodyLimit(withTimeout(s.timeoutFor(path), s.serve(h)))))
}

// Routes are the patterns the gateway serves ("METHOD /path"), in the order they were registered; the [wss]
// listener's one route is "GET wss:/" (it serves every path). The security matrix test checks each has a row.
func (s *Server) Routes() []string {
	return append(slices.Clone(s.patterns), "GET wss:/")
}

// counted records the request in the metrics under route.
func (s *Server) counted(route string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		if rec.code == 0 {
			rec.code = http.StatusOK
		}
		if bodyCut(w) { // the body bound answered 408 in the handler's place
			rec.code = http.StatusRequestTimeout
		}
		s.o.Metrics.request(route, r.Method, rec.code)
	})
}

// timeoutFor is gateway.request_timeout_secs, or long_running_request_timeout_secs for a webhook turn.
func (s *Server) timeoutFor(path string) func(*http.Request) time.Duration {
	return func(*http.Request) time.Duration {
		g := s.o.Daemon.Config().Gateway
		if path == "/webhook" || path == "/api/cron/{id}/run" {
			return time.Duration(g.LongRunningTimeoutSecs) * time.Second
		}
		return time.Duration(g.RequestTimeoutSecs) * time.Second
	}
}

// caller is an authenticated gateway client.
type caller struct {
	principal *auth.Principal
	resolve   func(*config.Config) *auth.Principal
	tokenHash string // "" when pairing is off
	key       string // the client key
}

func (c caller) identity() Identity {
	return Identity{Principal: c.principal, Resolve: c.resolve, Label: "http:" + c.key, Subject: c.tokenHash}
}

// authenticate resolves the request's principal: with pairing required, a paired Bearer token (401 without
// one, 429 while the client is locked out by the auth limiter, which counts failed tokens, loopback exempt);
// with pairing off, every client is a device.
func (s *Server) authenticate(r *http.Request) (caller, error) {
	cfg := s.o.Daemon.Config()
	key := s.clientKey(r)
	if !cfg.Gateway.RequirePairing {
		resolve := func(c *config.Config) *auth.Principal {
			if c.Gateway.RequirePairing {
				return nil
			}
			return auth.Device(c, "unpaired", "")
		}
		return caller{principal: resolve(cfg), resolve: resolve, key: key}, nil
	}
	loop := exempt(r, key)
	if !loop {
		if d := s.limits.auth.locked(key); d > 0 {
			return caller{}, tooManyAuth(d)
		}
	}
	token, ok := bearer(r)
	hash, valid := "", false
	if ok {
		hash, valid = s.o.Pairing.Authenticate(token)
	}
	if !valid {
		if !loop {
			s.limits.auth.fail(key, cfg.Gateway.RateLimitMaxKeys)
		}
		return caller{}, fail(http.StatusUnauthorized, unauthorized)
	}
	s.o.Pairing.Touch(r.Context(), hash, key)
	id := hash[:16]
	if did, ok := s.o.Pairing.DeviceID(r.Context(), hash); ok {
		id = did
	}
	resolve := func(c *config.Config) *auth.Principal {
		if c.Gateway.RequirePairing && !s.o.Pairing.Configured(c, hash) {
			return nil
		}
		return auth.Device(c, id, pairing.Profile(c, hash))
	}
	return caller{principal: auth.Device(cfg, id, pairing.Profile(cfg, hash)), resolve: resolve, tokenHash: hash, key: key}, nil
}

// owner authenticates the owner (README "Security model"): pairing on, and a paired token whose device is the
// owner's equal (an admin principal: paired without a restricted profile, while device_permission_profiles
// grants admin or is empty). No token, or a wrong one, is 401; a restricted device's token is 403; with
// pairing off nobody is (the daemon's socket remains: `zeroclaw pair code`, `zeroclaw stop`). The peer's
// address counts for nothing but this: a non-loopback owner also needs gateway.allow_remote_admin.
func (s *Server) owner(r *http.Request) (caller, error) {
	g := s.o.Daemon.Config().Gateway
	if !g.RequirePairing {
		return caller{}, fail(http.StatusForbidden, "Forbidden: with gateway.require_pairing = false no gateway client is the owner; use the local socket (zeroclaw pair code, zeroclaw stop, zeroclaw config reload)")
	}
	c, err := s.authenticate(r)
	if err != nil {
		return caller{}, err
	}
	if !c.principal.Admin {
		return caller{}, fail(http.StatusForbidden, "Forbidden: this route needs the owner's token (a device paired without a restricted profile)")
	}
	if !isLoopbackPeer(r) && !g.AllowRemoteAdmin {
		return caller{}, fail(http.StatusForbidden, "Admin endpoints are restricted to localhost (gateway.allow_remote_admin = false)")
	}
	return c, nil
}

// tooManyAuth is the auth limiter's 429 for a lockout that lasts d more.
func tooManyAuth(d time.Duration) error {
	secs := int((d + time.Second - 1) / time.Second)
	return tooMany(secs, "Too many auth attempts. Try again in "+itoa(secs)+"s.")
}

// bearer returns the token of "Authorization: Bearer <token>".
func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
		return "", false
	}
	return strings.TrimSpace(tok), true
}

// authed wraps a handler that needs an authenticated caller.
func (s *Server) authed(h callerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		c, err := s.authenticate(r)
		if err != nil {
			return err
		}
		return h(w, r, c)
	}
}

// paramsFunc builds a method's params from the request; its error is the message of a 400.
type paramsFunc func(r *http.Request) (json.RawMessage, error)

// rpcRoute is a route that is exactly one native method: the params from the request, the method's result as
// the body, its error mapped to a status by handleError.
func (s *Server) rpcRoute(method string, params paramsFunc) callerFunc {
	return s.shaped(method, params, nil)
}

// shaped is rpcRoute with the result rewrapped by shape (nil: as it is).
func (s *Server) shaped(method string, params paramsFunc, shape func(any) any) callerFunc {
	return func(w http.ResponseWriter, r *http.Request, c caller) error {
		p, err := params(r)
		if err != nil {
			return fail(http.StatusBadRequest, err.Error())
		}
		res, err := s.o.Daemon.Call(r.Context(), c.identity(), method, p)
		if err != nil {
			return err
		}
		if shape != nil {
			res = shape(res)
		}
		writeJSON(w, http.StatusOK, res)
		return nil
	}
}

func noParams(*http.Request) (json.RawMessage, error) { return nil, nil }

// queryParams turns the query string into params: each key once, numbers and booleans as JSON values.
func queryParams(r *http.Request) (json.RawMessage, error) {
	q := r.URL.Query()
	if len(q) == 0 {
		return nil, nil
	}
	m := map[string]any{}
	for k, vs := range q {
		if k == "token" {
			continue
		}
		v := vs[len(vs)-1]
		var js any
		if err := json.Unmarshal([]byte(v), &js); err == nil {
			switch js.(type) {
			case float64, bool:
				m[k] = js
				continue
			}
		}
		m[k] = v
	}
	return json.Marshal(m)
}

func idParams(r *http.Request) (json.RawMessage, error) {
	return json.Marshal(map[string]string{"id": r.PathValue("id")})
}

func sessionParams(r *http.Request) (json.RawMessage, error) {
	raw, err := queryParams(r)
	if err != nil {
		return nil, err
	}
	m := map[string]any{}
	if raw != nil {
		_ = json.Unmarshal(raw, &m)
	}
	m["session_id"] = r.PathValue("id")
	return json.Marshal(m)
}

// propParams is {prop} from ?path= (upstream's name) or ?prop=.
func propParams(r *http.Request) (json.RawMessage, error) {
	prop := r.URL.Query().Get("path")
	if prop == "" {
		prop = r.URL.Query().Get("prop")
	}
	if prop == "" {
		return nil, errors.New("query parameter path is required")
	}
	return json.Marshal(map[string]string{"prop": prop})
}

// bodyParams passes a JSON object body as the params, accepting upstream's "path" for "prop".
func bodyParams(r *http.Request) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, errors.New("request body too large")
		}
		return nil, errors.New("body must be a JSON object: " + err.Error())
	}
	if p, ok := m["path"]; ok {
		if _, has := m["prop"]; !has {
			m["prop"] = p
		}
		delete(m, "path")
	}
	return json.Marshal(m)
}

// propPut is PUT /api/config/prop: upstream's {path, value, comment}. Without a comment it is config/set; with
// one, the value and the `# ...` lines above its key are written in one config/patch (both or neither, where
// upstream writes the comment after the value and only logs a failure), answered in config/set's shape.
func (s *Server) propPut(w http.ResponseWriter, r *http.Request, c caller) error {
	p, err := bodyParams(r)
	if err != nil {
		return fail(http.StatusBadRequest, err.Error())
	}
	var body struct {
		Prop    string          `json:"prop"`
		Value   json.RawMessage `json:"value"`
		Comment *string         `json:"comment"`
	}
	if err := json.Unmarshal(p, &body); err != nil {
		return fail(http.StatusBadRequest, "body: "+err.Error())
	}
	if body.Comment == nil {
		res, err := s.o.Daemon.Call(r.Context(), c.identity(), api.MethodConfigSet, p)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, res)
		return nil
	}
	patch, _ := json.Marshal(api.ConfigPatchParams{Ops: []api.ConfigPatchOp{{Op: api.PatchOpSet, Prop: body.Prop,
		Value: body.Value, Comment: body.Comment}}})
	res, err := s.o.Daemon.Call(r.Context(), c.identity(), api.MethodConfigPatch, patch)
	if err != nil {
		return err
	}
	out := api.ConfigSetResult{Prop: body.Prop, Set: true}
	if pr, ok := res.(api.ConfigPatchResult); ok && len(pr.Props) > 0 {
		out.Prop = pr.Props[0]
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
