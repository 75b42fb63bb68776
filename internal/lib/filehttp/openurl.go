package filehttp

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/signing"
)

// OpenURL recognises a URL this server signed and opens its file locally,
// without a network round trip.
//
// A URL is ours when its path is <PublicURL path>/files/{id}/... and its
// token was signed with one of our keys for our audience; the host is not
// compared, so aliases such as composer-agent:8002 and localhost:8002 both
// work. For any other URL (another shape, a key we do not have, another
// deployment's audience) own is false and err nil: the caller fetches it
// like any URL. For our URL, own is true and err says what is wrong when
// the token is invalid or expired, when it was issued to a caller other
// than owner, when it was revoked, or when the file is gone (deleted, or
// past its TTL).
func (s *Server) OpenURL(ctx context.Context, rawURL, owner string) (obj fileserve.Object, m fileserve.Meta, own bool, err error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fileserve.Meta{}, false, nil
	}
	rest, ok := strings.CutPrefix(u.Path, s.basePath+"/files/")
	if !ok {
		return nil, fileserve.Meta{}, false, nil
	}
	id, _, _ := strings.Cut(rest, "/")
	token := u.Query().Get("token")
	if !fileserve.ValidID(id) || token == "" {
		return nil, fileserve.Meta{}, false, nil
	}
	c, err := s.signer.Verify(token)
	if err != nil {
		if !s.signedByUs(token, err) {
			return nil, fileserve.Meta{}, false, nil
		}
		return nil, fileserve.Meta{}, true, fmt.Errorf("fileserve: the download URL of file %s is not valid: %w", id, err)
	}
	if c.FileID != id {
		return nil, fileserve.Meta{}, true, fmt.Errorf("fileserve: the download URL of file %s carries the token of another file", id)
	}
	if s.isRevoked(token) {
		return nil, fileserve.Meta{}, true, fmt.Errorf("fileserve: the download URL of file %s was revoked; ask for the file again", id)
	}
	if c.Owner != owner {
		return nil, fileserve.Meta{}, true, fmt.Errorf("fileserve: the download URL of file %s belongs to another caller; only the caller it was issued to may use it", id)
	}
	if !fileserve.Area(c.Area).Valid() {
		return nil, fileserve.Meta{}, true, fmt.Errorf("fileserve: the download URL of file %s names no storage area", id)
	}
	obj, m, err = s.store.Open(ctx, fileserve.Area(c.Area), c.Owner, id)
	if errors.Is(err, fileserve.ErrNotFound) {
		return nil, fileserve.Meta{}, true, fmt.Errorf("fileserve: the file of download URL %s is gone (expired and deleted); upload it or produce it again: %w", id, err)
	}
	if err != nil {
		return nil, fileserve.Meta{}, true, err
	}
	return obj, m, true, nil
}

// signedByUs tells, for a token that failed verification with verr, whether
// it is one of ours gone bad (tampered, expired) rather than a token of
// someone else.
func (s *Server) signedByUs(token string, verr error) bool {
	switch {
	case errors.Is(verr, signing.ErrSignature), errors.Is(verr, signing.ErrExpired), errors.Is(verr, signing.ErrClaims):
		return true
	case errors.Is(verr, signing.ErrMalformed):
		// A tampered body no longer parses, but its header may still name
		// one of our keys.
		kid, ok := signing.KeyID(token)
		return ok && s.signer.HasKey(kid)
	default:
		// ErrUnknownKey, ErrAudience (another deployment sharing a key),
		// ErrAlgorithm: not a token this server issued.
		return false
	}
}
