package nemesis_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/locktorture/locktorture/internal/testutil"
	"github.com/locktorture/locktorture/nemesis"
)

// commandUsec is the time a node spent in a command, from INFO
// commandstats (cmdstat_debug:calls=1,usec=...).
func commandUsec(t *testing.T, info, cmd string) int64 {
	t.Helper()
	for line := range strings.Lines(info) {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_"+cmd+":")
		if !ok {
			continue
		}
		for kv := range strings.SplitSeq(rest, ",") {
			if v, ok := strings.CutPrefix(kv, "usec="); ok {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
		}
	}
	return -1
}

// TestServerStall: a stall keeps the node from serving while its process
// runs. Under CLIENT PAUSE a command sent during the stall runs after it,
// by when a key with a shorter TTL has expired; under DEBUG SLEEP the
// node sleeps the whole stall. Heal returns once the node answers again.
func TestServerStall(t *testing.T) {
	for _, mode := range []string{nemesis.StallPause, nemesis.StallSleep} {
		t.Run(mode, func(t *testing.T) {
			c := startCluster(t, 1, 1)
			ctx := testutil.Context(t, 30*time.Second)
			rc := testutil.Client(t, c.Node(0).Addr(), c.Password())
			if err := rc.Set(ctx, "k0", "token", 100*time.Millisecond).Err(); err != nil {
				t.Fatal(err)
			}
			stall := 600 * time.Millisecond
			js := fmt.Sprintf(`{"nodes": [0], "mode": %q, "stall": %q}`, mode, stall)
			k, err := nemesis.Lookup("server-stall")
			if err != nil {
				t.Fatal(err)
			}
			f, err := k.Decode(json.RawMessage(js))
			if err != nil {
				t.Fatal(err)
			}
			tg := &nemesis.Target{Cluster: c}
			if err := f.Start(ctx, tg); err != nil {
				t.Fatal(err)
			}
			pid := c.Node(0).Pid()
			if mode == nemesis.StallPause {
				// The pause is in force once Start returns: this GET runs
				// after it, past the key's TTL.
				if v, err := rc.Get(ctx, "k0").Result(); err == nil {
					t.Errorf("GET during the pause ran before it ended: %q", v)
				}
			}
			if err := f.Heal(ctx, tg); err != nil {
				t.Fatal(err)
			}
			if !testutil.Running(pid) || c.Node(0).Pid() != pid {
				t.Errorf("the stalled node's process %d did not run on", pid)
			}
			info, err := c.Node(0).Client().Info(ctx, "commandstats").Result()
			if err != nil {
				t.Fatal(err)
			}
			if mode == nemesis.StallSleep {
				if us := commandUsec(t, info, "debug"); us < stall.Microseconds() {
					t.Errorf("DEBUG SLEEP took %d µs, less than the stall of %s", us, stall)
				}
			} else if commandUsec(t, info, "client|pause") < 0 {
				t.Errorf("no CLIENT PAUSE in the node's commandstats:\n%s", info)
			}
			assertHealthy(t, c)
		})
	}
}
