package client_test

// The middleware negotiates the newest MCP revision both ends speak: with
// an agentura agent 2026-07-28, carrying the agent's owner handle so that
// resources/list shows the host its own outputs; with a third-party server
// that speaks only 2025-11-25, that; with one that speaks only 2026-07-28,
// that.

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/agentura/agentura/client"
	"github.com/agentura/agentura/internal/testkit/testagent"
	"github.com/agentura/agentura/internal/testkit/thirdparty"
)

func TestNewestRevisionWithAnAgent(t *testing.T) {
	a := testagent.Start(t, testagent.Options{})
	s := connect(t, a, sessionOptions{})
	if got := s.cs.InitializeResult().ProtocolVersion; got != "2026-07-28" {
		t.Fatalf("negotiated %s with an agentura agent, want 2026-07-28", got)
	}
	s.attach(t, "a.txt", []byte("first"))
	s.attach(t, "b.txt", []byte("second"))
	s.mustCall(t, "echo_file", `{"source": "a.txt"}`)
	s.mustCall(t, "echo_file", `{"source": "b.txt"}`)
	ctx := context.Background()
	res, err := s.cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range res.Resources {
		names = append(names, r.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"echo-a.txt", "echo-b.txt"}) {
		t.Errorf("the host lists %v, want its two outputs (the middleware carries the owner handle)", names)
	}
	other := connect(t, a, sessionOptions{})
	if res, err := other.cs.ListResources(ctx, nil); err != nil || len(res.Resources) != 0 {
		t.Errorf("another host lists %+v (%v), want nothing", res, err)
	}
}

func TestRevisionWithThirdPartyServers(t *testing.T) {
	for _, tc := range []struct {
		name      string
		stateless bool
		revisions []string
	}{
		{"only 2025-11-25", false, []string{"2025-11-25"}},
		{"only 2026-07-28", true, []string{"2026-07-28"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			endpoint := thirdparty.Start(t, tc.stateless, tc.revisions...).Endpoint
			base, _ := client.BaseURLFromEndpoint(endpoint)
			s := connect(t, &testagent.Agent{Base: base, Endpoint: endpoint}, sessionOptions{})
			if got := s.cs.InitializeResult().ProtocolVersion; got != tc.revisions[0] {
				t.Fatalf("negotiated %s, want %s", got, tc.revisions[0])
			}
			s.attach(t, "note.txt", []byte("hello"))
			res := s.mustCall(t, "size", `{"source": "note.txt"}`)
			if text := modelText(res); !strings.Contains(text, "got data:text/plain") {
				t.Errorf("the server got %q, want the file inline", text)
			}
		})
	}
}
