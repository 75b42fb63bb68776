package attack

// Escape E14 and the fault "an A2A task stays working forever after its
// replica dies" of issue 30, and the same fault for MCP tasks (issue 28),
// on the built binaries.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/internal/testkit/mcptest"
)

// testagentBinary builds the test agent (the example agent's tools and
// sleep, long_sleep) once for the package.
func testagentBinary(t *testing.T) string {
	return binary(t, "github.com/agentura/agentura/internal/testkit/testagent/cmd/testagent")
}

// a2aSend posts an A2A message/send of parts (non-blocking when async) to
// base and returns the reply and its JSON-RPC answer.
func a2aSend(t *testing.T, base string, async bool, parts ...map[string]any) (reply, map[string]any) {
	t.Helper()
	params := map[string]any{"message": map[string]any{"kind": "message", "messageId": fmt.Sprint(time.Now().UnixNano()), "role": "user", "parts": parts}}
	if async {
		params["configuration"] = map[string]any{"blocking": false}
	}
	return a2aRPC(t, base, "message/send", params)
}

// a2aRPC posts one A2A JSON-RPC request.
func a2aRPC(t *testing.T, base, method string, params any) (reply, map[string]any) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	r := do(t, http.MethodPost, base+"/a2a", strings.NewReader(string(body)), "Content-Type", "application/json")
	var out map[string]any
	json.Unmarshal(r.body, &out)
	return r, out
}

// a2aState is the state of an A2A task (the result of message/send or
// tasks/get), "" when the answer is no task.
func a2aState(ans map[string]any) (id, state, reason string) {
	res, _ := ans["result"].(map[string]any)
	status, _ := res["status"].(map[string]any)
	id, _ = res["id"].(string)
	state, _ = status["state"].(string)
	if msg, ok := status["message"].(map[string]any); ok {
		b, _ := json.Marshal(msg["parts"])
		reason = string(b)
	}
	return id, state, reason
}

// E14: A2A task records count against the owner's quota and keep a
// bounded part of each message. The escape: 8 messages with a 5 MiB text
// part each left 40 MiB of task records under a 10 MiB quota, and an 8 MiB
// upload was still accepted.
func TestE14TaskRecordsInQuota(t *testing.T) {
	const quota = 10 << 20
	data := t.TempDir()
	a := mcptest.StartAgent(t, testagentBinary(t), "AGENT_DATA_DIR="+data, "AGENT_SIGNING_KEY="+signingKey,
		fmt.Sprintf("AGENT_OWNER_QUOTA_BYTES=%d", quota), "AGENT_RATE_LIMIT=0")
	defer a.Stop(t)
	text := strings.Repeat("T", 5<<20)
	for k := range 8 {
		r, ans := a2aSend(t, a.URL, false, map[string]any{"kind": "text", "text": text})
		if _, state, _ := a2aState(ans); r.status != http.StatusOK || state == "" {
			t.Fatalf("message %d: %s", k, r)
		}
	}
	records, n := dirBytes(filepath.Join(data, "records", "a2a-tasks"))
	r, _ := upload(t, a, "", "after.bin", make([]byte, 8<<20))
	t.Logf("8 A2A messages with a 5 MiB text part under a 10 MiB quota: %d task records of %.1f KiB in all; an 8 MiB upload then answers %d",
		n, float64(records)/1024, r.status)
	if n != 8 || records > 8*64<<10 {
		t.Errorf("the 8 tasks keep %d bytes in %d records, want at most 64 KiB each", records, n)
	}
	if r.status != http.StatusCreated {
		t.Errorf("an 8 MiB upload beside bounded task records under a 10 MiB quota: %s", r)
	}

	// Under a quota the records fill, a new task is refused, saying why.
	small := mcptest.StartAgent(t, testagentBinary(t), "AGENT_SIGNING_KEY="+signingKey, "AGENT_OWNER_QUOTA_BYTES=65536", "AGENT_RATE_LIMIT=0")
	defer small.Stop(t)
	refusedAt, refusal := 0, ""
	text = text[:256<<10]
	for k := range 40 {
		r, ans := a2aSend(t, small.URL, false, map[string]any{"kind": "text", "text": text})
		if _, state, _ := a2aState(ans); state == "" {
			if !strings.Contains(string(r.body), "AGENT_OWNER_QUOTA_BYTES") {
				t.Fatalf("message %d refused without naming the quota: %s", k, r)
			}
			refusedAt, refusal = k, string(r.body)
			break
		}
	}
	t.Logf("under a 64 KiB quota the task records of %d messages fit; the next is refused: %s", refusedAt, refusal)
	if refusedAt == 0 {
		t.Error("40 messages' task records fit under a 64 KiB quota")
	}
}

// taskReplicas starts two test agents sharing a data folder (a store on
// one disk), tasks leased for lease, and the public URL of a; env is added.
func taskReplicas(t *testing.T, lease time.Duration, env ...string) (a, b *mcptest.Agent, start func() *mcptest.Agent) {
	t.Helper()
	data := t.TempDir()
	common := append([]string{"AGENT_SIGNING_KEY=" + signingKey, "AGENT_RATE_LIMIT=0", "AGENT_DATA_DIR=" + data,
		"AGENT_TASK_LEASE=" + lease.String()}, env...)
	a = mcptest.StartAgent(t, testagentBinary(t), common...)
	b = mcptest.StartAgent(t, testagentBinary(t), append(common, "AGENT_PUBLIC_URL="+a.URL)...)
	addr := strings.TrimPrefix(a.URL, "http://")
	start = func() *mcptest.Agent { // a again, on its address
		again := mcptest.NewAgent(t, testagentBinary(t), append(common, "AGENT_ADDR="+addr, "AGENT_PUBLIC_URL="+a.URL)...)
		again.URL = a.URL
		again.Start(t)
		again.WaitReady(t)
		return again
	}
	return a, b, start
}

