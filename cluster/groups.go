package cluster

import (
	"context"
	"fmt"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
)

// WithProxyGroups gives every node g proxies, one per client group, so a
// fault can cut or slow one group of clients off a node while another
// group still reaches it. Group 0 is the node's Proxy and Addr; group g ≥ 1
// is a proxy named "n1-g1", "n1-g2", ... with its own port. Start fails if
// g < 1. The default is 1: one proxy per node.
func WithProxyGroups(g int) Option {
	return func(o *options) { o.proxyGroups = g }
}

// groupProxy is the proxy of one client group ≥ 1 to a node.
type groupProxy struct {
	proxy *toxiproxy.Proxy // in-process; nil for an external node
	link  *Link            // nil for an external node without toxiproxy
	addr  string           // the bound port, read once when the proxy starts
}

// Groups returns the number of client groups: proxies per node.
func (c *Cluster) Groups() int { return c.opts.proxyGroups }

// GroupAddrs returns the addresses of client group g's proxies, in node
// order; GroupAddrs(0) is Addrs. It panics if g is out of range.
func (c *Cluster) GroupAddrs(g int) []string {
	addrs := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		addrs[i] = n.GroupAddr(g)
	}
	return addrs
}

// GroupProxy returns the in-process proxy through which client group g
// reaches the node; GroupProxy(0) is Proxy; nil for an external node. It
// panics if g is out of range.
func (n *Node) GroupProxy(g int) *toxiproxy.Proxy {
	if g == 0 {
		return n.proxy
	}
	return n.groups[g-1].proxy
}

// GroupLink returns the proxy through which client group g reaches the
// node, in-process or remote; GroupLink(0) is Link; nil for an external
// node without a toxiproxy server. It panics if g is out of range.
func (n *Node) GroupLink(g int) *Link {
	if g == 0 {
		return n.link
	}
	return n.groups[g-1].link
}

// GroupAddr returns the address of client group g's proxy to the node;
// GroupAddr(0) is Addr. It panics if g is out of range.
func (n *Node) GroupAddr(g int) string {
	if g == 0 {
		return n.addr
	}
	return n.groups[g-1].addr
}

// startProxies starts the node's proxies, one per client group: in
// process, on the remote toxiproxy server, or none (an external node
// without one: clients dial the node).
func (n *Node) startProxies(ctx context.Context) error {
	for g := range n.c.opts.proxyGroups {
		name := n.name
		if g > 0 {
			name = fmt.Sprintf("%s-g%d", n.name, g)
		}
		var (
			px   *toxiproxy.Proxy
			link *Link
			addr = n.DirectAddr()
		)
		switch {
		case n.c.srv != nil:
			px = toxiproxy.NewProxy(n.c.srv, name, loopback+":0", n.DirectAddr())
			if err := n.c.srv.Collection.Add(px, true); err != nil {
				return fmt.Errorf("cluster: proxy %s: %w", name, err)
			}
			// The bound port, set by Add; read before anyone can Stop the proxy.
			link, addr = &Link{name: name, local: px}, px.Listen
		case n.c.remote != nil:
			var err error
			if link, addr, err = n.c.remote.create(ctx, name, n.DirectAddr()); err != nil {
				return err
			}
		}
		if g == 0 {
			n.proxy, n.link, n.addr = px, link, addr
		} else {
			n.groups = append(n.groups, groupProxy{proxy: px, link: link, addr: addr})
		}
	}
	return nil
}
