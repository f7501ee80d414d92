// Package shrink finds the smallest part of a run's fault schedule that
// still reproduces a violation: delta debugging (Zeller and
// Hildebrandt's ddmin) over the schedule's steps, each candidate judged
// by a test the caller gives (in `torture shrink`: replay the candidate
// schedule with --replay, up to k times, and look for a violation).
//
// It knows nothing of runs, faults or histories; it imports the standard
// library only.
package shrink
