package agentcore

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/agentura/agentura/settings"
)

// TestZeroConfigMeansTheDefaults: a zero Config, normalised as New does,
// holds for every setting what an empty environment gives.
func TestZeroConfigMeansTheDefaults(t *testing.T) {
	for _, addr := range []string{"", ":8001"} {
		fromEnv, err := ConfigFromLookup(env(nil), "ocr-agent", addr)
		if err != nil {
			t.Fatal(err)
		}
		var zero Config
		if err := zero.normalize("ocr-agent", addr); err != nil {
			t.Fatal(err)
		}
		want, got := fromEnv.Settings("ocr-agent", addr), zero.Settings("ocr-agent", addr)
		for i, v := range want {
			if got[i].String() != v.String() {
				t.Errorf("%s: zero Config gives %q, empty environment %q", v.Env, got[i].String(), v.String())
			}
		}
		if !reflect.DeepEqual(zero, fromEnv) {
			t.Errorf("zero Config = %+v\nempty environment = %+v", zero, fromEnv)
		}
	}
	var c Config
	if err := c.normalize("ocr-agent", ""); err != nil {
		t.Fatal(err)
	}
	if c.Addr != defaultListenAddr || c.DataDir != "data/ocr-agent" || c.EmbedMaxBytes != defaultEmbedMaxBytes || c.PublicURL != "http://localhost:8080" {
		t.Errorf("zero Config normalised to addr %q, data %q, embed %d, public %q", c.Addr, c.DataDir, c.EmbedMaxBytes, c.PublicURL)
	}
	off, err := ConfigFromLookup(env(map[string]string{"AGENT_EMBED_MAX_BYTES": "0"}), "x", "")
	if err != nil || off.EmbedMaxBytes >= 0 {
		t.Errorf("AGENT_EMBED_MAX_BYTES=0: EmbedMaxBytes %d, %v; want negative (never embed)", off.EmbedMaxBytes, err)
	}
}

// TestEveryConfigFieldIsDeclared: each field of Config has its declaration
// in Settings, so it has an environment variable, a flag and a README row;
// only what a program hands over in Go (a Store, the storage backends' own
// variables: StorageEnv) is not one of its settings.
func TestEveryConfigFieldIsDeclared(t *testing.T) {
	var c Config
	vars := c.Settings("x", "")
	rv := reflect.ValueOf(&c).Elem()
	for _, f := range reflect.VisibleFields(rv.Type()) { // the sections' fields too
		if f.Name == "Store" || f.Name == "StorageEnv" || f.Anonymous {
			continue
		}
		addr := rv.FieldByIndex(f.Index).Addr().Interface()
		if !slices.ContainsFunc(vars, func(v *settings.Var) bool { return v.Target() == addr }) {
			t.Errorf("Config.%s has no declaration in Config.Settings", f.Name)
		}
	}
}

// TestNewLeavesItsConfigAlone: New works on its own copy; the caller's
// slices (InputRoots were made absolute in place) stay as they were.
func TestNewLeavesItsConfigAlone(t *testing.T) {
	root := t.TempDir()
	roots := []string{root + "/./"}
	svc := newTestService(t, func(c *Config) { c.InputRoots = roots })
	if roots[0] != root+"/./" {
		t.Errorf("New rewrote the caller's InputRoots to %q", roots[0])
	}
	if got := svc.cfg.InputRoots; len(got) != 1 || got[0] == roots[0] {
		t.Errorf("the service's own InputRoots = %q; want the cleaned absolute folder", got)
	}
}

// TestAppsSettings: AGENT_ATTACH_TOOL is on unless set false, and
// AGENT_UI_DOMAIN takes a host name or "claude", refusing an origin, a URL
// or a name that is no host name with an error naming the variable.
func TestAppsSettings(t *testing.T) {
	for text, off := range map[string]bool{"": false, "true": false, "1": false, "false": true, "0": true} {
		c, err := ConfigFromLookup(env(map[string]string{"AGENT_ATTACH_TOOL": text}), "x", "")
		if err != nil || c.NoAttachTool != off {
			t.Errorf("AGENT_ATTACH_TOOL=%q: NoAttachTool %v, %v; want %v", text, c.NoAttachTool, err, off)
		}
	}
	if _, err := ConfigFromLookup(env(map[string]string{"AGENT_ATTACH_TOOL": "maybe"}), "x", ""); err == nil ||
		!strings.Contains(err.Error(), "AGENT_ATTACH_TOOL") {
		t.Errorf("AGENT_ATTACH_TOOL=maybe: %v, want an error naming the variable", err)
	}
	for _, ok := range []string{"", "claude", "a904794854a047f6a904794854a047f6.claudemcpcontent.com", "www-example-com.oaiusercontent.com"} {
		if _, err := ConfigFromLookup(env(map[string]string{"AGENT_UI_DOMAIN": ok}), "x", ""); err != nil {
			t.Errorf("AGENT_UI_DOMAIN=%q: %v", ok, err)
		}
	}
	for bad, says := range map[string]string{
		"https://views.example.com": "host name alone", "views.example.com/x": "host name alone",
		"views.example.com:8443": "host name alone", "localhost": "domain", "Views.Example.com": "lower-case",
		"-a.example.com": "label", "a..example.com": "label",
	} {
		_, err := ConfigFromLookup(env(map[string]string{"AGENT_UI_DOMAIN": bad}), "x", "")
		if err == nil || !strings.Contains(err.Error(), "AGENT_UI_DOMAIN") || !strings.Contains(err.Error(), says) {
			t.Errorf("AGENT_UI_DOMAIN=%q: %v; want an error naming the variable and saying %q", bad, err, says)
		}
	}
}
