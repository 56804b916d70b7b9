package gateway

import (
	"encoding/json"
	"net/http"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/gateway/dashboard"
)

// The config routes of upstream's dashboard that change or judge the file as a whole
// (crates/zeroclaw-gateway/src/api_config.rs handle_drift, handle_delete_plan, handle_init, handle_migrate; the
// dashboard's getDrift, getDeletePlan and initSection in web/src/lib/api.ts), each one config method.
func (s *Server) configEditRoutes(mux *http.ServeMux) {
	s.handle(mux, "GET /api/config/drift", s.authed(s.granted(api.GrantConfigRead, s.configDrift)))
	s.handle(mux, "GET /api/config/delete-plan", s.authed(s.granted(api.GrantConfigRead, s.configDeletePlan)))
	s.handle(mux, "POST /api/config/init", s.authed(s.granted(api.GrantConfigUpdate, s.configInit)))
	s.handle(mux, "POST /api/config/migrate", s.authed(s.granted(api.GrantConfigUpdate, s.configMigrate)))
}

// drift is config/drift with each value as upstream displays it ("4001", "<unset>"); a secret carries none.
func (s *Server) drift(r *http.Request, c caller) (api.ConfigDriftResult, error) {
	res, err := callAs[api.ConfigDriftResult](s, r, c, api.MethodConfigDrift, nil)
	if err != nil {
		return res, err
	}
	for i, d := range res.Drifted {
		if !d.Secret {
			res.Drifted[i].InMemoryValue = dashboard.Display(d.InMemoryValue)
			res.Drifted[i].OnDiskValue = dashboard.Display(d.OnDiskValue)
		}
	}
	return res, nil
}

// configDrift is GET /api/config/drift: {drifted}, the properties config.toml changed behind the daemon
// (empty after every write the daemon makes and after a reload). When the file cannot be compared (it does not
// parse or validate) drifted is empty and error (ours) says why.
func (s *Server) configDrift(w http.ResponseWriter, r *http.Request, c caller) error {
	res, err := s.drift(r, c)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

// configDeletePlan is GET /api/config/delete-plan?path=<section>&key=<alias>: config/delete-plan, a dry run of
// deleting the entry (upstream's DeletePlanResponse). Nothing is written.
func (s *Server) configDeletePlan(w http.ResponseWriter, r *http.Request, c caller) error {
	p, _ := json.Marshal(api.ConfigDeletePlanParams{Path: r.URL.Query().Get("path"), Key: r.URL.Query().Get("key")})
	res, err := callAs[api.ConfigDeletePlanResult](s, r, c, api.MethodConfigDeletePlan, p)
	if err != nil {
		return configError(err)
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

// configInit is POST /api/config/init[?section=<prefix>]: upstream instantiates the optional sections that are
// absent (None) with their defaults and answers the ones it did. Every section of this schema is always
// present with its defaults, so there is never one to instantiate and the answer is {initialized: []}, as
// upstream answers when every requested section is configured; a section this schema does not have is an
// error saying so. Nothing is written.
func (s *Server) configInit(w http.ResponseWriter, r *http.Request, c caller) error {
	if section := r.URL.Query().Get("section"); section != "" {
		p, _ := json.Marshal(api.ConfigGetParams{Prop: section})
		if _, err := s.o.Daemon.Call(r.Context(), c.identity(), api.MethodConfigGet, p); err != nil {
			return configError(err)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"initialized": []string{}})
	return nil
}

// configMigrate is POST /api/config/migrate: config/migrate, an older (upstream v1 or v2) config.toml rewritten
// as schema v3 in one atomic write, the previous file kept as config.toml.bak (upstream's MigrateResponse:
// {migrated, backup_path?, schema_version}, backup_path as a name beside config.toml).
func (s *Server) configMigrate(w http.ResponseWriter, r *http.Request, c caller) error {
	res, err := callAs[api.ConfigMigrateResult](s, r, c, api.MethodConfigMigrate, nil)
	if err != nil {
		return configError(err)
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}
