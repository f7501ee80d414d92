package locks

import (
	"testing"
	"time"
)

// TestFailoverClientOptions pins that the failover client keeps every
// safety option of NewClient: the two must not drift apart.
func TestFailoverClientOptions(t *testing.T) {
	cfg := Config{Addrs: []string{"127.0.0.1:1"}, Password: "pw", Timeout: 300 * time.Millisecond}
	plain := NewClient(cfg.Addrs[0], cfg)
	defer plain.Close()
	cfg.Sentinels, cfg.MasterName = []string{"127.0.0.1:2"}, "m"
	cfg.AddrMap = map[string]string{"127.0.0.1:3": "127.0.0.1:4"}
	fo := NewSingleClient(cfg) // never dialed: construction does not connect
	defer fo.Close()
	p, f := plain.Options(), fo.Options()
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"Password", f.Password, p.Password},
		{"Protocol", f.Protocol, p.Protocol},
		{"DisableIdentity", f.DisableIdentity, p.DisableIdentity},
		{"MaxRetries", f.MaxRetries, p.MaxRetries},
		{"ContextTimeoutEnabled", f.ContextTimeoutEnabled, p.ContextTimeoutEnabled},
		{"DialerRetries", f.DialerRetries, p.DialerRetries},
		{"DialTimeout", f.DialTimeout, p.DialTimeout},
		{"ReadTimeout", f.ReadTimeout, p.ReadTimeout},
		{"WriteTimeout", f.WriteTimeout, p.WriteTimeout},
		{"PoolTimeout", f.PoolTimeout, p.PoolTimeout},
		{"PoolSize", f.PoolSize, p.PoolSize},
		{"MaintNotificationsConfig.Mode", f.MaintNotificationsConfig.Mode, p.MaintNotificationsConfig.Mode},
	} {
		if c.got != c.want {
			t.Errorf("failover client %s = %v, NewClient's = %v", c.name, c.got, c.want)
		}
	}
	if f.Addr != "FailoverClient" {
		t.Errorf("NewSingleClient with Sentinels built a client to %q, want go-redis's failover client", f.Addr)
	}
}
