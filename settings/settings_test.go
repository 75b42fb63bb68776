package settings_test

import (
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/settings"
)

// config is a program's settings as a test declares them.
type config struct {
	Name    string
	Pages   int
	Embed   int64
	Timeout time.Duration
	Fast    bool
	Hosts   []string
	Secret  string
	Mode    string
}

func (c *config) settings() settings.List {
	return settings.List{
		settings.String(&c.Name, "T_NAME", "agent", "the name"),
		settings.Int(&c.Pages, "T_PAGES", 50, "most pages").Positive(),
		settings.Size(&c.Embed, "T_EMBED", 64, "embed up to; `0` = never").ZeroMeansOff().Row("embed or time out"),
		settings.Duration(&c.Timeout, "T_TIMEOUT", 10*time.Minute, "time for one [document](#docs)").JoinRow(),
		settings.Bool(&c.Fast, "T_FAST", "go fast"),
		settings.Strings(&c.Hosts, "T_HOSTS", ",", "hosts").Shown("empty"),
		settings.String(&c.Secret, "T_SECRET", "", "a secret").Secret().NoFlag(),
		settings.String(&c.Mode, "T_MODE", "none", "mode").OneOf("none", "jwt"),
	}
}

func lookup(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}

func TestLoadDefaultsCheck(t *testing.T) {
	var c config
	l := c.settings()
	err := l.Load(lookup(map[string]string{"T_PAGES": " 7 ", "T_EMBED": "0", "T_TIMEOUT": "90s", "T_FAST": "true",
		"T_HOSTS": "a, b,,", "T_NAME": "   "}))
	if err != nil {
		t.Fatal(err)
	}
	l.Defaults()
	if err := l.Check(); err != nil {
		t.Fatal(err)
	}
	if c.Name != "agent" || c.Pages != 7 || c.Embed != -1 || c.Timeout != 90*time.Second || !c.Fast ||
		strings.Join(c.Hosts, "|") != "a|b" || c.Mode != "none" {
		t.Errorf("loaded %+v", c)
	}
	if got := l.Lookup("T_EMBED").String(); got != "0" {
		t.Errorf("an off size reads back as %q; want 0", got)
	}

	var zero config
	zl := zero.settings()
	zl.Defaults()
	if zero.Pages != 50 || zero.Embed != 64 || zero.Timeout != 10*time.Minute || zero.Name != "agent" || zero.Fast || zero.Hosts != nil {
		t.Errorf("zero struct with defaults = %+v", zero)
	}
}

func TestBadValuesNameTheirVariable(t *testing.T) {
	for name, value := range map[string]string{
		"T_PAGES":   "0",
		"T_EMBED":   "-3",
		"T_TIMEOUT": "soon",
		"T_FAST":    "sometimes",
		"T_MODE":    "basic",
		"T_SECRET":  "x", // fine: a secret has no rule, but see below
	} {
		var c config
		err := c.settings().Load(lookup(map[string]string{name: value}))
		if name == "T_SECRET" {
			if err != nil {
				t.Errorf("T_SECRET: %v", err)
			}
			continue
		}
		var e *settings.Error
		if !errors.As(err, &e) || e.Var != name || !strings.Contains(err.Error(), name) {
			t.Errorf("%s=%q: %v; want an *Error naming %s", name, value, err, name)
		}
	}
	// A value set in code is checked too, and a secret never shown.
	c := config{Timeout: -time.Second, Mode: "basic", Pages: -1}
	l := append(c.settings(), settings.String(&c.Secret, "T_KEY", "", "key").Secret().Check(func(string) error { return errors.New("too short") }))
	c.Secret = "hunter2"
	l.Defaults()
	err := l.Check()
	for _, want := range []string{"T_TIMEOUT", "T_MODE", "T_PAGES", `T_KEY="(hidden)"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Check: %v; want it to name %s", err, want)
		}
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Errorf("Check showed a secret: %v", err)
	}
}

func TestFlags(t *testing.T) {
	var c config
	l := c.settings()
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	get := l.Flags(fs, lookup(map[string]string{"T_PAGES": "3", "T_TIMEOUT": "1m", "T_NAME": "env"}))
	if err := fs.Parse([]string{"--t-fast", "--t-pages=9", "--t-name="}); err != nil {
		t.Fatal(err)
	}
	if fs.Lookup("t-secret") != nil {
		t.Error("NoFlag: a flag --secret exists")
	}
	c = config{}
	if err := l.Load(get); err != nil {
		t.Fatal(err)
	}
	if !c.Fast || c.Pages != 9 || c.Timeout != time.Minute || c.Name != "env" {
		t.Errorf("with flags: %+v; want fast (bool flag alone), pages 9 (flag over env), timeout 1m (env), name env (empty flag is unset)", c)
	}
	if err := fs.Parse([]string{"--t-timeout", "soon"}); err == nil || !strings.Contains(err.Error(), "-t-timeout") {
		t.Errorf("--timeout soon: %v; want the flag named", err)
	}
}

func TestMarkdown(t *testing.T) {
	var c config
	got := c.settings().Markdown()
	for _, want := range []string{
		"| variable | default | meaning |\n|---|---|---|\n",
		"| `T_NAME` | `agent` | the name |\n",
		"| `T_EMBED` / `T_TIMEOUT` | `64` / `10m` | embed or time out |\n",
		"| `T_FAST` | `false` | go fast |\n",
		"| `T_HOSTS` | empty | hosts |\n",
		"| `T_SECRET` | | a secret |\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, got)
		}
	}
	if p := settings.Plain("time for one [document](#docs), `0` = never"); p != "time for one document, 0 = never" {
		t.Errorf("Plain = %q", p)
	}
}

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{time.Hour: "1h", 24 * time.Hour: "24h", 10 * time.Minute: "10m",
		90 * time.Second: "1m30s", 5 * time.Second: "5s", 90 * time.Minute: "1h30m", 750 * time.Millisecond: "750ms"} {
		if got := settings.FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%v) = %q; want %q", d, got, want)
		}
	}
	if settings.FlagName("AGENT_OCR_MAX_PAGES") != "ocr-max-pages" {
		t.Error(settings.FlagName("AGENT_OCR_MAX_PAGES"))
	}
}
func TestSplit(t *testing.T) {
	if got := settings.Split(" a, b,,c ,", ","); strings.Join(got, "|") != "a|b|c" {
		t.Errorf("SplitList = %q", got)
	}
	if got := settings.Split("", ":"); got != nil {
		t.Errorf("Split(\"\") = %q, want nil", got)
	}
}
