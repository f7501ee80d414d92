package explain

import "fmt"

// The families that hold replies (delay-grant, latency, latency-group): a
// grant back after its key expired.

// lateGrant explains la whose own key n set after la's invoke and expired
// before la's ok (clockBeforeGrant looked for a clock fault first), naming a
// fault that held replies then.
func lateGrant(ne *nodeEvidence) (finding, bool) {
	la := ne.la
	var set, gone int64 = -1, -1
	for _, o := range ne.obs {
		if o.Node != ne.n || o.Time < la.Invoked || o.Time > la.Start {
			continue
		}
		switch {
		case o.Event == "set" && set < 0:
			set = o.Time
		case o.Event == "expired" && set >= 0 && gone < 0:
			gone = o.Time
		}
	}
	if gone < 0 {
		return finding{}, false
	}
	text := fmt.Sprintf("%s set the key for P%d's acquire (invoked %s) at %s and expired it at %s, %s before that acquire returned granted at %s: the lock said granted for a key already gone, the time its round took not counted",
		ne.name, la.Process, Secs(la.Invoked), Secs(set), Secs(gone), secsDelta(la.Start-gone), Secs(la.Start))
	f := finding{cause: LateGrant, node: ne.n}
	// A delay-grant records its start once the grant it held is back.
	if flt, ok := find(ne.fs, LateGrant, -1, la.Invoked, la.Start+lag); ok {
		text += "; its replies were held by " + flt.String()
		f.fault = flt.num
	}
	f.text = text + "."
	return f, true
}
