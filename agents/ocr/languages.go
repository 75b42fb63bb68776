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

// languages knows the installed tesseract language packs. It asks tesseract
// once, and again whenever a call names one it has not seen, so that a pack
// installed while the agent runs is found without a restart.
type languages struct {
	list func(context.Context) ([]string, error)

	mu        sync.Mutex
	installed []string
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

// missing returns which of want are not installed, and the installed ones,
// asking tesseract first when refresh is set or nothing is known yet.
func (l *languages) missing(ctx context.Context, want []string, refresh bool) (missing, installed []string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if refresh || l.installed == nil {
		list, err := l.list(ctx)
		if err != nil {
			return nil, nil, err
		}
		l.installed = list
	}
	for _, w := range want {
		if !slices.Contains(l.installed, w) {
			missing = append(missing, w)
		}
	}
	return missing, l.installed, nil
}

// listLanguages asks tesseract for its language packs. "osd" (orientation and
// script detection) is not a language to read text in and is left out.
func (e *engine) listLanguages(ctx context.Context) ([]string, error) {
	out, err := e.run(ctx, e.cfg.Tesseract, "--list-langs")
	if err != nil {
		return nil, fmt.Errorf("list the installed languages: %w", err)
	}
	return parseLanguages(string(out)), nil
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
