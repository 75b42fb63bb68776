//go:build e2e

package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentura/agentura/internal/testkit/mcptest"
)

// taskLease is AGENT_TASK_LEASE of the run: a task whose replica died is
// failed at most this long after the replica's last renewal.
const taskLease = 5 * time.Second

// ocrTask is a 2026-07-28 task with what tasks/get adds.
type ocrTask struct {
	ResultType    string          `json:"resultType"`
	TaskID        string          `json:"taskId"`
	Status        string          `json:"status"`
	StatusMessage string          `json:"statusMessage"`
	Result        json.RawMessage `json:"result"`
	Error         *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// TestScaleTasks: MCP tasks on the scale-out deployment (issue 28) with
// three OCR replicas behind the balancer, sharing the bucket. A 40-page
// OCR is started as a task by a client declaring the Tasks extension,
// which then holds no connection. (1) The replica running it is killed
// and started again mid-way: the task reports failure, with the reason,
// within the lease. (2) Left alone, the task is polled through the
// balancer, the polls landing on every replica, and completes with the
// searchable PDF whose sha256 is that of its bytes. (3) A cancel sent to
// another replica stops tesseract on the one running the task within a
// second.
func TestScaleTasks(t *testing.T) {
	s := startScaleWith(t, scaleOptions{embed: "0", project: runProject("tasks"), composer: 1, ocr: 3,
		env: map[string]string{"AGENT_TASK_LEASE": taskLease.String()}})
	ocrs := s.serviceReplicas(t, "ocr", 8001, 3)

	// A 40-page PDF, composed through the balancer, staged at the OCR
	// agent through the balancer.
	var md strings.Builder
	for p := range 40 {
		if p > 0 {
			md.WriteString("\n---\n\n")
		}
		fmt.Fprintf(&md, "# Page %d\n\n", p+1)
		for l := range 12 {
			fmt.Fprintf(&md, "Line %d of page %d of the quarterly report.\n\n", l+1, p+1)
		}
	}
	composed := statelessCall(t, s.lbURL, "compose_document", map[string]any{"markdown": md.String(), "format": "pdf", "filename": "forty.pdf"})
	pdf := mcptest.Download(t, fileOf(t, composed, "forty.pdf"))
	staged := upload(t, s.ocrLBURL, "forty.pdf", pdf)

	c := mcptest.NewSessionless(s.ocrLBURL + "/mcp")
	c.Extensions = map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}
	start := func() ocrTask {
		tk := mcptest.Call[ocrTask](t, c, "tools/call", map[string]any{"name": "ocr_document",
			"arguments": map[string]any{"source": map[string]any{"name": "forty.pdf", "content": staged}, "outputs": []string{"searchable_pdf"}}})
		if tk.ResultType != "task" || tk.TaskID == "" {
			t.Fatalf("a 40-page OCR with the Tasks extension: %+v", tk)
		}
		return tk
	}
	get := func(id string) ocrTask { return mcptest.Call[ocrTask](t, c, "tasks/get", map[string]any{"taskId": id}) }
	// runner is the OCR replica whose container runs tesseract on a page.
	// Every replica also runs `tesseract --list-langs` for a moment on
	// each readiness probe (the balancer's, Docker's): that one does not
	// count, or the wrong replica is killed and the task runs on.
	runner := func() int {
		deadline := time.Now().Add(2 * time.Minute)
		for {
			for i, r := range ocrs {
				if readsPage(run(t, nil, "docker", "top", r.id)) {
					return i
				}
			}
			if time.Now().After(deadline) {
				t.Fatal("no OCR replica runs tesseract")
			}
			time.Sleep(200 * time.Millisecond)
		}
	}

	// 1. The replica killed and started again mid-way.
	tk := start()
	i := runner()
	time.Sleep(3 * time.Second) // some pages read
	run(t, nil, "docker", "kill", ocrs[i].id)
	killed := time.Now()
	run(t, nil, "docker", "start", ocrs[i].id)
	var got ocrTask
	for got = get(tk.TaskID); got.Status == "working"; got = get(tk.TaskID) {
		if time.Since(killed) > taskLease+time.Minute {
			t.Fatalf("the task is still working %v after its replica was killed", time.Since(killed))
		}
		time.Sleep(500 * time.Millisecond)
	}
	took := time.Since(killed)
	t.Logf("replica %d killed and restarted mid-way: the task is %s %v later (lease %v): %s", i, got.Status, took.Round(time.Millisecond), taskLease, got.StatusMessage)
	if got.Status != "failed" || !strings.Contains(got.StatusMessage, "lease ran out") || got.Error == nil {
		t.Errorf("after its replica died: %+v", got)
	}
	if took > taskLease+5*time.Second {
		t.Errorf("reported failed %v after the kill, beyond the lease of %v", took, taskLease)
	}
	s.waitHealthy(t)
	ocrs = s.serviceReplicas(t, "ocr", 8001, 3)

	// 2. Left alone, polled through the balancer.
	since := time.Now().UTC().Format(time.RFC3339)
	tk = start()
	began := time.Now()
	for got = get(tk.TaskID); got.Status == "working"; got = get(tk.TaskID) {
		if time.Since(began) > 15*time.Minute {
			t.Fatalf("the task is still working after %v: %s", time.Since(began), got.StatusMessage)
		}
		time.Sleep(time.Second)
	}
	if got.Status != "completed" {
		t.Fatalf("the task left alone ended %+v", got)
	}
	var res struct {
		Structured struct {
			Text   string `json:"text"`
			URL    string `json:"download_url"`
			SHA256 string `json:"sha256"`
		} `json:"structuredContent"`
	}
	must(t, json.Unmarshal(got.Result, &res), "decode the task's result")
	body := mcptest.Download(t, res.Structured.URL) // through the balancer
	sum := sha256.Sum256(body)
	if hex.EncodeToString(sum[:]) != res.Structured.SHA256 || !strings.HasPrefix(string(body), "%PDF") {
		t.Errorf("the searchable PDF: %d bytes, sha256 %x, the result says %s", len(body), sum, res.Structured.SHA256)
	}
	for _, want := range []string{"page 1 of the quarterly", "page 40 of the quarterly"} {
		if !strings.Contains(strings.ToLower(res.Structured.Text), want) {
			t.Errorf("the text lacks %q", want)
		}
	}
	// Which replicas answered the polls: HAProxy logs each request with
	// the server that took it (ocr/ocrN).
	lbLog := run(t, nil, "docker", "logs", "--since", since, s.containerID(t, "lb"))
	servers := map[string]int{}
	for _, m := range regexp.MustCompile(`\bocr/(ocr\d+)\b`).FindAllStringSubmatch(lbLog, -1) {
		servers[m[1]]++
	}
	t.Logf("a 40-page OCR task took %v; its polls went through the balancer to %v", time.Since(began).Round(time.Second), servers)
	if len(servers) < 3 {
		t.Errorf("the polls reached %d replicas (%v), want all 3", len(servers), servers)
	}

	// 3. A cancel through another replica stops tesseract within a second.
	tk = start()
	i = runner()
	other := ocrs[(i+1)%len(ocrs)]
	oc := mcptest.NewSessionless(other.url + "/mcp")
	oc.Extensions = c.Extensions
	ctx, cancel := context.WithTimeout(context.Background(), mcptest.CallTimeout)
	defer cancel()
	if ans, err := oc.Send(ctx, "tasks/cancel", map[string]any{"taskId": tk.TaskID}, nil); err != nil || ans.Response.Error != nil {
		t.Fatalf("tasks/cancel on another replica: %v %+v", err, ans)
	}
	cancelled := time.Now()
	waitTop(t, ocrs[i].id, false, 5*time.Second)
	gone := time.Since(cancelled)
	t.Logf("tesseract gone on replica %d %v after a cancel sent to another replica", i, gone.Round(time.Millisecond))
	if gone > time.Second {
		t.Errorf("tesseract ran %v after the cancel, want under a second", gone)
	}
	if got := get(tk.TaskID); got.Status != "cancelled" {
		t.Errorf("after the cancel: %+v", got)
	}
}

// readsPage reports whether the process list of `docker top` holds a
// tesseract reading a page, not one listing its languages.
func readsPage(top string) bool {
	for _, line := range strings.Split(top, "\n") {
		if strings.Contains(line, "tesseract") && !strings.Contains(line, "--list-langs") {
			return true
		}
	}
	return false
}
