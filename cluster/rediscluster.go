package cluster

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// The settings of the cluster topology.
const (
	// DefaultMasters is the number of masters when Spec.Nodes leaves it
	// unset: each with one replica, 6 nodes.
	DefaultMasters = 3
	// clusterNodeTimeout (ms; Redis's default is 15000) is how long a
	// master may be unreachable before the majority promotes its replica,
	// and how long a master cut off the majority keeps accepting writes.
	clusterNodeTimeout = 1000
	numSlots           = 16384
	clusterConf        = "nodes.conf" // in each node's data folder, Redis's own
	clusterHealthy     = 30 * time.Second
)

// RedisCluster is the cluster topology: Redis Cluster, N masters (n1..nN)
// each with a replica (n(N+i) of ni), on the process backend; a replica is
// promoted whatever its lag (cluster-replica-validity-factor 0). Each node
// announces a front (which replicas dial and CLUSTER SLOTS, MOVED and ASK
// name; GroupAddrMap maps it to the client path) and has its bus behind
// another; it dials from its own address (peerSource), so Cut and
// CutReplication cut nodes apart while clients reach both. A restarted
// node keeps its nodes.conf and rejoins as a replica of whoever holds its
// slots. Its methods are safe for concurrent use.
type RedisCluster struct {
	c       *Cluster
	masters int
	cuts    *peerCuts
	data    []*peerFront // by node index
	bus     []*peerFront
}

// clusterSettings returns node i's directives before it first starts: its
// bus port (the default, port + 10000, may exceed 65535) and source.
func clusterSettings(i int) ([][2]string, error) {
	bus, err := freePort()
	if err != nil {
		return nil, err
	}
	return [][2]string{
		{"cluster-enabled", "yes"},
		{"cluster-config-file", clusterConf},
		{"cluster-node-timeout", strconv.Itoa(clusterNodeTimeout)},
		{"cluster-replica-validity-factor", "0"},
		{"cluster-port", strconv.Itoa(bus)},
		{"bind-source-addr", peerSource(i)},
		{"repl-diskless-sync-delay", "0"},
	}, nil
}

// StartRedisCluster starts the cluster topology with masters masters
// (default 3), as Start with opts, and waits at most 30 s until it is
// healthy.
func StartRedisCluster(ctx context.Context, masters int, opts ...Option) (*RedisCluster, error) {
	masters = cmp.Or(masters, DefaultMasters)
	if masters < 1 {
		return nil, fmt.Errorf("cluster: the cluster topology needs at least one master, got %d", masters)
	}
	opts = append(slices.Clone(opts), func(o *options) { o.clusterNode = clusterSettings })
	c, err := Start(ctx, 2*masters, opts...)
	if err != nil {
		return nil, err
	}
	rc := &RedisCluster{c: c, masters: masters, cuts: &peerCuts{}}
	err = rc.start(ctx)
	if err == nil {
		err = c.attach("cluster topology", func() { c.redisCluster = rc })
	}
	if err != nil {
		return nil, errors.Join(err, rc.cuts.closeFronts(), c.Close())
	}
	return rc, nil
}

// clusterCmd sends args to n, its error naming what.
func clusterCmd(ctx context.Context, n *Node, what string, args ...any) error {
	if err := n.Client().Do(ctx, args...).Err(); err != nil {
		return fmt.Errorf("cluster: %s: %s: %w", n.name, what, err)
	}
	return nil
}

// myID returns n's CLUSTER MYID.
func myID(ctx context.Context, n *Node) (string, error) {
	id, err := n.Client().Do(ctx, "CLUSTER", "MYID").Text()
	if err != nil {
		return "", fmt.Errorf("cluster: %s: cluster myid: %w", n.name, err)
	}
	return id, nil
}

