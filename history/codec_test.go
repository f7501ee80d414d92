package history

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

// oddStrings need escaping, or are invalid UTF-8, or are plain.
var oddStrings = []string{
	"", "k", "k1", "a\"b", `back\slash`, "tab\tnew\nline\r", "\x00\x01\x1f\x7f", "<html>&amp;",
	"héllo wörld", "日本語", "\xff\xfe", "a\xc3", "\u2028\u2029", "emoji 😀", "setnx: acquire \"k1\": locks: not acquired",
}

func sampleEvents() []Event {
	evs := []Event{
		{},
		{Type: Invoke, F: Acquire, Process: 3, Time: 12345, Key: "k1"},
		{Type: Ok, F: Acquire, Process: 3, Time: 12400, Key: "k1", Token: "0123456789abcdef0123456789abcdef", Fence: 7, ValidUntil: 990000},
		{Type: Ok, F: Section, Process: 0, Time: 1, Key: "k", Read: Int64(0), Wrote: Int64(1)},
		{Type: Info, F: FaultStart, Process: NemesisProcess, Time: math.MaxInt64, Value: "partition n1|n2,n3", Family: "partition"},
		{Type: Fail, F: Release, Process: math.MaxInt32, Time: math.MinInt64, Fence: math.MinInt64, ValidUntil: -1, Read: Int64(math.MaxInt64), Error: "x"},
	}
	for _, s := range oddStrings {
		evs = append(evs, Event{Type: Type(s), F: Func(s), Key: s, Token: s, Value: s, Family: s, Error: s})
	}
	evs = append(evs,
		Event{Type: Ok, F: Acquire, Process: 1, Time: 5, Key: "k", Token: "t", ValidUntil: 9,
			Nodes: &Nodes{Attempt: 2, Granted: []int{0, 1, 3}, Refused: []int{2}, Silent: []int{4}, Unlocked: []int{0, 1}}},
		Event{Type: Fail, F: Release, Process: 1, Time: 5, Key: "k", Nodes: &Nodes{}},
		Event{Type: Info, F: Extend, Process: 1, Time: 5, Key: "k", Nodes: &Nodes{Silent: []int{math.MaxInt, math.MinInt}}},
		Event{Type: Ok, F: Release, Process: 1, Time: 5, Key: "k", Nodes: &Nodes{Attempt: -1, Unlocked: []int{7}}},
		Event{Type: Ok, F: Release, Process: 1, Time: 5, Key: "k", Nodes: &Nodes{Granted: []int{}, Refused: []int{0}}},
		Event{Type: Info, F: NodeKey, Process: ObserverProcess, Time: 5, Key: "k", Node: Int(0), Value: "expired"},
		Event{Type: Info, F: NodeKey, Process: ObserverProcess, Time: 5, Key: "k", Node: Int(math.MaxInt), Value: "set"},
		Event{Type: Info, F: NodeKey, Process: ObserverProcess, Time: 5, Key: "k", Node: Int(-3), Value: "set"},
	)
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func() string { return oddStrings[rng.IntN(len(oddStrings))] }
	num := func() int64 {
		switch rng.IntN(4) {
		case 0:
			return 0
		case 1:
			return rng.Int64()
		case 2:
			return -rng.Int64()
		}
		return rng.Int64N(1000)
	}
	nodes := func() []int {
		var l []int
		for range rng.IntN(4) {
			l = append(l, int(num()))
		}
		return l
	}
	for range 500 {
		e := Event{Type: Type(pick()), F: Func(pick()), Process: int(num()), Time: num(), Key: pick(), Token: pick(),
			Fence: num(), ValidUntil: num(), Value: pick(), Family: pick(), Error: pick()}
		if rng.IntN(2) == 0 {
			e.Read, e.Wrote = Int64(num()), Int64(num())
		}
		if rng.IntN(2) == 0 {
			e.Nodes = &Nodes{Attempt: int(num()), Granted: nodes(), Refused: nodes(), Silent: nodes(), Unlocked: nodes()}
		}
		if rng.IntN(3) == 0 {
			e.Node = Int(int(num()))
		}
		evs = append(evs, e)
	}
	return evs
}

// TestAppendEventIsEncodingJSON: the Writer's encoding is byte for byte
// json.Encoder's.
func TestAppendEventIsEncodingJSON(t *testing.T) {
	for _, e := range sampleEvents() {
		var want bytes.Buffer
		if err := json.NewEncoder(&want).Encode(e); err != nil {
			t.Fatal(err)
		}
		if got := appendEvent(nil, &e); !bytes.Equal(got, want.Bytes()) {
			t.Errorf("appendEvent(%+v)\n got %s\nwant %s", e, got, want.Bytes())
		}
	}
}

// checkParse fails unless the fast path, where it takes line, reads it as
// encoding/json does.
func checkParse(t *testing.T, line []byte) {
	t.Helper()
	var d Decoder
	var fast Event
	ok := d.parseFast(line, &fast)
	var want Event
	jerr := json.Unmarshal(line, &want)
	if !ok {
		return
	}
	if jerr != nil {
		t.Fatalf("fast path took %q, which encoding/json rejects: %v", line, jerr)
	}
	if !reflect.DeepEqual(fast, want) {
		t.Fatalf("line %q:\nfast %+v\njson %+v", line, fast, want)
	}
}

