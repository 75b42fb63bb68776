package agentcore

import (
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

	"github.com/agentura/agentura/cleanup"
	"github.com/agentura/agentura/fileserve"
)

// Config holds every setting of a Service. LoadConfig fills it from the
// AGENT_* environment variables; zero fields take the defaults below.
type Config struct {
	Addr            string        // AGENT_ADDR: listen address, e.g. ":8001"
	PublicURL       string        // AGENT_PUBLIC_URL: base of download URLs; default http://localhost:<port>
	DataDir         string        // AGENT_DATA_DIR: outputs, staging, key file; default ./data/<agent>
	SigningKeys     []string      // AGENT_SIGNING_KEY (comma-separated) or AGENT_SIGNING_KEY_FILE; empty: generated and kept in DataDir
	SigningKeyFile  string        // AGENT_SIGNING_KEY_FILE
	URLTTL          time.Duration // AGENT_URL_TTL: lifetime of a signed URL; default 1h
	OutputTTL       time.Duration // AGENT_OUTPUT_TTL: outputs are deleted after; default 24h
	StagingTTL      time.Duration // AGENT_STAGING_TTL: staged inputs are deleted after; default 1h
	CleanupSchedule string        // AGENT_CLEANUP_SCHEDULE: cron spec of the sweeper; default "@every 10m"
	MaxUploadBytes  int64         // AGENT_MAX_UPLOAD_BYTES: cap on any input; default 50 MiB
	EmbedMaxBytes   int64         // AGENT_EMBED_MAX_BYTES: outputs up to this size are also embedded; 0: never (LoadConfig's default is 64 KiB)
	InputRoots      []string      // AGENT_INPUT_ROOTS: folders whose files may be named by path; empty: none
	FetchAllowHosts []string      // AGENT_FETCH_ALLOW_HOSTS: hosts fetched although private/loopback
	PeerURLs        []PeerURL     // AGENT_PEER_URLS: PUBLIC=INTERNAL base URLs of peer agents (peers.go)
	TrustedProxies  []string      // AGENT_TRUSTED_PROXIES: IPs, CIDR prefixes or host names of proxies whose X-Forwarded-For is believed (proxies.go); empty: none
	FetchTimeout    time.Duration // AGENT_FETCH_TIMEOUT: whole-fetch timeout of a URL input; default 2m
	Auth            string        // AGENT_AUTH: "none" or "jwt"
	AuthJWTSecret   string        // AGENT_AUTH_JWT_SECRET: HS256 secret for caller tokens
	AuthJWTKeyFile  string        // AGENT_AUTH_JWT_PUBLIC_KEY_FILE: PEM public key (RSA or Ed25519) for caller tokens
	StorageURL      string        // AGENT_STORAGE_URL: file://<dir> or s3://<bucket>?endpoint=host:port; default file://<DataDir>
	S3Redirect      bool          // AGENT_S3_REDIRECT: GET /files/ answers 302 to a short-lived presigned S3 URL; needs s3:// storage
	MCPStateless    bool          // AGENT_MCP_STATELESS: stateless streamable HTTP
	ShutdownTimeout time.Duration // AGENT_SHUTDOWN_TIMEOUT: how long SIGTERM waits for requests; default 30s
	LogLevel        string        // AGENT_LOG_LEVEL: debug, info, warn, error; default info

	// Credentials and default region of s3:// storage, from the usual AWS
	// variables AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN
	// and AWS_REGION.
	AWSAccessKeyID, AWSSecretAccessKey, AWSSessionToken, AWSRegion string

	A2AStatusInterval time.Duration // AGENT_A2A_STATUS_INTERVAL: how often a running A2A task says it is working (message/stream); default 5s
}

// Defaults of the settings.
const (
	DefaultURLTTL          = fileserve.DefaultURLTTL
	DefaultOutputTTL       = 24 * time.Hour
	DefaultStagingTTL      = time.Hour
	DefaultCleanupSchedule = cleanup.DefaultSchedule
	DefaultMaxUploadBytes  = fileserve.DefaultMaxUploadBytes
	DefaultEmbedMaxBytes   = 64 << 10
	DefaultFetchTimeout    = 2 * time.Minute
	DefaultShutdownTimeout = 30 * time.Second
)

// ConfigError is a bad setting; Var names the environment variable.
type ConfigError struct {
	Var   string
	Value string
	Err   error
}

// Error names the variable, its value and what is wrong with it.
func (e *ConfigError) Error() string {
	return fmt.Sprintf("%s=%q: %v", e.Var, e.Value, e.Err)
}

// Unwrap returns the underlying error.
func (e *ConfigError) Unwrap() error { return e.Err }

// LoadConfig reads the AGENT_* environment variables into a Config for the
// agent called agent (which names the default data folder) listening by
// default on defaultAddr. A bad value is a *ConfigError naming the variable.
func LoadConfig(agent, defaultAddr string) (Config, error) {
	return ConfigFromLookup(os.LookupEnv, agent, defaultAddr)
}

