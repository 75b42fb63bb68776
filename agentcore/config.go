package agentcore

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentura/agentura/agentcore/internal/callers"
	"github.com/agentura/agentura/agentcore/internal/httpguard"
	"github.com/agentura/agentura/agentcore/internal/ops"
	"github.com/agentura/agentura/agentcore/internal/tasks"
	"github.com/agentura/agentura/agentcore/internal/urlfetch"
	"github.com/agentura/agentura/cleanup"
	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/internal/lib/filehttp"
	"github.com/agentura/agentura/internal/lib/revocation"
	"github.com/agentura/agentura/settings"
)

// Config holds every setting of a Service; a zero field means its default.
type Config struct {
	Addr, PublicURL, DataDir          string            // AGENT_ADDR, AGENT_PUBLIC_URL, AGENT_DATA_DIR
	SigningKeys                       []string          // AGENT_SIGNING_KEY
	SigningKeyFile                    string            // AGENT_SIGNING_KEY_FILE
	URLTTL, OutputTTL, StagingTTL     time.Duration     // AGENT_URL_TTL, AGENT_OUTPUT_TTL, AGENT_STAGING_TTL
	CleanupSchedule                   string            // AGENT_CLEANUP_SCHEDULE
	MaxUploadBytes, MaxCallInputBytes int64             // AGENT_MAX_UPLOAD_BYTES, AGENT_MAX_CALL_INPUT_BYTES (0: 4 × the first)
	EmbedMaxBytes, ResourceMaxBytes   int64             // AGENT_EMBED_MAX_BYTES (negative: never embed; the variable says 0), AGENT_RESOURCE_MAX_BYTES
	InputRoots, FetchAllowHosts       []string          // AGENT_INPUT_ROOTS, AGENT_FETCH_ALLOW_HOSTS
	PeerURLs                          []PeerURL         // AGENT_PEER_URLS
	FetchTimeout, ShutdownTimeout     time.Duration     // AGENT_FETCH_TIMEOUT, AGENT_SHUTDOWN_TIMEOUT
	StorageURL, AccelRedirect         string            // AGENT_STORAGE_URL, AGENT_ACCEL_REDIRECT
	S3Redirect, MCPStateless          bool              // AGENT_S3_REDIRECT, AGENT_MCP_STATELESS
	UIDomain                          string            // AGENT_UI_DOMAIN: _meta.ui.domain of every view ("" none; "claude" computed)
	NoAttachTool                      bool              // AGENT_ATTACH_TOOL=false: AddAttachTool adds nothing
	LogLevel                          string            // AGENT_LOG_LEVEL
	TraceFileNames                    bool              // AGENT_TRACE_FILE_NAMES: spans name the files of a call
	MaxRevocations                    int               // AGENT_MAX_REVOCATIONS
	TrustedProxies, AllowedOrigins    []string          // AGENT_TRUSTED_PROXIES, AGENT_ALLOWED_ORIGINS (empty: same origin only)
	callers.Access                                      // AGENT_AUTH, AGENT_AUTH_JWT_*, AGENT_OAUTH_*
	tasks.Policy                                        // AGENT_TASK_LEASE, AGENT_TASKS_PER_OWNER, AGENT_A2A_STATUS_INTERVAL
	ops.Limits                                          // call slots, quota, rates, timeouts, connections: AGENT_MAX_CONCURRENT_CALLS ...
	Store                             fileserve.Store   // the program's own store, instead of StorageURL's (which must then be unset)
	StorageEnv                        map[string]string // the storage backends' variables (AWS_* of s3://), as LoadConfig read them
}

// Defaults of the settings.
const (
	defaultListenAddr       = ":8080"
	defaultURLTTL           = filehttp.DefaultURLTTL
	defaultOutputTTL        = 24 * time.Hour
	defaultStagingTTL       = time.Hour
	defaultCleanupSchedule  = cleanup.DefaultSchedule
	defaultMaxUploadBytes   = filehttp.DefaultMaxUploadBytes
	defaultEmbedMaxBytes    = 64 << 10
	defaultResourceMaxBytes = 8 << 20
	defaultFetchTimeout     = 2 * time.Minute
	defaultShutdownTimeout  = 30 * time.Second
	// defaultCallInputFactor: AGENT_MAX_CALL_INPUT_BYTES defaults to this
	// many times AGENT_MAX_UPLOAD_BYTES.
	defaultCallInputFactor = 4
)

