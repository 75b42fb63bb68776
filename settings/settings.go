// Package settings declares each setting of a program once — environment
// variable, command-line flag, default, parser and one line of doc — and
// from that declaration reads the environment, binds flags, fills defaults
// into a zero struct, checks values and writes the documentation.
//
// A declaration binds a variable to a field, the way the flag package does:
//
//	func (c *Config) Settings() settings.List {
//		return settings.List{
//			settings.Duration(&c.Timeout, "AGENT_OCR_TIMEOUT", 10*time.Minute, "time for one document"),
//			settings.Int(&c.MaxPages, "AGENT_OCR_MAX_PAGES", 50, "most pages of one PDF").Positive(),
//		}
//	}
//
// A zero field means the declared default: List.Defaults fills it, so a
// struct built in code and one read from an empty environment agree.
// Numbers whose 0 means "off" store -1 for it (ZeroMeansOff), like
// net.Dialer.KeepAlive. The package is a leaf: it imports only the standard
// library.
package settings

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Var is one declared setting: an environment variable bound to the field
// it sets. Make one with a constructor (String, Int, Int64, Size, Duration,
// Bool, Strings, Of); its methods refine it and return it, for chaining.
type Var struct {
	// Env is the environment variable, e.g. AGENT_URL_TTL.
	Env string
	// Flag is the command-line flag without dashes, e.g. url-ttl:
	// FlagName(Env) unless changed; "" for none (NoFlag).
	Flag string
	// Doc is the setting's meaning, one line of Markdown.
	Doc string

	shown    *string // the default as documentation shows it (Shown)
	boolean  bool
	secret   bool
	positive bool // numbers: 0 is refused
	zeroOff  bool // numbers: 0 means off, stored as -1
	joinRow  bool
	rowDoc   string
	checks   []func(string) error

	target  any                     // the field
	parse   func(text string) error // parses text and stores it
	fill    func()                  // stores the default into a zero field
	format  func() string           // the field's value, as the variable would say it
	defText func() string           // the default, as the variable would say it
}

// Of declares a setting of any type: parse reads the variable's text,
// format writes a value back as such text (for docs and messages). The
// typed constructors are built on it.
func Of[T any](p *T, env string, def T, doc string, parse func(string) (T, error), format func(T) string) *Var {
	v := &Var{Env: env, Flag: FlagName(env), Doc: doc, target: p}
	v.parse = func(text string) error {
		x, err := parse(text)
		if err != nil {
			return err
		}
		*p = x
		return nil
	}
	v.fill = func() {
		if reflect.ValueOf(p).Elem().IsZero() {
			*p = def
		}
	}
	v.format = func() string { return format(*p) }
	v.defText = func() string { return format(def) }
	return v
}

// String declares a text setting.
func String(p *string, env, def, doc string) *Var {
	return Of(p, env, def, doc, func(s string) (string, error) { return s, nil }, func(s string) string { return s })
}

// Bool declares a boolean setting (true or false, 1 or 0, as strconv.ParseBool
// reads them); its flag works alone (--mcp-stateless). Its default is false.
func Bool(p *bool, env, doc string) *Var {
	v := Of(p, env, false, doc, func(s string) (bool, error) {
		b, err := strconv.ParseBool(s)
		if err != nil {
			return false, errors.New("not a boolean (true or false)")
		}
		return b, nil
	}, strconv.FormatBool)
	v.boolean = true
	return v
}

// Strings declares a list setting: items separated by sep, each trimmed,
// empty ones dropped (Split).
func Strings(p *[]string, env, sep, doc string) *Var {
	return Of(p, env, nil, doc, func(s string) ([]string, error) { return Split(s, sep), nil },
		func(items []string) string { return strings.Join(items, sep) })
}

