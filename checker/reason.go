package checker

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/locktorture/locktorture/history"
)

// The beginnings of Result.LeaseReason and Result.ResourceReason when the
// history tested nothing of the property; a caller that knows the run's
// configuration may append why after the colon that follows.
const (
	// ReasonNoAcquire: no acquire returned ok.
	ReasonNoAcquire = "no acquire succeeded"
	// ReasonNoHold: every acquire returned ok after its validity.
	ReasonNoHold = "no hold"
	// ReasonNoSection: no critical section returned ok.
	ReasonNoSection = "no section completed"
	// ReasonNoFault: the run was to inject faults but its history holds
	// none (every targeted step missed, or the run ended first). Only a
	// caller that knows the run's schedule can say it.
	ReasonNoFault = "no fault was injected"
)

// maxErrorTexts bounds the distinct error texts counted per operation;
// the rest are counted together.
const maxErrorTexts = 32

// errorCounts counts the error texts of one kind's failed and unknown
// operations.
type errorCounts struct {
	n     map[string]int
	other int
}

func (c *errorCounts) add(text string) {
	if c.n == nil {
		c.n = make(map[string]int)
	}
	if _, ok := c.n[text]; ok || len(c.n) < maxErrorTexts {
		c.n[text]++
		return
	}
	c.other++
}

// commonest returns the most frequent text (the first in sorting order
// among equals) and its count.
func (c *errorCounts) commonest() (string, int) {
	if c == nil {
		return "", 0
	}
	texts := slices.Sorted(maps.Keys(c.n))
	best, n := "", 0
	for _, t := range texts {
		if c.n[t] > n {
			best, n = t, c.n[t]
		}
	}
	return best, n
}

// maxQuoted bounds an error text quoted in a reason.
const maxQuoted = 160

// quoteError quotes the first line of an error text, cut to maxQuoted.
func quoteError(text string) string {
	if text == "" {
		return "no error text"
	}
	first, rest, more := strings.Cut(text, "\n")
	if r := []rune(first); len(r) > maxQuoted {
		first, more = string(r[:maxQuoted]), true
	} else if more && strings.TrimSpace(rest) == "" {
		more = false
	}
	q := fmt.Sprintf("%q", first)
	if more {
		q += "…"
	}
	return q
}

// outcomes describes how the operations of f ended, e.g. "12 fail, 3
// info, 1 unfinished; most often \"…\" (12 times)".
func (d *scanned) outcomes(f history.Func) string {
	m := d.ops[string(f)]
	var parts []string
	for _, o := range []string{"fail", "info", "unfinished"} {
		if m[o] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", m[o], o))
		}
	}
	s := strings.Join(parts, ", ")
	if text, n := d.errs[f].commonest(); n > 0 {
		s += fmt.Sprintf("; most often %s (%s)", quoteError(text), plural(n, "time"))
	}
	return s
}

// total returns the number of operations of f, finished or not.
func (d *scanned) total(f history.Func) int {
	n := 0
	for _, c := range d.ops[string(f)] {
		n += c
	}
	return n
}

// untestedLease returns why the history tests no lease safety, or "".
func (d *scanned) untestedLease(st Stats) string {
	switch n := d.total(history.Acquire); {
	case st.Holds > 0:
		return ""
	case n == 0:
		return ReasonNoAcquire + ": the history has no acquire"
	case st.AcquireOK == 0:
		return fmt.Sprintf("%s: %s, none ok (%s)", ReasonNoAcquire, plural(n, "acquire"), d.outcomes(history.Acquire))
	case st.AcquireOK == 1:
		return ReasonNoHold + ": the only acquire that succeeded returned after its validity had passed"
	default:
		return fmt.Sprintf("%s: all %d acquires that succeeded returned after their validity had passed", ReasonNoHold, st.AcquireOK)
	}
}

// untestedResource returns why the history tests no resource safety, or "".
func (d *scanned) untestedResource(st Stats) string {
	switch n := d.total(history.Section); {
	case st.SectionsOK > 0:
		return ""
	case n == 0 && st.AcquireOK == 0:
		return ReasonNoSection + ": no acquire succeeded, so no section ran"
	case n == 0:
		return ReasonNoSection + ": the history has no section"
	default:
		return fmt.Sprintf("%s: %s, none ok (%s)", ReasonNoSection, plural(n, "section"), d.outcomes(history.Section))
	}
}

// timeoutReason says which keys porcupine could not decide in time.
func timeoutReason(keys []string, timeout time.Duration) string {
	shown := keys[:min(len(keys), 5)]
	q := make([]string, len(shown))
	for i, k := range shown {
		q[i] = fmt.Sprintf("%q", k)
	}
	list := strings.Join(q, ", ")
	if len(keys) > len(shown) {
		list += fmt.Sprintf(" and %d more", len(keys)-len(shown))
	}
	return fmt.Sprintf("porcupine ran out of its %s on %s (%s)", timeout, plural(len(keys), "key"), list)
}

// plural returns "1 key", "2 keys".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
