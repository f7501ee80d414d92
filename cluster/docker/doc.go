// Package docker is the docker backend's container engine: it runs the
// containers of package cluster (StartDocker, StartDockerFailover, Open
// with --backend docker) with testcontainers-go. A program imports it for
// its effect, registering it with cluster.RegisterContainerEngine:
//
//	import _ "github.com/locktorture/locktorture/cluster/docker"
//
// A program that does not (a lock's gate) is built without the Docker
// client, testcontainers-go and OpenTelemetry (cluster.ErrNoDockerBackend).
//
// Close removes its containers and networks, and the next cluster those a
// dead process left (RemoveStaleContainers), by their labels.
//
// It imports package cluster, internal/procstat, testcontainers-go, the
// Docker (moby) client and API types and containerd's errdefs; only main
// packages (cmd/torture, cmd/redis-image) and tests import it.
package docker
