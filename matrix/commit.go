package matrix

import (
	"os/exec"
	"runtime/debug"
	"strings"
)

// Commit returns the commit of the code that is running, and whether
// its work tree had uncommitted changes: the binary's VCS stamp
// (vcs.revision, vcs.modified: go build in a git work tree) or, for a
// binary built without one (go run, go test, -buildvcs=false), what git
// says of the working directory ("git rev-parse HEAD"; "git status
// --porcelain --untracked-files=no" for changes). It returns "" when
// neither knows: Merge then refuses the output, as it cannot tell which
// code ran it.
func Commit() (rev string, dirty bool) {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if rev != "" {
			return rev, dirty
		}
	}
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		return "", false
	}
	rev = strings.TrimSpace(string(out))
	st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output()
	return rev, err != nil || len(st) > 0
}
