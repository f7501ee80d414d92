package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"
)

// WithToxiproxy makes Connect reach the nodes through the toxiproxy server
// at apiURL (e.g. "http://10.0.0.5:8474"), with one proxy per node and
// client group listening on its host, deleted by Close. Default: none,
// and no network fault can act on the nodes. Only for Connect.
func WithToxiproxy(apiURL string) Option {
	return func(o *options) { o.toxiproxy = apiURL }
}

// Connect drives Redis nodes someone else runs at addrs (host:port, in
// node order): it checks each answers PING and reads its version. Options
// for nodes the cluster runs are refused. Close leaves the nodes running,
// keys and all.
func Connect(ctx context.Context, addrs []string, opts ...Option) (*Cluster, error) {
	o, err := newOptions(len(addrs), opts)
	if err != nil {
		return nil, err
	}
	if o.redisServer != "redis-server" || o.persistence || o.lazyFS || len(o.extraArgs) > 0 {
		return nil, errors.New("cluster: external nodes: options for nodes the cluster runs do not apply")
	}
	seen := make(map[string]bool)
	for _, a := range addrs {
		if _, _, err := net.SplitHostPort(a); err != nil {
			return nil, fmt.Errorf("cluster: external node %q: want host:port: %w", a, err)
		}
		if seen[a] {
			return nil, fmt.Errorf("cluster: external node %s given twice", a)
		}
		seen[a] = true
	}
	c, err := newCluster(BackendExternal, o, len(addrs))
	if err != nil {
		return nil, err
	}
	if o.toxiproxy != "" {
		if c.remote, err = newRemoteToxiproxy(o.toxiproxy); err != nil {
			return nil, err
		}
	}
	a, err := adopt(ctx, addrs)
	if err != nil {
		return nil, err
	}
	if o.clockShim && (a == nil || !a.clock()) {
		if a != nil {
			a.b.Close()
		}
		return nil, errNotAdopted
	}
	c.adopted = a
	for i, nd := range c.nodes {
		if a == nil {
			nd.rn = externalRunner{address: addrs[i]}
			continue
		}
		nd.rn = &adoptedRunner{n: nd, b: a.b, address: addrs[i], c: a.containers[i]}
		if o.clockShim {
			if err := nd.openAdoptedClock(a.containers[i].ClockFile); err != nil {
				return nil, errors.Join(err, c.Close())
			}
		}
	}
	if err := c.start(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// externalRunner stands for a node someone else runs.
type externalRunner struct{ address string }

var _ runner = externalRunner{}

func (e externalRunner) start(context.Context, bool) (run, error) { return nil, ErrNotManaged }
func (e externalRunner) addr() string                             { return e.address }
func (e externalRunner) release(context.Context) error            { return nil }

// remoteToxiproxy is a toxiproxy server someone else runs, holding one
// cluster's proxies.
type remoteToxiproxy struct {
	client *toxiclient.Client
	host   string // of the API's URL: where the proxies listen
	prefix string // of the names of this cluster's proxies

	mu      sync.Mutex
	proxies []*toxiclient.Proxy // to delete on Close
}

// newRemoteToxiproxy checks apiURL; it contacts nothing yet.
func newRemoteToxiproxy(apiURL string) (*remoteToxiproxy, error) {
	u, err := url.Parse(apiURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || (u.Path != "" && u.Path != "/") {
		return nil, fmt.Errorf("cluster: toxiproxy %q: want http://host:port", apiURL)
	}
	return &remoteToxiproxy{
		client: toxiclient.NewClient(strings.TrimSuffix(apiURL, "/")),
		host:   u.Hostname(),
		prefix: "locktorture-" + randomHex(4) + "-",
	}, nil
}

// create makes a proxy to upstream on a free port of the server's host
// and returns it as a Link, with the address clients dial.
func (r *remoteToxiproxy) create(ctx context.Context, name, upstream string) (*Link, string, error) {
	full := r.prefix + name
	var px *toxiclient.Proxy
	err := callCtx(ctx, func() (err error) {
		px, err = r.client.CreateProxy(full, net.JoinHostPort(r.host, "0"), upstream)
		return err
	})
	if err != nil {
		return nil, "", fmt.Errorf("cluster: create proxy %s on the toxiproxy server: %w", full, err)
	}
	r.mu.Lock()
	r.proxies = append(r.proxies, px)
	r.mu.Unlock()
	_, port, err := net.SplitHostPort(px.Listen)
	if err != nil {
		return nil, "", fmt.Errorf("cluster: proxy %s listens on %q: %w", full, px.Listen, err)
	}
	return &Link{name: full, remote: px}, net.JoinHostPort(r.host, port), nil
}

// deleteAll deletes every proxy create made.
func (r *remoteToxiproxy) deleteAll(ctx context.Context) error {
	r.mu.Lock()
	pxs := r.proxies
	r.proxies = nil
	r.mu.Unlock()
	var errs []error
	for _, px := range pxs {
		if err := callCtx(ctx, px.Delete); err != nil {
			errs = append(errs, fmt.Errorf("delete proxy %s on the toxiproxy server: %w", px.Name, err))
		}
	}
	return errors.Join(errs...)
}
