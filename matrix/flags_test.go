package matrix

import (
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestParseSeeds(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
	}{
		{"1", "[1]"},
		{"1,2,3", "[1 2 3]"},
		{"1..10", "[1 2 3 4 5 6 7 8 9 10]"},
		{"5, 1..3", "[5 1 2 3]"},
		{"-3..-1", "[-3 -2 -1]"},
	} {
		got, err := ParseSeeds(tc.in)
		if err != nil {
			t.Errorf("ParseSeeds(%q): %v", tc.in, err)
			continue
		}
		if fmt.Sprint(got) != tc.want {
			t.Errorf("ParseSeeds(%q) = %v, want %s", tc.in, got, tc.want)
		}
	}
}

// TestFlags: the shared flags take their defaults from the Flags given,
// carry a command's note, and Check names the flag out of range.
func TestFlags(t *testing.T) {
	f := Flags{Seeds: "1", Duration: time.Second, CheckTimeout: time.Second, Out: "x"}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	BindFlags(fs, &f, map[string]string{"duration": "the budget may shorten it"})
	if u := fs.Lookup("duration").Usage; !strings.HasSuffix(u, "; the budget may shorten it") {
		t.Errorf("--duration's usage %q lacks the note", u)
	}
	if seeds, err := f.Check(); err != nil || len(seeds) != 1 {
		t.Fatalf("Check of the defaults: %v, %v", seeds, err)
	}
	for args, want := range map[string]string{
		"--seeds x":           "seed",
		"--duration 0s":       "--duration must be positive",
		"--check-timeout -1s": "--check-timeout must be positive",
		"--jobs 2000":         "--jobs must be 0",
		"--cells [":           "--cells",
	} {
		g := f
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		BindFlags(fs, &g, nil)
		if err := fs.Parse(strings.Fields(args)); err != nil {
			t.Fatal(err)
		}
		if _, err := g.Check(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: Check: %v, want %q", args, err, want)
		}
	}
	if _, err := Select(Cells(false), "no-such-cell-anywhere"); err == nil {
		t.Error("Select of a pattern that matches nothing: no error")
	}
}
