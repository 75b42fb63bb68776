package agentcore

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentura/agentura/agentcore/internal/tasks"
	"github.com/agentura/agentura/fileserve"
	"github.com/agentura/agentura/internal/testkit/a2atest"
	"github.com/agentura/agentura/internal/testkit/mcptest"
	"github.com/agentura/agentura/internal/testkit/otlptest"
	"github.com/agentura/agentura/transfer/mcpfile"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// Tasks keep their trace across polls and replicas (issue 38). Two
// replicas share a store. A Long tool's call on replica a, answered with
// a task, carries the caller's traceparent: the task's work is a span
// "task long" under the call's request span, in the caller's trace, ending
// when the task ends with its status (completed; cancelled, by a cancel
// sent to replica b); each tasks/get on replica b, in a trace of its own,
// is linked to the task's span. The task's record keeps its span's trace
// context; a task whose replica died (its lease ran out, the record as
// that replica left it) is recorded failed by replica b in a span "task
// lapsed long" under the task's span, in the task's trace, with the
// reason; an A2A task likewise, and A2A tasks/get is a server span linked
// to the task's trace. A descriptor upload's PUT is a server span under
// its caller's. No span holds a task id, a token or a file's name.
func TestTasksKeepTheirTrace(t *testing.T) {
	flush := startTracing(t)
	dir := t.TempDir()
	svcs, urls, long := taskReplicas(t, 2, func(c *Config) { c.DataDir = dir; c.TaskLease = 2 * time.Second })
	const (
		callTrace    = "4bf92f3577b34da6a3ce929d0e0e4736"
		callParent   = "00f067aa0ba902b7"
		pollTrace    = "0af7651916cd43dd8448eb211c80319c"
		lapseTrace   = "5bf92f3577b34da6a3ce929d0e0e4999"
		lapseSpan    = "00f067aa0ba90299"
		a2aTrace     = "6bf92f3577b34da6a3ce929d0e0e4aaa"
		a2aSpan      = "00f067aa0ba902aa"
		putTrace     = "7bf92f3577b34da6a3ce929d0e0e4bbb"
		putParent    = "00f067aa0ba902bb"
		legacyTrace  = "8bf92f3577b34da6a3ce929d0e0e4ccc"
		legacyParent = "00f067aa0ba902cc"
	)
	a, b := tasksClient(urls[0]), tasksClient(urls[1])
	b.Header = http.Header{"Traceparent": {"00-" + pollTrace + "-b7ad6b7169203331-01"}}
	meta := map[string]any{"traceparent": "00-" + callTrace + "-" + callParent + "-01", "baggage": "session=s3cr3t-baggage"}
	call := func() wireTask {
		t.Helper()
		task := mcptest.Call[wireTask](t, a, "tools/call", map[string]any{"name": "long", "arguments": map[string]any{}, "_meta": meta})
		if task.ResultType != "task" || task.TaskID == "" {
			t.Fatalf("tools/call of a long tool answered %+v, want a task", task)
		}
		return task
	}

	done := call()
	<-long.started
	long.releaseAll()
	waitTask(t, b, done.TaskID, "completed")
	ctx := context.Background()
	rec, err := svcs[0].tasks.Read(ctx, AnonymousOwner, done.TaskID)
	if err != nil || !strings.HasPrefix(rec.Trace["traceparent"], "00-"+callTrace+"-") || len(rec.Trace) > 2 || rec.Trace["baggage"] != "" {
		t.Fatalf("the task's record keeps the trace %v (%v), want the traceparent of its span in the caller's trace, no baggage", rec.Trace, err)
	}

	canceled := call()
	<-long.started
	if ans := send(t, b, "tasks/cancel", map[string]any{"taskId": canceled.TaskID}); ans.Response.Error != nil {
		t.Fatalf("tasks/cancel: %+v", ans.Response.Error)
	}
	waitTask(t, a, canceled.TaskID, "cancelled")
	if ended := svcs[0].tasks.EndedHere(canceled.TaskID); ended != nil {
		select { // the work ends within a second of the cancel
		case <-ended:
		case <-time.After(mcptest.CallTimeout):
			t.Fatal("the canceled task's work did not end")
		}
	}

	// On 2025-11-25 (mcp-go): a task-augmented call, and tasks/result,
	// which waits for the end, in a trace of its own.
	legacy, _ := mcpgoClient(t, urls[0], nil)
	ttl := int64(10 * 60 * 1000)
	rpc := func(method string, params any) json.RawMessage {
		t.Helper()
		rctx, cancel := context.WithTimeout(ctx, mcptest.CallTimeout)
		defer cancel()
		resp, err := legacy.GetTransport().SendRequest(rctx, transport.JSONRPCRequest{JSONRPC: "2.0", ID: mcpgo.NewRequestId(rand.Int64()), Method: method, Params: params})
		if err != nil || resp.Error != nil {
			t.Fatalf("%s: %v %+v", method, err, resp)
		}
		return resp.Result
	}
	var legacyTask struct {
		Task mcpgo.Task `json:"task"`
	}
	json.Unmarshal(rpc("tools/call", mcpgo.CallToolParams{Name: "long", Arguments: map[string]any{}, Task: &mcpgo.TaskParams{TTL: &ttl},
		Meta: &mcpgo.Meta{AdditionalFields: map[string]any{"traceparent": "00-" + legacyTrace + "-" + legacyParent + "-01"}}}), &legacyTask)
	if legacyTask.Task.TaskId == "" {
		t.Fatal("no task on 2025-11-25")
	}
	<-long.started
	go long.releaseAll()
	rpc("tasks/result", map[string]any{"taskId": legacyTask.Task.TaskId})

	// A task its replica left working when it died, and its lease.
	rs := backing(svcs[0]).(fileserve.RecordStore)
	put := func(kind, id string, v any) {
		t.Helper()
		data, _ := json.Marshal(v)
		if err := rs.PutRecord(ctx, kind, AnonymousOwner, id, data); err != nil {
			t.Fatal(err)
		}
	}
	const lapsedID = "LAPSEDTRACEAAAAAAAAAAAAAAA"
	now := time.Now()
	put(tasks.MCPKind, lapsedID, &tasks.Task{ID: lapsedID, Owner: AnonymousOwner, Tool: "long", Status: tasks.Working,
		Created: now, Updated: now, TTL: time.Hour, Trace: tasks.Trace{"traceparent": "00-" + lapseTrace + "-" + lapseSpan + "-01"}})
	put(tasks.LeaseKind, lapsedID, map[string]any{"replica": "dead", "until": now.Add(-time.Second)})
	if got := getTask(t, b, lapsedID); got.Status != "failed" {
		t.Fatalf("a task whose replica died: %+v", got)
	}
	a2aTask := &a2a.Task{ID: a2a.NewTaskID(), ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
	put(tasks.A2AKind, string(a2aTask.ID), map[string]any{"owner": AnonymousOwner, "task": a2aTask, "updated": now.Add(-time.Minute),
		"trace": map[string]string{"traceparent": "00-" + a2aTrace + "-" + a2aSpan + "-01"}})
	a2aGet, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": map[string]any{"id": a2aTask.ID}})
	req, _ := http.NewRequest("POST", urls[1]+"/a2a", bytes.NewReader(a2aGet))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Traceparent", "00-"+pollTrace+"-c7ad6b7169203331-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var a2aAns struct {
		Result *a2a.Task `json:"result"`
	}
	json.NewDecoder(resp.Body).Decode(&a2aAns)
	resp.Body.Close()
	if a2aAns.Result == nil || a2aAns.Result.Status.State != a2a.TaskStateFailed {
		t.Fatalf("A2A tasks/get of a task whose replica died: %s %+v", resp.Status, a2aAns.Result)
	}

	// A descriptor upload of the file-transfer draft.
	files := connectFiles(t, urls[1], "")
	data := []byte("the notes of a secret meeting")
	size := int64(len(data))
	up, err := mcp.CallCustomMethod[*fileUploadParams, *fileUploadResult](ctx, files, mcpfile.MethodAuthorizeUpload, &fileUploadParams{
		AuthorizeUploadParams: mcpfile.AuthorizeUploadParams{Name: "secret-notes.txt", MIMEType: "text/plain", Size: &size}})
	if err != nil {
		t.Fatal(err)
	}
	putReq, _ := http.NewRequest(up.Upload.Method, up.Upload.URL, bytes.NewReader(data))
	putReq.Header.Set("Traceparent", "00-"+putTrace+"-"+putParent+"-01")
	if resp, err := http.DefaultClient.Do(putReq); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("descriptor PUT: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	uploadURL, _ := url.Parse(up.Upload.URL)

	spans := flush()
	requests := map[string]bool{} // the calls' spans, by id
	for _, s := range otlptest.Named(spans, "tools/call long") {
		if hexOf(s.TraceId) == callTrace && hexOf(s.ParentSpanId) == callParent {
			requests[hexOf(s.SpanId)] = true
		}
	}
	if len(requests) != 2 {
		t.Fatalf("%d spans of the calls in the caller's trace, want 2", len(requests))
	}
	work := map[string]otlptest.Span{}
	for _, s := range otlptest.Named(spans, "task long") {
		if hexOf(s.TraceId) != callTrace || !requests[hexOf(s.ParentSpanId)] {
			continue
		}
		work[spanAttr(s, "agentura.task.status")] = s
		if spanAttr(s, "gen_ai.tool.name") != "long" || spanAttr(s, "agentura.task.protocol") != "mcp" || s.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR {
			t.Errorf("task span: attributes %v, status %v", s.Attributes, s.Status)
		}
	}
	if len(work) != 2 || work["completed"].Span == nil || work["cancelled"].Span == nil {
		t.Fatalf("task spans under the call's request span: %v, want one completed and one cancelled", work)
	}
	if w := work["completed"]; !strings.Contains(rec.Trace["traceparent"], hexOf(w.SpanId)) {
		t.Errorf("the record's trace %v is not the task span's %s", rec.Trace, hexOf(w.SpanId))
	}
	if w := work["cancelled"]; spanAttr(w, "agentura.task.status_message") != "canceled by the caller" {
		t.Errorf("the cancelled task's span: %v", w.Attributes)
	}
	linked := func(s otlptest.Span, traceID, spanID string) bool {
		for _, l := range s.Links {
			if hexOf(l.TraceId) == traceID && hexOf(l.SpanId) == spanID {
				return true
			}
		}
		return false
	}
	polls := 0
	for _, s := range otlptest.Named(spans, "tasks/get") {
		if hexOf(s.TraceId) == pollTrace && linked(s, callTrace, hexOf(work["completed"].SpanId)) {
			polls++
		}
	}
	if polls == 0 {
		t.Errorf("no tasks/get of replica b in its own trace linked to the task's span")
	}
	cancels := 0
	for _, s := range otlptest.Named(spans, "tasks/cancel") {
		if hexOf(s.TraceId) == pollTrace && linked(s, callTrace, hexOf(work["cancelled"].SpanId)) {
			cancels++
		}
	}
	if cancels != 1 {
		t.Errorf("%d tasks/cancel spans linked to the cancelled task's span, want 1", cancels)
	}

	var legacyWork *otlptest.Span
	for _, s := range otlptest.Named(spans, "task long") {
		if hexOf(s.TraceId) == legacyTrace && spanAttr(s, "agentura.task.status") == "completed" {
			legacyWork = &s
		}
	}
	if legacyWork == nil {
		t.Fatal("no span of the 2025-11-25 task's work in its caller's trace")
	}
	results := 0
	for _, s := range otlptest.Named(spans, "tasks/result") {
		if linked(s, legacyTrace, hexOf(legacyWork.SpanId)) {
			results++
			if len(s.Links) != 1 {
				t.Errorf("tasks/result links %d times, want once", len(s.Links))
			}
		}
	}
	if results != 1 {
		t.Errorf("%d tasks/result spans linked to the task's, want 1", results)
	}

	takeover := func(name, traceID, parent, protocol string) {
		t.Helper()
		var got []otlptest.Span
		for _, s := range otlptest.Named(spans, name) {
			if s.ChildOf(traceID, parent) {
				got = append(got, s)
			}
		}
		if len(got) != 1 {
			t.Fatalf("%d spans %q under the task's %s, want 1", len(got), name, parent)
		}
		s := got[0]
		if s.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || !strings.Contains(s.Status.GetMessage(), "lease ran out") ||
			spanAttr(s, "agentura.task.status") != "failed" || spanAttr(s, "agentura.task.protocol") != protocol ||
			len(s.Links) != 1 || hexOf(s.Links[0].TraceId) != pollTrace {
			t.Errorf("span %q: status %v, attributes %v, links %v; want failed with the reason, linked to the poll", name, s.Status, s.Attributes, s.Links)
		}
	}
	takeover("task lapsed long", lapseTrace, lapseSpan, "mcp")
	takeover("task lapsed", a2aTrace, a2aSpan, "a2a")
	a2aPolls := 0
	for _, s := range otlptest.Named(spans, "a2a tasks/get") {
		if hexOf(s.TraceId) == pollTrace && s.Kind == tracepb.Span_SPAN_KIND_SERVER && linked(s, a2aTrace, a2aSpan) {
			a2aPolls++
		}
	}
	if a2aPolls != 1 {
		t.Errorf("%d A2A tasks/get spans in the poll's trace linked to the task's, want 1", a2aPolls)
	}

	var putSpan *otlptest.Span
	for _, s := range otlptest.Named(spans, "PUT /uploads/mcp/{id}") {
		if s.ChildOf(putTrace, putParent) {
			putSpan = &s
		}
	}
	if putSpan == nil || putSpan.Kind != tracepb.Span_SPAN_KIND_SERVER || putSpan.Attr("http.response.status_code").GetIntValue() != 201 ||
		putSpan.Attr("agentura.file.id").GetStringValue() == "" {
		t.Errorf("descriptor PUT span: %v", putSpan)
	}
	otlptest.Clean(t, spans, "s3cr3t-baggage", legacyTask.Task.TaskId, done.TaskID, canceled.TaskID, lapsedID, string(a2aTask.ID), uploadURL.Query().Get("token"), "secret-notes")
}

// An A2A task keeps its trace too. Two replicas share a store; a message
// sent to replica a (not blocking) carries the caller's traceparent in its
// metadata: its execution's span ("a2a execute wait", the task's work)
// is in the caller's trace and ends with the task's status (completed;
// cancelled by a cancel sent to replica b); each tasks/get on replica b,
// in a trace of its own, is a server span linked to the caller's span,
// which the task's record keeps. No span holds the task's id.
func TestA2ATaskKeepsItsTrace(t *testing.T) {
	flush := startTracing(t)
	dir := t.TempDir()
	r := newReplicaSet(t, func(c *Config) { c.DataDir = dir })
	a, b := a2aClient(t, r.start("a"), ""), a2aClient(t, r.start("b"), "")
	ctx := context.Background()
	const (
		callTrace  = "9bf92f3577b34da6a3ce929d0e0e4ddd"
		callParent = "00f067aa0ba902dd"
	)
	send := func() a2a.TaskID {
		t.Helper()
		msg := a2atest.Message("wait", nil)
		msg.Message.Metadata = map[string]any{"traceparent": "00-" + callTrace + "-" + callParent + "-01"}
		msg.Config = &a2a.MessageSendConfig{Blocking: new(bool)}
		res, err := a.SendMessage(ctx, msg)
		if err != nil {
			t.Fatal(err)
		}
		<-r.started
		return res.(*a2a.Task).ID
	}
	waitA2A := func(id a2a.TaskID, want a2a.TaskState) {
		t.Helper()
		deadline := time.Now().Add(mcptest.CallTimeout)
		for {
			task, err := b.GetTask(ctx, &a2a.TaskQueryParams{ID: id})
			if err == nil && task.Status.State == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("task on replica b: %v %+v, want %s", err, task, want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	canceled := send()
	if task, err := b.CancelTask(ctx, &a2a.TaskIDParams{ID: canceled}); err != nil || task.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("tasks/cancel on replica b: %v %+v", err, task)
	}
	if err := <-r.stopped; err == nil {
		t.Fatal("the canceled tool finished")
	}
	done := send()
	close(r.release)
	<-r.stopped
	waitA2A(done, a2a.TaskStateCompleted)
	// The canceled execution returns just after its tool did, and its span
	// ends then: read the spans until both executions' are there.
	var spans []otlptest.Span
	work := map[string]otlptest.Span{}
	for deadline := time.Now().Add(mcptest.CallTimeout); ; time.Sleep(100 * time.Millisecond) {
		spans = flush()
		for _, s := range otlptest.Named(spans, "a2a execute wait") {
			if s.ChildOf(callTrace, callParent) {
				work[spanAttr(s, "agentura.task.status")] = s
			}
		}
		if (work["completed"].Span != nil && work["cancelled"].Span != nil) || time.Now().After(deadline) {
			break
		}
	}
	if work["completed"].Span == nil || work["cancelled"].Span == nil {
		t.Fatalf("execution spans in the caller's trace by status: %v, want a completed and a cancelled one", work)
	}
	if w := work["cancelled"]; spanAttr(w, "agentura.task.status_message") != "canceled by the caller" || w.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("the cancelled task's span: %v %v", w.Attributes, w.Status)
	}
	polls := 0
	for _, s := range otlptest.Named(spans, "a2a tasks/get") {
		for _, l := range s.Links {
			if hexOf(l.TraceId) == callTrace && hexOf(l.SpanId) == callParent && hexOf(s.TraceId) != callTrace {
				polls++
			}
		}
	}
	if polls == 0 {
		t.Error("no A2A tasks/get span linked to the task's trace")
	}
	otlptest.Clean(t, spans, string(canceled), string(done))
}

// An A2A task canceled on the replica that runs it ends its execution's
// span as cancelled too, with the words its caller reads: a2a-go cancels
// the execution and reports the end through the executor's Cancel, on a
// queue the execution's span does not see. Both task stores: the file
// store's records (the default) and memory (a store that keeps none).
func TestA2ACancelHereEndsTheTaskSpan(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*testing.T, *Config)
	}{
		{"records", func(t *testing.T, c *Config) { c.DataDir = t.TempDir() }},
		{"memory", func(t *testing.T, c *Config) {
			disk, err := fileserve.NewDiskStore(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			c.Store = struct{ fileserve.Store }{disk} // no RecordStore: tasks in memory
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			flush := startTracing(t)
			r := newReplicaSet(t, func(c *Config) { tc.edit(t, c) })
			a := a2aClient(t, r.start("a"), "")
			ctx := context.Background()
			const (
				callTrace  = "7bf92f3577b34da6a3ce929d0e0e4eee"
				callParent = "00f067aa0ba902ee"
			)
			msg := a2atest.Message("wait", nil)
			msg.Message.Metadata = map[string]any{"traceparent": "00-" + callTrace + "-" + callParent + "-01"}
			msg.Config = &a2a.MessageSendConfig{Blocking: new(bool)}
			res, err := a.SendMessage(ctx, msg)
			if err != nil {
				t.Fatal(err)
			}
			<-r.started
			id := res.(*a2a.Task).ID
			if task, err := a.CancelTask(ctx, &a2a.TaskIDParams{ID: id}); err != nil || task.Status.State != a2a.TaskStateCanceled {
				t.Fatalf("tasks/cancel: %v %+v", err, task)
			}
			if err := <-r.stopped; err == nil {
				t.Fatal("the canceled tool finished")
			}
			var work otlptest.Span
			for deadline := time.Now().Add(mcptest.CallTimeout); work.Span == nil && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
				for _, s := range otlptest.Named(flush(), "a2a execute wait") {
					if s.ChildOf(callTrace, callParent) {
						work = s
					}
				}
			}
			if work.Span == nil {
				t.Fatal("no execution span in the caller's trace")
			}
			if spanAttr(work, "agentura.task.status") != "cancelled" || spanAttr(work, "agentura.task.status_message") != "canceled by the caller" ||
				work.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR {
				t.Errorf("the canceled task's execution span: %v %v", work.Attributes, work.Status)
			}
		})
	}
}