// Settings declares the framework's settings as LoadConfig reads them.
func (c *Config) Settings(agent, defaultAddr string) settings.List {
	defaultAddr = cmp.Or(defaultAddr, defaultListenAddr)
	return slices.Concat(settings.List{
		settings.String(&c.Addr, "AGENT_ADDR", defaultAddr, "listen address").
			Shown("per agent (`:8000` for the example)"),
		settings.String(&c.PublicURL, "AGENT_PUBLIC_URL", "", "base of every download URL handed out").
			Shown("`http://localhost:<port>`"),
		settings.String(&c.DataDir, "AGENT_DATA_DIR", filepath.Join("data", agent), "files and the generated key").
			Shown("`./data/<agent>`"),
		settings.Strings(&c.SigningKeys, "AGENT_SIGNING_KEY", ",", "URL signing secrets, comma-separated, ≥ 32 bytes each: "+
			"the first signs, all verify (rotate by prepending a new key, drop the old once its URLs expired)").
			Secret().Shown("generated once into the data folder"),
		settings.String(&c.SigningKeyFile, "AGENT_SIGNING_KEY_FILE", "", "the same, one secret per line"),
		settings.Duration(&c.URLTTL, "AGENT_URL_TTL", defaultURLTTL, "lifetime of a signed URL"),
		settings.Duration(&c.OutputTTL, "AGENT_OUTPUT_TTL", defaultOutputTTL, "age after which outputs are deleted").
			Row("age after which outputs / staged uploads are deleted"),
		settings.Duration(&c.StagingTTL, "AGENT_STAGING_TTL", defaultStagingTTL, "age after which staged uploads are deleted").
			JoinRow(),
		settings.String(&c.CleanupSchedule, "AGENT_CLEANUP_SCHEDULE", defaultCleanupSchedule,
			"cron spec of the sweeper (it also runs at start-up)").Check(cleanup.CheckSchedule),
		settings.Size(&c.MaxUploadBytes, "AGENT_MAX_UPLOAD_BYTES", defaultMaxUploadBytes,
			"cap on any single input, however it arrives"),
		settings.Size(&c.MaxCallInputBytes, "AGENT_MAX_CALL_INPUT_BYTES", 0,
			"cap on all file inputs of one tool call together (each distinct input is resolved once per call, however often it is listed)").
			Shown("4 × `AGENT_MAX_UPLOAD_BYTES`"),
		settings.Size(&c.EmbedMaxBytes, "AGENT_EMBED_MAX_BYTES", defaultEmbedMaxBytes,
			"outputs up to this size are also embedded in the MCP result; `0` = never").ZeroMeansOff(),
		settings.Size(&c.ResourceMaxBytes, "AGENT_RESOURCE_MAX_BYTES", defaultResourceMaxBytes,
			"largest produced file MCP resources/read serves; larger ones by their download URL only").Positive(),
		settings.Strings(&c.InputRoots, "AGENT_INPUT_ROOTS", ":", "colon-separated folders whose files may be named by path; "+
			"none may overlap the data or storage folder or hold the key file").Shown("empty: path inputs refused"),
		settings.Strings(&c.FetchAllowHosts, "AGENT_FETCH_ALLOW_HOSTS", ",",
			"hosts (`host` or `host:port`) fetched although private or loopback").Shown("empty"),
		settings.Strings(&c.TrustedProxies, "AGENT_TRUSTED_PROXIES", ",", "comma-separated IPs, CIDR prefixes or host names "+
			"(looked up in the background at start and every 30 s, never on a request's path) of proxies whose "+
			"`X-Forwarded-For` is believed; from anyone else it is ignored").Shown("empty: none"),
		settings.Duration(&c.FetchTimeout, "AGENT_FETCH_TIMEOUT", defaultFetchTimeout, "whole-fetch timeout of a URL input"),
		settings.Of(&c.PeerURLs, "AGENT_PEER_URLS", nil, "`PUBLIC=INTERNAL` base URLs of peer agents, comma-separated "+
			"(`http://localhost:8001=http://ocr-agent:8001`): a URL input under a peer's public base is fetched from its "+
			"internal one, through a client of its own that alone may dial that host:port (named directly, the internal "+
			"URL is still refused by the SSRF guard)", urlfetch.ParsePeerURLs, formatPeerURLs).Shown("empty"),
	}, c.Access.Settings(), settings.List{
		settings.Strings(&c.AllowedOrigins, "AGENT_ALLOWED_ORIGINS", ",", "comma-separated browser origins (`https://app.example.com`) "+
			"allowed to POST to `/a2a` and `/uploads` cross-site (a browser request whose `Origin` is neither the agent itself nor listed "+
			"gets 403). Whatever it says, an agent listening on a loopback address answers `/a2a`, `/uploads` and the agent card only "+
			"for a loopback `Host` or `AGENT_PUBLIC_URL`'s host (DNS rebinding), as the go-sdk does for `/mcp`").Shown("empty: same origin only"),
		settings.String(&c.StorageURL, "AGENT_STORAGE_URL", "", "where files live: `file:///data` (local disk, served with "+
			"sendfile), or `s3://<bucket>[/<prefix>]?endpoint=<host:port>&region=…&secure=…&path_style=…&public_endpoint=…&part_size=…` "+
			"for S3-compatible storage shared by replicas (see [Scaling out](deployment.md#scaling-out))").Shown("`file://<AGENT_DATA_DIR>`"),
		settings.Bool(&c.S3Redirect, "AGENT_S3_REDIRECT", "with `s3://` storage: a GET of `/files/…` whose token is valid "+
			"answers `302` to a presigned S3 URL (valid ≤ 5 min, never past the token), so bytes flow from the store to the "+
			"client directly; HEAD is still answered by the agent"),
		settings.String(&c.AccelRedirect, "AGENT_ACCEL_REDIRECT", "", "with disk storage behind nginx: the path of nginx's internal "+
			"location serving the data folder (such as `/internal-files/`); a download whose token, owner and expiry check out is "+
			"answered with its headers and `X-Accel-Redirect`, and nginx sends the bytes (docs/deployment.md); empty: the agent sends them"),
		settings.Bool(&c.MCPStateless, "AGENT_MCP_STATELESS", "serve the older MCP revisions (initialize-based) statelessly too, for load balancers without sticky sessions; 2026-07-28 is served statelessly either way"),
		settings.String(&c.UIDomain, "AGENT_UI_DOMAIN", "", "the dedicated origin MCP Apps hosts are asked to show the views on "+
			"(`_meta.ui.domain` of every view): a host name in the form the host expects, or `claude` for Claude's "+
			"(the first 32 hex digits of the SHA-256 of `<AGENT_PUBLIC_URL>/mcp`, then `.claudemcpcontent.com`: right only for a "+
			"connector added with exactly that URL); a value the host does not expect stops it showing the views ([apps.md](apps.md#hosts))").
			Check(checkUIDomain).Shown("empty: none declared"),
		settings.Of(&c.NoAttachTool, "AGENT_ATTACH_TOOL", false, "offer `attach_file` and its upload view (drag-and-drop) in "+
			"the agents that add it (the OCR and composer agents do); `false` leaves it out", parseOn, formatOn),
		settings.Duration(&c.ShutdownTimeout, "AGENT_SHUTDOWN_TIMEOUT", defaultShutdownTimeout,
			"how long SIGTERM waits for tool calls and downloads in flight"),
		settings.String(&c.LogLevel, "AGENT_LOG_LEVEL", "info", "`debug`, `info`, `warn` or `error`; `debug` logs every request with its id").Check(checkLogLevel),
		settings.Bool(&c.TraceFileNames, "AGENT_TRACE_FILE_NAMES", "with tracing on (`OTEL_*`, [observability.md](observability.md)): "+
			"the spans of a call's file inputs and outputs carry the files' cleaned names (`agentura.file.name`, `agentura.file.names`), "+
			"and error texts in spans keep URL paths and paths; off, no span holds a file's name"),
	}, c.Policy.Settings(), settings.List{
		settings.Int(&c.MaxRevocations, "AGENT_MAX_REVOCATIONS", revocation.DefaultMaxPerOwner,
			"revoked download URLs (`POST /files/revoke`) one owner may have whose tokens have not expired yet, over every replica "+
				"sharing the store (for files of the anonymous owner, when there is no authentication: one client address, an IPv4 "+
				"address or an IPv6 /64, and all addresses together 4 times this); beyond it a revocation answers `429`, saying to "+
				"delete the file or wait").Positive(),
	}, c.Limits.Settings())
}

