package fileserve

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
)

// idLen is the length of a file id: 16 random bytes in lowercase hex.
const idLen = 32

// NewID returns a fresh random id: 128 bits from crypto/rand in lowercase hex.
// Files are stored under such ids; agentcore names call folders and request
// ids with them too.
func NewID() string {
	var b [idLen / 2]byte
	rand.Read(b[:]) // never fails: crypto/rand panics rather than return an error
	return hex.EncodeToString(b[:])
}

// ValidID reports whether id has the form of a file id: exactly 32 lowercase
// hex digits. Stores look nothing else up, so an id from a request never
// reaches a path or a key unchecked.
func ValidID(id string) bool {
	if len(id) != idLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// OwnerKey is the name under which a store keeps an owner's files (a folder
// on disk, a key segment in S3): the first 32 hex digits of the SHA-256 of
// the owner string, so that arbitrary owner strings never reach a path or a
// key.
func OwnerKey(owner string) string {
	sum := sha256.Sum256([]byte(owner))
	return hex.EncodeToString(sum[:16])
}
