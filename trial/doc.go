// Package trial is the one place where a configured run becomes a judged
// result. Run runs a harness.Plan, checks its history, applies the rules
// that need the run's context, keeps what each targeted fault step did as
// data (report.Strike) and writes results.json and report.html; Check is
// the one function that opens a history file and checks it; Recheck
// judges a stored run directory again by the same rules. `torture run`,
// the matrix, the release gate, the envelope, shrink and the benchmarks
// all call it, so a run means the same everywhere (etcd's robustness
// tests have one testRobustness every scenario goes through).
//
// The rules beyond the checker, which reads a history alone:
//   - a verdict about nothing is unknown: a run that was to inject faults
//     and injected none; a run all of whose fault steps were targeted and
//     none of which struck a hold that stayed open long enough for another
//     client to act (missed, or no window: the holder released first); a
//     run in which no key changed hands (fewer than two holds of every
//     key); a run, with faults or without, in which fewer than MinOKShare
//     of the completed acquires succeeded (the clients starved);
//   - a section that could not write because the hold is longer than the
//     TTL says so in the reason.
//
// A violation always stands. It imports harness (to run), internal/health
// (a run's slow stretches), checker (to
// judge), explain (the causes of the violations), nemesis (the strikes'
// decisions), history (to open a history file) and report (to write);
// nothing it imports imports it.
package trial
