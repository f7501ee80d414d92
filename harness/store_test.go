package harness

import (
	"errors"
	"testing"
)

func TestStoreFencing(t *testing.T) {
	for _, tc := range []struct {
		name      string
		fencing   bool
		writeOnly bool
		// steps: fence, write value (0 = read)
		steps []struct {
			fence int64
			write int64
		}
		wantErr []bool
	}{
		{"off: stale token accepted", false, false, []struct{ fence, write int64 }{{5, 1}, {3, 2}, {3, 0}}, []bool{false, false, false}},
		{"on: newer raises the bar", true, false, []struct{ fence, write int64 }{{3, 1}, {5, 0}, {3, 2}, {3, 0}, {5, 3}}, []bool{false, false, true, true, false}},
		{"on: equal token accepted", true, false, []struct{ fence, write int64 }{{4, 1}, {4, 2}, {4, 0}}, []bool{false, false, false}},
		// Kleppmann's storage service: a read carries no token, so a
		// newer reader does not raise the bar, and only writes are
		// refused.
		{"write-only: reads neither checked nor raise the bar", true, true, []struct{ fence, write int64 }{{3, 1}, {5, 0}, {3, 2}, {1, 0}, {2, 3}, {4, 4}, {3, 5}}, []bool{false, false, false, false, true, false, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewStore(tc.fencing)
			if tc.writeOnly {
				s = NewWriteOnlyStore()
			}
			for i, st := range tc.steps {
				var err error
				if st.write == 0 {
					_, err = s.Read("k", st.fence)
				} else {
					err = s.Write("k", st.fence, st.write)
				}
				if (err != nil) != tc.wantErr[i] {
					t.Fatalf("step %d (fence %d): err = %v, want error %v", i, st.fence, err, tc.wantErr[i])
				}
				if err != nil && !errors.Is(err, ErrStaleFence) {
					t.Fatalf("step %d: err = %v, want ErrStaleFence", i, err)
				}
			}
		})
	}
}

func TestStoreKeysIndependent(t *testing.T) {
	s := NewStore(true)
	if err := s.Write("a", 9, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Write("b", 1, 7); err != nil {
		t.Fatalf("fence of key a leaked into key b: %v", err)
	}
	if s.Value("a") != 1 || s.Value("b") != 7 {
		t.Fatalf("values a=%d b=%d, want 1 and 7", s.Value("a"), s.Value("b"))
	}
}
