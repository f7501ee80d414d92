package gate_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/locktorture/locktorture/gate"
	"github.com/locktorture/locktorture/locks"
)

// TestClientMissing: a gate program whose main does not answer `client
// --lock NAME` cannot run its lock in client processes, which the
// client-stop cells need; the gate refuses at once with a set-up error
// (exit 2) naming the missing call and what adds it, not "inconclusive"
// (exit 3, "more seeds") after runs that started no client.
func TestClientMissing(t *testing.T) {
	saved := locks.ClientCommand
	t.Cleanup(func() { locks.ClientCommand = saved })
	locks.ClientCommand = func(name string) ([]string, error) {
		// What a gate program answers that hands everything to Command.
		return []string{"/bin/sh", "-c", `echo 'gate: unexpected argument "client" (see torture gate -h)' >&2; exit 2`}, nil
	}
	var stdout, stderr bytes.Buffer
	err := gate.Command(t.Context(), []string{"--lock", "setnx-watchdog", "--cells", "^setnx-watchdog/client-stop$", "--seeds", "1", "--out", t.TempDir()}, &stdout, &stderr)
	code := gate.ExitCode(err, &stderr)
	line := strings.TrimSpace(stderr.String())
	if code != gate.ExitError || strings.Contains(line, "\n") || !strings.Contains(line, "does not answer `client --lock setnx-watchdog`") || !strings.Contains(line, "gate.Main does") {
		t.Fatalf("exit %d, stderr %q; want exit 2 and one line naming the missing client command", code, stderr.String())
	}
}

// TestClient: gate.Client (which gate.Main answers `client` with) serves
// a registered Go lock until its input ends, and refuses in one error a
// name the registry does not know or a lock that is a process itself.
func TestClient(t *testing.T) {
	var out bytes.Buffer
	if err := gate.Client(t.Context(), []string{"--lock", "setnx"}, strings.NewReader(""), &out); err != nil {
		t.Fatalf("serving setnx: %v", err)
	}
	for _, args := range [][]string{{}, {"--lock", "no-such-lock"}, {"--lock", "setnx", "extra"}, {"--lock", "redis-py-lock"}} {
		if err := gate.Client(t.Context(), args, strings.NewReader(""), &out); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("client %q: %v; want one line", args, err)
		}
	}
}
