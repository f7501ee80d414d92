package matrix

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseSeeds parses a --seeds flag: comma-separated seeds, each a non-zero
// integer or a range a..b (a ≤ b, 0 not in it), no seed twice.
func ParseSeeds(s string) ([]int64, error) {
	var seeds []int64
	seen := map[int64]bool{}
	add := func(n int64) error {
		if seen[n] {
			return fmt.Errorf("--seeds: seed %d given twice", n)
		}
		seen[n] = true
		seeds = append(seeds, n)
		return nil
	}
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		if lo, hi, ok := strings.Cut(f, ".."); ok {
			a, err1 := strconv.ParseInt(lo, 10, 64)
			b, err2 := strconv.ParseInt(hi, 10, 64)
			switch {
			case err1 != nil || err2 != nil || a > b:
				return nil, fmt.Errorf("--seeds: %q is not a range a..b of integers with a ≤ b", f)
			case a <= 0 && b >= 0:
				return nil, fmt.Errorf("--seeds: %q holds 0, which is not a seed", f)
			case b-a >= 10000:
				return nil, fmt.Errorf("--seeds: %q holds more than 10000 seeds", f)
			}
			for n := a; n <= b; n++ {
				if err := add(n); err != nil {
					return nil, err
				}
			}
			continue
		}
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil || n == 0 {
			return nil, fmt.Errorf("--seeds: %q is not a non-zero integer", f)
		}
		if err := add(n); err != nil {
			return nil, err
		}
	}
	return seeds, nil
}
