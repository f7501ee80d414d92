package locks

import (
	"context"
	"maps"
	"net"

	"github.com/redis/go-redis/v9"
)

// NewSingleClient returns the go-redis client of a single-instance lock
// built from cfg: NewClient(cfg.Addrs[0], cfg), or, when cfg.Sentinels is
// set (the harness's failover topology), a failover client of the primary
// they name, with the same options. A lock registered with Register that
// talks to one node should take its client from here, so that it also
// runs in the failover topology.
//
// The failover client asks the sentinels (cfg.Sentinels, with
// cfg.SentinelPassword) for the address of the primary cfg.MasterName
// before every new connection, and when a sentinel announces a failover
// (+switch-master) it closes its connections to other addresses. Its
// options are ClientOptions' (go-redis's failover client always turns
// maintenance notifications off, and gives its sentinel connections the
// same retry, dial and timeout options). With cfg.AddrMap, every dial goes
// through the map: the sentinels report the nodes' internal addresses,
// and the client dials what the map says instead.
//
// The failover client adds what a failover can do to a lock: a command on
// a connection to the old primary may fail (READONLY once it is a replica,
// or a timeout), and a lease granted by a primary that loses its
// unreplicated writes on failover is silently lost — the scenario the
// harness's failover topology is there to show.
func NewSingleClient(cfg Config) *redis.Client {
	if cfg.Cluster {
		panic("locks: NewSingleClient of a Redis Cluster; use NewUniversalClient")
	}
	if len(cfg.Sentinels) == 0 {
		return NewClient(cfg.Addrs[0], cfg)
	}
	u := universalOptions(cfg, cfg.Sentinels)
	u.MasterName, u.SentinelPassword = cfg.MasterName, cfg.SentinelPassword
	return redis.NewFailoverClient(u.Failover())
}

// NewUniversalClient returns NewSingleClient(cfg), or, when cfg.Cluster
// is set (the harness's cluster topology), a go-redis cluster client of
// the Redis Cluster whose nodes cfg.Addrs are: it learns which master
// serves each slot (CLUSTER SLOTS), sends each command to the master of
// its key, and follows MOVED and ASK redirections (at most 3 per
// command), with ClientOptions' options per node. With cfg.AddrMap,
// every dial goes through the map: the nodes announce addresses of
// their own, and the client dials what the map says instead.
func NewUniversalClient(cfg Config) redis.UniversalClient {
	if !cfg.Cluster {
		return NewSingleClient(cfg)
	}
	u := universalOptions(cfg, cfg.Addrs)
	u.MaxRedirects = 3
	return redis.NewClusterClient(u.Cluster())
}

// universalOptions are ClientOptions' options for a client of several
// addresses (the sentinels, or the cluster's nodes), with cfg.AddrMap's
// dialer; go-redis's Failover and Cluster turn them into the options of
// its failover and cluster clients, field for field.
func universalOptions(cfg Config, addrs []string) *redis.UniversalOptions {
	o := ClientOptions("", cfg)
	u := &redis.UniversalOptions{
		Addrs:                    addrs,
		Password:                 o.Password,
		Protocol:                 o.Protocol,
		DisableIdentity:          o.DisableIdentity,
		MaintNotificationsConfig: o.MaintNotificationsConfig,
		MaxRetries:               o.MaxRetries,
		ContextTimeoutEnabled:    o.ContextTimeoutEnabled,
		DialerRetries:            o.DialerRetries,
		DialTimeout:              o.DialTimeout,
		ReadTimeout:              o.ReadTimeout,
		WriteTimeout:             o.WriteTimeout,
		PoolTimeout:              o.PoolTimeout,
		PoolSize:                 o.PoolSize,
	}
	if len(cfg.AddrMap) > 0 {
		u.Dialer = mapDialer(cfg)
	}
	return u
}

// mapDialer dials through cfg.AddrMap.
func mapDialer(cfg Config) func(ctx context.Context, network, addr string) (net.Conn, error) {
	m := maps.Clone(cfg.AddrMap)
	d := &net.Dialer{Timeout: cfg.Timeout}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if to, ok := m[addr]; ok {
			addr = to
		}
		return d.DialContext(ctx, network, addr)
	}
}
