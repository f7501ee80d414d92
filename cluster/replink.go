package cluster

import (
	"errors"
	"fmt"
	"net"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
)

// replSource is the address the data nodes of the failover topology make
// their outgoing connections from (bind-source-addr), on the process
// backend: their replication links. Everything else that dials a node's
// internal address (the sentinels) comes from 127.0.0.1.
const replSource = "127.0.0.2"

// replSuffix ends the name of a node's replication proxy: "n1-repl".
const replSuffix = "-repl"

// The replication link, on the process backend: a node's internal address
// (the one the sentinels and the replica know, InternalAddr) is served by
// a front that forwards each connection by where it comes from. A
// connection from replSource, a data node replicating from this one, goes
// through the node's replication proxy (ReplicationLink) and then its
// internal proxy; any other connection, a sentinel's, through the
// internal proxy alone. So a fault on the replication proxy cuts or slows
// the link between the primary and its replica and nothing else, while a
// fault on the internal proxy (the failover kind's) still isolates the
// node from both. The address a node is known by cannot differ between
// the replica and the sentinels: the sentinels tell the replica where to
// replicate from, and put back any other address it is told
// (+fix-slave-config).

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
// internal proxy, on the process backend, and makes the fronts the nodes'
// internal addresses. The docker backend's replicas dial from their
// containers' addresses: it keeps no replication link of its own.
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
func (f *Failover) closeFronts() error {
	f.linksMu.Lock()
	fronts := f.fronts
	f.fronts = nil
	f.linksMu.Unlock()
	var errs []error
	for _, fr := range fronts {
		errs = append(errs, fr.close())
	}
	return errors.Join(errs...)
}

// ReplicationLink returns the proxy of the link by which a replica
// replicates from n, n's replication proxy: a toxic there cuts or slows
// the replication stream between n, when it is the primary, and its
// replica, and nothing else (the sentinels reach n by another path). nil
// on the docker backend, which has none.
func (f *Failover) ReplicationLink(n *Node) *Link {
	i := f.index(n)
	if i >= len(f.repl) {
		return nil
	}
	return f.repl[i]
}
