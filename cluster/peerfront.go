package cluster

import (
	"fmt"
	"net"
	"sync"
)

// peerFront forwards the connections to one address of a node (a Redis
// Cluster node's announced port or bus, an etcd member's peer port) to
// the node, and knows each connection's peer: by its source address
// (every Redis Cluster node dials from its own, peerSource) or by what it
// sends (identify). A cut between two nodes closes their connections both
// ways and refuses new ones; anything else (the harness, the clients,
// from 127.0.0.1) passes.
type peerFront struct {
	*relay
	to   string // the node's own address, under mu
	self int    // index of the node it serves
	bus  bool   // the node's cluster bus, not its announced client port
	cuts *peerCuts
	// identify, when set, names a connection's peer from what it sends
	// (etcd.go) and returns the connection to forward, what it read
	// included.
	identify func(net.Conn) (int, net.Conn)
}

// peerCuts is the set of cut pairs of a cluster's nodes, shared by its
// fronts.
type peerCuts struct {
	mu     sync.Mutex
	cut    map[cutKey]bool
	fronts []*peerFront
}

// cutKey is a cut pair of nodes, {lower, higher} index, on the bus or on
// the replication path (the announced client ports).
type cutKey struct {
	a, b int
	bus  bool
}

func keyOf(a, b int, bus bool) cutKey {
	if a > b {
		a, b = b, a
	}
	return cutKey{a, b, bus}
}

func (p *peerCuts) isCut(a, b int, bus bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cut[keyOf(a, b, bus)]
}

// healAll heals every cut.
func (p *peerCuts) healAll() {
	p.mu.Lock()
	p.cut = nil
	p.mu.Unlock()
}

// set cuts (or heals) the pairs, on the bus as well with bus, and closes
// the connections of the pairs it cuts.
func (p *peerCuts) set(pairs [][2]int, bus, cut bool) {
	p.mu.Lock()
	if p.cut == nil {
		p.cut = make(map[cutKey]bool)
	}
	for _, pr := range pairs {
		for _, k := range []cutKey{keyOf(pr[0], pr[1], false), keyOf(pr[0], pr[1], true)} {
			switch {
			case k.bus && !bus:
			case cut:
				p.cut[k] = true
			default:
				delete(p.cut, k)
			}
		}
	}
	fronts := p.fronts
	p.mu.Unlock()
	if !cut {
		return
	}
	for _, f := range fronts {
		f.dropCut()
	}
}

// closeFronts closes every front; it can be called again.
func (p *peerCuts) closeFronts() error { return closeTaken(&p.mu, &p.fronts) }

// peerSource returns the address Redis Cluster node i dials from:
// 127.0.0.(10+i) (all of 127.0.0.0/8 is the loopback on Linux).
func peerSource(i int) string { return fmt.Sprintf("127.0.0.%d", 10+i) }

// peerIndex returns the index of the node whose source address addr is,
// or -1.
func peerIndex(addr net.Addr, n int) int {
	a, ok := addr.(*net.TCPAddr)
	if !ok {
		return -1
	}
	for i := range n {
		if a.IP.String() == peerSource(i) {
			return i
		}
	}
	return -1
}

// newPeerFront listens on 127.0.0.1:0 and forwards to to.
func newPeerFront(self int, bus bool, to string, cuts *peerCuts, nodes int) (*peerFront, error) {
	r, err := listenRelay(loopback, "front")
	if err != nil {
		return nil, err
	}
	f := &peerFront{relay: r, to: to, self: self, bus: bus, cuts: cuts}
	cuts.mu.Lock()
	cuts.fronts = append(cuts.fronts, f)
	cuts.mu.Unlock()
	admit := func(c net.Conn) (int, bool) {
		peer := peerIndex(c.RemoteAddr(), nodes)
		return peer, peer < 0 || !f.cuts.isCut(peer, f.self, f.bus)
	}
	f.wg.Go(func() { f.serve(admit, f.forward) })
	return f, nil
}

func (f *peerFront) port() string {
	_, p, _ := net.SplitHostPort(f.addr())
	return p
}

// dropCut closes the connections whose peer is now cut from this node.
func (f *peerFront) dropCut() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for c, peer := range f.conns {
		if peer >= 0 && f.cuts.isCut(peer, f.self, f.bus) {
			c.Close()
		}
	}
}

// setTo points the front at to, for the connections it accepts next.
func (f *peerFront) setTo(to string) {
	f.mu.Lock()
	f.to = to
	f.mu.Unlock()
}

// forward joins c to the node, unless identify names a peer cut from it.
func (f *peerFront) forward(c net.Conn) {
	src := c // what is read from the peer
	if f.identify != nil {
		var peer int
		peer, src = f.identify(c)
		if !f.track(c, peer) || peer >= 0 && f.cuts.isCut(peer, f.self, f.bus) {
			f.drop(c)
			return
		}
	}
	f.mu.Lock()
	to := f.to
	f.mu.Unlock()
	f.join(c, src, to)
}
