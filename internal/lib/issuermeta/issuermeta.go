// Package issuermeta finds and reads an OAuth 2.0 authorization server's
// metadata from its issuer URL (RFC 8414, or OpenID Connect Discovery), for
// both sides of OAuth here: an agent checking tokens of its issuer and an
// agent getting tokens from the issuer it is registered at.
package issuermeta

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// Meta is an issuer's metadata, as oauthex.GetAuthServerMeta read and
// checked it: it names the issuer it was asked for, and its endpoints are
// https (or http on a loopback address).
type Meta struct {
	*oauthex.AuthServerMeta
	URL  string // where it was read
	OIDC bool   // from OpenID Connect discovery (not RFC 8414)
}

// URLs are where an issuer's metadata may be (RFC 8414 §3.1, and OpenID
// Connect Discovery with the path inserted and appended), in the order the
// MCP specification tries them; oidc marks the OpenID Connect ones.
func URLs(issuer string) (urls []string, oidc []bool) {
	u, err := url.Parse(issuer)
	if err != nil {
		return nil, nil
	}
	path := strings.Trim(u.Path, "/")
	at := func(p string, isOIDC bool) {
		v := *u
		v.Path, v.RawPath = p, ""
		urls, oidc = append(urls, v.String()), append(oidc, isOIDC)
	}
	if path == "" {
		at("/.well-known/oauth-authorization-server", false)
		at("/.well-known/openid-configuration", true)
		return urls, oidc
	}
	at("/.well-known/oauth-authorization-server/"+path, false)
	at("/.well-known/openid-configuration/"+path, true)
	at("/"+path+"/.well-known/openid-configuration", true)
	return urls, oidc
}

// Read reads the metadata of issuer with c (nil: http.DefaultClient) from
// the first of its URLs that has one. A document naming another issuer is
// refused, as is an answer other than 200 or a 4xx (a 4xx means "not
// here": the next URL is tried).
func Read(ctx context.Context, issuer string, c *http.Client) (*Meta, error) {
	urls, oidc := URLs(issuer)
	for i, u := range urls {
		asm, err := oauthex.GetAuthServerMeta(ctx, u, issuer, c)
		if err != nil {
			return nil, fmt.Errorf("read the metadata of issuer %s at %s: %w", issuer, u, err)
		}
		if asm != nil {
			return &Meta{AuthServerMeta: asm, URL: u, OIDC: oidc[i]}, nil
		}
	}
	return nil, fmt.Errorf("issuer %s publishes no metadata (tried %s); give the issuer exactly as its metadata and its tokens' iss claim say it", issuer, strings.Join(urls, ", "))
}
