package tomledit

import (
	"errors"
	"testing"
)

// An entry goes with every text that defines it (its headers with their bodies, dotted keys, `key = {}`),
// and the comment above it stays; a second delete finds nothing.
func TestDeleteEntry(t *testing.T) {
	in := "[a]\nx = 1\n\n# about b\n[m.b]\ny = 2\n\n[m.b.w]\nz = 3\n\n[m]\nc.k = 1\nd = {}\n"
	out, found, err := DeleteEntry("f", []byte(in), Path{"m", "b"})
	if err != nil || !found || string(out) != "[a]\nx = 1\n\n# about b\n\n[m]\nc.k = 1\nd = {}\n" {
		t.Fatalf("DeleteEntry m.b = %q, %v, %v", out, found, err)
	}
	for _, key := range []string{"c", "d"} {
		if out, found, err = DeleteEntry("f", out, Path{"m", key}); err != nil || !found {
			t.Fatalf("DeleteEntry m.%s: %v, %v", key, found, err)
		}
	}
	if string(out) != "[a]\nx = 1\n\n# about b\n\n[m]\n" {
		t.Fatalf("after the dotted and inline entries: %q", out)
	}
	if again, found, err := DeleteEntry("f", out, Path{"m", "b"}); err != nil || found || string(again) != string(out) {
		t.Fatalf("second DeleteEntry = %q, %v, %v", again, found, err)
	}
	if _, _, err := DeleteEntry("f", []byte("m = { b = { y = 1 } }\n"), Path{"m", "b"}); !errors.Is(err, ErrNotEditable) {
		t.Fatalf("an entry inside a parent's inline table: %v", err)
	}
}

// A rename rewrites only the header keys of the entry's tables; an entry defined by dotted keys outside its
// own table, or inline, is refused.
func TestRenameEntry(t *testing.T) {
	in := "[m.b] # mine\ny = 2\n\n[m.b.\"w.x\"]\nz = 3\n"
	out, renamed, err := RenameEntry("f", []byte(in), Path{"m", "b"}, Path{"m", "new name"})
	if err != nil || !renamed || string(out) != "[m.\"new name\"] # mine\ny = 2\n\n[m.\"new name\".\"w.x\"]\nz = 3\n" {
		t.Fatalf("RenameEntry = %q, %v, %v", out, renamed, err)
	}
	if same, renamed, err := RenameEntry("f", []byte(in), Path{"m", "c"}, Path{"m", "d"}); err != nil || renamed || string(same) != in {
		t.Fatalf("renaming a missing entry = %q, %v, %v", same, renamed, err)
	}
	for _, text := range []string{"[m]\nb.y = 2\n", "[m]\nb = {}\n"} {
		if _, _, err := RenameEntry("f", []byte(text), Path{"m", "b"}, Path{"m", "c"}); !errors.Is(err, ErrNotEditable) {
			t.Errorf("RenameEntry in %q: %v", text, err)
		}
	}
}
