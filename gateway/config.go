package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// DefaultOut is the folder produced files are saved in unless told otherwise.
const DefaultOut = "agentura-files"

// Agent is one agent the gateway fronts: an MCP endpoint over streamable
// HTTP (URL) or a command speaking MCP on stdio (Command).
type Agent struct {
	// Name names the agent in tool names that clash ("<name>_<tool>") and in
	// messages; empty means the name the agent gives itself on initialize.
	Name string `json:"name,omitempty"`
	// URL is the MCP endpoint, http://host:8002/mcp; a bare base gets /mcp.
	// An A2A agent's card URL (…/.well-known/agent-card.json) or A2A
	// endpoint (…/a2a) makes it an A2A agent, as does a URL that answers,
	// but not as an MCP endpoint, whose base serves a card: each skill is
	// then a tool (a2a.go).
	URL string `json:"url,omitempty"`
	// Command is a stdio agent's command and arguments.
	Command []string `json:"command,omitempty"`
	// Env is added to a stdio agent's environment ("KEY=value").
	Env []string `json:"env,omitempty"`
	// BaseURL is the agent's HTTP base for /uploads and /files/: derived from
	// URL when empty; a stdio agent needs it for files over the inline limit
	// and for produced files it serves over HTTP.
	BaseURL string `json:"base_url,omitempty"`
	// Token is a bearer token (agents with AGENT_AUTH=jwt); empty means
	// Config.Token.
	Token string `json:"token,omitempty"`
	// OAuthClientID is the gateway's client at the identity provider of an
	// agent with AGENT_AUTH=oauth; empty means Config.OAuthClientID.
	OAuthClientID string `json:"oauth_client_id,omitempty"`
	// Headers are sent with every MCP request to URL (not with downloads).
	Headers map[string]string `json:"headers,omitempty"`
	// AllowHosts are hosts besides the agent's origin that its produced
	// files may be fetched from.
	AllowHosts []string `json:"allow_hosts,omitempty"`
	// ProtocolVersion is the MCP revision to ask the agent for; empty means
	// the newest the gateway speaks (2026-07-28, without a session),
	// falling back to what the agent answers. "2025-11-25" asks for a
	// session through initialize.
	ProtocolVersion string `json:"protocol_version,omitempty"`
}

// Config configures a Gateway. Agents is required; the rest has defaults.
type Config struct {
	// Agents are the agents whose tools the gateway shows.
	Agents []Agent `json:"agents"`
	// Roots are the folders a file may be named under; empty means the
	// current directory.
	Roots []string `json:"roots,omitempty"`
	// Out is where produced files are saved; empty means DefaultOut.
	Out string `json:"out,omitempty"`
	// Token is the bearer token of agents that give none of their own.
	Token string `json:"token,omitempty"`
	// OAuthClientID signs the gateway in to agents with AGENT_AUTH=oauth
	// (a public client for the redirect http://127.0.0.1/callback at their
	// identity provider): authorization code with PKCE in the browser.
	OAuthClientID string `json:"oauth_client_id,omitempty"`
	// TokenFile keeps the OAuth tokens (0600); empty means
	// client.DefaultTokenFile().
	TokenFile string `json:"token_file,omitempty"`
	// OpenURL shows a sign-in page to the user; nil prints it on stderr and
	// opens the desktop's browser (client.ShowSignIn).
	OpenURL openURL `json:"-"`
	// InlineMaxBytes is the largest file sent inline; larger ones go
	// through the agent's /uploads. As in client.Config, 0 means the
	// default (10 MiB) and a negative value sends every file through
	// /uploads; in a configuration file (and as --inline-max) 0 means
	// every file through /uploads, and leaving it out the default.
	InlineMaxBytes int64 `json:"inline_max_bytes,omitempty"`
	// MaxDownloadBytes caps each produced file (client.Config).
	MaxDownloadBytes int64 `json:"max_download_bytes,omitempty"`
	// MaxMessageBytes caps each JSON-RPC message an agent sends (its
	// answer to tools/list, a tool's result): 0 means
	// client.DefaultMaxMessageBytes (32 MiB). An answer over it fails the
	// request naming the agent, and the gateway carries on
	// (client.LimitMessages).
	MaxMessageBytes int64 `json:"max_message_bytes,omitempty"`
	// AllowFileURIs passes a data: URI or an http(s) URL the model wrote
	// in a file position on to the agent as it is. By default it is
	// refused (client.Config.RefuseLiterals): the model names files, and
	// neither pastes their bytes nor points an agent at a URL.
	AllowFileURIs bool `json:"allow_file_uris,omitempty"`
	// Logger logs what the gateway does; nil discards. With stdio, it must
	// not write to stdout.
	Logger *slog.Logger `json:"-"`

	// connectTimeout bounds one attempt to open a session with an agent;
	// 0 means connectTimeout (20 s). Tests make it short
	// (export_test.go).
	connectTimeout time.Duration
}

