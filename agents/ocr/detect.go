package ocr

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
)

// languagesFor returns the languages to read image in: those of the request,
// or, for AutoLanguage, those of the script detected in it.
func (a *Agent) languagesFor(ctx context.Context, req request, image string) ([]string, error) {
	if !isAuto(req.Languages) {
		return req.Languages, nil
	}
	return a.detectLanguages(ctx, image)
}

// detectLanguages runs tesseract's orientation and script detection (page
// segmentation mode 0, data osd.traineddata) on an image and returns the
// installed languages of the script it reports. Detection is tried on as few
// as osdMinChars characters (tesseract's default, 50, refuses a page of a
// few short lines).
func (a *Agent) detectLanguages(ctx context.Context, image string) ([]string, error) {
	out, err := a.engine.heavy(ctx, a.cfg.Tesseract, image, "stdout", "--psm", "0", "--dpi", fmt.Sprint(DPI),
		"-c", "min_characters_to_try="+fmt.Sprint(osdMinChars))
	if err != nil {
		var ce *commandError
		if errors.As(err, &ce) && strings.Contains(ce.Stderr, "Too few characters") {
			return nil, errors.New(`the page has too little text to detect its script (languages ["auto"]): name the languages instead`)
		}
		return nil, fmt.Errorf("detect the script: %w", err)
	}
	script := parseOSD(out)
	if script == "" {
		return nil, fmt.Errorf(`tesseract detected no script on the first page (languages ["auto"]): name the languages instead`)
	}
	return a.engine.langs.forScript(ctx, script)
}

// osdMinChars is the fewest characters script detection is tried on.
const osdMinChars = 5

// parseOSD reads the script from tesseract's orientation and script
// detection report ("Script: Arabic").
func parseOSD(out []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "Script:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
