package contractcheck_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/contractcheck"
	"github.com/agentura/agentura/internal/testkit/untrusted"
)

// The check is for servers one does not trust yet, so it fetches only from
// the checked server's origin, as agentura's hosts do: a URL a server names
// on another origin — a download_url, a resource_link, a redirect off its
// own origin, a descriptor of the file-transfer draft — is not fetched, and
// the point that needed it says so, naming the host and the flag that
// allows it. The other service receives no request at all.
func TestForeignURLsNotFetched(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lures untrusted.Lures
		// want maps each point to the status it must have and the words its
		// detail must hold ("HOST" stands for the other host).
		want map[string]wanted
	}{
		{"download_url on another origin", untrusted.Lures{Download: untrusted.Other, SameLink: true}, map[string]wanted{
			contractcheck.PointDownload:    {contractcheck.Fail, []string{"out.txt: not fetched", "HOST", "--allow-host"}},
			contractcheck.PointHeaders:     {contractcheck.Skip, nil},
			contractcheck.PointToken:       {contractcheck.Skip, []string{"not fetched", "HOST", "--allow-host"}},
			contractcheck.PointOutputLinks: {contractcheck.Fail, []string{"HOST", "--allow-host"}},
		}},
		{"resource_link on another origin", untrusted.Lures{Download: untrusted.Own, Link: untrusted.Other}, map[string]wanted{
			contractcheck.PointOutputLinks: {contractcheck.Fail, []string{"resource_link", "HOST", "--allow-host"}},
			contractcheck.PointDownload:    {contractcheck.Pass, nil},
			contractcheck.PointToken:       {contractcheck.Pass, nil},
		}},
		{"302 off its own origin", untrusted.Lures{Download: untrusted.Hop, SameLink: true}, map[string]wanted{
			contractcheck.PointDownload:    {contractcheck.Fail, []string{"out.txt: not fetched", "redirect", "HOST", "--allow-host"}},
			contractcheck.PointOutputLinks: {contractcheck.Pass, nil},
			contractcheck.PointToken:       {contractcheck.Pass, nil}, // a bad token is refused before the redirect
		}},
		{"upload descriptor on another origin", untrusted.Lures{UploadDescriptor: true}, map[string]wanted{
			contractcheck.PointFileTransfer: {contractcheck.Fail, []string{"not sent", "HOST", "--allow-host"}},
			contractcheck.PointDownload:     {contractcheck.Pass, nil},
		}},
		{"download descriptor on another origin", untrusted.Lures{DownloadDescriptor: true}, map[string]wanted{
			contractcheck.PointFileTransfer: {contractcheck.Fail, []string{"not fetched", "HOST", "--allow-host"}},
			contractcheck.PointDownload:     {contractcheck.Pass, nil},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			s := untrusted.Start(t, tc.lures)
			r := contractcheck.Run(ctx, contractcheck.Target{URL: s.Endpoint}, contractcheck.Options{})
			if got := s.Reached(); len(got) > 0 {
				t.Errorf("the other service received %v, want nothing", got)
			}
			expect(t, r, s.OtherHost, tc.want)
		})
	}
}

// The session itself stays on the endpoint's origin: an endpoint that
// redirects elsewhere does not get the session's messages posted there.
func TestEndpointRedirectNotFollowed(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := untrusted.Start(t, untrusted.Lures{})
	hop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, s.OtherURL+"/mcp", http.StatusTemporaryRedirect)
	}))
	defer hop.Close()
	r := contractcheck.Run(ctx, contractcheck.Target{URL: hop.URL + "/mcp"}, contractcheck.Options{})
	if got := s.Reached(); len(got) > 0 {
		t.Errorf("the other service received %v, want nothing", got)
	}
	expect(t, r, s.OtherHost, map[string]wanted{
		contractcheck.PointConnect: {contractcheck.Fail, []string{"redirect", "HOST", "--allow-host"}},
	})
}

// A host the user allows is fetched from: a download_url there, and a
// redirect to it.
func TestAllowedHostFetched(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lures untrusted.Lures
	}{
		{"download_url there", untrusted.Lures{Download: untrusted.Other, SameLink: true}},
		{"302 to it", untrusted.Lures{Download: untrusted.Hop, SameLink: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			s := untrusted.Start(t, tc.lures)
			r := contractcheck.Run(ctx, contractcheck.Target{URL: s.Endpoint}, contractcheck.Options{AllowHosts: []string{s.OtherHost}})
			if got := s.Reached(); len(got) == 0 || got[0] != "GET /files/out.txt" {
				t.Errorf("the allowed host received %v, want the download", got)
			}
			expect(t, r, s.OtherHost, map[string]wanted{
				contractcheck.PointOutputLinks: {contractcheck.Pass, nil},
				contractcheck.PointDownload:    {contractcheck.Pass, []string{"out.txt: 39 bytes, sha256 as announced"}},
				contractcheck.PointHeaders:     {contractcheck.Pass, nil},
				contractcheck.PointToken:       {contractcheck.Pass, []string{"tampered token: 403", "no token: 403"}},
			})
			if failed := r.Failed(); len(failed) > 0 {
				t.Errorf("failed %v with the host allowed", failed)
			}
		})
	}
}

// wanted is a point's expected status and the words its detail holds.
type wanted struct {
	status contractcheck.Status
	words  []string
}

// expect checks the points of want in r; "HOST" in a word stands for host.
func expect(t *testing.T, r *contractcheck.Report, host string, want map[string]wanted) {
	t.Helper()
	for id, w := range want {
		p, ok := r.Point(id)
		if !ok {
			t.Errorf("%s: not reported", id)
			continue
		}
		if p.Status != w.status {
			t.Errorf("%s: %s, want %s: %s", id, p.Status, w.status, p.Detail)
		}
		for _, word := range w.words {
			if word = strings.ReplaceAll(word, "HOST", host); !strings.Contains(p.Detail, word) {
				t.Errorf("%s: the detail lacks %q: %s", id, word, p.Detail)
			}
		}
	}
	if t.Failed() {
		var text bytes.Buffer
		r.WriteText(&text)
		t.Logf("the report:\n%s", text.String())
	}
}