// parseOn reads a boolean setting stored inverted (a field No… whose zero
// value, the default, means on).
func parseOn(s string) (bool, error) {
	on, err := strconv.ParseBool(s)
	if err != nil {
		return false, errors.New("not a boolean (true or false)")
	}
	return !on, nil
}

// formatOn writes an inverted boolean setting as its variable says it.
func formatOn(off bool) string { return strconv.FormatBool(!off) }

// ClaudeUIDomain is the value of AGENT_UI_DOMAIN that stands for the
// domain Claude computes for a connector at <AGENT_PUBLIC_URL>/mcp.
const ClaudeUIDomain = "claude"

// uiDomain is the _meta.ui.domain the views declare for the setting v of
// an agent at public: "" for none, Claude's for ClaudeUIDomain, else v.
func uiDomain(v, public string) string {
	if v != ClaudeUIDomain {
		return v
	}
	sum := sha256.Sum256([]byte(public + "/mcp"))
	return hex.EncodeToString(sum[:])[:32] + ".claudemcpcontent.com"
}

// checkUIDomain accepts a host name (what the extension's hosts expect in
// _meta.ui.domain: Claude a hash under claudemcpcontent.com, ChatGPT a
// name under oaiusercontent.com) or ClaudeUIDomain.
func checkUIDomain(s string) error {
	if s == "" || s == ClaudeUIDomain {
		return nil
	}
	if strings.Contains(s, "://") || strings.ContainsAny(s, "/:?#@ ") {
		return errors.New("give the host name alone, without scheme, port or path (such as " +
			"a904794854a047f6a904794854a047f6.claudemcpcontent.com), or claude for Claude's; " +
			"Claude refuses an origin such as https://views.example.com and then shows no view")
	}
	if len(s) > 253 || !strings.Contains(s, ".") {
		return errors.New("not a host name with a domain (such as views.example.com)")
	}
	for label := range strings.SplitSeq(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return fmt.Errorf("not a host name: label %q", label)
		}
		if strings.Trim(label, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
			return fmt.Errorf("not a host name: %q (lower-case letters, digits, hyphens and dots)", label)
		}
	}
	return nil
}

