package locks

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// The library adapters' evidence (evidence.go says why a hook): libHook
// knows the library's commands by shape, a SET … NX is an acquire and a
// script is known by its SHA1 (EVALSHA's, or EVAL's source hashed, the
// fallback after NOSCRIPT); the context says which call (libCall).

type libRole uint8

const (
	roleNone    libRole = iota // not a command of the lock: not reported
	roleAcquire                // sets the key if free (SET NX, redislock's obtain script)
	roleDelete                 // compare-and-delete
	roleExtend                 // compare-and-pexpire
)

// The pinned libraries' scripts by SHA1, held to them by TestEvidence
// (which flushes the script caches, so that both EVAL and EVALSHA run).
var (
	// redsync v4.18.1 (scripts.go): deleteScript, touchScript,
	// touchWithSetNXScript.
	redsyncScripts = map[string]libRole{
		"e950836ed1e694540c503ef9972b8de518044d3b": roleDelete,
		"d75bb8b5bd13532ddedd17762e772346e39b321e": roleExtend,
		"b6b55c439e02c6f52ffb8be7ec8c0d0ac816ea79": roleExtend,
	}
	// redislock v0.9.4 (redislock.go): luaObtain, luaRelease, luaRefresh;
	// luaPTTL (Lock.TTL) changes nothing and is not reported.
	redislockScripts = map[string]libRole{
		"80a1b5f2cfccec3b7119ba7721d2127682b691a7": roleAcquire,
		"cf0e94b2e9ffc7e04395cf88f7583fc309985910": roleDelete,
		"a7aba3bc5d6e99b3003da8b9d80a63b9f4092ecf": roleExtend,
	}
)

type libOp uint8

const (
	opAcquire libOp = iota + 1
	opRelease
	opExtend
)

// libCall is one traced adapter call: its method, and each node's acquire
// commands answered so far, which number the attempts.
type libCall struct {
	ev *Evidence
	op libOp

	mu    sync.Mutex
	tries map[int]int // node → acquire commands answered
}

type libCallKey struct{}

// libTrace marks ctx as a call of op, if it carries an Evidence.
func libTrace(ctx context.Context, op libOp) context.Context {
	ev := ContextEvidence(ctx)
	if ev == nil {
		return ctx
	}
	return context.WithValue(ctx, libCallKey{}, &libCall{ev: ev, op: op, tries: map[int]int{}})
}

// libHook is the go-redis hook of node's client in a library adapter.
type libHook struct {
	node    int
	scripts map[string]libRole
}

func (h libHook) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessPipelineHook: the libraries send no pipelines.
func (h libHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// ProcessHook reports the answers to a traced call's commands.
func (h libHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if call, _ := ctx.Value(libCallKey{}).(*libCall); call != nil {
			// go-redis sets cmd's error after the hooks: use err.
			call.observe(h.node, roleOf(cmd, h.scripts), cmd, err)
		}
		return err
	}
}

func roleOf(cmd redis.Cmder, scripts map[string]libRole) libRole {
	args := cmd.Args()
	switch cmd.Name() {
	case "set":
		for _, a := range args[min(3, len(args)):] {
			if s, ok := a.(string); ok && strings.EqualFold(s, "nx") {
				return roleAcquire
			}
		}
	case "evalsha":
		if len(args) > 1 {
			if sha, ok := args[1].(string); ok {
				return scripts[strings.ToLower(sha)]
			}
		}
	case "eval":
		if len(args) > 1 {
			if src, ok := args[1].(string); ok {
				sum := sha1.Sum([]byte(src))
				return scripts[hex.EncodeToString(sum[:])]
			}
		}
	}
	return roleNone
}

// observe reports node's answer to cmd if its role belongs to the call:
// an acquire is the node's next attempt, a delete in an Acquire the
// clean-up of its last. NOSCRIPT is no answer: the EVAL that follows is.
func (c *libCall) observe(node int, role libRole, cmd redis.Cmder, err error) {
	if role == roleNone || redis.HasErrorPrefix(err, "NOSCRIPT") {
		return
	}
	a := NodeAnswer{Node: node, Answer: answerOf(yes(cmd), err), Err: errOf(err)}
	switch {
	case c.op == opAcquire && role == roleAcquire:
		c.mu.Lock()
		c.tries[node]++
		a.Attempt = c.tries[node]
		c.mu.Unlock()
	case c.op == opAcquire && role == roleDelete:
		c.mu.Lock()
		a.Attempt, a.Cleanup = c.tries[node], true
		c.mu.Unlock()
	case c.op == opRelease && role == roleDelete, c.op == opExtend && role == roleExtend:
		a.Attempt = 1
	default:
		return
	}
	c.ev.add(a)
}

// yes reports whether cmd's reply says the node did it: OK or true, or a
// positive integer (redsync's delete answers 0 or −1 for no).
func yes(cmd redis.Cmder) bool {
	switch c := cmd.(type) {
	case *redis.BoolCmd:
		return c.Val()
	case *redis.StatusCmd:
		return c.Val() == "OK"
	case *redis.IntCmd:
		return c.Val() > 0
	case *redis.Cmd:
		switch v := c.Val().(type) {
		case string:
			return v == "OK"
		case int64:
			return v > 0
		}
	}
	return false
}
