package explain

import (
	"cmp"
	"testing"

	"github.com/locktorture/locktorture/nemesis"
)

// TestLegacyFamilies: a history written before fault-starts carried a
// family reads every kind of that time into the family the kind records,
// so an old run keeps its meaning; every kind has a family. A kind added
// since whose name is not its family is in no legacy history: skipped.
func TestLegacyFamilies(t *testing.T) {
	for _, k := range nemesis.Kinds() {
		if k.Family == "" {
			t.Errorf("kind %s has no family", k.Name)
		}
		if _, old := legacyFamilies[k.Name]; !old && k.Name != k.Family {
			continue
		}
		if got := cmp.Or(legacyFamilies[k.Name], k.Name); got != k.Family {
			t.Errorf("an old history reads kind %s as family %q; it records %q", k.Name, got, k.Family)
		}
	}
}
