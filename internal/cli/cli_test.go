package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
)

func TestExitStatus(t *testing.T) {
	for err, want := range map[error]int{
		nil:                                     0,
		flag.ErrHelp:                            0,
		fmt.Errorf("wrapped: %w", flag.ErrHelp): 0,
		errors.New("boom"):                      2,
	} {
		if got := exitStatus("test", err); got != want {
			t.Errorf("exitStatus(%v) = %d, want %d", err, got, want)
		}
	}
}

// TestParse: flags go anywhere on the line, "--" ends them, and an
// unknown flag is one line naming the flag meant.
func TestParse(t *testing.T) {
	for _, tc := range []struct {
		args []string
		lock string
		rest []string
		err  string
	}{
		{[]string{"--lock", "a", "dir"}, "a", []string{"dir"}, ""},
		{[]string{"dir", "--lock", "a"}, "a", []string{"dir"}, ""},
		{[]string{"x", "--lock", "a", "y"}, "a", []string{"x", "y"}, ""},
		{[]string{"--lock", "a", "--", "--lock"}, "a", []string{"--lock"}, ""},
		{[]string{"--lokc", "a"}, "", nil, "flag provided but not defined: -lokc (did you mean --lock?)"},
		{[]string{"--zzzzzz"}, "", nil, "flag provided but not defined: -zzzzzz (see"},
	} {
		fs := flag.NewFlagSet("run", flag.ContinueOnError)
		lock := fs.String("lock", "", "")
		err := Parse(fs, tc.args, "usage", io.Discard)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%q: %v, want one line with %q", tc.args, err, tc.err)
			}
		case err != nil || *lock != tc.lock || !slices.Equal(fs.Args(), tc.rest):
			t.Errorf("%q: lock %q, args %q, %v; want %q, %q", tc.args, *lock, fs.Args(), err, tc.lock, tc.rest)
		}
	}
}
