package redisopt_test

import (
	"testing"

	"github.com/locktorture/locktorture/internal/redisopt"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// TestOptions holds the options to the measured reasons of the package
// doc: a change to one of them must be a change of this test too.
func TestOptions(t *testing.T) {
	o := redisopt.Options("127.0.0.1:1", "pw")
	switch {
	case o.Addr != "127.0.0.1:1" || o.Password != "pw":
		t.Errorf("addr %q, password %q", o.Addr, o.Password)
	case o.MaxRetries != -1:
		t.Errorf("MaxRetries %d, want -1 (no retries: a command applied at most once)", o.MaxRetries)
	case !o.ContextTimeoutEnabled:
		t.Error("ContextTimeoutEnabled off: deadlines would be ignored until the read timeout")
	case o.DialerRetries != 1:
		t.Errorf("DialerRetries %d, want 1 dial attempt", o.DialerRetries)
	case o.Protocol != 2 || !o.DisableIdentity:
		t.Errorf("Protocol %d, DisableIdentity %v: want RESP2 and no CLIENT SETINFO (one round trip on connect)", o.Protocol, o.DisableIdentity)
	case o.MaintNotificationsConfig == nil || o.MaintNotificationsConfig.Mode != maintnotifications.ModeDisabled:
		t.Errorf("maintenance notifications %+v, want disabled", o.MaintNotificationsConfig)
	}
}
