package cli

import (
	"errors"
	"flag"
	"fmt"
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
