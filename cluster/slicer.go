package cluster

import (
	"math/rand/v2"
	"time"

	"github.com/Shopify/toxiproxy/v2/stream"
	"github.com/Shopify/toxiproxy/v2/toxics"
)

// slicerRestTimeout bounds how long an interrupted slicer waits to pass on
// the rest of the chunk it was cutting.
const slicerRestTimeout = 2 * time.Second

// slicer replaces toxiproxy's "slicer" toxic in the in-process proxies:
// it cuts chunks as v2.12.0's SlicerToxic does, but every hand-over also
// watches for an interrupt. Upstream's send blocks for ever once the
// writer stops reading, so removing the toxic (which interrupts it under
// the proxy's toxic lock) never returns and every later toxic call waits
// behind it: a full matrix hung that way (toxiproxy issues 427, 428, 558;
// no fix released). Interrupted, this one passes on the rest of its chunk
// within slicerRestTimeout, else drops it: a connection that read nothing
// that long is dead to its client, whose call has timed out.
type slicer struct {
	AverageSize   int `json:"average_size"`
	SizeVariation int `json:"size_variation"`
	Delay         int `json:"delay"` // microseconds between pieces
}

func init() {
	// Replaces toxiproxy's own entry: package toxics is initialised first.
	toxics.Register("slicer", new(slicer))
}

// chunk returns the offsets of the pieces of data[start:end], in pairs,
// as toxiproxy's SlicerToxic.chunk does.
func (t *slicer) chunk(start, end int) []int {
	if (end-start)-t.AverageSize <= t.SizeVariation {
		return []int{start, end}
	}
	mid := start + (end-start)/2
	if t.SizeVariation > 0 {
		mid += rand.IntN(t.SizeVariation*2) - t.SizeVariation
	}
	return append(t.chunk(start, mid), t.chunk(mid, end)...)
}

// Pipe implements toxics.Toxic.
func (t *slicer) Pipe(stub *toxics.ToxicStub) {
	for {
		select {
		case <-stub.Interrupt:
			return
		case c := <-stub.Input:
			if c == nil {
				stub.Close()
				return
			}
			if t.pipeChunk(stub, c) {
				return
			}
		}
	}
}

// pipeChunk sends c on in pieces; it reports whether it was interrupted.
func (t *slicer) pipeChunk(stub *toxics.ToxicStub, c *stream.StreamChunk) bool {
	chunks := t.chunk(0, len(c.Data))
	for i := 1; i < len(chunks); i += 2 {
		piece := &stream.StreamChunk{Data: c.Data[chunks[i-1]:chunks[i]], Timestamp: c.Timestamp}
		select {
		case stub.Output <- piece:
		case <-stub.Interrupt:
			_ = stub.WriteOutput(&stream.StreamChunk{Data: c.Data[chunks[i-1]:], Timestamp: c.Timestamp}, slicerRestTimeout)
			return true
		}
		select {
		case <-stub.Interrupt:
			_ = stub.WriteOutput(&stream.StreamChunk{Data: c.Data[chunks[i]:], Timestamp: c.Timestamp}, slicerRestTimeout)
			return true
		case <-time.After(time.Duration(t.Delay) * time.Microsecond):
		}
	}
	return false
}
