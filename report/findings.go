package report

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/locktorture/locktorture/checker"
)

// FindingsOptions say how Findings renders a bundle's summary.
type FindingsOptions struct {
	// Bundle is the bundle's directory as the page links it
	// ("results/2026-12-01").
	Bundle string
	// Rows orders the table (matrix.Rows); rows not listed follow in the
	// summary's order.
	Rows []string
	// Mutant reports whether a lock is broken on purpose
	// (locks.Spec.Mutant): its cells are summed up under the table. Nil:
	// none is.
	Mutant func(lock string) bool
}

// FindingsBlock names the block Findings writes, for ReplaceBlock.
const FindingsBlock = "findings"

// Findings renders the README's table of what broke, per row of the
// literature table: the locks whose leases overlapped, that only lost
// updates, or neither, each with its violations of the decided runs
// ("3/3"); quiet rows are named under it. Markdown within FindingsBlock.
func Findings(m Matrix, o FindingsOptions) []byte {
	var (
		lines   []*findingsLine
		byRow   = map[string]*findingsLine{}
		mutants []string
		marked  bool
	)
	for _, c := range m.Cells {
		row := cellRow(c)
		lease, resource := propertyRate(c, PropertyLease), propertyRate(c, PropertyResource)
		mark := pick(c.Matches, "", " ✗")
		marked = marked || !c.Matches
		if o.Mutant != nil && o.Mutant(c.Lock) {
			mutants = append(mutants, fmt.Sprintf("%s (%s)%s", mdText(c.Name), brokeText(c, lease, resource), mark))
			continue
		}
		l := byRow[row]
		if l == nil {
			l = &findingsLine{row: row}
			byRow[row] = l
			lines = append(lines, l)
		}
		stuck := ""
		if n := stuckRuns(c); n > 0 {
			stuck = fmt.Sprintf(", stuck %d/%d", n, len(c.Runs))
		}
		l.add(mdText(c.Lock), lease, resource, stuck, mark)
	}
	order := func(row string) int {
		if i := slices.Index(o.Rows, row); i >= 0 {
			return i
		}
		return len(o.Rows)
	}
	slices.SortStableFunc(lines, func(a, b *findingsLine) int { return order(a.row) - order(b.row) })

	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	bundle := strings.TrimSuffix(o.Bundle, "/")
	p("<!-- begin %s: rendered by report.Findings from %s/summary.json; do not edit by hand -->\n", FindingsBlock, mdText(bundle))
	p("From [`%s/`](%s/) (", mdText(bundle), bundle)
	if !m.Started.IsZero() {
		p("%s; ", m.Started.UTC().Format("2006-01-02"))
	}
	p("%s; seeds %s; %s a run). Each entry is a lock and how many of its runs that decided the property showed the violation.\n\n", plural(len(m.Cells), "cell"), JoinSeeds(m.Seeds, ", "), mdText(m.Duration))
	dash := func(s []string) string { return cmp.Or(strings.Join(s, ", "), "–") }
	// A row in which every lock held is named under the table, not drawn.
	var quiet []string
	drawn := 0
	for _, l := range lines {
		if len(l.lease) == 0 && len(l.resource) == 0 && !l.loud {
			quiet = append(quiet, "`"+mdText(l.row)+"`")
			continue
		}
		if drawn == 0 {
			p("| row of the table | two holders at once (lease) | lost updates only (resource) | no violation |\n")
			p("|---|---|---|---|\n")
		}
		drawn++
		p("| `%s` | %s | %s | %s |\n", mdText(l.row), dash(l.lease), dash(l.resource), dash(l.clean))
	}
	if len(quiet) > 0 {
		if drawn > 0 {
			p("\n")
		}
		p("No lock showed a violation, on any run, in %s: %s.\n", quietRows(drawn, len(quiet)), strings.Join(quiet, ", "))
	}
	if len(mutants) > 0 {
		p("\nMutants, locks broken on purpose to show the checkers see what they claim: %s.\n", strings.Join(mutants, ", "))
	}
	if marked {
		p("\n✗: the cell contradicts what the literature expects of it (see the bundle's summary.md).\n")
	}
	p("<!-- end %s -->\n", FindingsBlock)
	return b.Bytes()
}

// findingsLine is one row of the findings table. loud: an entry says more
// than "0/N", so the row keeps its line.
type findingsLine struct {
	row                    string
	lease, resource, clean []string
	loud                   bool
}

// add puts the lock entry in its column, by what its rates showed.
func (l *findingsLine) add(entry string, lease, resource Rate, stuck, mark string) {
	l.loud = l.loud || stuck != "" || mark != ""
	tail := stuck + mark
	switch {
	case lease.Violations > 0:
		l.lease = append(l.lease, fmt.Sprintf("%s %d/%d%s", entry, lease.Violations, lease.Runs, tail))
	case resource.Violations > 0:
		l.resource = append(l.resource, fmt.Sprintf("%s %d/%d%s", entry, resource.Violations, resource.Runs, tail))
	case lease.Runs == 0 && resource.Runs == 0:
		l.clean, l.loud = append(l.clean, fmt.Sprintf("%s undecided%s", entry, tail)), true
	case resource.Runs == 0:
		l.clean, l.loud = append(l.clean, fmt.Sprintf("%s 0/%d, resource untested%s", entry, lease.Runs, tail)), true
	case lease.Runs == 0:
		l.clean, l.loud = append(l.clean, fmt.Sprintf("%s 0/%d, lease undecided%s", entry, resource.Runs, tail)), true
	default:
		l.clean = append(l.clean, fmt.Sprintf("%s 0/%d%s", entry, max(lease.Runs, resource.Runs), tail))
	}
}

