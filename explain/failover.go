package explain

import (
	"fmt"
	"regexp"
	"time"

	"github.com/locktorture/locktorture/checker"
)

// The families that promote a replica: failover (Sentinel) and cluster.

// disjointGrants explains leases no node granted both: a cluster fault
// promoted a replica without the key (a minority master, an unreplicated
// grant), a failover made another node primary, or the quorums do not
// intersect.
func disjointGrants(e *evidence) (finding, bool) {
	la, lb := e.la, e.lb
	if len(e.common) != 0 || la.Granted == nil || lb.Granted == nil {
		return finding{}, false
	}
	if f, ok := find(e.fs, PromotedWithoutKey, -1, la.Invoked, lb.Start); ok {
		text := fmt.Sprintf("%s, started %s after the lease was granted by %s, promoted %s in its place.", capital(f.String()), secsDelta(f.w.Start-la.Start), nodeList(la.Granted), nodeList(lb.Granted))
		missing := e.a.Observed
		for _, n := range lb.Granted {
			if e.a.Observed && !setBetween(e.obs, n, la.Invoked, lb.Invoked) {
				text += fmt.Sprintf(" %s never had the key before P%d set it: %s's grant had not been replicated.", NodeName(n), lb.Process, nodeList(la.Granted))
			} else {
				missing = false
			}
		}
		if missing {
			if cut, ok := minorityCut(f, la); ok {
				text = fmt.Sprintf("%s: %s was cut off every other node at %s and granted P%d's lease at %s all the same, a minority of one that had not yet noticed (the node timeout); the majority promoted %s in its place.",
					capital(f.String()), nodeList(la.Granted), Secs(cut), la.Process, Secs(la.Start), nodeList(lb.Granted))
				for _, n := range lb.Granted {
					text += fmt.Sprintf(" %s never had the key before P%d set it.", NodeName(n), lb.Process)
				}
				return finding{cause: MinorityMaster, fault: f.num, node: firstOr(la.Granted), text: text}, true
			}
			return finding{cause: PromotedWithoutKey, fault: f.num, node: firstOr(lb.Granted), text: text}, true
		}
	}
	if f, ok := find(e.fs, Failover, -1, la.Invoked, lb.Start); ok {
		text := fmt.Sprintf("%s, started %s after the lease was granted, made %s the primary.", capital(f.String()), secsDelta(f.w.Start-la.Start), nodeList(lb.Granted))
		for _, n := range lb.Granted {
			if !setBetween(e.obs, n, la.Invoked, lb.Invoked) && e.a.Observed {
				text += fmt.Sprintf(" %s never had the key before P%d set it.", NodeName(n), lb.Process)
			}
		}
		return finding{cause: Failover, fault: f.num, node: firstOr(lb.Granted), text: text}, true
	}
	return finding{cause: LockLogic, node: -1, text: fmt.Sprintf("No node granted both leases (%s and %s): the quorums do not intersect.", nodeList(la.Granted), nodeList(lb.Granted))}, true
}

// cutOffAt reads when a cluster fault cut a master off ("… master n2 cut off
// at 7.531s, at client …").
var cutOffAt = regexp.MustCompile(`\bcut off at ([0-9.]+(?:ms|s|m))\b`)

// minorityCut reports whether, and when, f cut off the master that alone
// granted la before la's ok.
func minorityCut(f fault, la checker.Lease) (int64, bool) {
	m := cutOffAt.FindStringSubmatch(f.w.Desc)
	if m == nil || len(la.Granted) != 1 || len(f.nodes) == 0 || f.nodes[0] != la.Granted[0] {
		return 0, false
	}
	d, err := time.ParseDuration(m[1])
	if err != nil || int64(d) > la.Start {
		return 0, false
	}
	return int64(d), true
}

// failedOver: a failover between the acquires, on a node that granted both.
var failedOver = nodeFault{Failover, anywhere, func(ne *nodeEvidence, f fault) string {
	return fmt.Sprintf("%s was active between the two acquires.", capital(f.String()))
}}
