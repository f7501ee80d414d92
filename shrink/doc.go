// Package shrink finds the smallest part of a run's fault schedule that
// still reproduces a violation: delta debugging (Zeller and
// Hildebrandt's ddmin) over the schedule's steps, each candidate judged
// by a test the caller gives (in `torture shrink`: replay the candidate
// schedule with --replay, up to k times, and look for a violation).
//
// Steps knows nothing of runs, faults or histories. Run is `torture
// shrink`'s orchestration: it reads a stored run (its results.json,
// schedule.json and history), refuses what it must not replay, and
// replays candidate schedules through trial. It imports checker,
// cluster, harness, internal/safefs (its minimal.json, a file of its own),
// locks, nemesis, report and trial.
package shrink
