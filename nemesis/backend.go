package nemesis

import "github.com/locktorture/locktorture/cluster"

// refuseBackend returns a one-line reason why kind cannot act on the
// nodes of s's backend, or "". The process and docker backends run the
// nodes and their proxies, so every kind can act on them (the clock kind
// still needs the shim; see its Refuse). The external backend runs
// nothing: it cannot kill, pause or shift the clock of a node someone else
// runs, and it reaches the network only through that someone's toxiproxy
// server, when there is one.
func refuseBackend(kind string, s Setup) string {
	if s.Backend != cluster.BackendExternal {
		return ""
	}
	switch kind {
	case "kill", "pause":
		return "the external backend does not run the nodes, so it cannot kill, restart or pause them (use --backend process or docker)"
	case "clock":
		return "the external backend does not run the nodes, so it cannot shift their clocks (use --backend process or docker)"
	case "partition", "latency":
		if !s.Toxiproxy {
			return "the external backend reaches the nodes through no proxy; give --toxiproxy to fault the network"
		}
	}
	return ""
}
