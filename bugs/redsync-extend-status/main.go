package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/go-redis/redis/v8"
	"github.com/go-redsync/redsync/v4"
	redsyncredis "github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v8"

	"github.com/locktorture/locktorture/bugs/lineproto"
)

// client is one process's lock.
type client struct {
	rs         *redsync.Redsync
	ttl        time.Duration
	tries      int
	retryDelay time.Duration
	held       map[string]*redsync.Mutex // by token
}

func main() {
	if err := lineproto.Serve(os.Stdin, os.Stdout, hello); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func hello(req lineproto.Request) (lineproto.Client, lineproto.Reply) {
	if len(req.Addrs) == 0 {
		return nil, lineproto.Reply{Result: "error", Error: "no nodes in the hello"}
	}
	timeout := lineproto.MS(req.NodeTimeoutMS)
	pools := make([]redsyncredis.Pool, len(req.Addrs))
	for i, a := range req.Addrs {
		pools[i] = goredis.NewPool(redis.NewClient(&redis.Options{
			Addr: a, Password: req.Password, MaxRetries: -1,
			DialTimeout: timeout, ReadTimeout: timeout, WriteTimeout: timeout,
		}))
	}
	c := &client{rs: redsync.New(pools...), ttl: lineproto.MS(req.TTLMS), tries: max(req.Tries, 1), retryDelay: lineproto.MS(req.RetryDelayMS), held: map[string]*redsync.Mutex{}}
	return c, lineproto.OK("redsync (client process)", map[string]any{"quorum": 5, "elapsed_from_request": true, "extends": true}, "redsync", "go-redis")
}

func (c *client) drift() time.Duration { return time.Duration(float64(c.ttl) * 0.01) }

func (c *client) Handle(req lineproto.Request) lineproto.Reply {
	// Answer within the harness's bound, with a margin for the reply.
	ctx, cancel := context.WithTimeout(context.Background(), lineproto.MS(req.TimeoutMS)*9/10)
	defer cancel()
	switch req.Op {
	case "ping":
		return lineproto.Reply{Result: "ok"}
	case "acquire":
		return c.acquire(ctx, req.Key)
	case "release", "extend":
		m, ok := c.held[req.Token]
		if !ok {
			return lineproto.Reply{Result: "unknown", Error: "the lease was acquired by another process"}
		}
		var held bool
		var err error
		if req.Op == "release" {
			held, err = m.UnlockContext(ctx)
			delete(c.held, req.Token)
		} else {
			held, err = m.ExtendContext(ctx)
		}
		switch {
		case held && req.Op == "extend":
			return lineproto.Reply{Result: "ok", ValidityMS: lineproto.Validity(c.ttl - c.drift())}
		case held:
			return lineproto.Reply{Result: "ok"}
		case err != nil:
			return lineproto.Reply{Result: "unknown", Error: lineproto.OneLine(err)}
		}
		return lineproto.Reply{Result: "not_held"}
	}
	return lineproto.Reply{Result: "error", Error: "unknown op " + req.Op}
}

func (c *client) acquire(ctx context.Context, key string) lineproto.Reply {
	token, err := lineproto.Token(base64.StdEncoding.EncodeToString)
	if err != nil {
		return lineproto.Reply{Result: "unknown", Error: err.Error()}
	}
	m := c.rs.NewMutex(key, redsync.WithExpiry(c.ttl), redsync.WithTries(1),
		redsync.WithGenValueFunc(func() (string, error) { return token, nil }))
	first := time.Now()
	for i := 0; i < c.tries; i++ {
		if i > 0 {
			d, err := lineproto.Backoff(c.retryDelay)
			if err != nil {
				return lineproto.Reply{Result: "unknown", Error: err.Error()}
			}
			if dl, _ := ctx.Deadline(); time.Now().Add(d).After(dl) {
				break
			}
			time.Sleep(d)
		}
		start := time.Now()
		err := m.LockContext(ctx)
		if err == nil {
			c.held[token] = m
			return lineproto.Reply{Result: "ok", Token: token, ValidityMS: lineproto.Validity(start.Sub(first) + c.ttl - c.drift())}
		}
		if !errors.Is(err, redsync.ErrFailed) {
			return lineproto.Reply{Result: "unknown", Error: lineproto.OneLine(err)}
		}
	}
	return lineproto.Reply{Result: "not_acquired", Error: "redsync: failed to acquire lock"}
}
