// Package report turns a checked run into what people read: results.json
// (the configuration, the seed, the verdicts, counts and latency figures),
// a one-screen text summary, and report.html, one offline page with the
// summary, inline SVG plots (holds per client, throughput and acquire
// latency over time, each with the faults as bands; see TimelineSVG,
// ThroughputSVG and LatencySVG) and porcupine's visualization of each
// failing key (or of a sample key when all is valid).
//
// For a comparison matrix, WriteMatrix writes summary.md, summary.json,
// junit.xml and index.html from a Matrix.
//
// It imports checker and history; never harness, so stored runs can be
// re-reported from their files alone. Every page it writes works offline:
// no external assets, and no script but porcupine's own.
package report
