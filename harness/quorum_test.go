package harness_test

import (
	"strings"
	"testing"

	"github.com/locktorture/locktorture/harness"
)

// TestQuorumConfig: a quorum is for redlock, more than half its nodes and
// at most all (a quorum below a majority would let two clients hold
// the lock at once).
func TestQuorumConfig(t *testing.T) {
	for _, tc := range []struct {
		lock          string
		nodes, quorum int
		want          string // "" = accepted
	}{
		{"redlock", 5, 4, ""},
		{"redlock", 3, 3, ""},
		{"redlock", 5, 0, ""},
		{"redlock", 5, 2, "quorum 2 of 5 nodes"},
		{"redlock", 3, 4, "quorum 4 of 3 nodes"},
		{"redsync", 5, 3, "redsync takes no quorum"},
		{"setnx", 0, 1, "setnx takes no quorum"},
	} {
		cfg := harness.Config{Workload: harness.Workload{Lock: tc.lock, Quorum: tc.quorum}, Cluster: harness.Cluster{Nodes: tc.nodes}}
		p, err := harness.NewPlan(cfg)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s, %d nodes, quorum %d: %v", tc.lock, tc.nodes, tc.quorum, err)
		case tc.want == "" && p.Config().Quorum != tc.quorum:
			t.Errorf("%s: quorum %d, want %d", tc.lock, p.Config().Quorum, tc.quorum)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s, %d nodes, quorum %d: %v, want %q", tc.lock, tc.nodes, tc.quorum, err, tc.want)
		}
	}
}

// TestWaitReplicasConfig: WAIT after the SET is for setnx on the failover
// topology, with its one replica (WAIT needs a replica to
// acknowledge).
func TestWaitReplicasConfig(t *testing.T) {
	for _, tc := range []struct {
		lock, topology string
		wait           int
		want           string // "" = accepted
	}{
		{"setnx", "failover", 1, ""},
		{"setnx", "", 1, "topology failover"},
		{"setnx", "failover", 2, "one replica"},
		{"redislock", "failover", 1, "redislock takes no WAIT"},
	} {
		cfg := harness.Config{Workload: harness.Workload{Lock: tc.lock, WaitReplicas: tc.wait}, Cluster: harness.Cluster{Topology: tc.topology}}
		_, err := harness.NewPlan(cfg)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s on %q, wait %d: %v", tc.lock, tc.topology, tc.wait, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s on %q, wait %d: %v, want %q", tc.lock, tc.topology, tc.wait, err, tc.want)
		}
	}
}
