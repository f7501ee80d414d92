// Package report turns a checked run into what people read: results.json
// (the configuration, the seed, the verdicts, counts and latency figures),
// a one-screen text summary, and report.html, one offline page with the
// summary and porcupine's visualization of each failing key (or of a
// sample key when all is valid).
//
// It imports checker and history; never harness, so stored runs can be
// re-reported from their files alone.
package report
