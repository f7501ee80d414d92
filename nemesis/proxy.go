package nemesis

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
)

// Toxiproxy's two streams: upstream carries the client's commands to Redis,
// downstream Redis's replies to the client.
const (
	upstream   = "upstream"
	downstream = "downstream"
)

// toxicSpec is the JSON that toxiproxy's AddToxicJson reads.
type toxicSpec struct {
	Name       string  `json:"name"`
	Type       string  `json:"type"`
	Stream     string  `json:"stream"`
	Toxicity   float32 `json:"toxicity"`
	Attributes any     `json:"attributes"`
}

// injectToxic adds a toxic to px that acts on every connection, open or
// new, in one direction.
func injectToxic(px *toxiproxy.Proxy, spec toxicSpec) error {
	spec.Toxicity = 1
	b, err := json.Marshal(spec)
	if err != nil {
		return fmt.Errorf("toxic %s on %s: %w", spec.Name, px.Name, err)
	}
	if _, err := px.Toxics.AddToxicJson(bytes.NewReader(b)); err != nil {
		return fmt.Errorf("toxic %s on %s: %w", spec.Name, px.Name, err)
	}
	return nil
}

// clearToxics removes the toxics called names from every proxy of every
// node, those of every client group included, ignoring the ones that are
// not there: a heal that works after a half-done start, and twice.
func clearToxics(ctx context.Context, t *Target, names ...string) error {
	if t.Cluster == nil {
		return errors.New("no cluster")
	}
	var errs []error
	for _, n := range t.Cluster.Nodes() {
		for g := range t.Cluster.Groups() {
			px := n.GroupProxy(g)
			for _, name := range names {
				err := px.Toxics.RemoveToxic(ctx, name)
				if err != nil && !errors.Is(err, toxiproxy.ErrToxicNotFound) {
					errs = append(errs, fmt.Errorf("remove toxic %s from %s: %w", name, px.Name, err))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// checkNodes returns an error unless idx is a non-empty, strictly
// increasing list of node indices, each below nodes (when nodes ≥ 0).
func checkNodes(idx []int, nodes int) error {
	if len(idx) == 0 {
		return errors.New("no nodes")
	}
	for i, n := range idx {
		if n < 0 {
			return fmt.Errorf("negative node index %d", n)
		}
		if nodes >= 0 && n >= nodes {
			return fmt.Errorf("no node n%d: the run has %d", n+1, nodes)
		}
		if i > 0 && n <= idx[i-1] {
			return fmt.Errorf("nodes %v: want distinct indices in increasing order", idx)
		}
	}
	return nil
}
