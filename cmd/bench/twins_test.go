package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/locktorture/locktorture/matrix"
	"github.com/locktorture/locktorture/nemesis"
)

// TestTwinsFromKinds: the random twins are the kinds' own
// (nemesis.Kind.Twin), not a list kept here: every twin cell draws its
// targeted kind's twin kinds, and the report names every kind that has a
// twin.
func TestTwinsFromKinds(t *testing.T) {
	list := twinList()
	for _, k := range nemesis.Kinds() {
		if len(k.Twin.Kinds) > 0 && !strings.Contains(list, "`"+k.Name+"` → ") {
			t.Errorf("the report's list of twins %q leaves out %s", list, k.Name)
		}
	}
	cells := map[string]matrix.Spec{}
	for _, sp := range matrix.Cells(false) {
		cells[sp.Name] = sp
	}
	tws := twins()
	if len(tws) == 0 {
		t.Fatal("no random twins")
	}
	for _, tw := range tws {
		sp, ok := cells[strings.TrimSuffix(tw.Name, twinSuffix)]
		if !ok {
			t.Fatalf("twin %s of no cell", tw.Name)
		}
		k, err := nemesis.Lookup(sp.Kinds()[0])
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(tw.Config.Nemesis, k.Twin.Kinds) || tw.Config.Restart != k.Twin.Restart {
			t.Errorf("twin %s draws %v (restart %q); %s's twin is %v (restart %q)", tw.Name, tw.Config.Nemesis, tw.Config.Restart, k.Name, k.Twin.Kinds, k.Twin.Restart)
		}
	}
}
