package shrink

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
)

// TestSteps: ddmin finds the steps a failure needs — one, two far apart,
// all — testing each candidate at most once and never the empty set; an
// error stops it with the smallest failing set so far.
func TestSteps(t *testing.T) {
	needs := func(req ...int) func([]int) bool {
		return func(keep []int) bool {
			for _, r := range req {
				if !slices.Contains(keep, r) {
					return false
				}
			}
			return true
		}
	}
	for _, tc := range []struct {
		name string
		n    int
		fail func([]int) bool
		want []int
	}{
		{"one of eight", 8, needs(5), []int{5}},
		{"two far apart", 8, needs(1, 6), []int{1, 6}},
		{"the only one", 1, needs(0), []int{0}},
		{"all three", 3, needs(0, 1, 2), []int{0, 1, 2}},
		{"either of two", 4, func(k []int) bool { return slices.Contains(k, 0) || slices.Contains(k, 3) }, []int{0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tested := map[string]bool{}
			got, err := Steps(context.Background(), tc.n, func(_ context.Context, keep []int) (bool, error) {
				if len(keep) == 0 {
					t.Fatal("tested the empty set")
				}
				if !slices.IsSorted(keep) {
					t.Errorf("candidate %v not in order", keep)
				}
				key := fmt.Sprint(keep)
				if tested[key] {
					t.Errorf("candidate %v tested twice", keep)
				}
				tested[key] = true
				return tc.fail(keep), nil
			})
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Steps = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
	boom := errors.New("boom")
	calls := 0
	got, err := Steps(context.Background(), 4, func(_ context.Context, keep []int) (bool, error) {
		calls++
		if calls == 1 {
			return true, nil // the first half fails
		}
		return false, boom
	})
	if !errors.Is(err, boom) || !reflect.DeepEqual(got, []int{0, 1}) {
		t.Errorf("with an error: %v, %v; want [0 1], boom", got, err)
	}
}
