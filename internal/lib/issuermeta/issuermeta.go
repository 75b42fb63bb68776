// Package issuermeta finds and reads an OAuth 2.0 authorization server's
// metadata from its issuer URL (RFC 8414, or OpenID Connect Discovery), for
// both sides of OAuth here: an agent checking tokens of its issuer and an
// agent getting tokens from the issuer it is registered at.
package issuermeta

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// Meta is an issuer's metadata as Read checked it: it names the issuer it
// was asked for, and the endpoints a client or resource server calls are
// https (or http on a loopback address).
type Meta struct {
	*oauthex.AuthServerMeta
	URL  string // where it was read
	OIDC bool   // from OpenID Connect discovery (not RFC 8414)
}

// maxMetadataBytes bounds a metadata document (providers' are a few KiB).
const maxMetadataBytes = 1 << 20

// metadataURLs are where an issuer's metadata may be (RFC 8414 §3.1, and OpenID
// Connect Discovery with the path inserted and appended), in the order the
// MCP specification tries them; oidc marks the OpenID Connect ones.
func metadataURLs(issuer string) (urls []string, oidc []bool) {
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
// the first of its metadataURLs that has one. A document naming another issuer is
// refused, as is an answer other than 200 or a 4xx (a 4xx means "not
// here": the next URL is tried), a document over 1 MiB, and an endpoint
// that is neither https nor loopback http.
//
// Unlike oauthex.GetAuthServerMeta, Read does not require PKCE to be
// advertised: neither side that reads here runs an authorization code
// flow, and providers that support PKCE without saying so in their
// metadata (Microsoft Entra ID, Amazon Cognito) are otherwise refused.
func Read(ctx context.Context, issuer string, c *http.Client) (*Meta, error) {
	c = cmp.Or(c, http.DefaultClient)
	urls, oidc := metadataURLs(issuer)
	for i, u := range urls {
		asm, err := get(ctx, c, u)
		if err != nil {
			return nil, fmt.Errorf("read the metadata of issuer %s at %s: %w", issuer, u, err)
		}
		if asm == nil {
			continue
		}
		if !SameIssuer(asm.Issuer, issuer) {
			return nil, fmt.Errorf("the metadata at %s names issuer %q, which does not match %q: give the issuer exactly as its tokens' iss claim says it", u, asm.Issuer, issuer)
		}
		for _, e := range []struct{ name, url string }{{"token_endpoint", asm.TokenEndpoint}, {"jwks_uri", asm.JWKSURI},
			{"introspection_endpoint", asm.IntrospectionEndpoint}, {"authorization_endpoint", asm.AuthorizationEndpoint},
			{"registration_endpoint", asm.RegistrationEndpoint}} {
			if err := HTTPSOrLoopback(e.url); e.url != "" && err != nil {
				return nil, fmt.Errorf("issuer %s: %s %w", issuer, e.name, err)
			}
		}
		return &Meta{AuthServerMeta: asm, URL: u, OIDC: oidc[i]}, nil
	}
	return nil, fmt.Errorf("issuer %s publishes no metadata (tried %s); give the issuer exactly as its metadata and its tokens' iss claim say it", issuer, strings.Join(urls, ", "))
}

// SameIssuer reports whether two issuer metadataURLs name the same issuer: equal
// but for a trailing slash, which providers write or leave out.
func SameIssuer(a, b string) bool {
	return strings.TrimRight(a, "/") == strings.TrimRight(b, "/")
}

// get reads one metadata document; nil, nil when the answer is a 4xx.
func get(ctx context.Context, c *http.Client, u string) (*oauthex.AuthServerMeta, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode >= 400 && resp.StatusCode < 500:
		return nil, nil
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("answered %s", resp.Status)
	}
	if mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return nil, fmt.Errorf("answered Content-Type %q, not application/json", resp.Header.Get("Content-Type"))
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadataBytes+1))
	if err != nil {
		return nil, err
	}
	if len(body) > maxMetadataBytes {
		return nil, fmt.Errorf("the document is over %d bytes", maxMetadataBytes)
	}
	var asm oauthex.AuthServerMeta
	if err := json.Unmarshal(body, &asm); err != nil {
		return nil, fmt.Errorf("not a metadata document: %w", err)
	}
	return &asm, nil
}

// HTTPSOrLoopback accepts an https URL, or an http one on a loopback host.
func HTTPSOrLoopback(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%q is not a URL: %v", raw, err)
	}
	if u.Scheme == "https" && u.Host != "" {
		return nil
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); u.Scheme == "http" && (host == "localhost" || (ip != nil && ip.IsLoopback())) {
		return nil
	}
	return fmt.Errorf("%q is neither https nor http on a loopback address", raw)
}
