package sop

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSaveJournalOfEscapedTextIsHonoured: JSON escapes '<', '>' and '&' as six bytes each, so the journal of
// a save whose SOP.md is within MaxFileBytes can be far larger than the two files. A crash after SOP.md was
// replaced but before SOP.toml must still leave the new SOP whole: the loader and Recover must read that
// journal, not skip it as too large (which showed the new SOP.md with the old SOP.toml, half a save, and
// left the journal behind for ever).
func TestSaveJournalOfEscapedTextIsHonoured(t *testing.T) {
	dir := t.TempDir()
	v1 := allFieldsSop()
	if _, err := Create(dir, v1); err != nil {
		t.Fatal(err)
	}
	v2 := allFieldsSop()
	v2.Description = "second"
	v2.Steps = v2.Steps[:1]
	v2.Steps[0].Calls = nil
	v2.Steps[0].Body = "Compare a<b && b>c: " + strings.Repeat("<&>", 60_000)
	_, manifest, md, err := prepare(v2)
	if err != nil {
		t.Fatal(err)
	}
	if len(md) > MaxFileBytes || len(manifest) > MaxFileBytes {
		t.Fatalf("the test SOP is past MaxFileBytes: %d %d", len(md), len(manifest))
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	// As a save leaves it (HTML-escaped, as json.Marshal writes it and as the binary before this fix did:
	// the largest form), then the crash after SOP.md was replaced.
	j, _ := json.Marshal(journal{TOML: string(manifest), MD: string(md)})
	if len(j) <= 2*MaxFileBytes+1024 {
		t.Fatalf("the journal (%d bytes) is not past the old bound; the test proves nothing", len(j))
	}
	if err := os.WriteFile(filepath.Join(dir, "rt", JournalFile), j, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rt", StepsFile), md, 0o600); err != nil {
		t.Fatal(err)
	}
	c := LoadDir(dir, LoadOptions{})
	if len(c.Sops) != 1 || c.Sops[0].Description != "second" || len(c.Sops[0].Steps) != 1 {
		desc, steps := "", 0
		if len(c.Sops) > 0 {
			desc, steps = c.Sops[0].Description, len(c.Sops[0].Steps)
		}
		t.Fatalf("the journal is not the SOP (half a save shown): %d SOPs, description %q, %d steps, %d disabled",
			len(c.Sops), desc, steps, len(c.Disabled))
	}
	if err := Recover(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "rt", JournalFile)); !os.IsNotExist(err) {
		t.Fatal("the journal was not rolled forward")
	}
	got, _, err := LoadOne(dir, "rt", LoadOptions{})
	if err != nil || got.Description != "second" {
		t.Fatalf("after recover: %+v %v", got, err)
	}
}

// TestSaveRacingALoadIsNeverTorn: the daemon reloads its SOPs after every save and on the directory watch,
// so a load runs while another save writes. A load that read SOP.toml before a save and SOP.md after it
// got a SOP that was never saved: the old manifest (its execution mode: auto, no gate) with the new steps.
// Every load must see one save whole.
func TestSaveRacingALoadIsNeverTorn(t *testing.T) {
	dir := t.TempDir()
	version := func(tag string) Sop {
		s := allFieldsSop()
		s.Description = "version " + tag
		s.Steps = s.Steps[:1]
		s.Steps[0].Calls = nil
		s.Steps[0].Body = "body " + tag
		return s
	}
	if _, err := Create(dir, version("A")); err != nil {
		t.Fatal(err)
	}
	done, stop := make(chan error, 1), make(chan struct{})
	go func() {
		for i := 0; i < 200; i++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			tag := "A"
			if i%2 == 0 {
				tag = "B"
			}
			if _, err := Save(dir, version(tag)); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	loads := 0
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			if loads == 0 {
				t.Fatal("no load ran during the saves")
			}
			return
		default:
		}
		got, _, err := LoadOne(dir, "rt", LoadOptions{})
		loads++
		tag := strings.TrimPrefix(got.Description, "version ")
		if err != nil || len(got.Steps) != 1 || got.Steps[0].Body != "body "+tag {
			close(stop)
			<-done
			t.Fatalf("load %d is torn: %v, description %q with steps %+v", loads, err, got.Description, got.Steps)
		}
	}
}
