package report

import (
	"math"
	"testing"
)

// TestWilson checks the interval against values computed by hand from
// Wilson's formula (z = 1.96) and its properties at the ends.
func TestWilson(t *testing.T) {
	for _, tc := range []struct {
		k, n   int
		lo, hi float64
	}{
		{0, 0, 0, 1},
		{0, 1, 0, 0.7935},
		{1, 1, 0.2065, 1},
		{0, 3, 0, 0.5615},
		{1, 3, 0.0615, 0.7924},
		{2, 3, 0.2076, 0.9385},
		{3, 3, 0.4385, 1},
		{5, 10, 0.2366, 0.7634},
		{0, 10, 0, 0.2775},
		{9, 10, 0.5958, 0.9821},
	} {
		lo, hi := Wilson(tc.k, tc.n)
		if math.Abs(lo-tc.lo) > 5e-4 || math.Abs(hi-tc.hi) > 5e-4 {
			t.Errorf("Wilson(%d, %d) = [%.4f, %.4f], want [%.4f, %.4f]", tc.k, tc.n, lo, hi, tc.lo, tc.hi)
		}
	}
	for n := 1; n <= 50; n++ {
		for k := 0; k <= n; k++ {
			lo, hi := Wilson(k, n)
			p := float64(k) / float64(n)
			if lo < 0 || hi > 1 || lo > p || hi < p {
				t.Fatalf("Wilson(%d, %d) = [%v, %v] does not hold %v inside [0, 1]", k, n, lo, hi, p)
			}
			lo2, hi2 := Wilson(n-k, n)
			if math.Abs(lo-(1-hi2)) > 1e-9 || math.Abs(hi-(1-lo2)) > 1e-9 {
				t.Fatalf("Wilson(%d, %d) is not the mirror of Wilson(%d, %d)", k, n, n-k, n)
			}
		}
	}
}

func TestBandContradicts(t *testing.T) {
	safe := DefaultBand(ExpectSafe)
	forced := DefaultBand(ExpectViolation) // ≥ 0.9
	random := Band{Min: 0.6, Max: 1}
	possible := DefaultBand(ExpectPossible)
	for _, tc := range []struct {
		name string
		b    Band
		k, n int
		want bool
	}{
		{"safe, none", safe, 0, 3, false},
		{"safe, one violation", safe, 1, 3, true},
		{"safe, one seed, violation", safe, 1, 1, true},
		{"safe, one seed, none", safe, 0, 1, false},
		{"forced, one seed, none: the gate's rule", forced, 0, 1, true},
		{"forced, one seed, found", forced, 1, 1, false},
		{"forced, 3 of 3", forced, 3, 3, false},
		{"forced, 2 of 3: the interval reaches 0.9", forced, 2, 3, false},
		{"forced, 1 of 3: the interval ends below 0.9", forced, 1, 3, true},
		{"random, 1 of 3: the interval reaches 0.6", random, 1, 3, false},
		{"random, 0 of 3", random, 0, 3, true},
		{"random, 2 of 10", random, 2, 10, true},
		{"possible, none", possible, 0, 3, false},
		{"possible, all", possible, 3, 3, false},
		{"no decided run", safe, 0, 0, false},
		{"no decided run, violation expected", forced, 0, 0, false},
	} {
		if got := tc.b.Contradicts(tc.k, tc.n); got != tc.want {
			lo, hi := Wilson(tc.k, tc.n)
			t.Errorf("%s: band %s, %d of %d [%.3f, %.3f]: contradicts %v, want %v", tc.name, tc.b, tc.k, tc.n, lo, hi, got, tc.want)
		}
	}
}

func TestBandContradictingText(t *testing.T) {
	for _, tc := range []struct {
		b    Band
		n    int
		want string
	}{
		{DefaultBand(ExpectSafe), 1, "1 of 1 would"},
		{DefaultBand(ExpectSafe), 3, "1–3 of 3 would"},
		{DefaultBand(ExpectSafe), 2, "1 or 2 of 2 would"},
		{DefaultBand(ExpectViolation), 1, "0 of 1 would"},
		{DefaultBand(ExpectViolation), 3, "0 or 1 of 3 would"},
		{Band{Min: 0.6, Max: 1}, 3, "0 of 3 would"},
		{Band{Min: 0.6, Max: 1}, 10, "0–2 of 10 would"},
		{DefaultBand(ExpectPossible), 3, "no count of 3 would: any rate fits (only runs all undecided would)"},
		{Band{Min: 0.3, Max: 0.4}, 20, "0–1, 13–20 of 20 would"},
		{DefaultBand(ExpectSafe), 0, "no run: nothing would"},
	} {
		if got := tc.b.ContradictingText(tc.n); got != tc.want {
			t.Errorf("band %s, %d runs: %q, want %q", tc.b, tc.n, got, tc.want)
		}
	}
}

func TestRateString(t *testing.T) {
	if got, want := NewRate(2, 3).String(), "2/3 = 0.67 [0.21, 0.94]"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := NewRate(0, 0).String(); got != "no decided run" {
		t.Errorf("got %q", got)
	}
	for b, want := range map[Band]string{DefaultBand(ExpectSafe): "0", {Min: 0.6, Max: 1}: "≥ 0.6", DefaultBand(ExpectPossible): "any"} {
		if got := b.String(); got != want {
			t.Errorf("band %+v: %q, want %q", b, got, want)
		}
	}
}

// TestWriteMatrixRates: summary.md and index.html give each cell's band,
// rate with interval and what would contradict it, from the cell's
// fields or, in a summary that predates them, from its counts.
func TestWriteMatrixRates(t *testing.T) {
	m := sampleMatrix()
	m.Cells[1].Band = &Band{Min: 0.6, Max: 1, Why: "random kills <must> land"}
	m.Cells[1].Rate = new(NewRate(2, 2))
	m.Cells[1].ContradictedBy = "0 of 2 would"
	dir := t.TempDir()
	if err := WriteMatrix(dir, m); err != nil {
		t.Fatal(err)
	}
	md := readFile(t, dir, "summary.md")
	wantContains(t, "summary.md", md,
		"## Rates",
		"| cell | expected | band | why this band | rate [95% interval] | would contradict | matches |",
		"| setnx/none | safe | 0 |  | 0/2 = 0.00 [0.00, 0.66] | 1 or 2 of 2 would | ✓ |",
		"| setnx-get-set/none | violation | ≥ 0.6 | random kills &lt;must&gt; land | 2/2 = 1.00 [0.34, 1.00] | 0 of 2 would | ✓ |",
		"| setnx/kill-immediate | possible | any |  | no decided run | no count of 1 would: any rate fits (only runs all undecided would) | ✗ |",
	)
	page := readFile(t, dir, "index.html")
	wantContains(t, "index.html", page,
		"<h2>Rates</h2>",
		`<td>≥ 0.6</td><td class="small">random kills &lt;must&gt; land</td><td class="num">2/2 = 1.00 [0.34, 1.00]</td><td>0 of 2 would</td>`,
	)
}
