// Package testutil is the one home of the helpers that the tests of
// several packages share (litestream's internal/testingutil is the model):
// opening a cluster for a test and closing it after, the docker backend's
// image, waiting with a deadline, a go-redis client of a node, the
// processes of a test, and hand-written histories.
//
// It is for tests only: no production package imports it. It imports
// cluster, cluster/docker (the tests' docker nodes), history,
// internal/procstat and internal/redisopt, so the tests of cluster
// (internal tests: they use the package's unexported names) cannot import
// it and keep a few helpers of their own; every other package's tests,
// checker's internal ones included, can.
package testutil
