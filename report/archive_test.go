package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locktorture/locktorture/checker"
)

// TestManifestRecheck: a published bundle's manifest names its runs
// archive with the sha256 of the bytes written, Verify refuses other
// bytes, and Recheck finds every run of the summary in the archive with
// its verdicts, and says which run's verdicts differ.
func TestManifestRecheck(t *testing.T) {
	src := t.TempDir()
	m := sampleMatrix()
	if err := WriteMatrix(src, m); err != nil {
		t.Fatal(err)
	}
	for _, c := range m.Cells {
		for _, r := range c.Runs {
			if r.Dir == "" {
				continue
			}
			b, err := json.Marshal(Results{RunID: r.RunID, Lease: r.Lease, Resource: r.Resource})
			if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(src, r.Dir), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(src, r.Dir, "results.json"), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	dst := filepath.Join(t.TempDir(), "bundle")
	const url = "https://example.org/bundle/runs.tar.xz"
	if _, err := Publish(src, dst, PublishOptions{ArchiveURL: url}); err != nil {
		t.Fatal(err)
	}
	man, err := ReadManifest(dst)
	if err != nil {
		t.Fatal(err)
	}
	if len(man.Archives) != 1 || man.Archives[0].Name != RunsArchive || len(man.Archives[0].Sources) != 1 || man.Archives[0].Sources[0] != url {
		t.Fatalf("manifest %+v, want one %s from %s", man, RunsArchive, url)
	}
	a := man.Archives[0]
	b, err := os.ReadFile(filepath.Join(dst, RunsArchive))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Verify(b); err != nil {
		t.Fatal(err)
	}
	if err := a.Verify(append(b[:len(b)-1:len(b)-1], b[len(b)-1]^1)); err == nil {
		t.Error("Verify accepted a changed archive")
	}
	runs, _, err := Recheck(m, b)
	if err != nil || runs == 0 {
		t.Fatalf("Recheck: %d runs, %v", runs, err)
	}
	if m.Cells[0].Runs[0].Lease == checker.Invalid {
		m.Cells[0].Runs[0].Lease = checker.Valid
	} else {
		m.Cells[0].Runs[0].Lease = checker.Invalid
	}
	if _, _, err := Recheck(m, b); err == nil || !strings.Contains(err.Error(), m.Cells[0].Runs[0].RunID) {
		t.Errorf("Recheck of a summary that says otherwise: %v, want the run named", err)
	}
}

// TestManifestHostile: a manifest that names a file outside its bundle,
// a malformed sha256 or a source of another scheme is refused.
func TestManifestHostile(t *testing.T) {
	const sum = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	for name, a := range map[string]Archive{
		"parent":     {Name: "../runs.tar.xz", SHA256: sum},
		"absolute":   {Name: "/etc/passwd", SHA256: sum},
		"manifest":   {Name: ManifestFile, SHA256: sum},
		"short sum":  {Name: RunsArchive, SHA256: "abc"},
		"file url":   {Name: RunsArchive, SHA256: sum, Sources: []string{"file:///etc/passwd"}},
		"git option": {Name: RunsArchive, SHA256: sum, Sources: []string{"git:abcdef1:--output=x"}},
		"git parent": {Name: RunsArchive, SHA256: sum, Sources: []string{"git:abcdef1:../x"}},
	} {
		dir := t.TempDir()
		if err := WriteManifest(dir, Manifest{Archives: []Archive{a}}); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadManifest(dir); err == nil {
			t.Errorf("%s: ReadManifest accepted %+v", name, a)
		}
	}
}
