// Package harness runs one torture test: it brings the Redis nodes up,
// starts concurrent clients that loop acquire → critical section →
// release against a lock from package locks, records every operation in a
// history, stops everything and always cleans up.
//
// The protected resource is a fault-free, linearizable in-process store
// ([Store]) holding one integer per key; with fencing it refuses any access
// carrying a fencing token older than the newest it has seen.
//
// It imports locks, nemesis, history, cluster and internal/wait; never
// checker.
package harness
