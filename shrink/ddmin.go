package shrink

import (
	"context"
	"fmt"
	"slices"
)

// Test reports whether the steps keep (indices into the original
// schedule, ascending) still reproduce the failure.
type Test func(ctx context.Context, keep []int) (bool, error)

// Steps returns a 1-minimal subset of the n steps 0…n-1 that still fails
// test (removing any one step of it makes test pass), by ddmin: try each
// of g chunks, then each complement, doubling g when neither fails.
// It assumes the whole schedule fails and does not test it again; it
// never tests the empty set (a run without faults is not a fault test).
// Each candidate is tested once; its result is cached. It stops at ctx's
// end, or at test's first error, returning the smallest failing subset
// found so far with the error.
func Steps(ctx context.Context, n int, test Test) ([]int, error) {
	c := make([]int, n)
	for i := range c {
		c[i] = i
	}
	seen := map[string]bool{}
	fails := func(keep []int) (bool, error) {
		k := fmt.Sprint(keep)
		if r, ok := seen[k]; ok {
			return r, nil
		}
		if err := ctx.Err(); err != nil {
			return false, err
		}
		r, err := test(ctx, keep)
		if err == nil {
			seen[k] = r
		}
		return r, err
	}
	g := 2
	for len(c) >= 2 {
		chunks := split(c, g)
		reduced := false
		for _, ch := range chunks {
			f, err := fails(ch)
			if err != nil {
				return c, err
			}
			if f {
				c, g, reduced = ch, 2, true
				break
			}
		}
		if !reduced && g > 2 {
			for i := range chunks {
				comp := complement(c, chunks[i])
				f, err := fails(comp)
				if err != nil {
					return c, err
				}
				if f {
					c, g, reduced = comp, max(g-1, 2), true
					break
				}
			}
		}
		if reduced {
			continue
		}
		if g >= len(c) {
			break
		}
		g = min(2*g, len(c))
	}
	return c, nil
}

// split cuts c into g chunks of nearly equal size, in order.
func split(c []int, g int) [][]int {
	var out [][]int
	start := 0
	for i := range g {
		end := start + (len(c)-start)/(g-i)
		if end > start {
			out = append(out, c[start:end])
		}
		start = end
	}
	return out
}

// complement returns c without the elements of part.
func complement(c, part []int) []int {
	var out []int
	for _, x := range c {
		if !slices.Contains(part, x) {
			out = append(out, x)
		}
	}
	return out
}
