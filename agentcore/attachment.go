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
		type object FileAttachment // without this method
		var obj object
		if err := json.Unmarshal(data, &obj); err != nil {
			return fmt.Errorf("file attachment: %w", err)
		}
		*f = FileAttachment(obj)
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

// FileContent is a file in a string field; resolve it with Call.ResolveFile.
type FileContent string
