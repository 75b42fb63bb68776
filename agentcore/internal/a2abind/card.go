package a2abind

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"
	"github.com/agentura/agentura/agentcore/internal/calls"
	"github.com/agentura/agentura/transfer"
	"github.com/google/jsonschema-go/jsonschema"
)

// a2aProtocolVersion is the A2A protocol version agents speak (a2a-go v0.3).
const a2aProtocolVersion = "0.3.0"

// Card returns the agent's A2A card: one skill per registered tool, in
// registration order, with its description, input and output MIME types
// and an example; the JSON-RPC endpoint at <AGENT_PUBLIC_URL>/a2a; streaming;
// the extensions of the uploads endpoint and of the skills' input schemas;
// and, with AGENT_AUTH=jwt or oauth, its security schemes.
func (s *Server) Card() *a2a.AgentCard {
	base := s.PublicURL
	card := &a2a.AgentCard{
		Name:               s.Name,
		Description:        s.Describe(),
		URL:                base + transfer.A2APath,
		PreferredTransport: a2a.TransportProtocolJSONRPC,
		ProtocolVersion:    a2aProtocolVersion,
		Version:            cmp.Or(s.Version, "0"),
		Capabilities: a2a.AgentCapabilities{
			Streaming: true,
			Extensions: []a2a.AgentExtension{{
				URI:         transfer.A2AUploadsExtension,
				Description: "Stage a large input with POST (multipart field \"file\", or a raw body with X-Filename) and send the signed URL it answers as a file part's uri.",
				Params:      map[string]any{"url": base + "/uploads"},
			}},
		},
		DefaultInputModes:  []string{"application/json"},
		DefaultOutputModes: []string{"text/plain", "application/json"},
		Skills:             []a2a.AgentSkill{},
	}
	anyFiles := false
	schemas := map[string]any{}
	for _, t := range s.Runner.Tools() {
		skill := skillOf(t)
		card.Skills = append(card.Skills, skill)
		anyFiles = anyFiles || len(t.FileParams) > 0
		if t.InputSchema != nil {
			schemas[t.Name] = t.InputSchema
		}
	}
	if len(schemas) > 0 {
		// The schema each tool publishes over MCP: a host shows a skill's
		// real parameters, and its files by name (docs/a2a.md).
		card.Capabilities.Extensions = append(card.Capabilities.Extensions, a2a.AgentExtension{
			URI:         transfer.A2ASkillSchemasExtension,
			Description: "The JSON schema of each skill's arguments (the data part's \"arguments\"), by skill id; file parameters are marked x-file and x-mcp-file: send each file as a file part whose metadata \"" + transfer.A2AKeyFileParam + "\" names the parameter.",
			Params:      schemas,
		})
	}
	if anyFiles {
		card.DefaultInputModes = append(card.DefaultInputModes, "*/*")
		card.DefaultOutputModes = append(card.DefaultOutputModes, "*/*")
	}
	s.Callers.CardSecurity(card)
	return card
}

// Describe is the agent in a line: its instructions, else its title or name.
func (s *Server) Describe() string {
	for _, d := range []string{s.Instructions, s.Title} {
		if d != "" {
			return d
		}
	}
	return s.Name
}

// skillOf is the A2A skill of a tool.
func skillOf(t calls.Tool) a2a.AgentSkill {
	skill := a2a.AgentSkill{
		ID:          t.Name,
		Name:        cmp.Or(t.Title, t.Name),
		Description: t.Description,
		Tags:        []string{},
		InputModes:  []string{"application/json"},
		OutputModes: []string{"text/plain", "application/json"},
		Examples:    t.Examples,
	}
	if len(t.FileParams) > 0 {
		skill.Tags = append(skill.Tags, "files")
		in := t.InputTypes
		if len(in) == 0 {
			in = []string{"*/*"}
		}
		skill.InputModes = append(skill.InputModes, in...)
	}
	if t.ReadOnly {
		skill.Tags = append(skill.Tags, "read-only")
	}
	out := t.OutputTypes
	if out == nil { // a read-only tool may still hand out files (OCR's searchable PDF)
		out = []string{"*/*"}
	}
	skill.OutputModes = append(skill.OutputModes, out...)
	if len(skill.Examples) == 0 {
		skill.Examples = []string{exampleOf(t)}
	}
	return skill
}

// exampleOf writes an example request for a tool: the data part naming it,
// with placeholders for its required arguments, and the file parts it takes.
func exampleOf(t calls.Tool) string {
	args := map[string]any{}
	filled := ""
	if len(t.FileParams) > 0 {
		filled, _, _ = strings.Cut(t.FileParams[0], "[]")
	}
	if t.InputSchema != nil {
		for _, name := range t.InputSchema.Required {
			if name == filled {
				continue
			}
			args[name] = placeholder(name, t.InputSchema.Properties[name])
		}
	}
	data, _ := json.Marshal(struct {
		Skill     string         `json:"skill"`
		Arguments map[string]any `json:"arguments"`
	}{t.Name, args})
	ex := `{"kind":"data","data":` + string(data) + `}`
	if filled != "" {
		count := "one file part"
		if p := propertyOf(t.InputSchema, filled); p != nil && p.Type == "array" {
			count = "one or more file parts"
		}
		ex += fmt.Sprintf(` and %s {"kind":"file","file":{"name","mimeType","bytes"|"uri"}} for %q`, count, filled)
	}
	return ex
}

func placeholder(name string, p *jsonschema.Schema) any {
	if p == nil {
		return "<" + name + ">"
	}
	if len(p.Enum) > 0 {
		return p.Enum[0]
	}
	switch p.Type {
	case "integer", "number":
		return 1
	case "boolean":
		return true
	case "array":
		return []any{}
	case "object":
		return map[string]any{}
	}
	return "<" + name + ">"
}

// CardHandler serves the card built at the time of the request, so tools
// registered after the handler was built appear too.
func (s *Server) CardHandler() http.Handler {
	return a2asrv.NewAgentCardHandler(a2asrv.AgentCardProducerFn(func(context.Context) (*a2a.AgentCard, error) { return s.Card(), nil }))
}
