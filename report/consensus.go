package report

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// ConsensusBlock names the block of docs/consensus.md Consensus renders.
const ConsensusBlock = "consensus"

// ConsensusOptions says how Consensus reads a bundle.
type ConsensusOptions struct {
	// Bundle is the bundle's folder as the page links it.
	Bundle string
	// Consensus reports whether a lock is granted by a consensus system
	// (locks.Promises.Consensus); every other lock is a Redis lock.
	Consensus func(lock string) bool
	// Skip reports whether a lock is left out (a mutant).
	Skip func(lock string) bool
	// Refused says in one line why the harness refuses to run a row on a
	// consensus lock, "" when it would; nil says nothing.
	Refused func(lock, row string) string
}

// Reading is what one row of the comparison says about the argument.
const (
	// ReadEvery: no lease lock survives the row, the consensus lock
	// neither.
	ReadEvery = "breaks every lease lock"
	// ReadRedisOnly: it breaks a Redis lock, not the consensus lock.
	ReadRedisOnly = "breaks only Redis locks"
	// ReadFencing: a +fencing row whose resource stayed safe where the
	// same fault without fencing lost updates.
	ReadFencing = "fencing repairs it"
	// ReadSomeRedis: it breaks some Redis locks, but another stayed safe
	// as the consensus lock did: what saves them is not consensus (a
	// watchdog's renewal, say).
	ReadSomeRedis = "breaks some Redis locks, not the consensus lock nor every Redis lock"
	ReadSafe      = "safe for every lock"
	// ReadUnmeasured: no cell of the consensus lock decided the row.
	ReadUnmeasured = "not measured on the consensus lock"
)

// Consensus renders docs/consensus.md's block: per row a consensus lock
// ran or a Redis lock broke, each lock's runs that broke the lease and the
// resource, and the reading; then the rows refused on a consensus lock,
// by reason; then the rows counted by reading.
func Consensus(m Matrix, o ConsensusOptions) []byte {
	var cons, redis []string
	byRow := map[string]map[string]Cell{}
	var rows []string
	for _, c := range m.Cells {
		if o.Skip != nil && o.Skip(c.Lock) {
			continue
		}
		isCons := o.Consensus != nil && o.Consensus(c.Lock)
		if isCons && !slices.Contains(cons, c.Lock) {
			cons = append(cons, c.Lock)
		} else if !isCons && !slices.Contains(redis, c.Lock) {
			redis = append(redis, c.Lock)
		}
		row := cellRow(c)
		if byRow[row] == nil {
			byRow[row] = map[string]Cell{}
			rows = append(rows, row)
		}
		byRow[row][c.Lock] = c
	}
	locksIn := append(append([]string(nil), redis...), cons...)
	var b bytes.Buffer
	fmt.Fprintf(&b, "<!-- begin %s: rendered by report.Consensus from %s/summary.json; do not edit by hand -->\n", ConsensusBlock, mdText(o.Bundle))
	fmt.Fprintf(&b, "From [%s](%s), %s, seeds %s, %s a run. Each cell: runs that broke the lease (L) and lost an update (R), of the runs that decided it; — where the lock has no cell of the row.\n\n",
		mdText(o.Bundle), o.Bundle, m.Started.UTC().Format("2006-01-02"), JoinSeeds(m.Seeds, ","), mdText(m.Duration))
	b.WriteString("| row |")
	for _, l := range locksIn {
		b.WriteString(" `" + mdText(l) + "` |")
	}
	b.WriteString(" reading |\n")
	b.WriteString("|---|" + strings.Repeat("---|", len(locksIn)) + "---|\n")
	counts := map[string]int{}
	type absent struct{ lock, why string }
	var whys []absent
	without := map[absent][]string{} // the rows of each lock and reason
	for _, row := range rows {
		cells := byRow[row]
		reading := consensusReading(row, byRow, cons, redis)
		if reading == "" {
			continue
		}
		counts[reading]++
		for _, l := range cons {
			if _, ok := cells[l]; ok || o.Refused == nil {
				continue
			}
			if why := o.Refused(l, row); why != "" {
				a := absent{l, why}
				if without[a] == nil {
					whys = append(whys, a)
				}
				without[a] = append(without[a], "`"+mdText(row)+"`")
			}
		}
		line := "| " + mdText(row) + " |"
		for _, l := range locksIn {
			c, ok := cells[l]
			if !ok {
				line += " — |"
				continue
			}
			lease, res := propertyRate(c, PropertyLease), propertyRate(c, PropertyResource)
			if lease.Runs == 0 && res.Runs == 0 {
				line += fmt.Sprintf(" undecided (%d runs) |", len(c.Runs))
				continue
			}
			line += fmt.Sprintf(" L %d/%d · R %d/%d |", lease.Violations, lease.Runs, res.Violations, res.Runs)
		}
		b.WriteString(line + " " + reading + " |\n")
	}
	b.WriteString("\n")
	for _, a := range whys {
		fmt.Fprintf(&b, "No `%s` cell of %s, which the harness refuses to run on it: %s.\n\n", mdText(a.lock), strings.Join(without[a], ", "), mdText(a.why))
	}
	for _, r := range []string{ReadEvery, ReadRedisOnly, ReadSomeRedis, ReadFencing, ReadSafe, ReadUnmeasured} {
		if counts[r] > 0 {
			fmt.Fprintf(&b, "- %s: %s\n", r, plural(counts[r], "row"))
		}
	}
	fmt.Fprintf(&b, "<!-- end %s -->\n", ConsensusBlock)
	return b.Bytes()
}

// consensusReading reads one row; "" leaves it out (no consensus lock's
// cell, and no Redis lock broke it).
func consensusReading(row string, byRow map[string]map[string]Cell, cons, redis []string) string {
	cells := byRow[row]
	broke := func(c Cell) bool {
		return propertyRate(c, PropertyLease).Violations > 0 || propertyRate(c, PropertyResource).Violations > 0
	}
	decided := func(c Cell) bool {
		return propertyRate(c, PropertyLease).Runs > 0 || propertyRate(c, PropertyResource).Runs > 0
	}
	var redisBroke, redisSafe, consBroke, consDecided, consHas bool
	for _, l := range redis {
		if c, ok := cells[l]; ok && broke(c) {
			redisBroke = true
		} else if ok && decided(c) {
			redisSafe = true
		}
	}
	for _, l := range cons {
		if c, ok := cells[l]; ok {
			consHas = true
			consDecided = consDecided || decided(c)
			consBroke = consBroke || broke(c)
		}
	}
	if base, ok := strings.CutPrefix(row, "+fencing"); ok && !slices.ContainsFunc(slices.Collect(maps.Values(cells)), func(c Cell) bool { return propertyRate(c, PropertyResource).Violations > 0 }) {
		// The same fault without fencing: "+fencing/x" is "x".
		plain := strings.TrimPrefix(strings.TrimPrefix(base, "+write-only"), "/")
		for _, c := range byRow[plain] {
			if propertyRate(c, PropertyResource).Violations > 0 {
				return ReadFencing
			}
		}
	}
	switch {
	case !consHas && !redisBroke:
		return ""
	case !consHas || !consDecided:
		return ReadUnmeasured
	case consBroke:
		return ReadEvery
	case redisBroke && redisSafe:
		return ReadSomeRedis
	case redisBroke:
		return ReadRedisOnly
	}
	return ReadSafe
}
