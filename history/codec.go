package history

import (
	"encoding/json"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// The JSON of one event, by hand (see the package doc for why); the tests
// hold both directions to encoding/json's.

// appendEvent appends e as one JSON line, byte for byte what
// json.Encoder.Encode writes for it (fields in declaration order, the
// omitempty ones left out when zero, HTML-safe escaping, a final newline).
func appendEvent(b []byte, e *Event) []byte {
	b = appendString(append(b, `{"type":`...), string(e.Type))
	b = appendString(append(b, `,"f":`...), string(e.F))
	b = strconv.AppendInt(append(b, `,"process":`...), int64(e.Process), 10)
	b = strconv.AppendInt(append(b, `,"time":`...), e.Time, 10)
	b = appendStringField(b, `,"key":`, e.Key)
	b = appendStringField(b, `,"token":`, e.Token)
	b = appendIntField(b, `,"fence":`, e.Fence)
	b = appendIntField(b, `,"valid_until":`, e.ValidUntil)
	if e.Nodes != nil {
		b = append(b, `,"nodes":`...)
		b = appendNodes(b, e.Nodes)
	}
	if e.Node != nil {
		b = strconv.AppendInt(append(b, `,"node":`...), int64(*e.Node), 10)
	}
	b = appendIntPtr(b, `,"read":`, e.Read)
	b = appendIntPtr(b, `,"wrote":`, e.Wrote)
	b = appendStringField(b, `,"value":`, e.Value)
	b = appendStringField(b, `,"family":`, e.Family)
	b = appendStringField(b, `,"error":`, e.Error)
	return append(b, '}', '\n')
}

// appendStringField, appendIntField and appendIntPtr append member (as
// `,"name":`) and the value, unless it is zero (omitempty).
func appendStringField(b []byte, member, s string) []byte {
	if s == "" {
		return b
	}
	return appendString(append(b, member...), s)
}

func appendIntField(b []byte, member string, n int64) []byte {
	if n == 0 {
		return b
	}
	return strconv.AppendInt(append(b, member...), n, 10)
}

func appendIntPtr(b []byte, member string, p *int64) []byte {
	if p == nil {
		return b
	}
	return strconv.AppendInt(append(b, member...), *p, 10)
}

// appendNodes appends n as encoding/json writes it: an object of the
// members that are not empty, in declaration order.
func appendNodes(b []byte, n *Nodes) []byte {
	b = append(b, '{')
	sep := false
	if n.Attempt != 0 {
		b = append(b, `"attempt":`...)
		b = strconv.AppendInt(b, int64(n.Attempt), 10)
		sep = true
	}
	for _, l := range [...]struct {
		name  string
		nodes []int
	}{{`"granted":[`, n.Granted}, {`"refused":[`, n.Refused}, {`"silent":[`, n.Silent}, {`"unlocked":[`, n.Unlocked}} {
		if len(l.nodes) == 0 {
			continue
		}
		if sep {
			b = append(b, ',')
		}
		b = append(b, l.name...)
		for i, node := range l.nodes {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(node), 10)
		}
		b = append(b, ']')
		sep = true
	}
	return append(b, '}')
}

const hexDigits = "0123456789abcdef"

// shortEscape and unescaped map a byte to its two-character JSON escape
// and back; 0 for none.
var (
	shortEscape = [...]byte{'\\': '\\', '"': '"', '\b': 'b', '\f': 'f', '\n': 'n', '\r': 'r', '\t': 't'}
	unescaped   = [...]byte{'\\': '\\', '"': '"', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}
)

