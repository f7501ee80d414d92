package main

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"

	"github.com/locktorture/locktorture/history"
)

// genHistory writes a history of about ops operations to path in the
// harness's shape: keys keys, perKey clients on each; per round each
// key's holder acquires, runs a section and releases while another
// client's acquire fails (4 operations). With violation, at 90% of the
// history one failing acquire succeeds inside the holder's lease and its
// section reads the holder's value: one lease overlap, one lost update.
// It returns the events written and the overlap's start (-1 without).
func genHistory(path string, ops, keys, perKey int, violation bool) (events int, violationAt int64, err error) {
	// history.Create refuses a path that exists.
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return 0, -1, err
	}
	w, err := history.Create(path)
	if err != nil {
		return 0, -1, err
	}
	defer func() {
		if cerr := w.Close(); err == nil {
			err = cerr
		}
	}()
	const us = int64(1000) // times are in nanoseconds; steps of microseconds
	const roundLen = 400 * us
	rounds := max(ops/(4*keys), 1)
	vRound := -1
	violationAt = -1
	if violation {
		vRound = rounds * 9 / 10
	}
	value := make([]int64, keys)
	keyNames := make([]string, keys)
	for k := range keyNames {
		keyNames[k] = "k" + strconv.Itoa(k)
	}
	round := make([]history.Event, 0, 12*keys)
	for r := range rounds {
		round = round[:0]
		t := int64(r)*roundLen + us
		for k := range keys {
			key := keyNames[k]
			holder := k*perKey + r%perKey
			other := k*perKey + (r+1)%perKey
			tok := fmt.Sprintf("t%d-%d", r, k)
			v := value[k]
			ev := func(typ history.Type, f history.Func, p int, at int64) history.Event {
				return history.Event{Type: typ, F: f, Process: p, Key: key, Time: t + at*us + int64(k)}
			}
			// held: p's acquire ok at at[0], section invoke and ok (read
			// v) at at[1], at[2], release at at[3], at[4] (µs into the round).
			held := func(p int, tok string, at [5]int64) []history.Event {
				acq := ev(history.Ok, history.Acquire, p, at[0])
				acq.Token, acq.ValidUntil = tok, t+10_000*us
				secInv, secOK := ev(history.Invoke, history.Section, p, at[1]), ev(history.Ok, history.Section, p, at[2])
				secInv.Token, secOK.Token, secOK.Read, secOK.Wrote = tok, tok, history.Int64(v), history.Int64(v+1)
				relInv, relOK := ev(history.Invoke, history.Release, p, at[3]), ev(history.Ok, history.Release, p, at[4])
				relInv.Token, relOK.Token = tok, tok
				return []history.Event{acq, secInv, secOK, relInv, relOK}
			}
			round = append(round, ev(history.Invoke, history.Acquire, holder, 0))
			round = append(round, held(holder, tok, [5]int64{100, 110, 200, 300, 310})...)
			round = append(round, ev(history.Invoke, history.Acquire, other, 150))
			if r == vRound && k == 0 {
				// The violation: other acquires inside holder's hold.
				overlap := held(other, tok+"-x", [5]int64{160, 170, 250, 260, 270})
				violationAt = overlap[0].Time
				round = append(round, overlap...)
			} else {
				fail := ev(history.Fail, history.Acquire, other, 160)
				fail.Error = "setnx: acquire \"" + key + "\": locks: not acquired"
				round = append(round, fail)
			}
			value[k] = v + 1
		}
		slices.SortStableFunc(round, func(a, b history.Event) int { return cmp.Compare(a.Time, b.Time) })
		for i := range round {
			if err := w.Append(round[i]); err != nil {
				return events, violationAt, err
			}
		}
		events += len(round)
	}
	return events, violationAt, nil
}
