package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/go-redis/redis/v8"
	"github.com/go-redsync/redsync/v4"
	redsyncredis "github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v8"
)

// request is a line of the harness.
type request struct {
	ID           int64    `json:"id"`
	Op           string   `json:"op"`
	Addrs        []string `json:"addrs"`
	Password     string   `json:"password"`
	TTLMS        float64  `json:"ttl_ms"`
	NodeTimeout  float64  `json:"node_timeout_ms"`
	Tries        int      `json:"tries"`
	RetryDelayMS float64  `json:"retry_delay_ms"`
	Key          string   `json:"key"`
	Token        string   `json:"token"`
	TimeoutMS    float64  `json:"timeout_ms"`
}

// reply is a line to the harness.
type reply struct {
	ID         int64             `json:"id"`
	Result     string            `json:"result"`
	Error      string            `json:"error,omitempty"`
	Token      string            `json:"token,omitempty"`
	ValidityMS *float64          `json:"validity_ms,omitempty"`
	Protocol   int               `json:"protocol,omitempty"`
	Name       string            `json:"name,omitempty"`
	Language   string            `json:"language,omitempty"`
	Versions   map[string]string `json:"versions,omitempty"`
	Promises   map[string]any    `json:"promises,omitempty"`
}

func ms(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

// client is one process's lock.
type client struct {
	rs         *redsync.Redsync
	ttl        time.Duration
	tries      int
	retryDelay time.Duration
	held       map[string]*redsync.Mutex // by token
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 0, 4096), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	var c *client
	for in.Scan() {
		var req request
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			fmt.Fprintln(os.Stderr, "a request that is not JSON:", err)
			os.Exit(1)
		}
		var rep reply
		if req.Op == "hello" {
			c, rep = hello(req)
		} else if c == nil {
			rep = reply{Result: "error", Error: req.Op + " before the hello"}
		} else {
			rep = c.handle(req)
		}
		rep.ID = req.ID
		b, err := json.Marshal(rep)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		out.Write(append(b, '\n'))
		if err := out.Flush(); err != nil {
			os.Exit(1)
		}
	}
}

func hello(req request) (*client, reply) {
	if len(req.Addrs) == 0 {
		return nil, reply{Result: "error", Error: "no nodes in the hello"}
	}
	pools := make([]redsyncredis.Pool, len(req.Addrs))
	for i, a := range req.Addrs {
		pools[i] = goredis.NewPool(redis.NewClient(&redis.Options{
			Addr: a, Password: req.Password, MaxRetries: -1,
			DialTimeout: ms(req.NodeTimeout), ReadTimeout: ms(req.NodeTimeout), WriteTimeout: ms(req.NodeTimeout),
		}))
	}
	c := &client{rs: redsync.New(pools...), ttl: ms(req.TTLMS), tries: max(req.Tries, 1), retryDelay: ms(req.RetryDelayMS), held: map[string]*redsync.Mutex{}}
	return c, reply{
		Result: "ok", Protocol: 2, Name: "redsync (client process)", Language: "Go " + strings.TrimPrefix(runtime.Version(), "go"),
		Versions: versions(),
		Promises: map[string]any{"quorum": 5, "elapsed_from_request": true, "extends": true},
	}
}

// versions is the redsync version this program was built with.
func versions() map[string]string {
	out := map[string]string{}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if strings.Contains(m.Path, "redsync") || strings.Contains(m.Path, "go-redis") {
				out[m.Path] = m.Version
				if m.Replace != nil && m.Replace.Version != "" {
					out[m.Path] = m.Replace.Version
				}
			}
		}
	}
	return out
}

func (c *client) drift() time.Duration { return time.Duration(float64(c.ttl) * 0.01) }

func (c *client) handle(req request) reply {
	// Answer within the harness's bound, with a margin for the reply.
	ctx, cancel := context.WithTimeout(context.Background(), ms(req.TimeoutMS)*9/10)
	defer cancel()
	switch req.Op {
	case "ping":
		return reply{Result: "ok"}
	case "acquire":
		return c.acquire(ctx, req.Key)
	case "release", "extend":
		m, ok := c.held[req.Token]
		if !ok {
			return reply{Result: "unknown", Error: "the lease was acquired by another process"}
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
			v := float64(c.ttl-c.drift()) / float64(time.Millisecond)
			return reply{Result: "ok", ValidityMS: &v}
		case held:
			return reply{Result: "ok"}
		case err != nil:
			return reply{Result: "unknown", Error: oneLine(err)}
		}
		return reply{Result: "not_held"}
	}
	return reply{Result: "error", Error: "unknown op " + req.Op}
}

func (c *client) acquire(ctx context.Context, key string) reply {
	token, err := randomToken()
	if err != nil {
		return reply{Result: "unknown", Error: err.Error()}
	}
	m := c.rs.NewMutex(key, redsync.WithExpiry(c.ttl), redsync.WithTries(1),
		redsync.WithGenValueFunc(func() (string, error) { return token, nil }))
	first := time.Now()
	for i := 0; i < c.tries; i++ {
		if i > 0 {
			d, err := backoff(c.retryDelay)
			if err != nil {
				return reply{Result: "unknown", Error: err.Error()}
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
			v := float64(start.Sub(first)+c.ttl-c.drift()) / float64(time.Millisecond)
			return reply{Result: "ok", Token: token, ValidityMS: &v}
		}
		if !errors.Is(err, redsync.ErrFailed) {
			return reply{Result: "unknown", Error: oneLine(err)}
		}
	}
	return reply{Result: "not_acquired", Error: "redsync: failed to acquire lock"}
}

// backoff is a delay drawn from [d/2, d).
func backoff(d time.Duration) (time.Duration, error) {
	if d <= 1 {
		return 0, nil
	}
	n, err := rand.Int(rand.Reader, big.NewInt(int64(d/2)))
	if err != nil {
		return 0, err
	}
	return d/2 + time.Duration(n.Int64()), nil
}

func randomToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

func oneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }
