package cluster

import (
	"strings"
	"testing"
)

// TestSpecAppendfsync: Appendfsync sets Persistence, Persistence alone
// means always, and Open runs the nodes with the policy asked.
func TestSpecAppendfsync(t *testing.T) {
	for _, tc := range []struct {
		in          Spec
		persistence bool
		fsync, err  string
	}{
		{Spec{}, false, "", ""},
		{Spec{Persistence: true}, true, AppendfsyncAlways, ""},
		{Spec{Appendfsync: AppendfsyncEverysec}, true, AppendfsyncEverysec, ""},
		{Spec{Appendfsync: AppendfsyncAlways}, true, AppendfsyncAlways, ""},
		{Spec{Appendfsync: "no"}, false, "", `unknown appendfsync "no"`},
		{Spec{Backend: BackendExternal, External: []string{"h:1"}, Appendfsync: AppendfsyncEverysec}, false, "", "persistence"},
	} {
		got, err := tc.in.WithDefaults()
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%+v: err %v, want %q", tc.in, err, tc.err)
			}
		case err != nil:
			t.Errorf("%+v: %v", tc.in, err)
		case got.Persistence != tc.persistence || got.Appendfsync != tc.fsync:
			t.Errorf("%+v: persistence %v, appendfsync %q; want %v, %q", tc.in, got.Persistence, got.Appendfsync, tc.persistence, tc.fsync)
		}
	}
	for _, fsync := range []string{AppendfsyncEverysec, AppendfsyncAlways} {
		c, err := Open(t.Context(), Spec{Appendfsync: fsync}, WithDir(t.TempDir()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		got, err := c.Node(0).Client().ConfigGet(t.Context(), "append*").Result()
		if err != nil {
			t.Fatal(err)
		}
		if got["appendonly"] != "yes" || got["appendfsync"] != fsync {
			t.Errorf("Open with appendfsync %s: the node runs with %v", fsync, got)
		}
	}
}
