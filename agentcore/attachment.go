package agentcore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// FileAttachment is a file parameter: the file's original name and its content
// (data URI, URL, path or base64), or a plain string, the content.
type FileAttachment struct {
	Name    string `json:"name"`
	Content string `json:"content"`
}

// UnmarshalJSON accepts the object form and the plain-string form.
func (f *FileAttachment) UnmarshalJSON(data []byte) error {
	type object FileAttachment // without this method
	data = bytes.TrimSpace(data)
	switch {
	case len(data) > 0 && data[0] == '"':
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		*f = FileAttachment{Content: s}
	case len(data) > 0 && data[0] == '{':
		var obj object
		if err := json.Unmarshal(data, &obj); err != nil {
			return fmt.Errorf("file attachment: %w", err)
		}
		*f = FileAttachment(obj)
	case string(data) == "null":
		*f = FileAttachment{}
	default:
		return errors.New(`file attachment must be an object {"name": ..., "content": ...} or a string`)
	}
	return nil
}

// IsZero reports whether nothing was given.
func (f FileAttachment) IsZero() bool { return f.Name == "" && f.Content == "" }

// FileContent is a file in a string field; resolve it with Call.ResolveFile.
type FileContent string
