//go:build race

package gate_test

// race: the tests run with the race detector.
const race = true
