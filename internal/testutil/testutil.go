package testutil

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/Shopify/toxiproxy/v2"
	"github.com/locktorture/locktorture/cluster"
	"github.com/locktorture/locktorture/cluster/docker"
	"github.com/locktorture/locktorture/internal/procstat"
	"github.com/locktorture/locktorture/internal/redisopt"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

// Cluster opens the cluster of spec with opts (its nodes under the test's
// temporary folder unless opts name one) and closes it when the test ends,
// failing the test on an error; on the docker backend it first makes sure of
// the image (DockerImage).
func Cluster(tb testing.TB, spec cluster.Spec, opts ...cluster.Option) *cluster.Cluster {
	tb.Helper()
	if spec.Backend == cluster.BackendDocker && spec.Image == "" {
		spec.Image = DockerImage(tb)
	}
	c, err := cluster.Open(context.Background(), spec, append([]cluster.Option{cluster.WithDir(tb.TempDir())}, opts...)...)
	if err != nil {
		tb.Fatalf("open the cluster: %v", err)
	}
	tb.Cleanup(func() {
		if err := c.Close(); err != nil {
			tb.Errorf("close the cluster: %v", err)
		}
	})
	return c
}

var (
	imageOnce sync.Once
	imageErr  error
)

// DockerImage returns cluster.DefaultImage, built once per test binary
// (docker build's cache makes a rebuild cheap). It skips the test only when
// no Docker engine answers; a failed build fails it.
func DockerImage(tb testing.TB) string {
	tb.Helper()
	if err := docker.Ping(tb.Context()); err != nil {
		if errors.Is(err, cluster.ErrNoDocker) {
			tb.Skipf("docker backend not tested: %v", err)
		}
		tb.Fatal(err)
	}
	imageOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		imageErr = cluster.BuildImage(ctx, cluster.DefaultImage)
	})
	if imageErr != nil {
		tb.Fatalf("make redis-image: %v", imageErr)
	}
	return cluster.DefaultImage
}

// MyContainers lists, with their state, the docker backend's containers this
// test process made that are left.
func MyContainers(tb testing.TB) []string {
	tb.Helper()
	cs, err := docker.Containers(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	var names []string
	for _, c := range cs {
		if c.Mine {
			names = append(names, c.Name+" ("+c.State+")")
		}
	}
	return names
}

// Eventually polls cond every few milliseconds until it returns nil, failing
// the test with what and cond's last error after within: a deadline for a
// loaded machine, never a timing the test asserts.
func Eventually(tb testing.TB, within time.Duration, what string, cond func() error) {
	tb.Helper()
	deadline := time.Now().Add(within)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("gave up waiting for %s within %v: %v", what, within, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Until is Eventually for a condition that holds or not.
func Until(tb testing.TB, within time.Duration, what string, cond func() bool) {
	tb.Helper()
	Eventually(tb, within, what, func() error {
		if cond() {
			return nil
		}
		return errors.New("not yet")
	})
}

// Context returns a context that ends after d or with the test.
func Context(tb testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(tb.Context(), d)
	tb.Cleanup(cancel)
	return ctx
}

// Client returns a go-redis client of addr with the module's options
// (internal/redisopt) and 2 s timeouts, closed when the test ends.
func Client(tb testing.TB, addr, password string) *redis.Client {
	tb.Helper()
	rc := NewClient(addr, password)
	tb.Cleanup(func() { rc.Close() })
	return rc
}

// NewClient is Client without the clean-up, for a client of one command.
func NewClient(addr, password string) *redis.Client {
	o := redisopt.Options(addr, password)
	o.DialTimeout, o.ReadTimeout, o.WriteTimeout = 2*time.Second, 2*time.Second, 2*time.Second
	return redis.NewClient(o)
}

// Running reports whether pid is neither gone nor a zombie.
func Running(pid int) bool {
	f, err := procstat.Stat(pid)
	if err != nil {
		return !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
	}
	return len(f) == 0 || f[0] != "Z"
}

// Stopped reports whether pid is stopped by a signal (state T).
func Stopped(pid int) bool {
	f, err := procstat.Stat(pid)
	return err == nil && len(f) > 0 && f[0] == "T"
}

// Children returns the pids whose parent is ppid and whose command line holds
// match.
func Children(ppid int, match string) []int {
	var kids []int
	for pid, parent := range parents() {
		if parent == ppid {
			kids = append(kids, pid)
		}
	}
	return matching(kids, match)
}

// DescendantsMatching returns the processes below pid whose command line
// holds match.
func DescendantsMatching(pid int, match string) []int {
	return matching(Descendants(pid), match)
}

// matching returns the pids whose command line holds match.
func matching(pids []int, match string) []int {
	var out []int
	for _, p := range pids {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p))
		if strings.Contains(string(cmdline), match) {
			out = append(out, p)
		}
	}
	return out
}

// Descendants returns the pids of the live processes below pid, at any depth
// (zombies left out).
func Descendants(pid int) []int {
	kids := map[int][]int{}
	for p, parent := range parents() {
		kids[parent] = append(kids[parent], p)
	}
	var out []int
	for todo := kids[pid]; len(todo) > 0; {
		p := todo[0]
		todo = append(todo[1:], kids[p]...)
		if Running(p) {
			out = append(out, p)
		}
	}
	return out
}

// parents maps every process's pid to its parent's, from /proc.
func parents() map[int]int {
	entries, _ := os.ReadDir("/proc")
	out := map[int]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f, err := procstat.Stat(pid); err == nil && len(f) >= 2 {
			if ppid, err := strconv.Atoi(f[1]); err == nil {
				out[pid] = ppid
			}
		}
	}
	return out
}

// RawControl returns the first character of s, but a newline, that a terminal
// would act on (a control character, an invalid byte), if any: text from a
// history must never be printed as.
func RawControl(s string) (rune, bool) {
	for _, r := range s {
		if r != '\n' && (r == utf8.RuneError || !unicode.IsPrint(r)) {
			return r, true
		}
	}
	return 0, false
}

// Remote is nodes and a toxiproxy server that a test runs as if someone else
// ran them elsewhere, for the external backend.
type Remote struct {
	// Addrs are the nodes' own addresses (DirectAddr), in order; URL the
	// toxiproxy API's.
	Cluster   *cluster.Cluster
	Addrs     []string
	Toxiproxy *toxiproxy.ApiServer
	URL       string
}

// External starts n nodes and a toxiproxy server with its HTTP API, stopped
// when the test ends.
func External(tb testing.TB, n int) Remote {
	tb.Helper()
	r := Remote{Cluster: Cluster(tb, cluster.Spec{Nodes: n})}
	r.Toxiproxy = toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	ts := httptest.NewServer(r.Toxiproxy.Routes())
	tb.Cleanup(ts.Close)
	r.URL = ts.URL
	for _, nd := range r.Cluster.Nodes() {
		r.Addrs = append(r.Addrs, nd.DirectAddr())
	}
	return r
}

// Value returns key's value on n, read directly, "" when absent; an error
// fails the test.
func Value(tb testing.TB, n *cluster.Node, key string) string {
	tb.Helper()
	v, err := n.Client().Get(tb.Context(), key).Result()
	if errors.Is(err, redis.Nil) {
		return ""
	}
	if err != nil {
		tb.Fatalf("GET %q on %s: %v", key, n.Name(), err)
	}
	return v
}
