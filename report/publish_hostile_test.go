//go:build unix

package report

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestPublishRefusesHostile: a matrix folder from someone else cannot put
// a private file into the public bundle, nor name one outside itself: a
// results.json (or a whole run folder, or runs/) that is a link, a run
// file that is not a regular file, and a run directory that is absolute
// or climbs out with ".." are refused in one line, and nothing is
// written: the bundle's folder is not created.
func TestPublishRefusesHostile(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "private.json")
	if err := os.WriteFile(secret, []byte(`{"token":"do not publish"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		// change edits the matrix folder src, whose first run is run.
		change func(t *testing.T, src, run string, m *Matrix)
		want   string
	}{
		{"linked results.json", func(t *testing.T, src, run string, m *Matrix) {
			os.Remove(filepath.Join(src, run, "results.json"))
			if err := os.Symlink(secret, filepath.Join(src, run, "results.json")); err != nil {
				t.Fatal(err)
			}
		}, "results.json is a symbolic link"},
		{"dangling report.html", func(t *testing.T, src, run string, m *Matrix) {
			os.Remove(filepath.Join(src, run, "report.html"))
			if err := os.Symlink(filepath.Join(src, "nowhere"), filepath.Join(src, run, "report.html")); err != nil {
				t.Fatal(err)
			}
		}, "report.html is a symbolic link"},
		{"linked run folder", func(t *testing.T, src, run string, m *Matrix) {
			other := t.TempDir()
			if err := os.Symlink(secret, filepath.Join(other, "results.json")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(other, filepath.Join(src, "runs", "linked")); err != nil {
				t.Fatal(err)
			}
			m.Cells[0].Runs[1].Dir = "runs/linked"
		}, "runs/linked is a symbolic link"},
		{"linked runs", func(t *testing.T, src, run string, m *Matrix) {
			if err := os.Rename(filepath.Join(src, "runs"), filepath.Join(src, "elsewhere")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(src, "elsewhere"), filepath.Join(src, "runs")); err != nil {
				t.Fatal(err)
			}
		}, "runs is a symbolic link"},
		{"named pipe", func(t *testing.T, src, run string, m *Matrix) {
			os.Remove(filepath.Join(src, run, "schedule.json"))
			if err := syscall.Mkfifo(filepath.Join(src, run, "schedule.json"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, "schedule.json is not a regular file (a named pipe)"},
		{"parent directory", func(t *testing.T, src, run string, m *Matrix) {
			m.Cells[0].Runs[1].Dir = "../" + filepath.Base(filepath.Dir(secret))
		}, `its directory "../`},
		{"climbing back", func(t *testing.T, src, run string, m *Matrix) {
			m.Cells[0].Runs[1].Dir = "runs/../../x"
		}, "is not a path inside its folder"},
		{"absolute directory", func(t *testing.T, src, run string, m *Matrix) {
			m.Cells[0].Runs[1].Dir = filepath.Dir(secret)
		}, "is not a path inside its folder"},
		{"linked summary", func(t *testing.T, src, run string, m *Matrix) {
			os.Remove(filepath.Join(src, "index.html"))
			if err := os.Symlink(secret, filepath.Join(src, "index.html")); err != nil {
				t.Fatal(err)
			}
		}, "index.html is a symbolic link"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := t.TempDir()
			m := sampleMatrix()
			run := m.Cells[0].Runs[0].Dir
			if err := os.MkdirAll(filepath.Join(src, run), 0o700); err != nil {
				t.Fatal(err)
			}
			for _, name := range publishedRunFiles {
				if err := os.WriteFile(filepath.Join(src, run, name), []byte(name), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if err := WriteMatrix(src, m); err != nil {
				t.Fatal(err)
			}
			tc.change(t, src, run, &m)
			// The summaries as edited, without touching a linked index.html.
			b, _ := json.Marshal(m)
			if err := os.WriteFile(filepath.Join(src, "summary.json"), b, 0o600); err != nil {
				t.Fatal(err)
			}
			dst := filepath.Join(t.TempDir(), "results", "bundle")
			_, err := Publish(src, dst, PublishOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("Publish: %v; want one line with %q", err, tc.want)
			}
			if _, err := os.Lstat(filepath.Dir(dst)); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a refused publish left %s: %v", filepath.Dir(dst), err)
			}
			if b, _ := os.ReadFile(secret); string(b) != `{"token":"do not publish"}` {
				t.Errorf("the private file now holds %q", b)
			}
		})
	}
}
