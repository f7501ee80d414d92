package locks

import (
	"strings"
	"testing"
)

// TestTailMasksSecrets: what a client writes on stderr (a logged hello
// with the nodes' password) is quoted into errors, the history and
// torture's stderr with the run's passwords masked.
func TestTailMasksSecrets(t *testing.T) {
	tl := &tail{max: 2048, secrets: secretsOf(Config{Password: "n0de-s3cret", SentinelPassword: "sent-s3cret"})}
	tl.Write([]byte(`hello {"password": "n0de-s3cret", "sentinel_password": "sent-s3cret"}` + "\n"))
	tl.Write([]byte("AUTH failed for n0de-s3cret\n"))
	got := tl.String()
	if strings.Contains(got, "s3cret") || strings.Count(got, "****") != 3 {
		t.Fatalf("stderr quoted as %q; want every password masked", got)
	}
	if s := (&tail{max: 64}).String(); s != "" {
		t.Fatalf("an empty tail reads %q", s)
	}
}
