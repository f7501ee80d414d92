package explain

import (
	"fmt"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/history"
)

// contradiction explains a reply of the lock a node contradicts
// (checker.Contradiction), reply and node side by side: an extend ok on a key
// the node had removed is an extend after expiry; a release done while the
// key stayed set, the lock's own logic.
func contradiction(c checker.Contradiction) Explanation {
	node, obs := NodeName(c.Node), c.Observed
	ex := Explanation{Property: "answers", Key: c.Key, At: c.Completed, Nodes: []string{node}}
	switch c.Op {
	case history.Extend:
		ex.Cause = ExtendAfterExpiry
		ex.Text = fmt.Sprintf("P%d's extend of %s (token %s), sent at %s, returned ok at %s. %s had %s the key at %s, and renewed nothing since the extend was sent. The reply: the token still held the key; the node: the key was gone.",
			c.Process, c.Key, Short(c.Token), Secs(c.Invoked), Secs(c.Completed), node, obs.Event, Secs(obs.Time))
	default:
		ex.Cause = LockLogic
		ex.Text = fmt.Sprintf("P%d's release of %s (token %s), sent at %s, returned done at %s. %s still held the key after it, until it was %s at %s. The reply: the key was free; the node: it still held it.",
			c.Process, c.Key, Short(c.Token), Secs(c.Invoked), Secs(c.Completed), node, obs.Event, Secs(obs.Time))
	}
	ex.Text += " Cause: " + string(ex.Cause) + "."
	return ex
}
