package checker

import (
	"fmt"
	"io"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/locktorture/locktorture/history"
)

// Which model Visualize draws: the lease model's lock and unlock points,
// each hold a band on its client's row, or the resource model's sections.
const (
	VisualizeLease    = "lease"
	VisualizeResource = "resource"
)

// Colours of the annotations.
const (
	holdColor  = "#dbeafe"
	faultColor = "#fde2e2"
)

// Visualize writes porcupine's HTML visualization of one key's operations
// under the model which (VisualizeLease or VisualizeResource), with each
// fault Window as a band on a "nemesis" row.
//
// A key cut into parts as Check cuts it has one part drawn: the first
// that porcupine rejects, else the first it cannot decide, else the
// first; a "checker" row says which. The part drawn is checked within
// opts.Timeout; on a timeout the partial linearizations are drawn.
func Visualize(w io.Writer, events []history.Event, key string, which string, opts Options) error {
	s := newScanner()
	if err := s.addAll(events); err != nil {
		return fmt.Errorf("checker: visualize: %w", err)
	}
	return visualize(w, s.finish(), key, which, opts)
}

// visualize is Visualize on scanned data.
func visualize(w io.Writer, d *scanned, key string, which string, opts Options) error {
	if which != VisualizeLease && which != VisualizeResource {
		return fmt.Errorf("checker: visualize: unknown model %q (want %q or %q)", which, VisualizeLease, VisualizeResource)
	}
	kd := d.keys[key]
	timeout := opts.timeout()

	var parts []job
	if which == VisualizeLease {
		if kd == nil || len(kd.holds) == 0 {
			return fmt.Errorf("checker: visualize: no holds on key %q", key)
		}
		parts = leaseParts(key, kd.holds)
	} else {
		if kd == nil || len(kd.sections) == 0 {
			return fmt.Errorf("checker: visualize: no sections on key %q", key)
		}
		parts = resourceParts(key, kd.sections, d.last)
	}

	pick := 0
	var notes []porcupine.Annotation
	if len(parts) > 1 {
		pick = pickPart(parts, timeout)
		notes = append(notes, porcupine.Annotation{
			Tag:         "checker",
			Start:       parts[pick].from,
			End:         parts[pick].to,
			Description: fmt.Sprintf("part %d of %d", pick+1, len(parts)),
			Details:     fmt.Sprintf("key %q is checked in %d parts; this is part %d: %s", key, len(parts), pick+1, parts[pick].what),
		})
	}
	p := parts[pick]
	notes = append(notes, p.notes()...)
	for _, a := range faultAnnotations(d.windows) {
		if len(parts) == 1 || (a.Start <= p.to && a.End >= p.from) {
			notes = append(notes, a)
		}
	}

	_, info := porcupine.CheckOperationsVerbose(p.model, p.ops(), timeout)
	info.AddAnnotations(notes)
	if err := porcupine.Visualize(p.model, info, w); err != nil {
		return fmt.Errorf("checker: visualize %s of %q: %w", which, key, err)
	}
	return nil
}

// leaseParts cuts a key's holds into the lease model's parts, each
// annotated with its holds.
func leaseParts(key string, holds []Hold) []job {
	var parts []job
	model := leaseModel(holds)
	for _, c := range leaseChunks(holds, chunkSize) {
		p := job{
			key:   key,
			size:  2 * (c[1] - c[0]),
			model: model,
			ops:   func() []porcupine.Operation { return leaseOps(holds, c[0], c[1]) },
			from:  holds[c[0]].Start,
			what:  fmt.Sprintf("holds %d to %d of %d", c[0]+1, c[1], len(holds)),
			notes: func() []porcupine.Annotation { return holdAnnotations(holds[c[0]:c[1]]) },
		}
		for _, h := range holds[c[0]:c[1]] {
			p.to = max(p.to, h.End)
		}
		parts = append(parts, p)
	}
	return parts
}

// resourceParts cuts a key's sections into the resource model's parts;
// an unfinished section ends at last, the history's end.
func resourceParts(key string, secs []section, last int64) []job {
	var parts []job
	for _, c := range resourceChunks(secs, chunkSize) {
		p := job{
			key:   key,
			size:  c.hi - c.lo,
			model: resourceModel(c.init),
			ops:   func() []porcupine.Operation { return resourceOps(secs[c.lo:c.hi]) },
			from:  secs[c.lo].call,
			what:  fmt.Sprintf("sections %d to %d of %d, starting from value %d", c.lo+1, c.hi, len(secs), c.init),
			notes: func() []porcupine.Annotation { return nil },
		}
		for _, sec := range secs[c.lo:c.hi] {
			p.to = max(p.to, min(sec.ret, max(last, sec.call)))
		}
		parts = append(parts, p)
	}
	return parts
}

// pickPart checks the parts in order within one timeout and returns the
// index of the part to draw (see Visualize).
func pickPart(parts []job, timeout time.Duration) int {
	deadline := time.Now().Add(timeout)
	firstUnknown := -1
	for i, p := range parts {
		remaining := time.Until(deadline)
		res := porcupine.Unknown
		if remaining > 0 {
			res = porcupine.CheckOperationsTimeout(p.model, p.ops(), remaining)
		}
		if res == porcupine.Illegal {
			return i
		}
		if res == porcupine.Unknown && firstUnknown < 0 {
			firstUnknown = i
		}
	}
	return max(firstUnknown, 0)
}

// holdAnnotations draws each hold as a band on its client's row.
func holdAnnotations(holds []Hold) []porcupine.Annotation {
	out := make([]porcupine.Annotation, 0, len(holds))
	for _, h := range holds {
		details := fmt.Sprintf("P%d holds %q with token %s from %d to %d", h.Process, h.Key, h.Token, h.Start, h.End)
		if h.Fence != 0 {
			details += fmt.Sprintf(", fence %d", h.Fence)
		}
		out = append(out, porcupine.Annotation{
			ClientId:        h.Process,
			Start:           h.Start,
			End:             h.End,
			Description:     "hold " + h.Token,
			Details:         details,
			BackgroundColor: holdColor,
		})
	}
	return out
}

// faultAnnotations draws the fault windows as bands on a "nemesis" row.
func faultAnnotations(wins []Window) []porcupine.Annotation {
	out := make([]porcupine.Annotation, len(wins))
	for i, w := range wins {
		details := fmt.Sprintf("fault %s from %d to %d", w.Desc, w.Start, w.End)
		if w.UntilEnd {
			details = fmt.Sprintf("fault %s from %d, never stopped", w.Desc, w.Start)
		}
		out[i] = porcupine.Annotation{
			Tag:             "nemesis",
			Start:           w.Start,
			End:             w.End,
			Description:     w.Desc,
			Details:         details,
			BackgroundColor: faultColor,
		}
	}
	return out
}