// checkLogLevel accepts what slog.Level reads.
func checkLogLevel(s string) error {
	var level slog.Level
	if level.UnmarshalText([]byte(s)) != nil {
		return errors.New("use debug, info, warn or error")
	}
	return nil
}

// PeerURL is one PUBLIC=INTERNAL pair of AGENT_PEER_URLS.
type PeerURL = urlfetch.PeerURL

// formatPeerURLs writes peers the way AGENT_PEER_URLS says them.
func formatPeerURLs(peers []PeerURL) string {
	pairs := make([]string, len(peers))
	for i, p := range peers {
		pairs[i] = p.Public + "=" + p.Internal
	}
	return strings.Join(pairs, ",")
}

// ConfigError is a bad setting; Var names the environment variable.
type ConfigError = settings.Error

// LoadConfig reads the AGENT_* variables into a Config for the agent called
// agent, listening by default on defaultAddr ("" for ":8080").
func LoadConfig(agent, defaultAddr string) (Config, error) {
	return ConfigFromLookup(os.LookupEnv, agent, defaultAddr)
}

// ConfigFromLookup is LoadConfig reading variables through lookup.
func ConfigFromLookup(lookup func(string) (string, bool), agent, defaultAddr string) (Config, error) {
	var c Config
	if err := c.Settings(agent, defaultAddr).Load(lookup); err != nil {
		return c, err
	}
	for _, v := range fileserve.StoreSettings() {
		if val, ok := lookup(v.Env); ok {
			if c.StorageEnv == nil {
				c.StorageEnv = map[string]string{}
			}
			c.StorageEnv[v.Env] = val
		}
	}
	return c, c.normalize(agent, defaultAddr)
}

