package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/locktorture/locktorture/cluster"
	"github.com/locktorture/locktorture/internal/wait"
	"github.com/redis/go-redis/v9"
)

// Evict sets the nodes' maxmemory-policy to Policy and their maxmemory to
// what they use plus Headroom, then writes a filler of Filler bytes every
// Every to each, at its own address, as a neighbouring application would;
// a write refused or lost is the fault's point, not its error. Under
// allkeys-lru a held lock key is soon evicted, whatever its TTL.
type Evict struct {
	Nodes    []int    `json:"nodes"`
	Policy   string   `json:"policy"`
	Headroom int64    `json:"headroom"`
	Filler   int      `json:"filler"`
	Every    Duration `json:"every"`

	bg    background
	saved []memory // what Start found on each node, to put back
}

// memory is a node's settings, as CONFIG GET gives them.
type memory struct {
	node              int
	maxmemory, policy string
}

var evictPolicies = []string{"noeviction", "allkeys-lru", "allkeys-lfu", "allkeys-random", "volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"}

const fillerPrefix = "locktorture-filler:"

// evictWindow: one key for every client to contend for, held half a
// second, so the key is evicted during a hold rather than after.
var evictWindow = Workload{Keys: 1, Hold: 500 * time.Millisecond, Interval: time.Second}

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
		err = setMemory(ctx, rc, m.maxmemory, m.policy)
		if err == nil {
			err = deleteFillers(ctx, rc)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", n.Name(), err))
		}
	}
	e.saved = nil
	return errors.Join(errs...)
}

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

func setMemory(ctx context.Context, rc *redis.Client, maxmemory, policy string) error {
	if err := rc.ConfigSet(ctx, "maxmemory-policy", policy).Err(); err != nil {
		return fmt.Errorf("config set maxmemory-policy %s: %w", policy, err)
	}
	if err := rc.ConfigSet(ctx, "maxmemory", maxmemory).Err(); err != nil {
		return fmt.Errorf("config set maxmemory %s: %w", maxmemory, err)
	}
	return nil
}

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

// The modes of a server stall.
const (
	// StallSleep: DEBUG SLEEP. Nothing is read, run, answered or expired
	// until the event loop wakes; keys whose TTL ran out are expired on
	// their next access. The nodes must allow DEBUG
	// (enable-debug-command, which the cluster sets).
	StallSleep = "sleep"
	// StallPause: CLIENT PAUSE ALL. Connections are accepted and replicas
	// served, but no client's command runs and active expiry is paused.
	StallPause = "pause"
)

// ServerStall stalls nodes' servers for Stall while their processes run.
// Heal waits for the stall to end (neither mode can be cut short: CLIENT
// UNPAUSE waits for a pause of ALL like every other command) and for the
// nodes to answer.
type ServerStall struct {
	Nodes []int    `json:"nodes"`
	Mode  string   `json:"mode"`
	Stall Duration `json:"stall"`

	bg background // the DEBUG SLEEP calls, which return when the stall ends
}

var serverStallKind = Kind{
	Name:    "server-stall",
	Family:  "server-stall",
	Summary: "stall nodes' event loops (DEBUG SLEEP or CLIENT PAUSE ALL) for half a TTL to two TTLs; their processes run on",
	Needs:   Needs{Cluster: cluster.Abilities{Redis: true}, TTL: true},
	Window:  Workload{Clients: 4, Keys: 1, Hold: 500 * time.Millisecond, Interval: time.Second},
	Plan: func(rng *rand.Rand, s Setup) Fault {
		f := &ServerStall{Nodes: targets(rng, s, minorityOrMajority), Mode: StallSleep}
		if rng.IntN(2) == 1 {
			f.Mode = StallPause
		}
		ttl := max(s.TTL, time.Millisecond)
		f.Stall = Duration((ttl/2 + time.Duration(rng.Int64N(int64(ttl*3/2)+1))).Truncate(time.Millisecond))
		return f
	},
	Decode: decode[ServerStall],
}

func refuseMode(kind, mode string) string {
	if mode != StallSleep && mode != StallPause {
		return fmt.Sprintf("%s: mode %q: want %q or %q", kind, mode, StallSleep, StallPause)
	}
	return ""
}

func (f *ServerStall) Refuse(s Setup) string {
	if err := checkNodes(f.Nodes, s.Nodes); err != nil {
		return "server-stall: " + err.Error()
	}
	if f.Stall < Duration(time.Millisecond) {
		return fmt.Sprintf("server-stall: stall %v: want at least 1ms", time.Duration(f.Stall))
	}
	return refuseMode("server-stall", f.Mode)
}

func (f *ServerStall) MinActive() time.Duration { return time.Duration(f.Stall) }

func (f *ServerStall) String() string {
	return fmt.Sprintf("server-stall %s: %s for %s", nodeNames(f.Nodes), stallCommand(f.Mode), time.Duration(f.Stall))
}

func stallCommand(mode string) string {
	if mode == StallPause {
		return "CLIENT PAUSE ALL"
	}
	return "DEBUG SLEEP"
}

func (f *ServerStall) Start(ctx context.Context, t *Target) error {
	return stallNodes(ctx, t, f.Nodes, f.Mode, time.Duration(f.Stall), &f.bg)
}

func (f *ServerStall) Heal(ctx context.Context, t *Target) error {
	return healStall(ctx, t, f.Nodes, &f.bg)
}

