// Command redis-image builds the Docker image that the docker backend
// runs (make redis-image): FROM scratch, from this host's redis-server,
// the shared libraries it links and the clock shim, so it needs no
// registry. See cluster.BuildImage.
//
// It is wiring only: it imports cluster, cluster/docker (the docker
// backend) and internal/cli (its main), and nothing else of this module.
package main
