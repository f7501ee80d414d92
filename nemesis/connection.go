package nemesis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/locktorture/locktorture/cluster"
)

// The connection kinds break the clients' connections to nodes with
// toxiproxy's toxics on every client group's proxy of each node until
// Heal (docs/faults.md): reset-peer, limit-data, slicer, conn-drop and
// bandwidth.
// None delays a reply past its call's timeout without failing the call,
// so a lock whose validity is counted from before its request and that
// takes an unknown outcome for one (a reply lost after Redis ran the
// command) stays safe.

var connStreams = []string{downstream, upstream}

func connNodes(rng *rand.Rand, s Setup) []int { return targets(rng, s, allOrMinority) }

// connKind is a connection fault kind. Four clients on one key held half
// the time: with ten, redislock's clients were granted under 1% of their
// acquires, and a run decided nothing.
func connKind[T any, P faultOf[T]](name, summary string, plan func(*rand.Rand, Setup) Fault) Kind {
	return Kind{
		Name:    name,
		Family:  "connection",
		Summary: summary,
		Needs:   Needs{Cluster: cluster.Abilities{Network: true}, TTL: true},
		Window:  Workload{Clients: 4, Keys: 1, Hold: 500 * time.Millisecond, Interval: time.Second},
		Plan:    plan,
		Decode:  decode[T, P],
	}
}

func addToxics(ctx context.Context, t *Target, idx []int, share float32, specs ...toxicSpec) error {
	if err := checkTarget(t, idx); err != nil {
		return err
	}
	for i := range specs {
		specs[i].Toxicity = share
	}
	return injectToxics(ctx, t, idx, specs...)
}

func refuseConn(kind string, nodes []int, stream string, s Setup) string {
	if err := checkNodes(nodes, s.Nodes); err != nil {
		return kind + ": " + err.Error()
	}
	if stream != downstream && stream != upstream {
		return fmt.Sprintf("%s: stream %q: want %q (replies) or %q (commands)", kind, stream, downstream, upstream)
	}
	return ""
}

// way names a stream: "replies" or "commands", or in the singular.
func way(stream string, singular bool) string {
	w := "replies"
	if stream == upstream {
		w = "commands"
	}
	if singular {
		return map[string]string{"replies": "reply", "commands": "command"}[w]
	}
	return w
}

// ResetPeer resets (TCP RST) each connection Reset after its first bytes
// in Stream's direction, which are lost.
type ResetPeer struct {
	Nodes  []int    `json:"nodes"`
	Stream string   `json:"stream"`
	Reset  Duration `json:"reset"`
}

var resetPeerKind = connKind[ResetPeer]("reset-peer", "reset the connections to nodes (TCP RST) right after, or up to a tenth of the TTL after, their first reply (or command), which is lost",
	func(rng *rand.Rand, s Setup) Fault {
		f := &ResetPeer{Nodes: connNodes(rng, s), Stream: connStreams[rng.IntN(2)]}
		if rng.IntN(2) == 1 {
			f.Reset = Duration(time.Duration(rng.Int64N(int64(s.TTL/10) + 1)).Truncate(time.Millisecond))
		}
		return f
	})

func (r *ResetPeer) Refuse(s Setup) string {
	if r.Reset < 0 {
		return fmt.Sprintf("reset-peer: reset %v: want it ≥ 0", time.Duration(r.Reset))
	}
	return refuseConn("reset-peer", r.Nodes, r.Stream, s)
}

func (r *ResetPeer) String() string {
	return fmt.Sprintf("reset-peer %s: reset each connection %s after its first %s", nodeNames(r.Nodes), time.Duration(r.Reset), way(r.Stream, true))
}

func (r *ResetPeer) Start(ctx context.Context, t *Target) error {
	return addToxics(ctx, t, r.Nodes, 1, toxicSpec{Name: resetPeerToxic, Type: "reset_peer", Stream: r.Stream,
		Attributes: map[string]int64{"timeout": time.Duration(r.Reset).Milliseconds()}})
}

func (r *ResetPeer) Heal(ctx context.Context, t *Target) error {
	return clearToxics(ctx, t, resetPeerToxic)
}

// LimitData closes each connection once Bytes have passed in Stream's
// direction, mid-reply or not.
type LimitData struct {
	Nodes  []int  `json:"nodes"`
	Stream string `json:"stream"`
	Bytes  int64  `json:"bytes"`
}

var limitDataKind = connKind[LimitData]("limit-data", "close each connection to nodes once 16 to 512 bytes of replies (or commands) have passed, mid-reply or not",
	func(rng *rand.Rand, s Setup) Fault {
		return &LimitData{Nodes: connNodes(rng, s), Stream: connStreams[rng.IntN(2)], Bytes: 16 + rng.Int64N(497)}
	})

func (l *LimitData) Refuse(s Setup) string {
	if l.Bytes < 1 {
		return fmt.Sprintf("limit-data: bytes %d: want at least 1", l.Bytes)
	}
	return refuseConn("limit-data", l.Nodes, l.Stream, s)
}

func (l *LimitData) String() string {
	return fmt.Sprintf("limit-data %s: close each connection after %d bytes of %s", nodeNames(l.Nodes), l.Bytes, way(l.Stream, false))
}

func (l *LimitData) Start(ctx context.Context, t *Target) error {
	return addToxics(ctx, t, l.Nodes, 1, toxicSpec{Name: limitDataToxic, Type: "limit_data", Stream: l.Stream,
		Attributes: map[string]int64{"bytes": l.Bytes}})
}

