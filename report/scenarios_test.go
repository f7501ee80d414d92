package report

import "testing"

// TestWriteMatrixScenarios: summary.md and index.html give the machine and
// its load, and each scenario with its cells' rates; a cell the matrix did
// not run is said so, and a scenario without cells says why.
func TestWriteMatrixScenarios(t *testing.T) {
	m := sampleMatrix()
	m.Machine = &Machine{CPUs: 2, OS: "linux", Arch: "amd64", LoadStart: 1.5, LoadEnd: -1}
	m.Scenarios = []Scenario{
		{Name: "Pauses", Source: "Kleppmann", Claim: "paused holders write late", Cells: []string{"setnx-get-set/none", "absent/cell"}},
		{Name: "Client clocks", Source: "antirez", Claim: "monotonic", Missing: "no fault <reaches> the client's clock"},
	}
	dir := t.TempDir()
	if err := WriteMatrix(dir, m); err != nil {
		t.Fatal(err)
	}
	wantContains(t, "summary.md", readFile(t, dir, "summary.md"),
		"- machine: 2 CPUs, linux/amd64, load average 1.50 at the start, ? at the end",
		"## The literature's scenarios",
		"| 1 | Pauses | Kleppmann | paused holders write late | setnx-get-set/none: 2/2 = 1.00 [0.34, 1.00], expected violation ✓; absent/cell: not run | – |",
		"| 2 | Client clocks | antirez | monotonic |  | no fault &lt;reaches&gt; the client's clock |",
	)
	wantContains(t, "index.html", readFile(t, dir, "index.html"),
		"<tr><th>machine</th><td>2 CPUs, linux/amd64, load average 1.50 at the start, ? at the end</td></tr>",
		"<h2>The literature's scenarios</h2>",
		"setnx-get-set/none: 2/2 = 1.00 [0.34, 1.00], expected violation ✓<br>absent/cell: not run<br>",
		"no fault &lt;reaches&gt; the client&#39;s clock",
	)
}

func TestParseLoad(t *testing.T) {
	for in, want := range map[string]float64{"0.52 0.58 0.59 1/123 4567\n": 0.52, "": -1, "x": -1, "-3": -1} {
		if got := parseLoad(in); got != want {
			t.Errorf("parseLoad(%q) = %v, want %v", in, got, want)
		}
	}
}
