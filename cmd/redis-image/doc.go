// Command redis-image builds the docker backend's image (make
// redis-image) with cluster.BuildImage: no registry needed.
//
// It is wiring only: it imports cluster, cluster/docker (the docker
// backend) and internal/cli (its main), and nothing else of this module.
package main
