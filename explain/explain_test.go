package explain_test

import (
	"cmp"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/explain"
	"github.com/locktorture/locktorture/history"
)

// analyze reads and analyzes one history of checker/testdata.
func analyze(tb testing.TB, name string) checker.Analysis {
	tb.Helper()
	evs, err := history.ReadFile(filepath.Join("..", "checker", "testdata", name))
	if err != nil {
		tb.Fatal(err)
	}
	a, err := checker.Analyze(evs, checker.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	return a
}

// TestCauses: one recorded history per cause (checker/testdata's
// *_cause-*.jsonl, whose verdicts TestTestdata checks), each first
// violation explained by its cause, the fault and node blamed, in a
// paragraph that says what the evidence shows.
func TestCauses(t *testing.T) {
	for _, tc := range []struct {
		file     string
		property string
		cause    explain.Cause
		fault    int
		node     string
		says     []string
	}{
		{"lease-invalid_resource-invalid_cause-clock-jump.jsonl", "lease", explain.ClockJump, 1, "n2",
			[]string{"P0 held k1 from 0.110 s (token aaaaaa…, granted by n1 n2, valid to 3.000 s)", "n2 expired the key at 1.100 s", "clock jump +2s on n2", "P1 acquired k1 at 1.200 s from n2 n3", "Both held it 1.200 s–1.310 s"}},
		// The lease that returned second set the key first: the jump
		// expired its key, and the other took the nodes (matrix
		// redlock/clock, seed 1).
		{"lease-invalid_resource-unknown_cause-clock-jump-taken-over.jsonl", "lease", explain.ClockJump, 1, "n1",
			[]string{"n1 expired the key at 1.034 s, 0.031 s after the start of fault #1", "and granted it again"}},
		{"lease-invalid_resource-invalid_cause-restart.jsonl", "lease", explain.Restart, 1, "n1",
			[]string{"kill n1, restart at once", "restarted n1 empty"}},
		// A targeted kind acts as the kind it aims: kill-quorum kills.
		{"lease-invalid_resource-invalid_cause-restart-kill-quorum.jsonl", "lease", explain.Restart, 1, "n2",
			[]string{"kill n2, restart at once", "restarted n2 empty"}},
		// Fencing tokens out of order: a counter reset by a restart of a
		// node of the later grant, or, with no fault, the lock's tokens.
		{"lease-invalid_resource-valid_cause-fence-restart.jsonl", "fence", explain.Restart, 1, "n2",
			[]string{"P1 was granted k at 0.040 s with fencing token 1, after P0's grant at 0.010 s with 9", "P0's grant came from n1 n2, P1's from n2 n3", "restarted n2 between the two grants"}},
		{"lease-invalid_resource-valid_fence-order-decreases.jsonl", "fence", explain.LockLogic, 0, "",
			[]string{"with fencing token 7, after P0's grant", "No restart came between them"}},
		// Memory pressure: the held key evicted while the evict fault
		// wrote fillers (matrix setnx/evict).
		{"lease-invalid_resource-invalid_cause-evicted.jsonl", "lease", explain.Evicted, 1, "n1",
			[]string{"n1 evicted the key at 0.130 s, 0.960 s before the end of P0's validity", "evict n1: maxmemory-policy allkeys-lru", "P1 acquired k0 at 0.140 s from n1"}},
		// A power loss dropped the unsynced grant (matrix
		// setnx/power-loss-everysec).
		{"lease-invalid_resource-invalid_cause-power-loss.jsonl", "lease", explain.PowerLoss, 1, "n1",
			[]string{"power-loss n1: kill, drop unsynced writes, restart at once", "dropped what it had not fsynced, the grant with it", "n1 came back without the key"}},
		{"lease-invalid_resource-invalid_cause-failover.jsonl", "lease", explain.Failover, 1, "n2",
			[]string{"made n2 the primary", "n2 never had the key"}},
		// Redis Cluster: the replica promoted in place of the key's
		// master never had the key (matrix
		// setnx/cluster-failover-unreplicated).
		{"lease-invalid_resource-invalid_cause-promoted-without-key.jsonl", "lease", explain.PromotedWithoutKey, 1, "n5",
			[]string{"promoted n5 in its place", "n5 never had the key before P1 set it: n2's grant had not been replicated"}},
		// Redis Cluster: the key's master, already cut off every other
		// node, granted the first lease, and the majority promoted its
		// replica (matrix setnx/cluster-partition-master).
		{"lease-invalid_resource-invalid_cause-minority-master.jsonl", "lease", explain.MinorityMaster, 1, "n2",
			[]string{"n2 was cut off every other node at 0.100 s and granted P0's lease at 0.105 s all the same", "promoted n5 in its place", "n5 never had the key before P1 set it"}},
		{"lease-valid_resource-invalid_cause-stalled.jsonl", "resource", explain.Stalled, 1, "",
			[]string{"both read 0 and wrote 1", "P0's lease aaaaaa… was valid to 1.000 s", "client-pause 1s"}},
		{"lease-invalid_resource-unknown_cause-extend-after-expiry.jsonl", "lease", explain.ExtendAfterExpiry, 0, "n1",
			[]string{"n1 expired the key at 0.610 s", "extend at 0.700 s"}},
		{"lease-invalid_resource-invalid_cause-lock-logic.jsonl", "lease", explain.LockLogic, 0, "n1",
			[]string{"n1 set the key for P1", "neither expired nor deleted"}},
		// A watchdog's holder whose process was stopped past its TTL,
		// told of the loss once it ran again.
		{"lease-invalid_resource-invalid_cause-told-too-late.jsonl", "lease", explain.LateNotice, 1, "n1",
			[]string{"no validity: held until released or told it lost the lock", "Fault #1 (client-stop: stop client 0's process for 1.5s", "stopped P0's process 0.001 s after the grant", "n1 expired the key at 1.012 s",
				"P0 was told it lost the lock at 1.513 s, 0.413 s after P1 was granted it and 0.501 s after its key expired"}},
		// A grant whose reply came back after its key expired, from a
		// lock that did not count the time its round took (bugs/
		// glasslion-redlock-elapsed under a delay-grant of 1.2 s).
		{"lease-invalid_resource-invalid_cause-late-grant.jsonl", "lease", explain.LateGrant, 1, "n1",
			[]string{"n1 set the key for P0's acquire (invoked 0.100 s) at 0.105 s and expired it at 1.105 s, 0.195 s before that acquire returned granted at 1.300 s",
				"its replies were held by fault #1 (delay-grant", "P1 acquired k0 at 1.310 s"}},
		{"lease-invalid_resource-unknown_cause-unknown.jsonl", "lease", explain.Unknown, 0, "",
			[]string{"nodes not reported"}},
	} {
		t.Run(string(tc.cause), func(t *testing.T) {
			a := analyze(t, tc.file)
			ex, total := explain.Explain(&a, 0)
			if len(ex) == 0 || total < len(ex) {
				t.Fatalf("%d explanations of %d", len(ex), total)
			}
			e := ex[0]
			node := ""
			if len(e.Nodes) > 0 {
				node = e.Nodes[0]
			}
			if e.Property != tc.property || e.Cause != tc.cause || e.Fault != tc.fault || node != tc.node {
				t.Errorf("got %s, cause %q, fault %d, node %q; want %s, %q, %d, %q\n%s", e.Property, e.Cause, e.Fault, node, tc.property, tc.cause, tc.fault, tc.node, e.Text)
			}
			for _, s := range tc.says {
				if !strings.Contains(e.Text, s) {
					t.Errorf("the paragraph does not say %q:\n%s", s, e.Text)
				}
			}
			if !strings.HasSuffix(e.Text, "Cause: "+string(tc.cause)+".") {
				t.Errorf("the paragraph does not end with its cause:\n%s", e.Text)
			}
		})
	}
}

// TestNothingToExplain: a history without a violation has no
// explanation; Explain caps at its limit and counts the rest.
func TestNothingToExplain(t *testing.T) {
	for _, f := range []string{"lease-valid_resource-valid_paused-client-fenced.jsonl", "lease-valid_resource-unknown_serial.jsonl"} {
		a := analyze(t, f)
		if ex, total := explain.Explain(&a, 0); len(ex) != 0 || total != 0 {
			t.Errorf("%s: %d explanations of %d, want none", f, len(ex), total)
		}
	}
	a := analyze(t, "lease-invalid_resource-invalid_cause-clock-jump.jsonl")
	ex, total := explain.Explain(&a, 1)
	if len(ex) != 1 || total != 2 || ex[0].Property != "lease" {
		t.Errorf("limit 1: %d explanations (%+v) of %d, want 1 of 2 (one overlap, one lost update), the overlap first", len(ex), ex, total)
	}
}

// TestLateNotice: a holder that claims no validity and was stopped, or
// told after the other's grant, is a holder told too late, whether the
// notice came after its release or never; one told in time overlaps
// nothing, and one never told and never stopped is not blamed on a
// notice.
func TestLateNotice(t *testing.T) {
	evs, err := history.ReadFile(filepath.Join("..", "checker", "testdata", "lease-invalid_resource-invalid_cause-told-too-late.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	// edit returns evs with the loss notice moved to t (dropped when t is
	// 0) and, when unstopped, without the client-stop fault.
	edit := func(lost int64, unstopped bool) []history.Event {
		var out []history.Event
		for _, e := range evs {
			switch {
			case e.F == history.Lost && lost == 0:
				continue
			case e.F == history.Lost:
				e.Time = lost
			case unstopped && (e.F == history.FaultStart || e.F == history.FaultStop):
				continue
			}
			out = append(out, e)
		}
		slices.SortStableFunc(out, func(a, b history.Event) int { return cmp.Compare(a.Time, b.Time) })
		return out
	}
	for _, tc := range []struct {
		name  string
		evs   []history.Event
		cause explain.Cause
		says  string
	}{
		{"told after the release", edit(1_600_000_000, false), explain.LateNotice, "P0 was not told it lost the lock before it released it at 1.520 s; the notice came at 1.600 s."},
		{"never told", edit(0, false), explain.LateNotice, "P0 was never told it lost the lock; it held on until it released it at 1.520 s."},
		{"told late, not stopped", edit(1_513_000_000, true), explain.LateNotice, "P0 was told it lost the lock at 1.513 s"},
		{"never told, not stopped", edit(0, true), explain.LockLogic, "n1 expired the key at 1.012 s; P0's lock claims no validity and never told it the lease was lost."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := checker.Analyze(tc.evs, checker.Options{})
			if err != nil {
				t.Fatal(err)
			}
			ex, _ := explain.Explain(&a, 0)
			if len(ex) == 0 || ex[0].Property != "lease" {
				t.Fatalf("explanations %+v, want a lease violation first", ex)
			}
			if ex[0].Cause != tc.cause || !strings.Contains(ex[0].Text, tc.says) {
				t.Errorf("cause %q, want %q, saying %q:\n%s", ex[0].Cause, tc.cause, tc.says, ex[0].Text)
			}
		})
	}
	// Told before the other's grant: no violation to explain.
	a, err := checker.Analyze(edit(1_050_000_000, false), checker.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Result.Lease != checker.Valid {
		t.Errorf("told before the other's grant: lease %s, want valid", a.Result.Lease)
	}
}

// TestPromotedWithoutKeyNeedsEvidence: the same overlap on Redis
// Cluster without the nodes' observations is not blamed on a promoted
// replica: nothing shows that it lacked the key.
func TestPromotedWithoutKeyNeedsEvidence(t *testing.T) {
	evs, err := history.ReadFile(filepath.Join("..", "checker", "testdata", "lease-invalid_resource-invalid_cause-promoted-without-key.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	evs = slices.DeleteFunc(evs, func(e history.Event) bool { return e.F == history.NodeKey })
	a, err := checker.Analyze(evs, checker.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ex, _ := explain.Explain(&a, 0)
	if len(ex) == 0 {
		t.Fatal("no explanation")
	}
	if ex[0].Cause == explain.PromotedWithoutKey {
		t.Errorf("without observations: cause %q\n%s", ex[0].Cause, ex[0].Text)
	}
}

// TestMinorityMasterNeedsTheCutFirst: the same history with the master
// cut off after its grant (the grant then reached it while it was part
// of the majority, and was lost unreplicated) is a promoted replica
// without the key, not a minority master's grant.
func TestMinorityMasterNeedsTheCutFirst(t *testing.T) {
	evs, err := history.ReadFile(filepath.Join("..", "checker", "testdata", "lease-invalid_resource-invalid_cause-minority-master.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range evs {
		if e.F == history.FaultStart || e.F == history.FaultStop {
			evs[i].Value = strings.Replace(e.Value, "cut off at 0.100s", "cut off at 0.106s", 1)
		}
	}
	a, err := checker.Analyze(evs, checker.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ex, _ := explain.Explain(&a, 0)
	if len(ex) == 0 {
		t.Fatal("no explanation")
	}
	if ex[0].Cause != explain.PromotedWithoutKey {
		t.Errorf("cut after the grant: cause %q, want %q\n%s", ex[0].Cause, explain.PromotedWithoutKey, ex[0].Text)
	}
}

// TestCausesListsEveryCause: Causes, which the cause tables of the
// reports count by, lists every Cause constant of explain.go once.
func TestCausesListsEveryCause(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "cause.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var consts []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, sp := range g.Specs {
			v := sp.(*ast.ValueSpec)
			if id, ok := v.Type.(*ast.Ident); ok && id.Name == "Cause" {
				for _, n := range v.Names {
					consts = append(consts, n.Name)
				}
			}
		}
	}
	if len(consts) != len(explain.Causes) {
		t.Errorf("cause.go declares %d causes %v; Causes lists %d", len(consts), consts, len(explain.Causes))
	}
	seen := map[explain.Cause]bool{}
	for _, c := range explain.Causes {
		if seen[c] {
			t.Errorf("Causes lists %q twice", c)
		}
		seen[c] = true
	}
}

// TestGroup: explanations with the same property, fault step and cause
// are one finding that counts them, in the order of their first; the
// finding's paragraph ends with the sentence that counts the rest.
func TestGroup(t *testing.T) {
	ex := []explain.Explanation{
		{Property: "lease", Key: "k0", At: 2_556e6, Cause: explain.LateNotice, Fault: 1, Text: "first."},
		{Property: "lease", Key: "k0", At: 3_000e6, Cause: explain.LateNotice, Fault: 1, Text: "second."},
		{Property: "lease", Key: "k1", At: 4_000e6, Cause: explain.ClockJump, Fault: 2, Text: "other fault."},
		{Property: "lease", Key: "k1", At: 7_120e6, Cause: explain.LateNotice, Fault: 1, Text: "third."},
		{Property: "resource", Key: "k0", At: 5_000e6, Cause: explain.LateNotice, Fault: 1, Text: "lost."},
	}
	fs := explain.Group(ex)
	if len(fs) != 3 {
		t.Fatalf("%d findings, want 3: %+v", len(fs), fs)
	}
	if f := fs[0]; f.Count != 3 || f.Text != "first." || !slices.Equal(f.Keys, []string{"k0", "k1"}) ||
		f.Paragraph() != "first. The same fault #1 and the same cause made 2 more overlaps on k0, k1, from 3.000 s to 7.120 s." {
		t.Errorf("first finding: %+v, %q", f, f.Paragraph())
	}
	if f := fs[1]; f.Count != 1 || f.Cause != explain.ClockJump || f.More() != "" {
		t.Errorf("second finding: %+v", f)
	}
	if f := fs[2]; f.Property != "resource" || f.Count != 1 {
		t.Errorf("third finding: %+v", f)
	}
	two := explain.Group([]explain.Explanation{
		{Property: "resource", Key: "k0", At: 1e9, Cause: explain.LockLogic},
		{Property: "resource", Key: "k0", At: 2e9, Cause: explain.LockLogic},
	})
	if len(two) != 1 || two[0].More() != "The same cause made 1 more lost update on k0, at 2.000 s." {
		t.Errorf("no fault: %+v, %q", two, two[0].More())
	}
}

// TestFamilyNamesTheCause: the fault-start's family, not its kind's name,
// says what the fault was: a kind explain has never heard of, recorded
// in the clock family, is a clock jump; the same history without the
// family (a history written before it was recorded) falls back on the
// kind's name, which here names no family, and the cause is the lock's.
func TestFamilyNamesTheCause(t *testing.T) {
	evs, err := history.ReadFile(filepath.Join("..", "checker", "testdata", "lease-invalid_resource-invalid_cause-clock-jump.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		family string
		want   explain.Cause
	}{{"clock", explain.ClockJump}, {"", explain.LockLogic}} {
		renamed := slices.Clone(evs)
		for i, e := range renamed {
			if e.F == history.FaultStart || e.F == history.FaultStop {
				renamed[i].Value = "ntp-step n2: +2s"
				if e.F == history.FaultStart {
					renamed[i].Family = tc.family
				}
			}
		}
		a, err := checker.Analyze(renamed, checker.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ex, _ := explain.Explain(&a, 1)
		if len(ex) != 1 || ex[0].Cause != tc.want {
			t.Errorf("family %q: got %+v, want cause %q", tc.family, ex, tc.want)
		}
	}
}