// ConfigFromLookup is LoadConfig reading variables through lookup.
func ConfigFromLookup(lookup func(string) (string, bool), agent, defaultAddr string) (Config, error) {
	var errs []error
	get := func(name string) (string, bool) {
		v, ok := lookup(name)
		v = strings.TrimSpace(v)
		return v, ok && v != ""
	}
	str := func(name, def string) string {
		if v, ok := get(name); ok {
			return v
		}
		return def
	}
	dur := func(name string, def time.Duration) time.Duration {
		v, ok := get(name)
		if !ok {
			return def
		}
		d, err := time.ParseDuration(v)
		if err == nil && d <= 0 {
			err = errors.New("must be positive")
		}
		if err != nil {
			errs = append(errs, &ConfigError{name, v, fmt.Errorf("not a duration (use Go syntax such as 90s, 10m, 24h): %w", err)})
		}
		return d
	}
	size := func(name string, def int64) int64 {
		v, ok := get(name)
		if !ok {
			return def
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			errs = append(errs, &ConfigError{name, v, errors.New("not a whole number of bytes")})
		}
		return n
	}
	boolean := func(name string) bool {
		v, ok := get(name)
		if !ok {
			return false
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			errs = append(errs, &ConfigError{name, v, errors.New("not a boolean (true or false)")})
		}
		return b
	}
	list := func(name, sep string) []string {
		v, _ := get(name)
		var out []string
		for _, p := range strings.Split(v, sep) {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
		return out
	}

	c := Config{
		Addr:               str("AGENT_ADDR", defaultAddr),
		PublicURL:          str("AGENT_PUBLIC_URL", ""),
		DataDir:            str("AGENT_DATA_DIR", filepath.Join("data", agent)),
		SigningKeys:        list("AGENT_SIGNING_KEY", ","),
		SigningKeyFile:     str("AGENT_SIGNING_KEY_FILE", ""),
		URLTTL:             dur("AGENT_URL_TTL", DefaultURLTTL),
		OutputTTL:          dur("AGENT_OUTPUT_TTL", DefaultOutputTTL),
		StagingTTL:         dur("AGENT_STAGING_TTL", DefaultStagingTTL),
		CleanupSchedule:    str("AGENT_CLEANUP_SCHEDULE", DefaultCleanupSchedule),
		MaxUploadBytes:     size("AGENT_MAX_UPLOAD_BYTES", DefaultMaxUploadBytes),
		EmbedMaxBytes:      size("AGENT_EMBED_MAX_BYTES", DefaultEmbedMaxBytes),
		InputRoots:         list("AGENT_INPUT_ROOTS", ":"),
		FetchAllowHosts:    list("AGENT_FETCH_ALLOW_HOSTS", ","),
		TrustedProxies:     list("AGENT_TRUSTED_PROXIES", ","),
		FetchTimeout:       dur("AGENT_FETCH_TIMEOUT", DefaultFetchTimeout),
		Auth:               str("AGENT_AUTH", "none"),
		AuthJWTSecret:      str("AGENT_AUTH_JWT_SECRET", ""),
		AuthJWTKeyFile:     str("AGENT_AUTH_JWT_PUBLIC_KEY_FILE", ""),
		StorageURL:         str("AGENT_STORAGE_URL", ""),
		S3Redirect:         boolean("AGENT_S3_REDIRECT"),
		MCPStateless:       boolean("AGENT_MCP_STATELESS"),
		AWSAccessKeyID:     str("AWS_ACCESS_KEY_ID", ""),
		AWSSecretAccessKey: str("AWS_SECRET_ACCESS_KEY", ""),
		AWSSessionToken:    str("AWS_SESSION_TOKEN", ""),
		AWSRegion:          str("AWS_REGION", ""),
		ShutdownTimeout:    dur("AGENT_SHUTDOWN_TIMEOUT", DefaultShutdownTimeout),
		LogLevel:           str("AGENT_LOG_LEVEL", "info"),

		A2AStatusInterval: dur("AGENT_A2A_STATUS_INTERVAL", DefaultA2AStatusInterval),
	}
	if v, ok := get("AGENT_PEER_URLS"); ok {
		var err error
		if c.PeerURLs, err = ParsePeerURLs(v); err != nil {
			errs = append(errs, &ConfigError{"AGENT_PEER_URLS", v, err})
		}
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.LogLevel)); err != nil {
		errs = append(errs, &ConfigError{"AGENT_LOG_LEVEL", c.LogLevel, errors.New("use debug, info, warn or error")})
	}
	if len(errs) > 0 {
		return c, errors.Join(errs...)
	}
	return c, c.normalize()
}

