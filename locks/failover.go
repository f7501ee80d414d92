package locks

import (
	"context"
	"maps"
	"net"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/logging"
)

// newSingleClient builds the client of a single-instance lock: to
// cfg.Addrs[0] (newClient), or, when cfg.Sentinels is set, to the primary
// they name (newFailoverClient).
func newSingleClient(cfg Config) *redis.Client {
	if len(cfg.Sentinels) > 0 {
		return newFailoverClient(cfg)
	}
	return newClient(cfg.Addrs[0], cfg)
}

// newFailoverClient builds a go-redis failover client: before every new
// connection it asks the sentinels (cfg.Sentinels, with
// cfg.SentinelPassword) for
// the address of the primary cfg.MasterName, and when a sentinel announces
// a failover (+switch-master) it closes its connections to other
// addresses. Its options are newClient's, for the same measured reasons
// (MaxRetries -1, ContextTimeoutEnabled, DialerRetries 1, Protocol 2,
// DisableIdentity, cfg.Timeout for dial, read, write and pool wait,
// PoolSize 64); go-redis's failover client always turns maintenance
// notifications off, and gives its sentinel connections the same retry,
// dial and timeout options. With cfg.AddrMap, every dial goes through the
// map: the sentinels report the nodes' internal addresses, and the client
// dials what the map says instead.
//
// The failover client adds what a failover can do to a lock: a command on
// a connection to the old primary may fail (READONLY once it is a replica,
// or a timeout), and a lease granted by a primary that loses its
// unreplicated writes on failover is silently lost — the scenario the
// harness's failover topology is there to show.
func newFailoverClient(cfg Config) *redis.Client {
	silenceLogs.Do(func() { redis.SetLogger(&logging.VoidLogger{}) })
	opts := &redis.FailoverOptions{
		MasterName:            cfg.MasterName,
		SentinelAddrs:         cfg.Sentinels,
		SentinelPassword:      cfg.SentinelPassword,
		Password:              cfg.Password,
		Protocol:              2,
		DisableIdentity:       true,
		MaxRetries:            -1,
		ContextTimeoutEnabled: true,
		DialerRetries:         1,
		DialTimeout:           cfg.Timeout,
		ReadTimeout:           cfg.Timeout,
		WriteTimeout:          cfg.Timeout,
		PoolTimeout:           cfg.Timeout,
		PoolSize:              PoolSize,
	}
	if len(cfg.AddrMap) > 0 {
		m := maps.Clone(cfg.AddrMap)
		d := &net.Dialer{Timeout: cfg.Timeout}
		opts.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
			if to, ok := m[addr]; ok {
				addr = to
			}
			return d.DialContext(ctx, network, addr)
		}
	}
	return redis.NewFailoverClient(opts)
}
