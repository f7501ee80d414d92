package report

import (
	"fmt"
	"math"
	"strings"
)

// z95 is the standard normal quantile of a two-sided 95% interval.
const z95 = 1.959963984540054

// Wilson returns the 95% Wilson score interval of k successes in n
// trials (E. B. Wilson, 1927): unlike the normal approximation it stays
// in [0, 1] and is not empty at k = 0 or n, where a cell's rate usually
// sits. n = 0 gives [0, 1].
func Wilson(k, n int) (lo, hi float64) {
	if n <= 0 {
		return 0, 1
	}
	k = min(max(k, 0), n)
	nf := float64(n)
	p := float64(k) / nf
	z2 := z95 * z95
	den := 1 + z2/nf
	center := (p + z2/(2*nf)) / den
	half := z95 * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf)) / den
	lo, hi = center-half, center+half
	// Exact at the ends: 0 of n cannot bound the rate away from 0.
	if k == 0 {
		lo = 0
	}
	if k == n {
		hi = 1
	}
	return max(lo, 0), min(hi, 1)
}

// Band is what the literature predicts as a range of a cell's rate of
// runs with a violation: safe is [0, 0]; violation [Min, 1], Min about
// 0.9 where the faults force the interleaving, lower where random faults
// must find it (Why says); possible [0, 1].
type Band struct {
	Min float64 `json:"min"`
	Max float64 `json:"max"`
	Why string  `json:"why,omitempty"`
}

// DefaultMinRate is a violation band's Min when it states none.
const DefaultMinRate = 0.9

// DefaultBand is the band of an expectation that states none.
func DefaultBand(e Expectation) Band {
	switch e {
	case ExpectSafe:
		return Band{Min: 0, Max: 0}
	case ExpectViolation:
		return Band{Min: DefaultMinRate, Max: 1, Why: "the faults force the violation on nearly every seed"}
	}
	return Band{Min: 0, Max: 1}
}

// Rate is a cell's outcome over its decided runs: how many showed a
// violation, of how many, and the rate's 95% Wilson interval.
type Rate struct {
	Violations int     `json:"violations"`
	Runs       int     `json:"runs"`
	Rate       float64 `json:"rate"`
	Low        float64 `json:"low"`
	High       float64 `json:"high"`
}

// NewRate returns the rate of k violations in n decided runs.
func NewRate(k, n int) Rate {
	r := Rate{Violations: k, Runs: n}
	if n > 0 {
		r.Rate = float64(k) / float64(n)
	}
	r.Low, r.High = Wilson(k, n)
	return r
}

// String is "2/3 = 0.67 [0.21, 0.94]".
func (r Rate) String() string {
	if r.Runs == 0 {
		return "no decided run"
	}
	return fmt.Sprintf("%d/%d = %.2f [%.2f, %.2f]", r.Violations, r.Runs, r.Rate, r.Low, r.High)
}

// String is "0", "≥ 0.9" or "any".
func (b Band) String() string {
	switch {
	case b.Min == b.Max:
		return fmt.Sprintf("%g", b.Min)
	case b.Max >= 1 && b.Min > 0:
		return fmt.Sprintf("≥ %g", b.Min)
	case b.Min <= 0 && b.Max >= 1:
		return "any"
	}
	return fmt.Sprintf("%g–%g", b.Min, b.Max)
}

// Contradicts reports whether k violations in n decided runs contradict
// the band: the 95% interval lies wholly outside it, or the band expects
// violations and none showed, whatever n (an expected violation never
// seen means the harness lost its power; so the release gate's one run
// is judged). No decided run contradicts nothing.
func (b Band) Contradicts(k, n int) bool {
	if n <= 0 {
		return false
	}
	if b.Min > 0 && k == 0 {
		return true
	}
	lo, hi := Wilson(k, n)
	return hi < b.Min || lo > b.Max
}

// Contradicting returns the counts of n that would contradict the band.
func (b Band) Contradicting(n int) []int {
	var out []int
	for k := 0; k <= n; k++ {
		if b.Contradicts(k, n) {
			out = append(out, k)
		}
	}
	return out
}

// ContradictingText says it: "0 of 3 would", "1–3 of 3 would".
func (b Band) ContradictingText(n int) string {
	ks := b.Contradicting(n)
	switch {
	case n <= 0:
		return "no run: nothing would"
	case len(ks) == 0:
		return fmt.Sprintf("no count of %d would: any rate fits (only runs all undecided would)", n)
	}
	// Runs of consecutive counts.
	var parts []string
	for i := 0; i < len(ks); {
		j := i
		for j+1 < len(ks) && ks[j+1] == ks[j]+1 {
			j++
		}
		switch {
		case j == i:
			parts = append(parts, fmt.Sprint(ks[i]))
		case j == i+1 && len(ks) == 2:
			parts = append(parts, fmt.Sprintf("%d or %d", ks[i], ks[j]))
		default:
			parts = append(parts, fmt.Sprintf("%d–%d", ks[i], ks[j]))
		}
		i = j + 1
	}
	return fmt.Sprintf("%s of %d would", strings.Join(parts, ", "), n)
}
