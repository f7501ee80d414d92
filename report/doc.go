// Package report turns a checked run into what people read: results.json
// (configuration, seed, verdicts, counts, latencies), a one-screen text
// summary, and report.html, one offline page: the summary, which property
// broke (two leases at once, or the resource only), the cause of each
// violation (package explain), the overlapping leases, inline SVG plots
// of holds per client, throughput and acquire latency with the faults as
// bands, and porcupine's visualization of each failing key (or the
// busiest when all is valid). report.html is written from the
// checker.Analysis of the check's one pass: the report never reads the
// events again.
//
// For a comparison matrix, WriteMatrix writes summary.md, summary.json,
// junit.xml and index.html; Publish packs a bundle, and Findings and
// Consensus render the blocks of the README and docs that ReplaceBlock
// swaps in, so that the pages' figures are the data's.
//
// Run folders, summaries and bundles may come from someone else: no file
// is read through a symbolic link, Publish packs no run outside its
// folder, and every file is written through a temporary file and a
// rename (internal/safefs; docs/threat-model.md).
//
// It imports checker, explain, internal/safefs and internal/health (a
// run's health); never harness, so stored runs can be re-reported from
// their files alone. Every page works offline, with no script but
// porcupine's own.
package report
