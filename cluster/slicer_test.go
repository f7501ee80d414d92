package cluster

import (
	"context"
	"io"
	"net"
	"os"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/Shopify/toxiproxy/v2/toxics"
	"github.com/rs/zerolog"
)

// TestSlicerRemovalWithStalledReader removes a slicer while its connection's
// reader takes nothing: toxiproxy's own slicer blocks on the hand-over
// and the removal never returns (set LOCKTORTURE_UPSTREAM_SLICER=1 to see
// it fail); the replacement returns (here in about 22 s: toxiproxy then
// gives each chunk still queued 5 s) and leaves the proxy usable.
func TestSlicerRemovalWithStalledReader(t *testing.T) {
	if os.Getenv("LOCKTORTURE_UPSTREAM_SLICER") == "1" {
		toxics.Register("slicer", new(toxics.SlicerToxic))
		t.Cleanup(func() { toxics.Register("slicer", new(slicer)) })
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	stalled := make(chan struct{}, 1)
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				go io.Copy(io.Discard, conn) //nolint:errcheck // drains the client's bytes
				buf := make([]byte, 64<<10)
				for {
					conn.SetWriteDeadline(time.Now().Add(300 * time.Millisecond))
					if _, err := conn.Write(buf); err != nil {
						if ne, ok := err.(net.Error); ok && ne.Timeout() {
							select { // every buffer on the way is full
							case stalled <- struct{}{}:
							default:
							}
						}
						return
					}
				}
			}()
		}
	}()

	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	px := toxiproxy.NewProxy(srv, "slice", "127.0.0.1:0", ln.Addr().String())
	if err := px.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(px.Stop)
	link := &Link{name: "slice", local: px}
	ctx := t.Context()
	if err := link.AddToxic(ctx, Toxic{Name: "sl", Type: "slicer", Stream: "downstream", Toxicity: 1,
		Attributes: map[string]int{"average_size": 512, "size_variation": 0, "delay": 0}}); err != nil {
		t.Fatal(err)
	}
	client, err := net.Dial("tcp", px.Listen)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	if _, err := io.ReadFull(client, make([]byte, 1)); err != nil { // the stream flows, then stops being read
		t.Fatal(err)
	}
	select {
	case <-stalled:
	case <-time.After(30 * time.Second):
		t.Fatal("the upstream's writes never stalled")
	}

	start := time.Now()
	rctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- px.Toxics.RemoveToxic(context.Background(), "sl") }()
	select {
	case err := <-done:
		t.Logf("removed in %v", time.Since(start))
		if err != nil {
			t.Fatal(err)
		}
	case <-rctx.Done():
		t.Fatalf("removing the slicer from a stalled connection did not return in %v", time.Since(start))
	}
	if names, err := link.Toxics(ctx); err != nil || len(names) != 0 {
		t.Fatalf("toxics after removal: %v, %v", names, err)
	}
	// Adding a toxic interrupts the connection's first stage, toxiproxy's
	// own, which may itself be blocked handing data to the stalled
	// writer: the change is bounded, and returns (done or refused).
	defer func(d time.Duration) { localToxicTimeout = d }(localToxicTimeout)
	localToxicTimeout = 2 * time.Second
	start = time.Now()
	added := make(chan error, 1)
	go func() {
		added <- link.AddToxic(ctx, Toxic{Name: "again", Type: "latency", Stream: "downstream", Toxicity: 1,
			Attributes: map[string]int{"latency": 1}})
	}()
	select {
	case err := <-added:
		t.Logf("a toxic added to the stalled proxy in %v: %v", time.Since(start), err)
	case <-time.After(10 * localToxicTimeout):
		t.Fatalf("adding a toxic to the stalled proxy did not return in %v", time.Since(start))
	}
}