func (rc *RedisCluster) start(ctx context.Context) error {
	nodes := rc.c.nodes
	for i, n := range nodes {
		var busPort string
		for _, kv := range n.settings {
			if kv[0] == "cluster-port" {
				busPort = kv[1]
			}
		}
		d, err := newPeerFront(i, false, n.DirectAddr(), rc.cuts, len(nodes))
		if err != nil {
			return err
		}
		rc.data = append(rc.data, d)
		b, err := newPeerFront(i, true, net.JoinHostPort(loopback, busPort), rc.cuts, len(nodes))
		if err != nil {
			return err
		}
		rc.bus = append(rc.bus, b)
		err = n.configure(ctx, [][2]string{
			{"cluster-announce-ip", loopback},
			{"cluster-announce-port", d.port()},
			{"cluster-announce-bus-port", b.port()},
			{"masterauth", rc.c.password},
		}...)
		if err != nil {
			return err
		}
	}
	for i := range rc.masters { // an even share of the slots each
		lo, hi := i*numSlots/rc.masters, (i+1)*numSlots/rc.masters-1
		what := fmt.Sprintf("cluster addslotsrange %d %d", lo, hi)
		if err := clusterCmd(ctx, nodes[i], what, "CLUSTER", "ADDSLOTSRANGE", lo, hi); err != nil {
			return err
		}
	}
	for _, n := range nodes[1:] {
		if err := clusterCmd(ctx, n, "cluster meet", "CLUSTER", "MEET", loopback, rc.data[0].port(), rc.bus[0].port()); err != nil {
			return err
		}
	}
	wctx, cancel := context.WithTimeout(ctx, clusterHealthy)
	defer cancel()
	ids := make([]string, len(nodes))
	for i, n := range nodes {
		id, err := myID(ctx, n)
		if err != nil {
			return err
		}
		ids[i] = id
	}
	// A replica can follow a master only once it knows it.
	for i := range rc.masters {
		r := nodes[rc.masters+i]
		err := rc.poll(wctx, "replica "+r.name+" to know its master", func(ctx context.Context) error {
			return r.Client().Do(ctx, "CLUSTER", "REPLICATE", ids[i]).Err()
		})
		if err != nil {
			return err
		}
	}
	if err := rc.WaitHealthy(wctx); err != nil {
		return fmt.Errorf("%w; %s log tail:\n%s", err, nodes[0].name, logTail(nodes[0].LogPath()))
	}
	return nil
}

// poll is poll for a check without a value.
func (rc *RedisCluster) poll(ctx context.Context, what string, check func(context.Context) error) error {
	_, err := poll(ctx, rc.c, what, func(ctx context.Context) (struct{}, error) { return struct{}{}, check(ctx) })
	return err
}

// WaitHealthy waits until every node says cluster_state:ok and knows all
// others, every master has an online replica and every replica's link is
// up.
func (rc *RedisCluster) WaitHealthy(ctx context.Context) error {
	return rc.poll(ctx, "a healthy cluster", rc.healthy)
}

func (rc *RedisCluster) healthy(ctx context.Context) error {
	masters := 0
	for _, n := range rc.c.nodes {
		s, err := n.Client().ClusterInfo(ctx).Result()
		if err != nil {
			return fmt.Errorf("%s: cluster info: %w", n.name, err)
		}
		info := fields(s, "\n", ":")
		if info["cluster_state"] != "ok" || info["cluster_known_nodes"] != strconv.Itoa(len(rc.c.nodes)) {
			return fmt.Errorf("%s: cluster_state %q, %s known nodes", n.name, info["cluster_state"], info["cluster_known_nodes"])
		}
		repl, err := nodeInfo(ctx, n)
		if err != nil {
			return err
		}
		switch repl["role"] {
		case "master":
			if repl["connected_slaves"] != "1" {
				return fmt.Errorf("%s: master with %q connected replicas", n.name, repl["connected_slaves"])
			}
			masters++
		case "slave":
			if repl["master_link_status"] != "up" {
				return fmt.Errorf("%s: replica with its link %q", n.name, repl["master_link_status"])
			}
		}
	}
	if masters != rc.masters {
		return fmt.Errorf("%d masters with a replica, want %d", masters, rc.masters)
	}
	return nil
}

// Cluster returns the nodes as a Cluster.
func (rc *RedisCluster) Cluster() *Cluster { return rc.c }

// AddrMap is GroupAddrMap(0).
func (rc *RedisCluster) AddrMap() map[string]string { return rc.GroupAddrMap(0) }

// GroupAddrMap maps each node's announced address to Node.GroupAddr(g).
func (rc *RedisCluster) GroupAddrMap(g int) map[string]string {
	m := make(map[string]string, len(rc.data))
	for i, d := range rc.data {
		m[d.addr()] = rc.c.nodes[i].GroupAddr(g)
	}
	return m
}

// nodeByAnnounced returns the node announced at addr, or nil.
func (rc *RedisCluster) nodeByAnnounced(addr string) *Node {
	for i, d := range rc.data {
		if d.addr() == addr {
			return rc.c.nodes[i]
		}
	}
	return nil
}

// Slot returns the hash slot of key (CRC16 of its hash tag, mod 16384).
func Slot(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	return int(crc16(key) % numSlots)
}

