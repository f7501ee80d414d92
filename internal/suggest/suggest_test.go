package suggest

import "testing"

func TestClosest(t *testing.T) {
	names := []string{"client-pause", "pause-holder", "kill-quorum", "setnx", "redlock", "run", "gate"}
	for s, want := range map[string]string{
		"client-pase": "client-pause",
		"kill-qourum": "kill-quorum",
		"redlok":      "redlock",
		"gaet":        "gate",
		"frobnicate":  "",
		"":            "",
	} {
		if got := Closest(s, names); got != want {
			t.Errorf("Closest(%q) = %q, want %q", s, got, want)
		}
	}
	if got := DidYouMean("setxn", names); got != " (did you mean setnx?)" {
		t.Errorf("DidYouMean = %q", got)
	}
}
