package agentcore

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"net/mail"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentura/agentura/transfer"
	"github.com/google/jsonschema-go/jsonschema"
)

// applySchemaTag adds the constraints of tag to fs, the schema of a field
// at path.
func applySchemaTag(fs *jsonschema.Schema, tag, path string) error {
	for tag != "" {
		var item string
		if strings.HasPrefix(tag, "pattern=") {
			item, tag = tag, ""
		} else {
			item, tag, _ = strings.Cut(tag, ";")
		}
		key, val, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok {
			if key == "" {
				continue
			}
			return fmt.Errorf("%s: schema tag item %q is not key=value", path, item)
		}
		if err := applySchemaItem(fs, key, val); err != nil {
			return fmt.Errorf("%s: schema tag %s: %w", path, key, err)
		}
	}
	return nil
}

func applySchemaItem(fs *jsonschema.Schema, key, val string) error {
	if dst, ok := map[string]**float64{"minimum": &fs.Minimum, "maximum": &fs.Maximum,
		"exclusiveMinimum": &fs.ExclusiveMinimum, "exclusiveMaximum": &fs.ExclusiveMaximum}[key]; ok {
		f, err := strconv.ParseFloat(val, 64)
		if err != nil {
			return fmt.Errorf("%q is not a number", val)
		}
		*dst = &f
		return nil
	}
	if dst, ok := map[string]**int{"minLength": &fs.MinLength, "maxLength": &fs.MaxLength,
		"minItems": &fs.MinItems, "maxItems": &fs.MaxItems}[key]; ok {
		n, err := strconv.Atoi(val)
		if err != nil || n < 0 {
			return fmt.Errorf("%q is not a count", val)
		}
		*dst = &n
		return nil
	}
	switch key {
	case "default":
		v, err := tagValue(fs, val)
		if err != nil {
			return err
		}
		fs.Default, _ = json.Marshal(v)
	case "examples":
		for _, e := range strings.Split(val, "|") {
			v, err := tagValue(fs, e)
			if err != nil {
				return err
			}
			fs.Examples = append(fs.Examples, v)
		}
	case "pattern":
		if _, err := regexp.Compile(val); err != nil {
			return err
		}
		fs.Pattern = val
	case "format":
		fs.Format = val
	default:
		return fmt.Errorf("unknown key; known: default, examples, minimum, maximum, exclusiveMinimum, exclusiveMaximum, minLength, maxLength, minItems, maxItems, pattern, format")
	}
	return nil
}

// tagValue reads a default or example: plain text for a string field,
// JSON otherwise; it must validate against the field's schema.
func tagValue(fs *jsonschema.Schema, val string) (any, error) {
	var v any = val
	if fs.Type != "string" {
		if err := json.Unmarshal([]byte(val), &v); err != nil {
			return nil, fmt.Errorf("%q is not JSON: %w", val, err)
		}
	}
	check := *fs
	check.Default, check.Examples = nil, nil
	r, err := check.Resolve(nil)
	if err == nil {
		err = r.Validate(v)
	}
	if err == nil {
		err = checkFormats(v, &check, "value")
	}
	if err != nil {
		return nil, fmt.Errorf("%q does not fit the field: %w", val, err)
	}
	return v, nil
}

// subSchema is the schema of member k of an object under s, or nil.
func subSchema(s *jsonschema.Schema, k string) *jsonschema.Schema {
	return cmp.Or(s.Properties[k], s.AdditionalProperties)
}

// shortenFileStrings shortens the long strings (shortenStrings) of the file
// parameters of v only
// (the parts whose schema is marked x-file), so that constraints on other
// strings are judged on the strings themselves.
func shortenFileStrings(v any, s *jsonschema.Schema) (any, bool) {
	if s == nil {
		return v, false
	}
	if s.Extra[transfer.KeywordFile] == true {
		return shortenStrings(v)
	}
	if _, isArray := v.([]any); isArray {
		return replaceEach(v, func(_ string, e any) (any, bool) { return shortenFileStrings(e, s.Items) })
	}
	return replaceEach(v, func(k string, e any) (any, bool) { return shortenFileStrings(e, subSchema(s, k)) })
}

// checkFormats checks the strings of v whose schema names a format this
// package knows (SchemaTag); the JSON schema validator treats format as an
// annotation only.
func checkFormats(v any, s *jsonschema.Schema, path string) error {
	if s == nil {
		return nil
	}
	switch x := v.(type) {
	case string:
		if s.Format != "" && !validFormat(s.Format, x) {
			return fmt.Errorf("%s: %q is not a valid %s", path, shorten(x), s.Format)
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if err := checkFormats(x[k], subSchema(s, k), path+"."+k); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range x {
			if err := checkFormats(e, s.Items, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

func shorten(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

var (
	uuidRe     = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	hostnameRe = regexp.MustCompile(`^(?i:[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.(?i:[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?))*$`)
)

// validFormat checks s against format; unknown formats pass.
func validFormat(format, s string) bool {
	switch format {
	case "date-time":
		_, err := time.Parse(time.RFC3339, s)
		return err == nil
	case "date":
		_, err := time.Parse(time.DateOnly, s)
		return err == nil
	case "time":
		_, err := time.Parse("15:04:05Z07:00", s)
		if err != nil {
			_, err = time.Parse(time.TimeOnly, s)
		}
		return err == nil
	case "email":
		a, err := mail.ParseAddress(s)
		return err == nil && a.Address == s
	case "uri":
		u, err := url.Parse(s)
		return err == nil && u.Scheme != ""
	case "uuid":
		return uuidRe.MatchString(s)
	case "ipv4":
		a, err := netip.ParseAddr(s)
		return err == nil && a.Is4()
	case "ipv6":
		a, err := netip.ParseAddr(s)
		return err == nil && a.Is6()
	case "hostname":
		return len(s) <= 253 && hostnameRe.MatchString(s)
	}
	return true
}

// hasDefaults reports whether s or a schema below it gives a default.
func hasDefaults(s *jsonschema.Schema) bool {
	if s == nil {
		return false
	}
	return s.Default != nil || hasDefaults(s.Items) || slices.ContainsFunc(slices.Collect(maps.Values(s.Properties)), hasDefaults)
}
