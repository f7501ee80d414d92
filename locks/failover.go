package locks

import (
	"context"
	"maps"
	"net"

	"github.com/redis/go-redis/v9"
)

// NewSingleClient returns a single-instance lock's client:
// NewClient(cfg.Addrs[0], cfg), or with cfg.Sentinels go-redis's failover
// client of their primary with the same options (its sentinel
// connections too), dialing through cfg.AddrMap. It asks the sentinels
// for the primary on every new connection and drops its connections on
// +switch-master. A registered lock that talks to one node should take
// its client from here, to run in the failover topology too, where a
// command to the old primary may fail (READONLY, a timeout) and a lease
// it did not replicate is silently lost.
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

// NewUniversalClient returns NewSingleClient(cfg), or with cfg.Cluster a
// cluster client of cfg.Addrs (each command to its key's slot master, at
// most 3 MOVED or ASK redirections), ClientOptions' per node, dialing
// through cfg.AddrMap.
func NewUniversalClient(cfg Config) redis.UniversalClient {
	if !cfg.Cluster {
		return NewSingleClient(cfg)
	}
	u := universalOptions(cfg, cfg.Addrs)
	u.MaxRedirects = 3
	return redis.NewClusterClient(u.Cluster())
}

// universalOptions are ClientOptions' for a client of several addrs, with
// cfg.AddrMap's dialer.
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
