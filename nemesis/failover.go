package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/locktorture/locktorture/cluster"
	"github.com/locktorture/locktorture/internal/wait"
)

// Failover isolates the primary of the failover topology (see
// cluster.Failover) so that the sentinels promote the replica while
// clients still write to the old primary, then isolates the old primary
// from the clients too, and brings it back when healed. It is the
// failover scenario of the literature: the replica is asynchronous, so
// every write the old primary accepted after the cut, locks included, is
// missing on the new primary, and a lock granted there is granted again.
//
// Start, in order:
//
//  1. black-holes both streams of the primary's internal proxy, the path
//     by which the replica and the sentinels reach it (toxiproxy timeout
//     toxics with timeout 0, as a partition: nothing is closed, bytes are
//     dropped). Clients still reach it through their own proxy, and it
//     still accepts writes: it has no min-replicas-to-write;
//  2. waits, at most 30 s, until a majority of the sentinels name the
//     replica as the primary (they call the old one down after 1 s
//     without a PING reply and promote the replica within a few seconds);
//  3. waits HoldOldPrimary, during which clients still connected to the
//     old primary keep writing to it. go-redis's failover client drops
//     those connections as soon as a sentinel announces the switch; a
//     client that does not follow the sentinels keeps them;
//  4. black-holes both streams of the clients' proxy to the old primary:
//     it is now cut off from everyone.
//
// Heal removes every toxic Start added (which closes the connections they
// held) and waits, at most 25 s, until the topology is healthy again (see
// cluster.Failover.WaitHealthy): the sentinels find the old primary still
// claiming to be a primary and reconfigure it as a replica of the new one
// (about 2 s later with the cluster's sentinel timings); it resynchronises
// from the new primary and the writes it took during the fault are gone.
type Failover struct {
	// HoldOldPrimary is how long after the promotion the old primary stays
	// reachable by clients. The default, 0, cuts it off at once.
	HoldOldPrimary Duration `json:"hold_old_primary,omitempty"`

	cut []*toxiproxy.Proxy // proxies that may hold this fault's toxics
}

var _ RefusingFault = (*Failover)(nil)

// Bounds of the failover fault's waits.
const (
	promoteTimeout = 30 * time.Second
	rejoinTimeout  = 25 * time.Second // less than healTimeout
	failoverPoll   = 50 * time.Millisecond
)

// Names of the toxics a failover adds.
const (
	failoverUp   = "failover_upstream"
	failoverDown = "failover_downstream"
)

var failoverKind = Kind{
	Name:    "failover",
	Family:  "failover",
	Summary: "isolate the primary from its replica and the sentinels until they promote the replica, then from clients; rejoin it as a replica",
	Needs:   Needs{Topology: cluster.TopologyFailover},
	Plan: func(rng *rand.Rand, s Setup) Fault {
		// Half the time the old primary stays reachable for half a TTL.
		return &Failover{HoldOldPrimary: Duration(time.Duration(rng.IntN(2)) * s.TTL / 2)}
	},
	Decode: decode[Failover],
}

// Refuse says why the fault does not fit s, or "".
func (f *Failover) Refuse(Setup) string {
	if f.HoldOldPrimary < 0 {
		return fmt.Sprintf("failover: negative hold_old_primary %v", time.Duration(f.HoldOldPrimary))
	}
	return ""
}

func (f *Failover) String() string {
	if f.HoldOldPrimary == 0 {
		return "failover: isolate the primary, promote the replica"
	}
	return fmt.Sprintf("failover: isolate the primary, promote the replica, old primary reachable by clients for %s more",
		time.Duration(f.HoldOldPrimary))
}

// Start isolates the primary and waits for the promotion (see Failover).
func (f *Failover) Start(ctx context.Context, t *Target) error {
	fo, err := failoverOf(t)
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, promoteTimeout)
	defer cancel()
	old, err := fo.WaitPrimary(wctx)
	if err != nil {
		return err
	}
	if err := f.blackHole(fo.InternalProxy(old)); err != nil {
		return err
	}
	if _, err := waitPromotion(wctx, fo, old); err != nil {
		return err
	}
	if err := wait.Sleep(ctx, time.Duration(f.HoldOldPrimary)); err != nil {
		return err
	}
	return f.blackHole(old.Proxy())
}

// waitPromotion polls until a majority of the sentinels name a primary
// other than old, and returns it.
func waitPromotion(ctx context.Context, fo *cluster.Failover, old *cluster.Node) (*cluster.Node, error) {
	for {
		n, err := fo.Primary(ctx)
		if err == nil && n != old {
			return n, nil
		}
		if err == nil {
			err = fmt.Errorf("the sentinels still name %s", old.Name())
		}
		if serr := wait.Sleep(ctx, failoverPoll); serr != nil {
			return nil, fmt.Errorf("wait for the sentinels to promote a replica: %w (last: %v)", serr, err)
		}
	}
}

// blackHole drops every byte both ways through px, on open and new
// connections, and remembers px for Heal.
func (f *Failover) blackHole(px *toxiproxy.Proxy) error {
	f.cut = append(f.cut, px)
	for _, tx := range []struct{ name, stream string }{{failoverUp, "upstream"}, {failoverDown, "downstream"}} {
		body := fmt.Sprintf(`{"name":%q,"type":"timeout","stream":%q,"toxicity":1,"attributes":{"timeout":0}}`, tx.name, tx.stream)
		if _, err := px.Toxics.AddToxicJson(strings.NewReader(body)); err != nil {
			return fmt.Errorf("toxic %s on %s: %w", tx.name, px.Name, err)
		}
	}
	return nil
}

// Heal removes the toxics and waits until the old primary has rejoined
// as a replica (see Failover).
func (f *Failover) Heal(ctx context.Context, t *Target) error {
	if err := f.uncut(ctx); err != nil {
		return err
	}
	fo, err := failoverOf(t)
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, rejoinTimeout)
	defer cancel()
	_, err = fo.WaitHealthy(wctx)
	return err
}

// uncut removes every toxic the fault added, which closes the
// connections they held.
func (f *Failover) uncut(ctx context.Context) error {
	var errs []error
	for _, px := range f.cut {
		for _, name := range []string{failoverUp, failoverDown} {
			if err := px.Toxics.RemoveToxic(ctx, name); err != nil && !errors.Is(err, toxiproxy.ErrToxicNotFound) {
				errs = append(errs, fmt.Errorf("remove toxic %s from %s: %w", name, px.Name, err))
			}
		}
	}
	f.cut = nil
	return errors.Join(errs...)
}

// failoverOf returns the failover topology of t's cluster.
func failoverOf(t *Target) (*cluster.Failover, error) {
	if t.Cluster == nil || t.Cluster.Failover() == nil {
		return nil, errors.New("no failover topology")
	}
	return t.Cluster.Failover(), nil
}
