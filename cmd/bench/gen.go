package main

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/locktorture/locktorture/history"
)

// genHistory writes a history of about ops operations to path in the
// shape the harness records: keys keys, perKey clients on each; in every
// round each key's holder acquires, runs a section and releases, while
// another client's acquire on the key fails (4 operations per key and
// round). With violation, at 90% of the history one failing acquire
// succeeds instead, inside the holder's lease, and its section reads the
// same value as the holder's: one lease overlap and one lost update, late
// in the history. It returns the number of events written and the time of
// the injected overlap's start (-1 without).
func genHistory(path string, ops, keys, perKey int, violation bool) (events int, violationAt int64, err error) {
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
			acqOK := ev(history.Ok, history.Acquire, holder, 100)
			acqOK.Token, acqOK.ValidUntil = tok, t+10_000*us
			secInv := ev(history.Invoke, history.Section, holder, 110)
			secInv.Token = tok
			secOK := secInv
			secOK.Type, secOK.Time, secOK.Read, secOK.Wrote = history.Ok, t+200*us+int64(k), history.Int64(v), history.Int64(v+1)
			relInv := ev(history.Invoke, history.Release, holder, 300)
			relInv.Token = tok
			relOK := relInv
			relOK.Type, relOK.Time = history.Ok, t+310*us+int64(k)
			round = append(round, ev(history.Invoke, history.Acquire, holder, 0), acqOK, secInv, secOK, relInv, relOK,
				ev(history.Invoke, history.Acquire, other, 150))
			if r == vRound && k == 0 {
				// The violation: other acquires while holder holds the
				// key, and its section reads what holder's read.
				otok := tok + "-x"
				ok := ev(history.Ok, history.Acquire, other, 160)
				ok.Token, ok.ValidUntil = otok, t+10_000*us
				violationAt = ok.Time
				sInv := ev(history.Invoke, history.Section, other, 170)
				sInv.Token = otok
				sOK := sInv
				sOK.Type, sOK.Time, sOK.Read, sOK.Wrote = history.Ok, t+250*us+int64(k), history.Int64(v), history.Int64(v+1)
				rInv := ev(history.Invoke, history.Release, other, 260)
				rInv.Token = otok
				rOK := rInv
				rOK.Type, rOK.Time = history.Ok, t+270*us+int64(k)
				round = append(round, ok, sInv, sOK, rInv, rOK)
			} else {
				fail := ev(history.Fail, history.Acquire, other, 160)
				fail.Error = "setnx: acquire \"" + key + "\": locks: not acquired"
				round = append(round, fail)
			}
			value[k] = v + 1
		}
		slices.SortStableFunc(round, func(a, b history.Event) int {
			switch {
			case a.Time < b.Time:
				return -1
			case a.Time > b.Time:
				return 1
			}
			return 0
		})
		for i := range round {
			if err := w.Append(round[i]); err != nil {
				return events, violationAt, err
			}
		}
		events += len(round)
	}
	return events, violationAt, nil
}