// Split splits the text of a list setting at sep, trims each item and
// drops empty ones, so "a, b,," is [a b] and "" is nil. Parsers of list
// settings declared with Of use it as Strings does.
func Split(s, sep string) []string {
	var out []string
	for _, item := range strings.Split(s, sep) {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// Int declares a whole-number setting; 0 in the environment means the
// default unless Positive or ZeroMeansOff says otherwise.
func Int(p *int, env string, def int, doc string) *Var {
	return whole(p, env, def, doc, "")
}

// Int64 is Int for an int64 field.
func Int64(p *int64, env string, def int64, doc string) *Var {
	return whole(p, env, def, doc, "")
}

// Size declares a number of bytes, written as a whole number.
func Size(p *int64, env string, def int64, doc string) *Var {
	return whole(p, env, def, doc, " of bytes")
}

// whole declares a whole number; unit ends its error message (" of bytes").
func whole[T ~int | ~int64](p *T, env string, def T, doc, unit string) *Var {
	var v *Var
	v = Of(p, env, def, doc, func(s string) (T, error) {
		n, err := strconv.ParseInt(s, 10, strconv.IntSize)
		if err != nil {
			return 0, v.rangeError("whole number" + unit)
		}
		n, err = v.number(n, "whole number"+unit)
		return T(n), err
	}, func(n T) string { return v.formatNumber(int64(n), strconv.FormatInt(int64(n), 10)) })
	v.checks = append(v.checks, func(string) error {
		if *p < 0 && !v.zeroOff {
			return v.rangeError("whole number" + unit)
		}
		return nil
	})
	return v
}

// Duration declares a duration in Go syntax (90s, 10m, 24h); it must be
// positive, or 0 for off with ZeroMeansOff.
func Duration(p *time.Duration, env string, def time.Duration, doc string) *Var {
	var v *Var
	v = Of(p, env, def, doc, func(s string) (time.Duration, error) {
		d, err := time.ParseDuration(s)
		if err != nil {
			return 0, fmt.Errorf("not a duration (use Go syntax such as 90s, 10m, 24h): %w", err)
		}
		n, err := v.number(int64(d), "duration")
		return time.Duration(n), err
	}, func(d time.Duration) string { return v.formatNumber(int64(d), FormatDuration(d)) })
	v.positive = true
	v.checks = append(v.checks, func(string) error {
		if *p < 0 && !v.zeroOff {
			return v.rangeError("duration")
		}
		return nil
	})
	return v
}

// number checks a number read from the environment against the rules of v
// and returns what the field stores: -1 for 0 under ZeroMeansOff.
func (v *Var) number(n int64, what string) (int64, error) {
	switch {
	case n < 0, n == 0 && v.positive && !v.zeroOff:
		return 0, v.rangeError(what)
	case n == 0 && v.zeroOff:
		return -1, nil
	}
	return n, nil
}

// rangeError says which numbers v takes.
func (v *Var) rangeError(what string) error {
	switch {
	case v.zeroOff:
		return fmt.Errorf("must be 0 (off) or a positive %s", what)
	case v.positive:
		return fmt.Errorf("must be a positive %s", what)
	}
	return fmt.Errorf("must be a %s, 0 or more", what)
}

// formatNumber writes an off value (negative under ZeroMeansOff) as 0.
func (v *Var) formatNumber(n int64, text string) string {
	if v.zeroOff && n < 0 {
		return "0"
	}
	return text
}

// FormatDuration writes d the short way people write it: 1h, 10m, 90s,
// 1h30m (time.Duration.String writes 1h0m0s).
func FormatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// Positive refuses 0 for a number or duration (durations refuse it anyway).
func (v *Var) Positive() *Var {
	v.positive = true
	return v
}

// ZeroMeansOff makes 0 in the environment turn a number or duration off:
// the field then holds -1 (any negative value means off), and a zero field
// still means the default.
func (v *Var) ZeroMeansOff() *Var {
	v.zeroOff = true
	return v
}

// OneOf refuses every value but the ones listed.
func (v *Var) OneOf(values ...string) *Var {
	quoted := make([]string, len(values))
	for i, s := range values {
		quoted[i] = strconv.Quote(s)
	}
	msg := "must be " + strings.Join(quoted, " or ")
	if len(quoted) > 2 {
		msg = "must be one of " + strings.Join(quoted, ", ")
	}
	return v.Check(func(s string) error {
		if slices.Contains(values, s) {
			return nil
		}
		return errors.New(msg)
	})
}

// Check adds a check of the setting's value, given as the variable would
// say it; it runs on what the environment says and, by List.Check, on the
// value in the struct whatever its source.
func (v *Var) Check(check func(text string) error) *Var {
	v.checks = append(v.checks, check)
	return v
}

// Shown sets the default as the documentation shows it (Markdown), for a
// default computed at run time ("number of CPUs") or derived from other
// settings.
func (v *Var) Shown(markdown string) *Var {
	v.shown = &markdown
	return v
}

// Secret keeps the value out of error messages.
func (v *Var) Secret() *Var {
	v.secret = true
	return v
}

// NoFlag leaves the setting without a command-line flag (credentials read
// from the usual variables of other tools, such as AWS_ACCESS_KEY_ID).
func (v *Var) NoFlag() *Var {
	v.Flag = ""
	return v
}

// Row makes v open a documentation row that the following JoinRow
// variables share, with doc as the row's meaning.
func (v *Var) Row(doc string) *Var {
	v.rowDoc = doc
	return v
}

// JoinRow documents v in the row of the variable before it:
// "`AGENT_OUTPUT_TTL` / `AGENT_STAGING_TTL`".
func (v *Var) JoinRow() *Var {
	v.joinRow = true
	return v
}

// IsBool reports whether v is a boolean setting.
func (v *Var) IsBool() bool { return v.boolean }

// Target returns the pointer to the field v sets.
func (v *Var) Target() any { return v.target }

// String returns the field's value as the variable would say it.
func (v *Var) String() string { return v.format() }

// DefaultText returns the default as the variable would say it ("1h",
// "52428800"); "" when the default is empty.
func (v *Var) DefaultText() string { return v.defText() }

// DefaultDoc returns the default as the documentation shows it (Markdown):
// what Shown set, else DefaultText in backquotes, else "".
func (v *Var) DefaultDoc() string {
	if v.shown != nil {
		return *v.shown
	}
	if t := v.defText(); t != "" {
		return "`" + t + "`"
	}
	return ""
}

// IsShown reports whether the documented default was set by Shown rather
// than taken from the typed default.
func (v *Var) IsShown() bool { return v.shown != nil }

// Set parses text as the variable's value and stores it in the field; an
// error is an *Error naming the variable.
func (v *Var) Set(text string) error {
	err := v.parse(text)
	if err == nil {
		err = v.check()
	}
	if err != nil {
		return v.error(text, err)
	}
	return nil
}

// check runs the checks on the field's value.
func (v *Var) check() error {
	for _, check := range v.checks {
		if err := check(v.format()); err != nil {
			return err
		}
	}
	return nil
}

// error is err as an *Error naming v, with the value hidden for a secret.
func (v *Var) error(value string, err error) *Error {
	if v.secret {
		value = "(hidden)"
	}
	return &Error{Var: v.Env, Value: value, Err: err}
}

// Error is a bad setting; Var names the environment variable.
type Error struct {
	Var   string
	Value string
	Err   error
}

// Error names the variable, its value and what is wrong with it.
func (e *Error) Error() string {
	return fmt.Sprintf("%s=%q: %v", e.Var, e.Value, e.Err)
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// FlagName is the flag of an environment variable: AGENT_ dropped, lower
// case, dashes for underscores (AGENT_DATA_DIR → data-dir,
// AGENT_OCR_MAX_PAGES → ocr-max-pages).
func FlagName(env string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(env, "AGENT_")), "_", "-")
}

// List is the settings of a program or of a part of it.
type List []*Var

// Load sets every variable that lookup (os.LookupEnv in a program) holds
// with a value other than blanks; others keep their field as it is. Every
// bad value is reported, each as an *Error, joined.
func (l List) Load(lookup func(string) (string, bool)) error {
	var errs []error
	for _, v := range l {
		text, ok := lookup(v.Env)
		if text = strings.TrimSpace(text); ok && text != "" {
			if err := v.Set(text); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// Defaults stores its declared default into every zero field.
func (l List) Defaults() {
	for _, v := range l {
		v.fill()
	}
}

// Check checks every field's value, whatever set it; call it after
// Defaults. Every bad value is reported, each as an *Error, joined.
func (l List) Check() error {
	var errs []error
	for _, v := range l {
		if err := v.check(); err != nil {
			errs = append(errs, v.error(v.format(), err))
		}
	}
	return errors.Join(errs...)
}

// Lookup returns the variable called env, or nil.
func (l List) Lookup(env string) *Var {
	for _, v := range l {
		if v.Env == env {
			return v
		}
	}
	return nil
}
