package settings

import (
	"errors"
	"flag"
	"strings"
)

// Flags adds to fs a flag for each variable of l that has one (a boolean
// flag for a Bool, which works alone: --mcp-stateless) and returns a lookup
// for Load that answers with a flag's text when the flag was given, and asks
// next (os.LookupEnv in a program) otherwise: a flag wins over the
// environment. A flag given an empty value counts as not given. A bad value
// is refused while fs parses, naming the flag.
func (l List) Flags(fs *flag.FlagSet, next func(string) (string, bool)) func(string) (string, bool) {
	given := map[string]string{}
	for _, v := range l {
		if v.Flag != "" {
			fs.Var(&flagValue{v: v, given: given}, v.Flag, Plain(v.Doc)+" ("+v.Env+")")
		}
	}
	return func(env string) (string, bool) {
		if text, ok := given[env]; ok && strings.TrimSpace(text) != "" {
			return text, true
		}
		return next(env)
	}
}

// flagValue is the flag.Value of a variable: it checks the text and keeps
// it for the lookup Flags returns.
type flagValue struct {
	v     *Var
	given map[string]string // flag text by variable
}

// String returns the default, which flag's help shows.
func (f *flagValue) String() string {
	if f == nil || f.v == nil || f.v.secret {
		return ""
	}
	return f.v.DefaultText()
}

// Set checks text as a value of the variable and keeps it.
func (f *flagValue) Set(text string) error {
	if strings.TrimSpace(text) != "" {
		if err := f.v.Set(strings.TrimSpace(text)); err != nil {
			var e *Error
			if errors.As(err, &e) {
				return e.Err // flag names the flag and the value
			}
			return err
		}
	}
	f.given[f.v.Env] = text
	return nil
}

// IsBoolFlag makes a Bool's flag work without a value.
func (f *flagValue) IsBoolFlag() bool { return f.v != nil && f.v.boolean }
