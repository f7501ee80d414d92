// Package gate is the release gate for any lock: it derives the cells a
// registered lock is tested on from the promises the lock declares
// (locks.Promises) and the literature table (matrix.Literature), runs them
// over a few seeds within a time budget, and judges the lock by its
// promises: a cell expected safe that shows a violation, or a lease
// overlap in a cell that only expects lost updates, is a promise broken.
//
// `torture gate --lock NAME` is Command; a user's own main that registers
// a lock (locks.Register) calls Main, or Run for the result itself.
//
// It owns the derivation's coverage (which fault kinds a lock's cells
// take, and why the others are not run), the budget (scaling the run
// duration, then the seeds, to fit), the judgement by promise and the
// gate's part of the summaries; it runs the cells with package matrix and
// writes the matrix's summaries (summary.md/json, junit.xml, index.html)
// with report. Nothing in it switches on a fault or a promise by name: a
// new row of the table or a new fault kind needs no code here.
//
// It imports matrix, report, checker, explain (to describe a first
// violation in seconds and short tokens), locks, nemesis, internal/cli (to
// parse Command's flags as every command does) and internal/safefs (a
// gate's output folder of its own); nothing imports it but cmd/torture and
// users' mains.
package gate
