package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/locktorture/locktorture/cluster/docker"
	"github.com/locktorture/locktorture/internal/lazyfs"
	"github.com/locktorture/locktorture/internal/testutil"
)

// killsEnv sets how many times TestSIGKILLLeavesNothing kills each kind
// of run: 3 by default (one per stage, what make test runs), 20 for the full script
// (make kill). killSeedEnv repeats a draw of the moments (the test logs
// the seed it used).
const (
	killsEnv    = "LOCKTORTURE_KILLS"
	killSeedEnv = "LOCKTORTURE_KILL_SEED"
)

// The moments a kill is dealt at, in turn: while the run starts (its
// nodes, proxies, disks and clients coming up), while it runs (clients
// acquiring), while a fault strikes or heals (after a fault began, within
// a fault's span).
const (
	stageStarting = "starting"
	stageRunning  = "running"
	stageHealing  = "healing"
)

// killCase is one kind of run the script kills.
type killCase struct {
	name string
	args []string
	// skip says why this machine cannot run the kind, "" when it can.
	skip func(t *testing.T) string
}

// TestSIGKILLLeavesNothing is the SIGKILL script: it starts torture run
// for each backend and topology — processes, multi-node RedLock, Redis
// Cluster, failover with sentinels, power loss on FUSE disks, client
// processes stopped by client-stop, etcd members, the docker backend — and kills it with
// SIGKILL at a random moment of each stage (starting, running, healing).
// After each kill: no process of the run is left (nodes, sentinels,
// clients, stopped ones included); what the dying process cannot remove
// (a FUSE mount, a container) the next start removes, by its owner mark,
// and says so; every history left behind checks with torture check. The
// count per kind is killsEnv's (3 by default, 20 in make kill).
func TestSIGKILLLeavesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills torture runs")
	}
	kills := 3
	if v := os.Getenv(killsEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			t.Fatalf("%s=%q: want a count from 1 to 1000", killsEnv, v)
		}
		kills = n
	}
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv(killSeedEnv); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: want a number", killSeedEnv, v)
		}
		seed = n
	}
	t.Logf("%d kills per kind, moments drawn from seed %d (%s=%d repeats them)", kills, seed, killSeedEnv, seed)
	always := func(*testing.T) string { return "" }
	for i, kc := range []killCase{
		{"process", []string{"--lock", "setnx", "--nemesis", "kill,pause"}, always},
		{"redlock", []string{"--lock", "redlock", "--nemesis", "kill,partition"}, always},
		{"cluster", []string{"--lock", "setnx", "--topology", "cluster"}, always},
		{"failover", []string{"--lock", "setnx", "--topology", "failover", "--nemesis", "failover"}, always},
		{"power-loss", []string{"--lock", "setnx", "--nemesis", "power-loss", "--appendfsync", "everysec"}, func(*testing.T) string {
			if err := lazyfs.Available(); err != nil {
				return err.Error()
			}
			return ""
		}},
		{"client-process", []string{"--lock", "setnx-watchdog", "--client-process", "--nemesis", "client-stop", "--clients", "3"}, always},
		{"etcd", []string{"--lock", "etcd-mutex", "--nemesis", "kill,partition"}, func(*testing.T) string {
			if _, err := exec.LookPath("etcd"); err != nil {
				return err.Error()
			}
			return ""
		}},
		{"docker", []string{"--lock", "setnx", "--backend", "docker", "--nemesis", "kill,pause"}, func(t *testing.T) string {
			if err := docker.Ping(t.Context()); err != nil {
				return err.Error()
			}
			testutil.DockerImage(t)
			return ""
		}},
	} {
		t.Run(kc.name, func(t *testing.T) {
			t.Parallel()
			if why := kc.skip(t); why != "" {
				t.Skipf("%s not killed here: %s", kc.name, why)
			}
			rng := rand.New(rand.NewPCG(seed, uint64(i)))
			var prev *victim
			stages, left, named := map[string]int{}, 0, 0
			count := func(l, n bool) {
				if l {
					left++
				}
				if n {
					named++
				}
			}
			for k := range kills {
				stage := []string{stageStarting, stageRunning, stageHealing}[(k+int(seed%3))%3]
				if kc.name == "cluster" && stage == stageHealing {
					stage = stageRunning // no fault: nothing heals
				}
				v := startVictim(t, kc.args)
				if prev != nil {
					left, named := prev.cleanedBy(t, v)
					count(left, named)
				}
				v.killAt(t, rng, stage)
				v.leavesNoProcess(t)
				v.mounts, v.boxes = v.leftovers(t)
				v.historyChecks(t)
				stages[stage]++
				prev = v
			}
			// The start after the last kill: a short run to its end,
			// which removes what the last one left and says so.
			if len(prev.mounts)+len(prev.boxes) > 0 {
				v := startVictim(t, append(kc.args, "--duration", "3s", "--nemesis-interval", "1s"))
				count(prev.cleanedBy(t, v))
				v.wait(t)
			}
			if left > 0 && named == 0 {
				t.Errorf("%d kills left a mount or container; the next start removed none of them saying so", left)
			}
			t.Logf("%s: %d kills (%v): no process left behind, every history checks; %d left a mount or container, all removed by the next start, %d of them named by it (the others removed first by another run of this machine)", kc.name, kills, stages, left, named)
		})
	}
}

