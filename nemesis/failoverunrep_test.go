package nemesis_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/cluster"
	"github.com/locktorture/locktorture/internal/testutil"
	"github.com/locktorture/locktorture/nemesis"
)

// TestFailoverUnreplicated: against a real primary, replica and
// sentinels, the fault cuts the primary's internal path when a hold ends;
// a SET the primary grants under the cut is the trigger and never reaches
// the replica; the sentinels promote the replica without it and Heal
// rejoins the old primary. The decision survives Save and Load, and the
// replay cuts at the recorded offset; with no grant under its cut it says
// that the live state differed.
func TestFailoverUnreplicated(t *testing.T) {
	fo, tg := startFailoverTopology(t)
	c := tg.Cluster
	v := newLiveView()
	tg.View = v
	f := decodeKind(t, "failover-unreplicated", `{"grant_wait": "3s", "window": "10s", "active": "3s"}`)
	base := time.Now()
	done := armAsync(t, f, tg, base)
	px := fo.InternalProxy(c.Node(0))
	testutil.Eventually(t, 10*time.Second, "the cut of n1's internal path", func() error {
		if len(px.Toxics.GetToxicArray()) != 2 {
			// Arm may not follow the view yet: a hold ends again.
			v.add(nemesis.HoldEnded, 3, time.Since(base).Nanoseconds())
			return os.ErrNotExist
		}
		return nil
	})
	rc := testutil.Client(t, c.Node(0).Addr(), c.Password())
	if err := rc.SetNX(t.Context(), "k0", "t", 10*time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	v.grant(1, time.Since(base).Nanoseconds())
	a := <-done
	if a.err != nil || !a.struck {
		t.Fatalf("Arm: %v, %v; want a strike", a.struck, a.err)
	}
	if s := f.String(); !strings.Contains(s, "primary n1 cut from") || !strings.Contains(s, "at client 1's hold of k0") {
		t.Errorf("String: %q", s)
	}
	if err := f.Start(t.Context(), tg); err != nil {
		t.Fatal(err)
	}
	if got := testutil.Value(t, c.Node(1), "k0"); got != "" {
		t.Errorf("the promoted replica n2 has k0 = %q; the grant under the cut must not have reached it", got)
	}
	if err := f.Heal(t.Context(), tg); err != nil {
		t.Fatal(err)
	}
	if p, err := fo.WaitPrimary(t.Context()); err != nil || p != c.Node(1) {
		t.Fatalf("primary after the heal: %v, %v; want n2", p, err)
	}

	params, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "schedule.json")
	js := `{"seed": 1, "kinds": ["failover-unreplicated"], "interval": "3s", "steps": [{"kind": "failover-unreplicated", "at": "0s", "for": "13s", "params": ` + string(params) + `}]}`
	if err := os.WriteFile(path, []byte(js), 0o600); err != nil {
		t.Fatal(err)
	}
	s := nemesis.Setup{Lock: "setnx", Nodes: 2, Groups: 1, TTL: 3 * time.Second, Topology: cluster.TopologyFailover, Abilities: cluster.Spec{}.Abilities()}
	sc, err := nemesis.Load(path, s)
	if err != nil {
		t.Fatal(err)
	}
	rf := sc.Steps[0].Fault().(nemesis.ArmedFault)
	rbase := time.Now()
	struck, err := rf.Arm(t.Context(), &nemesis.Target{Cluster: c, View: newLiveView()}, rbase)
	if err != nil || !struck {
		t.Fatalf("replay Arm: %v, %v", struck, err)
	}
	b, _ := json.Marshal(rf)
	if !strings.Contains(string(b), `"replay":"differs: recorded nodes n1, live n2"`) {
		t.Errorf("replayed decision %s: want the live primary named as differing", b)
	}
	// Heal waits until the topology is healthy again (the replay's cut
	// outlasted the sentinels' down-after: they may have failed over).
	if err := rf.Heal(t.Context(), &nemesis.Target{Cluster: c}); err != nil {
		t.Fatal(err)
	}
}