// quietRows names the quiet rows of the table, with drawn rows above.
func quietRows(drawn, quiet int) string {
	switch {
	case drawn == 0 && quiet == 1:
		return "the only row of the table"
	case drawn == 0:
		return fmt.Sprintf("any of the %d rows of the table", quiet)
	case quiet == 1:
		return "the other row of the table"
	}
	return fmt.Sprintf("the other %d rows of the table", quiet)
}

// cellRow is c's row of the literature table: Row, or in an older summary
// its name after the lock's ("setnx+fencing/none" is "+fencing/none").
func cellRow(c Cell) string {
	if c.Row != "" {
		return c.Row
	}
	return strings.TrimPrefix(strings.TrimPrefix(c.Name, c.Lock), "/")
}

// propertyRate is c's rate of runs that broke p of those that decided it.
func propertyRate(c Cell, p string) Rate {
	k, n := 0, 0
	for _, r := range c.Runs {
		v := r.Lease
		if p == PropertyResource {
			v = r.Resource
		}
		switch v {
		case checker.Invalid:
			k++
			n++
		case checker.Valid:
			n++
		}
	}
	return NewRate(k, n)
}

func stuckRuns(c Cell) int {
	n := 0
	for _, r := range c.Runs {
		if r.Liveness == checker.LivenessStuck {
			n++
		}
	}
	return n
}

// brokeText says what a mutant's cell broke: "lease 3/3", "stuck 3/3", ….
func brokeText(c Cell, lease, resource Rate) string {
	switch {
	case lease.Violations > 0:
		return fmt.Sprintf("lease %d/%d", lease.Violations, lease.Runs)
	case resource.Violations > 0:
		return fmt.Sprintf("resource %d/%d", resource.Violations, resource.Runs)
	case stuckRuns(c) > 0:
		return fmt.Sprintf("stuck %d/%d", stuckRuns(c), len(c.Runs))
	}
	return fmt.Sprintf("no violation 0/%d", max(lease.Runs, resource.Runs))
}

// mdText is s as text in a Markdown table cell: printable, no column
// break, no HTML (a name could otherwise close the block's marker).
func mdText(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "`", "'").Replace(mdCell(Printable(s)))
}

// ErrNoBlock: a page without the markers of the block to replace.
var ErrNoBlock = errors.New("report: no generated block")

// ReplaceBlock returns page with its block called name, from the line
// that begins "<!-- begin name" through the line "<!-- end name -->",
// replaced by block, markers included. A page without both markers, or
// with the beginning twice, is ErrNoBlock.
func ReplaceBlock(page, block []byte, name string) ([]byte, error) {
	i, stop, err := blockSpan(page, name)
	if err != nil {
		return nil, err
	}
	return slices.Concat(page[:i], block, page[stop:]), nil
}

// Block returns the block called name of page, as ReplaceBlock finds it.
func Block(page []byte, name string) ([]byte, error) {
	i, stop, err := blockSpan(page, name)
	if err != nil {
		return nil, err
	}
	return page[i:stop], nil
}

// blockSpan is where the block called name lies in page, whole lines.
func blockSpan(page []byte, name string) (from, to int, err error) {
	begin, end := []byte("<!-- begin "+name), []byte("<!-- end "+name+" -->")
	i := lineStarting(page, begin)
	if i < 0 || lineStarting(page[i+len(begin):], begin) >= 0 {
		return 0, 0, fmt.Errorf("%w %q: want one line beginning %q", ErrNoBlock, name, begin)
	}
	j := lineStarting(page[i:], end)
	if j < 0 {
		return 0, 0, fmt.Errorf("%w %q: no line %q after its beginning", ErrNoBlock, name, end)
	}
	stop := i + j + len(end)
	if k := bytes.IndexByte(page[stop:], '\n'); k >= 0 {
		stop += k + 1
	} else {
		stop = len(page)
	}
	return i, stop, nil
}

// lineStarting is the offset of b's first line that begins prefix, or -1.
func lineStarting(b, prefix []byte) int {
	for off := 0; off <= len(b); {
		if bytes.HasPrefix(b[off:], prefix) {
			k := off + len(prefix)
			if k == len(b) || b[k] == ':' || b[k] == ' ' || b[k] == '\n' {
				return off
			}
		}
		n := bytes.IndexByte(b[off:], '\n')
		if n < 0 {
			return -1
		}
		off += n + 1
	}
	return -1
}

// NewestBundle returns the folder of dir with the whole matrix that
// started last among those `torture matrix publish` wrote (a summary.json,
// an index.html and a ManifestFile).
func NewestBundle(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	best, bestM := "", Matrix{}
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		sub := filepath.Join(dir, e.Name())
		published := true
		for _, f := range []string{"index.html", ManifestFile} {
			if st, err := os.Lstat(filepath.Join(sub, f)); err != nil || !st.Mode().IsRegular() {
				published = false
			}
		}
		if !published {
			continue
		}
		m, err := ReadMatrix(sub)
		if err != nil || m.Shard != nil {
			continue
		}
		if best == "" || m.Started.After(bestM.Started) || m.Started.Equal(bestM.Started) && e.Name() > best {
			best, bestM = e.Name(), m
		}
	}
	if best == "" {
		return "", fmt.Errorf("report: no published bundle (summary.json, index.html and %s of a whole matrix) in %s", ManifestFile, dir)
	}
	return best, nil
}
