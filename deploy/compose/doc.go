// Package compose starts and stops the cluster of docker-compose.yml, in
// this folder: five Redis nodes and a toxiproxy server, containers with
// fixed addresses on a private network, for the external backend. It
// builds toxiproxy's image (make toxiproxy-image), writes the nodes'
// configuration (0600: it holds the password) and drives docker compose
// (v2) or docker-compose (v1.29). It owns nothing of a run: the harness
// reaches the cluster as any external one.
//
// It imports cluster (for its default image), go-redis (to see the nodes
// answer) and internal/safefs (its files are written whole, never through
// a link); only cmd/compose-cluster imports it.
package compose