// A replica killed (kill -9) under a running A2A task: another replica
// reports the task failed, with the reason, within the lease (it stayed
// "working" forever, and after the replica restarted, before the fix); the
// restarted replica reports it failed too.
func TestA2ATaskFailsWhenItsReplicaDies(t *testing.T) {
	const lease = 3 * time.Second
	a, b, restart := taskReplicas(t, lease)
	defer b.Stop(t)
	_, ans := a2aSend(t, a.URL, true, map[string]any{"kind": "data", "data": map[string]any{"skill": "sleep", "arguments": map[string]any{"millis": 120000}}})
	id, state, _ := a2aState(ans)
	if id == "" {
		t.Fatalf("message/send: %v", ans)
	}
	if took := within(30*time.Second, func() bool {
		_, ans := a2aRPC(t, b.URL, "tasks/get", map[string]any{"id": id})
		_, state, _ = a2aState(ans)
		return state == "working"
	}); took < 0 {
		t.Fatalf("the task is %q on the other replica, never working", state)
	}
	a.Kill(t)
	killed := time.Now()
	var reason string
	took := within(lease+20*time.Second, func() bool {
		_, ans := a2aRPC(t, b.URL, "tasks/get", map[string]any{"id": id})
		_, state, reason = a2aState(ans)
		return state == "failed"
	})
	t.Logf("an A2A task whose replica was killed: %s %v after the kill (lease %v): %s", state, time.Since(killed).Round(time.Millisecond), lease, reason)
	if took < 0 || !strings.Contains(reason, "lease ran out") {
		t.Fatalf("the task is %q %v after its replica died (lease %v): %s", state, time.Since(killed), lease, reason)
	}
	if limit := lease + 2*time.Second; time.Since(killed) > limit+time.Second {
		t.Errorf("reported failed %v after the kill, over the lease bound %v", time.Since(killed), limit)
	}
	again := restart()
	defer again.Stop(t)
	if _, ans := a2aRPC(t, again.URL, "tasks/get", map[string]any{"id": id}); func() string { _, s, _ := a2aState(ans); return s }() != "failed" {
		t.Errorf("the restarted replica: %v", ans)
	}
}

// The same for an MCP task (2026-07-28 with the Tasks extension): a
// replica killed under a running task, the task is failed with the reason
// on the other within the lease; a task left alone completes and is read
// on the other replica, and its file, downloaded from the signed URL the
// result gives, has the sha256 the result names.
func TestMCPTaskFailsWhenItsReplicaDies(t *testing.T) {
	const lease = 3 * time.Second
	a, b, _ := taskReplicas(t, lease)
	defer b.Stop(t)
	ca, cb := mcptest.NewSessionless(a.URL+"/mcp"), mcptest.NewSessionless(b.URL+"/mcp")
	for _, c := range []*mcptest.Sessionless{ca, cb} {
		c.Extensions = map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}
	}
	type task struct {
		ResultType    string          `json:"resultType"`
		TaskID        string          `json:"taskId"`
		Status        string          `json:"status"`
		StatusMessage string          `json:"statusMessage"`
		Result        json.RawMessage `json:"result"`
	}
	start := func(millis int) task {
		tk := mcptest.Call[task](t, ca, "tools/call", map[string]any{"name": "long_sleep", "arguments": map[string]any{"millis": millis}})
		if tk.ResultType != "task" || tk.TaskID == "" {
			t.Fatalf("tools/call of long_sleep: %+v", tk)
		}
		return tk
	}
	get := func(id string) task {
		ctx, cancel := context.WithTimeout(context.Background(), mcptest.CallTimeout)
		defer cancel()
		ans, err := cb.Send(ctx, "tasks/get", map[string]any{"taskId": id}, nil)
		if err != nil || ans.Response.Error != nil {
			t.Fatalf("tasks/get: %v %+v", err, ans)
		}
		var tk task
		json.Unmarshal(ans.Response.Result, &tk)
		return tk
	}

	done := start(3000)
	var got task
	if within(30*time.Second, func() bool { got = get(done.TaskID); return got.Status == "completed" }) < 0 {
		t.Fatalf("a 3 s task left alone: %+v", got)
	}
	var res struct {
		File struct {
			URL      string `json:"download_url"`
			Filename string `json:"filename"`
			SHA256   string `json:"sha256"`
		} `json:"structuredContent"`
	}
	if err := json.Unmarshal(got.Result, &res); err != nil || res.File.Filename != "slept.txt" || res.File.URL == "" {
		t.Fatalf("its result on the other replica: %s %v", got.Result, err)
	}
	file := do(t, http.MethodGet, res.File.URL, nil)
	sum := sha256.Sum256(file.body)
	if file.status != http.StatusOK || string(file.body) != "slept 3000 ms\n" || hex.EncodeToString(sum[:]) != res.File.SHA256 {
		t.Errorf("its file, downloaded from %s: %s, sha256 %x, the result says %s", res.File.URL, file, sum, res.File.SHA256)
	}

	dies := start(120000)
	a.Kill(t)
	killed := time.Now()
	took := within(lease+20*time.Second, func() bool { got = get(dies.TaskID); return got.Status == "failed" })
	t.Logf("an MCP task whose replica was killed: %s %v after the kill (lease %v): %s", got.Status, time.Since(killed).Round(time.Millisecond), lease, got.StatusMessage)
	if took < 0 || !strings.Contains(got.StatusMessage, "lease ran out") {
		t.Fatalf("the task is %+v after its replica died", got)
	}
}
