package report

import (
	"archive/tar"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ulikunitz/xz"
)

// TestPublish: the bundle holds the summaries and, in runs.tar.xz, each
// run's report, results and schedule under the paths the summaries link,
// not its history or nodes; it reports its size and never writes into a
// folder that holds something.
func TestPublish(t *testing.T) {
	src := t.TempDir()
	m := sampleMatrix()
	if err := WriteMatrix(src, m); err != nil {
		t.Fatal(err)
	}
	run := m.Cells[0].Runs[0].Dir
	for _, name := range []string{"report.html", "results.json", "schedule.json", "history.jsonl"} {
		if err := os.MkdirAll(filepath.Join(src, run), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, run, name), []byte(name), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	dst := filepath.Join(t.TempDir(), "bundle")
	size, err := Publish(src, dst)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, name := range append(slices.Clone(publishedFiles), RunsArchive) {
		st, err := os.Stat(filepath.Join(dst, name))
		if err != nil {
			t.Fatal(err)
		}
		total += st.Size()
	}
	if size != total {
		t.Errorf("size %d, the files hold %d", size, total)
	}
	f, err := os.Open(filepath.Join(dst, RunsArchive))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := xz.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var names []string
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		names = append(names, h.Name)
	}
	want := []string{run + "/report.html", run + "/results.json", run + "/schedule.json"}
	if !slices.Equal(names, want) {
		t.Errorf("archive holds %v, want %v", names, want)
	}
	if _, err := Publish(src, dst); err == nil {
		t.Error("a second Publish into the same folder succeeded")
	}
	// What a reader of results/ runs, where tar and xz are installed.
	if _, err := exec.LookPath("xz"); err == nil {
		out := t.TempDir()
		if b, err := exec.Command("tar", "-xJf", filepath.Join(dst, RunsArchive), "-C", out).CombinedOutput(); err != nil {
			t.Fatalf("tar -xJf: %v: %s", err, b)
		}
		if b, err := os.ReadFile(filepath.Join(out, run, "report.html")); err != nil || string(b) != "report.html" {
			t.Errorf("unpacked report.html: %q, %v", b, err)
		}
	}
}
