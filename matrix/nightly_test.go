package matrix

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Budget of the nightly workflow: its wall time, and what a job spends
// besides the matrix (checkout, Go, apt-get, build; the merge job's
// download, merge and upload, the nights before and the trend), as its
// comment states.
const (
	nightlyWall  = 30 * time.Minute
	nightlySetup = 4 * time.Minute
	nightlyMerge = 4 * time.Minute
)

// TestNightlyWorkflow holds .github/workflows/nightly.yml to its shard
// arithmetic: the shards of its job matrix are 1..N and the command runs
// shard i/N; every cell × its seeds, dealt by Plan, fits its budget (the
// longest shard plus a job's set-up within the shard job's timeout, plus
// the merge job within 30 minutes); and the figures of its comment are
// those of the cells as they are. It runs actionlint on the file when
// actionlint is installed.
func TestNightlyWorkflow(t *testing.T) {
	path := filepath.Join("..", ".github", "workflows", "nightly.yml")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	wf := string(b)
	m := regexp.MustCompile(`(?m)^\s+shard: \[([0-9, ]+)\]$`).FindStringSubmatch(wf)
	if m == nil {
		t.Fatalf("%s: no job matrix 'shard: [1, 2, ...]'", path)
	}
	shards := strings.Split(m[1], ",")
	for i, s := range shards {
		if n, err := strconv.Atoi(strings.TrimSpace(s)); err != nil || n != i+1 {
			t.Fatalf("%s: the job matrix's shards %s are not 1..N", path, m[1])
		}
	}
	n := len(shards)
	c := regexp.MustCompile(`torture matrix --shard \$\{\{ matrix\.shard \}\}/(\d+) --seeds (\d+)\.\.(\d+) --duration (\S+) `).FindStringSubmatch(wf)
	if c == nil {
		t.Fatalf("%s: no 'torture matrix --shard ${{ matrix.shard }}/N --seeds a..b --duration D' command", path)
	}
	if c[1] != strconv.Itoa(n) {
		t.Fatalf("%s: the command runs shards of %s, the job matrix has %d", path, c[1], n)
	}
	lo, _ := strconv.ParseInt(c[2], 10, 64)
	hi, _ := strconv.ParseInt(c[3], 10, 64)
	d, err := time.ParseDuration(c[4])
	if err != nil || lo < 1 || hi < lo {
		t.Fatalf("%s: seeds %s..%s, duration %s", path, c[2], c[3], c[4])
	}
	var seeds []int64
	for s := lo; s <= hi; s++ {
		seeds = append(seeds, s)
	}
	specs := Cells(false)
	o := Options{Seeds: seeds, Duration: d}
	var longest, total time.Duration
	for _, runs := range Shards(specs, o, n) {
		t := ExpectedTime(specs, o, runs)
		longest = max(longest, t)
		total += t
	}
	timeout := regexp.MustCompile(`(?s)\n  shard:.*?timeout-minutes: (\d+)`).FindStringSubmatch(wf)
	if timeout == nil {
		t.Fatalf("%s: the shard job has no timeout-minutes", path)
	}
	tm, _ := strconv.Atoi(timeout[1])
	shardJob := longest + nightlySetup
	t.Logf("%d runs, %s on one machine; %d shards, the longest %s; a shard job about %s, with the merge %s",
		len(specs)*len(seeds), total.Round(time.Second), n, longest.Round(time.Second), shardJob.Round(time.Second), (shardJob + nightlyMerge).Round(time.Second))
	if shardJob > time.Duration(tm)*time.Minute {
		t.Errorf("a shard job takes about %s, more than its timeout-minutes of %d: add shards", shardJob.Round(time.Second), tm)
	}
	if shardJob+nightlyMerge > nightlyWall {
		t.Errorf("the nightly takes about %s of wall time, more than %s: add shards", (shardJob + nightlyMerge).Round(time.Second), nightlyWall)
	}
	// The comment shows the arithmetic for the cells as they are.
	fixed, longer := 0, 0
	for _, sp := range specs {
		if sp.MinDuration > d {
			longer++
		} else {
			fixed++
		}
	}
	for _, want := range []string{
		fmt.Sprintf("%d cells × %d seeds = %d runs of --duration %s", len(specs), len(seeds), len(specs)*len(seeds), d),
		fmt.Sprintf("= %d s ≈ %d min", int(total.Round(time.Second).Seconds()), int(total.Round(time.Minute).Minutes())),
		fmt.Sprintf("%d shards", n),
		fmt.Sprintf("the longest\n#                gets %d s", int(longest.Round(time.Second).Seconds())),
		fmt.Sprintf("--shard 1/%d --list", n),
	} {
		if !strings.Contains(wf, want) {
			t.Errorf("%s: the comment's arithmetic lacks %q (%d cells of %s and %d longer, %d shards): update it", path, want, fixed, d, longer, n)
		}
	}

	lint, err := exec.LookPath("actionlint")
	if err != nil {
		t.Logf("actionlint is not installed (go install github.com/rhysd/actionlint/cmd/actionlint@v1.7.12): the workflow's syntax is not checked")
		return
	}
	if out, err := exec.Command(lint, path).CombinedOutput(); err != nil {
		t.Errorf("actionlint %s: %v\n%s", path, err, out)
	}
}
