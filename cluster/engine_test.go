package cluster_test

// The docker backend's tests in this package run with the engine of
// package cluster/docker, registered when it is imported. It imports
// package cluster, so only a test of another package (this one) may
// import it; the test binary is one, and so is its registry.
import _ "github.com/locktorture/locktorture/cluster/docker"
