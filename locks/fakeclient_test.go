package locks_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/locktorture/locktorture/locks"
)

// fakeClientEnv makes the test binary a protocol client instead of a test
// run (TestMain), in the mode its value names: the adapter's own tests
// need clients that misbehave on cue, which no real client does.
const fakeClientEnv = "LOCKS_TEST_FAKE_CLIENT"

// harnessChildEnv makes the test binary a stand-in for the harness
// (TestAdapterSIGKILL): it starts client processes, prints their pids and
// waits to be killed.
const harnessChildEnv = "LOCKS_TEST_HARNESS_CHILD"

func TestMain(m *testing.M) {
	// `client --lock NAME`: the test binary serves a Go lock in a client
	// process, as `torture client` does (locks.ClientCommand runs this
	// executable so; TestAsProcess).
	if len(os.Args) == 4 && os.Args[1] == "client" && os.Args[2] == "--lock" {
		if err := locks.Serve(context.Background(), os.Args[3], os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "client:", err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	switch mode := os.Getenv(fakeClientEnv); mode {
	case "":
	case "sleep":
		time.Sleep(time.Hour)
		os.Exit(0)
	case "daemonize":
		// Start a sleeper in a session of its own, say its pid, and exit:
		// the sleeper is an orphan.
		cmd := sleeper()
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			os.Exit(7)
		}
		fmt.Println(cmd.Process.Pid)
		os.Exit(0)
	default:
		fakeClient(mode)
		os.Exit(0)
	}
	if mode := os.Getenv(harnessChildEnv); mode != "" {
		harnessChild(mode)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// fakeClient serves the protocol from memory (no Redis): a lock table
// shared by nothing but this process, validity 500 ms. Its mode, a
// comma-separated list, changes that:
//
//   - refuse: refuse the hello, after a line on stderr;
//   - exit-at-hello: exit with status 3 before replying to the hello;
//   - hang-acquire / die-acquire: never answer an acquire / exit (status
//     4) on one;
//   - garbage-acquire / wrong-id-acquire: answer an acquire with a line
//     that is not JSON / with another id;
//   - until-release: acquires claim no deadline;
//   - env: the hello's reply names, in "name", whether
//     LOCKTORTURE_PASSWORD is in its environment;
//   - nodes: the hello says reports_nodes, and every reply to an acquire,
//     release or extend carries node 0's answer (attempt 1; an acquire
//     that finds the key held, attempt 2);
//   - bad-nodes: like nodes, but an acquire names node 7 of 1;
//   - claims-versions: the hello's versions claim this harness's own
//     keys ("go", go-redis's module path) beside a library of its own;
//   - long-acquire: answer an acquire with a line of 2 MiB;
//   - validity=V: acquires and extends claim validity_ms V (a JSON
//     number, written as is);
//   - typo-promises: the hello's promises misspell a topology and a
//     fault ("failvoer", "client-pase");
//   - fork-tree: at the hello, start three processes that sleep for an
//     hour: one in the client's process group, one in a session of its
//     own (setsid) holding the client's stdout and stderr, and one a
//     daemon (started by a process that calls setsid and exits at once,
//     so that it is an orphan); the hello's versions name their pids
//     ("group", "setsid", "daemon").
//
// The modes sleep and daemonize are fork-tree's processes.
//   - lost: before each reply, events the harness must take as events:
//     one of a name it does not know and a "lost" of a token never
//     granted; an extend then finds the lease lost, sends its "lost"
//     event and answers not_held; a release answers, then sends a
//     "lost" of the released token.
func fakeClient(mode string) {
	has := func(m string) bool {
		for _, x := range strings.Split(mode, ",") {
			if x == m {
				return true
			}
		}
		return false
	}
	validity := json.RawMessage("500")
	for _, x := range strings.Split(mode, ",") {
		if v, ok := strings.CutPrefix(x, "validity="); ok {
			validity = json.RawMessage(v)
		}
	}
	in := bufio.NewScanner(os.Stdin)
	out := json.NewEncoder(os.Stdout)
	var mu sync.Mutex
	held := map[string]string{} // key → token
	n := 0
	for in.Scan() {
		var req map[string]any
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			fmt.Fprintln(os.Stderr, "bad request:", err)
			os.Exit(5)
		}
		id := req["id"]
		op, _ := req["op"].(string)
		key, _ := req["key"].(string)
		token, _ := req["token"].(string)
		reply := map[string]any{"id": id, "result": "ok"}
		switch op {
		case "hello":
			switch {
			case has("refuse"):
				fmt.Fprintln(os.Stderr, "fake client: I refuse this configuration")
				reply = map[string]any{"id": id, "result": "error", "error": "refused"}
			case has("exit-at-hello"):
				fmt.Fprintln(os.Stderr, "fake client: exiting at hello")
				os.Exit(3)
			}
			reply["name"], reply["language"] = "fake", "Go"
			reply["reports_nodes"] = has("nodes") || has("bad-nodes")
			if has("typo-promises") {
				reply["promises"] = map[string]any{"topologies": []string{"failvoer"}, "safe_under": []string{"client-pase"}}
			}
			if has("fork-tree") {
				reply["versions"] = forkTree()
			}
			if has("claims-versions") {
				reply["versions"] = map[string]string{"go": "go0.0.1-client", "github.com/redis/go-redis/v9": "v0.0.1-client", "libfake": "1.2"}
			}
			if has("env") {
				_, found := os.LookupEnv("LOCKTORTURE_PASSWORD")
				reply["name"] = fmt.Sprintf("password-in-env=%v", found)
			}
		case "acquire":
			switch {
			case has("hang-acquire"):
				select {}
			case has("die-acquire"):
				fmt.Fprintln(os.Stderr, "fake client: dying in acquire")
				os.Exit(4)
			case has("garbage-acquire"):
				fmt.Println("this is not JSON")
				continue
			case has("wrong-id-acquire"):
				reply["id"] = 1e9
			case has("long-acquire"):
				reply["error"] = strings.Repeat("x", 2<<20)
			}
			mu.Lock()
			if held[key] != "" {
				reply["result"] = "not_acquired"
			} else {
				n++
				t := fmt.Sprintf("token-%d-%d", os.Getpid(), n)
				held[key] = t
				reply["token"] = t
				if has("until-release") {
					reply["until_release"] = true
				} else {
					reply["validity_ms"] = validity
				}
			}
			mu.Unlock()
		case "release", "extend":
			mu.Lock()
			if held[key] != token {
				reply["result"] = "not_held"
			} else if op == "release" {
				delete(held, key)
			} else {
				reply["validity_ms"] = validity
			}
			mu.Unlock()
		case "ping":
		default:
			reply["result"] = "unknown"
		}
		if op == "acquire" || op == "release" || op == "extend" {
			switch {
			case has("bad-nodes") && op == "acquire":
				reply["nodes"] = map[string]any{"attempt": 1, "granted": []int{7}}
			case !has("nodes"):
			case reply["result"] == "ok":
				reply["nodes"] = map[string]any{"attempt": 1, "granted": []int{0}}
			case op == "acquire":
				reply["nodes"] = map[string]any{"attempt": 2, "refused": []int{0}}
			default:
				reply["nodes"] = map[string]any{"attempt": 1, "refused": []int{0}}
			}
		}
		if has("lost") && op != "hello" {
			_ = out.Encode(map[string]any{"event": "something-new", "key": key})
			_ = out.Encode(map[string]any{"event": "lost", "key": key, "token": "never-granted"})
			if op == "extend" {
				_ = out.Encode(map[string]any{"event": "lost", "key": key, "token": token, "error": "renewal refused"})
				reply = map[string]any{"id": id, "result": "not_held"}
			}
		}
		if err := out.Encode(reply); err != nil {
			os.Exit(6)
		}
		if has("lost") && op == "release" {
			_ = out.Encode(map[string]any{"event": "lost", "key": key, "token": token, "error": "after the release"})
		}
	}
}

// sleeper is the test binary as a process that sleeps for an hour.
func sleeper() *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fakeClientEnv+"=sleep")
	return cmd
}

// forkTree starts fork-tree's three sleepers and returns their pids by
// name; it exits the client if one cannot start.
func forkTree() map[string]string {
	group := sleeper()
	setsid := sleeper()
	setsid.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	setsid.Stdout, setsid.Stderr = os.Stdout, os.Stderr
	for _, c := range []*exec.Cmd{group, setsid} {
		if err := c.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "fake client: fork-tree:", err)
			os.Exit(8)
		}
	}
	d := exec.Command(os.Args[0], "-test.run=^$")
	d.Env = append(os.Environ(), fakeClientEnv+"=daemonize")
	out, err := d.Output()
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake client: fork-tree: daemonize:", err)
		os.Exit(8)
	}
	return map[string]string{"group": strconv.Itoa(group.Process.Pid), "setsid": strconv.Itoa(setsid.Process.Pid), "daemon": strings.TrimSpace(string(out))}
}
