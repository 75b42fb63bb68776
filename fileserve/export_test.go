package fileserve

// Internals the external tests (package fileserve_test) need to build the
// remains of interrupted writes in a store's own layout.

// OwnerKey is ownerKey.
func OwnerKey(owner string) string { return ownerKey(owner) }
