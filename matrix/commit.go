package matrix

import (
	"runtime/debug"

	"github.com/locktorture/locktorture/report"
)

// Commit returns the commit of the code that is running, and whether its
// work tree had uncommitted changes, from the binary's VCS stamp alone
// (vcs.revision, vcs.modified: what go build records in a git checkout
// unless -buildvcs=false; make build asks for it). A binary without a
// stamp (go run, go test, -buildvcs=false, a build in a git worktree,
// where Go finds no repository) returns report.UnknownCommit, false:
// the git HEAD of the directory it happens to run in says nothing of the
// code it was built from. Merge refuses shards of an unknown commit
// unless told that one binary ran them all (AcceptUnknownCommit).
func Commit() (rev string, dirty bool) {
	return stampOf(debug.ReadBuildInfo())
}

// stampOf reads the VCS stamp of bi (ok as ReadBuildInfo returns it).
func stampOf(bi *debug.BuildInfo, ok bool) (rev string, dirty bool) {
	if !ok || bi == nil {
		return report.UnknownCommit, false
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return report.UnknownCommit, false
	}
	return rev, dirty
}
