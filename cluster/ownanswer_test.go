package cluster

import (
	"context"
	"errors"
	"os/exec"
	"testing"
	"time"
)

// TestOwnAnswer: a start whose port another server answers on (the
// process exits, unable to bind) is an exit, tried again on another
// port; the node's own process answering is ready.
func TestOwnAnswer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := Open(ctx, Spec{Nodes: 1}, WithDir(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	n := c.Node(0)
	n.mu.Lock()
	own := n.cur
	n.mu.Unlock()
	if err := ownAnswer(ctx, own, n.DirectAddr(), c.Password(), n.Name()); err != nil {
		t.Errorf("the node's own process: %v", err)
	}
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	other := newProcess(cmd)
	if err := ownAnswer(ctx, other, n.DirectAddr(), c.Password(), "n9"); !errors.Is(err, errExited) {
		t.Errorf("another server answering: %v, want errExited", err)
	}
}
