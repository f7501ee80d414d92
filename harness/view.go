package harness

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/locktorture/locktorture/history"
	"github.com/locktorture/locktorture/locks"
	"github.com/locktorture/locktorture/nemesis"
)

// viewLog is how many changes the view keeps for a follower that lags.
const viewLog = 4096

// view is the run's live holds, kept by the clients and read by the nemesis
// (nemesis.View), by client (one open hold each). A change costs a lock, a
// copy into a ring and, only while someone waits in Next, a channel close: no
// goroutine, timer or polling.
type view struct {
	base time.Time

	mu   sync.Mutex
	open map[int]*nemesis.Hold // by client
	ring [viewLog]nemesis.Change
	seq  uint64        // the last change's Seq; ring[seq%viewLog] holds it
	wake chan struct{} // closed at the next change; nil while no one waits
}

var _ nemesis.View = (*view)(nil)

func newView(base time.Time) *view {
	return &view{base: base, open: map[int]*nemesis.Hold{}}
}

// Holds implements nemesis.View.
func (v *view) Holds() ([]nemesis.Hold, uint64) {
	v.mu.Lock()
	defer v.mu.Unlock()
	holds := make([]nemesis.Hold, 0, len(v.open))
	for _, h := range v.open {
		holds = append(holds, *h)
	}
	slices.SortFunc(holds, func(a, b nemesis.Hold) int {
		return cmp.Or(cmp.Compare(a.Acquired, b.Acquired), cmp.Compare(a.Client, b.Client))
	})
	return holds, v.seq
}

// Next implements nemesis.View.
func (v *view) Next(ctx context.Context, after uint64) ([]nemesis.Change, error) {
	for {
		v.mu.Lock()
		if v.seq > after {
			from := after + 1
			if v.seq > viewLog {
				from = max(from, v.seq-viewLog+1) // the oldest kept
			}
			out := make([]nemesis.Change, 0, v.seq-from+1)
			for s := from; s <= v.seq; s++ {
				out = append(out, v.ring[s%viewLog])
			}
			v.mu.Unlock()
			return out, nil
		}
		if v.wake == nil {
			v.wake = make(chan struct{})
		}
		wake := v.wake
		v.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-wake:
		}
	}
}

// change records a change of h at run-clock time t, with v.mu held, and wakes
// whoever waits.
func (v *view) change(kind nemesis.ChangeKind, t int64, h *nemesis.Hold) {
	v.seq++
	v.ring[v.seq%viewLog] = nemesis.Change{Seq: v.seq, Kind: kind, Time: t, Hold: *h}
	if v.wake != nil {
		close(v.wake)
		v.wake = nil
	}
}

// granted opens client's hold of lease, granted at t by the nodes of n (nil:
// not reported), to a client of group. A nil view records nothing, as do the
// methods below.
func (v *view) granted(client, group int, lease locks.Lease, t int64, n *history.Nodes) {
	if v == nil {
		return
	}
	h := &nemesis.Hold{
		Client: client, Group: group, Key: lease.Key, Token: lease.Token, Fence: lease.Fence,
		Acquired: t, ValidUntil: lease.Validity.Sub(v.base).Nanoseconds(), Deadline: lease.Validity,
	}
	if n != nil {
		h.Granted, h.Reported = n.Granted, true
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.open[client] = h
	v.change(nemesis.HoldGranted, t, h)
}

// extended gives client's hold lease's validity, extended at t by the nodes
// of n.
func (v *view) extended(client int, lease locks.Lease, t int64, n *history.Nodes) {
	if v == nil {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	h := v.open[client]
	if h == nil || h.Token != lease.Token {
		return
	}
	h.ValidUntil, h.Deadline = lease.Validity.Sub(v.base).Nanoseconds(), lease.Validity
	if n != nil {
		h.Granted, h.Reported = n.Granted, true
	}
	v.change(nemesis.HoldExtended, t, h)
}

// section records a step of client's section at now: HoldEntered and
// HoldChecked are passed checks, HoldLeft its end.
func (v *view) section(client int, kind nemesis.ChangeKind, now time.Time) {
	if v == nil {
		return
	}
	t := now.Sub(v.base).Nanoseconds()
	v.mu.Lock()
	defer v.mu.Unlock()
	h := v.open[client]
	if h == nil {
		return
	}
	switch kind {
	case nemesis.HoldEntered:
		h.InSection, h.Checked, h.Checks = true, t, h.Checks+1
	case nemesis.HoldChecked:
		h.Checked, h.Checks = t, h.Checks+1
	case nemesis.HoldLeft:
		if !h.InSection {
			return // it never entered: its first check failed
		}
		h.InSection = false
	}
	v.change(kind, t, h)
}

// ended closes client's hold at t.
func (v *view) ended(client int, t int64) {
	if v == nil {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	h := v.open[client]
	if h == nil {
		return
	}
	delete(v.open, client)
	h.InSection, h.Ended = false, t
	v.change(nemesis.HoldEnded, t, h)
}

// holder returns the client whose open hold has token, if any (none for a nil
// view).
func (v *view) holder(token string) (int, bool) {
	if v == nil {
		return 0, false
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	for c, h := range v.open {
		if h.Token == token {
			return c, true
		}
	}
	return 0, false
}
