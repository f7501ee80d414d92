// Package envelope finds where a lock's safety ends along one fault
// parameter: the size of a targeted fault as a multiple of the TTL (a
// holder's stall after its last validity check, a clock jump on the
// nodes of a live hold, the latency of one client group's replies, the
// restart delay of a node of a bare majority).
// It sweeps the parameter over a range, runs k seeds at each point with
// a schedule of that fault alone (a hand-written schedule.json replayed
// by the harness, so the targeted kinds aim as in any run), bisects the
// step where violations begin, and writes a CSV, an SVG plot (violation
// rate with 95% Wilson intervals against the parameter, one line per
// lock, the theoretical boundary marked) and a short table.
//
// It imports harness (the runs' configuration), trial (to run and judge
// each), checker, report, locks and nemesis; cmd/torture wires it
// (torture envelope). Nothing imports it but cmd.
package envelope
