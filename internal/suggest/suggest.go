// Package suggest finds the name a user most likely meant: the "did you
// mean" of a misspelt command, flag, lock, fault kind or promise. It
// imports only the standard library, so every package may use it.
package suggest

import "strings"

// Closest returns the name of names nearest to s in edit distance
// (ignoring case), when it is near enough to be a misspelling of it: at
// most a third of s's letters, and at least 2, apart. "" when none is.
func Closest(s string, names []string) string {
	best, bestD := "", max(2, len(s)/3)+1
	for _, n := range names {
		if d := editDistance(strings.ToLower(s), strings.ToLower(n)); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// DidYouMean is " (did you mean X?)" for the closest of names to s, or "".
func DidYouMean(s string, names []string) string {
	if c := Closest(s, names); c != "" {
		return " (did you mean " + c + "?)"
	}
	return ""
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			sub := prev[j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
