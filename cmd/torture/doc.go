// Command torture runs torture tests against Redis locks and checks
// recorded histories.
//
//	torture run    [flags]           run one test, write <out>/<run-id>/
//	torture check  [flags] DIR|FILE  re-check a stored run or a bare history
//	torture matrix [flags]           run the comparison matrix (--quick: the release gate; --shard i/n: a share of it)
//	torture matrix merge OUT DIR...  join the outputs of a matrix's shards and judge its cells
//
// Exit status: 0 when every verdict is valid (every cell matches, for
// matrix), 1 on a safety violation (a cell that contradicts its
// expectation), 2 when a verdict is unknown or on an error.
//
// Beside it, cmd/bench measures the harness (make bench, BENCHMARKS.md),
// cmd/redis-image builds the docker backend's image (make redis-image)
// and cmd/compose-cluster runs the multi-host cluster of the external
// backend (make compose-up). Every default of run's flags is
// harness.Defaults'; every --check-timeout defaults to
// checker.DefaultTimeout.
package main
