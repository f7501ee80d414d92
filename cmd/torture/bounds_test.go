package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunFlagBounds walks every number and duration flag of `torture run`
// through zero, negative, huge and absurd values: each value no run can
// use is refused with exit 2 and one line naming the flag or its bound,
// before anything starts (no run folder is made, no node is started: a
// billion keys used to be named one by one until the machine ran out of
// memory).
func TestRunFlagBounds(t *testing.T) {
	const absurd = "99999999999999999999" // beyond int64
	type c struct{ args, want string }
	var cases []c
	for _, f := range []string{"clients", "keys"} {
		cases = append(cases,
			c{"--" + f + " 0", "--" + f + " must be at least 1"},
			c{"--" + f + " -1", "--" + f + " must be at least 1"},
			c{"--" + f + " " + absurd, "value out of range"},
		)
	}
	cases = append(cases,
		c{"--clients 100001", "a run drives at most 100000"},
		c{"--keys 100001", "takes at most 100000"},
		c{"--keys 1000000000", "takes at most 100000"},
		c{"--key-per-client --clients 100001", "a run drives at most 100000"},
		c{"--lock redlock --nodes 0", "want at least 1 node"},
		c{"--lock redlock --nodes -3", "want at least 1 node"},
		c{"--lock redlock --nodes 101", "a run starts at most 100"},
		c{"--lock redlock --nodes " + absurd, "want a number or host:port"},
		c{"--seed 0", "--seed must not be 0"},
		c{"--seed " + absurd, "value out of range"},
		c{"--lock redlock --quorum 0", "--quorum must be at least 1"},
		c{"--lock redlock --quorum -1", "--quorum must be at least 1"},
		c{"--lock redlock --quorum 6", "quorum 6 of 5 nodes"},
		c{"--lock redlock --quorum 2", "quorum 2 of 5 nodes"},
		c{"--wait-replicas -1", "--wait-replicas must not be negative"},
		c{"--topology failover --wait-replicas 2", "one replica per primary"},
		c{"--nemesis-compose 0", "--nemesis-compose must be at least 1"},
		c{"--nemesis-compose -1", "--nemesis-compose must be at least 1"},
		c{"--nemesis kill,pause --nemesis-compose 1000000000", "at most the 2 kinds given"},
		c{"--hold -1s", "--hold must not be negative"},
		c{"--hold 25h", "hold 25h0m0s: at most 24h"},
		c{"--ttl 9h", "ttl 9h0m0s: at most 8h"},
		c{"--ttl 1000h", "ttl 1000h0m0s: at most 8h"},
		c{"--duration 9999999h", "parse error"},
		c{"--check-timeout 0s", "--check-timeout must be positive"},
	)
	for _, f := range []string{"duration", "ttl", "acquire-timeout", "liveness-bound", "nemesis-interval", "restart-delay"} {
		cases = append(cases,
			c{"--" + f + " 0s", "--" + f + " must be positive"},
			c{"--" + f + " -1ns", "--" + f + " must be positive"},
		)
		if f != "ttl" {
			cases = append(cases, c{"--" + f + " 25h", "at most 24h"})
		}
	}
	cases = append(cases,
		c{"--extend --extend-every 0s", "--extend-every must be positive"},
		c{"--extend --extend-every 25h", "must be shorter than the TTL"},
		c{"--extend --ttl 8h --extend-every 1h --duration 25h", "duration 25h0m0s: at most 24h"},
	)
	for _, tc := range cases {
		t.Run(tc.args, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			args := append([]string{"run", "--out", out}, strings.Fields(tc.args)...)
			_, stderr, code := torture(t, args...)
			line := strings.TrimSpace(stderr)
			if code != exitError || strings.Contains(line, "\n") || !strings.HasPrefix(line, "torture: ") || !strings.Contains(line, tc.want) {
				t.Fatalf("exit %d, stderr %q; want exit 2 and one line with %q", code, stderr, tc.want)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Fatalf("refused, yet %s was made (%v)", out, err)
			}
		})
	}
}
