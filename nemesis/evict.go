package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/locktorture/locktorture/cluster"
	"github.com/redis/go-redis/v9"
)

// Evict puts nodes under memory pressure until Heal: it sets their
// maxmemory-policy to Policy and their maxmemory to the memory they use
// at the start plus Headroom, then writes filler keys of Filler bytes
// each, one every Every, to every node of the fault. Under an evicting
// policy each filler written past the limit makes the node evict a key:
// with allkeys-lru the least recently used of a sample, soon the lock
// key a client holds, whose grant is older than the fillers written
// since (the Redis documentation, "Key eviction": the policy applies to
// every key, whatever its TTL). The lock then has no key on that node
// while its holder holds it, and the next SET NX is granted. Under
// noeviction the node refuses every write that needs memory past the
// limit, the lock's SET included ("OOM command not allowed"), and evicts
// nothing: the lock is unavailable, not unsafe.
//
// The fillers go to each node's own address, outside the proxies, as a
// neighbouring application sharing the node would write them; a write
// refused or lost is not an error of the fault (it is the fault's
// point). Heal puts back the maxmemory and policy it found, then deletes
// the fillers left.
type Evict struct {
	Nodes    []int    `json:"nodes"`
	Policy   string   `json:"policy"`
	Headroom int64    `json:"headroom"`
	Filler   int      `json:"filler"`
	Every    Duration `json:"every"`

	bg    background
	saved []memory // what Start found on each node, to put back
}

// memory is a node's memory settings, as CONFIG GET gives them.
type memory struct {
	node              int
	maxmemory, policy string
}

// The eviction policies of Redis (redis.conf, maxmemory-policy).
var evictPolicies = []string{"noeviction", "allkeys-lru", "allkeys-lfu", "allkeys-random", "volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"}

// fillerPrefix begins the name of every filler key.
const fillerPrefix = "locktorture-filler:"

// evictWindow is the workload of the memory kinds: one key, so every
// client contends for the one a filler write may evict, and holds of
// half a second, so the key is evicted during a hold rather than after.
var evictWindow = Workload{Keys: 1, Hold: 500 * time.Millisecond, Interval: time.Second}

// evictKind and noevictionKind share Evict, each with its policy.
func evictionKind(name, policy, summary string) Kind {
	return Kind{
		Name:    name,
		Family:  "evict",
		Summary: summary,
		Needs:   Needs{Cluster: cluster.Abilities{Redis: true}},
		Window:  evictWindow,
		Plan: func(rng *rand.Rand, s Setup) Fault {
			return &Evict{Nodes: targets(rng, s, minorityOrBareMajority), Policy: policy, Headroom: 64 << 10, Filler: 4 << 10, Every: Duration(time.Millisecond)}
		},
		Decode: decode[Evict],
	}
}

var (
	evictKind      = evictionKind("evict", "allkeys-lru", "lower nodes' maxmemory under allkeys-lru and write filler keys, so lock keys are evicted while held")
	noevictionKind = evictionKind("noeviction", "noeviction", "lower nodes' maxmemory under noeviction and write filler keys: writes past the limit are refused, nothing is evicted (the control of evict)")
)

// Refuse says why the fault does not fit s, or "".
func (e *Evict) Refuse(s Setup) string {
	if err := checkNodes(e.Nodes, s.Nodes); err != nil {
		return "evict: " + err.Error()
	}
	switch {
	case !slices.Contains(evictPolicies, e.Policy):
		return fmt.Sprintf("evict: policy %q (want one of %s)", e.Policy, strings.Join(evictPolicies, ", "))
	case e.Headroom < 0 || e.Filler <= 0 || e.Every <= 0:
		return fmt.Sprintf("evict: headroom %d, filler %d, every %v: want headroom ≥ 0, a positive filler and interval", e.Headroom, e.Filler, time.Duration(e.Every))
	}
	return ""
}

func (e *Evict) String() string {
	return fmt.Sprintf("evict %s: maxmemory-policy %s, maxmemory +%d KiB, a %d KiB filler every %s", nodeNames(e.Nodes), e.Policy, e.Headroom>>10, e.Filler>>10, time.Duration(e.Every))
}

