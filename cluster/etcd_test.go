package cluster

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestEtcdMembers starts three real etcd members, kills and restarts one,
// cuts one off the other two through the peer fronts and heals it, and
// checks that Close leaves no process behind.
func TestEtcdMembers(t *testing.T) {
	c := openTB(t, Spec{Nodes: 3, Server: ServerEtcd}, WithProxyGroups(2))
	if c.Server() != ServerEtcd || len(c.Nodes()) != 3 {
		t.Fatalf("server %s, %d nodes", c.Server(), len(c.Nodes()))
	}
	if v := c.Version(); !strings.HasPrefix(v, "3.") {
		t.Errorf("version %q", v)
	}
	if a := c.Abilities(); !a.Process || !a.Network || a.Clock || a.Redis {
		t.Errorf("abilities %+v", a)
	}
	// Each member's log is named for it, and holds what it said.
	for _, m := range c.Nodes() {
		if filepath.Base(m.LogPath()) != "etcd.log" {
			t.Errorf("%s logs to %s, want etcd.log", m.Name(), m.LogPath())
		}
		if fi, err := os.Stat(m.LogPath()); err != nil || fi.Size() == 0 {
			t.Errorf("%s: empty or missing log: %v", m.Name(), err)
		}
	}
	ctx := context.Background()
	health := func(i int) error {
		hctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		return etcdHealth(hctx, c.Node(i).DirectAddr())
	}
	// Through the client proxy, too.
	if _, err := etcdVersion(ctx, c.Node(0).Addr()); err != nil {
		t.Fatal(err)
	}

	n := c.Node(1)
	pid := n.Pid()
	if err := n.Kill(); err != nil {
		t.Fatal(err)
	}
	if !gone(pid) || n.Running() {
		t.Fatalf("member %s still runs after Kill", n.Name())
	}
	if err := n.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "restarted member healthy", func() bool { return health(1) == nil })

	// Cut n3 off n1 and n2: it loses its leader (or its quorum), they
	// keep theirs.
	c.CutPeers([][2]int{{0, 2}, {1, 2}})
	eventually(t, 20*time.Second, "isolated member unhealthy", func() bool { return health(2) != nil })
	eventually(t, 20*time.Second, "majority healthy", func() bool { return health(0) == nil && health(1) == nil })
	c.HealPeers()
	eventually(t, 20*time.Second, "healed member healthy", func() bool { return health(2) == nil })

	if err := n.Pause(); err != nil {
		t.Fatal(err)
	}
	if err := n.Resume(); err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, m := range c.Nodes() {
		pids = append(pids, m.Pid())
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	for _, p := range pids {
		if !gone(p) {
			t.Errorf("process %d outlived Close", p)
		}
	}
}

func TestEtcdSpecRefusals(t *testing.T) {
	for _, s := range []Spec{
		{Server: ServerEtcd, Backend: BackendDocker},
		{Server: ServerEtcd, Topology: TopologyFailover},
		{Server: ServerEtcd, Persistence: true},
		{Server: "zookeeper"},
	} {
		if _, err := s.WithDefaults(); err == nil {
			t.Errorf("%+v accepted", s)
		}
	}
	a := Spec{Server: ServerEtcd, Nodes: 3}.Abilities()
	for _, need := range []Abilities{{Clock: true}, {PowerLoss: true}, {Redis: true}} {
		if why := a.Missing(need); !strings.Contains(why, "etcd") {
			t.Errorf("need %+v: %q", need, why)
		}
	}
}
