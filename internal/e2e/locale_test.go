package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// LANG=fr_FR.UTF-8 zeroclaw doctor speaks French, with or without a daemon (the CLI asks the daemon for
// findings in its own locale), and LC_ALL=C brings English back; the error and its hint are French too.
func TestDoctorInFrench(t *testing.T) {
	t.Parallel()
	h := home(t)
	fr := env(h, "LANG=fr_FR.UTF-8")

	out, errOut, code := run(t, fr, "", "doctor", "--offline")
	if code != 1 || !strings.Contains(out, "vérifié par ce processus (aucun démon ne tourne)") ||
		!strings.Contains(out, "n'existe pas") || !strings.Contains(out, "correction : démarrez le démon une fois") ||
		!strings.Contains(errOut, "Erreur : doctor a trouvé") || !strings.Contains(errOut, "Essayez : appliquez les corrections") {
		t.Fatalf("doctor without a daemon, LANG=fr: exit %d\n%s\n%s", code, out, errOut)
	}

	d := start(t, env(h), "daemon") // the daemon's own environment is English
	waitSocket(t, d, agentSock(h))
	out = runOK(t, fr, "", "doctor", "--offline")
	if !strings.Contains(out, "vérifié par le démon en cours d'exécution") || !strings.Contains(out, "sessions.db : intégrité correcte") ||
		!strings.Contains(out, "0 avertissements, 0 erreurs") {
		t.Fatalf("doctor through the daemon, LANG=fr:\n%s", out)
	}
	out = runOK(t, env(h, "LANG=fr_FR.UTF-8", "LC_ALL=C"), "", "doctor", "--offline")
	if !strings.Contains(out, "sessions.db: integrity ok") {
		t.Fatalf("doctor with LC_ALL=C:\n%s", out)
	}
}

// The approval prompt of zeroclaw agent follows LANG: French text, and "o" (oui) approves the call.
func TestApprovalPromptInFrench(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		if calls.Add(1) == 1 {
			fmt.Fprint(w, sseToolCall("echo oui > marker"))
			return
		}
		fmt.Fprint(w, sseChunk("fini")+"data: [DONE]\n\n")
	}))
	defer backend.Close()
	h, _ := homeWithOpenAI(t, "fake", backend.URL)
	d := start(t, env(h), "daemon")
	waitSocket(t, d, agentSock(h))

	out, errOut, code := run(t, env(h, "LC_MESSAGES=fr_FR.UTF-8"), "o\n", "agent", "-m", "écris le marqueur")
	if code != 0 || !strings.Contains(errOut, "shell veut exécuter : shell: echo oui > marker") ||
		!strings.Contains(errOut, "Autoriser ? [o]ui / [n]on / [t]oujours :") || !strings.Contains(out, "fini") {
		t.Fatalf("agent, LC_MESSAGES=fr: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	b, err := os.ReadFile(filepath.Join(agentWorkspace(h), "marker"))
	if err != nil || strings.TrimSpace(string(b)) != "oui" {
		t.Fatalf("the approved command did not run: %v %q", err, b)
	}
}

// LANG=fr_FR.UTF-8 zeroclaw quickstart asks its five questions in French through a pipe, "o" (oui) confirms
// the write, and the agent it made answers; a wrong preset is refused in French; LC_ALL=C asks in English.
func TestQuickstartInFrench(t *testing.T) {
	t.Parallel()
	h := home(t)
	fr := env(h, "LANG=fr_FR.UTF-8")
	out := runOK(t, fr, "echo\n\naide\nbalanced\nn\nn\no\n", "quickstart")
	for _, want := range []string{"Fournisseur de modèles (openai, ollama, anthropic, echo) [echo]: ",
		"Modèle [echo]: ", "Nom de l'agent [assistant]: ", "Préréglage de risque : strict (demande avant chaque appel risqué)",
		"Appairer un appareil (téléphone, navigateur) avec la passerelle après la configuration ? (o/N): ",
		"Installer le démon comme service utilisateur ? (o/N): ", "Test de echo par une requête...",
		"Le fournisseur a répondu : ", "(après le quickstart)", "Écrire ces changements dans ",
		`Quickstart terminé : l'agent "aide" utilise echo.default avec le profil de risque balanced`,
		`Ensuite : zeroclaw agent --agent aide -m "hello"`} {
		if !strings.Contains(out, want) {
			t.Fatalf("the French quickstart does not show %q:\n%s", want, out)
		}
	}
	for _, english := range []string{"Model provider", "Agent name", "Write these changes", "Quickstart complete"} {
		if strings.Contains(out, english) {
			t.Fatalf("the French quickstart shows %q:\n%s", english, out)
		}
	}
	raw, err := os.ReadFile(filepath.Join(h, ".zeroclaw", "config.toml"))
	if err != nil || !strings.Contains(string(raw), "[agents.aide]") {
		t.Fatalf("config.toml after \"o\": %v\n%s", err, raw)
	}
	if out := runOK(t, env(h), "", "agent", "--agent", "aide", "-m", "bonjour"); !strings.Contains(out, "bonjour") {
		t.Fatalf("the new agent: %q", out)
	}

	_, errOut, code := run(t, fr, "echo\n\nautre\nprudent\n", "quickstart")
	if code == 0 || !strings.Contains(errOut, `Erreur : quickstart : préréglage inconnu "prudent"`) ||
		!strings.Contains(errOut, "Essayez : --preset strict, balanced ou open") {
		t.Fatalf("a wrong preset in French: exit %d\n%s", code, errOut)
	}
	out = runOK(t, env(h, "LANG=fr_FR.UTF-8", "LC_ALL=C"), "echo\n", "quickstart", "--dry-run")
	if !strings.Contains(out, "Model provider (openai") || !strings.Contains(out, "Quickstart cancelled. No config written.") {
		t.Fatalf("LC_ALL=C:\n%s", out)
	}
}
