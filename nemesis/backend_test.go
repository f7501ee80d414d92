package nemesis

import (
	"strings"
	"testing"
	"time"
)

func TestRefuseBackend(t *testing.T) {
	base := Setup{Lock: "redlock", MultiNode: true, Nodes: 3, Groups: 2, TTL: time.Second, Topology: "masters"}
	for _, tc := range []struct {
		name      string
		backend   string
		toxiproxy bool
		shim      bool
		kind      string
		refused   string // a part of the reason; "" when accepted
	}{
		{"process kill", "process", false, false, "kill", ""},
		{"docker kill", "docker", false, false, "kill", ""},
		{"docker pause", "docker", false, false, "pause", ""},
		{"docker clock with the shim", "docker", false, true, "clock", ""},
		{"docker clock without", "docker", false, false, "clock", "the image carries no clock shim"},
		{"external kill", "external", true, false, "kill", "cannot kill, restart or pause"},
		{"external pause", "external", true, false, "pause", "cannot kill, restart or pause"},
		{"external clock", "external", true, true, "clock", "cannot shift their clocks"},
		{"external partition, toxiproxy", "external", true, false, "partition", ""},
		{"external latency, toxiproxy", "external", true, false, "latency", ""},
		{"external partition, no toxiproxy", "external", false, false, "partition", "give --toxiproxy"},
		{"external latency, no toxiproxy", "external", false, false, "latency", "give --toxiproxy"},
		{"external client-pause", "external", false, false, "client-pause", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := base
			s.Backend, s.Toxiproxy, s.ClockShim = tc.backend, tc.toxiproxy, tc.shim
			_, err := Check([]string{tc.kind}, s)
			switch {
			case tc.refused == "" && err != nil:
				t.Errorf("Check: %v, want accepted", err)
			case tc.refused != "" && (err == nil || !strings.Contains(err.Error(), tc.refused)):
				t.Errorf("Check: %v, want refused with %q", err, tc.refused)
			case err != nil && strings.Contains(err.Error(), "\n"):
				t.Errorf("Check: %q is not one line", err)
			}
		})
	}
}
