package cluster

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// cmdlinesWith returns "pid: command line" of every process of this host
// whose /proc/PID/cmdline, which every local user can read, contains
// secret.
func cmdlinesWith(tb testing.TB, secret string) []string {
	tb.Helper()
	paths, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil || len(paths) == 0 {
		tb.Fatalf("no /proc/*/cmdline: %v", err)
	}
	var found []string
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // exited meanwhile
		}
		if bytes.Contains(b, []byte(secret)) {
			found = append(found, filepath.Base(filepath.Dir(p))+": "+string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})))
		}
	}
	return found
}

// notPrivate returns what under dir group or others may access: folders
// not 0700, files not 0600 (0700 for an executable), each with its mode.
func notPrivate(tb testing.TB, dir string) []string {
	tb.Helper()
	var bad []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		} else if err != nil {
			return err
		}
		fi, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		} else if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink == 0 && fi.Mode().Perm()&0o077 != 0 {
			bad = append(bad, path+" "+fi.Mode().String())
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return bad
}

// checkPrivate fails the test if a password is on a command line or if
// anything in dir (the cluster's, given by WithDir: not dir itself) is
// open to group or others.
func checkPrivate(tb testing.TB, dir string, secrets ...string) {
	tb.Helper()
	for _, s := range secrets {
		if found := cmdlinesWith(tb, s); len(found) > 0 {
			tb.Errorf("a password on a command line: %q", found)
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) == 0 {
		tb.Fatalf("%s: %d entries, %v", dir, len(ents), err)
	}
	for _, e := range ents {
		if bad := notPrivate(tb, filepath.Join(dir, e.Name())); len(bad) > 0 {
			tb.Errorf("open to group or others: %q", bad)
		}
	}
}

// TestProcessNodesPrivate: the password is in no command line, the node
// folders are 0700 and every file in them 0600, also what redis-server
// writes itself (its log, the append-only files, a CONFIG REWRITE of its
// configuration), and also after a restart.
func TestProcessNodesPrivate(t *testing.T) {
	c := startCluster(t, 2, WithPersistence(false))
	ctx := t.Context()
	checkPrivate(t, c.Dir(), c.Password())
	for _, n := range c.Nodes() {
		// A change, or CONFIG REWRITE leaves the file alone.
		if err := n.Client().ConfigSet(ctx, "slowlog-max-len", "129").Err(); err != nil {
			t.Fatalf("%s: config set: %v", n.Name(), err)
		}
		if err := n.Client().ConfigRewrite(ctx).Err(); err != nil {
			t.Fatalf("%s: config rewrite: %v", n.Name(), err)
		}
	}
	checkPrivate(t, c.Dir(), c.Password())
	if err := c.Node(0).Restart(ctx); err != nil {
		t.Fatal(err)
	}
	checkPrivate(t, c.Dir(), c.Password())
	b, err := os.ReadFile(filepath.Join(c.Node(0).dir, nodeConf))
	if err != nil || !strings.Contains(string(b), c.Password()) {
		t.Errorf("%s has no requirepass: %v\n%s", nodeConf, err, b)
	}
}

// TestOddPassword: a password with quotes, backslashes, spaces, control
// and non-ASCII bytes reaches redis-server whole through its configuration
// file.
func TestOddPassword(t *testing.T) {
	pw := "a \"b\\c\td\x01é'#;"
	c := startCluster(t, 1, WithPassword(pw))
	if err := ping(t.Context(), c.Node(0).Addr(), pw); err != nil {
		t.Fatalf("PING with the password: %v", err)
	}
	if err := ping(t.Context(), c.Node(0).Addr(), pw[:len(pw)-1]); err == nil {
		t.Fatal("PING with a prefix of the password succeeded")
	}
}

// TestFailoverPrivate: the sentinels have a password of their own and
// refuse any client without it; neither password is on a command line;
// every folder of the topology is 0700 and every file 0600, also after
// the sentinels rewrote their sentinel.conf (at start-up and after
// SENTINEL SET), which they do with mode 0644 & ~umask.
func TestFailoverPrivate(t *testing.T) {
	f := startFailoverTB(t)
	ctx := t.Context()
	if f.SentinelPassword() == "" || f.SentinelPassword() == f.Password() {
		t.Fatalf("sentinel password %q, nodes' %q: want one of their own", f.SentinelPassword(), f.Password())
	}
	for _, a := range f.SentinelAddrs() {
		anon := newSentinelClient(a, "")
		if err := anon.Ping(ctx).Err(); err == nil || !strings.Contains(err.Error(), "NOAUTH") {
			t.Errorf("sentinel %s: PING without the password: %v, want NOAUTH", a, err)
		}
		if err := anon.Set(ctx, masterName, "quorum", "1").Err(); err == nil || !strings.Contains(err.Error(), "NOAUTH") {
			t.Errorf("sentinel %s: SENTINEL SET without the password: %v, want NOAUTH", a, err)
		}
		anon.Close()
	}
	// A change the sentinel saves by rewriting its sentinel.conf.
	s := f.sentinels[0]
	if err := s.client.Set(ctx, masterName, "quorum", "2").Err(); err != nil {
		t.Fatalf("SENTINEL SET with the password: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(s.dir, sentinelConf))
	if err != nil || !strings.Contains(string(b), "requirepass") || !strings.Contains(string(b), "auth-pass") {
		t.Fatalf("%s: %v\n%s", sentinelConf, err, b)
	}
	checkPrivate(t, f.c.dir, f.Password(), f.SentinelPassword())
}

// TestKeeper: a file or folder created open to others in a watched
// folder, or opened up later, is made private again.
func TestKeeper(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "before"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Join(dir, "before"), 0o644) // whatever the umask
	k, err := newKeeper()
	if err != nil {
		t.Fatal(err)
	}
	if err := k.watch(dir); err != nil {
		t.Fatal(err)
	}
	if bad := notPrivate(t, dir); len(bad) > 0 {
		t.Errorf("after watch: %q", bad)
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(sub, 0o755)
	// Wait until the keeper watches sub, then write into it.
	eventually(t, 5*time.Second, "sub to be made private", func() bool { return len(notPrivate(t, dir)) == 0 })
	for _, p := range []string{filepath.Join(dir, "after"), filepath.Join(sub, "deep")} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, 0o666)
	}
	// Renamed into place, as Redis rewrites its configuration.
	tmp := filepath.Join(t.TempDir(), "conf")
	if err := os.WriteFile(tmp, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(tmp, 0o644)
	if err := os.Rename(tmp, filepath.Join(dir, "conf")); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "new files to be made private", func() bool { return len(notPrivate(t, dir)) == 0 })
	if err := k.close(); err != nil {
		t.Fatal(err)
	}
}

// TestWritePrivate: a file rewritten by writePrivate is 0600 whatever its
// mode was.
func TestWritePrivate(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(p, 0o644)
	if err := writePrivate(p, []byte("new")); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	b, _ := os.ReadFile(p)
	if err != nil || fi.Mode().Perm() != 0o600 || string(b) != "new" {
		t.Errorf("after writePrivate: %v, %q, %v", fi.Mode(), b, err)
	}
	if ents, _ := os.ReadDir(filepath.Dir(p)); len(ents) != 1 {
		t.Errorf("temporary files left: %v", ents)
	}
}
