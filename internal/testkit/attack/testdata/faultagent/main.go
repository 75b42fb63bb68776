// Command faultagent is the example file agent plus tools made for fault
// tests: two_outputs hands out two files in one FileResponse and, while the
// second streams, writes the file FAULT_MARK and blocks, so that a test can
// kill the process between the two outputs (and, with second_bytes beyond
// a part, in the middle of an S3 multipart upload); slow_output (a task for
// a client that takes them) sleeps, heedless of its call's end if asked,
// then hands out slept.txt. It lives under testdata: only the fault tests
// build it.
package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"time"

	"github.com/agentura/agentura/agentcore"
	"github.com/agentura/agentura/examples/fileagent"
	_ "github.com/agentura/agentura/fileserve/s3store"
)

// TwoInput are the arguments of two_outputs.
type TwoInput struct {
	FirstBytes  int  `json:"first_bytes"`
	SecondBytes int  `json:"second_bytes"`
	Block       bool `json:"block,omitempty"`
}

// SlowInput are the arguments of slow_output.
type SlowInput struct {
	Seconds float64 `json:"seconds"`
	// Heedless: sleep on after the call ended (canceled, its task's lease
	// lost), as a tool that never looks at its context does.
	Heedless bool `json:"heedless,omitempty"`
}

func main() {
	os.Exit(agentcore.Main(fileagent.Info, fileagent.DefaultAddr, os.Args[1:], func(svc *agentcore.Service) error {
		if err := fileagent.Register(svc); err != nil {
			return err
		}
		agentcore.AddTool(svc, agentcore.Tool{Name: "two_outputs", Description: "Hand out two files; block between them if asked."},
			func(ctx context.Context, call *agentcore.Call, in TwoInput) (*agentcore.Result, error) {
				var second io.Reader = bytes.NewReader(bytes.Repeat([]byte{'b'}, in.SecondBytes))
				if in.Block {
					second = io.MultiReader(second, &blocker{ctx: ctx})
				}
				return call.FileResponse(ctx,
					agentcore.OutputBytes("first.bin", bytes.Repeat([]byte{'a'}, in.FirstBytes)),
					agentcore.OutputReader("second.bin", second))
			})
		agentcore.AddTool(svc, agentcore.Tool{Name: "slow_output", Description: "Sleep, then hand out slept.txt.", Long: true},
			func(ctx context.Context, call *agentcore.Call, in SlowInput) (*agentcore.Result, error) {
				wait := time.Duration(in.Seconds * float64(time.Second))
				if in.Heedless {
					time.Sleep(wait)
				} else {
					select {
					case <-time.After(wait):
					case <-ctx.Done():
						return nil, context.Cause(ctx)
					}
				}
				return call.FileResponse(ctx, agentcore.OutputBytes("slept.txt", []byte("slept")))
			})
		return nil
	}))
}

// blocker marks that the second output has streamed its bytes, then blocks
// until the call ends.
type blocker struct{ ctx context.Context }

func (b *blocker) Read([]byte) (int, error) {
	os.WriteFile(os.Getenv("FAULT_MARK"), []byte("blocked"), 0o600)
	<-b.ctx.Done()
	return 0, b.ctx.Err()
}
