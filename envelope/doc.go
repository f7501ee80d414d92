// Package envelope finds where a lock's safety ends along one fault
// parameter, a multiple of the TTL (a holder's stall after its last
// validity check, a clock jump, one client group's reply latency, a
// restart delay of a node of a bare majority). It sweeps the parameter,
// runs k seeds at each point with a replayed schedule of that fault
// alone, bisects the step where violations begin, and writes a CSV, an
// SVG plot (violation rate with 95% Wilson intervals per lock, theory's
// boundary marked) and a short table.
//
// It imports harness (the runs' configuration), trial (to run and judge
// each), checker, report, locks and nemesis; cmd/torture wires it
// (torture envelope). Nothing imports it but cmd.
package envelope
