package main

import (
	"encoding/hex"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/zeromicro/go-zero/core/logx"
	"github.com/zeromicro/go-zero/core/stores/redis"

	"github.com/locktorture/locktorture/bugs/lineproto"
)

// client is one process's lock.
type client struct {
	store      *redis.Redis
	ttl        time.Duration
	seconds    int
	tries      int
	retryDelay time.Duration
	held       map[string]*redis.RedisLock // by token
}

func main() {
	// go-zero logs to standard output: the protocol keeps the original
	// descriptor, and descriptor 1 becomes standard error.
	protoFD, err := syscall.Dup(1)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := syscall.Dup3(2, 1, 0); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	logx.Disable()
	if err := lineproto.Serve(os.Stdin, os.NewFile(uintptr(protoFD), "protocol"), hello); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func hello(req lineproto.Request) (lineproto.Client, lineproto.Reply) {
	if len(req.Addrs) == 0 {
		return nil, lineproto.Reply{Result: "error", Error: "no nodes in the hello"}
	}
	ttl := lineproto.MS(req.TTLMS)
	if ttl <= 0 {
		return nil, lineproto.Reply{Result: "error", Error: "a TTL of at least 1ms"}
	}
	// go-zero counts the expiry in whole seconds: round up, so that the
	// key lives at least the TTL the harness asked for, which is the
	// validity this client claims.
	seconds := int((ttl + time.Second - 1) / time.Second)
	var opts []redis.Option
	if req.Password != "" {
		opts = append(opts, redis.WithPass(req.Password))
	}
	c := &client{store: redis.New(req.Addrs[0], opts...), ttl: ttl, seconds: seconds,
		tries: max(req.Tries, 1), retryDelay: lineproto.MS(req.RetryDelayMS), held: map[string]*redis.RedisLock{}}
	return c, lineproto.OK("go-zero RedisLock (client process)", map[string]any{"elapsed_from_request": true, "extends": true}, "go-zero", "go-redis")
}

// call runs f, waiting for it until the harness's bound (nine tenths of
// it, a margin for the reply); ok is false when it did not return in time
// (it goes on in the background, its outcome unknown).
func call[T any](bound time.Duration, f func() (T, error)) (v T, err error, ok bool) {
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := f()
		ch <- result{v, err}
	}()
	t := time.NewTimer(bound)
	defer t.Stop()
	select {
	case r := <-ch:
		return r.v, r.err, true
	case <-t.C:
		return v, nil, false
	}
}

func (c *client) Handle(req lineproto.Request) lineproto.Reply {
	deadline := time.Now().Add(lineproto.MS(req.TimeoutMS) * 9 / 10)
	switch req.Op {
	case "ping":
		return lineproto.Reply{Result: "ok"}
	case "acquire":
		return c.acquire(deadline, req.Key)
	case "release", "extend":
		l, ok := c.held[req.Token]
		if !ok {
			return lineproto.Reply{Result: "unknown", Error: "the lease was acquired by another process"}
		}
		var f func() (bool, error)
		if req.Op == "release" {
			f = l.Release
			delete(c.held, req.Token)
		} else {
			// go-zero's way to renew a lock it holds: Acquire again.
			f = l.Acquire
		}
		held, err, done := call(time.Until(deadline), f)
		switch {
		case !done:
			return lineproto.Reply{Result: "unknown", Error: "no answer in time"}
		case err != nil:
			return lineproto.Reply{Result: "unknown", Error: lineproto.OneLine(err)}
		case !held:
			return lineproto.Reply{Result: "not_held"}
		case req.Op == "extend":
			// The TTL, counted from before the call (validity_ms).
			return lineproto.Reply{Result: "ok", ValidityMS: lineproto.Validity(c.ttl)}
		}
		return lineproto.Reply{Result: "ok"}
	}
	return lineproto.Reply{Result: "error", Error: "unknown op " + req.Op}
}

func (c *client) acquire(deadline time.Time, key string) lineproto.Reply {
	token, err := lineproto.Token(hex.EncodeToString)
	if err != nil {
		return lineproto.Reply{Result: "unknown", Error: err.Error()}
	}
	first := time.Now()
	for i := 0; i < c.tries; i++ {
		if i > 0 {
			d, err := lineproto.Backoff(c.retryDelay)
			if err != nil {
				return lineproto.Reply{Result: "unknown", Error: err.Error()}
			}
			if time.Now().Add(d).After(deadline) {
				break
			}
			time.Sleep(d)
		}
		l := redis.NewRedisLock(c.store, key)
		l.SetExpire(c.seconds)
		start := time.Now()
		ok, err, done := call(time.Until(deadline), l.Acquire)
		switch {
		case !done:
			return lineproto.Reply{Result: "unknown", Error: "no answer in time"}
		case err != nil:
			return lineproto.Reply{Result: "unknown", Error: lineproto.OneLine(err)}
		case ok:
			c.held[token] = l
			return lineproto.Reply{Result: "ok", Token: token, ValidityMS: lineproto.Validity(start.Sub(first) + c.ttl)}
		}
	}
	return lineproto.Reply{Result: "not_acquired", Error: "go-zero: the key is held"}
}
