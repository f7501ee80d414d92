package locks_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

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
	if mode := os.Getenv(fakeClientEnv); mode != "" {
		fakeClient(mode)
		os.Exit(0)
	}
	if os.Getenv(harnessChildEnv) != "" {
		harnessChild()
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
					reply["validity_ms"] = 500
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
				reply["validity_ms"] = 500
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
