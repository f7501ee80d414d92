package report

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestServersOldAndNew: results.json and summary.json written before
// Server and Servers (redis_version, redis_versions) read as Redis's;
// the new fields read as written, and win over the old ones; AddServer
// keeps one version of each server.
func TestServersOldAndNew(t *testing.T) {
	for _, tc := range []struct {
		name, json string
		server     string
		nodes      []string
	}{
		{"old", `{"redis_version":"7.0.15","redis_versions":["7.0.15","7.0.14"]}`, "redis 7.0.15", []string{"7.0.15", "7.0.14"}},
		{"new", `{"server":"etcd 3.4.23","node_versions":["3.4.23"]}`, "etcd 3.4.23", []string{"3.4.23"}},
		{"both", `{"server":"etcd 3.4.23","redis_version":"7.0.15"}`, "etcd 3.4.23", nil},
		{"neither", `{}`, "", nil},
	} {
		var r Results
		if err := json.Unmarshal([]byte(tc.json), &r); err != nil {
			t.Fatal(err)
		}
		if r.Server != tc.server || !slices.Equal(r.NodeVersions, tc.nodes) {
			t.Errorf("%s results: server %q, nodes %q; want %q, %q", tc.name, r.Server, r.NodeVersions, tc.server, tc.nodes)
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var again Results
		if err := json.Unmarshal(b, &again); err != nil || again.Server != r.Server || containsKey(b, "redis_version") {
			t.Errorf("%s: written again as %s (%v)", tc.name, b, err)
		}
	}
	for _, tc := range []struct {
		name, json string
		servers    []string
	}{
		{"old", `{"redis_version":"7.0.15"}`, []string{"redis 7.0.15"}},
		{"new", `{"servers":["redis 7.0.15","etcd 3.4.23"]}`, []string{"redis 7.0.15", "etcd 3.4.23"}},
		{"both", `{"servers":["etcd 3.4.23"],"redis_version":"7.0.15"}`, []string{"etcd 3.4.23"}},
		{"neither", `{}`, nil},
	} {
		var m Matrix
		if err := json.Unmarshal([]byte(tc.json), &m); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(m.Servers, tc.servers) {
			t.Errorf("%s summary: servers %q, want %q", tc.name, m.Servers, tc.servers)
		}
	}
	s, err := AddServer(nil, Server("redis", "7.0.15"))
	if err == nil {
		s, err = AddServer(s, "etcd 3.4.23")
	}
	if err == nil {
		s, err = AddServer(s, "redis 7.0.15")
	}
	if err != nil || !slices.Equal(s, []string{"redis 7.0.15", "etcd 3.4.23"}) {
		t.Errorf("servers %q, %v", s, err)
	}
	if _, err := AddServer(s, "redis 7.2.4"); !errors.Is(err, ErrServerVersions) {
		t.Errorf("a second Redis version: %v, want ErrServerVersions", err)
	}
}

// containsKey reports whether the JSON object b has key at its top.
func containsKey(b []byte, key string) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(b, &m) == nil && m[key] != nil
}

// TestPublishedServers: every published bundle's summary (written with
// redis_version) names the server its runs ran.
func TestPublishedServers(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("..", "results", "*", "summary.json"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no published bundle: %v", err)
	}
	for _, p := range dirs {
		m, err := ReadMatrix(filepath.Dir(p))
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if len(m.Servers) == 0 {
			if b, _ := os.ReadFile(p); containsKey(b, "redis_version") || containsKey(b, "servers") {
				t.Errorf("%s: no server read", p)
			}
		}
	}
}
