package transferclient

import (
	"cmp"
	"net/http"
	"net/url"

	"github.com/agentura/agentura/transfer"
)

// BearerTransport sends "Authorization: Bearer <Token>" with the requests
// that go to Origin ([transfer.SameOrigin]) and with no other: a redirect to another
// host, a download URL elsewhere, goes without it. It never changes the
// caller's request.
type BearerTransport struct {
	// Token is the bearer token; empty sends none.
	Token string
	// Origin is where the token may go; nil: nowhere.
	Origin *url.URL
	// Base makes the requests; nil means http.DefaultTransport.
	Base http.RoundTripper
}

// RoundTrip sends r, with the token when r goes to the origin. A token
// set on r by someone else is taken off when r goes elsewhere.
func (b *BearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	base := cmp.Or(b.Base, http.DefaultTransport)
	on := transfer.SameOrigin(b.Origin, r.URL)
	switch {
	case on && b.Token != "":
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+b.Token)
	case !on && r.Header.Get("Authorization") != "":
		r = r.Clone(r.Context())
		r.Header.Del("Authorization")
	}
	return base.RoundTrip(r)
}

// WithBearer returns a copy of hc (nil: a client without an overall timeout)
// whose transport sends token to origin only (BearerTransport). With no
// token it returns hc, or a new client when hc is nil.
func WithBearer(hc *http.Client, token string, origin *url.URL) *http.Client {
	hc = cmp.Or(hc, &http.Client{})
	if token == "" {
		return hc
	}
	with := *hc
	with.Transport = &BearerTransport{Token: token, Origin: origin, Base: hc.Transport}
	return &with
}
