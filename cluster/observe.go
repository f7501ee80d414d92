package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/locktorture/locktorture/internal/redisopt"
	"github.com/redis/go-redis/v9"
)

// KeyEvents is the notify-keyspace-events an observer sets: E, keyevent
// channels (__keyevent@0__:set carries the key); $, set; g, del and
// (p)expire; x, expirations (when the key is removed, lazily or by the
// active cycle, not when its TTL ran out); e, evictions.
const KeyEvents = "E$gxe"

// Observation is one keyspace notification of a node, as received.
type Observation struct {
	Node  int    // Node.Index
	Key   string // the key that changed
	Event string // "set", "del", "expired", "evicted", "expire" (EXPIRE and PEXPIRE)
	// At is when it was received: after the change, by the delivery's lag.
	At time.Time
}

// Observer follows one node's keyspace notifications on its direct
// address, so faults on its proxies do not cut it off. Stop ends it.
type Observer struct {
	ps     *redis.PubSub
	client *redis.Client
	done   chan struct{}
	once   sync.Once
	synced chan struct{} // a notification of syncKey arrived

	mu          sync.Mutex
	connects    int
	lastConnErr error
}

// Observe starts an Observer of n: it sets KeyEvents on every connection
// it makes (a restarted node forgets it; go-redis resubscribes on a new
// connection) and calls fn, from one goroutine, for every notification of
// a key keep accepts (nil: all), until Stop. It returns once subscribed;
// a node refusing CONFIG SET (a managed Redis) cannot be observed.
func (n *Node) Observe(ctx context.Context, keep func(key string) bool, fn func(Observation)) (*Observer, error) {
	o := &Observer{done: make(chan struct{}), synced: make(chan struct{}, 1)}
	opt := redisopt.Options(n.DirectAddr(), n.c.password)
	opt.PoolSize = 2
	opt.OnConnect = func(ctx context.Context, cn *redis.Conn) error {
		err := cn.ConfigSet(ctx, "notify-keyspace-events", KeyEvents).Err()
		o.mu.Lock()
		o.connects++
		o.lastConnErr = err
		o.mu.Unlock()
		return err
	}
	o.client = redis.NewClient(opt)
	o.ps = o.client.PSubscribe(ctx, "__keyevent@0__:*")
	sctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	if _, err := o.ps.Receive(sctx); err != nil {
		o.ps.Close()
		o.client.Close()
		return nil, fmt.Errorf("cluster: observe %s: %w", n.name, err)
	}
	idx := n.index
	// A health check every second notices a dead connection soon.
	ch := o.ps.Channel(redis.WithChannelHealthCheckInterval(time.Second), redis.WithChannelSize(4096))
	go func() {
		defer close(o.done)
		for m := range ch {
			at := time.Now()
			ev, ok := strings.CutPrefix(m.Channel, "__keyevent@0__:")
			if m.Payload == syncKey {
				select {
				case o.synced <- struct{}{}:
				default:
				}
				continue
			}
			if !ok || (keep != nil && !keep(m.Payload)) {
				continue
			}
			fn(Observation{Node: idx, Key: m.Payload, Event: ev, At: at})
		}
	}()
	return o, nil
}

// syncKey is the key Sync sets: never reported.
const syncKey = "locktorture:observer-sync"

// Sync returns once every notification the node sent before the call has
// reached fn: it sets syncKey and waits for its notification (they arrive
// in order). It gives up when ctx ends or after a second.
func (o *Observer) Sync(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	select { // a stale signal of an earlier Sync
	case <-o.synced:
	default:
	}
	if err := o.client.Set(ctx, syncKey, "1", time.Second).Err(); err != nil {
		return fmt.Errorf("cluster: observer sync: %w", err)
	}
	select {
	case <-o.synced:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("cluster: observer sync: %w", ctx.Err())
	}
}

// Connects returns how many connections the observer has made and the
// error of the last one's set-up.
func (o *Observer) Connects() (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.connects, o.lastConnErr
}

// Stop ends the observer and waits until fn is no longer called; it can
// be called again.
func (o *Observer) Stop() error {
	var err error
	o.once.Do(func() {
		err = errors.Join(o.ps.Close(), o.client.Close())
		<-o.done
	})
	return err
}
