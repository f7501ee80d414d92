package locks

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// The per-node evidence of the library adapters (redsync, redislock).
// They cannot change the library, but they build every node's go-redis
// client, and the library sends each command with the caller's context:
// a go-redis hook on each node's client (libHook) sees the command, its
// reply and, through the context, the call it belongs to (libCall). It
// knows the library's commands by their shape: a SET … NX is an acquire,
// and a script is known by its SHA1 (EVALSHA sends it; for EVAL, the
// library's fallback after NOSCRIPT, the hook hashes the source).

// libRole is what a library command does.
type libRole uint8

const (
	roleNone    libRole = iota // not a command of the lock: not reported
	roleAcquire                // sets the key if free (SET NX, redislock's obtain script)
	roleDelete                 // compare-and-delete
	roleExtend                 // compare-and-pexpire
)

// The scripts of the pinned library versions, by SHA1. TestEvidence holds
// them to the libraries: it flushes the nodes' script caches, so that each
// script's first run goes through EVAL (hashed here) and the later ones
// through EVALSHA, and an unknown script would leave its answer out.
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

// libOp is the Lock method a libCall belongs to.
type libOp uint8

const (
	opAcquire libOp = iota + 1
	opRelease
	opExtend
)

// libCall is one adapter call whose context carries an Evidence: which
// method it is, and how many acquire commands each node has answered so
// far in it, which numbers the attempts.
type libCall struct {
	ev *Evidence
	op libOp

	mu    sync.Mutex
	tries map[int]int // node → acquire commands answered
}

type libCallKey struct{}

// libTrace returns ctx marked as a call of op, if it carries an Evidence;
// else ctx as is, and the hooks report nothing.
func libTrace(ctx context.Context, op libOp) context.Context {
	ev := ContextEvidence(ctx)
	if ev == nil {
		return ctx
	}
	return context.WithValue(ctx, libCallKey{}, &libCall{ev: ev, op: op, tries: map[int]int{}})
}

// libHook is the go-redis hook of node Node's client in a library
// adapter; scripts names the library's scripts.
type libHook struct {
	node    int
	scripts map[string]libRole
}

var _ redis.Hook = libHook{}

// DialHook implements redis.Hook.
func (h libHook) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessPipelineHook implements redis.Hook. The libraries send no
// pipelines.
func (h libHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// ProcessHook implements redis.Hook: it reports the answer of every
// command of a traced call that the library sends to acquire, delete or
// extend.
func (h libHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if call, _ := ctx.Value(libCallKey{}).(*libCall); call != nil {
			// go-redis sets cmd's error only after the hooks return: the
			// reply's error is err.
			call.observe(h.node, roleOf(cmd, h.scripts), cmd, err)
		}
		return err
	}
}

// roleOf returns what cmd does, by its shape or its script's SHA1.
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

// observe reports node's answer to cmd, a command of role that ended
// with err, if the role belongs to the call: an acquire command is the
// next attempt on the node, a delete in an Acquire is the clean-up of the
// node's last attempt. A NOSCRIPT error is not an answer: the library
// sends the script again with EVAL, which is.
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

// yes reports whether cmd's reply says the node did it: OK or true for a
// SET NX and redislock's obtain, a positive integer for the scripts (1
// deleted or extended; redsync's delete answers 0 for another token and
// −1 for no key).
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
