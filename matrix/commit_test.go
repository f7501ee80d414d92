package matrix

import (
	"runtime/debug"
	"testing"

	"github.com/locktorture/locktorture/report"
)

// TestCommitWithoutStamp: the commit comes from the binary's VCS stamp
// alone. This test binary has none (go test does not stamp), and it
// runs inside a git work tree: Commit must not read that tree's HEAD.
func TestCommitWithoutStamp(t *testing.T) {
	if rev, dirty := Commit(); rev != report.UnknownCommit || dirty {
		t.Errorf("Commit() in a binary without a stamp = %q, %v; want %q, false", rev, dirty, report.UnknownCommit)
	}
	for _, tc := range []struct {
		name      string
		bi        *debug.BuildInfo
		ok        bool
		rev       string
		wantDirty bool
	}{
		{"no build info", nil, false, report.UnknownCommit, false},
		{"no stamp", &debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "-buildvcs", Value: "false"}}}, true, report.UnknownCommit, false},
		{"modified without a revision", &debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "vcs.modified", Value: "true"}}}, true, report.UnknownCommit, false},
		{"clean", &debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "73283d5"}, {Key: "vcs.modified", Value: "false"}}}, true, "73283d5", false},
		{"dirty", &debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "73283d5"}, {Key: "vcs.modified", Value: "true"}}}, true, "73283d5", true},
	} {
		if rev, dirty := stampOf(tc.bi, tc.ok); rev != tc.rev || dirty != tc.wantDirty {
			t.Errorf("%s: %q, %v; want %q, %v", tc.name, rev, dirty, tc.rev, tc.wantDirty)
		}
	}
}
