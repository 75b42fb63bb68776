package ocr

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// DefaultLanguage is read when a call names none.
const DefaultLanguage = "eng"

// AutoLanguage, as the only language of a call, asks for the script to be
// detected (tesseract's orientation and script detection, which needs
// tesseract-ocr-osd) on the first page, and the text read in the installed
// languages of that script (ScriptLanguages).
const AutoLanguage = "auto"

// ScriptLanguages maps the scripts tesseract's script detection reports to
// the language packs that read them, most likely first. A script's packs
// that are installed are all used (Han: chi_sim and chi_tra); Latin text
// is read as English, as the detection cannot tell Latin-script languages
// apart: name them to read accents best.
var ScriptLanguages = map[string][]string{
	"Latin": {"eng"}, "Arabic": {"ara"}, "Cyrillic": {"rus"}, "Greek": {"ell"}, "Hebrew": {"heb"},
	"Han": {"chi_sim", "chi_tra"}, "HanS": {"chi_sim"}, "HanT": {"chi_tra"},
	"Japanese": {"jpn"}, "Hiragana": {"jpn"}, "Katakana": {"jpn"}, "Korean": {"kor"}, "Hangul": {"kor"},
	"Devanagari": {"hin"}, "Bengali": {"ben"}, "Tamil": {"tam"}, "Telugu": {"tel"}, "Kannada": {"kan"},
	"Malayalam": {"mal"}, "Gujarati": {"guj"}, "Gurmukhi": {"pan"}, "Thai": {"tha"}, "Georgian": {"kat"},
	"Armenian": {"hye"}, "Ethiopic": {"amh"}, "Khmer": {"khm"}, "Lao": {"lao"}, "Myanmar": {"mya"},
	"Sinhala": {"sin"}, "Tibetan": {"bod"}, "Fraktur": {"deu_latf", "frk"},
}

// isAuto reports whether a request's languages ask for detection.
func isAuto(langs []string) bool { return len(langs) == 1 && langs[0] == AutoLanguage }

// languages knows the installed tesseract language packs. It asks tesseract
// once, and again whenever a call names one it has not seen, so that a pack
// installed while the agent runs is found without a restart.
type languages struct {
	list func(context.Context) (langs []string, osd bool, err error)

	mu        sync.Mutex
	installed []string // languages to read text in
	osd       bool     // script detection data installed
}

// check returns the languages asked for, deduplicated and in order
// (DefaultLanguage when none), or an error naming the ones not installed and
// listing those that are.
func (l *languages) check(ctx context.Context, asked []string) ([]string, error) {
	var want []string
	for _, lang := range asked {
		lang = strings.TrimSpace(lang)
		if lang != "" && !slices.Contains(want, lang) {
			want = append(want, lang)
		}
	}
	if len(want) == 0 {
		want = []string{DefaultLanguage}
	}
	if slices.Contains(want, AutoLanguage) {
		if len(want) > 1 {
			return nil, fmt.Errorf(`%q detects the script and cannot be combined with other languages: give ["auto"] alone, or the languages themselves`, AutoLanguage)
		}
		if _, _, err := l.missing(ctx, nil, false); err != nil {
			return nil, err
		}
		if !l.hasOSD() {
			if _, _, err := l.missing(ctx, nil, true); err != nil || !l.hasOSD() {
				return nil, fmt.Errorf(`languages ["auto"] needs tesseract's script detection data, osd, which is not installed: install it (Debian/Ubuntu: apt-get install %s), or name the languages`, debianPackage("osd"))
			}
		}
		return want, nil
	}
	missing, installed, err := l.missing(ctx, want, false)
	if err == nil && len(missing) > 0 {
		missing, installed, err = l.missing(ctx, want, true)
	}
	if err != nil {
		return nil, err
	}
	if slices.Contains(missing, "osd") {
		return nil, errors.New(`"osd" is tesseract's data for detecting orientation and script, not a language to read text in: name the language of the text, such as "eng"`)
	}
	if len(missing) > 0 {
		var pkgs []string
		for _, m := range missing {
			pkgs = append(pkgs, debianPackage(m))
		}
		return nil, fmt.Errorf("%s not installed; installed: %s. Choose installed ones, or install the pack (Debian/Ubuntu: apt-get install %s)",
			quoteList(missing), strings.Join(installed, ", "), strings.Join(pkgs, " "))
	}
	return want, nil
}

// hasOSD reports whether the script detection data was installed at the
// last look.
func (l *languages) hasOSD() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.osd
}

// forScript returns the installed languages of a script detected by
// tesseract, or an error saying what to install.
func (l *languages) forScript(ctx context.Context, script string) ([]string, error) {
	packs, ok := ScriptLanguages[script]
	if !ok {
		return nil, fmt.Errorf("the text looks like %s script, which this agent has no language for: name the language (a tesseract code such as \"eng\")", script)
	}
	var found []string
	for _, refresh := range []bool{false, true} {
		_, installed, err := l.missing(ctx, nil, refresh)
		if err != nil {
			return nil, err
		}
		found = found[:0]
		for _, p := range packs {
			if slices.Contains(installed, p) {
				found = append(found, p)
			}
		}
		if len(found) > 0 {
			return found, nil
		}
	}
	return nil, fmt.Errorf("the text looks like %s script, but its language pack %q is not installed: install it (Debian/Ubuntu: apt-get install %s), or name an installed language",
		script, packs[0], debianPackage(packs[0]))
}

// missing returns which of want are not installed, and the installed ones,
// asking tesseract first when refresh is set or nothing is known yet.
func (l *languages) missing(ctx context.Context, want []string, refresh bool) (missing, installed []string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if refresh || l.installed == nil {
		list, osd, err := l.list(ctx)
		if err != nil {
			return nil, nil, err
		}
		l.installed, l.osd = list, osd
	}
	for _, w := range want {
		if !slices.Contains(l.installed, w) {
			missing = append(missing, w)
		}
	}
	return missing, l.installed, nil
}

// dataFiles asks tesseract for its language packs, and whether its script
// detection data (osd) is installed: osd (orientation and script
// detection) is not a language to read text in, and not among langs.
func (e *engine) dataFiles(ctx context.Context) (langs []string, osd bool, err error) {
	out, err := e.run(ctx, e.cfg.Tesseract, "--list-langs")
	if err != nil {
		return nil, false, fmt.Errorf("list the installed languages: %w", err)
	}
	return parseLanguages(string(out)), slices.Contains(strings.Fields(string(out)), "osd"), nil
}

// parseLanguages reads the output of tesseract --list-langs: a heading line,
// then one language per line.
func parseLanguages(out string) []string {
	langs := []string{}
	for i, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if i == 0 && strings.HasPrefix(line, "List of") || line == "" || line == "osd" {
			continue
		}
		langs = append(langs, line)
	}
	slices.Sort(langs)
	return langs
}

// debianPackage is the Debian package of a tesseract language pack:
// chi_sim → tesseract-ocr-chi-sim.
func debianPackage(lang string) string {
	return "tesseract-ocr-" + strings.ReplaceAll(strings.ToLower(lang), "_", "-")
}

func quoteList(s []string) string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = fmt.Sprintf("%q", v)
	}
	if len(q) == 1 {
		return "language " + q[0] + " is"
	}
	return "languages " + strings.Join(q, ", ") + " are"
}
