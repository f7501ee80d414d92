package matrix

import "github.com/locktorture/locktorture/report"

// Least rates of the violation cells (#16): the share of seeds on which
// the cell's faults must expose the violation, with the reason. A cell
// not listed takes report.DefaultBand of its expectation (safe: 0;
// violation: ≥ 0.9, for faults that force the interleaving on nearly
// every seed; possible: any). The rates observed in results/ chose the
// lower bands: a band is a claim the matrix can contradict, so it is
// set no higher than the faults can force and no lower than needed for
// a cell that never shows the violation to be caught (report.Band.
// Contradicts: an expected violation seen on no seed always contradicts).
const (
	whyForced  = "the fault forces the interleaving on every seed (a pause longer than the TTL; a race with no fault)"
	whyKill    = "random kills must land while a lock is held, and the restarted node must be asked before the key would have expired: seen on 2 or 3 of 3 seeds"
	whyClock   = "a random jump must land while a lock is held and be large enough to expire it: seen on 5 to 7 of 8 seeds"
	whyClock5  = "a random jump must move enough of the five nodes while a lock is held: seen on 4 or 5 of 8 seeds"
	whyKillQ   = "kill-quorum makes the bare majority itself (the nodes outside it cut off until it grants) and kills one of its nodes at the grant; the second client must still win the restarted node and the freed ones before the holder releases: 10 of 10 seeds for each cell in BENCHMARKS.md part 8c, 3 of 3 in the matrix"
	whyFailove = "the isolation must fall inside a hold the replica has not yet copied: seen on 3 of 3 seeds, with random timing"
)

var bands = map[string]report.Band{
	"setnx-get-set/none":           {Min: 0.9, Max: 1, Why: whyForced},
	"redlock-no-quorum/none":       {Min: 0.9, Max: 1, Why: whyForced},
	"redlock-no-elapsed/latency":   {Min: 0.6, Max: 1, Why: "a latency fault must slow the acquire of a 950 ms hold: seen on 3 of 3 seeds here and 10 of 10 in BENCHMARKS.md"},
	"setnx/kill-immediate":         {Min: 0.6, Max: 1, Why: whyKill},
	"redislock/kill-immediate":     {Min: 0.6, Max: 1, Why: whyKill},
	"redis-py-lock/kill-immediate": {Min: 0.6, Max: 1, Why: whyKill},
	"setnx/client-pause":           {Min: 0.9, Max: 1, Why: whyForced},
	"redlock/client-pause":         {Min: 0.9, Max: 1, Why: whyForced},
	"setnx-plain-del/client-pause": {Min: 0.9, Max: 1, Why: whyForced},
	"redsync/client-pause":         {Min: 0.9, Max: 1, Why: whyForced},
	"redislock/client-pause":       {Min: 0.9, Max: 1, Why: whyForced},
	"redis-py-lock/client-pause":   {Min: 0.9, Max: 1, Why: whyForced},
	"redlock-py/client-pause":      {Min: 0.9, Max: 1, Why: whyForced},
	"setnx/clock":                  {Min: 0.5, Max: 1, Why: whyClock},
	"redislock/clock":              {Min: 0.5, Max: 1, Why: whyClock},
	"redis-py-lock/clock":          {Min: 0.5, Max: 1, Why: whyClock},
	"redlock/clock":                {Min: 0.3, Max: 1, Why: whyClock5},
	"redsync/clock":                {Min: 0.3, Max: 1, Why: whyClock5},
	"redlock-py/clock":             {Min: 0.3, Max: 1, Why: whyClock5},
	"setnx/failover":               {Min: 0.6, Max: 1, Why: whyFailove},
	// #14: the targeted kill that replaced the random one.
	"redlock/kill-quorum":                    {Min: 0.9, Max: 1, Why: whyKillQ},
	"redsync/kill-quorum":                    {Min: 0.9, Max: 1, Why: whyKillQ},
	"redlock-py/kill-quorum":                 {Min: 0.9, Max: 1, Why: whyKillQ},
	"redlock+fencing/kill-quorum":            {Min: 0.9, Max: 1, Why: whyKillQ},
	"redlock+fencing+write-only/kill-quorum": {Min: 0.9, Max: 1, Why: whyKillQ + "; the stale write must also land after the other holder's"},
	// #16 cells.
	"setnx-seed/kill-immediate":    {Min: 0.6, Max: 1, Why: whyKill},
	"setnx-seed/client-pause":      {Min: 0.9, Max: 1, Why: whyForced},
	"setnx-seed/clock":             {Min: 0.5, Max: 1, Why: whyClock},
	"redlock-py-wall/client-clock": {Min: 0.6, Max: 1, Why: "a backward jump of the strobe must fall inside a round that wins the key, and the over-claimed hold must meet the next grant: seen on 3 of 3 seeds and 9 of 10 (seed 7 missed with two strobes)"},
}

// band is the cell's expectation as a band of rates.
func (sp Spec) band() report.Band {
	if sp.Band != nil {
		return *sp.Band
	}
	if b, ok := bands[sp.Name]; ok && sp.Expect == report.ExpectViolation {
		return b
	}
	return report.DefaultBand(sp.Expect)
}