// normalize fills the defaults of the agent called agent listening by
// default on defaultAddr, checks every value and those that depend on each
// other, and makes the folders absolute. Slices are copied first: what the
// caller handed in is never changed.
func (c *Config) normalize(agent, defaultAddr string) error {
	for _, list := range []*[]string{&c.SigningKeys, &c.InputRoots, &c.FetchAllowHosts, &c.AllowedOrigins, &c.TrustedProxies} {
		*list = slices.Clone(*list)
	}
	c.PeerURLs = slices.Clone(c.PeerURLs)
	vars := c.Settings(agent, defaultAddr)
	vars.Defaults()
	var errs []error
	if err := vars.Check(); err != nil {
		errs = append(errs, err)
	}
	bad := func(name, value string, err error) {
		errs = append(errs, &ConfigError{Var: name, Value: value, Err: err})
	}
	if err := urlfetch.CheckPeerURLs(c.PeerURLs); err != nil {
		bad("AGENT_PEER_URLS", formatPeerURLs(c.PeerURLs), err)
	}
	if _, err := httpguard.ParseTrustedProxies(c.TrustedProxies); err != nil {
		bad("AGENT_TRUSTED_PROXIES", strings.Join(c.TrustedProxies, ","), err)
	}
	port := "8080"
	if i := strings.LastIndexByte(c.Addr, ':'); i >= 0 {
		port = c.Addr[i+1:]
		if _, err := strconv.Atoi(port); err != nil {
			bad("AGENT_ADDR", c.Addr, errors.New("not host:port"))
		}
	} else {
		bad("AGENT_ADDR", c.Addr, errors.New("not host:port (for example :8001)"))
	}
	c.PublicURL = strings.TrimRight(cmp.Or(c.PublicURL, "http://localhost:"+port), "/")
	if u, err := url.Parse(c.PublicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		bad("AGENT_PUBLIC_URL", c.PublicURL, errors.New("must be an absolute http(s) URL such as https://agent.example.com"))
	}
	c.StorageURL = cmp.Or(c.StorageURL, "file://"+c.DataDir)
	for i, r := range c.InputRoots {
		abs, err := filepath.Abs(r)
		if err == nil {
			abs, err = filepath.EvalSymlinks(abs)
		}
		if err == nil {
			var st os.FileInfo
			if st, err = os.Stat(abs); err == nil && !st.IsDir() {
				err = errors.New("not a folder")
			}
		}
		if err != nil {
			bad("AGENT_INPUT_ROOTS", r, fmt.Errorf("input root is unusable: %w", err))
			continue
		}
		c.InputRoots[i] = abs
	}
	for _, root := range c.InputRoots {
		for _, private := range c.privateDirs() {
			if inside(root, private) || inside(private, root) {
				bad("AGENT_INPUT_ROOTS", root, fmt.Errorf("input root overlaps the agent's own folder %s (keys and every owner's files); name a folder that neither contains it nor lies inside it", private))
				break
			}
		}
		if c.SigningKeyFile != "" {
			if key, err := resolvePath(c.SigningKeyFile); err == nil && inside(key, root) {
				bad("AGENT_INPUT_ROOTS", root, fmt.Errorf("input root contains the signing key file %s; keep keys outside every input root", key))
			}
		}
	}
	c.MaxCallInputBytes = cmp.Or(c.MaxCallInputBytes, defaultCallInputFactor*c.MaxUploadBytes)
	for _, o := range c.AllowedOrigins {
		if u, err := url.Parse(o); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
			bad("AGENT_ALLOWED_ORIGINS", o, errors.New("each origin is scheme://host[:port], e.g. https://app.example.com"))
		}
	}
	if err := c.Access.Check(); err != nil {
		errs = append(errs, err)
	}
	if err := c.checkStorage(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// privateDirs are the folders no input root may overlap: the data folder
// (key file) and the storage folder, as they will be once created.
func (c *Config) privateDirs() []string {
	dirs := []string{c.DataDir}
	if d, err := c.storageDir(); err == nil {
		dirs = append(dirs, d)
	}
	var out []string
	for _, d := range dirs {
		if p, err := resolvePath(d); err == nil && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// resolvePath makes p absolute with every symbolic link of its existing part
// resolved, so that a folder not created yet compares truly with resolved
// input roots (a data folder under /var/run is under /run).
func resolvePath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	rest := ""
	for dir := abs; ; dir = filepath.Dir(dir) {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(real, rest), nil
		}
		if dir == filepath.Dir(dir) {
			return abs, nil
		}
		rest = filepath.Join(filepath.Base(dir), rest)
	}
}

// inside reports whether path x is y or lies below it.
func inside(x, y string) bool {
	rel, err := filepath.Rel(y, x)
	return err == nil && (rel == "." || filepath.IsLocal(rel))
}

// storageDir returns the folder of the store's files on local disk: the
// root of Store when it is a fileserve.LocalRoot, or the folder of a file://
// storage URL.
func (c *Config) storageDir() (string, error) {
	if c.Store != nil {
		if lr, ok := fileserve.As[fileserve.LocalRoot](c.Store); ok {
			return lr.Root(), nil
		}
		return "", errors.New("the store keeps no files on local disk")
	}
	rest, ok := strings.CutPrefix(c.StorageURL, "file://")
	if !ok {
		return "", errors.New("use file://<folder> (local disk) or s3://<bucket>?endpoint=<host:port> (S3-compatible storage)")
	}
	if rest == "" {
		return "", errors.New("file:// needs a folder, e.g. file:///data")
	}
	return rest, nil
}
