package agentcore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// FileAttachment is a file parameter of a tool: the file's original name and
// its content. Content is a data URI, an http(s) URL, a path under one of the
// configured input roots, or base64 — whatever the client middleware chose to
// send. A tool resolves it to a local file with [Call.ResolveFileAttachment].
//
// It decodes from the object form {"name": ..., "content": ...} and from a
// plain string, which becomes the content (the name is then derived from the
// content when it is resolved: a data URI's name= parameter, a URL's or a
// path's last segment).
//
// A struct field of this type (or *FileAttachment, or []FileAttachment) gets
// the JSON schema of a file parameter, marked "x-file": true.
type FileAttachment struct {
	Name    string `json:"name"`
	Content string `json:"content"`
}

// UnmarshalJSON accepts the object form and the plain-string form.
func (f *FileAttachment) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '"' {
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		*f = FileAttachment{Content: s}
		return nil
	}
	if len(data) > 0 && data[0] == '{' {
		var obj struct {
			Name    *string `json:"name"`
			Content *string `json:"content"`
		}
		if err := json.Unmarshal(data, &obj); err != nil {
			return fmt.Errorf("file attachment: %w", err)
		}
		*f = FileAttachment{}
		if obj.Name != nil {
			f.Name = *obj.Name
		}
		if obj.Content != nil {
			f.Content = *obj.Content
		}
		return nil
	}
	if string(data) == "null" {
		*f = FileAttachment{}
		return nil
	}
	return errors.New(`file attachment must be an object {"name": ..., "content": ...} or a string`)
}

// IsZero reports whether nothing was given.
func (f FileAttachment) IsZero() bool { return f.Name == "" && f.Content == "" }

// FileContent is the content of a file held in a string field of a structured
// parameter, such as the content of an embed item:
//
//	type EmbedItem struct {
//		Name    string               `json:"name"`
//		Content agentcore.FileContent `json:"content,omitempty"`
//	}
//
// Its schema is a string marked "x-file": true, so client middleware replaces
// the file name a model wrote there with the file itself. Resolve it with
// [Call.ResolveFile], passing the item's name.
type FileContent string
