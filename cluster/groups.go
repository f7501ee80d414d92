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
	proxy *toxiproxy.Proxy
	addr  string // the bound port, read once when the proxy starts
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

// GroupProxy returns the proxy through which client group g reaches the
// node; GroupProxy(0) is Proxy. It panics if g is out of range.
func (n *Node) GroupProxy(g int) *toxiproxy.Proxy {
	if g == 0 {
		return n.proxy
	}
	return n.groups[g-1].proxy
}

// GroupAddr returns the address of client group g's proxy to the node;
// GroupAddr(0) is Addr. It panics if g is out of range.
func (n *Node) GroupAddr(g int) string {
	if g == 0 {
		return n.addr
	}
	return n.groups[g-1].addr
}

// startGroups starts the proxies of client groups 1, 2, ... to the node's
// process p and waits until the node answers PING through each.
func (n *Node) startGroups(ctx context.Context, p *process) error {
	for g := 1; g < n.c.opts.proxyGroups; g++ {
		name := fmt.Sprintf("%s-g%d", n.name, g)
		px := toxiproxy.NewProxy(n.c.srv, name, "127.0.0.1:0", n.DirectAddr())
		if err := n.c.srv.Collection.Add(px, true); err != nil {
			return fmt.Errorf("cluster: proxy %s: %w", name, err)
		}
		n.groups = append(n.groups, groupProxy{proxy: px, addr: px.Listen})
		if err := n.waitReady(ctx, p, px.Listen); err != nil {
			return err
		}
	}
	return nil
}