func (l *LimitData) Heal(ctx context.Context, t *Target) error {
	return clearToxics(ctx, t, limitDataToxic)
}

// Slicer cuts every chunk into pieces of Size ± Variation bytes, each
// Delay after the last.
type Slicer struct {
	Nodes     []int    `json:"nodes"`
	Stream    string   `json:"stream"`
	Size      int64    `json:"size"`
	Variation int64    `json:"variation"`
	Delay     Duration `json:"delay"`
}

var slicerKind = connKind[Slicer]("slicer", "cut the replies (or commands) of nodes into pieces of a few bytes, up to a millisecond apart",
	func(rng *rand.Rand, s Setup) Fault {
		size := 1 + rng.Int64N(8)
		return &Slicer{Nodes: connNodes(rng, s), Stream: connStreams[rng.IntN(2)], Size: size, Variation: size / 2,
			Delay: Duration(time.Duration(rng.Int64N(1001)) * time.Microsecond)}
	})

func (sl *Slicer) Refuse(s Setup) string {
	if sl.Size < 1 || sl.Variation < 0 || sl.Variation >= sl.Size || sl.Delay < 0 {
		return fmt.Sprintf("slicer: size %d, variation %d, delay %v: want size ≥ 1, 0 ≤ variation < size, delay ≥ 0", sl.Size, sl.Variation, time.Duration(sl.Delay))
	}
	return refuseConn("slicer", sl.Nodes, sl.Stream, s)
}

func (sl *Slicer) String() string {
	return fmt.Sprintf("slicer %s: %s in pieces of %d±%d bytes, %s apart", nodeNames(sl.Nodes), way(sl.Stream, false), sl.Size, sl.Variation, time.Duration(sl.Delay))
}

func (sl *Slicer) Start(ctx context.Context, t *Target) error {
	return addToxics(ctx, t, sl.Nodes, 1, toxicSpec{Name: slicerToxic, Type: "slicer", Stream: sl.Stream,
		Attributes: map[string]int64{"average_size": sl.Size, "size_variation": sl.Variation, "delay": time.Duration(sl.Delay).Microseconds()}})
}

func (sl *Slicer) Heal(ctx context.Context, t *Target) error {
	return clearToxics(ctx, t, slicerToxic)
}

// ConnDrop black-holes a Share of the connections, drawn by toxiproxy per
// connection and direction, until healed.
type ConnDrop struct {
	Nodes []int   `json:"nodes"`
	Share float32 `json:"share"`
}

var connDropKind = connKind[ConnDrop]("conn-drop", "drop every byte of a fifth to a half of the connections to nodes (each direction drawn by itself); the rest pass",
	func(rng *rand.Rand, s Setup) Fault {
		share := 0.2 + 0.3*rng.Float64()
		return &ConnDrop{Nodes: connNodes(rng, s), Share: float32(int(share*100)) / 100}
	})

func (c *ConnDrop) Refuse(s Setup) string {
	if c.Share <= 0 || c.Share > 1 {
		return fmt.Sprintf("conn-drop: share %v: want it in (0, 1]", c.Share)
	}
	return refusal("conn-drop", checkNodes(c.Nodes, s.Nodes))
}

func (c *ConnDrop) String() string {
	return fmt.Sprintf("conn-drop %s: drop %.0f%% of the connections each way", nodeNames(c.Nodes), 100*c.Share)
}

func (c *ConnDrop) Start(ctx context.Context, t *Target) error {
	return addToxics(ctx, t, c.Nodes, c.Share, blackHoleSpecs(connDropUp, connDropDown)...)
}

// Heal removes them, which closes the connections they held.
func (c *ConnDrop) Heal(ctx context.Context, t *Target) error {
	return clearToxics(ctx, t, connDropUp, connDropDown)
}

// Bandwidth passes each connection's data in Stream's direction at Rate
// KB/s: a call waits for those queued before it on its connection, and a
// slow one times out.
type Bandwidth struct {
	Nodes  []int  `json:"nodes"`
	Stream string `json:"stream"`
	Rate   int64  `json:"rate_kbps"`
}

var bandwidthKind = connKind[Bandwidth]("bandwidth", "throttle each connection's replies (or commands) to nodes to 1 to 4 KB/s, so a call waits behind the bytes queued before it",
	func(rng *rand.Rand, s Setup) Fault {
		return &Bandwidth{Nodes: connNodes(rng, s), Stream: connStreams[rng.IntN(2)], Rate: 1 + rng.Int64N(4)}
	})

func (b *Bandwidth) Refuse(s Setup) string {
	if b.Rate < 1 {
		return fmt.Sprintf("bandwidth: rate %d KB/s: want at least 1", b.Rate)
	}
	return refuseConn("bandwidth", b.Nodes, b.Stream, s)
}

func (b *Bandwidth) String() string {
	return fmt.Sprintf("bandwidth %s: %s at %d KB/s a connection", nodeNames(b.Nodes), way(b.Stream, false), b.Rate)
}

func (b *Bandwidth) Start(ctx context.Context, t *Target) error {
	return addToxics(ctx, t, b.Nodes, 1, toxicSpec{Name: bandwidthToxic, Type: "bandwidth", Stream: b.Stream,
		Attributes: map[string]int64{"rate": b.Rate}})
}

func (b *Bandwidth) Heal(ctx context.Context, t *Target) error {
	return clearToxics(ctx, t, bandwidthToxic)
}
