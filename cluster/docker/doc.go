// Package docker is the container engine of the docker backend: it runs
// the containers of package cluster's StartDocker, StartDockerFailover and
// Open (--backend docker) with testcontainers-go and the Docker client.
// A program that runs the docker backend imports it for its effect,
//
//	import _ "github.com/locktorture/locktorture/cluster/docker"
//
// which registers it with package cluster (cluster.RegisterContainerEngine);
// a program that does not, such as a lock's gate, is built without the
// Docker client, testcontainers-go and OpenTelemetry, and asked for the
// docker backend says so (cluster.ErrNoDockerBackend).
//
// Every container and network it makes carries LabelRun and LabelOwner
// (containers LabelNode too): the cluster's Close removes them, and the
// next cluster opened removes those of a process of this host that died
// without closing its own (RemoveStaleContainers). testcontainers' reaper
// (ryuk) is disabled, as its image is not assumed to be there. Containers
// lists them, and Ping tells whether an engine answers.
//
// It imports package cluster, internal/procstat, testcontainers-go, the Docker (moby) client
// and API types and containerd's errdefs; only main packages (cmd/torture,
// cmd/redis-image) and tests import it.
package docker