// victim is one torture run the script kills: the test binary as torture
// (asTortureEnv), its stderr and stdout in a file, its run folder in an
// --out of its own.
type victim struct {
	cmd     *exec.Cmd
	said    string // the path of its output
	out     string // its --out
	ended   chan struct{}
	seen    map[int]bool // every process seen below it
	mounts  []string     // the FUSE mounts it left
	boxes   []string     // the containers and networks it left
	ownerID string       // its pid, as owner marks name it
	// What its history held so far: read from off on, keeping a tail in
	// case a marker straddles two reads.
	off  int64
	tail string
	has  map[string]bool
}

func startVictim(t *testing.T, args []string) *victim {
	t.Helper()
	v := &victim{out: filepath.Join(t.TempDir(), "runs"), ended: make(chan struct{}), seen: map[int]bool{}, has: map[string]bool{}}
	args = append([]string{"run", "--duration", "2m", "--nemesis-interval", "1s", "--out", v.out}, args...)
	v.cmd = exec.Command(os.Args[0], args...)
	v.cmd.Env = append(os.Environ(), asTortureEnv+"=1")
	v.said = filepath.Join(t.TempDir(), "output")
	f, err := os.Create(v.said)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	v.cmd.Stdout, v.cmd.Stderr = f, f
	if err := v.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	v.ownerID = strconv.Itoa(v.cmd.Process.Pid)
	go func() { v.cmd.Wait(); close(v.ended) }()
	t.Cleanup(func() { v.cmd.Process.Kill(); <-v.ended })
	return v
}

// output is what the victim wrote so far.
func (v *victim) output() string {
	b, _ := os.ReadFile(v.said)
	return string(b)
}

// historyHas reports whether the victim's history holds marker so far.
func (v *victim) historyHas(marker string) bool {
	if paths, _ := filepath.Glob(filepath.Join(v.out, "*", "history.jsonl")); len(paths) == 1 {
		if f, err := os.Open(paths[0]); err == nil {
			b := make([]byte, 1<<20)
			for {
				n, _ := f.ReadAt(b, v.off)
				if n == 0 {
					break
				}
				v.off += int64(n)
				text := v.tail + string(b[:n])
				for _, m := range []string{`"f":"acquire"`, `"f":"fault-start"`} {
					if strings.Contains(text, m) {
						v.has[m] = true
					}
				}
				v.tail = text[max(0, len(text)-64):]
			}
			f.Close()
		}
	}
	return v.has[marker]
}

// look notes every process below the victim, so that a node restarted a
// moment before the kill is known too.
func (v *victim) look() {
	for _, pid := range testutil.Descendants(v.cmd.Process.Pid) {
		v.seen[pid] = true
	}
}

// killAt waits for the stage, then a random moment within it, and kills
// the victim with SIGKILL.
func (v *victim) killAt(t *testing.T, rng *rand.Rand, stage string) {
	t.Helper()
	var extra time.Duration
	switch stage {
	case stageStarting:
		// Within the first 1.5 s: the cluster, its proxies and disks,
		// the clients, coming up.
		extra = time.Duration(rng.Int64N(int64(1500 * time.Millisecond)))
	case stageRunning:
		testutil.Eventually(t, 90*time.Second, "clients acquiring", func() error {
			v.look()
			if !v.historyHas(`"f":"acquire"`) {
				return fmt.Errorf("no acquire yet; torture says: %s", v.output())
			}
			return nil
		})
		extra = time.Duration(rng.Int64N(int64(time.Second)))
	case stageHealing:
		testutil.Eventually(t, 90*time.Second, "a fault struck", func() error {
			v.look()
			if !v.historyHas(`"f":"fault-start"`) {
				return fmt.Errorf("no fault yet; torture says: %s", v.output())
			}
			return nil
		})
		// Within a fault's span: the heal of the kinds here comes within
		// about two seconds of their start.
		extra = time.Duration(rng.Int64N(int64(2 * time.Second)))
	}
	deadline := time.Now().Add(extra)
	for time.Now().Before(deadline) {
		v.look()
		select {
		case <-v.ended:
			t.Fatalf("torture ended before it was killed: %s", v.output())
		case <-time.After(5 * time.Millisecond):
		}
	}
	v.look()
	if err := v.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-v.ended
}

