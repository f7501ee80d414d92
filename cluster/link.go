package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	toxiclient "github.com/Shopify/toxiproxy/v2/client"
	"github.com/Shopify/toxiproxy/v2/toxics"
)

// ErrNoToxic is returned by Link.RemoveToxic when the proxy has no toxic of
// that name.
var ErrNoToxic = errors.New("cluster: no such toxic")

// Toxic is one toxiproxy toxic as its API takes it: Stream is "upstream"
// (commands) or "downstream" (replies), Toxicity the share of connections
// it acts on (0 to 1), Attributes the type's parameters.
type Toxic struct {
	Name       string  `json:"name"`
	Type       string  `json:"type"`
	Stream     string  `json:"stream"`
	Toxicity   float32 `json:"toxicity"`
	Attributes any     `json:"attributes"`
}

// Link is one proxy by which a client group reaches a node, in this
// process or on a remote toxiproxy server. Its methods are safe for
// concurrent use; remote calls are bounded by the client's 30 s timeout,
// and a cancelled ctx returns at once (the call finishes behind).
type Link struct {
	name   string            // the proxy's name on its server
	local  *toxiproxy.Proxy  // in-process
	remote *toxiclient.Proxy // on a toxiproxy server
}

// Name returns the proxy's name on its server: "n1", "n1-g1", ...,
// prefixed with "locktorture-<run>-" on a remote one.
func (l *Link) Name() string { return l.name }

// Remote reports whether the proxy lives on a remote toxiproxy server.
func (l *Link) Remote() bool { return l.remote != nil }

// localToxicTimeout bounds a change of an in-process proxy's toxics:
// toxiproxy v2.12.0 interrupts a connection's toxics to change its chain,
// and one blocked on a writer that takes nothing never takes it, so the
// change and every later one would wait for ever (see slicer). Bounded,
// the run ends with an error instead (the call is left behind).
var localToxicTimeout = 30 * time.Second

// local runs f, a change of in-process toxics, within localToxicTimeout.
func local(ctx context.Context, f func() error) error {
	ctx, cancel := context.WithTimeout(ctx, localToxicTimeout)
	defer cancel()
	err := callCtx(ctx, f)
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("toxiproxy did not change the proxy's toxics within %v (a connection's writer takes nothing): %w", localToxicTimeout, err)
	}
	return err
}

// AddToxic adds t to the proxy; it acts on open and new connections.
func (l *Link) AddToxic(ctx context.Context, t Toxic) error {
	if l.local != nil {
		b, err := json.Marshal(t)
		if err == nil {
			err = local(ctx, func() error {
				_, err := l.local.Toxics.AddToxicJson(bytes.NewReader(b))
				return err
			})
		}
		if err != nil {
			return fmt.Errorf("cluster: toxic %s on %s: %w", t.Name, l.name, err)
		}
		return nil
	}
	var attrs toxiclient.Attributes
	if b, err := json.Marshal(t.Attributes); err != nil {
		return fmt.Errorf("cluster: toxic %s on %s: %w", t.Name, l.name, err)
	} else if err := json.Unmarshal(b, &attrs); err != nil {
		return fmt.Errorf("cluster: toxic %s on %s: attributes: %w", t.Name, l.name, err)
	}
	err := callCtx(ctx, func() error {
		_, err := l.remote.AddToxic(t.Name, t.Type, t.Stream, t.Toxicity, attrs)
		return err
	})
	if err != nil {
		return fmt.Errorf("cluster: toxic %s on %s: %w", t.Name, l.name, err)
	}
	return nil
}

// RemoveToxic removes the toxic called name: ErrNoToxic (wrapped) if none.
func (l *Link) RemoveToxic(ctx context.Context, name string) error {
	var err error
	if l.local != nil {
		err = local(ctx, func() error { return l.local.Toxics.RemoveToxic(context.WithoutCancel(ctx), name) })
		if errors.Is(err, toxiproxy.ErrToxicNotFound) {
			err = ErrNoToxic
		}
	} else {
		err = callCtx(ctx, func() error { return l.remote.RemoveToxic(name) })
		if ae, ok := errors.AsType[*toxiclient.ApiError](err); ok && ae.Status == http.StatusNotFound {
			err = ErrNoToxic
		}
	}
	if err != nil {
		return fmt.Errorf("remove toxic %s from %s: %w", name, l.name, err)
	}
	return nil
}

// Toxics returns the names of the proxy's toxics, sorted.
func (l *Link) Toxics(ctx context.Context) ([]string, error) {
	var names []string
	if l.local != nil {
		for _, t := range l.local.Toxics.GetToxicArray() {
			if w, ok := t.(*toxics.ToxicWrapper); ok {
				names = append(names, w.Name)
			}
		}
	} else {
		var ts toxiclient.Toxics
		err := callCtx(ctx, func() (err error) {
			ts, err = l.remote.Toxics()
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("cluster: toxics of %s: %w", l.name, err)
		}
		for _, t := range ts {
			names = append(names, t.Name)
		}
	}
	slices.Sort(names)
	return names, nil
}

// callCtx runs f, which takes no context, and returns its error, or ctx's
// once ctx is done (f then finishes in the background).
func callCtx(ctx context.Context, f func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}
