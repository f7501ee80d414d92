// Command torture runs torture tests against Redis locks and checks
// recorded histories.
//
//	torture run      [flags]                 run one test, write <out>/<run-id>/
//	torture check    [flags] DIR|FILE        re-check a stored run or a bare history
//	torture explain  [flags] DIR|FILE        name the cause of each violation
//	torture shrink   [flags] DIR             the fewest fault steps that still reproduce a run's violation
//	torture matrix   [flags]                 the comparison matrix (--quick: the release gate; --shard i/n: a share of it)
//	torture matrix merge OUT DIR...          join the outputs of a matrix's shards and judge its cells
//	torture matrix publish MATRIXDIR OUT     the bundle results/ publishes (--readme, --findings: the pages made from it)
//	torture matrix fetch BUNDLE...           fetch a bundle's runs archive, verify its sha256, hold it against the summary
//	torture matrix trend NIGHT... TONIGHT    compare bundles night by night; exit 1 when a cell's rate moved
//	torture gate     [flags]                 the release gate of one lock, from the promises it declares
//	torture envelope [flags]                 sweep one fault's size to find where each lock's safety ends
//	torture client   --lock NAME             serve a registered Go lock over the client protocol
//	torture version                          this binary's commit and the versions that decide verdicts
//
// One table (commands, in main.go) gives the usage, the suggestions, the
// dispatch and this list's names. Flags may come anywhere on the line; a
// misspelt command, flag, lock or fault kind gets a suggestion. Exit
// status, the same for every command: 0 valid (every cell as expected), 1
// a violation (a contradicted cell, a broken promise), 2 an error, 3
// inconclusive (a verdict unknown, which is never a pass).
//
// Beside it: cmd/bench (make bench), cmd/redis-image (make redis-image)
// and cmd/compose-cluster (make compose-up). run's flag defaults are
// harness.Defaults'; every --check-timeout defaults to
// checker.DefaultTimeout.
//
// It is wiring only: it imports harness, trial, checker, report, explain,
// shrink, matrix, gate, envelope, locks,
// cluster/docker (the docker backend) and locks/etcdlock (etcd-mutex,
// the consensus lock), both of which a gate of one's own leaves out, and
// internal/cli, internal/safefs and internal/suggest; nothing imports it.
package main