// leavesNoProcess checks that no process of the killed run is left: none
// seen below it, and none anywhere whose working folder or command line
// lies in its --out (a node that slipped out between two looks).
func (v *victim) leavesNoProcess(t *testing.T) {
	t.Helper()
	testutil.Eventually(t, 30*time.Second, "every process of the killed run gone", func() error {
		var left []string
		for pid := range v.seen {
			if testutil.Running(pid) {
				left = append(left, procLine(pid))
			}
		}
		for _, pid := range processesIn(v.out) {
			if !v.seen[pid] {
				left = append(left, procLine(pid))
			}
		}
		if len(left) > 0 {
			return fmt.Errorf("still running: %s", strings.Join(left, "; "))
		}
		return nil
	})
}

// leftovers returns the FUSE mounts and the containers (and networks)
// whose owner mark names the victim.
func (v *victim) leftovers(t *testing.T) (mounts, boxes []string) {
	t.Helper()
	mounted, err := lazyfs.Mounted()
	if err != nil {
		t.Fatal(err)
	}
	for mp, owner := range mounted {
		if f := strings.Split(owner, "."); len(f) == 3 && f[1] == v.ownerID {
			mounts = append(mounts, mp)
		}
	}
	if docker.Ping(context.Background()) == nil {
		cs, err := docker.Containers(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			if f := strings.Fields(c.Owner); len(f) == 4 && f[2] == v.ownerID {
				boxes = append(boxes, c.Name)
			}
		}
	}
	return mounts, boxes
}

// cleanedBy checks that what v left behind (noted when it was killed)
// is gone once next, started after v was killed, has opened its cluster,
// and reports what v left and whether next said it removed it, naming
// each. On a machine shared with other runs, another start may remove it
// first (any run that mounts a disk removes the mounts of dead owners):
// the caller asks that the next start named it at least once.
func (v *victim) cleanedBy(t *testing.T, next *victim) (left, named bool) {
	t.Helper()
	if len(v.mounts)+len(v.boxes) == 0 {
		return false, false
	}
	testutil.Eventually(t, 90*time.Second, "the next start removing what the killed run left", func() error {
		if m, b := v.leftovers(t); len(m)+len(b) > 0 {
			return fmt.Errorf("still there: %v %v; the next start says: %s", m, b, next.output())
		}
		return nil
	})
	said := next.output()
	named = strings.Contains(said, "removed what an earlier run, killed before it could clean up, left behind")
	for _, m := range append(v.mounts, v.boxes...) {
		named = named && strings.Contains(said, m)
	}
	return true, named
}

// historyChecks runs torture check on every history the killed run left:
// an interrupted history is checked as it is (exit 0, 1 or 3, never an
// error). A run killed before its first event left none, or an empty one
// (which check refuses in one line as empty).
func (v *victim) historyChecks(t *testing.T) {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(v.out, "*", "history.jsonl"))
	for _, p := range paths {
		_, stderr, code := torture(t, "check", filepath.Dir(p))
		if st, err := os.Stat(p); err == nil && st.Size() == 0 && strings.Contains(stderr, "the history is empty") {
			continue // killed before its first event: nothing to check, and check says so
		}
		if code == exitError {
			st, _ := os.Stat(p)
			t.Errorf("torture check %s (a history of %d bytes left by a killed run): %s", p, st.Size(), stderr)
		}
	}
}

// wait waits for the victim to end by itself.
func (v *victim) wait(t *testing.T) {
	t.Helper()
	select {
	case <-v.ended:
	case <-time.After(2 * time.Minute):
		t.Fatalf("the run after the last kill did not end: %s", v.output())
	}
}

// processesIn returns the live processes whose working folder or command
// line lies in dir.
func processesIn(dir string) []int {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() || !testutil.Running(pid) {
			continue
		}
		cwd, _ := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if strings.HasPrefix(cwd, dir) || bytes.Contains(cmdline, []byte(dir)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// procLine names a process by its pid and command line.
func procLine(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return fmt.Sprintf("%d %s", pid, strings.ReplaceAll(strings.TrimRight(string(b), "\x00"), "\x00", " "))
}
