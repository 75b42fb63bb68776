package agentcore

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/png"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An output marked ShowImage goes out as an image content block too; an
// unmarked one, a marked non-image and a marked image over ImageMaxBytes do not.
func TestShowImage(t *testing.T) {
	svc := newTestService(t, nil)
	var small bytes.Buffer
	png.Encode(&small, image.NewGray(image.Rect(0, 0, 8, 8)))
	big := make([]byte, ImageMaxBytes+1)
	copy(big, small.Bytes()) // a PNG head: detected as image/png
	AddTool(svc, Tool{Name: "draw"}, func(ctx context.Context, call *Call, in struct{}) (*Result, error) {
		shown := OutputBytes("chart.png", small.Bytes())
		shown.ShowImage = true
		text := OutputBytes("notes.txt", []byte("hello"))
		text.ShowImage = true
		large := OutputBytes("large.png", big)
		large.MIMEType, large.ShowImage = "image/png", true
		return call.FileResponse(ctx, shown, OutputBytes("plain.png", small.Bytes()), text, large)
	})
	res, err := svc.Invoke(context.Background(), "draw", "", json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	var images []*mcp.ImageContent
	for _, c := range svc.mcp.Render(context.Background(), res.outcome()).Content {
		if img, ok := c.(*mcp.ImageContent); ok {
			images = append(images, img)
		}
	}
	if len(images) != 1 || images[0].MIMEType != "image/png" || !bytes.Equal(images[0].Data, small.Bytes()) {
		t.Fatalf("image blocks %d, want exactly the one of chart.png", len(images))
	}
}
