package cluster

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func startRedisCluster(t *testing.T) *RedisCluster {
	t.Helper()
	start := time.Now()
	// A cancelled context would close the cluster.
	rc, err := StartRedisCluster(context.Background(), 3, WithDir(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("3×2 cluster started in %v", time.Since(start))
	t.Cleanup(func() {
		if err := rc.Cluster().Close(); err != nil {
			t.Error(err)
		}
	})
	return rc
}

func TestRedisClusterServesEverySlot(t *testing.T) {
	rc := startRedisCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cc := rc.newClusterClient()
	defer cc.Close()
	owners := map[string]bool{}
	for i := range 20 {
		key := fmt.Sprintf("k%d", i)
		if err := cc.Set(ctx, key, "v", 0).Err(); err != nil {
			t.Fatalf("set %s: %v", key, err)
		}
		m, reps, err := rc.SlotOwner(ctx, nil, Slot(key))
		if err != nil {
			t.Fatal(err)
		}
		if len(reps) != 1 {
			t.Fatalf("slot of %s: %d replicas, want 1", key, len(reps))
		}
		got, err := m.Client().Get(ctx, key).Result()
		if err != nil || got != "v" {
			t.Fatalf("%s on its master %s: %q, %v", key, m.Name(), got, err)
		}
		owners[m.Name()] = true
	}
	if len(owners) != 3 {
		t.Errorf("20 keys on %d masters, want 3", len(owners))
	}
}

func TestSlot(t *testing.T) {
	// Values from the Redis Cluster specification and redis-cli CLUSTER KEYSLOT.
	for key, want := range map[string]int{"123456789": 0x31C3 % numSlots, "foo": 12182, "{user1000}.following": Slot("user1000")} {
		if got := Slot(key); got != want {
			t.Errorf("Slot(%q) = %d, want %d", key, got, want)
		}
	}
}

// A write the replica did not receive is lost when the replica is
// forced over while cut from its master; the clients reach both
// throughout.
func TestRedisClusterForceFailoverLosesUnreplicatedWrite(t *testing.T) {
	rc := startRedisCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	key := "k1"
	m, reps, err := rc.SlotOwner(ctx, nil, Slot(key))
	if err != nil {
		t.Fatal(err)
	}
	r := reps[0]
	rc.CutReplication(m, r)
	if err := m.Client().Set(ctx, key, "lost", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rc.ForceFailover(ctx, r); err != nil {
		t.Fatal(err)
	}
	rc.Heal(m, r)
	eventually(t, 20*time.Second, "the old master to follow the promoted replica", func() bool {
		role, err := rc.Role(ctx, m)
		return err == nil && role == "slave"
	})
	owner, _, err := rc.SlotOwner(ctx, m, Slot(key))
	if err != nil || owner != r {
		t.Fatalf("slot owner %v, %v; want %s", owner, err, r.Name())
	}
	got, err := r.Client().Get(ctx, key).Result()
	if err == nil {
		t.Fatalf("the promoted replica has %s = %q; want it lost", key, got)
	}
	if err := rc.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
}

// A slot migrated while a key of it is held: the key moves to the new
// master with its TTL, a cluster client follows the redirection to it,
// and SET NX on it still fails throughout; the slot ends on the new
// master in every master's view.
func TestRedisClusterMigrateSlotKeepsTheKey(t *testing.T) {
	rc := startRedisCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cc := rc.newClusterClient()
	defer cc.Close()
	key := "k1"
	if err := cc.Set(ctx, key, "token", 20*time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	from, _, err := rc.SlotOwner(ctx, nil, Slot(key))
	if err != nil {
		t.Fatal(err)
	}
	masters, err := rc.MastersNow(ctx, from)
	if err != nil || len(masters) != 3 {
		t.Fatalf("masters %v, %v; want 3", masters, err)
	}
	to := masters[0]
	if to == from {
		to = masters[1]
	}
	moved, err := rc.MigrateSlot(ctx, Slot(key), from, to)
	if err != nil {
		t.Fatal(err)
	}
	if len(moved) != 1 || moved[0] != key {
		t.Errorf("moved %q, want [%s]", moved, key)
	}
	if n, err := from.Client().Exists(ctx, key).Result(); err == nil || !strings.HasPrefix(err.Error(), "MOVED") {
		t.Errorf("EXISTS %s on the old master %s: %d, %v; want MOVED", key, from.Name(), n, err)
	}
	ttl, err := to.Client().PTTL(ctx, key).Result()
	if err != nil || ttl <= 10*time.Second || ttl > 20*time.Second {
		t.Errorf("%s's PTTL of %s: %v, %v; want the TTL kept", to.Name(), key, ttl, err)
	}
	if ok, err := cc.SetNX(ctx, key, "other", time.Second).Result(); err != nil || ok {
		t.Errorf("SET NX on the held key after the move: %v, %v; want refused", ok, err)
	}
	if got, err := cc.Get(ctx, key).Result(); err != nil || got != "token" {
		t.Errorf("GET through the cluster client: %q, %v", got, err)
	}
	for _, m := range masters {
		owner, _, err := rc.SlotOwner(ctx, m, Slot(key))
		if err != nil || owner != to {
			t.Errorf("%s says slot %d is %v's (%v), want %s", m.Name(), Slot(key), owner, err, to.Name())
		}
	}
	if err := rc.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestClusterSpec: the cluster topology takes 6 nodes by default, an
// even number otherwise, on the process backend only; each refusal is
// one line.
func TestClusterSpec(t *testing.T) {
	s, err := Spec{Topology: TopologyCluster}.WithDefaults()
	if err != nil || s.Nodes != 6 || !s.NodesFixed() {
		t.Fatalf("default: %+v, %v; want 6 nodes, fixed", s, err)
	}
	for _, bad := range []Spec{
		{Topology: TopologyCluster, Nodes: 3},
		{Topology: TopologyCluster, Backend: BackendDocker},
		{Topology: TopologyCluster, Backend: BackendExternal, External: []string{"127.0.0.1:1"}},
	} {
		_, err := bad.WithDefaults()
		if err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: %v; want a one-line refusal", bad, err)
		}
	}
}

// newClusterClient returns a go-redis cluster client of rc, dialing each
// node by its client path.
func (rc *RedisCluster) newClusterClient() *redis.ClusterClient {
	m := rc.AddrMap()
	d := &net.Dialer{Timeout: checkTimeout}
	return redis.NewClusterClient(&redis.ClusterOptions{
		Addrs:    rc.c.Addrs(),
		Password: rc.c.password,
		Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if to, ok := m[addr]; ok {
				addr = to
			}
			return d.DialContext(ctx, network, addr)
		},
	})
}
