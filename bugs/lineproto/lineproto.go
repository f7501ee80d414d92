// Package lineproto is the client side of the line protocol
// (locks/clients/PROTOCOL.md) for the Go clients of bugs/, as
// bugs/lineproto.py is for the Python ones: the request and reply lines,
// the loop that reads one and answers it, and the small helpers every
// client needs (milliseconds, a token, a retry's delay, an error on one
// line, the versions a binary was built with). A client supplies the
// hello and the operations of its lock.
//
// It is a module of its own that imports the standard library only, so
// each bug module requires it (a replace to this folder) without taking
// in anything else.
package lineproto

import (
	"bufio"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
)

// Request is a line of the harness.
type Request struct {
	ID            int64    `json:"id"`
	Op            string   `json:"op"`
	Addrs         []string `json:"addrs"`
	Password      string   `json:"password"`
	TTLMS         float64  `json:"ttl_ms"`
	NodeTimeoutMS float64  `json:"node_timeout_ms"`
	Tries         int      `json:"tries"`
	RetryDelayMS  float64  `json:"retry_delay_ms"`
	Key           string   `json:"key"`
	Token         string   `json:"token"`
	TimeoutMS     float64  `json:"timeout_ms"`
}

// Reply is a line to the harness.
type Reply struct {
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

// Protocol is the version of the protocol these clients speak.
const Protocol = 2

// Client is a lock after its hello: it answers every other request.
type Client interface {
	Handle(Request) Reply
}

// Hello answers the hello: the client for the rest of the session, or
// nil and an error reply.
type Hello func(Request) (Client, Reply)

// Serve reads requests from in, one a line, and writes one reply a line
// to out, flushed, until in ends: hello answers the hello, the client it
// returns every later request. A line that is not JSON, or a reply that
// cannot be written, ends it with an error.
func Serve(in io.Reader, out io.Writer, hello Hello) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	w := bufio.NewWriter(out)
	var c Client
	for sc.Scan() {
		var req Request
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			return fmt.Errorf("a request that is not JSON: %w", err)
		}
		var rep Reply
		switch {
		case req.Op == "hello":
			c, rep = hello(req)
		case c == nil:
			rep = Reply{Result: "error", Error: req.Op + " before the hello"}
		default:
			rep = c.Handle(req)
		}
		rep.ID = req.ID
		b, err := json.Marshal(rep)
		if err != nil {
			return err
		}
		w.Write(append(b, '\n'))
		if err := w.Flush(); err != nil {
			return err
		}
	}
	return sc.Err()
}

// OK is the hello's reply of a lock named name: the protocol, Go's
// version, the versions of the modules whose path holds one of libs, and
// its promises.
func OK(name string, promises map[string]any, libs ...string) Reply {
	return Reply{Result: "ok", Protocol: Protocol, Name: name, Language: "Go " + strings.TrimPrefix(runtime.Version(), "go"),
		Versions: Versions(libs...), Promises: promises}
}

// Versions are the versions this binary was built with of every module
// whose path holds one of libs (a replace's version where there is one).
func Versions(libs ...string) map[string]string {
	out := map[string]string{}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return out
	}
	for _, m := range bi.Deps {
		for _, lib := range libs {
			if strings.Contains(m.Path, lib) {
				out[m.Path] = m.Version
				if m.Replace != nil && m.Replace.Version != "" {
					out[m.Path] = m.Replace.Version
				}
			}
		}
	}
	return out
}

// MS is a protocol's milliseconds as a duration.
func MS(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

// Validity is a duration as a reply's validity_ms.
func Validity(d time.Duration) *float64 {
	v := float64(d) / float64(time.Millisecond)
	return &v
}

// Token is 16 random bytes, written by encode (hex or base64, as the
// library would write its own).
func Token(encode func([]byte) string) (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return encode(b), nil
}

// Backoff is a delay drawn from [d/2, d).
func Backoff(d time.Duration) (time.Duration, error) {
	if d <= 1 {
		return 0, nil
	}
	n, err := rand.Int(rand.Reader, big.NewInt(int64(d/2)))
	if err != nil {
		return 0, err
	}
	return d/2 + time.Duration(n.Int64()), nil
}

// OneLine is err's text on one line.
func OneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }

// Unknown is the reply of an operation whose outcome is unknown.
func Unknown(err error) Reply { return Reply{Result: "unknown", Error: OneLine(err)} }
