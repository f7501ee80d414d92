package cluster

import (
	"fmt"
	"net"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
)

// The replication link of the failover topology, on the process backend:
// a node's internal address (InternalAddr) is a front that forwards a
// connection from replSource (the other data node replicating) through
// the node's replication proxy (ReplicationLink) and then its internal
// proxy, and any other (a sentinel's) through the internal proxy alone.
// So a fault on the replication proxy acts on the replication stream
// alone, while the failover kind's, on the internal proxy, still isolates
// the node from both. The replica and the sentinels must know a node by
// the same address: the sentinels tell the replica where to replicate
// from, and put back any other address (+fix-slave-config).
const (
	replSource = "127.0.0.2" // the data nodes' bind-source-addr; the sentinels dial from 127.0.0.1
	replSuffix = "-repl"     // ends a replication proxy's name: "n1-repl"
)

// front forwards the connections to one address to one of two upstreams,
// by the connection's source address.
type front struct {
	*relay
	repl  string // upstream of connections from replSource
	other string // upstream of every other connection
}

// newFront listens on host:0 and forwards as front says.
func newFront(host, repl, other string) (*front, error) {
	r, err := listenRelay(host, "replication front")
	if err != nil {
		return nil, err
	}
	f := &front{relay: r, repl: repl, other: other}
	f.wg.Go(func() { f.serve(func(net.Conn) (int, bool) { return -1, true }, f.forward) })
	return f, nil
}

// forward joins c to its upstream until either side ends.
func (f *front) forward(c net.Conn) {
	to := f.other
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok && a.IP.String() == replSource {
		to = f.repl
	}
	f.join(c, c, to)
}

// startLinks puts a front and a replication proxy before each node's
// internal proxy and makes the fronts the internal addresses, on the
// process backend only: the docker backend's replicas dial from their
// containers' addresses.
func (f *Failover) startLinks() error {
	if f.c.docker != nil {
		return nil
	}
	for i, n := range f.c.nodes {
		name := n.name + replSuffix
		px := toxiproxy.NewProxy(f.c.srv, name, net.JoinHostPort(loopback, "0"), f.internal[i].Listen)
		if err := f.c.srv.Collection.Add(px, true); err != nil {
			return fmt.Errorf("cluster: proxy %s: %w", name, err)
		}
		fr, err := newFront(loopback, px.Listen, f.internal[i].Listen)
		if err != nil {
			return err
		}
		f.fronts = append(f.fronts, fr)
		f.repl = append(f.repl, &Link{name: name, local: px})
		f.intAddrs[i] = fr.addr()
	}
	return nil
}

// closeFronts closes the fronts; it can be called again.
func (f *Failover) closeFronts() error { return closeTaken(&f.linksMu, &f.fronts) }

// ReplicationLink returns n's replication proxy, the link a replica
// replicates from n by: a toxic there acts on the replication stream
// alone. nil on the docker backend, which has none.
func (f *Failover) ReplicationLink(n *Node) *Link {
	i := f.c.indexOf(n, "failover")
	if i >= len(f.repl) {
		return nil
	}
	return f.repl[i]
}
