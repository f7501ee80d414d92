package explain

import (
	"fmt"
	"regexp"
	"time"

	"github.com/locktorture/locktorture/checker"
)

// latencyOf reads the delay of a latency fault from its description:
// "latency 50ms±10ms on n1 …" or "latency-group: replies to client
// group 0 late by 50ms".
var latencyOf = regexp.MustCompile(`^latency(?:-group: .*? late by | )([0-9.]+(?:ns|µs|us|ms|s|m))(?:±([0-9.]+(?:ns|µs|us|ms|s|m)))?`)

// Benign returns the checker.Options.Benign of a run with TTL ttl: a latency
// fault whose delay, jitter included, is below a tenth of the TTL (the locks'
// per-call bound), through which a lock must keep its hold. Every other fault
// may cut a hold short; ttl 0 excuses nothing.
func Benign(ttl time.Duration) func(desc string) bool {
	return func(desc string) bool {
		m := latencyOf.FindStringSubmatch(desc)
		if m == nil || ttl <= 0 {
			return false
		}
		d, err := time.ParseDuration(m[1])
		if err != nil {
			return false
		}
		if m[2] != "" {
			j, err := time.ParseDuration(m[2])
			if err != nil {
				return false
			}
			d += j
		}
		return d < ttl/10
	}
}

// cut explains a hold cut short while no fault was active: what the lock
// said, when, and what the granting nodes had done with the key by then.
func cut(a *checker.Analysis, c checker.Cut) Explanation {
	ex := Explanation{Property: "holds", Key: c.Key, At: c.At, Cause: Unknown}
	said := map[string]string{checker.CutLost: "the lock told P%d it lost its hold", checker.CutExtend: "P%d's extend was refused", checker.CutRelease: "P%d's release was refused"}[c.How]
	if said == "" {
		said = "P%d's hold was cut short"
	}
	valid := "a validity the lock did not bound (it renews itself)"
	if c.ValidUntil < 1<<61 {
		valid = "its validity to " + Secs(c.ValidUntil)
	}
	text := fmt.Sprintf("P%d held %s from %s, %s. At %s "+said, c.Process, c.Key, Secs(c.Start), valid, Secs(c.At), c.Process)
	if c.Error != "" {
		text += fmt.Sprintf(" (%q)", c.Error)
	}
	text += ", and no fault was active while it held it."
	la, ok := a.LeaseAt(c.Key, c.Token, c.Start)
	nodes := []int{0}
	if ok && la.Granted != nil {
		nodes = la.Granted
	}
	var obs []checker.NodeObservation
	if ke := a.Keys[c.Key]; ke != nil {
		obs = ke.Nodes
	}
	switch {
	case !a.Observed:
		text += " The nodes were not observed."
	default:
		ex.Cause = GaveUp
		for _, n := range nodes {
			if o, found := removal(obs, n, c.Start, c.At); found {
				ex.Cause, ex.Nodes = ExpiredUnderHolder, []string{NodeName(n)}
				text += fmt.Sprintf(" %s's key was %s at %s, %s before: the lock let its own key lapse under a healthy holder.", NodeName(n), o.Event, Secs(o.Time), secsDelta(c.At-o.Time))
				break
			}
		}
		if ex.Cause == GaveUp {
			text += fmt.Sprintf(" No node that granted it (%s) had removed the key by then: the lock gave up a hold its key still had.", nodeList(nodes))
		}
	}
	ex.Text = text + " Cause: " + string(ex.Cause) + "."
	return ex
}

// spuriousCuts explains the spurious cuts of a, at most limit.
func spuriousCuts(a *checker.Analysis, limit int) []Explanation {
	var ex []Explanation
	for _, c := range a.Result.Cuts {
		if c.Spurious() && len(ex) < limit {
			ex = append(ex, cut(a, c))
		}
	}
	return ex
}
