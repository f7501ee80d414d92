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
// and the history of every run that showed a violation and of each
// cell's first run (all of them with AllHistories), never the nodes'
// folders; it reports its size and never writes into a folder that holds
// something.
func TestPublish(t *testing.T) {
	src := t.TempDir()
	m := sampleMatrix()
	if err := WriteMatrix(src, m); err != nil {
		t.Fatal(err)
	}
	first, second, violating := m.Cells[0].Runs[0].Dir, m.Cells[0].Runs[1].Dir, m.Cells[1].Runs[1].Dir
	for _, run := range []string{first, second, violating} {
		for _, name := range []string{"report.html", "results.json", "schedule.json", "history.jsonl", "nodes/n1/redis.conf"} {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(src, run, name)), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(src, run, name), []byte(name), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	names := func(dst string) []string {
		t.Helper()
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
		var out []string
		for {
			h, err := tr.Next()
			if err != nil {
				break
			}
			out = append(out, h.Name)
		}
		return out
	}
	all := filepath.Join(t.TempDir(), "all")
	if _, err := Publish(src, all, PublishOptions{AllHistories: true}); err != nil {
		t.Fatal(err)
	}
	if got := names(all); !slices.Contains(got, second+"/history.jsonl") {
		t.Errorf("with every history, the archive lacks %s's: %v", second, got)
	}
	dst := filepath.Join(t.TempDir(), "bundle")
	size, err := Publish(src, dst, PublishOptions{})
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
	got := names(dst)
	var want []string
	for _, run := range []string{first, second, violating} {
		want = append(want, run+"/report.html", run+"/results.json", run+"/schedule.json")
		if run != second {
			want = append(want, run+"/history.jsonl")
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("archive holds %v, want %v", got, want)
	}
	if _, err := Publish(src, dst, PublishOptions{}); err == nil {
		t.Error("a second Publish into the same folder succeeded")
	}
	// What a reader of results/ runs, where tar and xz are installed.
	if _, err := exec.LookPath("xz"); err == nil {
		out := t.TempDir()
		if b, err := exec.Command("tar", "-xJf", filepath.Join(dst, RunsArchive), "-C", out).CombinedOutput(); err != nil {
			t.Fatalf("tar -xJf: %v: %s", err, b)
		}
		if b, err := os.ReadFile(filepath.Join(out, first, "history.jsonl")); err != nil || string(b) != "history.jsonl" {
			t.Errorf("unpacked history.jsonl: %q, %v", b, err)
		}
	}
}