// crc16 is CRC16-CCITT (XMODEM), Redis Cluster's key hash.
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// SlotOwner returns slot's master and its replicas as ask (nil: the first
// node that answers) sees them in CLUSTER NODES.
func (rc *RedisCluster) SlotOwner(ctx context.Context, ask *Node, slot int) (master *Node, replicas []*Node, err error) {
	asked := rc.c.nodes
	if ask != nil {
		asked = []*Node{ask}
	}
	var errs []error
	for _, n := range asked {
		text, err := n.Client().ClusterNodes(ctx).Result()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: cluster nodes: %w", n.name, err))
			continue
		}
		master, replicas, err := rc.ownerIn(text, slot)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", n.name, err))
			continue
		}
		return master, replicas, nil
	}
	return nil, nil, fmt.Errorf("cluster: who serves slot %d: %w", slot, errors.Join(errs...))
}

// ownerIn finds slot's master and its replicas in CLUSTER NODES' text.
func (rc *RedisCluster) ownerIn(text string, slot int) (*Node, []*Node, error) {
	type entry struct {
		node   *Node
		master string // the master's id, for a replica
	}
	byID := map[string]entry{}
	var ownerID string
	for line := range strings.Lines(text) {
		f := strings.Fields(line)
		if len(f) < 8 {
			continue
		}
		addr, _, _ := strings.Cut(f[1], "@")
		e := entry{node: rc.nodeByAnnounced(addr)}
		if f[3] != "-" {
			e.master = f[3]
		}
		byID[f[0]] = e
		if !strings.Contains(f[2], "master") || strings.Contains(f[2], "fail") && !strings.Contains(f[2], "fail?") {
			continue
		}
		for _, r := range f[8:] {
			if strings.HasPrefix(r, "[") {
				continue // a slot being imported or migrated
			}
			lo, hi, ok := strings.Cut(r, "-")
			if !ok {
				hi = lo
			}
			l, err1 := strconv.Atoi(lo)
			h, err2 := strconv.Atoi(hi)
			if err1 == nil && err2 == nil && l <= slot && slot <= h {
				ownerID = f[0]
			}
		}
	}
	if ownerID == "" {
		return nil, nil, fmt.Errorf("slot %d is not served", slot)
	}
	m := byID[ownerID].node
	if m == nil {
		return nil, nil, fmt.Errorf("slot %d is served by a node at no announced address", slot)
	}
	var reps []*Node
	for _, e := range byID {
		if e.master == ownerID && e.node != nil {
			reps = append(reps, e.node)
		}
	}
	slices.SortFunc(reps, func(a, b *Node) int { return a.index - b.index })
	return m, reps, nil
}

// Role returns n's INFO replication role: "master" or "slave".
func (rc *RedisCluster) Role(ctx context.Context, n *Node) (string, error) {
	info, err := nodeInfo(ctx, n)
	if err != nil {
		return "", err
	}
	return info["role"], nil
}

// Cut cuts a from each of others on the announced path and the bus, both
// ways.
func (rc *RedisCluster) Cut(a *Node, others ...*Node) {
	rc.cuts.set(rc.pairs(a, others), true, true)
}

// CutReplication is Cut on the announced path alone: replication stops,
// the bus still carries pings, failure reports and failover messages.
func (rc *RedisCluster) CutReplication(a *Node, others ...*Node) {
	rc.cuts.set(rc.pairs(a, others), false, true)
}

// Heal undoes Cut and CutReplication of the same nodes.
func (rc *RedisCluster) Heal(a *Node, others ...*Node) {
	rc.cuts.set(rc.pairs(a, others), true, false)
}

func (rc *RedisCluster) pairs(a *Node, others []*Node) [][2]int {
	var ps [][2]int
	for _, o := range others {
		if o != a {
			ps = append(ps, [2]int{rc.c.indexOf(a, "cluster"), rc.c.indexOf(o, "cluster")})
		}
	}
	return ps
}

// RedisCluster returns the cluster's cluster topology, or nil.
func (c *Cluster) RedisCluster() *RedisCluster {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.redisCluster
}

// ForceFailover makes replica take over its master's slots now (CLUSTER
// FAILOVER FORCE) and waits until it is a master: what it had not
// received is lost.
func (rc *RedisCluster) ForceFailover(ctx context.Context, replica *Node) error {
	if err := clusterCmd(ctx, replica, "cluster failover force", "CLUSTER", "FAILOVER", "FORCE"); err != nil {
		return err
	}
	return rc.WaitMaster(ctx, replica)
}

