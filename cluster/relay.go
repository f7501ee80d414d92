package cluster

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
)

// relay accepts the connections to one address and joins each to an
// upstream until either side ends: what the fronts (peerFront, front)
// share.
type relay struct {
	ln     net.Listener
	mu     sync.Mutex
	conns  map[net.Conn]int // open connections, accepted and upstream, by peer index (-1: no node)
	closed bool
	wg     sync.WaitGroup
}

// listenRelay listens on host:0; what names the relay in its error.
func listenRelay(host, what string) (*relay, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return nil, fmt.Errorf("cluster: %s: %w", what, err)
	}
	return &relay{ln: ln, conns: make(map[net.Conn]int)}, nil
}

func (r *relay) addr() string { return r.ln.Addr().String() }

// serve accepts connections until the listener closes: admit names a
// connection's peer or refuses it, forward serves it.
func (r *relay) serve(admit func(net.Conn) (int, bool), forward func(net.Conn)) {
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return
		}
		peer, ok := admit(c)
		if !ok {
			c.Close()
			continue
		}
		if !r.track(c, peer) {
			c.Close()
			return
		}
		r.wg.Go(func() { forward(c) })
	}
}

// track remembers c, and its peer, for close; false once closed.
func (r *relay) track(c net.Conn, peer int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	r.conns[c] = peer
	return true
}

// drop forgets c and closes it.
func (r *relay) drop(c net.Conn) {
	r.mu.Lock()
	delete(r.conns, c)
	r.mu.Unlock()
	c.Close()
}

// join dials to and copies what is read from src (c, or what stands for
// it) there and the replies back to c, until either side ends.
func (r *relay) join(c, src net.Conn, to string) {
	defer r.drop(c)
	up, err := net.Dial("tcp", to)
	if err != nil {
		return
	}
	if !r.track(up, -1) {
		up.Close()
		return
	}
	defer r.drop(up)
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		io.Copy(dst, src)
		done <- struct{}{}
	}
	r.wg.Go(func() { pipe(up, src) })
	r.wg.Go(func() { pipe(c, up) })
	<-done // one side ended: end both (the deferred drops)
}

// close stops listening, ends every connection and waits for the
// forwarders.
func (r *relay) close() error {
	r.mu.Lock()
	r.closed = true
	err := r.ln.Close()
	for c := range r.conns {
		c.Close()
	}
	r.mu.Unlock()
	r.wg.Wait()
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// closeTaken empties *list under mu and closes what it held.
func closeTaken[T interface{ close() error }](mu *sync.Mutex, list *[]T) error {
	mu.Lock()
	items := *list
	*list = nil
	mu.Unlock()
	var errs []error
	for _, it := range items {
		errs = append(errs, it.close())
	}
	return errors.Join(errs...)
}