// LoadConfig reads a configuration file, JSON or YAML (by extension: .yaml
// and .yml are YAML, anything else is tried as JSON, then YAML). Relative
// roots and out are taken relative to the file's folder.
func LoadConfig(path string) (Config, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("read the gateway configuration: %w", err)
	}
	ext := strings.ToLower(filepath.Ext(path))
	if ext == ".yaml" || ext == ".yml" || (ext != ".json" && !json.Valid(raw)) {
		// YAML to generic values, then through JSON, so both forms share
		// the field names and the strict check.
		var v any
		if err := yaml.Unmarshal(raw, &v); err != nil {
			return Config{}, fmt.Errorf("%s: not YAML: %w", path, err)
		}
		if raw, err = json.Marshal(yamlDates(v)); err != nil {
			return Config{}, fmt.Errorf("%s: %w", path, err)
		}
	}
	// The file's inline_max_bytes means what --inline-max means: 0 is every
	// file through /uploads, absent the default.
	var file struct {
		Config
		InlineMaxBytes *int64 `json:"inline_max_bytes,omitempty"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&file); err != nil {
		return Config{}, fmt.Errorf("%s: %w (fields: agents[{name, url, command, env, base_url, token, headers, allow_hosts, protocol_version}], roots, out, token, inline_max_bytes, max_download_bytes, max_message_bytes, allow_file_uris)", path, err)
	}
	cfg := file.Config
	if cfg.MaxMessageBytes < 0 {
		return Config{}, fmt.Errorf("%s: max_message_bytes %d: give a size in bytes (leave it out for 32 MiB)", path, cfg.MaxMessageBytes)
	}
	if n := file.InlineMaxBytes; n != nil {
		if *n < 0 {
			return Config{}, fmt.Errorf("%s: inline_max_bytes %d: give a size in bytes, or 0 to send every file through the agent's /uploads", path, *n)
		}
		cfg.InlineMaxBytes = InlineMax(*n)
	}
	dir := filepath.Dir(path)
	for i, r := range cfg.Roots {
		if !filepath.IsAbs(r) {
			cfg.Roots[i] = filepath.Join(dir, r)
		}
	}
	if cfg.Out != "" && !filepath.IsAbs(cfg.Out) {
		cfg.Out = filepath.Join(dir, cfg.Out)
	}
	return cfg, nil
}

// yamlDates turns the dates YAML reads from unquoted values such as
// protocol_version: 2025-11-25 back into the text that was written.
func yamlDates(v any) any {
	switch x := v.(type) {
	case time.Time:
		if x.Equal(x.Truncate(24*time.Hour)) && x.Location() == time.UTC {
			return x.Format(time.DateOnly)
		}
		return x.Format(time.RFC3339Nano)
	case map[string]any:
		for k, c := range x {
			x[k] = yamlDates(c)
		}
	case []any:
		for i, c := range x {
			x[i] = yamlDates(c)
		}
	}
	return v
}

// InlineMax turns an inline limit as a person gives it (--inline-max,
// inline_max_bytes), where 0 means every file through /uploads, into
// Config.InlineMaxBytes, where that is a negative value.
func InlineMax(n int64) int64 {
	if n == 0 {
		return -1
	}
	return n
}

// check validates the agents and fills in endpoints.
func (c *Config) check() error {
	if len(c.Agents) == 0 {
		return errors.New("gateway: no agents: name at least one MCP URL (http://localhost:8001/mcp) or a stdio command in the configuration file")
	}
	for i := range c.Agents {
		a := &c.Agents[i]
		switch {
		case a.URL != "" && len(a.Command) > 0:
			return fmt.Errorf("gateway: agent %d (%s) has both a url and a command: give one", i+1, a.Name)
		case a.URL == "" && len(a.Command) == 0:
			return fmt.Errorf("gateway: agent %d (%s) has neither a url nor a command", i+1, a.Name)
		case a.URL != "":
			u, err := url.Parse(a.URL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return fmt.Errorf("gateway: agent %q: %q is not an MCP URL such as http://localhost:8001/mcp", a.Name, a.URL)
			}
			if u.Path == "" || u.Path == "/" {
				u.Path = "/mcp"
			}
			a.URL = u.String()
		}
	}
	return nil
}
