package contractcheck

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/agentura/agentura/transferclient"
)

// token checks that a download URL's token is checked: the URL with its
// token tampered with, and without its query, must be refused (the
// contract: 403 with a JSON reason). An expired token cannot be made
// without the server's key; when the token is a JWT its expiry is read and
// reported, and a JWT without one fails.
func (c *checker) token(ctx context.Context, outs []output) {
	if len(outs) == 0 {
		why := cmp.Or(c.noOutputs, "no produced file's URL to tamper with")
		c.r.add(PointToken, Skip, "%s", why)
		return
	}
	o := outs[0]
	u, err := url.Parse(o.url)
	if err != nil {
		c.r.add(PointToken, Skip, "%v", err)
		return
	}
	if u.RawQuery == "" {
		c.r.add(PointToken, Fail, "%s's download_url carries no token (?token=…): anyone holding the URL reads the file until it is deleted", o.name)
		return
	}
	if err := c.guard.Check(u); err != nil {
		c.r.add(PointToken, Skip, "%s's download_url was not fetched, so whether a bad token is refused is not known: %v", o.name, err)
		return
	}
	tampered := *u
	q := u.Query()
	var value string
	for k, vs := range q {
		for i, v := range vs {
			vs[i] = tamper(v)
			if value == "" || k == "token" {
				value = v
			}
		}
	}
	tampered.RawQuery = q.Encode()
	bare := *u
	bare.RawQuery = ""
	var bad, seen []string
	for _, t := range []struct{ what, url string }{{"tampered token", tampered.String()}, {"no token", bare.String()}} {
		resp, body, err := c.get(ctx, t.url)
		if errors.Is(err, transferclient.ErrForeignURL) {
			bad = append(bad, fmt.Sprintf("%s: redirected instead of refused, and not followed: %v", t.what, err))
			continue
		}
		if err != nil {
			bad = append(bad, fmt.Sprintf("%s: %v", t.what, err))
			continue
		}
		switch {
		case resp.StatusCode == http.StatusForbidden:
			seen = append(seen, t.what+": 403"+reason(body))
		case resp.StatusCode >= 400 && resp.StatusCode < 500:
			seen = append(seen, fmt.Sprintf("%s: %s (refused; the contract says 403)", t.what, resp.Status))
		default:
			bad = append(bad, fmt.Sprintf("%s: answered %s — the file is served without a valid token", t.what, resp.Status))
		}
	}
	exp, expErr := jwtExpiry(value)
	switch {
	case expErr == errNotJWT:
		seen = append(seen, "expiry: the token is not a JWT, so its expiry is not read here")
	case expErr != nil:
		bad = append(bad, "expiry: "+expErr.Error())
	default:
		seen = append(seen, fmt.Sprintf("expiry: the token expires at %s (in %s)", exp.UTC().Format(time.RFC3339), time.Until(exp).Round(time.Second)))
	}
	if len(bad) > 0 {
		c.r.add(PointToken, Fail, "%s", strings.Join(append(bad, seen...), "\n"))
		return
	}
	c.r.add(PointToken, Pass, "%s", strings.Join(seen, "\n"))
}

// tamper changes the character in the middle of v, or of its signature
// when v is a JWT (never only its last character, whose low bits base64 may
// ignore): a server that reads the token without checking its signature
// accepts it.
func tamper(v string) string {
	if v == "" {
		return "x"
	}
	if parts := strings.Split(v, "."); len(parts) == 3 && len(parts[2]) > 1 {
		parts[2] = tamper(parts[2])
		return strings.Join(parts, ".")
	}
	b := []byte(v)
	i := len(b) / 2
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}

// reason is the JSON reason of a refusal, for the detail.
func reason(body []byte) string {
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && e.Error != "" {
		return fmt.Sprintf(" (%q)", e.Error)
	}
	return ""
}

// errNotJWT is jwtExpiry's error for a token that is not a JWT.
var errNotJWT = errors.New("not a JWT")

// jwtExpiry reads the exp claim of a JWT, unverified.
func jwtExpiry(tok string) (time.Time, error) {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return time.Time{}, errNotJWT
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return time.Time{}, errNotJWT
	}
	var claims struct {
		Exp *float64 `json:"exp"`
	}
	if json.Unmarshal(raw, &claims) != nil {
		return time.Time{}, errNotJWT
	}
	if claims.Exp == nil {
		return time.Time{}, errors.New("the token (a JWT) has no exp claim: the URL never expires")
	}
	return time.Unix(int64(*claims.Exp), 0), nil
}
