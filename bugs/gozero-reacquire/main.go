package main

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/zeromicro/go-zero/core/logx"
	"github.com/zeromicro/go-zero/core/stores/redis"
)

// request is a line of the harness.
type request struct {
	ID           int64    `json:"id"`
	Op           string   `json:"op"`
	Addrs        []string `json:"addrs"`
	Password     string   `json:"password"`
	TTLMS        float64  `json:"ttl_ms"`
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
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 0, 4096), 1<<20)
	out := bufio.NewWriter(os.NewFile(uintptr(protoFD), "protocol"))
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
	ttl := ms(req.TTLMS)
	if ttl <= 0 {
		return nil, reply{Result: "error", Error: "a TTL of at least 1ms"}
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
		tries: max(req.Tries, 1), retryDelay: ms(req.RetryDelayMS), held: map[string]*redis.RedisLock{}}
	return c, reply{
		Result: "ok", Protocol: 2, Name: "go-zero RedisLock (client process)", Language: "Go " + strings.TrimPrefix(runtime.Version(), "go"),
		Versions: versions(),
		Promises: map[string]any{"elapsed_from_request": true, "extends": true},
	}
}

// versions is the go-zero version this program was built with.
func versions() map[string]string {
	out := map[string]string{}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if strings.Contains(m.Path, "go-zero") || strings.Contains(m.Path, "go-redis") {
				out[m.Path] = m.Version
				if m.Replace != nil && m.Replace.Version != "" {
					out[m.Path] = m.Replace.Version
				}
			}
		}
	}
	return out
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

func (c *client) handle(req request) reply {
	deadline := time.Now().Add(ms(req.TimeoutMS) * 9 / 10)
	switch req.Op {
	case "ping":
		return reply{Result: "ok"}
	case "acquire":
		return c.acquire(deadline, req.Key)
	case "release", "extend":
		l, ok := c.held[req.Token]
		if !ok {
			return reply{Result: "unknown", Error: "the lease was acquired by another process"}
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
			return reply{Result: "unknown", Error: "no answer in time"}
		case err != nil:
			return reply{Result: "unknown", Error: oneLine(err)}
		case !held:
			return reply{Result: "not_held"}
		case req.Op == "extend":
			// The TTL, counted from before the call (validity_ms).
			v := float64(c.ttl) / float64(time.Millisecond)
			return reply{Result: "ok", ValidityMS: &v}
		}
		return reply{Result: "ok"}
	}
	return reply{Result: "error", Error: "unknown op " + req.Op}
}

func (c *client) acquire(deadline time.Time, key string) reply {
	token, err := randomToken()
	if err != nil {
		return reply{Result: "unknown", Error: err.Error()}
	}
	first := time.Now()
	for i := 0; i < c.tries; i++ {
		if i > 0 {
			d, err := backoff(c.retryDelay)
			if err != nil {
				return reply{Result: "unknown", Error: err.Error()}
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
			return reply{Result: "unknown", Error: "no answer in time"}
		case err != nil:
			return reply{Result: "unknown", Error: oneLine(err)}
		case ok:
			c.held[token] = l
			v := float64(start.Sub(first)+c.ttl) / float64(time.Millisecond)
			return reply{Result: "ok", Token: token, ValidityMS: &v}
		}
	}
	return reply{Result: "not_acquired", Error: "go-zero: the key is held"}
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
	return hex.EncodeToString(b), nil
}

func oneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }
