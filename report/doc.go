// Package report turns a checked run into what people read: results.json
// (the configuration, the seed, the verdicts, counts and latency figures),
// a one-screen text summary, and report.html, one offline page with the
// summary, which property broke in words and colour (two leases at once,
// or the resource only), the cause of each violation (package explain),
// the overlapping leases as a table, inline SVG plots (holds per client,
// throughput and acquire latency over time, each with the faults as
// bands; see Timeline, Throughput and Latency) and porcupine's
// visualization of each failing key (or of the busiest key when all is
// valid). report.html is written from a checker.Analysis, the value the
// check derives in its one pass over the history: the report never
// reads the events again.
//
// For a comparison matrix, WriteMatrix writes summary.md, summary.json,
// junit.xml and index.html from a Matrix.
//
// Run folders, summaries and bundles may come from someone else:
// ReadResults and ReadMatrix refuse a file that is a symbolic link or not
// a regular file, Publish packs nothing reached through a link nor a run
// outside its folder, and every file is written through a temporary file
// and a rename (internal/safefs; docs/threat-model.md).
//
// It imports checker, explain, internal/safefs and internal/health (a
// run's health); never harness, so
// stored runs can be re-reported from their files alone. Every page it
// writes works offline: no external assets, and no script but
// porcupine's own.
//
// The findings table of the README is rendered here too (Findings, from
// a published bundle's summary.json), between markers that ReplaceBlock
// finds, so that the page's figures are the data's.
package report
