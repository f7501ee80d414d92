package lineproto

import (
	"encoding/json"
	"strings"
	"testing"
)

type echo struct{}

func (echo) Handle(r Request) Reply { return Reply{Result: "ok", Token: r.Key} }

// TestServe: the hello comes first, every reply carries its request's id,
// a request before the hello is an error reply, a line that is not JSON
// ends the session.
func TestServe(t *testing.T) {
	in := strings.Join([]string{
		`{"id":1,"op":"ping"}`,
		`{"id":2,"op":"hello","addrs":["127.0.0.1:1"]}`,
		`{"id":3,"op":"acquire","key":"k"}`,
	}, "\n") + "\n"
	var out strings.Builder
	err := Serve(strings.NewReader(in), &out, func(Request) (Client, Reply) { return echo{}, OK("echo", nil, "none") })
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []Reply{{ID: 1, Result: "error"}, {ID: 2, Result: "ok", Protocol: Protocol}, {ID: 3, Result: "ok", Token: "k"}}
	if len(lines) != len(want) {
		t.Fatalf("replies:\n%s", out.String())
	}
	for i, l := range lines {
		var r Reply
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		if r.ID != want[i].ID || r.Result != want[i].Result || r.Protocol != want[i].Protocol || r.Token != want[i].Token {
			t.Errorf("reply %d: %s, want %+v", i, l, want[i])
		}
	}
	if err := Serve(strings.NewReader("not json\n"), &out, nil); err == nil {
		t.Error("a line that is not JSON: no error")
	}
}

func TestBackoff(t *testing.T) {
	for range 100 {
		d, err := Backoff(100)
		if err != nil || d < 50 || d >= 100 {
			t.Fatalf("Backoff(100) = %d, %v", d, err)
		}
	}
}
