package cluster

import (
	"context"
	"fmt"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
)

// WithProxyGroups gives every node g proxies (default 1), one per client
// group, so a fault can cut one group off a node and not another: group 0
// is Proxy and Addr, group g ≥ 1 a proxy "n1-g1", ... of its own.
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

// GroupAddrs returns client group g's proxy addresses, in node order.
// Like the Group methods of Node, it panics if g is out of range.
func (c *Cluster) GroupAddrs(g int) []string {
	addrs := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		addrs[i] = n.GroupAddr(g)
	}
	return addrs
}

// GroupProxy is Proxy for client group g.
func (n *Node) GroupProxy(g int) *toxiproxy.Proxy { return n.group(g).proxy }

// GroupLink is Link for client group g.
func (n *Node) GroupLink(g int) *Link { return n.group(g).link }

// GroupAddr is Addr for client group g.
func (n *Node) GroupAddr(g int) string { return n.group(g).addr }

func (n *Node) group(g int) groupProxy {
	if g == 0 {
		return groupProxy{proxy: n.proxy, link: n.link, addr: n.addr}
	}
	return n.groups[g-1]
}

// startProxies starts the node's proxies, one per client group: in
// process, remote, or none (clients dial the node).
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