// appendString appends s quoted as encoding/json does by default:
// control characters, '"', '\\', '<', '>' and '&' escaped, invalid UTF-8
// replaced by \ufffd, U+2028 and U+2029 escaped.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			if int(c) < len(shortEscape) && shortEscape[c] != 0 {
				b = append(b, '\\', shortEscape[c])
			} else {
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// unmarshal decodes one line into e, which must be zero: by the fast path
// when it can (with the same result), else by encoding/json.
func (d *Decoder) unmarshal(b []byte, e *Event) error {
	if d.parseFast(b, e) {
		return nil
	}
	*e = Event{}
	return json.Unmarshal(b, e)
}

// Field bits for parseFast's duplicate check.
const (
	fType = 1 << iota
	fF
	fProcess
	fTime
	fKey
	fToken
	fFence
	fValidUntil
	fRead
	fWrote
	fValue
	fError
	fNodes
	fNode
	fFamily
)

// parseFast parses a line of one flat JSON object whose members are
// fields of Event, each at most once, named exactly (encoding/json would
// also match other cases), strings without escapes in valid UTF-8, and
// integers without fraction or exponent that fit; nothing but the object
// and trailing white space. It reports false, leaving e in any state, for
// anything else, which encoding/json then reads (or rejects).
func (d *Decoder) parseFast(b []byte, e *Event) bool {
	seen := 0
	end, ok := d.object(b, skipSpace(b, 0), func(name []byte, i int) (int, bool) {
		// The name is copied before the value is read: an escaped value
		// reuses the buffer an escaped name was unescaped into.
		field := string(name)
		var s []byte
		var n int64
		j, ok := 0, false
		switch field {
		case "type", "f", "key", "token", "value", "family", "error":
			s, j, ok = d.fastString(b, i)
		case "process", "time", "fence", "valid_until", "read", "wrote", "node":
			n, j, ok = fastInt(b, i)
			ok = ok && (field != "process" && field != "node" || int64(int(n)) == n)
		case "nodes":
			e.Nodes, j, ok = d.parseNodes(b, i)
		}
		if !ok {
			return 0, false
		}
		i = j
		var bit int
		switch field {
		case "type":
			bit, e.Type = fType, Type(d.intern(s))
		case "f":
			bit, e.F = fF, Func(d.intern(s))
		case "key":
			bit, e.Key = fKey, d.intern(s)
		case "token":
			bit, e.Token = fToken, string(s)
		case "value":
			bit, e.Value = fValue, d.intern(s)
		case "family":
			bit, e.Family = fFamily, d.intern(s)
		case "error":
			bit, e.Error = fError, d.intern(s)
		case "process":
			bit, e.Process = fProcess, int(n)
		case "time":
			bit, e.Time = fTime, n
		case "fence":
			bit, e.Fence = fFence, n
		case "valid_until":
			bit, e.ValidUntil = fValidUntil, n
		case "read":
			bit, e.Read = fRead, Int64(n)
		case "wrote":
			bit, e.Wrote = fWrote, Int64(n)
		case "node":
			bit, e.Node = fNode, Int(int(n))
		case "nodes":
			bit = fNodes
		}
		if seen&bit != 0 {
			return 0, false
		}
		seen |= bit
		return i, true
	})
	return ok && skipSpace(b, end) == len(b)
}

// object parses the JSON object at b[i], calling member with each
// member's name (valid until the next fastString) and the index of its
// value; member returns the index after the value. It returns the index
// after the closing brace.
func (d *Decoder) object(b []byte, i int, member func(name []byte, i int) (int, bool)) (int, bool) {
	if i >= len(b) || b[i] != '{' {
		return 0, false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	for {
		name, j, ok := d.fastString(b, i)
		if !ok {
			return 0, false
		}
		i = skipSpace(b, j)
		if i >= len(b) || b[i] != ':' {
			return 0, false
		}
		if i, ok = member(name, skipSpace(b, i+1)); !ok {
			return 0, false
		}
		i = skipSpace(b, i)
		if i >= len(b) {
			return 0, false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return i + 1, true
		default:
			return 0, false
		}
	}
}

// parseNodes parses the object of "nodes" at b[i] in parseFast's form:
// members of Nodes, each at most once, named exactly, an integer attempt
// and arrays of integers that fit an int (no null). The four lists share
// one backing array, each capped at its length, as encoding/json gives
// them (an empty array is an empty list, not nil).
func (d *Decoder) parseNodes(b []byte, i int) (*Nodes, int, bool) {
	n := &Nodes{}
	d.ints = d.ints[:0]
	var bounds [4][2]int // each list's [start, end) in d.ints, start -1 when absent
	for k := range bounds {
		bounds[k][0] = -1
	}
	seenAttempt := false
	end, ok := d.object(b, i, func(name []byte, i int) (int, bool) {
		list := slices.Index([]string{"granted", "refused", "silent", "unlocked"}, string(name))
		if string(name) == "attempt" {
			v, j, ok := fastInt(b, i)
			if !ok || seenAttempt || int64(int(v)) != v {
				return 0, false
			}
			n.Attempt, seenAttempt = int(v), true
			return j, true
		}
		if list < 0 || bounds[list][0] >= 0 || i >= len(b) || b[i] != '[' {
			return 0, false
		}
		bounds[list][0] = len(d.ints)
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == ']' {
			i++
		} else {
			for {
				v, j, ok := fastInt(b, i)
				if !ok || int64(int(v)) != v {
					return 0, false
				}
				d.ints = append(d.ints, int(v))
				i = skipSpace(b, j)
				if i >= len(b) {
					return 0, false
				}
				if b[i] == ']' {
					i++
					break
				}
				if b[i] != ',' {
					return 0, false
				}
				i = skipSpace(b, i+1)
			}
		}
		bounds[list][1] = len(d.ints)
		return i, true
	})
	if !ok {
		return nil, 0, false
	}
	all := append(make([]int, 0, len(d.ints)), d.ints...) // never nil, unlike slices.Clone
	for k, dst := range [...]*[]int{&n.Granted, &n.Refused, &n.Silent, &n.Unlocked} {
		if lo, hi := bounds[k][0], bounds[k][1]; lo >= 0 {
			*dst = all[lo:hi:hi]
		}
	}
	return n, end, true
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// fastString reads a string at b[i] in valid UTF-8, without control
// characters, whose escapes are the two-character ones or \u of a code
// point that is not a surrogate; it returns its contents, unescaped into
// d.unq if need be (valid until the next call), and the index after its
// closing quote.
func (d *Decoder) fastString(b []byte, i int) ([]byte, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, 0, false
	}
	ascii, escaped := true, false
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			s := b[i+1 : j]
			if !ascii && !utf8.Valid(s) {
				return nil, 0, false
			}
			if escaped {
				var ok bool
				if d.unq, ok = unescape(d.unq[:0], s); !ok {
					return nil, 0, false
				}
				s = d.unq
			}
			return s, j + 1, true
		case c == '\\':
			escaped = true
			j++ // the escaped character cannot end the string
		case c < 0x20:
			return nil, 0, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, 0, false
}

// unescape appends s, the inside of a JSON string, unescaped to dst; it
// reports false for an escape it does not take (see fastString).
func unescape(dst, s []byte) ([]byte, bool) {
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' {
			dst = append(dst, c)
			i++
			continue
		}
		if i+1 >= len(s) {
			return nil, false
		}
		switch e := s[i+1]; {
		case int(e) < len(unescaped) && unescaped[e] != 0:
			dst = append(dst, unescaped[e])
		case e == 'u':
			if i+6 > len(s) {
				return nil, false
			}
			n, err := strconv.ParseUint(string(s[i+2:i+6]), 16, 32)
			if err != nil || utf16.IsSurrogate(rune(n)) {
				return nil, false
			}
			dst = utf8.AppendRune(dst, rune(n))
			i += 6
			continue
		default:
			return nil, false
		}
		i += 2
	}
	return dst, true
}

// fastInt reads a JSON integer at b[i] (no fraction, no exponent) that
// fits an int64, followed by a delimiter.
func fastInt(b []byte, i int) (int64, int, bool) {
	j := i
	if j < len(b) && b[j] == '-' {
		j++
	}
	digits := j
	for j < len(b) && b[j] >= '0' && b[j] <= '9' {
		j++
	}
	if j == digits || j-digits > 1 && b[digits] == '0' || j < len(b) && (b[j] == '.' || b[j] == 'e' || b[j] == 'E') {
		return 0, 0, false // no digit, a leading zero, a fraction or an exponent
	}
	n, err := strconv.ParseInt(string(b[i:j]), 10, 64)
	return n, j, err == nil
}

// maxInterned bounds the strings a Decoder keeps to share between events.
const maxInterned = 4096

// intern returns s as a string, shared with earlier events that had the
// same one: keys, types and error texts repeat on almost every line.
func (d *Decoder) intern(s []byte) string {
	if v, ok := d.strs[string(s)]; ok {
		return v
	}
	v := string(s)
	if d.strs == nil {
		d.strs = make(map[string]string)
	}
	if len(d.strs) < maxInterned {
		d.strs[v] = v
	}
	return v
}