// WaitMaster waits until n says it is a master (INFO replication).
func (rc *RedisCluster) WaitMaster(ctx context.Context, n *Node) error {
	return rc.poll(ctx, n.name+" to be a master", func(ctx context.Context) error {
		role, err := rc.Role(ctx, n)
		if err == nil && role != "master" {
			err = fmt.Errorf("role %q", role)
		}
		return err
	})
}

// MastersNow returns the masters ask says serve slots, not failed.
func (rc *RedisCluster) MastersNow(ctx context.Context, ask *Node) ([]*Node, error) {
	text, err := ask.Client().ClusterNodes(ctx).Result()
	if err != nil {
		return nil, fmt.Errorf("cluster: %s: cluster nodes: %w", ask.name, err)
	}
	var ms []*Node
	for line := range strings.Lines(text) {
		f := strings.Fields(line)
		if len(f) < 9 || !strings.Contains(f[2], "master") || strings.Contains(f[2], "fail") {
			continue
		}
		addr, _, _ := strings.Cut(f[1], "@")
		if n := rc.nodeByAnnounced(addr); n != nil {
			ms = append(ms, n)
		}
	}
	slices.SortFunc(ms, func(a, b *Node) int { return a.index - b.index })
	return ms, nil
}

// migrateTimeout is MIGRATE's own timeout (ms) for a batch of keys.
const migrateTimeout = 5000

// MigrateSlot moves slot from master from to master to while clients use
// it, as redis-cli --cluster reshard: IMPORTING, MIGRATING (ASK for moved
// keys), MIGRATE in batches over the announced path (a cut there stops
// it), then SETSLOT NODE on to, from and the other masters. It returns the
// keys moved; after an error with some moved, the slot still goes to to,
// else both are set STABLE again.
func (rc *RedisCluster) MigrateSlot(ctx context.Context, slot int, from, to *Node) ([]string, error) {
	ids := map[*Node]string{}
	for _, n := range []*Node{from, to} {
		id, err := myID(ctx, n)
		if err != nil {
			return nil, err
		}
		ids[n] = id
	}
	stable := func(err error) error {
		for _, n := range []*Node{to, from} {
			err = errors.Join(err, clusterCmd(context.WithoutCancel(ctx), n,
				fmt.Sprintf("cluster setslot %d stable", slot), "CLUSTER", "SETSLOT", slot, "STABLE"))
		}
		return err
	}
	what := fmt.Sprintf("cluster setslot %d importing", slot)
	if err := clusterCmd(ctx, to, what, "CLUSTER", "SETSLOT", slot, "IMPORTING", ids[from]); err != nil {
		return nil, stable(err)
	}
	what = fmt.Sprintf("cluster setslot %d migrating", slot)
	if err := clusterCmd(ctx, from, what, "CLUSTER", "SETSLOT", slot, "MIGRATING", ids[to]); err != nil {
		return nil, stable(err)
	}
	host, port, err := net.SplitHostPort(rc.data[rc.c.indexOf(to, "cluster")].addr())
	if err != nil {
		return nil, stable(err)
	}
	var moved []string
	var merr error
	for {
		keys, err := from.Client().ClusterGetKeysInSlot(ctx, slot, 100).Result()
		if err != nil {
			merr = fmt.Errorf("cluster: %s: cluster getkeysinslot %d: %w", from.name, slot, err)
			break
		}
		if len(keys) == 0 {
			break
		}
		// The password travels in the command, never on a command line.
		args := []any{"MIGRATE", host, port, "", 0, migrateTimeout, "AUTH", rc.c.password, "KEYS"}
		for _, k := range keys {
			args = append(args, k)
		}
		if err := from.Client().Do(ctx, args...).Err(); err != nil && !errors.Is(err, redis.Nil) {
			merr = fmt.Errorf("cluster: %s: migrate %d keys of slot %d to %s: %w", from.name, len(keys), slot, to.name, err)
			break
		}
		moved = append(moved, keys...)
	}
	if merr != nil && len(moved) == 0 {
		return nil, stable(merr)
	}
	order := []*Node{to, from}
	others, err := rc.MastersNow(ctx, to)
	if err == nil {
		for _, n := range others {
			if n != to && n != from {
				order = append(order, n)
			}
		}
	}
	for _, n := range order {
		merr = errors.Join(merr, clusterCmd(context.WithoutCancel(ctx), n,
			fmt.Sprintf("cluster setslot %d node %s", slot, to.name), "CLUSTER", "SETSLOT", slot, "NODE", ids[to]))
	}
	return moved, merr
}
