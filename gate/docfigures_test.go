package gate_test

import (
	"bytes"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/gate"
	"github.com/locktorture/locktorture/locks"
	"github.com/locktorture/locktorture/matrix"
	"github.com/locktorture/locktorture/report"
)

// TestGateDocFigures: what docs/gate.md says of the gate's defaults and
// exit statuses is what the code does.
func TestGateDocFigures(t *testing.T) {
	doc, err := os.ReadFile("../docs/gate.md")
	if err != nil {
		t.Fatal(err)
	}
	page := strings.Join(strings.Fields(string(doc)), " ")
	var usage bytes.Buffer
	if err := gate.Command(t.Context(), []string{"-h"}, &usage, &usage); err != nil && !strings.Contains(usage.String(), "-budget") {
		t.Fatalf("torture gate -h: %v", err)
	}
	for _, c := range []struct {
		text string
		ok   bool
	}{
		{"`--seeds` (default `1`)", slices.Equal(gate.DefaultSeeds, []int64{1}) && strings.Contains(usage.String(), `(default "1")`)},
		{"`--rate` (default 0.25)", gate.DefaultRate == 0.25 && strings.Contains(usage.String(), "(default 0.25)")},
		{"11 trials without a violation per promise cell", report.TrialsFor(gate.DefaultRate) == 11},
		{"runs up to 3 seeds until it shows it", gate.ExpectSeeds == 3},
		{"`--duration` (default 8s)", matrix.DefaultDuration == 8*time.Second},
		{"`--budget` (default 5m)", gate.DefaultBudget == 5*time.Minute},
		{"(not below 5 s)", gate.MinDuration == 5*time.Second},
		{"cut short at 1.5 × the budget", strings.Contains(usage.String(), "cut short at 1.5 × it")},
		{"`--jobs` (default 0)", gate.DefaultJobs == 0},
		{"`--out` (default `results/gate`)", strings.Contains(usage.String(), `(default "results/gate")`)},
		{"| 0 | every cell as expected |", gate.ExitPass == 0},
		{"| 1 | the lock broke a promise it declared |", gate.ExitBroken == 1},
		{"| 2 | the gate could not run", gate.ExitError == 2},
		{"| 3 | inconclusive", gate.ExitInconclusive == 3},
	} {
		switch {
		case !strings.Contains(page, c.text):
			t.Errorf("docs/gate.md does not say %q", c.text)
		case !c.ok:
			t.Errorf("docs/gate.md says %q, which the code no longer does", c.text)
		}
	}
	if t.Failed() {
		t.Logf("torture gate -h:\n%s", usage.String())
	}
}

// TestGateDocPromises: docs/gate.md's table of promises has a line for
// every field of locks.Promises, with the trait the rows select it by.
func TestGateDocPromises(t *testing.T) {
	doc, err := os.ReadFile("../docs/gate.md")
	if err != nil {
		t.Fatal(err)
	}
	page := string(doc)
	typ := reflect.TypeFor[locks.Promises]()
	for i := range typ.NumField() {
		if f := typ.Field(i); !strings.Contains(page, "\n| `"+f.Name+" ") {
			t.Errorf("docs/gate.md's table of promises has no line for %s", f.Name)
		}
	}
	all := locks.Promises{Quorum: 3, Persistence: locks.PersistDelayedRestart, Topologies: []string{"failover"}, SafeUnder: []string{"FAULT"}}
	v := reflect.ValueOf(&all).Elem()
	for i := range v.NumField() {
		if v.Field(i).Kind() == reflect.Bool {
			v.Field(i).SetBool(true)
		}
	}
	var table []string
	for line := range strings.Lines(page) {
		if strings.HasPrefix(line, "| `") {
			table = append(table, line)
		}
	}
	for _, trait := range append(all.Traits(), "single") {
		if !slices.ContainsFunc(table, func(line string) bool { return strings.Contains(line, "`"+trait+"`") }) {
			t.Errorf("docs/gate.md's table of promises does not name the trait %s", trait)
		}
	}
}
