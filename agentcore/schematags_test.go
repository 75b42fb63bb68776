package agentcore

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

type taggedInput struct {
	Pages int      `json:"pages,omitempty" schema:"minimum=1;maximum=500;default=7;examples=1|20"`
	Title string   `json:"title" schema:"minLength=2;maxLength=5"`
	Mail  string   `json:"mail,omitempty" schema:"format=email"`
	Code  string   `json:"code,omitempty" schema:"pattern=^[A-Z]{3};[0-9]+$"`
	Tags  []string `json:"tags,omitempty" schema:"maxItems=2"`
	Mode  string   `json:"mode,omitempty" enum:"fast,slow" schema:"default=slow"`
}

// The schema tag publishes its keywords, validation honours them, and an
// absent parameter takes its default.
func TestSchemaTags(t *testing.T) {
	s, _, err := InputSchema[taggedInput]()
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(s)
	for _, want := range []string{`"minimum":1`, `"maximum":500`, `"default":7`, `"examples":[1,20]`, `"minLength":2`, `"maxLength":5`,
		`"format":"email"`, `"pattern":"^[A-Z]{3};[0-9]+$"`, `"maxItems":2`, `"default":"slow"`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("schema lacks %s: %s", want, raw)
		}
	}
	dec, err := newArgDecoder(reflect.TypeFor[taggedInput]())
	if err != nil {
		t.Fatal(err)
	}
	var in taggedInput
	if err := dec.decode(json.RawMessage(`{"title":"abc"}`), &in); err != nil || in.Pages != 7 || in.Mode != "slow" {
		t.Errorf("defaults: %+v, %v; want pages 7, mode slow", in, err)
	}
	long := strings.Repeat("x", 5000) // longer than the stand-in threshold
	for args, want := range map[string]string{
		`{"title":"abc","pages":0}`:               "minimum",
		`{"title":"abc","pages":501}`:             "maximum",
		`{"title":"a"}`:                           "minLength",
		`{"title":"` + long + `"}`:                "maxLength",
		`{"title":"abc","mail":"not-an-address"}`: "email",
		`{"title":"abc","code":"ab;1"}`:           "pattern",
		`{"title":"abc","tags":["a","b","c"]}`:    "maxItems",
		`{"title":"abc","mode":"medium"}`:         "enum",
	} {
		var in taggedInput
		err := dec.decode(json.RawMessage(args), &in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%.60s: %v, want an error about %s", args, err, want)
		}
	}
	if err := dec.decode(json.RawMessage(`{"title":"abc","mail":"a@b.example","code":"ABC;12"}`), &in); err != nil {
		t.Errorf("valid arguments refused: %v", err)
	}
	// Malformed tags fail at registration.
	type badDefault struct {
		N int `json:"n" schema:"maximum=3;default=9"`
	}
	type badKey struct {
		N int `json:"n" schema:"minimun=3"`
	}
	if _, _, err := InputSchema[badDefault](); err == nil || !strings.Contains(err.Error(), "does not fit") {
		t.Errorf("a default over the maximum: %v", err)
	}
	if _, _, err := InputSchema[badKey](); err == nil || !strings.Contains(err.Error(), "unknown key") {
		t.Errorf("a misspelt key: %v", err)
	}
}

type typedOut struct {
	Words int    `json:"words" schema:"minimum=0"`
	Lang  string `json:"lang,omitempty"`
}

// A typed tool publishes an output schema its structured content (with the
// produced files' fields) validates against.
func TestTypedToolOutputSchema(t *testing.T) {
	svc := newTestService(t, nil)
	AddTypedTool(svc, Tool{Name: "count", Idempotent: true}, func(ctx context.Context, call *Call, in struct {
		Files int `json:"files"`
	}) (typedOut, *Result, error) {
		var outs []Output
		for range in.Files {
			outs = append(outs, OutputBytes("a.txt", []byte("hello")))
		}
		res := &Result{Text: "counted"}
		if len(outs) > 0 {
			var err error
			if res, err = call.FileResponse(ctx, outs...); err != nil {
				return typedOut{}, nil, err
			}
		}
		return typedOut{Words: 3, Lang: "en"}, res, nil
	})
	def := svc.Tools()[0]
	if def.OutputSchema == nil {
		t.Fatal("no output schema")
	}
	resolved, err := def.OutputSchema.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	for files := range 3 {
		res, err := svc.Invoke(context.Background(), "count", "", json.RawMessage(`{"files":`+string(rune('0'+files))+`}`))
		if err != nil {
			t.Fatal(err)
		}
		var v map[string]any
		raw, _ := json.Marshal(res.Structured())
		json.Unmarshal(raw, &v)
		if err := resolved.Validate(v); err != nil {
			t.Errorf("%d files: structured %s does not validate: %v", files, raw, err)
		}
		if v["words"] != 3.0 {
			t.Errorf("%d files: structured %s lacks the typed output", files, raw)
		}
	}
	type bad struct {
		Filename int `json:"filename"`
	}
	if _, err := outputSchema[bad](); err == nil {
		t.Error("an output field named like a file field, of another type, was accepted")
	}
}