// Start lowers the nodes' maxmemory under the policy and starts writing
// fillers.
func (e *Evict) Start(ctx context.Context, t *Target) error {
	if err := checkTarget(t, e.Nodes); err != nil {
		return err
	}
	var clients []*redis.Client
	for _, i := range e.Nodes {
		n := t.Cluster.Node(i)
		rc := n.Client()
		m, err := memorySettings(ctx, rc)
		if err != nil {
			return fmt.Errorf("%s: %w", n.Name(), err)
		}
		m.node = i
		used, err := usedMemory(ctx, rc)
		if err != nil {
			return fmt.Errorf("%s: %w", n.Name(), err)
		}
		e.saved = append(e.saved, m)
		if err := setMemory(ctx, rc, strconv.FormatInt(used+e.Headroom, 10), e.Policy); err != nil {
			return fmt.Errorf("%s: %w", n.Name(), err)
		}
		clients = append(clients, rc)
	}
	value := strings.Repeat("f", e.Filler)
	e.bg.start(func(stop <-chan struct{}) error {
		tick := time.NewTicker(time.Duration(e.Every))
		defer tick.Stop()
		for i := 0; ; i++ {
			if await(ctx, stop, tick.C) != nil {
				return nil
			}
			for _, rc := range clients {
				// Refused (noeviction) or lost (a node killed meanwhile):
				// the memory pressure is the fault, not its writes.
				wctx, cancel := context.WithTimeout(ctx, time.Second)
				rc.Set(wctx, fillerPrefix+strconv.Itoa(i), value, 0)
				cancel()
			}
		}
	})
	return nil
}

// Heal stops the fillers, puts back each node's maxmemory and policy and
// deletes the fillers left.
func (e *Evict) Heal(ctx context.Context, t *Target) error {
	errs := []error{e.bg.halt()}
	if t.Cluster == nil {
		return errors.Join(append(errs, errors.New("no cluster"))...)
	}
	for _, m := range e.saved {
		n, err := node(t, m.node)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		rc := n.Client()
		if err := setMemory(ctx, rc, m.maxmemory, m.policy); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", n.Name(), err))
			continue
		}
		if err := deleteFillers(ctx, rc); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", n.Name(), err))
		}
	}
	e.saved = nil
	return errors.Join(errs...)
}

// memorySettings reads a node's maxmemory and maxmemory-policy.
func memorySettings(ctx context.Context, rc *redis.Client) (memory, error) {
	var m memory
	for _, kv := range []struct {
		name string
		into *string
	}{{"maxmemory", &m.maxmemory}, {"maxmemory-policy", &m.policy}} {
		v, err := rc.ConfigGet(ctx, kv.name).Result()
		if err != nil {
			return m, fmt.Errorf("config get %s: %w", kv.name, err)
		}
		if *kv.into = v[kv.name]; *kv.into == "" {
			return m, fmt.Errorf("config get %s: no value", kv.name)
		}
	}
	return m, nil
}

// setMemory sets a node's maxmemory-policy, then its maxmemory.
func setMemory(ctx context.Context, rc *redis.Client, maxmemory, policy string) error {
	if err := rc.ConfigSet(ctx, "maxmemory-policy", policy).Err(); err != nil {
		return fmt.Errorf("config set maxmemory-policy %s: %w", policy, err)
	}
	if err := rc.ConfigSet(ctx, "maxmemory", maxmemory).Err(); err != nil {
		return fmt.Errorf("config set maxmemory %s: %w", maxmemory, err)
	}
	return nil
}

// usedMemory is a node's used_memory (INFO memory), in bytes.
func usedMemory(ctx context.Context, rc *redis.Client) (int64, error) {
	info, err := rc.Info(ctx, "memory").Result()
	if err != nil {
		return 0, fmt.Errorf("info memory: %w", err)
	}
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "used_memory:"); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, errors.New("info memory: no used_memory")
}

// deleteFillers deletes every filler key of a node.
func deleteFillers(ctx context.Context, rc *redis.Client) error {
	var cursor uint64
	for {
		keys, next, err := rc.Scan(ctx, cursor, fillerPrefix+"*", 1000).Result()
		if err != nil {
			return fmt.Errorf("scan the fillers: %w", err)
		}
		if len(keys) > 0 {
			if err := rc.Unlink(ctx, keys...).Err(); err != nil {
				return fmt.Errorf("unlink the fillers: %w", err)
			}
		}
		if cursor = next; cursor == 0 {
			return nil
		}
	}
}
