package rpctest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// A principal with status:read sees the registry but cannot make the daemon download catalogues
// (locales:fetch) nor read the config's choices (tools/param-options is config:read).
func TestLocalesGrants(t *testing.T) {
	t.Parallel()
	d := Start(t, asUser("status:read"))
	c := dialRC(t, d, "")
	var list api.LocalesListResult
	c.mustCall(api.MethodLocalesList, map[string]any{}, &list)
	if len(list.Locales) != 5 || list.Locales[1].Code != "fr" {
		t.Fatalf("locales/list %+v", list)
	}
	_, werr := c.call(api.MethodLocalesFetch, api.LocalesFetchParams{Locale: "fr", Catalog: []string{"cli"}})
	wantErr(t, "locales/fetch", werr, api.CodeForbidden, "locales:fetch")
	_, werr = c.call(api.MethodToolsParamOptions, api.ToolsParamOptionsParams{Domain: api.ParamDomainAgentAliases})
	wantErr(t, "tools/param-options", werr, api.CodeForbidden, "config:read")
}

// What a client stores from locales/fetch in data/ftl/<locale>/cli.ftl is the daemon's at its next start:
// doctor/run in that locale speaks the stored text; a hostile file cannot add variables or keys.
func TestDoctorInConfiguredLocaleWithStoredCatalogue(t *testing.T) {
	t.Parallel()
	d := Start(t, WithConfig("locale = \"fr\"\n"+baseConfig))
	c := dialRC(t, d, "")
	var res api.DoctorResult
	c.mustCall(api.MethodDoctorRun, api.DoctorRunParams{Offline: true}, &res)
	if !hasMessage(res, "se charge sans problème") {
		t.Fatalf("doctor/run with locale = fr: %+v", res.Results)
	}
	c.mustCall(api.MethodDoctorRun, api.DoctorRunParams{Offline: true, Locale: "en"}, &res)
	if !hasMessage(res, "loads without problems") {
		t.Fatalf("doctor/run asking en: %+v", res.Results)
	}

	dir := filepath.Join(d.ConfigDir, "data", "ftl", "fr")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	ftl := "doctor-config-ok = {$path} : chargé (catalogue téléchargé)\ndoctor-daemon-stopped = {$secret}\n"
	if err := os.WriteFile(filepath.Join(dir, "cli.ftl"), []byte(ftl), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	d2 := StartOn(t, d.ConfigDir)
	c2 := dialRC(t, d2, "")
	c2.mustCall(api.MethodDoctorRun, api.DoctorRunParams{Offline: true}, &res)
	if !hasMessage(res, "chargé (catalogue téléchargé)") || hasMessage(res, "{$secret}") {
		t.Fatalf("doctor/run after the stored catalogue: %+v", res.Results)
	}
}

func hasMessage(res api.DoctorResult, part string) bool {
	for _, r := range res.Results {
		if strings.Contains(r.Message, part) {
			return true
		}
	}
	return false
}