// stallNodes stalls nodes idx for d: CLIENT PAUSE returns at once, DEBUG
// SLEEP when the stall is over, so each runs in bg.
func stallNodes(ctx context.Context, t *Target, idx []int, mode string, d time.Duration, bg *background) error {
	if err := checkTarget(t, idx); err != nil {
		return err
	}
	var clients []*redis.Client
	for _, i := range idx {
		clients = append(clients, t.Cluster.Node(i).Client())
	}
	if mode == StallPause {
		var errs []error
		for j, rc := range clients {
			if err := rc.Do(ctx, "CLIENT", "PAUSE", max(d.Milliseconds(), 1), "ALL").Err(); err != nil {
				errs = append(errs, fmt.Errorf("n%d: client pause: %w", idx[j]+1, err))
			}
		}
		return errors.Join(errs...)
	}
	for j, rc := range clients {
		v, err := rc.ConfigGet(ctx, "enable-debug-command").Result()
		if err != nil {
			return fmt.Errorf("n%d: config get enable-debug-command: %w", idx[j]+1, err)
		}
		if v["enable-debug-command"] == "no" {
			return fmt.Errorf("n%d refuses DEBUG (enable-debug-command no; the nodes the cluster runs allow it)", idx[j]+1)
		}
	}
	secs := strconv.FormatFloat(d.Seconds(), 'f', 3, 64)
	bg.start(func(<-chan struct{}) error {
		errs := make([]error, len(clients))
		var wg sync.WaitGroup
		for j, rc := range clients {
			wg.Go(func() {
				sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d+healTimeout)
				defer cancel()
				if err := rc.Do(sctx, "DEBUG", "SLEEP", secs).Err(); err != nil {
					errs[j] = fmt.Errorf("n%d: debug sleep: %w", idx[j]+1, err)
				}
			})
		}
		wg.Wait()
		return errors.Join(errs...)
	})
	return nil
}

// healStall waits for the DEBUG SLEEP calls, then for every node of idx
// to answer PING (a pause ends by itself).
func healStall(ctx context.Context, t *Target, idx []int, bg *background) error {
	err := bg.halt()
	if t.Cluster == nil {
		return errors.Join(err, errors.New("no cluster"))
	}
	for _, i := range idx {
		n, nerr := node(t, i)
		if nerr != nil {
			return errors.Join(err, nerr)
		}
		if !n.Running() {
			continue // a composed fault took it down, and heals it
		}
		for {
			pctx, cancel := context.WithTimeout(ctx, time.Second)
			perr := n.Ping(pctx)
			cancel()
			if perr == nil {
				break
			}
			if werr := wait.Sleep(ctx, 10*time.Millisecond); werr != nil {
				return errors.Join(err, fmt.Errorf("%s still stalled: %w", n.Name(), perr))
			}
		}
	}
	return err
}

// ServerStallHolder stalls, at a grant, a majority of its nodes for the
// validity left, up to Cap (the TTL: past it every key has expired, and a
// lock that reports no validity has none), plus Margin.
type ServerStallHolder struct {
	Mode   string   `json:"mode"`
	Pick   int      `json:"pick"`
	Margin Duration `json:"margin"`
	Cap    Duration `json:"cap"`
	Aim

	bg background
}

var serverStallHolderKind = Kind{
	Name:    "server-stall-holder",
	Family:  "server-stall",
	Summary: "at a grant, stall the event loops of the holder's nodes (a majority of them) for just over the validity it has left",
	Needs:   Needs{Cluster: cluster.Abilities{Redis: true}, TTL: true},
	Window:  Workload{Keys: 1, Hold: 500 * time.Millisecond, Interval: time.Second},
	Plan: func(rng *rand.Rand, s Setup) Fault {
		f := &ServerStallHolder{Mode: StallSleep, Pick: rng.IntN(max(1, s.Nodes)), Margin: Duration(s.TTL / 10), Cap: Duration(s.TTL), Aim: newAim(s)}
		if rng.IntN(2) == 1 {
			f.Mode = StallPause
		}
		// Stalled for up to a TTL and a margin, then a TTL for the
		// contenders to act.
		f.Active = Duration(2*s.TTL + s.TTL/10)
		return f
	},
	Decode: decodeAimed[ServerStallHolder],
}

func (f *ServerStallHolder) Refuse(s Setup) string {
	if why := refuseMode("server-stall-holder", f.Mode); why != "" {
		return why
	}
	if f.Pick < 0 || f.Margin < 0 || f.Cap <= 0 {
		return "server-stall-holder: negative pick or margin, or a cap that is not positive"
	}
	return f.refuse("server-stall-holder", s.Nodes)
}

func (f *ServerStallHolder) String() string {
	s := fmt.Sprintf("server-stall-holder: %s on a live hold's nodes just past its validity", stallCommand(f.Mode))
	return s + f.says(func(d *Decision) string {
		return fmt.Sprintf("stall %s for %s", nodeNames(d.Targets), time.Duration(d.Amount).Round(time.Millisecond))
	})
}

func (f *ServerStallHolder) Arm(ctx context.Context, t *Target, base time.Time) (bool, error) {
	nodes, err := clusterSize(t)
	if err != nil {
		return false, err
	}
	q := quorum(nodes)
	return f.decide(ctx, t, base, func(ch Change, left time.Duration) (aim, bool) {
		granted, ok := grantedBy(ch, nodes)
		if !ok || len(granted) < q {
			return aim{}, false
		}
		return aim{targets: nth(slices.Clone(granted), f.Pick, q), amount: min(left, time.Duration(f.Cap)) + time.Duration(f.Margin)}, true
	})
}

func (f *ServerStallHolder) Start(ctx context.Context, t *Target) error {
	if !f.struck() {
		return nil
	}
	return stallNodes(ctx, t, f.Decision.Targets, f.Mode, max(time.Duration(f.Decision.Amount), time.Millisecond), &f.bg)
}

func (f *ServerStallHolder) Heal(ctx context.Context, t *Target) error {
	if !f.struck() {
		return nil
	}
	return healStall(ctx, t, f.Decision.Targets, &f.bg)
}
