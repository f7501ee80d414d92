package harness

import (
	"maps"
	"testing"
)

// TestLockVersions: whatever a lock's Versions returns, the summary holds
// it under the client's names only: a key that does not begin with
// "client" is put under "client:", so no lock can record a version under
// the harness's own keys.
func TestLockVersions(t *testing.T) {
	got := lockVersions(map[string]string{"client": "mine", "client language": "Go", "client:libx": "1", "go": "go0.1", "github.com/redis/go-redis/v9": "v0.1"})
	want := map[string]string{"client": "mine", "client language": "Go", "client:libx": "1", "client:go": "go0.1", "client:github.com/redis/go-redis/v9": "v0.1"}
	if !maps.Equal(got, want) {
		t.Errorf("lockVersions = %v\nwant %v", got, want)
	}
}
