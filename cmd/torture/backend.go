package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/locktorture/locktorture/cluster"
	"github.com/locktorture/locktorture/harness"
)

// passwordEnv holds the external nodes' password when --password is not
// given, which keeps it off the command line.
const passwordEnv = "LOCKTORTURE_PASSWORD"

// addBackendFlags registers on fs the flags that say where the nodes run
// and how many there are: --backend, --image, --toxiproxy, --password and
// --nodes, which takes a number or, for the external backend, the nodes'
// addresses.
func addBackendFlags(fs *flag.FlagSet, cfg *harness.Config) {
	fs.StringVar(&cfg.Backend, "backend", cfg.Backend,
		"where the nodes run: process (redis-server on this host), docker (containers of --image) or external (--nodes host:port,... run by someone else; no kill, pause or clock faults)")
	fs.StringVar(&cfg.Image, "image", "", "docker backend: the image (default "+cluster.DefaultImage+", which make redis-image builds; nothing is pulled)")
	fs.StringVar(&cfg.Toxiproxy, "toxiproxy", "",
		"external backend: URL of the API of a toxiproxy server to reach the nodes through, for network faults (e.g. http://10.0.0.5:8474)")
	fs.StringVar(&cfg.Password, "password", os.Getenv(passwordEnv),
		"external backend: the nodes' password (default $"+passwordEnv+"); never written to the run directory")
	fs.Var(nodesFlag{cfg}, "nodes",
		"Redis nodes: a number (default 5 for redlock locks, 1 otherwise), or for --backend external their addresses, host:port,...")
}

// nodesFlag is --nodes: a number of nodes, or a comma-separated list of
// host:port for the external backend.
type nodesFlag struct{ cfg *harness.Config }

func (f nodesFlag) String() string {
	switch {
	case f.cfg == nil:
		return ""
	case len(f.cfg.External) > 0:
		return strings.Join(f.cfg.External, ",")
	case f.cfg.Nodes == 0:
		return ""
	}
	return strconv.Itoa(f.cfg.Nodes)
}

func (f nodesFlag) Set(s string) error {
	if n, err := strconv.Atoi(s); err == nil {
		if n < 1 {
			// Config.Nodes 0 would be "the default".
			return fmt.Errorf("want at least 1 node, got %d", n)
		}
		f.cfg.Nodes, f.cfg.External = n, nil
		return nil
	}
	var addrs []string
	for a := range strings.SplitSeq(s, ",") {
		if _, _, err := net.SplitHostPort(a); err != nil {
			return fmt.Errorf("want a number or host:port,...: %q: %v", a, err)
		}
		addrs = append(addrs, a)
	}
	f.cfg.Nodes, f.cfg.External = len(addrs), addrs
	return nil
}

// redactArgs returns args with the value of --password replaced, for the
// command line that results.json records.
func redactArgs(args []string) []string {
	out := append([]string(nil), args...)
	for i := 0; i < len(out); i++ {
		name, _, hasValue := strings.Cut(strings.TrimLeft(out[i], "-"), "=")
		if !strings.HasPrefix(out[i], "-") || name != "password" {
			continue
		}
		if hasValue {
			out[i] = out[i][:strings.Index(out[i], "=")+1] + "REDACTED"
		} else if i+1 < len(out) {
			out[i+1] = "REDACTED"
			i++
		}
	}
	return out
}
