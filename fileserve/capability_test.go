package fileserve

import (
	"testing"
	"time"
)

// As finds a capability below the wrappers that hide it from a type
// assertion, and reports false when no store of the chain has it.
func TestAsLooksBelowWrappers(t *testing.T) {
	disk := newTestStore(t)
	live := NewTTLStore(disk, func(Area) time.Duration { return time.Hour }, nil)
	var st Store = outerWrapper{live}
	if _, ok := st.(LocalRoot); ok {
		t.Fatal("the outer wrapper answers LocalRoot itself; this test wants a capability it hides")
	}
	lr, ok := As[LocalRoot](st)
	if !ok || lr.Root() != disk.Root() {
		t.Errorf("As[LocalRoot] through two wrappers: %v %v, want the disk store's root", lr, ok)
	}
	if rs, ok := As[RecordStore](st); !ok || rs != RecordStore(disk) {
		t.Errorf("As[RecordStore]: %v %v, want the disk store", rs, ok)
	}
	if _, ok := As[Presigner](st); ok {
		t.Error("As[Presigner] found one in a chain of a disk store")
	}
	if _, ok := As[LocalRoot](nil); ok {
		t.Error("As on a nil store found a capability")
	}
}

// outerWrapper is a store wrapper with the Store's methods alone, as a
// program's own (a quota, metrics) is.
type outerWrapper struct{ Store }

func (w outerWrapper) Unwrap() Store { return w.Store }
