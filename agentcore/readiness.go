package agentcore

import (
	"context"
	"time"

	"github.com/agentura/agentura/internal/signing"
)

type readinessCheck struct {
	name string
	fn   func(context.Context) error
}

// AddReadinessCheck adds a check to /readyz, such as "the tesseract command
// runs". While fn returns an error, /readyz answers 503 with the error's text
// under name; make the text say what is missing and how to install it.
func (s *Service) AddReadinessCheck(name string, fn func(context.Context) error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.checks = append(s.checks, readinessCheck{name: name, fn: fn})
}

func (s *Service) readiness() []readinessCheck {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return append([]readinessCheck(nil), s.checks...)
}

// probeClaims are signed by /readyz to prove the key works.
func probeClaims() signing.Claims {
	return signing.Claims{Owner: "readyz", FileID: "probe", ExpiresAt: time.Now().Add(time.Minute)}
}
