package s3store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/settings"
	"github.com/agentura/agentura/transfer"
)

func init() { fileserve.RegisterScheme("s3", opener{}) }

// opener opens s3:// URLs for fileserve.OpenStore. The credentials come
// from env: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, and
// AWS_REGION when the URL names no region (Credentials).
type opener struct{}

// Settings declares the variables an s3:// store reads (Credentials), for
// fileserve.StoreSettings.
func (opener) Settings() settings.List {
	return (&Credentials{}).Settings()
}

// Credentials are what an s3:// store reads from its environment besides
// its URL: the usual AWS variables.
type Credentials struct {
	AccessKeyID, SecretAccessKey, SessionToken, Region string
}

// Settings declares the credentials' variables, each bound to its field of
// c; they have no flags.
func (c *Credentials) Settings() settings.List {
	return settings.List{
		settings.String(&c.AccessKeyID, "AWS_ACCESS_KEY_ID", "", "access key of `s3://` storage").NoFlag().
			Row("credentials of `s3://` storage (required for it), and its region when the URL names none"),
		settings.String(&c.SecretAccessKey, "AWS_SECRET_ACCESS_KEY", "", "secret key of `s3://` storage").NoFlag().Secret().JoinRow(),
		settings.String(&c.SessionToken, "AWS_SESSION_TOKEN", "", "session token of `s3://` storage").NoFlag().Secret().JoinRow(),
		settings.String(&c.Region, "AWS_REGION", "", "region of `s3://` storage when the URL names none").NoFlag().JoinRow(),
	}
}

// CheckURL parses rawURL and requires credentials.
func (opener) CheckURL(rawURL string, env fileserve.Env) error {
	_, err := configFrom(rawURL, env)
	return err
}

// OpenURL returns the Store; it does not contact the server (Ready does).
func (opener) OpenURL(_ context.Context, rawURL string, env fileserve.Env) (fileserve.Store, error) {
	cfg, err := configFrom(rawURL, env)
	if err != nil {
		return nil, err
	}
	return New(cfg)
}

// configFrom is ParseURL with the credentials and default region of env.
func configFrom(rawURL string, env fileserve.Env) (Config, error) {
	cfg, err := ParseURL(rawURL)
	if err != nil {
		return Config{}, err
	}
	get := func(name string) string { v, _ := env(name); return strings.TrimSpace(v) }
	cfg.AccessKey, cfg.SecretKey, cfg.SessionToken = get("AWS_ACCESS_KEY_ID"), get("AWS_SECRET_ACCESS_KEY"), get("AWS_SESSION_TOKEN")
	cfg.Region = cmp.Or(cfg.Region, get("AWS_REGION"))
	if cfg.AccessKey == "" || cfg.SecretKey == "" {
		return Config{}, errors.New("s3:// storage needs credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	}
	return cfg, nil
}

// ParseURL reads an S3 storage URL:
//
//	s3://<bucket>[/<key prefix>]?endpoint=<host:port>&region=<region>&secure=<bool>&path_style=<bool>&public_endpoint=<host:port>&part_size=<bytes>
//
// Every parameter is optional. endpoint defaults to AWS S3; it may carry a
// scheme (http://minio:9000), which sets secure. secure defaults to true
// (HTTPS). path_style defaults to true when an endpoint is given (MinIO,
// versitygw, Ceph) and false for AWS. public_endpoint is where clients
// reach the server when following an AGENT_S3_REDIRECT redirect. The
// credentials are not part of the URL.
func ParseURL(rawURL string) (Config, error) {
	bad := func(format string, args ...any) (Config, error) {
		return Config{}, fmt.Errorf("s3store: storage URL %q: %s", transfer.RedactUserinfo(rawURL), fmt.Sprintf(format, args...))
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		// url.Error repeats the whole URL, credentials included.
		if ue, ok := errors.AsType[*url.Error](err); ok {
			err = ue.Err
		}
		return bad("%v", err)
	}
	if u.Scheme != "s3" || u.Host == "" {
		return bad("want s3://<bucket>?endpoint=<host:port>")
	}
	if u.User != nil {
		return bad("credentials do not belong in the URL; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	}
	cfg := Config{Bucket: u.Host, Prefix: strings.Trim(u.Path, "/")}
	if cfg.Prefix != "" {
		cfg.Prefix += "/"
	}
	q := u.Query()
	for k := range q {
		switch k {
		case "endpoint", "region", "secure", "path_style", "public_endpoint", "part_size":
		default:
			return bad("unknown parameter %q (known: endpoint, region, secure, path_style, public_endpoint, part_size)", k)
		}
	}
	boolParam := func(name string, def bool) (bool, error) {
		v := q.Get(name)
		if v == "" {
			return def, nil
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			return false, fmt.Errorf("%s=%q is not true or false", name, v)
		}
		return b, nil
	}
	secureDefault := true
	cfg.Endpoint, secureDefault, err = splitEndpoint(q.Get("endpoint"), secureDefault)
	if err != nil {
		return bad("endpoint: %v", err)
	}
	cfg.PublicEndpoint, _, err = splitEndpoint(q.Get("public_endpoint"), secureDefault)
	if err != nil {
		return bad("public_endpoint: %v", err)
	}
	secure, err := boolParam("secure", secureDefault)
	if err != nil {
		return bad("%v", err)
	}
	cfg.Insecure = !secure
	if cfg.PathStyle, err = boolParam("path_style", cfg.Endpoint != ""); err != nil {
		return bad("%v", err)
	}
	cfg.Region = q.Get("region")
	if v := q.Get("part_size"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || n < minPartSize {
			return bad("part_size=%q must be a number of bytes of at least %d (5 MiB)", v, minPartSize)
		}
		cfg.PartSize = n
	}
	return cfg, nil
}

// splitEndpoint takes host:port or http(s)://host:port and returns the
// host:port and whether the scheme asks for TLS (def when there is none).
func splitEndpoint(v string, def bool) (string, bool, error) {
	if v == "" {
		return "", def, nil
	}
	if !strings.Contains(v, "://") {
		if strings.ContainsAny(v, "/?#") {
			return "", def, fmt.Errorf("%q: give host:port only", v)
		}
		return v, def, nil
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.Trim(u.Path, "/") != "" {
		return "", def, fmt.Errorf("%q: give host:port or http(s)://host:port", v)
	}
	return u.Host, u.Scheme == "https", nil
}
