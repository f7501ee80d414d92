package explain

import (
	"fmt"
	"strconv"
	"strings"
)

// Secs formats t (ns from the run's start) as seconds with milliseconds.
func Secs(t int64) string { return fmt.Sprintf("%.3f s", float64(t)/1e9) }

// Short shortens a token to its first 6 characters (runes: a token may
// be any text, and a cut inside a character would leave a broken one).
func Short(token string) string {
	if r := []rune(token); len(r) > 6 {
		return string(r[:6]) + "…"
	}
	return token
}

// NodeName is node i's name: n1 for 0.
func NodeName(i int) string { return "n" + strconv.Itoa(i+1) }

func nodeList(ns []int) string {
	if ns == nil {
		return "nodes not reported"
	}
	if len(ns) == 0 {
		return "no node"
	}
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = NodeName(n)
	}
	return strings.Join(s, " ")
}

// capital capitalises the first letter of s, which begins a sentence.
func capital(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func firstOr(ns []int) int {
	if len(ns) == 0 {
		return -1
	}
	return ns[0]
}

func secsDelta(d int64) string {
	if d < 0 {
		return "-" + secsDelta(-d)
	}
	return fmt.Sprintf("%.3f s", float64(d)/1e9)
}
