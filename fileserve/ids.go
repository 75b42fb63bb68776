package fileserve

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/google/uuid"
)

// NewID returns a fresh file id: a version 7 UUID in its canonical form
// (36 characters, lower case). Version 7 starts with the creation time in
// milliseconds, so ids sort by age — a listing of a store's folder or key
// prefix comes out oldest first, which a sweeper or an expiry index can stop
// on — and it reveals nothing the download URL's token does not already show
// (its expiry is the creation time plus the URL's lifetime). The 62 bits
// after the time come from crypto/rand; the id is never the secret that
// guards a file: the signed token is. Files are stored under such ids;
// agentcore names call folders and request ids with them too.
func NewID() string {
	return uuid.Must(uuid.NewV7()).String()
}

// legacyIDLen is the length of the ids made before UUIDs: 32 lowercase hex
// digits (128 random bits). Their files stay downloadable until they expire.
const legacyIDLen = 32

// ValidID reports whether id has the form of a file id: a canonical UUID
// (8-4-4-4-12 lowercase hex digits) or, from before UUIDs, exactly 32
// lowercase hex digits. Stores look nothing else up, so an id from a request
// never reaches a path or a key unchecked.
func ValidID(id string) bool {
	switch len(id) {
	case legacyIDLen:
		return lowerHex(id)
	case 36:
		if id[8] != '-' || id[13] != '-' || id[18] != '-' || id[23] != '-' {
			return false
		}
		return lowerHex(id[:8]) && lowerHex(id[9:13]) && lowerHex(id[14:18]) && lowerHex(id[19:23]) && lowerHex(id[24:])
	}
	return false
}

// lowerHex reports whether s is made of lowercase hex digits only.
func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
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
