package explain

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/locktorture/locktorture/checker"
)

// Finding is every violation of one property that one fault step (or, none
// blamed, one cause) made with one cause: the first in full, and how many. A
// fault step that stops a self-renewing lock's holder breaks the lease once,
// yet shows as dozens of overlaps: one finding, not dozens of paragraphs.
type Finding struct {
	// Explanation is the first violation, in full.
	Explanation
	// Count is how many violations it stands for, the first included.
	Count int `json:"count"`
	// Keys are their keys, in order of first violation.
	Keys []string `json:"keys"`
	// Second and Last are when the second and last came (0 when Count is 1).
	Second int64 `json:"second,omitempty"`
	Last   int64 `json:"last,omitempty"`
}

// Group groups ex (in Explain's order) into findings, one per property, fault
// step and cause, in order of their first explanation.
func Group(ex []Explanation) []Finding {
	var out []Finding
	idx := map[[3]string]int{}
	for _, e := range ex {
		k := [3]string{e.Property, fmt.Sprint(e.Fault), string(e.Cause)}
		i, ok := idx[k]
		if !ok {
			idx[k] = len(out)
			out = append(out, Finding{Explanation: e, Count: 1, Keys: []string{e.Key}})
			continue
		}
		f := &out[i]
		if f.Count == 1 {
			f.Second = e.At
		}
		f.Count++
		f.Last = max(f.Last, e.At)
		if !slices.Contains(f.Keys, e.Key) {
			f.Keys = append(f.Keys, e.Key)
		}
	}
	return out
}

// Findings explains every violation the checker listed in a (at most a few
// hundred of each property; total counts all) and groups them.
func Findings(a *checker.Analysis) (fs []Finding, total int) {
	ex, total := Explain(a, math.MaxInt)
	return Group(ex), total
}

// Noun is what a finding's violations are called, n of them.
func Noun(property string, n int) string {
	one, many := "overlap", "overlaps"
	switch property {
	case "fence":
		one, many = "grant with a fencing token out of order", "grants with fencing tokens out of order"
	case "resource":
		one, many = "lost update", "lost updates"
	case "holds":
		one, many = "hold cut short", "holds cut short"
	case "answers":
		one, many = "reply the nodes contradict", "replies the nodes contradict"
	}
	if n == 1 {
		return one
	}
	return many
}

// More is the sentence after a finding of several violations, "" for one:
// "The same fault #1 and the same cause made 48 more overlaps on k0, from
// 2.611 s to 7.120 s."
func (f Finding) More() string {
	if f.Count < 2 {
		return ""
	}
	same := "The same cause"
	if f.Fault > 0 {
		same = fmt.Sprintf("The same fault #%d and the same cause", f.Fault)
	}
	when := "at " + Secs(f.Second)
	if f.Last > f.Second {
		when = fmt.Sprintf("from %s to %s", Secs(f.Second), Secs(f.Last))
	}
	return fmt.Sprintf("%s made %d more %s on %s, %s.", same, f.Count-1, Noun(f.Property, f.Count-1), strings.Join(f.Keys, ", "), when)
}

// Paragraph is the finding's whole text: its explanation and More.
func (f Finding) Paragraph() string {
	if m := f.More(); m != "" {
		return f.Text + " " + m
	}
	return f.Text
}

// Overlap describes an overlap for a person: times in seconds from the start,
// tokens shortened (the JSON keeps raw values).
func Overlap(ov checker.Overlap) string {
	return fmt.Sprintf("%s: P%d %s held %s–%s, P%d %s held %s–%s; both held it %s–%s",
		ov.Key, ov.A.Process, Short(ov.A.Token), Secs(ov.A.Start), Secs(ov.A.End),
		ov.B.Process, Short(ov.B.Token), Secs(ov.B.Start), Secs(ov.B.End), Secs(ov.Start), Secs(ov.End))
}

// FenceOrder describes a fencing token out of order, as Overlap does.
func FenceOrder(v checker.FenceViolation) string {
	return fmt.Sprintf("%s: P%d %s granted at %s with fencing token %d, after P%d %s granted at %s with %d",
		v.Key, v.B.Process, Short(v.B.Token), Secs(v.B.Start), v.B.Fence, v.A.Process, Short(v.A.Token), Secs(v.A.Start), v.A.Fence)
}
