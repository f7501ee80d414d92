package cluster

import "io"

// Option configures Open and the constructors of each backend.
type Option func(*options)

type options struct {
	redisServer string
	persistence bool
	fsyncAlways bool
	dir         string
	keepLogs    bool
	extraArgs   []string
	proxyGroups int  // see WithProxyGroups
	clockShim   bool // see WithClockShim
	lazyFS      bool // see WithLazyFS
	password    string
	passwordSet bool
	toxiproxy   string    // see WithToxiproxy
	log         io.Writer // see WithLog
	// clusterNode gives node i's own settings before it first starts
	// (StartRedisCluster).
	clusterNode func(i int) ([][2]string, error)
}

// WithPassword sets the nodes' requirepass (Connect's to authenticate).
// Default: random, 32 hex characters; none for external nodes.
func WithPassword(p string) Option {
	return func(o *options) { o.password, o.passwordSet = p, true }
}

// WithRedisServer sets the redis-server binary, a path or a name in PATH
// (default "redis-server").
func WithRedisServer(path string) Option {
	return func(o *options) { o.redisServer = path }
}

// WithPersistence turns on the append-only file, so data survives Kill and
// Restart: appendfsync "always" if appendfsyncAlways, else "everysec". RDB
// stays off. Default: no persistence, a restarted node comes back empty.
func WithPersistence(appendfsyncAlways bool) Option {
	return func(o *options) { o.persistence, o.fsyncAlways = true, appendfsyncAlways }
}

// WithDir sets the directory of the nodes' folders ("n1", ...: log and
// data), created 0700 if missing and never removed: persistent data left
// there is loaded. Default: a temporary one, removed on Close unless
// WithKeepLogs.
func WithDir(dir string) Option {
	return func(o *options) { o.dir = dir }
}

// WithKeepLogs keeps the temporary directory, logs included, after Close.
func WithKeepLogs(keep bool) Option {
	return func(o *options) { o.keepLogs = keep }
}

// WithExtraArgs appends args to every node's command line, after its
// configuration file, so they win (e.g. "--maxmemory", "10mb"). Every
// local user can read a command line: no secrets.
func WithExtraArgs(args ...string) Option {
	return func(o *options) { o.extraArgs = append(o.extraArgs, args...) }
}
