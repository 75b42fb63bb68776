package agentcore

import (
	"net/http"
	"time"

	"github.com/agentura/agentura/agentcore/internal/callers"
	"github.com/agentura/agentura/agentcore/internal/httpguard"
	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/internal/lib/revocation"
	"github.com/agentura/agentura/transfer"
)

// fileRoutes serves /files/: downloads (GET, HEAD), DELETE of a file
// by its owner, and POST transfer.RevokePath. Deleting takes the caller's
// identity and scope as /uploads does (a bearer under AGENT_AUTH=jwt or
// oauth, files:write under oauth); revoking
// takes the URL alone. Both are rate limited and refused from foreign
// browser origins.
func (s *Service) fileRoutes(guard *httpguard.Origin) http.Handler {
	// Deleting is writing: under AGENT_AUTH=oauth it takes files:write.
	del := guard.Wrap(s.limiter.Wrap(s.callers.Require(s.callers.RequireScope(callers.ScopeFilesWrite, http.HandlerFunc(s.files.ServeDelete)))))
	revoke := guard.Wrap(s.limiter.Wrap(http.HandlerFunc(s.files.ServeRevoke)))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == transfer.RevokePath:
			revoke.ServeHTTP(w, r)
		case r.Method == http.MethodDelete:
			del.ServeHTTP(w, r)
		default:
			s.files.ServeFile(w, r)
		}
	})
}

// revocationTTL is how long the sweeper keeps a revocation record: until
// every URL it can deny has expired, and at least a minute (a deletion's
// record must reach every replica's quota). (The replicas delete a revoked
// URL's record sooner, once its token has expired: revocation.Grace.)
func (c *Config) revocationTTL() time.Duration { return max(c.URLTTL, time.Minute) }

// newRevocations makes the service's revocation list, kept in the store's
// records when it has them, and telling the quota of files deleted on
// other replicas.
func (s *Service) newRevocations() *revocation.List {
	var forget func(string)
	if q, ok := s.store.(interface{ Forget(id string) }); ok {
		forget = q.Forget
	}
	rs, _ := fileserve.As[fileserve.RecordStore](s.store)
	return revocation.New(rs, revocation.Options{OnDeleted: forget, Log: s.log, MaxPerOwner: s.cfg.MaxRevocations})
}
