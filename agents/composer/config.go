package composer

import (
	"path/filepath"
	"strings"

	"github.com/agentura/agentura/agents/composer/fonts"
)

// Config holds the agent's own settings. LoadConfig fills it from the
// AGENT_FONT_DIRS environment variable; zero fields take the defaults.
type Config struct {
	// FontDirs are the folders searched (recursively) for TrueType fonts
	// that draw the characters the embedded DejaVu fonts lack
	// (AGENT_FONT_DIRS, colon-separated; default fonts.DefaultDirs).
	FontDirs []string
}

// LoadConfig reads AGENT_FONT_DIRS through lookup (os.LookupEnv in a
// program). It cannot fail: a folder that does not exist holds no fonts.
func LoadConfig(lookup func(string) (string, bool)) (Config, error) {
	var c Config
	if v, ok := lookup("AGENT_FONT_DIRS"); ok && strings.TrimSpace(v) != "" {
		for _, d := range filepath.SplitList(v) {
			if d = strings.TrimSpace(d); d != "" {
				c.FontDirs = append(c.FontDirs, d)
			}
		}
	}
	return c.withDefaults(), nil
}

// withDefaults returns c with zero fields set to their defaults.
func (c Config) withDefaults() Config {
	if len(c.FontDirs) == 0 {
		c.FontDirs = fonts.DefaultDirs
	}
	return c
}
