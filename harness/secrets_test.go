package harness_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locktorture/locktorture/checker"
	"github.com/locktorture/locktorture/harness"
	"github.com/redis/go-redis/v9"
)

// confValue returns the first value of directive name in the Redis
// configuration file at path (unquoted), or "".
func confValue(path, name string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	for s := bufio.NewScanner(f); s.Scan(); {
		if v, ok := strings.CutPrefix(s.Text(), name+" "); ok {
			return strings.Trim(v, `"`)
		}
	}
	return ""
}

// leaks returns, for a run folder, every way another local user could get
// at one of the secrets: a process whose /proc/PID/cmdline (readable by
// everyone) holds one, and any folder, or file, under dir that group or
// others may access — dir itself included.
func leaks(dir string, secrets []string) []string {
	var found []string
	paths, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	if len(paths) == 0 {
		return []string{"no /proc/*/cmdline to look at"}
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // exited meanwhile
		}
		for _, s := range secrets {
			if bytes.Contains(b, []byte(s)) {
				found = append(found, fmt.Sprintf("a password in %s: %q", p, bytes.ReplaceAll(b, []byte{0}, []byte{' '})))
			}
		}
	}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // a temporary file renamed meanwhile
		} else if err != nil {
			return err
		}
		fi, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		} else if err != nil {
			return err
		}
		if fi.Mode().Perm()&0o077 != 0 {
			found = append(found, fmt.Sprintf("%s is %v", path, fi.Mode()))
		}
		return nil
	})
	if err != nil {
		found = append(found, err.Error())
	}
	return found
}

// watchSecrets runs cfg and, while it runs (every progress tick), looks for
// leaks of the passwords it finds in the run's configuration files, and
// calls during for further checks. It returns the run's summary, its
// checked history, every leak seen, and how many looks found the
// passwords to look for.
func watchSecrets(t *testing.T, cfg harness.Config, during func(dir string) error) (harness.Summary, checker.Result, []string, int) {
	t.Helper()
	cfg.Dir = filepath.Join(t.TempDir(), "run")
	var (
		mu    sync.Mutex
		found []string
		looks int
	)
	look := func() {
		secrets := []string{confValue(filepath.Join(cfg.Dir, "nodes", "n1", "redis.conf"), "requirepass")}
		if cfg.Topology == "failover" {
			secrets = append(secrets, confValue(filepath.Join(cfg.Dir, "nodes", "s1", "sentinel.conf"), "requirepass"))
		}
		for _, s := range secrets {
			if len(s) < 16 {
				return // not started yet
			}
		}
		l := leaks(cfg.Dir, secrets)
		if during != nil {
			if err := during(cfg.Dir); err != nil {
				l = append(l, err.Error())
			}
		}
		mu.Lock()
		defer mu.Unlock()
		found = append(found, l...)
		looks++
	}
	sum, err := harness.Run(t.Context(), cfg, harness.WithProgress(100*time.Millisecond, func(harness.Progress) { look() }))
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	_, res := checked(t, sum.HistoryPath)
	mu.Lock()
	defer mu.Unlock()
	return sum, res, found, looks
}

// TestRunKeepsSecrets: while a process-backend run and a failover run go
// on, no password is on any process's command line and nothing under the
// run folder is open to group or others (every folder 0700, every file
// 0600); a sentinel refuses a connection without its password (NOAUTH)
// while the lock clients, which have it, acquire through the sentinels.
func TestRunKeepsSecrets(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  harness.Config
	}{
		{"process", harness.Config{Workload: harness.Workload{Lock: "setnx", Clients: 4, Keys: 2, Duration: 2 * time.Second, TTL: time.Second, Seed: 3}, Cluster: harness.Cluster{Persistence: true}}},
		{"failover", harness.Config{Workload: harness.Workload{Lock: "setnx", Clients: 4, Keys: 2, Duration: 3 * time.Second, TTL: time.Second, Seed: 3}, Cluster: harness.Cluster{Topology: "failover"}}},
	} {
		cfg := tc.cfg
		t.Run(tc.name, func(t *testing.T) {
			var during func(string) error
			if cfg.Topology == "failover" {
				during = sentinelRefuses
			}
			_, res, found, looks := watchSecrets(t, cfg, during)
			if looks == 0 {
				t.Fatal("the run ended before the passwords could be looked for")
			}
			t.Logf("%d looks during the run", looks)
			for _, f := range dedup(found) {
				t.Error(f)
			}
			if res.Stats.AcquireOK == 0 {
				t.Errorf("no acquire succeeded: the lock clients could not use the nodes (or the sentinels): %+v", res.Stats)
			}
		})
	}
}

// sentinelRefuses checks each sentinel of the run in dir: a client without
// its password gets NOAUTH (for PING and for SENTINEL SET); one with it
// gets an answer.
func sentinelRefuses(dir string) error {
	var errs []error
	for _, s := range []string{"s1", "s2", "s3"} {
		conf := filepath.Join(dir, "nodes", s, "sentinel.conf")
		port, pw := confValue(conf, "port"), confValue(conf, "requirepass")
		if port == "" || pw == "" {
			errs = append(errs, fmt.Errorf("%s: no port or requirepass in %s", s, conf))
			continue
		}
		addr := net.JoinHostPort("127.0.0.1", port)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		anon := redis.NewSentinelClient(&redis.Options{Addr: addr, Protocol: 2, DisableIdentity: true, MaxRetries: -1})
		if err := anon.Ping(ctx).Err(); err == nil || !strings.Contains(err.Error(), "NOAUTH") {
			errs = append(errs, fmt.Errorf("sentinel %s: PING without its password: %v, want NOAUTH", s, err))
		}
		if err := anon.Set(ctx, "locktorture", "quorum", "1").Err(); err == nil || !strings.Contains(err.Error(), "NOAUTH") {
			errs = append(errs, fmt.Errorf("sentinel %s: SENTINEL SET without its password: %v, want NOAUTH", s, err))
		}
		anon.Close()
		authed := redis.NewSentinelClient(&redis.Options{Addr: addr, Password: pw, Protocol: 2, DisableIdentity: true, MaxRetries: -1})
		if _, err := authed.GetMasterAddrByName(ctx, "locktorture").Result(); err != nil {
			errs = append(errs, fmt.Errorf("sentinel %s with its password: %v", s, err))
		}
		authed.Close()
		cancel()
	}
	return errors.Join(errs...)
}

func dedup(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
