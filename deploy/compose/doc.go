// Package compose starts and stops the multi-host cluster of
// docker-compose.yml, in this folder: five Redis nodes and a toxiproxy
// server, each a container of its own on a private bridge network with
// fixed addresses, for the external backend (torture run --backend
// external). It builds toxiproxy's image from this machine, its server
// from the module version in go.mod (make toxiproxy-image; the Redis one
// is make redis-image's), writes the nodes' configuration (mode 0600: it
// holds the password), and drives the compose CLI found on the machine:
// docker compose (v2) or docker-compose (v1.29).
//
// It owns nothing of a run: the harness reaches the cluster through the
// external backend like any cluster someone else runs. It imports
// cluster (for its default image), go-redis (to see the nodes answer)
// and internal/safefs (its files are written whole, never through a
// link); it is imported by cmd/compose-cluster and by nothing the
// harness uses.
package compose