func parseSeeds() [][]byte {
	var seeds [][]byte
	for _, e := range sampleEvents()[:40] {
		seeds = append(seeds, appendEvent(nil, &e))
	}
	for _, s := range []string{
		`{}`, ` { } `, `{"type":"invoke","f":"acquire","process":0,"time":1,"key":"k"}`,
		` {"time" : 5 , "type":"ok"}` + "\r\n",
		`{"Type":"invoke"}`, `{"TYPE":"x","type":"y"}`, `{"type":"a","type":"b"}`, `{"time":1,"time":2}`,
		`{"time":1.5}`, `{"time":1e3}`, `{"time":-0}`, `{"time":01}`, `{"time":-}`, `{"time":9223372036854775808}`,
		`{"time":-9223372036854775808}`, `{"read":null}`, `{"key":null}`, `{"key":"a\"b"}`, `{"key":"\u00e9"}`,
		`{"key":"é"}`, "{\"key\":\"\xff\"}", `{"other":1}`, `{"read":{"x":1}}`, `{"type":"ok"}x`, `{"type":"ok"`,
		`{"type":"ok",}`, `{,}`, `[]`, `"x"`, `{"process":4294967296}`, `{"time":"1"}`, `{"key":1}`, "{\"key\":\"a\tb\"}",
		`{"key":"a\u0041\n\"\/\\\b\f\r\t"}`, `{"error":"x \"k1\": y"}`, `{"key":"\ud83d\ude00"}`, `{"key":"\u12"}`,
		`{"key":"\u00zz"}`, `{"key":"\x"}`, `{"key":"a\"}`, `{"key":"\u00E9\u2028"}`, `{"key":"\u0000"}`,
		`{"nodes":{}}`, `{"nodes":null}`, `{"nodes":{"attempt":1,"granted":[0,1]}}`, `{"nodes":{ "granted" : [ 0 , 1 ] , "attempt" : 2 }}`,
		`{"nodes":{"granted":[]}}`, `{"nodes":{"granted":[ ]}}`, `{"nodes":{"granted":null}}`, `{"nodes":{"Granted":[1]}}`,
		`{"nodes":{"granted":[1],"granted":[2]}}`, `{"nodes":{"attempt":1,"attempt":2}}`, `{"nodes":{"granted":[1,]}}`,
		`{"nodes":{"granted":[1.5]}}`, `{"nodes":{"granted":["1"]}}`, `{"nodes":{"granted":[9223372036854775808]}}`,
		`{"nodes":{"other":1}}`, `{"nodes":{"granted":[1]},"nodes":{}}`, `{"nodes":[]}`, `{"nodes":{"granted":[1]}`,
		`{"nodes":{"granted":[1]`, `{"nodes":{"granted":1}}`, `{"nodes":{,}}`, `{"nodes":{"silent":[-1,0,-0]}}`,
		`{"nodes":{"unlocked":[3],"refused":[2],"silent":[1],"granted":[0],"attempt":4}}`,
		// An escaped name, then an escaped value: the value must not
		// overwrite the name before it is matched.
		`{"type":"invoke","f":"acquire","process":1,"time":1,"\u006bey":"a\"b"}`,
	} {
		seeds = append(seeds, []byte(s))
	}
	return seeds
}

// TestParseFastIsEncodingJSON: on every line it takes, the fast path reads
// what encoding/json reads; on the Writer's own lines it always takes them.
func TestParseFastIsEncodingJSON(t *testing.T) {
	for _, line := range parseSeeds() {
		checkParse(t, line)
	}
	for _, e := range sampleEvents() {
		checkParse(t, appendEvent(nil, &e))
	}
	var d Decoder
	var got Event
	for _, plain := range []Event{
		{Type: Ok, F: Acquire, Process: 2, Time: 99, Key: "k1", Token: "tok", Fence: 3, ValidUntil: 1000},
		{Type: Fail, F: Acquire, Process: 2, Time: 99, Key: "k1", Error: `setnx: acquire "k1": locks: not acquired`},
		{Type: Ok, F: Section, Process: 2, Time: 99, Key: "k1", Read: Int64(4), Wrote: Int64(5)},
		{Type: Ok, F: Acquire, Process: 2, Time: 99, Key: "k1", Token: "tok", ValidUntil: 1000,
			Nodes: &Nodes{Attempt: 2, Granted: []int{0, 1, 3}, Refused: []int{2}, Silent: []int{4}, Unlocked: []int{0, 1}}},
		{Type: Fail, F: Acquire, Process: 2, Time: 99, Key: "k1", Nodes: &Nodes{Attempt: 1, Refused: []int{0}}},
		{Type: Info, F: NodeKey, Process: ObserverProcess, Time: 99, Key: "k1", Node: Int(2), Value: "expired"},
	} {
		got = Event{}
		if !d.parseFast(appendEvent(nil, &plain), &got) || !reflect.DeepEqual(got, plain) {
			t.Fatalf("the fast path did not take the Writer's line for %+v: %+v", plain, got)
		}
	}
}

func FuzzParseFast(f *testing.F) {
	for _, s := range parseSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line []byte) { checkParse(t, line) })
}

func FuzzAppendEvent(f *testing.F) {
	for _, s := range oddStrings {
		f.Add(s, s, int64(len(s)))
	}
	f.Fuzz(func(t *testing.T, a, b string, n int64) {
		e := Event{Type: Type(a), F: Func(b), Process: int(n), Time: n, Key: a, Token: b, Fence: -n, Value: b, Error: a, Read: &n}
		if n%2 == 0 {
			e.Nodes = &Nodes{Attempt: int(n), Granted: []int{int(n)}, Silent: []int{len(a), len(b)}}
		}
		var want bytes.Buffer
		if err := json.NewEncoder(&want).Encode(e); err != nil {
			t.Fatal(err)
		}
		if got := appendEvent(nil, &e); !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("got %s want %s", got, want.Bytes())
		}
		checkParse(t, want.Bytes())
	})
}
