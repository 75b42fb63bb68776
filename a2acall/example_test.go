package a2acall_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentura/agentura/a2acall"
	"github.com/agentura/agentura/agentcore"
)

// Every agent serves A2A: another agent (or any Go program) calls one of
// its skills with local files and gets the produced files back as local
// files with an a2acall.Client.
func ExampleClient_CallSkill() {
	dir, _ := os.MkdirTemp("", "a2a-example")
	defer os.RemoveAll(dir)

	// An agent with one tool, served on a loopback port.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	base := "http://" + ln.Addr().String()
	svc, err := agentcore.New(agentcore.Info{Name: "upper", Version: "1.0.0"},
		agentcore.Config{DataDir: filepath.Join(dir, "agent"), PublicURL: base},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		panic(err)
	}
	defer svc.Close()
	type Input struct {
		Source agentcore.FileAttachment `json:"source"`
	}
	agentcore.AddTool(svc, agentcore.Tool{Name: "shout", Description: "Upper-cases a text file."},
		func(ctx context.Context, call *agentcore.Call, in Input) (*agentcore.Result, error) {
			f, err := call.ResolveFileAttachment(ctx, in.Source)
			if err != nil {
				return nil, err
			}
			text, _ := os.ReadFile(f.Path)
			return call.FileResponse(ctx, agentcore.OutputBytes("LOUD-"+f.Name, []byte(strings.ToUpper(string(text)))))
		})
	go http.Serve(ln, svc.Handler())
	defer ln.Close()

	// Its card has one skill per tool.
	card := svc.AgentCard()
	fmt.Println(card.URL == base+"/a2a", card.Skills[0].ID, card.Skills[0].InputModes)

	// The caller: a local file in, a local file out.
	in := filepath.Join(dir, "note.txt")
	os.WriteFile(in, []byte("hello over a2a"), 0o600)
	out := filepath.Join(dir, "out")
	os.Mkdir(out, 0o700)
	client := &a2acall.Client{Dir: out}
	res, err := client.CallSkill(context.Background(), base, "shout", nil, in)
	if err != nil {
		panic(err)
	}
	got, _ := os.ReadFile(res.Files[0].Path)
	fmt.Println(res.Files[0].Name, string(got))

	// A call the skill refuses is a *SkillError with the agent's reason.
	_, err = client.CallSkill(context.Background(), base, "shout", nil)
	fmt.Println(strings.ReplaceAll(err.Error(), base, "http://127.0.0.1:PORT"))
	// Output:
	// true shout [application/json */*]
	// LOUD-note.txt HELLO OVER A2A
	// skill shout of http://127.0.0.1:PORT ended failed: skill shout needs a file for "source": add a file part {"kind": "file", "file": {"name": "report.pdf", "mimeType": "application/pdf", "bytes": "<base64>"}} (or "uri" instead of "bytes")
}
