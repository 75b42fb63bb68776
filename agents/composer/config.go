package composer

import (
	"strings"

	"github.com/agentura/agentura/agents/composer/fonts"
	"github.com/agentura/agentura/settings"
)

// Config holds the agent's own settings; Settings declares their variables,
// flags and defaults. Zero fields take the defaults.
type Config struct {
	// FontDirs are the folders searched (recursively) for TrueType fonts
	// that draw the characters the embedded DejaVu fonts lack
	// (AGENT_FONT_DIRS, colon-separated; default fonts.DefaultDirs).
	FontDirs []string
}

// Settings declares the agent's own settings, each bound to its field of c:
// give them to agentcore.Main with agentcore.WithSettings, which reads them
// from the environment and from their flags (--font-dirs).
func (c *Config) Settings() settings.List {
	return settings.List{
		settings.Strings(&c.FontDirs, "AGENT_FONT_DIRS", ":",
			"colon-separated folders searched for TrueType fonts that draw what the embedded DejaVu lacks (CJK, Devanagari, ...)").
			Shown("`" + strings.Join(fonts.DefaultDirs, ":") + "`"),
	}
}

// LoadConfig reads the agent's own settings (see Settings) through lookup
// (os.LookupEnv in a program). A folder that does not exist holds no fonts.
func LoadConfig(lookup func(string) (string, bool)) (Config, error) {
	var c Config
	err := c.Settings().Load(lookup)
	return c.withDefaults(), err
}

// withDefaults returns c with zero fields set to their defaults.
func (c Config) withDefaults() Config {
	if len(c.FontDirs) == 0 {
		c.FontDirs = fonts.DefaultDirs
	}
	return c
}
