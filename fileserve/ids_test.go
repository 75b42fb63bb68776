package fileserve

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

func TestValidID(t *testing.T) {
	for id, want := range map[string]bool{
		NewID():                                         true,
		"0192f0c4-6a4e-7c1a-9b3e-2f4d5a6b7c8d":          true,
		"5fc2205e8aa1fb8fd0be56b4181c2adf":              true, // made before ids were UUIDs
		"0192F0C4-6A4E-7C1A-9B3E-2F4D5A6B7C8D":          false,
		"{0192f0c4-6a4e-7c1a-9b3e-2f4d5a6b7c8d}":        false,
		"urn:uuid:0192f0c4-6a4e-7c1a-9b3e-2f4d5a6b7c8d": false,
		"0192f0c46a4e-7c1a-9b3e-2f4d5a6b7c8d-":          false,
		"0192f0c4-6a4e-7c1a-9b3e-2f4d5a6b7c8g":          false,
		"../../../../etc/passwd-aaaaaaaaaaaaa":          false,
		"5fc2205e8aa1fb8fd0be56b4181c2ad":               false,
		"":                                              false,
	} {
		if got := ValidID(id); got != want {
			t.Errorf("ValidID(%q) = %v, want %v", id, got, want)
		}
	}
}

// TestNewIDIsUUIDv7: ids are canonical version 7 UUIDs, and later ids sort
// after earlier ones.
func TestNewIDIsUUIDv7(t *testing.T) {
	a := NewID()
	time.Sleep(2 * time.Millisecond)
	b := NewID()
	for _, id := range []string{a, b} {
		u, err := uuid.Parse(id)
		if err != nil || u.Version() != 7 || u.String() != id {
			t.Errorf("NewID() = %q: not a canonical version 7 UUID (%v)", id, err)
		}
	}
	if strings.Compare(a, b) >= 0 {
		t.Errorf("ids do not sort by time: %s then %s", a, b)
	}
}