// normalize fills defaults and checks values that depend on each other.
func (c *Config) normalize() error {
	var errs []error
	bad := func(name, value string, err error) { errs = append(errs, &ConfigError{name, value, err}) }
	orDefault(&c.Addr, ":8080")
	orDefault(&c.DataDir, "data")
	orDefault(&c.Auth, "none")
	orDefault(&c.CleanupSchedule, DefaultCleanupSchedule)
	orDefault(&c.URLTTL, DefaultURLTTL)
	orDefault(&c.OutputTTL, DefaultOutputTTL)
	orDefault(&c.StagingTTL, DefaultStagingTTL)
	orDefault(&c.FetchTimeout, DefaultFetchTimeout)
	orDefault(&c.ShutdownTimeout, DefaultShutdownTimeout)
	orDefault(&c.A2AStatusInterval, DefaultA2AStatusInterval)
	orDefault(&c.MaxUploadBytes, DefaultMaxUploadBytes)
	if c.MaxUploadBytes < 0 {
		bad("AGENT_MAX_UPLOAD_BYTES", strconv.FormatInt(c.MaxUploadBytes, 10), errors.New("must be positive"))
	}
	if c.EmbedMaxBytes < 0 {
		bad("AGENT_EMBED_MAX_BYTES", strconv.FormatInt(c.EmbedMaxBytes, 10), errors.New("must be 0 (never embed) or a positive number of bytes"))
	}
	if _, err := compilePeers(c.PeerURLs); err != nil {
		bad("AGENT_PEER_URLS", fmt.Sprint(c.PeerURLs), err)
	}
	if _, err := parseTrustedProxies(c.TrustedProxies); err != nil {
		bad("AGENT_TRUSTED_PROXIES", strings.Join(c.TrustedProxies, ","), err)
	}
	if err := cleanup.CheckSchedule(c.CleanupSchedule); err != nil {
		bad("AGENT_CLEANUP_SCHEDULE", c.CleanupSchedule, err)
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
	if c.PublicURL == "" {
		c.PublicURL = "http://localhost:" + port
	}
	c.PublicURL = strings.TrimRight(c.PublicURL, "/")
	if u, err := url.Parse(c.PublicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		bad("AGENT_PUBLIC_URL", c.PublicURL, errors.New("must be an absolute http(s) URL such as https://agent.example.com"))
	}
	if c.StorageURL == "" {
		c.StorageURL = "file://" + c.DataDir
	}
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
			if overlaps(root, private) {
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
	switch c.Auth {
	case "none":
	case "jwt":
		if c.AuthJWTSecret == "" && c.AuthJWTKeyFile == "" {
			bad("AGENT_AUTH", c.Auth, errors.New("jwt needs AGENT_AUTH_JWT_SECRET or AGENT_AUTH_JWT_PUBLIC_KEY_FILE"))
		}
		if c.AuthJWTSecret != "" && len(c.AuthJWTSecret) < 32 {
			bad("AGENT_AUTH_JWT_SECRET", "(hidden)", errors.New("must be at least 32 bytes"))
		}
	default:
		bad("AGENT_AUTH", c.Auth, errors.New(`must be "none" or "jwt"`))
	}
	if strings.HasPrefix(c.StorageURL, "s3://") {
		// Credentials wrongly put into the URL stay out of the error.
		shown := fileserve.RedactURL(c.StorageURL)
		if _, err := fileserve.ParseS3URL(c.StorageURL); err != nil {
			bad("AGENT_STORAGE_URL", shown, err)
		}
		if c.AWSAccessKeyID == "" || c.AWSSecretAccessKey == "" {
			bad("AGENT_STORAGE_URL", shown, errors.New("s3:// storage needs credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"))
		}
	} else {
		if _, err := c.storageDir(); err != nil {
			bad("AGENT_STORAGE_URL", c.StorageURL, err)
		}
		if c.S3Redirect {
			bad("AGENT_S3_REDIRECT", "true", errors.New("redirects go to presigned S3 URLs: set AGENT_STORAGE_URL to s3://<bucket>?endpoint=<host:port>, or leave AGENT_S3_REDIRECT unset"))
		}
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

// overlaps reports whether one of the folders a and b lies inside the other.
func overlaps(a, b string) bool {
	return inside(a, b) || inside(b, a)
}

// inside reports whether path x is y or lies below it.
func inside(x, y string) bool {
	rel, err := filepath.Rel(y, x)
	return err == nil && (rel == "." || filepath.IsLocal(rel))
}

// orDefault sets *v to def when it holds the zero value.
func orDefault[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}

// storageDir returns the folder of a file:// storage URL.
func (c *Config) storageDir() (string, error) {
	rest, ok := strings.CutPrefix(c.StorageURL, "file://")
	if !ok {
		return "", errors.New("use file://<folder> (local disk) or s3://<bucket>?endpoint=<host:port> (S3-compatible storage)")
	}
	if rest == "" {
		return "", errors.New("file:// needs a folder, e.g. file:///data")
	}
	return rest, nil
}
